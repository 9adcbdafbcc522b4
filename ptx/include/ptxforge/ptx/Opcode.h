// PTX opcodes and instruction modifiers as enums (Opcodes.def, Modifiers.def), with their spellings.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <bitset>
#include <cstdint>
#include <optional>

namespace ptxforge::ptx {

enum class Opcode : uint16_t {
#define PTX_OPCODE(Enum, Spelling) Enum,
#include "ptxforge/ptx/Opcodes.def"
  NumOpcodes
};
constexpr unsigned NumOpcodes = static_cast<unsigned>(Opcode::NumOpcodes);

enum class Modifier : uint16_t {
#define PTX_MODIFIER(Enum, Spelling) Enum,
#include "ptxforge/ptx/Modifiers.def"
  NumModifiers
};
constexpr unsigned NumModifiers = static_cast<unsigned>(Modifier::NumModifiers);

using ModifierSet = std::bitset<NumModifiers>;

llvm::StringRef spell(Opcode Op);
llvm::StringRef spell(Modifier M);
std::optional<Opcode> lookupOpcode(llvm::StringRef Spelling);
std::optional<Modifier> lookupModifier(llvm::StringRef Spelling);

/// The lanes a video instruction works on: 1 for the scalar ones (vadd ... vmad, vset: 32-bit operands with
/// byte/half selectors), 2 or 4 for the SIMD ones (vadd2 ..., vadd4 ...); 0 for other opcodes.
unsigned videoLanes(Opcode Op);

} // namespace ptxforge::ptx
