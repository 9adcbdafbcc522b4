// See WarpEmitter.h: the body's control flow, linearized under masks.
//
// The body's blocks run in a topological order in which each inner loop's blocks are contiguous. A block's
// mask is the OR of its incoming edges' masks (or its dominator's, when every lane that reaches the dominator
// reaches it); a block whose mask may be empty is skipped when it is (its values are then poison, which no
// lane reads). A conditional branch splits the mask; a phi merges by the edges' masks. An inner loop runs while
// any lane goes round again; a lane that leaves takes its mask bit and the values it carries out along into
// per-exit slots (allocas the caller promotes), which the exit block reads once the loop is done.
#include "WarpEmitter.h"
#include "../Markers.h"

#include "llvm/IR/Intrinsics.h"

using namespace llvm;
using namespace ptxforge::codegen::passes::warp;

WarpEmitter::WarpEmitter(const ThreadLoop &TL, const Shapes &SA, LoopInfo &LI, DominatorTree &DT,
                         PostDominatorTree &PDT, unsigned Lanes, ArrayRef<BasicBlock *> Order)
    : TL(TL), SA(SA), LI(LI), DT(DT), PDT(PDT), W(Lanes), Order(Order), F(*TL.Header->getParent()),
      B(TL.Header->getContext()) {}

BasicBlock *WarpEmitter::emit(BasicBlock *Into, BodyEntry Entry) {
  B.SetInsertPoint(Into);
  EntryMask = Entry.Mask;
  Map = std::move(Entry.HeaderValues);
  Masks.clear();
  EdgeMasks.clear();
  ExitMaskSlots.clear();
  ExitValueSlots.clear();
  Loops.clear();
  for (BasicBlock *BB : Order)
    emitBlock(BB);
  return B.GetInsertBlock();
}

/// W lanes of T; a value that is itself a short vector (PTX's .v2/.v4 accesses) keeps its lanes' elements side
/// by side: <N x E> becomes <W * N x E>, lane L's elements at L * N ... L * N + N - 1.
Type *WarpEmitter::vecTy(Type *T) const {
  if (auto *VT = dyn_cast<FixedVectorType>(T))
    return FixedVectorType::get(VT->getElementType(), W * VT->getNumElements());
  return FixedVectorType::get(T, W);
}

unsigned WarpEmitter::elementsPerLane(Type *T) {
  auto *VT = dyn_cast<FixedVectorType>(T);
  return VT ? VT->getNumElements() : 1;
}

/// Mask, one bit per lane, for a value of T: each bit repeated for the lane's elements.
Value *WarpEmitter::maskFor(Value *Mask, Type *T) {
  unsigned N = elementsPerLane(T);
  if (N == 1)
    return Mask;
  SmallVector<int, 64> Idx;
  for (unsigned L = 0; L < W; ++L)
    Idx.append(N, int(L));
  return B.CreateShuffleVector(Mask, Idx);
}

/// bfloat stays scalar: without AVX-512 BF16 a vector conversion to it is a libcall per lane (__truncsfbf2),
/// which JIT'd code does not link; the scalar conversion is inline.
bool WarpEmitter::widenable(Type *T) const {
  if (auto *VT = dyn_cast<FixedVectorType>(T))
    return !VT->getElementType()->isIntegerTy(1) && widenable(VT->getElementType());
  return T->isIntegerTy() || (T->isFloatingPointTy() && !T->isBFloatTy()) || T->isPointerTy();
}

bool WarpEmitter::isAllOn(const Value *Mask) const {
  auto *C = dyn_cast<Constant>(Mask);
  return C && C->isAllOnesValue();
}

Value *WarpEmitter::any(Value *Mask) {
  if (isAllOn(Mask))
    return B.getTrue();
  return B.CreateICmpNE(B.CreateBitCast(Mask, B.getIntNTy(W)), B.getIntN(W, 0), "any");
}

Value *WarpEmitter::firstLane(Value *Mask) {
  if (isAllOn(Mask))
    return B.getInt32(0);
  Value *Bits = B.CreateBitCast(Mask, B.getIntNTy(W));
  return B.CreateZExtOrTrunc(B.CreateBinaryIntrinsic(Intrinsic::cttz, Bits, B.getTrue()), B.getInt32Ty());
}

Value *WarpEmitter::lastLane(Value *Mask) {
  if (isAllOn(Mask))
    return B.getInt32(W - 1);
  Value *Bits = B.CreateBitCast(Mask, B.getIntNTy(W));
  Value *Lz = B.CreateZExtOrTrunc(B.CreateBinaryIntrinsic(Intrinsic::ctlz, Bits, B.getTrue()), B.getInt32Ty());
  return B.CreateSub(B.getInt32(W - 1), Lz);
}

