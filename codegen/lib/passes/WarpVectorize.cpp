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
#include "../ThreadLoop.h"
#include "Passes.h"
#include "WarpEmitter.h"

#include "llvm/Analysis/OptimizationRemarkEmitter.h"
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

/// Lanes per warp for this loop: Lanes 32-bit values fill a vector register, and a loop whose threads move
/// narrower elements (bytes, halves) takes as many more threads per trip as fit the same registers, up to 64, so
/// that a trip's bookkeeping (masks, loop control) is paid for a register's worth of data; a loop that mostly
/// moves memory takes 64 (below). Loops that run anything lane by lane (atomics, calls) keep Lanes: each such
/// operation is a branch per lane.
unsigned warpWidth(const ThreadLoop &TL, const Shapes &SA, const DataLayout &DL, unsigned Lanes) {
  uint64_t Narrowest = 4;
  unsigned Accesses = 0, Work = 0;
  // Whether a loop mostly moves memory is judged where its time goes: in its threads' innermost loops.
  SmallPtrSet<const BasicBlock *, 32> Hot;
  for (const Loop *L : TL.L->getLoopsInPreorder())
    if (L != TL.L && L->isInnermost())
      Hot.insert(L->block_begin(), L->block_end());
  for (BasicBlock *BB : TL.L->blocks())
    for (Instruction &I : *BB) {
      if (isa<AtomicRMWInst, AtomicCmpXchgInst>(I) || (isa<CallBase>(I) && !isa<IntrinsicInst>(I)))
        return Lanes;
      Value *Ptr = getLoadStorePointerOperand(&I);
      bool InHot = Hot.contains(BB);
      if (InHot && Ptr && !SA.of(Ptr).isUniform())
        ++Accesses;
      else if (InHot && !Ptr && !I.getType()->isVoidTy() && !isa<PHINode>(I) && !SA.of(&I).isUniform())
        ++Work;
      Type *T = isa<LoadInst>(I) ? I.getType() : isa<StoreInst>(I) ? I.getOperand(0)->getType() : nullptr;
      if (!Ptr || !T || T->isVectorTy() || SA.of(Ptr).isUniform() || DL.getTypeSizeInBits(T) % 8)
        continue;
      // A lane's share of the bytes a trip moves: the distance between lanes' addresses where they are
      // consecutive (a structure's field moves the structure), else the element.
      Shape A = SA.of(Ptr);
      uint64_t PerLane = A.isConsecutive() ? uint64_t(A.Stride < 0 ? -A.Stride : A.Stride) : DL.getTypeStoreSize(T);
      Narrowest = std::min<uint64_t>(Narrowest, std::max<uint64_t>(PerLane, 1));
    }
  // A loop that does little besides moving memory (at most 8 lane-varying instructions per access: address
  // arithmetic, a conversion) and whose threads' loops step an index each (grid-stride loops: their lanes run
  // alike, where a loop over a per-thread range would pay for the longest of more lanes) takes four registers'
  // worth of threads per trip: its warps each walk the data a grid's width apart, and more bytes per visit let
  // the prefetchers follow. alignedTypes' shape (bench_micro gridstride, 1 worker, CPU-time GB/s), 16 -> 64
  // lanes: u32 3.8 -> 4.9, 8-byte structures 2.4 -> 6.3, 12-byte 4.1 -> 7.5.
  if (Accesses && Work <= 8 * Accesses && llvm::all_of(TL.L->getLoopsInPreorder(), [&](const Loop *L) {
        BasicBlock *Pre = L->getLoopPreheader();
        return L == TL.L || (Pre && llvm::any_of(L->getHeader()->phis(), [&](const PHINode &P) {
                               return SA.of(&P).isConsecutive() || SA.strideBehind(P.getIncomingValueForBlock(Pre));
                             }));
      }))
    return std::min<unsigned>(64, Lanes * 4);
  return std::min<unsigned>(64, Lanes * unsigned(4 / Narrowest));
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
  LoopRewriter(ThreadLoop &TL, const Shapes &SA, LoopInfo &LI, DominatorTree &DT, PostDominatorTree &PDT, unsigned W,
               ArrayRef<BasicBlock *> Order)
      : TL(TL), F(*TL.Header->getParent()), W(W), Em(TL, SA, LI, DT, PDT, W, Order), B(F.getContext()) {}

  void run();
  ArrayRef<AllocaInst *> slots() const { return Em.slots(); }

private:
  /// The header phis' values for a copy of the body whose lane 0 is the thread with the inductions' Bases.
  BodyEntry entry(Value *Mask, ArrayRef<Value *> Bases, ArrayRef<Value *> Reductions);
  /// Phis in BB for the inductions and reductions, with their values on entering the loop from Pre.
  void startPhis(BasicBlock *BB, SmallVectorImpl<PHINode *> &Bases, SmallVectorImpl<PHINode *> &Reds);
  void addNext(BasicBlock *From, ArrayRef<PHINode *> Bases, ArrayRef<PHINode *> Reds);
  BasicBlock *block(const char *Name) { return BasicBlock::Create(F.getContext(), Name, &F); }

  ThreadLoop &TL;
  Function &F;
  unsigned W;
  WarpEmitter Em;
  IRBuilder<> B;
};

