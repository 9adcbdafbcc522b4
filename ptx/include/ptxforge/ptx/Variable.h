// Declarations of variables (module-scope, function-local, parameters) and registers, with initializers.
#pragma once

#include "ptxforge/ptx/Operand.h"
#include "ptxforge/ptx/SourceBuffer.h"
#include "ptxforge/ptx/Types.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <vector>

namespace ptxforge::ptx {

/// A constant in an initializer: a number, a symbol (`var`, `generic(var)`, `var+8`) or a brace list.
struct Initializer {
  enum class Kind : uint8_t { List, Int, Float, Symbol };
  Kind K = Kind::Int;
  uint64_t Bits = 0; ///< Int value, Float bits (per FloatIsF64), Symbol offset
  bool FloatIsF64 = false;
  bool Negative = false;             ///< Int written with a leading '-'
  llvm::StringRef Name;              ///< Symbol
  llvm::StringRef Wrapper;           ///< "generic", "mask" or "" around the symbol
  std::vector<Initializer> Elements; ///< List
  SourceLoc Loc;
};

/// A `.global/.shared/.const/.local/.param/.tex` variable.
struct VariableDecl {
  llvm::StringRef Name;
  StateSpace Space = StateSpace::Global;
  Linkage Link = Linkage::None;
  ScalarType Type = ScalarType::B8;
  uint8_t VectorWidth = 1;
  uint32_t Align = 0;                  ///< 0: the type's natural alignment
  llvm::SmallVector<uint64_t, 1> Dims; ///< array dimensions; 0 = `[]` (unsized)
  bool Managed = false;                ///< `.attribute(.managed)`
  bool IsPtr = false;                  ///< kernel parameter `.ptr` attribute
  StateSpace PtrSpace = StateSpace::None;
  uint32_t PtrAlign = 0;
  bool HasInit = false;
  Initializer Init;
  SourceLoc Loc;

  uint64_t elementSize() const;
  uint64_t sizeInBytes() const; ///< 0 for an unsized array
  uint32_t alignment() const;
};

/// A `.reg` declaration: `%r<42>` (Count 42, parameterized) or a plain name (Count 0).
struct RegisterDecl {
  llvm::StringRef Name;
  ScalarType Type = ScalarType::B32;
  uint8_t VectorWidth = 1;
  uint32_t Count = 0;
  RegId First = 0;
  SourceLoc Loc;
};

/// Per-register facts, indexed by RegId.
struct RegisterInfo {
  ScalarType Type;
  uint8_t VectorWidth;
  uint32_t Decl; ///< index into Function::RegisterDecls
};

} // namespace ptxforge::ptx