AllocaInst *WarpEmitter::slot(Type *T) {
  IRBuilder<> EB(&*F.getEntryBlock().getFirstInsertionPt());
  AllocaInst *A = EB.CreateAlloca(T, nullptr, "warp.slot");
  Slots.push_back(A);
  return A;
}

Loop *WarpEmitter::outermostExited(const BasicBlock *From, const BasicBlock *To) const {
  Loop *R = nullptr;
  for (Loop *L = LI.getLoopFor(From); L && L != TL.L && !L->contains(To); L = L->getParentLoop())
    R = L;
  return R;
}

Value *WarpEmitter::incomingMask(const BasicBlock *Pred, const BasicBlock *BB) {
  if (outermostExited(Pred, BB)) {
    AllocaInst *S = ExitMaskSlots.lookup({Pred, BB});
    return B.CreateLoad(S->getAllocatedType(), S);
  }
  return EdgeMasks.lookup({Pred, BB});
}

Value *WarpEmitter::blockMask(BasicBlock *BB) {
  if (BB == TL.Header)
    return EntryMask;
  Loop *L = LI.getLoopFor(BB);
  if (L != TL.L && L->getHeader() == BB)
    return Loops[L].Mask;
  // Every lane that reaches BB's dominator in this trip of the loop reaches BB: the same mask.
  BasicBlock *D = DT.getNode(BB)->getIDom()->getBlock();
  if (LI.getLoopFor(D) == L && PDT.dominates(BB, D) && Masks.count(D))
    return Masks[D];
  Value *M = nullptr;
  SmallPtrSet<BasicBlock *, 4> Seen;
  for (BasicBlock *Pred : predecessors(BB)) {
    if (!Seen.insert(Pred).second)
      continue;
    Value *E = incomingMask(Pred, BB);
    M = M ? B.CreateOr(M, E) : E;
  }
  return M;
}

void WarpEmitter::beginLoop(Loop *L) {
  // Slots of the exits that leave L as the outermost loop they leave start empty each time L is entered.
  SmallVector<std::pair<BasicBlock *, BasicBlock *>, 4> Exits;
  L->getExitEdges(Exits);
  for (auto [From, To] : Exits) {
    if (TL.NoReturnExits.count(To) || outermostExited(From, To) != L)
      continue;
    Type *MaskTy = vecTy(B.getInt1Ty());
    AllocaInst *MS = slot(MaskTy);
    ExitMaskSlots[{From, To}] = MS;
    B.CreateStore(Constant::getNullValue(MaskTy), MS);
    for (PHINode &P : To->phis()) {
      // Poison on entry too: nothing flows from one warp's loop to the next (no phis through outer loops).
      AllocaInst *VS = slot(vecTy(P.getType()));
      ExitValueSlots[{&P, From}] = VS;
      B.CreateStore(PoisonValue::get(VS->getAllocatedType()), VS);
    }
  }
  // Exits of L's inner loops that stay inside L reset when their own loop begins (below, in order).
  BasicBlock *H = L->getHeader(), *Pred = L->getLoopPreheader();
  LoopState &LS = Loops[L];
  Value *In = incomingMask(Pred, H);
  SmallVector<std::pair<PHINode *, WarpValue>, 4> Init;
  for (PHINode &P : H->phis()) {
    Value *V = P.getIncomingValueForBlock(Pred);
    Shape S = SA.of(&P);
    WarpValue WV;
    if (!S.isVarying())
      WV.Scalar = scalar(V);
    if (!S.isUniform())
      WV.Vector = vec(V);
    if (S.isConsecutive())
      WV.NoWrap = noWrapOf(V) ? noWrapOf(V) : B.getTrue();
    Init.push_back({&P, WV});
  }
  LS.Pre = B.GetInsertBlock();
  LS.Head = BasicBlock::Create(F.getContext(), H->getName() + ".warp", &F);
  B.CreateBr(LS.Head);
  B.SetInsertPoint(LS.Head);
  LS.Mask = B.CreatePHI(In->getType(), 2, "loop.mask");
  LS.Mask->addIncoming(In, LS.Pre);
  for (auto &[P, WV] : Init) {
    WarpValue Phis;
    auto phiOf = [&](Value *V) -> Value * {
      if (!V)
        return nullptr;
      PHINode *N = B.CreatePHI(V->getType(), 2, P->getName());
      N->addIncoming(V, LS.Pre);
      return N;
    };
    Phis.Scalar = phiOf(WV.Scalar);
    Phis.Vector = phiOf(WV.Vector);
    Phis.NoWrap = phiOf(WV.NoWrap);
    Map[P] = Phis;
    LS.Phis.push_back(P);
  }
}