BodyEntry LoopRewriter::entry(Value *Mask, ArrayRef<Value *> Bases, ArrayRef<Value *> Reductions) {
  BodyEntry E;
  E.Mask = Mask;
  for (auto [K, Ind] : llvm::enumerate(TL.Inductions)) {
    Type *T = Ind.first->getType();
    SmallVector<Constant *, 16> Steps;
    for (unsigned L = 0; L < W; ++L)
      Steps.push_back(ConstantInt::get(T, int64_t(L) * Ind.second));
    WarpValue WV;
    WV.Scalar = Bases[K];
    WV.Vector = B.CreateAdd(B.CreateVectorSplat(W, Bases[K]), ConstantVector::get(Steps));
    E.HeaderValues[Ind.first] = WV;
  }
  for (auto [K, Red] : llvm::enumerate(TL.Reductions))
    E.HeaderValues[Red.first].Vector = Reductions[K];
  return E;
}

void LoopRewriter::startPhis(BasicBlock *BB, SmallVectorImpl<PHINode *> &Bases, SmallVectorImpl<PHINode *> &Reds) {
  B.SetInsertPoint(BB);
  for (auto &[P, Step] : TL.Inductions) {
    Bases.push_back(B.CreatePHI(P->getType(), 2, P->getName() + ".warp"));
    Bases.back()->addIncoming(P->getIncomingValueForBlock(TL.Preheader), TL.Preheader);
  }
  for (auto &[P, Op] : TL.Reductions) {
    Reds.push_back(B.CreatePHI(FixedVectorType::get(P->getType(), W), 2, P->getName() + ".warp"));
    Value *Init = P->getIncomingValueForBlock(TL.Preheader);
    IRBuilder<> PB(TL.Preheader->getTerminator());
    Reds.back()->addIncoming(PB.CreateVectorSplat(W, Init), TL.Preheader);
  }
}

void LoopRewriter::addNext(BasicBlock *From, ArrayRef<PHINode *> Bases, ArrayRef<PHINode *> Reds) {
  for (auto [K, Ind] : llvm::enumerate(TL.Inductions))
    Bases[K]->addIncoming(B.CreateAdd(Bases[K], ConstantInt::get(Ind.first->getType(), int64_t(W) * Ind.second)), From);
  for (auto [K, Red] : llvm::enumerate(TL.Reductions))
    Reds[K]->addIncoming(Em.vec(Red.first->getIncomingValueForBlock(TL.Latch)), From);
}

