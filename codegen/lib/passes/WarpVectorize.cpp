// Warp vectorization of thread loops: W threads per iteration as W-lane vectors, whatever their control flow.
//
// Before (a block's thread loop, one thread per trip, the thread's code inlined with branches and loops of
// its own):
//   x:      %tx = phi i32 [ 0, %pre ], [ %tx.1, %latch ]
//           %i = add i32 %tx, %base
//           br i1 (icmp slt %i, %n), label %loop, label %latch          ; a grid-stride loop of the thread
//   loop:   ... load a[%i] ... %i.next = add %i, %stride; br (icmp slt %i.next, %n), %loop, %latch
//   latch:  %tx.1 = add nuw i32 %tx, 1
//           br i1 (icmp eq i32 %tx.1, %ntid.x), label %exit, label %x
// After:
//   warp.full:  %x0 = phi [ 0, %pre ], [ %x0.next, ... ]       ; W threads, every lane on
//               %i = <W x i32> (lane 0's %i in a scalar beside it); the thread's loop runs while any lane is
//               on, each lane under its mask; a[%i] is one vector load of W floats at a[lane 0's %i]
//               br (%ntid.x - %x0.next >= W), %warp.full, %warp.tail.check
//   warp.tail:  the body once more for the last threads, lanes past %ntid.x off
// A loop that only moves whole elements of up to 4 bytes runs lockstep warps first (warp.lockstep: 256 threads a
// trip, see warpWidths), so that each step of its threads' grid-stride loops covers a block's consecutive elements.
//
// LLVM's loop vectorizer takes only innermost loops whose bodies if-convert, so a thread with a loop of its own
// (the grid-stride loop, a row's dot product, an iteration to convergence) ran scalar, thread after thread,
// and each new shape wanted a pass of its own. This is the whole-function vectorization of
// ../shared/EXECUTION_MODEL.md applied to the thread loop's body: WarpShapes finds what is uniform, consecutive
// or varying across the lanes; WarpEmitter linearizes the body under masks and emits each instruction for W
// lanes. It takes the thread loops whose threads have loops of their own, which LLVM's loop vectorizer would run
// scalar; the others stay LLVM's for now. Loops it cannot take (a value carried between threads other than an
// induction or an idempotent reduction, private memory, irreducible control flow) stay scalar, with a missed-
// optimization remark (`-pass-remarks-missed=ptxforge-warp`).
#include "../Markers.h"
#include "../ThreadLoop.h"
#include "Passes.h"
#include "WarpEmitter.h"

#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/Transforms/Utils/LoopSimplify.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"

using namespace llvm;
using namespace ptxforge::codegen;
using namespace ptxforge::codegen::passes::warp;