void WarpEmitter::endLoop(Loop *L) {
  LoopState &LS = Loops[L];
  BasicBlock *Latch = L->getLoopLatch(), *H = L->getHeader();
  Value *Again = EdgeMasks.lookup({Latch, H});
  // The back edge's values, computed before the branch.
  SmallVector<std::pair<PHINode *, Value *>, 8> Incoming;
  for (PHINode *P : LS.Phis) {
    const WarpValue &Phis = Map[P];
    Value *V = P->getIncomingValueForBlock(Latch);
    if (Phis.Scalar)
      Incoming.push_back({cast<PHINode>(Phis.Scalar), scalar(V)});
    if (Phis.Vector)
      Incoming.push_back({cast<PHINode>(Phis.Vector), vec(V)});
    if (Phis.NoWrap)
      Incoming.push_back({cast<PHINode>(Phis.NoWrap), noWrapOf(V) ? noWrapOf(V) : B.getTrue()});
  }
  Value *Continue = any(Again);
  BasicBlock *End = B.GetInsertBlock();
  BasicBlock *After = BasicBlock::Create(F.getContext(), H->getName() + ".warp.done", &F);
  B.CreateCondBr(Continue, LS.Head, After);
  LS.Mask->addIncoming(Again, End);
  for (auto &[Phi, V] : Incoming)
    Phi->addIncoming(V, End);
  B.SetInsertPoint(After);
}

void WarpEmitter::emitEdgeMasks(BasicBlock *BB, Value *M) {
  Instruction *T = BB->getTerminator();
  Constant *None = Constant::getNullValue(M->getType());
  auto under = [&](Value *C) { return isAllOn(M) ? C : B.CreateSelect(M, C, None); };
  auto cond = [&](Value *C) -> Value * { return SA.of(C).isUniform() ? B.CreateVectorSplat(W, scalar(C)) : vec(C); };
  if (auto *Br = dyn_cast<BranchInst>(T)) {
    if (Br->isUnconditional() || Br->getSuccessor(0) == Br->getSuccessor(1)) {
      for (BasicBlock *S : successors(BB))
        EdgeMasks[{BB, S}] = M;
      return;
    }
    Value *C = cond(Br->getCondition());
    EdgeMasks[{BB, Br->getSuccessor(0)}] = under(C);
    EdgeMasks[{BB, Br->getSuccessor(1)}] = under(B.CreateNot(C));
    return;
  }
  auto *Sw = cast<SwitchInst>(T);
  Value *C = cond(Sw->getCondition());
  DenseMap<BasicBlock *, Value *> Taken;
  Value *Matched = None;
  for (auto Case : Sw->cases()) {
    Value *Eq = B.CreateICmpEQ(C, B.CreateVectorSplat(W, Case.getCaseValue()));
    Matched = B.CreateOr(Matched, Eq);
    Value *&To = Taken[Case.getCaseSuccessor()];
    To = To ? B.CreateOr(To, Eq) : Eq;
  }
  Value *&Default = Taken[Sw->getDefaultDest()];
  Default = Default ? B.CreateOr(Default, B.CreateNot(Matched)) : B.CreateNot(Matched);
  for (auto &[S, Mask] : Taken)
    EdgeMasks[{BB, S}] = under(Mask);
}

void WarpEmitter::captureLoopExits(BasicBlock *BB) {
  for (BasicBlock *To : successors(BB)) {
    AllocaInst *MS = ExitMaskSlots.lookup({BB, To});
    if (!MS)
      continue;
    Value *E = EdgeMasks.lookup({BB, To});
    B.CreateStore(B.CreateOr(B.CreateLoad(MS->getAllocatedType(), MS), E), MS);
    for (PHINode &P : To->phis()) {
      AllocaInst *VS = ExitValueSlots.lookup({&P, BB});
      Value *Old = B.CreateLoad(VS->getAllocatedType(), VS);
      B.CreateStore(B.CreateSelect(maskFor(E, P.getType()), vec(P.getIncomingValueForBlock(BB)), Old), VS);
    }
  }
}