void LoopRewriter::run() {
  Type *T = TL.IV->getType();
  unsigned IVK = 0;
  while (TL.Inductions[IVK].first != TL.IV)
    ++IVK;
  Value *Wc = ConstantInt::get(T, W);
  BasicBlock *Full = block("warp.full"), *TailCheck = block("warp.tail.check"), *Tail = block("warp.tail"),
             *Done = block("warp.done");
  Instruction *PreTerm = TL.Preheader->getTerminator();
  B.SetInsertPoint(PreTerm);
  B.CreateCondBr(B.CreateICmpUGE(B.CreateSub(TL.End, TL.Start), Wc), Full, TailCheck);
  PreTerm->eraseFromParent();

  // Whole warps: every lane on.
  SmallVector<PHINode *, 4> FullBases, FullReds;
  startPhis(Full, FullBases, FullReds);
  Constant *AllOn = Constant::getAllOnesValue(FixedVectorType::get(B.getInt1Ty(), W));
  BodyEntry FE = entry(AllOn, SmallVector<Value *>(FullBases.begin(), FullBases.end()),
                       SmallVector<Value *>(FullReds.begin(), FullReds.end()));
  BasicBlock *FullEnd = Em.emit(Full, std::move(FE));
  B.SetInsertPoint(FullEnd);
  addNext(FullEnd, FullBases, FullReds);
  Value *Next = FullBases[IVK]->getIncomingValueForBlock(FullEnd);
  BranchInst *Back = B.CreateCondBr(B.CreateICmpUGE(B.CreateSub(TL.End, Next), Wc), Full, TailCheck);
  LLVMContext &C = F.getContext();
  Back->setMetadata(LLVMContext::MD_loop,
                    ptxforge::codegen::detail::loopId(
                        C, {ptxforge::codegen::detail::loopProperty(C, "llvm.loop.vectorize.enable", 0)}));

  // The last threads, fewer than W.
  SmallVector<PHINode *, 4> TailBases, TailReds;
  B.SetInsertPoint(TailCheck);
  for (auto [K, Ind] : llvm::enumerate(TL.Inductions)) {
    PHINode *P = B.CreatePHI(Ind.first->getType(), 2);
    P->addIncoming(Ind.first->getIncomingValueForBlock(TL.Preheader), TL.Preheader);
    P->addIncoming(FullBases[K]->getIncomingValueForBlock(FullEnd), FullEnd);
    TailBases.push_back(P);
  }
  for (auto [K, Red] : llvm::enumerate(TL.Reductions)) {
    PHINode *P = B.CreatePHI(FullReds[K]->getType(), 2);
    P->addIncoming(FullReds[K]->getIncomingValueForBlock(TL.Preheader), TL.Preheader);
    P->addIncoming(FullReds[K]->getIncomingValueForBlock(FullEnd), FullEnd);
    TailReds.push_back(P);
  }
  Value *Left = B.CreateSub(TL.End, TailBases[IVK]);
  B.CreateCondBr(B.CreateICmpNE(Left, ConstantInt::get(T, 0)), Tail, Done);
  B.SetInsertPoint(Tail);
  Value *Mask = B.CreateICmpULT(B.CreateStepVector(FixedVectorType::get(T, W)), B.CreateVectorSplat(W, Left));
  BodyEntry TE = entry(Mask, SmallVector<Value *>(TailBases.begin(), TailBases.end()),
                       SmallVector<Value *>(TailReds.begin(), TailReds.end()));
  BasicBlock *TailEnd = Em.emit(Tail, std::move(TE));
  B.SetInsertPoint(TailEnd);
  SmallVector<Value *, 4> TailOut;
  for (auto &[P, Op] : TL.Reductions)
    TailOut.push_back(Em.vec(P->getIncomingValueForBlock(TL.Latch)));
  B.CreateBr(Done);

  // The reductions' results, where the loop's exit used the last thread's.
  B.SetInsertPoint(Done);
  SmallVector<PHINode *, 4> Lanes;
  for (auto [K, Red] : llvm::enumerate(TL.Reductions)) {
    Lanes.push_back(B.CreatePHI(TailReds[K]->getType(), 2));
    Lanes.back()->addIncoming(TailReds[K], TailCheck);
    Lanes.back()->addIncoming(TailOut[K], TailEnd);
  }
  DenseMap<Value *, Value *> Results;
  for (auto [K, Red] : llvm::enumerate(TL.Reductions))
    Results[Red.first->getIncomingValueForBlock(TL.Latch)] = reduce(B, Red.second, Lanes[K]);
  B.CreateBr(TL.Exit);
  for (PHINode &P : TL.Exit->phis()) {
    int K = P.getBasicBlockIndex(TL.Latch);
    Value *V = P.getIncomingValue(K);
    if (Value *R = Results.lookup(V))
      P.setIncomingValue(K, R);
    P.setIncomingBlock(K, Done);
  }
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
          return OptimizationRemarkMissed("ptxforge-warp", "NotWarpVectorized", L->getStartLoc(), L->getHeader())
                 << "thread loop not warp-vectorized: " << Why;
        });
        continue;
      }
      PostDominatorTree PDT(F);
      LoopRewriter R(TL, SA, LI, DT, PDT, warpWidth(TL, SA, F.getDataLayout(), Lanes), Order);
      R.run();
      Slots.append(R.slots().begin(), R.slots().end());
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