namespace {

/// A thread loop whose threads loop themselves: LLVM's loop vectorizer takes only innermost loops, so it would
/// run them scalar. The others (straight-line and if-convertible bodies) stay LLVM's, with the per-shape passes
/// tuned for its output: warp-vectorized, sgemm's region loops ran 2.6x slower (their tile pointers come from
/// per-thread arrays, which ContiguousGathers and PrefetchSteppedPointers serve in LLVM's vector loops).
bool isThreadLoopWithLoops(const Loop &L) {
  MDNode *Id = L.getLoopID();
  if (!Id || L.getSubLoops().empty())
    return false;
  for (unsigned K = 1; K < Id->getNumOperands(); ++K) {
    auto *P = dyn_cast<MDNode>(Id->getOperand(K));
    auto *Name = P && P->getNumOperands() ? dyn_cast<MDString>(P->getOperand(0)) : nullptr;
    if (Name && Name->getString() == ptxforge::codegen::detail::ThreadLoopMarker)
      return true;
  }
  return false;
}

/// Scope's blocks in a topological order (back edges to Scope's header left out) in which each inner loop's
/// blocks are contiguous, in their own such order. False for irreducible control flow.
bool linearOrder(const Loop &Scope, const LoopInfo &LI, SmallVectorImpl<BasicBlock *> &Out) {
  auto nodeOf = [&](BasicBlock *BB) -> BasicBlock * {
    if (!Scope.contains(BB) || BB == Scope.getHeader())
      return nullptr;
    Loop *L = LI.getLoopFor(BB);
    while (L != &Scope && L->getParentLoop() != &Scope)
      L = L->getParentLoop();
    return L == &Scope ? BB : L->getHeader();
  };
  auto succsOf = [&](BasicBlock *N, SmallVectorImpl<BasicBlock *> &Succ) -> bool {
    Loop *L = LI.getLoopFor(N);
    SmallVector<BasicBlock *, 4> Raw;
    if (L != &Scope && L->getHeader() == N)
      L->getExitBlocks(Raw);
    else
      Raw.append(succ_begin(N), succ_end(N));
    for (BasicBlock *S : Raw) {
      BasicBlock *Node = nodeOf(S);
      if (!Node)
        continue;
      if (LI.getLoopFor(Node) != &Scope && Node != S)
        return false; // entering an inner loop other than at its header
      Succ.push_back(Node);
    }
    return true;
  };
  DenseMap<BasicBlock *, int> State; // 1: on the stack, 2: done
  SmallVector<BasicBlock *, 32> Post;
  std::function<bool(BasicBlock *)> visit = [&](BasicBlock *N) {
    State[N] = 1;
    SmallVector<BasicBlock *, 4> Succ;
    if (!succsOf(N, Succ))
      return false;
    for (BasicBlock *S : Succ) {
      int St = State.lookup(S);
      if (St == 1 || (St == 0 && !visit(S)))
        return false;
    }
    State[N] = 2;
    Post.push_back(N);
    return true;
  };
  if (!visit(Scope.getHeader()))
    return false;
  for (BasicBlock *N : llvm::reverse(Post)) {
    Loop *L = LI.getLoopFor(N);
    if (L != &Scope && L->getHeader() == N && L->getParentLoop() == &Scope) {
      if (!linearOrder(*L, LI, Out))
        return false;
    } else {
      Out.push_back(N);
    }
  }
  return true;
}

/// The most bytes one access of a memory-moving loop's trip may span (its lanes' share of a structure each):
/// 64 lanes of 32-byte structures made each access 32 AVX-512 registers wide, which the register allocator spent
/// seconds spilling (cuda-samples' alignedTypes, RGBA32_2: 2.3 s to compile a copy loop, 1.3 s with this cap).
constexpr uint64_t MaxTripBytes = 1024;

/// Threads of a lockstep trip (WarpWidths::Lockstep): a block of 256 threads, the most common size.
constexpr unsigned LockstepThreads = 256;

/// The loop's warp widths. Lanes 32-bit values fill a vector register, and a loop whose threads move narrower
/// elements (bytes, halves) takes as many more threads per trip as fit the same registers, up to 64, so that a
/// trip's bookkeeping (masks, loop control) is paid for a register's worth of data; a loop that mostly moves
/// memory takes 64 (below). Loops that run anything lane by lane (atomics, calls) keep Lanes: each such
/// operation is a branch per lane. Lockstep: see WarpWidths::Lockstep (0: none).
struct WarpWidths {
  unsigned Warp;
  /// Threads a trip of the lockstep loop runs before the loop of Warp-wide warps takes the rest: the warps of a
  /// block side by side, each step of the threads' inner loops covering all of their lanes (see warpWidths).
  unsigned Lockstep;
};

WarpWidths warpWidths(const ThreadLoop &TL, const Shapes &SA, const DataLayout &DL, unsigned Lanes) {
  uint64_t Narrowest = 4, Widest = 0, Broadest = 0;
  unsigned Accesses = 0, Work = 0;
  bool Whole = true; // every access of the threads' inner loops moves whole consecutive scalar elements
  // Whether a loop mostly moves memory is judged where its time goes: in its threads' innermost loops, whose
  // full copies run under shapes refined by their entry checks (WarpEmitter::fullCopyCondition: an index that
  // lanes' different trip counts of an earlier loop left varying is consecutive there).
  SmallPtrSet<const BasicBlock *, 32> Hot;
  DenseMap<const BasicBlock *, const Shapes *> HotShapes;
  SmallVector<std::unique_ptr<Shapes>, 2> Refined;
  for (const Loop *L : TL.L->getLoopsInPreorder()) {
    if (L == TL.L || !L->isInnermost())
      continue;
    Hot.insert(L->block_begin(), L->block_end());
    SmallVector<std::pair<const PHINode *, Shape>, 2> Assumed;
    if (BasicBlock *Pre = L->getLoopPreheader())
      for (PHINode &P : L->getHeader()->phis())
        if (SA.of(&P).isVarying() && P.getType()->isIntOrPtrTy())
          if (int64_t Stride = SA.strideBehind(P.getIncomingValueForBlock(Pre)))
            Assumed.push_back({&P, Shape::consecutive(Stride)});
    const Shapes *In = &SA;
    if (!Assumed.empty())
      if (std::unique_ptr<Shapes> R = SA.assuming(*L, Assumed)) {
        Refined.push_back(std::move(R));
        In = Refined.back().get();
      }
    for (const BasicBlock *BB : L->blocks())
      HotShapes[BB] = In;
  }
  for (BasicBlock *BB : TL.L->blocks())
    for (Instruction &I : *BB) {
      if (isa<AtomicRMWInst, AtomicCmpXchgInst>(I) || (isa<CallBase>(I) && !isa<IntrinsicInst>(I)))
        return {Lanes, 0};
      Value *Ptr = getLoadStorePointerOperand(&I);
      // The threads' own registers (the region frame's slots) are no memory the loop moves.
      if (passes::isInternalAccess(I))
        continue;
      bool InHot = Hot.contains(BB);
      if (InHot && Ptr && !SA.of(Ptr).isUniform()) {
        ++Accesses;
        Type *AT = getLoadStoreType(&I);
        Shape A = HotShapes.lookup(BB)->of(Ptr);
        Whole &= !AT->isVectorTy() && A.isConsecutive() && DL.getTypeSizeInBits(AT) % 8 == 0 &&
                 A.Stride == int64_t(DL.getTypeStoreSize(AT));
        Widest = std::max<uint64_t>(Widest, DL.getTypeStoreSize(AT));
      } else if (InHot && !Ptr && !I.getType()->isVoidTy() && !isa<PHINode>(I) && !SA.of(&I).isUniform())
        ++Work;
      Type *T = isa<LoadInst>(I) ? I.getType() : isa<StoreInst>(I) ? I.getOperand(0)->getType() : nullptr;
      if (!Ptr || !T || T->isVectorTy() || SA.of(Ptr).isUniform() || DL.getTypeSizeInBits(T) % 8)
        continue;
      // A lane's share of the bytes a trip moves: the distance between lanes' addresses where they are
      // consecutive (a structure's field moves the structure), else the element.
      Shape A = SA.of(Ptr);
      uint64_t PerLane = A.isConsecutive() ? uint64_t(A.Stride < 0 ? -A.Stride : A.Stride) : DL.getTypeStoreSize(T);
      Narrowest = std::min<uint64_t>(Narrowest, std::max<uint64_t>(PerLane, 1));
      Broadest = std::max<uint64_t>(Broadest, PerLane);
    }
  // A loop that does little besides moving memory (at most 8 lane-varying instructions per access: address
  // arithmetic, a conversion) and whose threads' loops step an index each (grid-stride loops: their lanes run
  // alike, where a loop over a per-thread range would pay for the longest of more lanes) takes four registers'
  // worth of threads per trip: more bytes per visit let the prefetchers follow. alignedTypes' shape
  // (bench_micro gridstride, 1 worker, CPU-time GB/s), 16 -> 64 lanes: u32 3.8 -> 4.9, 8-byte structures 2.4 ->
  // 6.3, 12-byte 4.1 -> 7.5.
  if (Accesses && Work <= 8 * Accesses && llvm::all_of(TL.L->getLoopsInPreorder(), [&](const Loop *L) {
        BasicBlock *Pre = L->getLoopPreheader();
        return L == TL.L || (Pre && llvm::any_of(L->getHeader()->phis(), [&](const PHINode &P) {
                               return SA.of(&P).isConsecutive() || SA.strideBehind(P.getIncomingValueForBlock(Pre));
                             }));
      })) {
    // Such a loop's warps would each walk the data a grid's width apart, one after another, so consecutive
    // elements are touched by different warps a whole walk apart: the warps of a block run side by side
    // instead (threads of a barrier-free loop may run in any order; each lockstep trip keeps every 32-lane
    // warp's lanes together), and each step of a thread's loop then covers LockstepThreads consecutive
    // threads' elements.
    unsigned Lockstep = std::min<unsigned>(LockstepThreads, Lanes * 16);
    unsigned Warp = std::min<unsigned>(64, Lanes * 4);
    while (Warp > Lanes && Warp * Broadest > MaxTripBytes)
      Warp /= 2;
    return {Warp, Lockstep > Warp && Whole && Widest <= 4 ? Lockstep : 0};
  }
  return {std::min<unsigned>(64, Lanes * unsigned(4 / Narrowest)), 0};
}

/// Warps of a stream batch (LoopRewriter::streamWarps): a bit each in the batch's parked set.
constexpr unsigned StreamPieces = 64;

/// The loop whose trips stream rounds interleave across warps: an innermost loop of the threads (a grid-stride
/// loop) whose header phis are uniform or consecutive in its full copy, that reads nothing the body computed
/// before it but through those phis, runs nothing lane by lane, updates no reduction, and after whose one exit
/// (no phis) the thread touches no memory: a parked warp then needs only lane 0's phis to take up its trips,
/// and its lanes may run what follows before the trips. Null where no loop qualifies.
Loop *streamLoop(const ThreadLoop &TL, const Shapes &SA, ArrayRef<BasicBlock *> Order) {
  Loop *Found = nullptr;
  for (Loop *L : TL.L->getSubLoops()) {
    BasicBlock *Pre = L->getLoopPreheader(), *Latch = L->getLoopLatch(), *Exit = L->getExitBlock();
    if (!L->isInnermost() || !Pre || !Latch || !Exit || L->getExitingBlock() != Latch || isa<PHINode>(Exit->front()))
      continue;
    SmallVector<std::pair<const PHINode *, Shape>, 2> Assumed;
    bool OK = true;
    for (PHINode &P : L->getHeader()->phis()) {
      Shape S = SA.of(&P);
      if (TL.ReductionChain.count(&P))
        OK = false;
      else if (S.isVarying() && P.getType()->isIntOrPtrTy())
        if (int64_t Stride = SA.strideBehind(P.getIncomingValueForBlock(Pre)))
          Assumed.push_back({&P, Shape::consecutive(Stride)});
        else
          OK = false;
      else if (S.isVarying())
        OK = false;
    }
    if (OK && !Assumed.empty()) {
      std::unique_ptr<Shapes> R = SA.assuming(*L, Assumed);
      OK = R && llvm::all_of(L->getHeader()->phis(), [&](PHINode &P) { return !R->of(&P).isVarying(); });
    }
    for (BasicBlock *BB : L->blocks())
      for (Instruction &I : *BB) {
        if (!OK)
          break;
        auto *CB = dyn_cast<CallBase>(&I);
        OK = !TL.ReductionChain.count(&I) && !I.isAtomic() && !I.isVolatile() &&
             !ptxforge::codegen::detail::serialReadModifyWriteOf(I) &&
             !(CB && (!isa<IntrinsicInst>(CB) || CB->mayWriteToMemory() || CB->mayThrow()));
        for (Value *Op : I.operands())
          if (auto *D = dyn_cast<Instruction>(Op);
              D && SA.inBody(D) && !L->contains(D) && !(isa<PHINode>(I) && BB == L->getHeader()))
            OK = false;
        for (BasicBlock *S : successors(BB))
          OK &= !TL.NoReturnExits.count(S);
      }
    if (OK)
      Found = L;
  }
  if (!Found)
    return nullptr;
  // What follows the loop moves no memory and cannot trap.
  auto After = llvm::find(Order, Found->getHeader()) + Found->getNumBlocks();
  for (auto It = After; It != Order.end(); ++It) {
    for (Instruction &I : **It)
      if (I.mayReadOrWriteMemory())
        return nullptr;
    for (BasicBlock *S : successors(*It))
      if (TL.NoReturnExits.count(S))
        return nullptr;
  }
  return Found;
}

Value *reduce(IRBuilder<> &B, ReductionOp Op, Value *V) {
  switch (Op) {
  case ReductionOp::Or:
    return B.CreateOrReduce(V);
  case ReductionOp::And:
    return B.CreateAndReduce(V);
  case ReductionOp::UMin:
    return B.CreateIntMinReduce(V, false);
  case ReductionOp::UMax:
    return B.CreateIntMaxReduce(V, false);
  case ReductionOp::SMin:
    return B.CreateIntMinReduce(V, true);
  case ReductionOp::SMax:
    return B.CreateIntMaxReduce(V, true);
  }
  return nullptr;
}

/// Rewrites one thread loop (see the top of the file).
class LoopRewriter {
public:
  LoopRewriter(ThreadLoop &TL, const Shapes &SA, LoopInfo &LI, DominatorTree &DT, PostDominatorTree &PDT,
               WarpWidths Widths, ArrayRef<BasicBlock *> Order)
      : TL(TL), SA(SA), F(*TL.Header->getParent()), Em(TL, SA, LI, DT, PDT, Widths.Warp, Order), B(F.getContext()) {
    if (Widths.Lockstep)
      Lockstep.emplace(TL, SA, LI, DT, PDT, Widths.Lockstep, Order);
    Stream = streamLoop(TL, SA, Order);
  }

