// Spin points and lockstep points (ProgressPoints.h).
#include "ProgressPoints.h"

#include "FunctionLowering.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <deque>
#include <optional>

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

/// The body's instructions in statement order (positions) and its control flow between them.
struct Flow {
  std::vector<uint32_t> Order;                            ///< instruction index per position
  std::vector<size_t> LabelPosition;                      ///< per label: the position it names
  std::vector<llvm::SmallVector<uint32_t, 2>> Successors; ///< per position

  explicit Flow(const ptx::Function &F) : LabelPosition(F.Labels.size(), SIZE_MAX) {
    for (const ptx::Statement &S : F.Body) {
      if (S.Kind == ptx::StatementKind::Label && S.Index < LabelPosition.size())
        LabelPosition[S.Index] = Order.size();
      else if (S.Kind == ptx::StatementKind::Instruction)
        Order.push_back(S.Index);
    }
    Successors.resize(Order.size());
    for (uint32_t Pos = 0; Pos < Order.size(); ++Pos) {
      const ptx::Instruction &I = F.Instructions[Order[Pos]];
      bool Always = I.Guard == ptx::NoReg, FallsThrough = true;
      auto add = [&](size_t To) {
        if (To < Order.size())
          Successors[Pos].push_back(static_cast<uint32_t>(To));
      };
      if (I.Op == Opcode::Bra) {
        if (std::optional<size_t> T = branchTarget(I))
          add(*T);
        FallsThrough = !Always;
      } else if (I.Op == Opcode::Brx) { // any label: the analyses below only need a superset of the edges
        for (size_t T : LabelPosition)
          add(T);
        FallsThrough = !Always;
      } else if (I.Op == Opcode::Ret || I.Op == Opcode::Exit || I.Op == Opcode::Trap) {
        FallsThrough = !Always;
      }
      if (FallsThrough)
        add(Pos + 1);
    }
  }

  /// The position a `bra` goes to, if it names a label of the body.
  std::optional<size_t> branchTarget(const ptx::Instruction &I) const {
    if (I.Operands.empty() || I.Operands[0].Target.Kind != ptx::SymbolKind::Label ||
        I.Operands[0].Target.Index >= LabelPosition.size())
      return std::nullopt;
    return LabelPosition[I.Operands[0].Target.Index];
  }
};

/// Marks the backward branches of loops that may spin. Loops are read off the statement order: a branch to a
/// label at or before it closes a loop over the instructions between. A loop with a lockstep point needs no
/// spin point: every pass through it lets the other threads run, and a spin point's yield now and then would
/// put its thread a step behind the others (the lockstep points of a warp-synchronous loop through volatile
/// memory). It still makes the kernel one that may spin, for its grid's sake.
void findSpinLoops(const ptx::Function &F, const Flow &W, ProgressPoints &P) {
  for (size_t Pos = 0; Pos < W.Order.size(); ++Pos) {
    const ptx::Instruction &I = F.Instructions[W.Order[Pos]];
    std::optional<size_t> Head = I.Op == Opcode::Bra ? W.branchTarget(I) : std::nullopt;
    if (!Head || *Head > Pos)
      continue;
    std::vector<uint32_t> Body(W.Order.begin() + *Head, W.Order.begin() + Pos + 1);
    if (!maySpin(F, Body))
      continue;
    P.MaySpin = true;
    P.SpinBackEdge[W.Order[Pos]] = llvm::none_of(Body, [&](uint32_t Index) { return P.LockstepBefore[Index]; });
  }
}

/// Lockstep points: before a warp-visible load that a warp-visible store may precede on some path with no
/// barrier, collective or lockstep point between; after a point (until a barrier), also before a store that a
/// load may precede. A forward data-flow over the body's control flow (a store at a loop's end reaches the
/// load at its head), to a fixed point: points are only ever added, and with them fixed the transfer is
/// monotone.
void findLockstepPoints(const ptx::Function &F, const Flow &W, ProgressPoints &P) {
  enum : uint8_t { Stored = 1, Loaded = 2, InRun = 4 };
  size_t N = W.Order.size();
  std::vector<llvm::SmallVector<uint32_t, 2>> Predecessors(N);
  for (uint32_t Pos = 0; Pos < N; ++Pos)
    for (uint32_t S : W.Successors[Pos])
      Predecessors[S].push_back(Pos);
  std::vector<uint8_t> Out(N, 0);
  std::vector<bool> Point(N, false), Queued(N, true);
  std::deque<uint32_t> Work;
  for (uint32_t Pos = 0; Pos < N; ++Pos)
    Work.push_back(Pos);
  while (!Work.empty()) {
    uint32_t Pos = Work.front();
    Work.pop_front();
    Queued[Pos] = false;
    const ptx::Instruction &I = F.Instructions[W.Order[Pos]];
    uint8_t State = 0;
    if (!synchronizesThreads(I)) {
      for (uint32_t Pred : Predecessors[Pos])
        State |= Out[Pred];
      bool Load = (I.Op == Opcode::Ld || I.Op == Opcode::Ldu) && warpVisible(I);
      bool Store = I.Op == Opcode::St && warpVisible(I);
      if ((Load && (State & Stored)) || (Store && (State & InRun) && (State & Loaded)))
        Point[Pos] = true;
      if (Point[Pos])
        State = InRun;
      State |= (Store ? Stored : 0) | (Load ? Loaded : 0);
    }
    if (State == Out[Pos])
      continue;
    Out[Pos] = State;
    for (uint32_t S : W.Successors[Pos])
      if (!Queued[S]) {
        Queued[S] = true;
        Work.push_back(S);
      }
  }
  for (uint32_t Pos = 0; Pos < N; ++Pos)
    if (Point[Pos]) {
      P.LockstepBefore[W.Order[Pos]] = true;
      ++P.LockstepPoints;
    }
}

} // namespace

ProgressPoints ptxforge::codegen::detail::findProgressPoints(const ptx::Function &F) {
  ProgressPoints P;
  P.SpinBackEdge.assign(F.Instructions.size(), false);
  P.LockstepBefore.assign(F.Instructions.size(), false);
  Flow W(F);
  if (F.IsEntry)
    findLockstepPoints(F, W, P);
  findSpinLoops(F, W, P);
  return P;
}
