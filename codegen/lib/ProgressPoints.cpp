// Spin points and lockstep points (ProgressPoints.h).
#include "ProgressPoints.h"

#include "FunctionLowering.h"

#include <cstdint>

using namespace ptxforge;
using namespace ptxforge::codegen;
using namespace ptxforge::codegen::detail;
using ptx::Modifier;
using ptx::Opcode;

namespace {

bool sharedSpace(const ptx::Instruction &I) {
  return I.has(Modifier::Shared) || I.has(Modifier::Shared_Cta) || I.has(Modifier::Shared_Cluster);
}

bool genericSpace(const ptx::Instruction &I) {
  return !sharedSpace(I) && !I.has(Modifier::Global) && !I.has(Modifier::Local) && !I.has(Modifier::Const) &&
         !I.has(Modifier::Param);
}

/// A load or store of memory other lanes of the warp may access at once: shared, or generic and volatile (a
/// `volatile` pointer into shared memory the compiler could not tell apart).
bool warpVisible(const ptx::Instruction &I) { return sharedSpace(I) || (genericSpace(I) && I.has(Modifier::Volatile)); }

/// A load whose value the compiler must fetch anew each time (another thread may have written it).
bool orderedLoad(const ptx::Instruction &I) {
  return (I.Op == Opcode::Ld || I.Op == Opcode::Ldu) &&
         (I.has(Modifier::Volatile) || I.has(Modifier::Relaxed) || I.has(Modifier::Acquire));
}

bool readsRegister(const ptx::Instruction &I, ptx::RegId R) {
  if (I.Guard == R)
    return true;
  for (size_t K = 1; K < I.Operands.size(); ++K) {
    const ptx::Operand &Op = I.Operands[K];
    if (Op.Reg == R || Op.Reg2 == R)
      return true;
    for (const ptx::Operand *E : operandElements(Op))
      if (E->Reg == R)
        return true;
  }
  return false;
}

/// Whether the loop made of Body (the instructions from its head label to its back edge) may wait for other
/// threads: see ProgressPoints.h.
bool maySpin(const ptx::Function &F, const std::vector<uint32_t> &Body) {
  for (uint32_t Index : Body) {
    const ptx::Instruction &I = F.Instructions[Index];
    if (orderedLoad(I) || I.Op == Opcode::Fence || I.Op == Opcode::Membar || I.Op == Opcode::Nanosleep)
      return true;
    if (I.Op != Opcode::Atom || I.Operands.empty() || I.Operands[0].Kind != ptx::OperandKind::Register)
      continue;
    // An atomic whose old value the loop reads: polling (atomicAdd(p, 0)) or a lock (atomicCAS).
    ptx::RegId Old = I.Operands[0].Reg;
    for (uint32_t Other : Body)
      if (readsRegister(F.Instructions[Other], Old))
        return true;
  }
  return false;
}

/// Marks the backward branches of loops that may spin. Loops are read off the statement order: a branch to a
/// label at or before it closes a loop over the instructions between.
void findSpinLoops(const ptx::Function &F, ProgressPoints &P) {
  std::vector<size_t> LabelPosition(F.Labels.size(), SIZE_MAX);
  std::vector<uint32_t> Order; // instruction indices in statement order
  for (const ptx::Statement &S : F.Body) {
    if (S.Kind == ptx::StatementKind::Label && S.Index < LabelPosition.size())
      LabelPosition[S.Index] = Order.size();
    else if (S.Kind == ptx::StatementKind::Instruction)
      Order.push_back(S.Index);
  }
  for (size_t Pos = 0; Pos < Order.size(); ++Pos) {
    const ptx::Instruction &I = F.Instructions[Order[Pos]];
    if (I.Op != Opcode::Bra || I.Operands.empty() || I.Operands[0].Target.Kind != ptx::SymbolKind::Label ||
        I.Operands[0].Target.Index >= LabelPosition.size())
      continue;
    size_t Head = LabelPosition[I.Operands[0].Target.Index];
    if (Head > Pos)
      continue;
    std::vector<uint32_t> Body(Order.begin() + Head, Order.begin() + Pos + 1);
    if (maySpin(F, Body)) {
      P.SpinBackEdge[Order[Pos]] = true;
      P.MaySpin = true;
    }
  }
}

/// Lockstep points, in statement order: before a warp-visible load that follows a warp-visible store with no
/// barrier or collective between; once there is one, also before a store that follows a load.
void findLockstepPoints(const ptx::Function &F, ProgressPoints &P) {
  bool Stored = false, Loaded = false, InRun = false;
  for (const ptx::Statement &S : F.Body) {
    if (S.Kind != ptx::StatementKind::Instruction)
      continue;
    const ptx::Instruction &I = F.Instructions[S.Index];
    if (synchronizesThreads(I)) {
      Stored = Loaded = InRun = false;
      continue;
    }
    bool Load = (I.Op == Opcode::Ld || I.Op == Opcode::Ldu) && warpVisible(I);
    bool Store = I.Op == Opcode::St && warpVisible(I);
    if ((Load && Stored) || (Store && InRun && Loaded)) {
      P.LockstepBefore[S.Index] = true;
      ++P.LockstepPoints;
      InRun = true;
      Stored = Loaded = false;
    }
    Stored |= Store;
    Loaded |= Load;
  }
}

} // namespace

ProgressPoints ptxforge::codegen::detail::findProgressPoints(const ptx::Function &F) {
  ProgressPoints P;
  P.SpinBackEdge.assign(F.Instructions.size(), false);
  P.LockstepBefore.assign(F.Instructions.size(), false);
  findSpinLoops(F, P);
  if (F.IsEntry)
    findLockstepPoints(F, P);
  return P;
}