  void run();
  SmallVector<AllocaInst *, 8> slots() const {
    SmallVector<AllocaInst *, 8> S(Em.slots().begin(), Em.slots().end());
    S.append(StreamSlots.begin(), StreamSlots.end());
    if (Lockstep)
      S.append(Lockstep->slots().begin(), Lockstep->slots().end());
    return S;
  }

private:
  /// The header phis' values for a copy of the body for E's lanes whose lane 0 is the thread with the
  /// inductions' Bases; each reduction starts from Reductions' value in every lane.
  BodyEntry entry(WarpEmitter &E, Value *Mask, ArrayRef<Value *> Bases, ArrayRef<Value *> Reductions);
  /// Whole warps of E's lanes in Loop, from the threads and reduction values in Bases and Reds (available at the
  /// end of From, which this terminates) while that many threads are left; then After (left unterminated), where
  /// Bases and Reds are updated to the values there.
  void wholeWarps(WarpEmitter &E, BasicBlock *Loop, BasicBlock *After, BasicBlock *From,
                  SmallVectorImpl<Value *> &Bases, SmallVectorImpl<Value *> &Reds);
  /// wholeWarps with stream rounds over Stream's trips (see streamWarps' comment).
  void streamWarps(WarpEmitter &E, BasicBlock *After, BasicBlock *From, SmallVectorImpl<Value *> &Bases,
                   SmallVectorImpl<Value *> &Reds);
  /// The rounds of one batch, from Rounds (unterminated) to Done (left unterminated).
  void streamRounds(WarpEmitter &E, const WarpEmitter::Park &P, BasicBlock *Rounds, BasicBlock *Done);
  /// The reductions' scalar values after a copy of the body emitted by E (at the insertion point).
  SmallVector<Value *, 4> reduced(WarpEmitter &E);
  /// At End, after one warp's body: the loop's bases step by the warp's lanes and its reductions take the body's
  /// values on the back edge. Returns the stepped bases.
  SmallVector<Value *, 4> stepWarp(WarpEmitter &E, ArrayRef<PHINode *> LBases, ArrayRef<PHINode *> LReds,
                                   BasicBlock *End) {
    SmallVector<Value *, 4> NextBases;
    for (auto [K, Ind] : llvm::enumerate(TL.Inductions)) {
      NextBases.push_back(
          B.CreateAdd(LBases[K], ConstantInt::get(Ind.first->getType(), int64_t(E.lanes()) * Ind.second)));
      LBases[K]->addIncoming(NextBases.back(), End);
    }
    for (auto [K, Red] : llvm::enumerate(TL.Reductions))
      LReds[K]->addIncoming(E.vec(Red.first->getIncomingValueForBlock(TL.Latch)), End);
    return NextBases;
  }
  /// The loop over warps is vectorized already: LLVM's loop vectorizer is told to leave its back edge alone.
  void noVectorize(BranchInst *Back) {
    LLVMContext &C = F.getContext();
    Back->setMetadata(LLVMContext::MD_loop,
                      ptxforge::codegen::detail::loopId(
                          C, {ptxforge::codegen::detail::loopProperty(C, "llvm.loop.vectorize.enable", 0)}));
  }
  /// At the insert point after a loop over warps entered from From and left from Exit: Bases and Reds become phis of
  /// their values before it and NextBases / Out (their values at Exit).
  void mergeAfter(BasicBlock *From, BasicBlock *Exit, SmallVectorImpl<Value *> &Bases, ArrayRef<Value *> NextBases,
                  SmallVectorImpl<Value *> &Reds, ArrayRef<Value *> Out) {
    auto merge = [&](Value *Before, Value *Loop) {
      PHINode *P = B.CreatePHI(Before->getType(), 2);
      P->addIncoming(Before, From);
      P->addIncoming(Loop, Exit);
      return P;
    };
    for (size_t K = 0; K < Bases.size(); ++K)
      Bases[K] = merge(Bases[K], NextBases[K]);
    for (size_t K = 0; K < Reds.size(); ++K)
      Reds[K] = merge(Reds[K], Out[K]);
  }
  /// A phi at the insert point for each of Vs, with Vs' values coming from From (the loop's other edge is added
  /// later).
  SmallVector<PHINode *, 4> phisFrom(ArrayRef<Value *> Vs, BasicBlock *From, const char *Name) {
    SmallVector<PHINode *, 4> Phis;
    for (Value *V : Vs) {
      Phis.push_back(B.CreatePHI(V->getType(), 2, Name));
      Phis.back()->addIncoming(V, From);
    }
    return Phis;
  }
  BasicBlock *block(const char *Name) { return BasicBlock::Create(F.getContext(), Name, &F); }
  unsigned ivIndex() const {
    unsigned K = 0;
    while (TL.Inductions[K].first != TL.IV)
      ++K;
    return K;
  }

