// Which f32 registers may skip NaN canonicalisation. The GPU's f32 arithmetic returns the one canonical NaN
// (0x7fffffff) whatever the inputs, x86 propagates an input's payload or makes 0xffc00000, so the lowering
// selects the canonical bits after each operation: a compare and a blend per flop, up to a third of a
// compute-bound kernel's instructions. A NaN's payload is only seen where bits leave arithmetic (stores,
// moves to other types, conversions, shuffles, copysign...); f32 arithmetic, compares and classification only
// see that the value is a NaN, and their own results are canonicalised again. A register every reader of
// which is such an operation (or a copy into such a register) never shows its payload, so the operations
// writing it need no canonicalisation.
#include "FamilyLowering.h"

namespace {

/// f32 operations whose result does not depend on their inputs' NaN payloads.
bool readsPayloadBlind(const ptx::Instruction &I) {
  if (I.typeCount() != 1 || I.type() != ptx::ScalarType::F32)
    return false;
  switch (I.Op) {
  case Opcode::Add:
  case Opcode::Sub:
  case Opcode::Mul:
  case Opcode::Fma:
  case Opcode::Mad:
  case Opcode::Div:
  case Opcode::Sqrt:
  case Opcode::Rcp:
  case Opcode::Rsqrt:
  case Opcode::Ex2:
  case Opcode::Lg2:
  case Opcode::Sin:
  case Opcode::Cos:
  case Opcode::Tanh:
  case Opcode::Min:
  case Opcode::Max:
  case Opcode::Abs:
  case Opcode::Neg:
  case Opcode::Setp:
  case Opcode::Testp:
    return true;
  default:
    return false;
  }
}

/// A plain f32 register copy: its source shows its payload exactly where its destination does.
bool isCopy(const ptx::Instruction &I) {
  return I.Op == Opcode::Mov && I.typeCount() == 1 && I.type() == ptx::ScalarType::F32 && I.Operands.size() == 2 &&
         I.Operands[0].isRegister() && I.Operands[1].isRegister();
}

void addRegisters(const ptx::Operand &Op, std::vector<bool> &Set) {
  if ((Op.Kind == ptx::OperandKind::Register || Op.Kind == ptx::OperandKind::Address ||
       Op.Kind == ptx::OperandKind::RegPair) &&
      Op.Reg != ptx::NoReg)
    Set[Op.Reg] = true;
  if (Op.Kind == ptx::OperandKind::RegPair && Op.Reg2 != ptx::NoReg)
    Set[Op.Reg2] = true;
  for (const ptx::Operand &E : Op.Elements)
    addRegisters(E, Set);
}

} // namespace

std::vector<bool> ptxforge::codegen::detail::nanPayloadUnobserved(const ptx::Function &F) {
  std::vector<bool> Shown(F.Registers.size(), false);
  for (const ptx::Instruction &I : F.Instructions) {
    if (isCopy(I))
      continue;
    if (readsPayloadBlind(I)) // its sources' payloads do not matter; its destination is what is decided here
      continue;
    for (const ptx::Operand &Op : I.Operands) // any other use, destinations included: conservative
      addRegisters(Op, Shown);
  }
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (const ptx::Instruction &I : F.Instructions)
      if (isCopy(I) && Shown[I.Operands[0].Reg] && !Shown[I.Operands[1].Reg])
        Shown[I.Operands[1].Reg] = Changed = true;
  }
  Shown.flip();
  return Shown;
}