void WarpEmitter::emitNoReturnExit(BasicBlock *From, BasicBlock *To, Value *EdgeMask) {
  BasicBlock *Taken = BasicBlock::Create(F.getContext(), To->getName() + ".warp", &F);
  BasicBlock *Cont = BasicBlock::Create(F.getContext(), From->getName() + ".cont", &F);
  B.CreateCondBr(any(EdgeMask), Taken, Cont);
  B.SetInsertPoint(Taken);
  // The first lane that took the edge runs the block (it does not return): its context holds its ids.
  Value *L = firstLane(EdgeMask);
  auto laneOf = [&](Value *V) -> Value * {
    if (!SA.inBody(V))
      return V;
    return SA.of(V).isUniform() ? scalar(V) : B.CreateExtractElement(vec(V), L);
  };
  for (StoreInst *St : TL.LaneStores)
    B.CreateStore(laneOf(St->getValueOperand()), scalar(St->getPointerOperand()));
  DenseMap<Value *, Value *> Local;
  for (Instruction &I : *To) {
    if (auto *P = dyn_cast<PHINode>(&I)) {
      Local[P] = laneOf(P->getIncomingValueForBlock(From));
      continue;
    }
    Instruction *C = I.clone();
    for (Use &U : C->operands())
      U.set(Local.count(U.get()) ? Local[U.get()] : laneOf(U.get()));
    B.Insert(C);
    Local[&I] = C;
  }
  B.SetInsertPoint(Cont);
}

void WarpEmitter::joinSkipped(BasicBlock *BB, BasicBlock *Test, BasicBlock *BodyEnd) {
  for (Instruction &I : *BB) {
    auto It = Map.find(&I);
    if (It == Map.end() || isa<PHINode>(I))
      continue;
    WarpValue &WV = It->second;
    auto merge = [&](Value *&V) {
      if (!V)
        return;
      PHINode *P = B.CreatePHI(V->getType(), 2);
      P->addIncoming(V, BodyEnd);
      P->addIncoming(PoisonValue::get(V->getType()), Test);
      V = P;
    };
    merge(WV.Scalar);
    merge(WV.Vector);
    merge(WV.NoWrap);
    for (Value *&V : WV.Lanes)
      merge(V);
  }
}

void WarpEmitter::emitBlock(BasicBlock *BB) {
  Loop *L = LI.getLoopFor(BB);
  bool InnerHeader = L != TL.L && L->getHeader() == BB;
  if (InnerHeader)
    beginLoop(L);
  Value *M = blockMask(BB);
  Masks[BB] = M;
  if (BB != TL.Header && !InnerHeader)
    for (PHINode &P : BB->phis())
      emitPhi(P);
  BasicBlock *Test = nullptr, *Join = nullptr;
  if (M != EntryMask && !isAllOn(M)) {
    Test = B.GetInsertBlock();
    BasicBlock *On = BasicBlock::Create(F.getContext(), BB->getName() + ".on", &F);
    Join = BasicBlock::Create(F.getContext(), BB->getName() + ".join", &F);
    B.CreateCondBr(any(M), On, Join);
    B.SetInsertPoint(On);
  }
  for (auto It = BB->begin(); !It->isTerminator(); ++It) {
    if (isa<PHINode>(*It))
      continue;
    // The lanes' code keeps the thread's PTX line: a fault in it names its instruction (CompiledModule::
    // sourceLocation); the mask code between instructions has none (line 0).
    B.SetCurrentDebugLocation(It->getDebugLoc());
    // A read-modify-write that threads ran one after another: lane by lane, from its load to its store.
    if (const MDNode *Serial = isa<LoadInst>(*It) ? ptxforge::codegen::detail::serialReadModifyWriteOf(*It) : nullptr) {
      SmallVector<Instruction *, 8> Span{&*It};
      while (!(isa<StoreInst>(*It) && ptxforge::codegen::detail::serialReadModifyWriteOf(*It) == Serial))
        Span.push_back(&*++It);
      emitPerLane(Span, M, false);
      continue;
    }
    emitInstruction(*It, M);
  }
  B.SetCurrentDebugLocation(DebugLoc());
  if (Test) {
    BasicBlock *BodyEnd = B.GetInsertBlock();
    B.CreateBr(Join);
    B.SetInsertPoint(Join);
    joinSkipped(BB, Test, BodyEnd);
  }
  if (BB == TL.Latch)
    return;
  emitEdgeMasks(BB, M);
  captureLoopExits(BB);
  for (BasicBlock *S : successors(BB))
    if (TL.NoReturnExits.count(S))
      emitNoReturnExit(BB, S, EdgeMasks.lookup({BB, S}));
  if (L != TL.L && L->getLoopLatch() == BB)
    endLoop(L);
}
