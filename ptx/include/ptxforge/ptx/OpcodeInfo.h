// Typed access to OpcodeTable.def: what each opcode allows and what each feature of it requires.
#pragma once

#include "ptxforge/ptx/Instruction.h"
#include "ptxforge/ptx/Opcode.h"
#include "ptxforge/ptx/Types.h"

#include <bitset>
#include <string>
#include <vector>

namespace ptxforge::ptx {

/// How an instruction's operand registers relate to its type qualifiers; the verifier checks these.
enum class OperandShape : uint8_t {
  Unchecked, ///< operand types are not checked (complex or rarely used forms)
  AllSame,   ///< every register operand has the instruction's (first) type: add, and, min, ...
  Shift,     ///< d, a of the type; b is a 32-bit amount: shl, shr
  Setp,      ///< d (and optional |q) predicates; a, b of the type; optional c predicate
  Selp,      ///< d, a, b of the type; c a predicate
  Set,       ///< d of the first type; a, b of the second type; optional c predicate
  Cvt,       ///< d of the first type; a of the second type
  Wide,      ///< mul.wide / mad.wide forms: d (and c) twice the width of a and b when .wide is present
  Mov,       ///< d, a of the type (vector forms pack/unpack)
  Memory,    ///< ld/st/atom forms: an address operand and value registers at least the memory type's width
};

/// A version requirement: lowest sm_XX and PTX ISA version (major*10+minor).
struct Requirement {
  unsigned Sm = 0;
  unsigned Ptx = 0;
};

struct OpcodeInfo {
  Opcode Op;
  unsigned MinOperands, MaxOperands;
  Requirement Minimum;
  OperandShape Shape;
  ModifierSet AllowedModifiers;
  TypeSet AllowedTypes;
  bool AllowsVector; ///< accepts .v2/.v4/.v8
};

/// A modifier/type combination on an opcode that raises its requirement.
struct OpcodeFeature {
  Opcode Op;
  ModifierSet Modifiers;
  TypeSet Types;
  unsigned VectorWidth = 0;     ///< the feature is a `.vN` width (0: none)
  std::vector<Qualifier> Needs; ///< the same spellings as qualifiers, for a fast match
  Requirement Minimum;
  std::string Spelling; ///< for reports: "add.bf16"
};

/// The table entry of an opcode (every opcode of Opcodes.def has one).
const OpcodeInfo &getOpcodeInfo(Opcode Op);

/// The features of an opcode, for requirement computation.
const std::vector<OpcodeFeature> &getOpcodeFeatures(Opcode Op);

} // namespace ptxforge::ptx

namespace ptxforge::ptx {
/// Consistency problems of OpcodeTable.def (unknown spellings, missing or duplicate rows); empty when sound.
std::vector<std::string> checkOpcodeTable();
} // namespace ptxforge::ptx
