// PTX fundamental types and state spaces as enums, with their spellings and sizes.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <bitset>
#include <cstdint>
#include <optional>

namespace ptxforge::ptx {

enum class ScalarType : uint8_t {
#define PTX_TYPE(Enum, Spelling, Bits, Kind) Enum,
#include "ptxforge/ptx/Types.def"
  None,
};
constexpr unsigned NumScalarTypes = static_cast<unsigned>(ScalarType::None);

enum class TypeKind : uint8_t { Pred, Bits, Unsigned, Signed, Float, Packed, Opaque };

/// The spelling without its dot ("u32"); "" for None.
llvm::StringRef spell(ScalarType T);
/// Width in bits (pred counts as 1).
unsigned bitWidth(ScalarType T);
TypeKind kindOf(ScalarType T);
/// Looks a spelling up ("u32" without dot).
std::optional<ScalarType> lookupType(llvm::StringRef Spelling);

inline bool isInteger(ScalarType T) {
  TypeKind K = kindOf(T);
  return K == TypeKind::Bits || K == TypeKind::Unsigned || K == TypeKind::Signed;
}
inline bool isFloat(ScalarType T) { return kindOf(T) == TypeKind::Float; }

/// A set of scalar types (bitset indexed by the enum).
using TypeSet = std::bitset<NumScalarTypes>;

/// State spaces of variables and memory instructions.
enum class StateSpace : uint8_t { None, Reg, Sreg, Const, Global, Local, Param, Shared, Tex, Generic };
llvm::StringRef spell(StateSpace S);

/// Linkage directives of module-scope declarations.
enum class Linkage : uint8_t { None, Visible, Extern, Weak, Common };
llvm::StringRef spell(Linkage L);

} // namespace ptxforge::ptx
