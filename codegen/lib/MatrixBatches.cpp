// See MatrixBatches.h.
#include "MatrixBatches.h"
#include "WarpRendezvous.h"

#include "llvm/ADT/DenseSet.h"

using namespace ptxforge;
using namespace ptxforge::codegen::detail;
using ptx::Modifier;
using ptx::Opcode;

namespace {

using RegSet = llvm::SmallDenseSet<ptx::RegId, 64>;

/// A batch's registers are a buffer of 64-bit words in each lane (a per-thread array in region-split block
/// functions): at most 8 KiB of them.
constexpr size_t MaxBatchRegisters = 1024;

/// Every register Op names (an address's base, a vector's elements, a pair's two).
void addRegisters(const ptx::Operand &Op, RegSet &Out) {
  if (Op.Reg != ptx::NoReg)
    Out.insert(Op.Reg);
  if (Op.Reg2 != ptx::NoReg)
    Out.insert(Op.Reg2);
  for (const ptx::Operand &E : Op.Elements)
    addRegisters(E, Out);
}

RegSet registersOf(const ptx::Instruction &I) {
  RegSet R;
  if (I.Guard != ptx::NoReg)
    R.insert(I.Guard);
  for (const ptx::Operand &Op : I.Operands)
    addRegisters(Op, R);
  return R;
}

/// Register arithmetic, conversions and plain memory accesses: what a thread does alone, with no control flow,
/// synchronization or ordering another thread could tell from where a product of the warp falls among them.
bool threadLocal(const ptx::Instruction &I) {
  switch (I.Op) {
  case Opcode::Wmma: // fragment loads and stores: each lane's own elements
    return !I.has(Modifier::Mma);
  case Opcode::Abs:
  case Opcode::Add:
  case Opcode::Addc:
  case Opcode::And:
  case Opcode::Bfe:
  case Opcode::Bfi:
  case Opcode::Bfind:
  case Opcode::Bmsk:
  case Opcode::Brev:
  case Opcode::Clz:
  case Opcode::Cnot:
  case Opcode::Copysign:
  case Opcode::Cos:
  case Opcode::Cvt:
  case Opcode::Cvta:
  case Opcode::Div:
  case Opcode::Dp2a:
  case Opcode::Dp4a:
  case Opcode::Ex2:
  case Opcode::Fma:
  case Opcode::Ld:
  case Opcode::Lg2:
  case Opcode::Lop3:
  case Opcode::Mad:
  case Opcode::Mad24:
  case Opcode::Madc:
  case Opcode::Max:
  case Opcode::Min:
  case Opcode::Mov:
  case Opcode::Mul:
  case Opcode::Mul24:
  case Opcode::Neg:
  case Opcode::Not:
  case Opcode::Or:
  case Opcode::Popc:
  case Opcode::Prmt:
  case Opcode::Rcp:
  case Opcode::Rem:
  case Opcode::Rsqrt:
  case Opcode::Sad:
  case Opcode::Selp:
  case Opcode::Set:
  case Opcode::Setp:
  case Opcode::Shf:
  case Opcode::Shl:
  case Opcode::Shr:
  case Opcode::Sin:
  case Opcode::Slct:
  case Opcode::Sqrt:
  case Opcode::St:
  case Opcode::Sub:
  case Opcode::Subc:
  case Opcode::Szext:
  case Opcode::Tanh:
  case Opcode::Testp:
  case Opcode::Xor:
    return true;
  default:
    return false;
  }
}

bool plainRegister(const ptx::Operand &Op) {
  return Op.Kind == ptx::OperandKind::Register && !Op.Component && !Op.Negated && !Op.SelKind;
}

/// An unguarded mma.sync or wmma.mma that meets as a plain warp collective, all of whose fragments are registers.
bool batchable(const ptx::Instruction &I) {
  if (I.Guard != ptx::NoReg || (I.Op != Opcode::Mma && I.Op != Opcode::Wmma) || !isRegionCutCollective(I) ||
      I.Operands.size() != 4)
    return false;
  for (const ptx::Operand &Op : I.Operands) {
    bool Vector = Op.Kind == ptx::OperandKind::Vector;
    if (!(Vector ? llvm::all_of(Op.Elements, plainRegister) : plainRegister(Op)))
      return false;
  }
  return true;
}

/// A wmma.load of an A, B or C fragment into plain registers, unguarded: one a batch may take over.
bool fragmentLoad(const ptx::Instruction &I) {
  if (I.Op != Opcode::Wmma || I.has(Modifier::Mma) || I.has(Modifier::Store) || I.Guard != ptx::NoReg ||
      I.Operands.size() < 2 || I.Operands[0].Kind != ptx::OperandKind::Vector)
    return false;
  return llvm::all_of(I.Operands[0].Elements, plainRegister);
}

/// Writes memory (or may): a load before it cannot move after it.
bool writesMemory(const ptx::Instruction &I) {
  return I.Op == Opcode::St || (I.Op == Opcode::Wmma && I.has(Modifier::Store));
}

/// The batch being gathered: its products and the registers they read and write, and the fragment loads since
/// the last store or the previous batch (candidates to take over).
struct Pending {
  llvm::SmallVector<unsigned, 16> Members;
  llvm::SmallVector<unsigned, 16> Loads;
  RegSet Touched;