  ThreadLoop &TL;
  const Shapes &SA;
  Function &F;
  WarpEmitter Em;
  std::optional<WarpEmitter> Lockstep;
  IRBuilder<> B;
  Loop *Stream = nullptr;
  SmallVector<AllocaInst *, 2> StreamSlots; ///< promotable ones (the parked set)
};

BodyEntry LoopRewriter::entry(WarpEmitter &E, Value *Mask, ArrayRef<Value *> Bases, ArrayRef<Value *> Reductions) {
  BodyEntry BE;
  BE.Mask = Mask;
  unsigned W = E.lanes();
  for (auto [K, Ind] : llvm::enumerate(TL.Inductions)) {
    Type *T = Ind.first->getType();
    SmallVector<Constant *, 16> Steps;
    for (unsigned L = 0; L < W; ++L)
      Steps.push_back(ConstantInt::get(T, int64_t(L) * Ind.second));
    WarpValue WV;
    WV.Scalar = Bases[K];
    WV.Vector = B.CreateAdd(B.CreateVectorSplat(W, Bases[K]), ConstantVector::get(Steps));
    BE.HeaderValues[Ind.first] = WV;
  }
  for (auto [K, Red] : llvm::enumerate(TL.Reductions))
    BE.HeaderValues[Red.first].Vector = Reductions[K];
  return BE;
}

SmallVector<Value *, 4> LoopRewriter::reduced(WarpEmitter &E) {
  SmallVector<Value *, 4> R;
  for (auto &[P, Op] : TL.Reductions)
    R.push_back(reduce(B, Op, E.vec(P->getIncomingValueForBlock(TL.Latch))));
  return R;
}

void LoopRewriter::wholeWarps(WarpEmitter &E, BasicBlock *Loop, BasicBlock *After, BasicBlock *From,
                              SmallVectorImpl<Value *> &Bases, SmallVectorImpl<Value *> &Reds) {
  unsigned W = E.lanes(), IVK = ivIndex();
  Type *T = TL.IV->getType();
  Value *Wc = ConstantInt::get(T, W);
  B.SetInsertPoint(From);
  SmallVector<Value *, 4> Splats;
  for (Value *R : Reds)
    Splats.push_back(B.CreateVectorSplat(W, R));
  B.CreateCondBr(B.CreateICmpUGE(B.CreateSub(TL.End, Bases[IVK]), Wc), Loop, After);

  B.SetInsertPoint(Loop);
  SmallVector<PHINode *, 4> LBases = phisFrom(Bases, From, "warp.base"), LReds = phisFrom(Splats, From, "warp.red");
  Constant *AllOn = Constant::getAllOnesValue(FixedVectorType::get(B.getInt1Ty(), W));
  BasicBlock *End = E.emit(Loop, entry(E, AllOn, SmallVector<Value *>(LBases.begin(), LBases.end()),
                                       SmallVector<Value *>(LReds.begin(), LReds.end())));
  B.SetInsertPoint(End);
  SmallVector<Value *, 4> NextBases = stepWarp(E, LBases, LReds, End);
  SmallVector<Value *, 4> Out = reduced(E);
  noVectorize(B.CreateCondBr(B.CreateICmpUGE(B.CreateSub(TL.End, NextBases[IVK]), Wc), Loop, After));

  B.SetInsertPoint(After);
  mergeAfter(From, End, Bases, NextBases, Reds, Out);
}

/// Stream rounds: a grid-stride loop's warps would each walk the array a grid's width apart, one warp after
/// another, every visit a page or less of consecutive elements (1 KiB for 256 threads of u32, 64 KiB apart:
/// the prefetchers restart at each). Instead the warps of a batch (up to StreamPieces of them: a flat block
/// group's consecutive blocks, Lowering.cpp) first run up to the loop, where each parks (WarpEmitter::Park),
/// then rounds run one trip of every parked warp after another, so that a round walks the batch's elements side
/// by side (16 KiB for 64 x 256 threads of u32, as a C loop over the array would), until each warp's lanes
/// leave: its last trips run in its general copy. Threads of a barrier-free loop may run in any order, and
/// each thread's own trips keep theirs; a warp that does not park (lanes off, or not consecutive) runs the
/// loop itself.
void LoopRewriter::streamWarps(WarpEmitter &E, BasicBlock *After, BasicBlock *From, SmallVectorImpl<Value *> &Bases,
                               SmallVectorImpl<Value *> &Reds) {
  unsigned W = E.lanes(), IVK = ivIndex();
  Type *T = TL.IV->getType();
  Value *Wc = ConstantInt::get(T, W);
  // The batch's parked set and state: lane 0's value of each header phi of the loop, and the header's stores of
  // uniform values into the context (argument 0: a fault in a trip names the warp's block). Stores to memory
  // the kernel can see run once, in the warp's own turn.
  IRBuilder<> EB(&*F.getEntryBlock().getFirstInsertionPt());
  AllocaInst *Parked = EB.CreateAlloca(EB.getInt64Ty(), nullptr, "stream.parked");
  StreamSlots.push_back(Parked);
  SmallVector<AllocaInst *, 4> State;
  for (PHINode &P : Stream->getHeader()->phis())
    State.push_back(EB.CreateAlloca(ArrayType::get(P.getType(), StreamPieces), nullptr, "stream.state"));
  SmallVector<std::pair<StoreInst *, AllocaInst *>, 2> Stores;
  for (Instruction &I : *TL.Header)
    if (auto *St = dyn_cast<StoreInst>(&I); St && SA.of(St->getValueOperand()).isUniform() &&
                                            SA.inBody(St->getValueOperand()) && !SA.inBody(St->getPointerOperand()) &&
                                            !F.arg_empty() &&
                                            getUnderlyingObject(St->getPointerOperand()) == F.getArg(0))
      Stores.push_back(
          {St, EB.CreateAlloca(ArrayType::get(St->getValueOperand()->getType(), StreamPieces), nullptr, "stream.id")});

  BasicBlock *Batch = block("stream.batch"), *Loop = block("stream.warp"), *Rounds = block("stream.rounds"),
             *Next = block("stream.next");
  B.SetInsertPoint(From);
  B.CreateCondBr(B.CreateICmpUGE(B.CreateSub(TL.End, Bases[IVK]), Wc), Batch, After);
  B.SetInsertPoint(Batch);
  SmallVector<PHINode *, 4> BBases = phisFrom(Bases, From, "stream.base"), BReds = phisFrom(Reds, From, "stream.red");
  B.CreateStore(B.getInt64(0), Parked);
  SmallVector<Value *, 4> Splats;
  for (PHINode *R : BReds)
    Splats.push_back(B.CreateVectorSplat(W, R));
  B.CreateBr(Loop);

  // Phase 1: the batch's warps, each up to the loop.
  B.SetInsertPoint(Loop);
  PHINode *Piece = B.CreatePHI(B.getInt32Ty(), 2, "stream.piece");
  Piece->addIncoming(B.getInt32(0), Batch);
  SmallVector<PHINode *, 4> LBases =
                                phisFrom(SmallVector<Value *, 4>(BBases.begin(), BBases.end()), Batch, "warp.base"),
                            LReds = phisFrom(Splats, Batch, "warp.red");
  WarpEmitter::Park P{Stream, Piece, State, Stores, Parked};
  E.setPark(&P);
  Constant *AllOn = Constant::getAllOnesValue(FixedVectorType::get(B.getInt1Ty(), W));
  BasicBlock *End = E.emit(Loop, entry(E, AllOn, SmallVector<Value *>(LBases.begin(), LBases.end()),
                                       SmallVector<Value *>(LReds.begin(), LReds.end())));
  E.setPark(nullptr);
  B.SetInsertPoint(End);
  SmallVector<Value *, 4> NextBases = stepWarp(E, LBases, LReds, End);
  SmallVector<Value *, 4> Out = reduced(E);
  Value *NextPiece = B.CreateAdd(Piece, B.getInt32(1));
  Piece->addIncoming(NextPiece, End);
  Value *More = B.CreateICmpUGE(B.CreateSub(TL.End, NextBases[IVK]), Wc);
  noVectorize(B.CreateCondBr(B.CreateAnd(More, B.CreateICmpULT(NextPiece, B.getInt32(StreamPieces))), Loop, Rounds));

  // Phase 2: the rounds; then the next batch, or the warps after.
  streamRounds(E, P, Rounds, Next);
  B.SetInsertPoint(Next);
  for (auto [K, V] : llvm::enumerate(NextBases))
    BBases[K]->addIncoming(V, Next);
  for (auto [K, V] : llvm::enumerate(Out))
    BReds[K]->addIncoming(V, Next);
  B.CreateCondBr(More, Batch, After);
  B.SetInsertPoint(After);
  mergeAfter(From, Next, Bases, NextBases, Reds, Out);
}

void LoopRewriter::streamRounds(WarpEmitter &E, const WarpEmitter::Park &P, BasicBlock *Rounds, BasicBlock *Done) {
  BasicBlock *Round = block("stream.round"), *Warp = block("stream.trip"), *WarpNext = block("stream.trip.next");
  B.SetInsertPoint(Rounds);
  B.CreateBr(Round);
  B.SetInsertPoint(Round);
  Value *Live = B.CreateLoad(B.getInt64Ty(), P.Parked);
  B.CreateCondBr(B.CreateICmpNE(Live, B.getInt64(0)), Warp, Done);
  // One trip of each parked warp, in order.
  B.SetInsertPoint(Warp);
  PHINode *Left = B.CreatePHI(B.getInt64Ty(), 2, "stream.left");
  Left->addIncoming(Live, Round);
  Value *K = B.CreateTrunc(B.CreateBinaryIntrinsic(Intrinsic::cttz, Left, B.getTrue()), B.getInt32Ty());
  auto at = [&](AllocaInst *A) { return B.CreateInBoundsGEP(A->getAllocatedType(), A, {B.getInt32(0), K}); };
  SmallVector<Value *, 4> State;
  for (AllocaInst *A : P.State)
    State.push_back(B.CreateLoad(A->getAllocatedType()->getArrayElementType(), at(A)));
  for (auto &[St, Slot] : P.Stores)
    B.CreateStore(B.CreateLoad(St->getValueOperand()->getType(), at(Slot)), St->getPointerOperand());
  WarpEmitter::StreamTrip Trip = E.emitStreamTrip(B.GetInsertBlock(), const_cast<Loop *>(P.L), State);
  B.SetInsertPoint(Trip.Yield);
  for (auto [I, A] : llvm::enumerate(P.State))
    B.CreateStore(Trip.Next[I], at(A));
  B.CreateBr(WarpNext);
  // A warp done with the loop leaves the parked set.
  B.SetInsertPoint(Trip.Done);
  Value *Bits = B.CreateLoad(B.getInt64Ty(), P.Parked);
  B.CreateStore(B.CreateAnd(Bits, B.CreateNot(B.CreateShl(B.getInt64(1), B.CreateZExt(K, B.getInt64Ty())))), P.Parked);
  B.CreateBr(WarpNext);
  B.SetInsertPoint(WarpNext);
  Value *Rest = B.CreateAnd(Left, B.CreateSub(Left, B.getInt64(1)));
  Left->addIncoming(Rest, WarpNext);
  B.CreateCondBr(B.CreateICmpNE(Rest, B.getInt64(0)), Warp, Round);
}

void LoopRewriter::run() {
  unsigned W = Em.lanes(), IVK = ivIndex();
  Type *T = TL.IV->getType();
  SmallVector<Value *, 4> Bases, Reds;
  for (auto &[P, Step] : TL.Inductions)
    Bases.push_back(P->getIncomingValueForBlock(TL.Preheader));
  for (auto &[P, Op] : TL.Reductions)
    Reds.push_back(P->getIncomingValueForBlock(TL.Preheader));
  TL.Preheader->getTerminator()->eraseFromParent();
  // Lockstep warps first (a block's warps side by side), then whole warps, then the last threads.
  // With stream rounds, the first warp loop streams.
  BasicBlock *LockLoop = Lockstep && !Stream ? block("warp.lockstep") : nullptr;
  BasicBlock *LockDone = Lockstep ? block("warp.lockstep.done") : nullptr;
  BasicBlock *Full = Lockstep || !Stream ? block("warp.full") : nullptr, *Cur = block("warp.tail.check"),
             *Tail = block("warp.tail"), *Done = block("warp.done");
  if (Lockstep && Stream)
    streamWarps(*Lockstep, LockDone, TL.Preheader, Bases, Reds);
  else if (Lockstep)
    wholeWarps(*Lockstep, LockLoop, LockDone, TL.Preheader, Bases, Reds);
  if (!Lockstep && Stream)
    streamWarps(Em, Cur, TL.Preheader, Bases, Reds);
  else
    wholeWarps(Em, Full, Cur, Lockstep ? LockDone : TL.Preheader, Bases, Reds);

  // The last threads, fewer than W.
  B.SetInsertPoint(Cur);
  Value *Left = B.CreateSub(TL.End, Bases[IVK]);
  SmallVector<Value *, 4> Splats;
  for (Value *R : Reds)
    Splats.push_back(B.CreateVectorSplat(W, R));
  B.CreateCondBr(B.CreateICmpNE(Left, ConstantInt::get(T, 0)), Tail, Done);
  B.SetInsertPoint(Tail);
  Value *Mask = B.CreateICmpULT(B.CreateStepVector(FixedVectorType::get(T, W)), B.CreateVectorSplat(W, Left));
  BasicBlock *TailEnd = Em.emit(Tail, entry(Em, Mask, Bases, Splats));
  B.SetInsertPoint(TailEnd);
  SmallVector<Value *, 4> TailOut = reduced(Em);
  B.CreateBr(Done);

  // The reductions' results, where the loop's exit used the last thread's.
  B.SetInsertPoint(Done);
  DenseMap<Value *, Value *> Results;
  for (auto [K, Red] : llvm::enumerate(TL.Reductions)) {
    PHINode *P = B.CreatePHI(Reds[K]->getType(), 2);
    P->addIncoming(Reds[K], Cur);
    P->addIncoming(TailOut[K], TailEnd);
    Results[Red.first->getIncomingValueForBlock(TL.Latch)] = P;
  }
  B.CreateBr(TL.Exit);
  for (PHINode &P : TL.Exit->phis()) {
    int K = P.getBasicBlockIndex(TL.Latch);
    Value *V = P.getIncomingValue(K);
    if (Value *R = Results.lookup(V))
      P.setIncomingValue(K, R);
    P.setIncomingBlock(K, Done);
  }
}

/// Where a remark about thread loop L points: the first PTX instruction of the thread's code in it (the loop
/// over threads itself is ptxforge's and has no line).
DebugLoc remarkLocation(const Loop &L) {
  for (const BasicBlock *BB : L.blocks())
    for (const Instruction &I : *BB)
      if (const DebugLoc &DL = I.getDebugLoc(); DL && DL.getLine())
        return DL;
  return L.getStartLoc();
}

} // namespace

