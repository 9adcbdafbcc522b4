// A typed PTX instruction: opcode, qualifiers in source order (types, vector widths, modifiers), guard, operands.
#pragma once

#include "ptxforge/ptx/Opcode.h"
#include "ptxforge/ptx/Operand.h"
#include "ptxforge/ptx/Types.h"

#include "llvm/ADT/SmallVector.h"

namespace ptxforge::ptx {

/// One dot-part of an instruction after its opcode: `.rn`, `.f32`, `.v4`.
struct Qualifier {
  enum class Kind : uint8_t { Type, Vector, Modifier };
  Kind K;
  uint16_t Value; ///< ScalarType, vector width (2/4/8/16) or Modifier

  static Qualifier type(ScalarType T) { return {Kind::Type, static_cast<uint16_t>(T)}; }
  static Qualifier vector(unsigned N) { return {Kind::Vector, static_cast<uint16_t>(N)}; }
  static Qualifier modifier(Modifier M) { return {Kind::Modifier, static_cast<uint16_t>(M)}; }
};

struct Instruction {
  Opcode Op = Opcode::Ret;
  llvm::SmallVector<Qualifier, 5> Qualifiers; ///< source order: ptxas accepts modifiers in any order
  RegId Guard = NoReg;                        ///< `@p` predicate register, or NoReg
  bool GuardNegated = false;                  ///< `@!p`
  llvm::SmallVector<Operand, 3> Operands;
  SourceLoc Loc; ///< the opcode token

  bool has(Modifier M) const {
    for (const Qualifier &Q : Qualifiers)
      if (Q.K == Qualifier::Kind::Modifier && Q.Value == static_cast<uint16_t>(M))
        return true;
    return false;
  }
  /// The I-th type qualifier (`cvt.f32.s32`: 0 -> f32, 1 -> s32), or None.
  ScalarType type(unsigned I = 0) const {
    for (const Qualifier &Q : Qualifiers)
      if (Q.K == Qualifier::Kind::Type && I-- == 0)
        return static_cast<ScalarType>(Q.Value);
    return ScalarType::None;
  }
  unsigned typeCount() const {
    unsigned N = 0;
    for (const Qualifier &Q : Qualifiers)
      N += Q.K == Qualifier::Kind::Type;
    return N;
  }
  /// The `.vN` width, 1 when absent.
  unsigned vectorWidth() const {
    for (const Qualifier &Q : Qualifiers)
      if (Q.K == Qualifier::Kind::Vector)
        return Q.Value;
    return 1;
  }
};

} // namespace ptxforge::ptx
