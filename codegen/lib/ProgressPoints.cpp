// Spin points and lockstep points (ProgressPoints.h).
#include "ProgressPoints.h"

#include "FunctionLowering.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <deque>
#include <map>
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

/// Whether operand Op names register R, itself or as an element (of a vector, an address).
bool mentionsRegister(const ptx::Operand &Op, ptx::RegId R) {
  if (Op.Reg == R || Op.Reg2 == R)
    return true;
  for (const ptx::Operand *E : operandElements(Op))
    if (E->Reg == R)
      return true;
  return false;
}

bool readsRegister(const ptx::Instruction &I, ptx::RegId R) {
  if (I.Guard == R)
    return true;
  for (size_t K = 1; K < I.Operands.size(); ++K)
    if (mentionsRegister(I.Operands[K], R))
      return true;
  return false;
}

/// Whether I may write register R (every register of its first operand counts: destinations come first).
bool writesRegister(const ptx::Instruction &I, ptx::RegId R) {
  if (I.Operands.empty())
    return false;
  const ptx::Operand &D = I.Operands[0];
  return D.Kind != ptx::OperandKind::Address && mentionsRegister(D, R);
}

/// Whether the loop made of Body (the instructions from its head label to its back edge) may wait for other
/// threads: see ProgressPoints.h. Skip(Index) leaves an instruction out (the retry loop's own accesses).
template <typename SkipFn> bool maySpin(const ptx::Function &F, const std::vector<uint32_t> &Body, SkipFn Skip) {
  for (uint32_t Index : Body) {
    const ptx::Instruction &I = F.Instructions[Index];
    if (Skip(Index))
      continue;
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
  std::vector<bool> Labelled;                             ///< per position: a label names it

  explicit Flow(const ptx::Function &F) : LabelPosition(F.Labels.size(), SIZE_MAX) {
    for (const ptx::Statement &S : F.Body) {
      if (S.Kind == ptx::StatementKind::Label && S.Index < LabelPosition.size())
        LabelPosition[S.Index] = Order.size();
      else if (S.Kind == ptx::StatementKind::Instruction)
        Order.push_back(S.Index);
    }
    Labelled.assign(Order.size() + 1, false);
    for (size_t L : LabelPosition)
      if (L < Labelled.size())
        Labelled[L] = true;
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

/// Whether two address operands name the same word (one base register or symbol, one offset).
bool sameAddress(const ptx::Operand &X, const ptx::Operand &Y) {
  return X.Kind == ptx::OperandKind::Address && Y.Kind == ptx::OperandKind::Address && X.Reg == Y.Reg &&
         X.Bits == Y.Bits && X.Name == Y.Name && X.Elements.empty() && Y.Elements.empty();
}

/// The position of the CAS when the loop from position Head to its back edge at Pos is a compare-and-swap
/// retry loop, which never waits for another thread: an update of one word (atomicAdd on doubles, atomicMax on
/// floats written with atomicCAS) that goes round again only when its CAS failed, expecting the value it last
/// observed there (the CAS's previous result, or a load of the same address in the pass). A failure then means
/// that another thread wrote the word between the observation and the CAS: a thread that was running and made
/// progress. A lock (expecting a constant, so the word must change back first) or a wait for a value is none.
/// Read off the statement order: between the CAS and the back edge runs straight-line code, and the compare's
/// registers keep their values up to it.
std::optional<size_t> casRetryLoop(const ptx::Function &F, const Flow &W, size_t Head, size_t Pos) {
  const ptx::Instruction &Br = F.Instructions[W.Order[Pos]];
  if (Br.Guard == ptx::NoReg)
    return std::nullopt;
  auto at = [&](size_t P) -> const ptx::Instruction & { return F.Instructions[W.Order[P]]; };
  auto writtenIn = [&](ptx::RegId R, size_t From, size_t To) { // positions [From, To)
    for (size_t P = From; P < To; ++P)
      if (writesRegister(at(P), R))
        return true;
    return false;
  };
  size_t Cas = SIZE_MAX;
  for (size_t P = Head; P < Pos; ++P)
    if (at(P).Op == Opcode::Atom && at(P).has(Modifier::Cas)) {
      if (Cas != SIZE_MAX)
        return std::nullopt;
      Cas = P;
    }
  if (Cas == SIZE_MAX)
    return std::nullopt;
  const ptx::Instruction &C = at(Cas);
  if (C.Guard != ptx::NoReg || C.Operands.size() != 4 || !C.Operands[0].isRegister() ||
      C.Operands[1].Kind != ptx::OperandKind::Address || !C.Operands[2].isRegister())
    return std::nullopt;
  ptx::RegId Old = C.Operands[0].Reg, Expected = C.Operands[2].Reg, Base = C.Operands[1].Reg;
  // One word throughout: a loop that moves on to another word after a failure may be searching for a value.
  if (Old == Expected || writtenIn(Old, Head, Cas) || (Base != ptx::NoReg && writtenIn(Base, Head, Pos + 1)))
    return std::nullopt;
  // Straight-line from the CAS to the back edge, whose predicate compares the CAS's result with what it
  // expected, both unchanged since the CAS.
  size_t Setp = SIZE_MAX;
  for (size_t P = Cas + 1; P < Pos; ++P) {
    const ptx::Instruction &I = at(P);
    if (W.Labelled[P] || I.Op == Opcode::Bra || I.Op == Opcode::Brx || I.Op == Opcode::Call || writesRegister(I, Old))
      return std::nullopt;
    if (writesRegister(I, Br.Guard))
      Setp = P;
  }
  if (W.Labelled[Pos] || Setp == SIZE_MAX || writtenIn(Expected, Cas + 1, Setp))
    return std::nullopt;
  const ptx::Instruction &S = at(Setp);
  ptx::RegId A = S.Operands.size() == 3 && S.Operands[1].isRegister() ? S.Operands[1].Reg : ptx::NoReg;
  ptx::RegId B = S.Operands.size() == 3 && S.Operands[2].isRegister() ? S.Operands[2].Reg : ptx::NoReg;
  if (S.Op != Opcode::Setp || S.Guard != ptx::NoReg || !S.Operands[0].isRegister() || !ptx::isInteger(S.type()) ||
      !S.has(Br.GuardNegated ? Modifier::Eq : Modifier::Ne) ||
      !((A == Old && B == Expected) || (A == Expected && B == Old)))
    return std::nullopt;
  // What the CAS expects is observed anew in each pass: the last write before the CAS in the pass (with no label
  // between, so that every path to the CAS takes it) loads the word or copies the previous result; with none,
  // the writes after the CAS copy its result.
  auto observes = [&](const ptx::Instruction &I, bool MayLoad) {
    if (I.Guard != ptx::NoReg || I.Operands.size() != 2 || !I.Operands[0].isRegister() || I.Operands[0].Reg != Expected)
      return false;
    if (I.Op == Opcode::Mov)
      return I.Operands[1].isRegister() && I.Operands[1].Reg == Old;
    return MayLoad && (I.Op == Opcode::Ld || I.Op == Opcode::Ldu) && I.vectorWidth() == 1 &&
           sameAddress(I.Operands[1], C.Operands[1]);
  };
  for (size_t P = Cas; P-- > Head;) {
    if (!writesRegister(at(P), Expected))
      continue;
    for (size_t Q = P + 1; Q <= Cas; ++Q)
      if (W.Labelled[Q])
        return std::nullopt;
    return observes(at(P), /*MayLoad=*/true) ? std::optional<size_t>(Cas) : std::nullopt;
  }
  bool Copied = false;
  for (size_t P = Setp + 1; P < Pos; ++P)
    if (writesRegister(at(P), Expected)) {
      if (!observes(at(P), /*MayLoad=*/false))
        return std::nullopt;
      Copied = true;
    }
  return Copied ? std::optional<size_t>(Cas) : std::nullopt;
}

/// A whole-block barrier (`bar.sync`/`barrier.sync` without a thread count), which every thread of the block reaches
/// before any goes on.
bool blockBarrier(const ptx::Instruction &I) {
  return (I.Op == Opcode::Bar || I.Op == Opcode::Barrier) && I.Guard == ptx::NoReg && I.Operands.size() <= 1 &&
         !I.has(Modifier::Arrive) && !I.has(Modifier::Red) && !I.has(Modifier::Warp) && !I.has(Modifier::Cluster);
}

/// Whether a loop (positions Head .. Pos, Pos its back edge) that may wait only for threads of its own block
/// lets them all run in every pass: its ordered accesses are loads and atomics of the block's own shared
/// memory (F neither calls nor addresses another block's shared memory), with no fence or nanosleep, and every
/// path from its head to its back edge passes a block barrier, where the other threads run up to the barrier
/// themselves. Such a loop (cuda-samples' scan steps through a `volatile` shared buffer between barriers) is
/// no spin loop: region loops keep its guarantee, and its kernel keeps them.
bool yieldsAtBarriers(const ptx::Function &F, const Flow &W, size_t Head, size_t Pos) {
  for (const ptx::Instruction &I : F.Instructions)
    if (I.Op == Opcode::Call || I.Op == Opcode::Mapa || I.has(Modifier::Shared_Cluster))
      return false;
  for (size_t P = Head; P <= Pos; ++P) {
    const ptx::Instruction &I = F.Instructions[W.Order[P]];
    bool Shared = I.has(Modifier::Shared) || I.has(Modifier::Shared_Cta);
    if (I.Op == Opcode::Fence || I.Op == Opcode::Membar || I.Op == Opcode::Nanosleep ||
        ((orderedLoad(I) || I.Op == Opcode::Atom) && !Shared))
      return false;
  }
  // The back edge must not be reachable from the head without a barrier.
  std::vector<bool> Seen(Pos - Head + 1, false);
  std::vector<size_t> Work{Head};
  while (!Work.empty()) {
    size_t P = Work.back();
    Work.pop_back();
    if (P < Head || P > Pos || Seen[P - Head])
      continue;
    Seen[P - Head] = true;
    if (blockBarrier(F.Instructions[W.Order[P]]))
      continue;
    if (P == Pos)
      return false;
    for (uint32_t S : W.Successors[P])
      Work.push_back(S);
  }
  return true;
}

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
    // A CAS retry loop's own CAS and its loads of the CAS's word never wait; what else the loop does may (a
    // lock tested before the CAS).
    std::optional<size_t> Cas = casRetryLoop(F, W, *Head, Pos);
    auto retryAccess = [&](uint32_t Index) {
      if (!Cas)
        return false;
      const ptx::Instruction &CasI = F.Instructions[W.Order[*Cas]], &I = F.Instructions[Index];
      return Index == W.Order[*Cas] || ((I.Op == Opcode::Ld || I.Op == Opcode::Ldu) && I.Operands.size() == 2 &&
                                        sameAddress(I.Operands[1], CasI.Operands[1]));
    };
    if (!maySpin(F, Body, retryAccess) || yieldsAtBarriers(F, W, *Head, Pos))
      continue;
    P.MaySpin = true;
    P.SpinBackEdge[W.Order[Pos]] = llvm::none_of(Body, [&](uint32_t Index) { return P.LockstepBefore[Index]; });
    P.SpinPoints += P.SpinBackEdge[W.Order[Pos]];
  }
}

/// Which variables an address may point into, read off the registers' definitions: a bit for each of the
/// function's own variables it names (up to 62) and one for all of the module's, AnyVariable for an address of
/// unknown origin (a pointer loaded from memory or a parameter, an absolute address, the 64th variable on). Integer
/// arithmetic on a variable's address stays in that variable (an index added to it, however computed, stays in bounds:
/// elsewhere the program is undefined).
class AddressOrigins {
public:
  using Set = uint64_t;
  static constexpr Set AnyVariable = 1ull << 63;

  explicit AddressOrigins(const ptx::Function &F) : Fn(F), Reg(F.Registers.size(), 0) {
    // Each definition's origins, joined over a register's definitions, to a fixed point (bounded: the sets only
    // grow in practice; a function that does not settle gets no refinement).
    for (unsigned Round = 0; Round < 16; ++Round) {
      std::vector<Set> Next(Reg.size(), 0);
      for (const ptx::Instruction &I : F.Instructions)
        if (!I.Operands.empty() && I.Operands[0].isRegister() && I.Operands[0].Reg < Next.size())
          Next[I.Operands[0].Reg] |= definition(I);
      if (Next == Reg) {
        Settled = true;
        return;
      }
      Reg = std::move(Next);
    }
  }

  /// The variables a load or store's address may point into.
  Set ofAccess(const ptx::Instruction &I) const {
    if (!Settled)
      return AnyVariable;
    for (const ptx::Operand &Op : I.Operands)
      if (Op.Kind == ptx::OperandKind::Address) {
        Set S = Op.Reg != ptx::NoReg ? registerSet(Op.Reg) : symbol(Op.Target);
        return S ? S : AnyVariable; // a register of no variable's address holds an absolute one
      }
    return AnyVariable;
  }

  /// Whether an access into A may touch memory an access into B touched.
  static bool overlap(Set A, Set B) { return A && B && ((A | B) & AnyVariable || (A & B)); }

private:
  Set registerSet(ptx::RegId R) const { return R < Reg.size() ? Reg[R] : AnyVariable; }

  /// A variable's bit. The module's variables share one: the function cannot tell their declarations apart, and
  /// every `.extern .shared` array names the same dynamic shared memory; so do the function's own extern or
  /// unsized ones.
  Set symbol(const ptx::SymbolRef &T) {
    if (T.Kind != ptx::SymbolKind::Variable && T.Kind != ptx::SymbolKind::LocalVariable)
      return AnyVariable;
    bool Own = T.Kind == ptx::SymbolKind::LocalVariable && T.Index < Fn.Locals.size() &&
               Fn.Locals[T.Index].Link != ptx::Linkage::Extern && !llvm::is_contained(Fn.Locals[T.Index].Dims, 0u);
    auto [It, New] = Bits.try_emplace(Own ? T.Index : ~0u, static_cast<unsigned>(Bits.size()));
    return It->second < 63 ? 1ull << It->second : AnyVariable;
  }
  Set symbol(const ptx::SymbolRef &T) const { return const_cast<AddressOrigins *>(this)->symbol(T); }

  /// The origins of what I writes to its first operand: the variables its sources point into for arithmetic
  /// (AnyVariable dropped when one of them is a variable's address), AnyVariable for a value from elsewhere.
  Set definition(const ptx::Instruction &I) {
    switch (I.Op) {
    case Opcode::Mov:
    case Opcode::Add:
    case Opcode::Sub:
    case Opcode::Mad:
    case Opcode::Mul:
    case Opcode::Shl:
    case Opcode::And:
    case Opcode::Or:
    case Opcode::Cvt:
    case Opcode::Cvta:
    case Opcode::Selp:
      break;
    default:
      return AnyVariable;
    }
    Set All = 0;
    for (size_t K = 1; K < I.Operands.size(); ++K) {
      const ptx::Operand &Op = I.Operands[K];
      switch (Op.Kind) {
      case ptx::OperandKind::Register:
        All |= registerSet(Op.Reg);
        break;
      case ptx::OperandKind::Symbol:
        All |= symbol(Op.Target);
        break;
      case ptx::OperandKind::Immediate:
      case ptx::OperandKind::Special:
        break;
      default:
        return AnyVariable;
      }
    }
    return All & ~AnyVariable ? All & ~AnyVariable : All;
  }

  const ptx::Function &Fn;
  std::vector<Set> Reg;              ///< per register: the join of its definitions' origins
  std::map<uint32_t, unsigned> Bits; ///< local variable index (~0: the module's variables) -> its bit
  bool Settled = false;
};

/// Lockstep points: before a warp-visible load that a warp-visible store into the same variable (or memory of
/// unknown origin: AddressOrigins) may precede on some path with no barrier, collective or lockstep point
/// between; after a point (until a barrier), also before a store that a load may precede. A forward data-flow
/// over the body's control flow (a store at a loop's end reaches the load at its head), to a fixed point:
/// points are only ever added, and with them fixed the transfer is monotone. The variables matter: a bitonic
/// step compares and swaps keys and then values in two shared arrays (cuda-samples' sortingNetworks), and a
/// point before every value load cut its unrolled sort past the region budget, onto fibers.
void findLockstepPoints(const ptx::Function &F, const Flow &W, ProgressPoints &P) {
  enum : uint8_t { Loaded = 1, InRun = 2 };
  struct State {
    AddressOrigins::Set Stored = 0; ///< where the stores since the last cut may have written
    uint8_t Flags = 0;
    bool operator==(const State &O) const { return Stored == O.Stored && Flags == O.Flags; }
  };
  AddressOrigins Origins(F);
  size_t N = W.Order.size();
  std::vector<llvm::SmallVector<uint32_t, 2>> Predecessors(N);
  for (uint32_t Pos = 0; Pos < N; ++Pos)
    for (uint32_t S : W.Successors[Pos])
      Predecessors[S].push_back(Pos);
  std::vector<State> Out(N);
  std::vector<bool> Point(N, false), Queued(N, true);
  std::deque<uint32_t> Work;
  for (uint32_t Pos = 0; Pos < N; ++Pos)
    Work.push_back(Pos);
  while (!Work.empty()) {
    uint32_t Pos = Work.front();
    Work.pop_front();
    Queued[Pos] = false;
    const ptx::Instruction &I = F.Instructions[W.Order[Pos]];
    State S;
    if (!synchronizesThreads(I)) {
      for (uint32_t Pred : Predecessors[Pos])
        S.Stored |= Out[Pred].Stored, S.Flags |= Out[Pred].Flags;
      bool Load = (I.Op == Opcode::Ld || I.Op == Opcode::Ldu) && warpVisible(I);
      bool Store = I.Op == Opcode::St && warpVisible(I);
      AddressOrigins::Set Where = Load || Store ? Origins.ofAccess(I) : 0;
      if ((Load && AddressOrigins::overlap(S.Stored, Where)) || (Store && (S.Flags & InRun) && (S.Flags & Loaded)))
        Point[Pos] = true;
      if (Point[Pos])
        S = State{0, InRun};
      S.Stored |= Store ? Where : 0;
      S.Flags |= Load ? Loaded : 0;
    }
    if (S == Out[Pos])
      continue;
    Out[Pos] = S;
    for (uint32_t Succ : W.Successors[Pos])
      if (!Queued[Succ]) {
        Queued[Succ] = true;
        Work.push_back(Succ);
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