PreservedAnalyses passes::WarpVectorizePass::run(Function &F, FunctionAnalysisManager &AM) {
  if (!Lanes)
    return PreservedAnalyses::all();
  bool Changed = false;
  SmallVector<AllocaInst *, 8> Slots;
  SmallPtrSet<BasicBlock *, 4> Done; // thread loops tried and left alone
  for (bool Again = true; Again;) {
    Again = false;
    auto &LI = AM.getResult<LoopAnalysis>(F);
    auto &DT = AM.getResult<DominatorTreeAnalysis>(F);
    auto &ORE = AM.getResult<OptimizationRemarkEmitterAnalysis>(F);
    for (Loop *L : LI.getLoopsInPreorder()) {
      if (!isThreadLoopWithLoops(*L) || Done.count(L->getHeader()))
        continue;
      Done.insert(L->getHeader());
      simplifyLoop(L, &DT, &LI, nullptr, nullptr, nullptr, false);
      formLCSSARecursively(*L, DT, &LI, nullptr);
      ThreadLoop TL;
      std::string Why = matchThreadLoop(*L, TL);
      Shapes SA(TL, LI, F.getDataLayout());
      SmallVector<BasicBlock *, 32> Order;
      if (Why.empty())
        Why = SA.run();
      if (Why.empty() && !linearOrder(*L, LI, Order))
        Why = "irreducible control flow";
      if (!Why.empty()) {
        ORE.emit([&] {
          return OptimizationRemarkMissed("ptxforge-warp", "NotWarpVectorized", remarkLocation(*L), L->getHeader())
                 << "thread loop not warp-vectorized: " << Why;
        });
        continue;
      }
      WarpWidths Widths = warpWidths(TL, SA, F.getDataLayout(), Lanes);
      ORE.emit([&] {
        OptimizationRemark R("ptxforge-warp", "WarpVectorized", remarkLocation(*L), L->getHeader());
        R << "thread loop warp-vectorized: " << ore::NV("Lanes", Widths.Warp) << " threads a warp";
        if (Widths.Lockstep)
          R << ", " << ore::NV("Lockstep", Widths.Lockstep) << " a lockstep trip";
        return R;
      });
      PostDominatorTree PDT(F);
      LoopRewriter R(TL, SA, LI, DT, PDT, Widths, Order);
      R.run();
      for (AllocaInst *A : R.slots())
        Slots.push_back(A);
      // The old loop is unreachable now; its edges go first (the exit's phis already name the new loop).
      for (BasicBlock *BB : L->blocks()) {
        BB->getTerminator()->eraseFromParent();
        new UnreachableInst(F.getContext(), BB);
      }
      removeUnreachableBlocks(F);
      AM.invalidate(F, PreservedAnalyses::none());
      Changed = Again = true;
      break;
    }
  }
  if (!Changed)
    return PreservedAnalyses::all();
  if (!Slots.empty()) {
    DominatorTree DT(F);
    SmallVector<AllocaInst *, 8> Live;
    for (AllocaInst *A : Slots)
      if (A->getParent() && isAllocaPromotable(A))
        Live.push_back(A);
    PromoteMemToReg(Live, DT);
  }
  return PreservedAnalyses::none();
}
