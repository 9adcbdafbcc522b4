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
    : TL(TL), SA(&SA), Base(&SA), LI(LI), DT(DT), PDT(PDT), W(Lanes), Order(Order), F(*TL.Header->getParent()),
      B(TL.Header->getContext()) {}

void WarpEmitter::begin(BasicBlock *Into, Value *Mask, DenseMap<const Value *, WarpValue> Header) {
  B.SetInsertPoint(Into);
  EntryMask = Mask;
  Map = std::move(Header);
  SA = Base;
  Masks.clear();
  EdgeMasks.clear();
  ExitMaskSlots.clear();
  ExitValueSlots.clear();
  Loops.clear();
}

BasicBlock *WarpEmitter::emit(BasicBlock *Into, BodyEntry Entry) {
  begin(Into, Entry.Mask, std::move(Entry.HeaderValues));
  for (size_t K = 0; K < Order.size(); ++K) {
    emitBlock(Order[K]);
    if (Rewind) {
      K = *Rewind - 1;
      Rewind.reset();
    }
  }
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

Value *WarpEmitter::all(Value *Mask) {
  if (isAllOn(Mask))
    return B.getTrue();
  return B.CreateICmpEQ(B.CreateBitCast(Mask, B.getIntNTy(W)), Constant::getAllOnesValue(B.getIntNTy(W)), "all");
}

/// A latch that compares a consecutive value with a uniform one (a grid-stride loop's `i < n`) decides for all
/// lanes from lane 0's and the last lane's values: where the lanes' values do not wrap between the two, they are
/// monotone, and a threshold holds for every lane when it holds for both ends. Two scalar compares instead of a
/// vector compare and its reduction per trip (16 of each for 256 lanes of i32); where the lanes might wrap, the
/// vector's test, with the vector rebuilt there, so the trip's own vector is computed only when a lane leaves.
Value *WarpEmitter::allAgain(Loop *L, Value *Again) {
  auto *Br = dyn_cast<BranchInst>(L->getLoopLatch()->getTerminator());
  auto *Cmp = Br && Br->isConditional() ? dyn_cast<ICmpInst>(Br->getCondition()) : nullptr;
  // Lanes that left by another exit in this trip are off at the latch: then the compare alone does not say.
  if (!Cmp || Cmp->isEquality() || !Cmp->getOperand(0)->getType()->isIntegerTy() || !SA->inBody(Cmp) ||
      !isAllOn(Masks.lookup(L->getLoopLatch())))
    return all(Again);
  Value *A = Cmp->getOperand(0), *U = Cmp->getOperand(1);
  CmpInst::Predicate P = Cmp->getPredicate();
  if (SA->of(A).isUniform()) {
    std::swap(A, U);
    P = CmpInst::getSwappedPredicate(P);
  }
  Shape SAs = SA->of(A);
  if (!SAs.isConsecutive() || !SA->of(U).isUniform())
    return all(Again);
  if (Br->getSuccessor(0) != L->getHeader())
    P = CmpInst::getInversePredicate(P); // going round: P(lane's value, U)
  unsigned Bits = A->getType()->getIntegerBitWidth();
  APInt Span = APInt(128, uint64_t(SAs.Stride < 0 ? -SAs.Stride : SAs.Stride)) * APInt(128, W - 1);
  if (Span.getActiveBits() >= Bits)
    return all(Again);
  Span = Span.trunc(Bits);
  bool Signed = ICmpInst::isSigned(P);
  Value *A0 = scalar(A), *Un = scalar(U);
  Value *Last = B.CreateAdd(
      A0, ConstantInt::get(A0->getType(), APInt(64, uint64_t(SAs.Stride * int64_t(W - 1)), true).sextOrTrunc(Bits)));
  APInt Bound = SAs.Stride > 0 ? (Signed ? APInt::getSignedMaxValue(Bits) : APInt::getMaxValue(Bits)) - Span
                               : (Signed ? APInt::getSignedMinValue(Bits) : APInt::getZero(Bits)) + Span;
  Value *NoWrap = SAs.Stride > 0 ? B.CreateICmp(Signed ? ICmpInst::ICMP_SLE : ICmpInst::ICMP_ULE, A0, B.getInt(Bound))
                                 : B.CreateICmp(Signed ? ICmpInst::ICMP_SGE : ICmpInst::ICMP_UGE, A0, B.getInt(Bound));
  if (Value *NW = noWrapOf(A); NW && !isa<Constant>(NW))
    NoWrap = B.CreateAnd(NoWrap, NW);
  Value *Ends = B.CreateAnd(B.CreateICmp(P, A0, Un), B.CreateICmp(P, Last, Un), "all.ends");
  BasicBlock *From = B.GetInsertBlock();
  BasicBlock *Lanes = BasicBlock::Create(F.getContext(), "all.lanes", &F);
  BasicBlock *Join = BasicBlock::Create(F.getContext(), "all.join", &F);
  B.CreateCondBr(NoWrap, Join, Lanes);
  B.SetInsertPoint(Lanes);
  Value *V = noWrapOf(A) && !isa<Constant>(noWrapOf(A)) ? vec(A) : consecutiveVector(A0, SAs.Stride);
  Value *ByLane = all(B.CreateICmp(P, V, B.CreateVectorSplat(W, Un)));
  B.CreateBr(Join);
  B.SetInsertPoint(Join);
  PHINode *R = B.CreatePHI(B.getInt1Ty(), 2, "all");
  R->addIncoming(Ends, From);
  R->addIncoming(ByLane, Lanes);
  return R;
}

WarpValue WarpEmitter::headerPhis(const PHINode &P, const WarpValue &Init, BasicBlock *From) {
  auto phiOf = [&](Value *V) -> Value * {
    if (!V)
      return nullptr;
    PHINode *N = B.CreatePHI(V->getType(), 2, P.getName());
    N->addIncoming(V, From);
    return N;
  };
  WarpValue Phis;
  Phis.Scalar = phiOf(Init.Scalar);
  Phis.Vector = phiOf(Init.Vector);
  Phis.NoWrap = phiOf(Init.NoWrap);
  return Phis;
}

void WarpEmitter::addIncoming(const WarpValue &Phis, const WarpValue &Vals, BasicBlock *From) {
  if (Phis.Scalar)
    cast<PHINode>(Phis.Scalar)->addIncoming(Vals.Scalar, From);
  if (Phis.Vector)
    cast<PHINode>(Phis.Vector)->addIncoming(Vals.Vector, From);
  if (Phis.NoWrap)
    cast<PHINode>(Phis.NoWrap)->addIncoming(Vals.NoWrap, From);
}

void WarpEmitter::beginLoop(Loop *L) {
  auto Known = Loops.find(L);
  if (Known != Loops.end() && Known->second.General) {
    // The general copy, after the full copy: its phis are in place.
    LoopState &LS = Known->second;
    B.SetInsertPoint(LS.General);
    LS.Head = LS.General;
    LS.Mask = LS.GeneralMask;
    LS.General = nullptr;
    for (auto [K, P] : llvm::enumerate(LS.Phis))
      Map[P] = LS.GeneralPhis[K];
    return;
  }
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
  bool Stream = L == StreamL; // a parked warp's trip: every lane on, the phis from its state
  Value *In = Stream ? Constant::getAllOnesValue(vecTy(B.getInt1Ty())) : incomingMask(Pred, H);
  SmallVector<std::pair<PHINode *, WarpValue>, 4> Init;
  for (PHINode &P : H->phis()) {
    WarpValue WV;
    if (Stream) {
      Value *S = StreamState[Init.size()];
      Shape Sh = streamShape(*L, P);
      WV.Scalar = S;
      if (Sh.isConsecutive()) {
        WV.Vector = consecutiveVector(S, Sh.Stride);
        WV.NoWrap = B.getTrue();
      }
      Init.push_back({&P, WV});
      LS.Phis.push_back(&P);
      continue;
    }
    Value *V = P.getIncomingValueForBlock(Pred);
    Shape S = SA->of(&P);
    if (!S.isVarying())
      WV.Scalar = scalar(V);
    if (!S.isUniform())
      WV.Vector = vec(V);
    if (S.isConsecutive())
      WV.NoWrap = noWrapOf(V) ? noWrapOf(V) : B.getTrue();
    Init.push_back({&P, WV});
    LS.Phis.push_back(&P);
  }
  // Innermost loops get the full copy first (grid-stride loops: every lane on until the last trips). Loops
  // with loops inside stay single: copies of copies would grow the code exponentially with the nesting depth.
  LS.InFullCopy = L->getSubLoops().empty();
  Value *Enter = LS.InFullCopy ? fullCopyCondition(L, In, Init) : nullptr;
  if (Stream)
    Enter = B.getTrue();
  else if (ParkAt && ParkAt->L == L && LS.InFullCopy)
    park(L, Init, Enter);
  LS.Pre = B.GetInsertBlock();
  LS.Head = BasicBlock::Create(F.getContext(), H->getName() + ".warp", &F);
  if (LS.InFullCopy) {
    LS.General = LS.Head;
    LS.Head = BasicBlock::Create(F.getContext(), H->getName() + ".warp.full", &F);
    B.CreateCondBr(Enter, LS.Head, LS.General);
    B.SetInsertPoint(LS.General);
    LS.GeneralMask = B.CreatePHI(In->getType(), 2, "loop.mask");
    LS.GeneralMask->addIncoming(In, LS.Pre);
    for (auto &[P, WV] : Init)
      LS.GeneralPhis.push_back(headerPhis(*P, WV, LS.Pre));
    B.SetInsertPoint(LS.Head);
    LS.Mask = Constant::getAllOnesValue(In->getType());
    if (LS.Refined)
      SA = LS.Refined.get();
  } else {
    B.CreateBr(LS.Head);
    B.SetInsertPoint(LS.Head);
    LS.GeneralMask = B.CreatePHI(In->getType(), 2, "loop.mask");
    LS.GeneralMask->addIncoming(In, LS.Pre);
    LS.Mask = LS.GeneralMask;
  }
  for (auto &[P, WV] : Init) {
    auto Assumed = llvm::find_if(LS.Assumed, [&, P = P](auto &A) { return A.first == P; });
    if (Assumed == LS.Assumed.end()) {
      Map[P] = headerPhis(*P, WV, LS.Pre);
      continue;
    }
    // Consecutive in the full copy (checked on entry): lane 0's value beside the vector.
    WarpValue Full = WV;
    IRBuilder<> PB(LS.Pre->getTerminator());
    Full.Scalar = PB.CreateExtractElement(WV.Vector, uint64_t(0));
    Full.NoWrap = PB.getTrue();
    Map[P] = headerPhis(*P, Full, LS.Pre);
  }
  rematerialize(LS);
}

/// W lanes of lane 0's Scalar plus the lane number times Stride (in Scalar's type: wrapping as the lanes' own
/// arithmetic does).
Value *WarpEmitter::consecutiveVector(Value *Scalar, int64_t Stride) {
  Type *T = Scalar->getType();
  unsigned Bits = T->isPointerTy() ? 64 : T->getIntegerBitWidth();
  SmallVector<Constant *, 64> Steps;
  for (unsigned L = 0; L < W; ++L)
    Steps.push_back(ConstantInt::get(B.getContext(), APInt(64, uint64_t(int64_t(L) * Stride), true).sextOrTrunc(Bits)));
  Value *Splat = B.CreateVectorSplat(W, Scalar);
  if (T->isPointerTy())
    return B.CreateGEP(B.getInt8Ty(), Splat, ConstantVector::get(Steps));
  return B.CreateAdd(Splat, ConstantVector::get(Steps));
}

/// A consecutive header phi's vector is its scalar plus the lane steps as long as no extension on the way round
/// wrapped: derived from the scalar in each trip rather than carried round the loop, so a trip whose accesses
/// all take the consecutive path computes no vectors (a <64 x i32> index and its <64 x i64> extension cost 12
/// instructions per trip in a byte copy). endLoop keeps the carried vector where the back edge's may wrap.
void WarpEmitter::rematerialize(LoopState &LS) {
  for (PHINode *P : LS.Phis) {
    WarpValue &WV = Map[P];
    auto *NW = dyn_cast_or_null<PHINode>(WV.NoWrap);
    auto *Init = NW ? dyn_cast<ConstantInt>(NW->getIncomingValue(0)) : nullptr;
    if (!SA->of(P).isConsecutive() || !WV.Scalar || !WV.Vector || !Init || !Init->isOne() ||
        !(P->getType()->isIntegerTy() || P->getType()->isPointerTy()))
      continue;
    Value *R = consecutiveVector(WV.Scalar, SA->of(P).Stride);
    LS.Remat.push_back({P, cast<PHINode>(WV.Vector), R});
    WV.Vector = R;
  }
}

/// Every lane on at L's entry and, where the loop's varying header phis would be consecutive, the phis'
/// values in fact consecutive: then the full copy runs, under those refined shapes (LS.Refined).
Value *WarpEmitter::fullCopyCondition(Loop *L, Value *In, ArrayRef<std::pair<PHINode *, WarpValue>> Init) {
  LoopState &LS = Loops[L];
  for (auto &[P, WV] : Init)
    if (Base->of(P).isVarying() && P->getType()->isIntOrPtrTy())
      if (int64_t Stride = Base->strideBehind(P->getIncomingValueForBlock(L->getLoopPreheader())))
        LS.Assumed.push_back({P, Shape::consecutive(Stride)});
  if (!LS.Assumed.empty())
    LS.Refined = Base->assuming(*L, LS.Assumed);
  if (!LS.Refined)
    LS.Assumed.clear();
  Value *Enter = all(In);
  for (auto &[P, Sh] : LS.Assumed) {
    const WarpValue &WV = llvm::find_if(Init, [&, P = P](auto &I) { return I.first == P; })->second;
    Value *V = B.CreateFreeze(WV.Vector);
    if (V->getType()->isPtrOrPtrVectorTy())
      V = B.CreatePtrToInt(V, FixedVectorType::get(B.getInt64Ty(), W));
    Type *T = V->getType()->getScalarType();
    SmallVector<Constant *, 64> Steps;
    for (unsigned Lane = 0; Lane < W; ++Lane)
      Steps.push_back(ConstantInt::get(T, int64_t(Lane) * Sh.Stride));
    Value *Expected =
        B.CreateAdd(B.CreateVectorSplat(W, B.CreateExtractElement(V, uint64_t(0))), ConstantVector::get(Steps));
    Enter = B.CreateLogicalAnd(Enter, all(B.CreateICmpEQ(V, Expected)), "consecutive");
  }
  return Enter;
}

void WarpEmitter::endLoop(Loop *L) {
  LoopState &LS = Loops[L];
  BasicBlock *Latch = L->getLoopLatch(), *H = L->getHeader();
  Value *Again = EdgeMasks.lookup({Latch, H});
  // The back edge's values, computed before the branch.
  auto valuesFor = [&](const WarpValue &Phis, PHINode *P) {
    Value *V = P->getIncomingValueForBlock(Latch);
    WarpValue WV;
    if (Phis.Scalar)
      WV.Scalar = scalar(V);
    if (Phis.Vector)
      WV.Vector = vec(V);
    if (Phis.NoWrap)
      WV.NoWrap = noWrapOf(V) ? noWrapOf(V) : B.getTrue();
    return WV;
  };
  SmallVector<WarpValue, 8> Next, NextGeneral;
  for (auto [K, P] : llvm::enumerate(LS.Phis)) {
    Next.push_back(valuesFor(Map[P], P));
    if (LS.InFullCopy)
      NextGeneral.push_back(valuesFor(LS.GeneralPhis[K], P));
  }
  // Back-edge values for the phis; a rematerialized vector's phi goes where the back edge's value cannot wrap
  // (its no-wrap condition is the phi's own, true on entry), else it takes the place of the derived vector.
  SmallVector<WarpValue, 8> Phis;
  for (PHINode *P : LS.Phis)
    Phis.push_back(Map[P]);
  auto backEdge = [&](BasicBlock *End) {
    for (auto &[P, VecPhi, Remat] : LS.Remat) {
      size_t K = size_t(llvm::find(LS.Phis, P) - LS.Phis.begin());
      Value *NW = Next[K].NoWrap;
      auto *C = dyn_cast<ConstantInt>(NW);
      if (NW == Phis[K].NoWrap || (C && C->isOne())) {
        VecPhi->eraseFromParent();
      } else {
        VecPhi->addIncoming(Next[K].Vector, End);
        Remat->replaceAllUsesWith(VecPhi);
      }
      Phis[K].Vector = nullptr;
    }
    LS.Remat.clear();
    for (auto [K, P] : llvm::enumerate(LS.Phis))
      addIncoming(Phis[K], Next[K], End);
  };
  if (!LS.After)
    LS.After = BasicBlock::Create(F.getContext(), H->getName() + ".warp.done", &F);
  if (LS.InFullCopy) {
    // Every lane goes round again: the full copy; some: the general copy; none: done.
    Value *Full = allAgain(L, Again);
    BasicBlock *End = B.GetInsertBlock();
    BasicBlock *Partial = BasicBlock::Create(F.getContext(), H->getName() + ".warp.partial", &F);
    if (L == StreamL) {
      yieldTrip(LS, Full, Next, Partial);
    } else {
      B.CreateCondBr(Full, LS.Head, Partial);
      backEdge(End);
    }
    B.SetInsertPoint(Partial);
    captureLoopExits(Latch);
    B.CreateCondBr(any(Again), LS.General, LS.After);
    LS.GeneralMask->addIncoming(Again, Partial);
    for (auto [K, P] : llvm::enumerate(LS.Phis))
      addIncoming(LS.GeneralPhis[K], NextGeneral[K], Partial);
    LS.InFullCopy = false;
    SA = Base;
    Rewind = size_t(llvm::find(Order, H) - Order.begin());
    return;
  }
  Value *Continue = any(Again);
  BasicBlock *End = B.GetInsertBlock();
  B.CreateCondBr(Continue, LS.Head, LS.After);
  LS.GeneralMask->addIncoming(Again, End);
  backEdge(End);
  B.SetInsertPoint(LS.After);
  StreamFinished |= L == StreamL;
}

Shape WarpEmitter::streamShape(const Loop &L, const PHINode &P) const {
  Shape S = Base->of(&P);
  if (!S.isVarying())
    return S;
  return Shape::consecutive(Base->strideBehind(P.getIncomingValueForBlock(L.getLoopPreheader())));
}

/// Enter is the full copy's condition; the warp parks where it holds and its consecutive phis' lanes do not wrap
/// (a parked warp's vectors are rebuilt from lane 0's values).
void WarpEmitter::park(Loop *L, ArrayRef<std::pair<PHINode *, WarpValue>> Init, Value *Enter) {
  Value *OK = Enter;
  for (auto &[P, WV] : Init)
    if (WV.NoWrap && !isa<Constant>(WV.NoWrap))
      OK = B.CreateAnd(OK, WV.NoWrap);
  BasicBlock *Parking = BasicBlock::Create(F.getContext(), "warp.park", &F);
  BasicBlock *Stay = BasicBlock::Create(F.getContext(), "warp.nopark", &F);
  B.CreateCondBr(OK, Parking, Stay);
  B.SetInsertPoint(Parking);
  Value *Piece = ParkAt->Piece;
  auto at = [&](AllocaInst *A) { return B.CreateInBoundsGEP(A->getAllocatedType(), A, {B.getInt32(0), Piece}); };
  for (auto [K, PW] : llvm::enumerate(Init)) {
    const WarpValue &WV = PW.second;
    B.CreateStore(WV.Scalar ? WV.Scalar : B.CreateExtractElement(WV.Vector, uint64_t(0)), at(ParkAt->State[K]));
  }
  for (auto &[St, Slot] : ParkAt->Stores)
    B.CreateStore(scalar(St->getValueOperand()), at(Slot));
  Value *Bits = B.CreateLoad(B.getInt64Ty(), ParkAt->Parked);
  B.CreateStore(B.CreateOr(Bits, B.CreateShl(B.getInt64(1), B.CreateZExt(Piece, B.getInt64Ty()))), ParkAt->Parked);
  // Its lanes leave by L's exit at once: the trips run in the stream rounds.
  for (auto &[Edge, MS] : ExitMaskSlots)
    if (L->contains(Edge.first))
      B.CreateStore(Constant::getAllOnesValue(MS->getAllocatedType()), MS);
  LoopState &LS = Loops[L];
  LS.After = BasicBlock::Create(F.getContext(), L->getHeader()->getName() + ".warp.done", &F);
  B.CreateBr(LS.After);
  B.SetInsertPoint(Stay);
}

/// The end of a parked warp's trip: every lane going round again, with no lane's value wrapped, yields the
/// warp's next state; otherwise Partial (the general copy) finishes it.
void WarpEmitter::yieldTrip(LoopState &LS, Value *Full, ArrayRef<WarpValue> Next, BasicBlock *Partial) {
  Value *OK = Full;
  for (const WarpValue &WV : Next)
    if (WV.NoWrap && !isa<Constant>(WV.NoWrap))
      OK = B.CreateAnd(OK, WV.NoWrap);
  Trip->Yield = BasicBlock::Create(F.getContext(), "stream.yield", &F);
  B.CreateCondBr(OK, Trip->Yield, Partial);
  for (const WarpValue &WV : Next)
    Trip->Next.push_back(WV.Scalar);
  // The full copy's header phis keep their one incoming value; the vectors derived from lane 0's need no phi.
  for (auto &[P, VecPhi, Remat] : LS.Remat)
    VecPhi->eraseFromParent();
  LS.Remat.clear();
}

WarpEmitter::StreamTrip WarpEmitter::emitStreamTrip(BasicBlock *Into, Loop *L, ArrayRef<Value *> State) {
  begin(Into, Constant::getAllOnesValue(vecTy(B.getInt1Ty())), DenseMap<const Value *, WarpValue>());
  StreamTrip T;
  StreamL = L;
  StreamState = State;
  Trip = &T;
  StreamFinished = false;
  for (size_t K = size_t(llvm::find(Order, L->getHeader()) - Order.begin()); K < Order.size() && !StreamFinished; ++K) {
    emitBlock(Order[K]);
    if (Rewind) {
      K = *Rewind - 1;
      Rewind.reset();
    }
  }
  StreamL = nullptr;
  Trip = nullptr;
  T.Done = B.GetInsertBlock();
  return T;
}

void WarpEmitter::emitEdgeMasks(BasicBlock *BB, Value *M) {
  Instruction *T = BB->getTerminator();
  Constant *None = Constant::getNullValue(M->getType());
  auto under = [&](Value *C) { return isAllOn(M) ? C : B.CreateSelect(M, C, None); };
  auto cond = [&](Value *C) -> Value * { return SA->of(C).isUniform() ? B.CreateVectorSplat(W, scalar(C)) : vec(C); };
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
    if (!SA->inBody(V))
      return V;
    return SA->of(V).isUniform() ? scalar(V) : B.CreateExtractElement(vec(V), L);
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
  // A full copy's trip that goes round with every lane leaves by none of its latch's exits: endLoop records
  // those exits where a lane leaves, so the trip computes no exit masks.
  if (L == TL.L || L->getLoopLatch() != BB || !Loops[L].InFullCopy)
    captureLoopExits(BB);
  for (BasicBlock *S : successors(BB))
    if (TL.NoReturnExits.count(S))
      emitNoReturnExit(BB, S, EdgeMasks.lookup({BB, S}));
  if (L != TL.L && L->getLoopLatch() == BB)
    endLoop(L);
}