  bool independent(const RegSet &Regs) const {
    return llvm::none_of(Regs, [&](ptx::RegId R) { return Touched.contains(R); });
  }
};

} // namespace

MatrixBatches ptxforge::codegen::detail::findMatrixBatches(const ptx::Function &F, const ProgressPoints &Points) {
  MatrixBatches R;
  Pending P;
  // How many instructions name each register: a load's registers named by it and the batch's products alone
  // are the batch's to fill.
  llvm::DenseMap<ptx::RegId, unsigned> Names;
  for (const ptx::Instruction &I : F.Instructions)
    for (ptx::RegId Reg : registersOf(I))
      ++Names[Reg];
  auto flush = [&] {
    if (P.Members.empty()) {
      P.Loads.clear();
      return;
    }
    R.Order.push_back(P.Members.front());
    if (P.Members.size() > 1) {
      R.Joined += static_cast<unsigned>(P.Members.size() - 1);
      MatrixBatch &Batch = R.Batches[P.Members.front()];
      Batch.Products = P.Members;
      llvm::DenseMap<ptx::RegId, unsigned> InBatch;
      for (unsigned Pos : P.Members)
        for (ptx::RegId Reg : registersOf(F.Instructions[F.Body[Pos].Index]))
          ++InBatch[Reg];
      for (unsigned Pos : P.Loads) {
        const ptx::Instruction &Load = F.Instructions[F.Body[Pos].Index];
        if (llvm::all_of(Load.Operands[0].Elements, [&](const ptx::Operand &E) {
              auto It = InBatch.find(E.Reg);
              return It != InBatch.end() && Names.lookup(E.Reg) == 1 + It->second;
            })) {
          Batch.Loads.push_back(Pos);
          R.LoadBatch[Pos] = P.Members.front();
        }
      }
    }
    P = Pending();
  };
  for (unsigned Pos = 0; Pos < F.Body.size(); ++Pos) {
    const ptx::Statement &S = F.Body[Pos];
    // Scopes, declarations and directives lower to nothing (an inline asm block's braces): they end no run.
    if (S.Kind != ptx::StatementKind::Instruction && S.Kind != ptx::StatementKind::Label) {
      R.Order.push_back(Pos);
      continue;
    }
    const ptx::Instruction *I = S.Kind == ptx::StatementKind::Instruction ? &F.Instructions[S.Index] : nullptr;
    bool Pointless = I && !Points.LockstepBefore[S.Index] && !Points.SpinBackEdge[S.Index];
    if (Pointless && batchable(*I)) {
      RegSet Regs = registersOf(*I);
      if (P.Touched.size() + Regs.size() > MaxBatchRegisters)
        flush();
      P.Members.push_back(Pos);
      P.Touched.insert(Regs.begin(), Regs.end());
      continue;
    }
    // An instruction the pending products neither feed nor share a register with runs before them.
    if (Pointless && threadLocal(*I) && (P.Members.empty() || P.independent(registersOf(*I)))) {
      if (writesMemory(*I))
        P.Loads.clear();
      else if (fragmentLoad(*I))
        P.Loads.push_back(Pos);
      R.Order.push_back(Pos);
      continue;
    }
    flush();
    R.Order.push_back(Pos);
    // After a batch, or before anything was pending: a load before this instruction is never moved past it.
    P.Loads.clear();
  }
  flush();
  return R;
}
