// See WarpEmitter.h: one instruction of the body for W lanes, by the shapes of its operands.
#include "WarpEmitter.h"

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/Analysis/VectorUtils.h"
#include "llvm/IR/GetElementPtrTypeIterator.h"
#include "llvm/IR/IntrinsicInst.h"

using namespace llvm;
using namespace ptxforge::codegen::passes::warp;

Value *WarpEmitter::scalar(const Value *V) {
  if (!SA->inBody(V))
    return const_cast<Value *>(V);
  auto It = Map.find(V);
  assert(It != Map.end() && It->second.Scalar && "a uniform or consecutive value without its scalar");
  return It->second.Scalar;
}

/// V in every lane: a splat, or for a short vector its elements repeated lane after lane.
static Value *splat(IRBuilder<> &B, unsigned W, Value *V) {
  auto *VT = dyn_cast<FixedVectorType>(V->getType());
  if (!VT) {
    if (auto *C = dyn_cast<Constant>(V))
      return ConstantVector::getSplat(ElementCount::getFixed(W), C);
    return B.CreateVectorSplat(W, V);
  }
  SmallVector<int, 64> Idx;
  for (unsigned L = 0; L < W; ++L)
    for (unsigned K = 0; K < VT->getNumElements(); ++K)
      Idx.push_back(int(K));
  return B.CreateShuffleVector(V, Idx);
}

Value *WarpEmitter::vec(const Value *V) {
  if (!SA->inBody(V))
    return splat(B, W, const_cast<Value *>(V));
  const WarpValue &WV = Map.find(V)->second;
  if (WV.Vector)
    return WV.Vector;
  assert(WV.Scalar && "a varying value without its vector");
  return splat(B, W, WV.Scalar);
}

Value *WarpEmitter::lane(const Value *V, unsigned L) {
  if (!SA->inBody(V))
    return const_cast<Value *>(V);
  const WarpValue &WV = Map.find(V)->second;
  if (!WV.Lanes.empty())
    return WV.Lanes[L];
  if (!WV.Vector)
    return WV.Scalar;
  unsigned N = elementsPerLane(V->getType());
  if (N == 1)
    return B.CreateExtractElement(WV.Vector, B.getInt32(L));
  SmallVector<int, 8> Idx;
  for (unsigned K = 0; K < N; ++K)
    Idx.push_back(int(L * N + K));
  return B.CreateShuffleVector(WV.Vector, Idx);
}

Value *WarpEmitter::noWrapOf(const Value *V) {
  if (!SA->inBody(V))
    return nullptr;
  auto It = Map.find(V);
  return It == Map.end() ? nullptr : It->second.NoWrap;
}

Value *WarpEmitter::cloneScalar(Instruction &I) {
  Instruction *C = I.clone();
  for (Use &U : C->operands())
    U.set(scalar(U.get()));
  B.Insert(C, I.getName());
  return C;
}

/// Lane L of a consecutive value is lane 0's plus L * stride only if the extension of a narrower consecutive
/// value does not step over its type's end inside the warp: checked at run time on lane 0's value.
Value *WarpEmitter::noWrap(Instruction &I) {
  Value *NW = nullptr;
  for (Value *Op : I.operands())
    if (Value *O = noWrapOf(Op))
      NW = NW ? B.CreateAnd(NW, O) : O;
  auto *Cast = dyn_cast<CastInst>(&I);
  if (!Cast || !(isa<SExtInst>(I) || isa<ZExtInst>(I) ||
                 (isa<IntToPtrInst, PtrToIntInst>(I) &&
                  I.getType()->getScalarSizeInBits() != I.getOperand(0)->getType()->getScalarSizeInBits())))
    return NW;
  Value *Src = I.getOperand(0);
  Shape S = SA->of(Src);
  unsigned Bits = Src->getType()->getIntegerBitWidth();
  APInt Spread(128, uint64_t(S.Stride < 0 ? -S.Stride : S.Stride));
  Spread *= APInt(128, W - 1);
  Value *Check;
  if (Spread.getActiveBits() >= Bits) {
    Check = B.getFalse();
  } else {
    APInt Sp = Spread.trunc(Bits);
    Value *Base = scalar(Src);
    bool Signed = isa<SExtInst>(I);
    if (S.Stride > 0)
      Check = Signed ? B.CreateICmpSLE(Base, B.getInt(APInt::getSignedMaxValue(Bits) - Sp))
                     : B.CreateICmpULE(Base, B.getInt(APInt::getMaxValue(Bits) - Sp));
    else
      Check = Signed ? B.CreateICmpSGE(Base, B.getInt(APInt::getSignedMinValue(Bits) + Sp))
                     : B.CreateICmpUGE(Base, B.getInt(Sp));
  }
  return NW ? B.CreateAnd(NW, Check) : Check;
}

Value *WarpEmitter::widen(Instruction &I) {
  auto V = [&](unsigned K) { return vec(I.getOperand(K)); };
  Value *R = nullptr;
  if (auto *BO = dyn_cast<BinaryOperator>(&I)) {
    R = B.CreateBinOp(BO->getOpcode(), V(0), V(1), I.getName());
  } else if (auto *C = dyn_cast<CmpInst>(&I)) {
    R = B.CreateCmp(C->getPredicate(), V(0), V(1), I.getName());
  } else if (auto *C = dyn_cast<CastInst>(&I)) {
    R = B.CreateCast(C->getOpcode(), V(0), vecTy(I.getType()), I.getName());
  } else if (auto *U = dyn_cast<UnaryOperator>(&I)) {
    R = B.CreateUnOp(U->getOpcode(), V(0), I.getName());
  } else if (isa<FreezeInst>(I)) {
    R = B.CreateFreeze(V(0), I.getName());
  } else if (auto *S = dyn_cast<SelectInst>(&I)) {
    Value *Cond = SA->of(S->getCondition()).isUniform()        ? scalar(S->getCondition())
                  : S->getCondition()->getType()->isVectorTy() ? V(0)
                                                               : maskFor(V(0), I.getType());
    R = B.CreateSelect(Cond, V(1), V(2), I.getName());
  } else if (auto *G = dyn_cast<GetElementPtrInst>(&I)) {
    SmallVector<Value *, 4> Idx;
    for (auto GTI = gep_type_begin(G), E = gep_type_end(G); GTI != E; ++GTI)
      Idx.push_back(GTI.isStruct() ? GTI.getOperand() : vec(GTI.getOperand()));
    R = B.CreateGEP(G->getSourceElementType(), vec(G->getPointerOperand()), Idx, I.getName(), G->getNoWrapFlags());
  } else if (isa<ExtractElementInst, InsertElementInst, ShuffleVectorInst>(I)) {
    R = widenShuffle(I);
    if (!R)
      return nullptr;
  } else {
    return nullptr;
  }
  if (auto *RI = dyn_cast<Instruction>(R)) {
    if (isa<BinaryOperator>(RI) || isa<CastInst>(RI) || isa<FPMathOperator>(RI))
      RI->copyIRFlags(&I);
    RI->copyMetadata(I);
  }
  return R;
}

Value *WarpEmitter::widenShuffle(Instruction &I) {
  SmallVector<int, 64> Idx;
  if (auto *E = dyn_cast<ExtractElementInst>(&I)) {
    auto *K = dyn_cast<ConstantInt>(E->getIndexOperand());
    unsigned N = elementsPerLane(E->getVectorOperandType());
    if (!K || K->getZExtValue() >= N)
      return nullptr;
    for (unsigned L = 0; L < W; ++L)
      Idx.push_back(int(L * N + K->getZExtValue()));
    return B.CreateShuffleVector(vec(E->getVectorOperand()), Idx, I.getName());
  }
  if (auto *Ins = dyn_cast<InsertElementInst>(&I)) {
    auto *K = dyn_cast<ConstantInt>(Ins->getOperand(2));
    unsigned N = elementsPerLane(I.getType());
    if (!K || K->getZExtValue() >= N)
      return nullptr;
    // The lanes' new elements, widened to the vector's length, then placed at element K of each lane.
    SmallVector<int, 64> Grow;
    for (unsigned P = 0; P < W * N; ++P)
      Grow.push_back(P < W ? int(P) : -1);
    Value *Elts = B.CreateShuffleVector(vec(Ins->getOperand(1)), Grow);
    for (unsigned P = 0; P < W * N; ++P)
      Idx.push_back(P % N == K->getZExtValue() ? int(W * N + P / N) : int(P));
    return B.CreateShuffleVector(vec(Ins->getOperand(0)), Elts, Idx, I.getName());
  }
  auto *Sh = cast<ShuffleVectorInst>(&I);
  unsigned N = elementsPerLane(Sh->getOperand(0)->getType()), M = elementsPerLane(I.getType());
  for (unsigned L = 0; L < W; ++L)
    for (unsigned J = 0; J < M; ++J) {
      int S = Sh->getMaskValue(J);
      Idx.push_back(S < 0 ? -1 : unsigned(S) < N ? int(L * N + S) : int(W * N + L * N + (S - N)));
    }
  return B.CreateShuffleVector(vec(Sh->getOperand(0)), vec(Sh->getOperand(1)), Idx, I.getName());
}

void WarpEmitter::emitInstruction(Instruction &I, Value *M) {
  if (auto *L = dyn_cast<LoadInst>(&I))
    return emitLoad(*L, M);
  if (auto *St = dyn_cast<StoreInst>(&I))
    return emitStore(*St, M);
  if (isa<AtomicRMWInst, AtomicCmpXchgInst>(I))
    return emitPerLane(I, M, false);
  if (auto *CB = dyn_cast<CallBase>(&I))
    return emitCall(*CB, M);
  if (isa<FenceInst>(I)) {
    cloneScalar(I);
    return;
  }
  Shape S = SA->of(&I);
  WarpValue &WV = Map[&I];
  if (S.isUniform()) {
    WV.Scalar = cloneScalar(I);
    return;
  }
  if (S.isConsecutive()) {
    WV.Scalar = cloneScalar(I);
    WV.Vector = widen(I);
    WV.NoWrap = noWrap(I);
    return;
  }
  bool Types = widenable(I.getType());
  for (Value *Op : I.operands())
    Types = Types && widenable(Op->getType());
  if (Types)
    if (Value *R = widen(I)) {
      WV.Vector = R;
      return;
    }
  // Structures and the instructions that take them apart, lane by lane (pure: every lane may run them).
  emitPerLane(I, Constant::getAllOnesValue(vecTy(B.getInt1Ty())), false);
}

/// Phis outside inner loop headers: the incoming values merged by the masks of their edges.
void WarpEmitter::emitPhi(PHINode &P) {
  SmallVector<std::pair<Value *, Value *>, 4> In; // (edge mask, value for every lane)
  SmallPtrSet<BasicBlock *, 4> Seen;
  const Value *Same = P.getIncomingValue(0);
  bool Exits = false;
  for (unsigned K = 0; K < P.getNumIncomingValues(); ++K) {
    Exits = Exits || outermostExited(P.getIncomingBlock(K), P.getParent());
    if (P.getIncomingValue(K) != Same)
      Same = nullptr;
  }
  if (Same && !Exits) {
    WarpValue WV;
    if (SA->inBody(Same))
      WV = Map.find(Same)->second;
    else
      WV.Scalar = const_cast<Value *>(Same);
    Map[&P] = WV;
    return;
  }
  for (unsigned K = 0; K < P.getNumIncomingValues(); ++K) {
    BasicBlock *Pred = P.getIncomingBlock(K);
    if (!Seen.insert(Pred).second)
      continue;
    Value *V;
    if (outermostExited(Pred, P.getParent())) {
      AllocaInst *S = ExitValueSlots.lookup({&P, Pred});
      V = B.CreateLoad(S->getAllocatedType(), S);
    } else {
      V = vec(P.getIncomingValue(K));
    }
    In.push_back({incomingMask(Pred, P.getParent()), V});
  }
  Value *R = In[0].second;
  for (unsigned K = 1; K < In.size(); ++K)
    R = B.CreateSelect(maskFor(In[K].first, P.getType()), In[K].second, R, P.getName());
  Map[&P].Vector = R;
}

/// Lanes Spread elements apart (a field of consecutive structures): one masked access of W * Spread elements
/// from lane 0's address, only every Spread-th element on, so no byte outside the lanes' own is touched.
Value *WarpEmitter::spreadAccess(Instruction &I, Value *LaneMask, Type *T, unsigned Spread) {
  auto *St = dyn_cast<StoreInst>(&I);
  Type *WideTy = FixedVectorType::get(T, W * Spread);
  SmallVector<int, 64> Place(W * Spread, -1), Pick;
  for (unsigned L = 0; L < W; ++L) {
    Place[L * Spread] = int(L);
    Pick.push_back(int(L * Spread));
  }
  Value *Mask = B.CreateShuffleVector(LaneMask, ConstantVector::getNullValue(LaneMask->getType()), [&] {
    SmallVector<int, 64> Idx(W * Spread, int(W)); // a lane of the zero vector: off
    for (unsigned L = 0; L < W; ++L)
      Idx[L * Spread] = int(L);
    return Idx;
  }());
  Value *Ptr = scalar(getLoadStorePointerOperand(&I));
  Align A = getLoadStoreAlignment(&I);
  Instruction *R;
  if (St)
    R = B.CreateMaskedStore(B.CreateShuffleVector(vec(St->getValueOperand()), Place), Ptr, A, Mask);
  else
    R = B.CreateMaskedLoad(WideTy, Ptr, A, Mask, PoisonValue::get(WideTy));
  R->copyMetadata(
      I, {LLVMContext::MD_alias_scope, LLVMContext::MD_noalias, LLVMContext::MD_tbaa, LLVMContext::MD_access_group});
  return St ? nullptr : B.CreateShuffleVector(R, Pick);
}

/// Every lane's address of each element of a T at Ptr (a short vector's elements one after another).
Value *WarpEmitter::elementPointers(const Value *Ptr, Type *T) {
  unsigned N = elementsPerLane(T);
  Value *P = vec(Ptr);
  if (N == 1)
    return P;
  SmallVector<int, 64> Idx;
  SmallVector<Constant *, 64> Off;
  uint64_t Size = F.getDataLayout().getTypeAllocSize(cast<FixedVectorType>(T)->getElementType());
  for (unsigned L = 0; L < W; ++L)
    for (unsigned K = 0; K < N; ++K) {
      Idx.push_back(int(L));
      Off.push_back(B.getInt64(K * Size));
    }
  return B.CreateGEP(B.getInt8Ty(), B.CreateShuffleVector(P, Idx), ConstantVector::get(Off));
}

/// Whether W elements of T Stride bytes apart are laid out as a vector of T is (not i1: a vector packs bits).
static bool vectorLayout(const DataLayout &DL, Type *T, int64_t Stride) {
  uint64_t Bits = DL.getTypeSizeInBits(T);
  return Bits % 8 == 0 && Stride == int64_t(Bits / 8) && DL.getTypeAllocSize(T) == Bits / 8;
}

/// Lanes a small whole number of elements apart (fields of structures up to 4 elements; .v2/.v4 accesses split
/// by the lowering): the factor, or 0.
static unsigned spreadOf(const DataLayout &DL, Type *T, Shape A) {
  if (!A.isConsecutive() || T->isVectorTy() || !vectorLayout(DL, T, int64_t(DL.getTypeAllocSize(T))))
    return 0;
  int64_t Size = int64_t(DL.getTypeAllocSize(T));
  return A.Stride > Size && A.Stride % Size == 0 && A.Stride / Size <= 4 ? unsigned(A.Stride / Size) : 0;
}

/// Lanes past this many gather and scatter bytes and halves in a loop over the lanes instead of one instruction:
/// x86 has no gather of them, and LLVM expands one into a load and a branch per lane, so a lockstep warp's (256
/// lanes) fallback paths alone grew a byte copy's code 3x and its compile time 5x. These paths (an index wrapping
/// inside the warp) are rare; the loop costs little more than the expansion where they run. 32- and 64-bit
/// elements keep the instruction (AVX-512 gathers them; as a loop a u32 copy's code grew by half).
constexpr unsigned MaxGatherLanes = 64;

Value *WarpEmitter::gatherScatter(Instruction &I, Type *VecTy, Value *Ptrs, Align A, Value *Mask, Value *Val,
                                  bool InGroup) {
  unsigned N = cast<FixedVectorType>(Ptrs->getType())->getNumElements();
  if (N <= MaxGatherLanes || F.getDataLayout().getTypeStoreSize(VecTy->getScalarType()) >= 4) {
    Instruction *R = Val ? B.CreateMaskedScatter(Val, Ptrs, A, Mask) : B.CreateMaskedGather(VecTy, Ptrs, A, Mask);
    R->copyMetadata(I, {LLVMContext::MD_alias_scope, LLVMContext::MD_noalias, LLVMContext::MD_tbaa});
    if (InGroup)
      R->copyMetadata(I, {LLVMContext::MD_access_group});
    return R;
  }
  Type *ElemTy = cast<FixedVectorType>(VecTy)->getElementType();
  Type *PtrTy = cast<FixedVectorType>(Ptrs->getType())->getElementType();
  IRBuilder<> EB(&*F.getEntryBlock().getFirstInsertionPt());
  AllocaInst *PtrArr = EB.CreateAlloca(Ptrs->getType(), nullptr, "lanes.ptrs");
  AllocaInst *ValArr = EB.CreateAlloca(VecTy, nullptr, "lanes.values");
  AllocaInst *MaskArr = Mask ? EB.CreateAlloca(FixedVectorType::get(B.getInt8Ty(), N), nullptr, "lanes.mask") : nullptr;
  B.CreateStore(Ptrs, PtrArr);
  if (Val)
    B.CreateStore(Val, ValArr);
  if (Mask)
    B.CreateStore(B.CreateZExt(Mask, FixedVectorType::get(B.getInt8Ty(), N)), MaskArr);
  BasicBlock *Pre = B.GetInsertBlock();
  BasicBlock *Loop = BasicBlock::Create(F.getContext(), "lanes", &F);
  BasicBlock *On = BasicBlock::Create(F.getContext(), "lanes.on", &F);
  BasicBlock *Next = BasicBlock::Create(F.getContext(), "lanes.next", &F);
  BasicBlock *Done = BasicBlock::Create(F.getContext(), "lanes.done", &F);
  B.CreateBr(Loop);
  B.SetInsertPoint(Loop);
  PHINode *L = B.CreatePHI(B.getInt32Ty(), 2, "lane");
  L->addIncoming(B.getInt32(0), Pre);
  if (Mask)
    B.CreateCondBr(
        B.CreateICmpNE(B.CreateLoad(B.getInt8Ty(), B.CreateInBoundsGEP(B.getInt8Ty(), MaskArr, L)), B.getInt8(0)), On,
        Next);
  else
    B.CreateBr(On);
  B.SetInsertPoint(On);
  Value *P = B.CreateLoad(PtrTy, B.CreateInBoundsGEP(PtrTy, PtrArr, L));
  Value *Slot = B.CreateInBoundsGEP(ElemTy, ValArr, L);
  Instruction *Access = Val ? static_cast<Instruction *>(B.CreateAlignedStore(B.CreateLoad(ElemTy, Slot), P, A))
                            : B.CreateAlignedLoad(ElemTy, P, A);
  Access->copyMetadata(I, {LLVMContext::MD_alias_scope, LLVMContext::MD_noalias, LLVMContext::MD_tbaa});
  if (!Val)
    B.CreateStore(Access, Slot);
  B.CreateBr(Next);
  B.SetInsertPoint(Next);
  Value *L1 = B.CreateAdd(L, B.getInt32(1));
  L->addIncoming(L1, Next);
  B.CreateCondBr(B.CreateICmpULT(L1, B.getInt32(N)), Loop, Done);
  B.SetInsertPoint(Done);
  return Val ? nullptr : B.CreateLoad(VecTy, ValArr);
}

Value *WarpEmitter::consecutiveAccess(Instruction &I, Value *M, Type *ElemTy, unsigned Spread) {
  auto *St = dyn_cast<StoreInst>(&I);
  Value *Ptr = getLoadStorePointerOperand(&I);
  Align A = getLoadStoreAlignment(&I);
  bool Full = isAllOn(M);
  Type *ValTy = St ? St->getValueOperand()->getType() : ElemTy;
  Value *LaneMask = M;
  M = Full ? M : maskFor(M, ValTy);
  auto vectorAccess = [&]() -> Value * {
    if (Spread > 1)
      return spreadAccess(I, LaneMask, ElemTy, Spread);
    Instruction *R;
    if (St)
      R = Full ? static_cast<Instruction *>(B.CreateAlignedStore(vec(St->getValueOperand()), scalar(Ptr), A))
               : B.CreateMaskedStore(vec(St->getValueOperand()), scalar(Ptr), A, M);
    else
      R = Full ? static_cast<Instruction *>(B.CreateAlignedLoad(vecTy(ElemTy), scalar(Ptr), A))
               : B.CreateMaskedLoad(vecTy(ElemTy), scalar(Ptr), A, M, PoisonValue::get(vecTy(ElemTy)));
    R->copyMetadata(I, {LLVMContext::MD_alias_scope, LLVMContext::MD_noalias, LLVMContext::MD_tbaa,
                        LLVMContext::MD_nontemporal, LLVMContext::MD_access_group});
    return R;
  };
  auto gatherScatterAccess = [&]() -> Value * {
    return gatherScatter(I, vecTy(ValTy), elementPointers(Ptr, ValTy), A, Full ? nullptr : M,
                         St ? vec(St->getValueOperand()) : nullptr, /*InGroup=*/true);
  };
  Value *NW = noWrapOf(Ptr);
  if (!NW)
    return vectorAccess();
  // The lanes' addresses are consecutive unless an index extension wrapped inside the warp.
  BasicBlock *Fast = BasicBlock::Create(F.getContext(), "consecutive", &F);
  BasicBlock *Slow = BasicBlock::Create(F.getContext(), "wrapped", &F);
  BasicBlock *Join = BasicBlock::Create(F.getContext(), "access", &F);
  B.CreateCondBr(NW, Fast, Slow);
  B.SetInsertPoint(Fast);
  Value *VF = vectorAccess();
  BasicBlock *FastEnd = B.GetInsertBlock();
  B.CreateBr(Join);
  B.SetInsertPoint(Slow);
  Value *VS = gatherScatterAccess();
  BasicBlock *SlowEnd = B.GetInsertBlock(); // past the lane loop of a wide warp's gather
  B.CreateBr(Join);
  B.SetInsertPoint(Join);
  if (St)
    return nullptr;
  PHINode *P = B.CreatePHI(VF->getType(), 2);
  P->addIncoming(VF, FastEnd);
  P->addIncoming(VS, SlowEnd);
  return P;
}

void WarpEmitter::emitLoad(LoadInst &L, Value *M) {
  if (StoreInst *St = SA->laneStoreRead(L)) {
    const Value *V = St->getValueOperand();
    if (SA->inBody(V))
      Map[&L] = Map.find(V)->second;
    else
      Map[&L].Scalar = const_cast<Value *>(V);
    return;
  }
  Shape A = SA->of(L.getPointerOperand());
  Type *T = L.getType();
  const DataLayout &DL = F.getDataLayout();
  if (!L.isSimple() || (!A.isUniform() && !widenable(T)))
    return emitPerLane(L, M, false);
  if (A.isUniform()) {
    Map[&L].Scalar = cloneScalar(L);
    return;
  }
  if (A.isConsecutive() && vectorLayout(DL, T, A.Stride)) {
    Map[&L].Vector = consecutiveAccess(L, M, T);
    return;
  }
  if (unsigned Spread = spreadOf(DL, T, A)) {
    Map[&L].Vector = consecutiveAccess(L, M, T, Spread);
    return;
  }
  Map[&L].Vector = gatherScatter(L, vecTy(T), elementPointers(L.getPointerOperand(), T), L.getAlign(),
                                 isAllOn(M) ? nullptr : maskFor(M, T), nullptr);
}

void WarpEmitter::emitStore(StoreInst &St, Value *M) {
  Value *Ptr = St.getPointerOperand(), *Val = St.getValueOperand();
  Shape A = SA->of(Ptr), V = SA->of(Val);
  Type *T = Val->getType();
  const DataLayout &DL = F.getDataLayout();
  if (!St.isSimple() || (!(A.isUniform() && V.isUniform()) && !widenable(T)))
    return emitPerLane(St, M, false);
  if (A.isUniform()) {
    if (V.isUniform()) {
      cloneScalar(St);
      return;
    }
    // Every lane stores to one address: the last lane on wins, as the last thread of the loop did.
    Instruction *C = St.clone();
    Value *Last = lastLane(M);
    unsigned N = elementsPerLane(T);
    Value *V = N == 1 ? B.CreateExtractElement(vec(Val), Last) : PoisonValue::get(T);
    for (unsigned K = 0; N > 1 && K < N; ++K)
      V = B.CreateInsertElement(
          V, B.CreateExtractElement(vec(Val), B.CreateAdd(B.CreateMul(Last, B.getInt32(N)), B.getInt32(K))), K);
    C->setOperand(0, V);
    C->setOperand(1, scalar(Ptr));
    B.Insert(C);
    return;
  }
  if (A.isConsecutive() && vectorLayout(DL, T, A.Stride)) {
    consecutiveAccess(St, M, T);
    return;
  }
  if (unsigned Spread = spreadOf(DL, T, A)) {
    consecutiveAccess(St, M, T, Spread);
    return;
  }
  gatherScatter(St, vecTy(T), elementPointers(Ptr, T), St.getAlign(), isAllOn(M) ? nullptr : maskFor(M, T), vec(Val));
}

void WarpEmitter::emitCall(CallBase &CB, Value *M) {
  if (auto *II = dyn_cast<IntrinsicInst>(&CB)) {
    switch (II->getIntrinsicID()) {
    case Intrinsic::assume:
    case Intrinsic::lifetime_start:
    case Intrinsic::lifetime_end:
    case Intrinsic::experimental_noalias_scope_decl:
    case Intrinsic::prefetch:
    case Intrinsic::donothing:
    case Intrinsic::sideeffect:
      return;
    default:
      break;
    }
  }
  if (!CB.doesNotAccessMemory())
    return emitPerLane(CB, M, !isa<IntrinsicInst>(CB));
  if (SA->of(&CB).isUniform()) {
    Map[&CB].Scalar = cloneScalar(CB);
    return;
  }
  Intrinsic::ID ID = CB.getIntrinsicID();
  bool Vectorizable = ID != Intrinsic::not_intrinsic && isTriviallyVectorizable(ID) && widenable(CB.getType());
  for (unsigned K = 0; Vectorizable && K < CB.arg_size(); ++K)
    Vectorizable = isVectorIntrinsicWithScalarOpAtArg(ID, K, nullptr) ? SA->of(CB.getArgOperand(K)).isUniform()
                                                                      : widenable(CB.getArgOperand(K)->getType());
  if (Vectorizable) {
    SmallVector<Type *, 2> Tys;
    SmallVector<Value *, 4> Args;
    if (isVectorIntrinsicWithOverloadTypeAtArg(ID, -1, nullptr))
      Tys.push_back(vecTy(CB.getType()));
    for (unsigned K = 0; K < CB.arg_size(); ++K) {
      bool Scalar = isVectorIntrinsicWithScalarOpAtArg(ID, K, nullptr);
      Args.push_back(Scalar ? scalar(CB.getArgOperand(K)) : vec(CB.getArgOperand(K)));
      if (isVectorIntrinsicWithOverloadTypeAtArg(ID, K, nullptr))
        Tys.push_back(Args.back()->getType());
    }
    Function *Fn = Intrinsic::getOrInsertDeclaration(F.getParent(), ID, Tys);
    CallInst *C = B.CreateCall(Fn, Args, CB.getName());
    if (isa<FPMathOperator>(C))
      C->copyFastMathFlags(&CB);
    Map[&CB].Vector = C;
    return;
  }
  bool Speculatable = isSafeToSpeculativelyExecute(&CB);
  emitPerLane(CB, Speculatable ? Constant::getAllOnesValue(vecTy(B.getInt1Ty())) : M, false);
}

/// Instructions no vector form covers (atomics, calls, volatile accesses, structures, a shared-memory
/// read-modify-write): once per lane that is on, in lane order, as the threads ran. A call that may read the
/// thread's context finds its lane's ids there.
void WarpEmitter::emitPerLane(ArrayRef<Instruction *> Span, Value *M, bool SeesContext) {
  bool Full = isAllOn(M);
  DenseMap<const Instruction *, SmallVector<Value *, 16>> Results;
  for (unsigned L = 0; L < W; ++L) {
    BasicBlock *Prev = B.GetInsertBlock(), *Then = nullptr, *Next = nullptr;
    if (!Full) {
      Then = BasicBlock::Create(F.getContext(), "lane", &F);
      Next = BasicBlock::Create(F.getContext(), "lane.next", &F);
      B.CreateCondBr(B.CreateExtractElement(M, B.getInt32(L)), Then, Next);
      B.SetInsertPoint(Then);
    }
    if (SeesContext)
      for (StoreInst *St : TL.LaneStores)
        B.CreateStore(lane(St->getValueOperand(), L), scalar(St->getPointerOperand()));
    DenseMap<const Value *, Value *> Local;
    for (Instruction *I : Span) {
      Instruction *C = I->clone();
      for (Use &U : C->operands())
        if (!isa<Function>(U.get()))
          U.set(Local.count(U.get()) ? Local[U.get()] : lane(U.get(), L));
      B.Insert(C);
      Local[I] = C;
    }
    BasicBlock *ThenEnd = B.GetInsertBlock();
    if (!Full) {
      B.CreateBr(Next);
      B.SetInsertPoint(Next);
    }
    for (Instruction *I : Span) {
      if (I->getType()->isVoidTy())
        continue;
      Value *R = Local[I];
      if (!Full) {
        PHINode *P = B.CreatePHI(I->getType(), 2);
        P->addIncoming(R, ThenEnd);
        P->addIncoming(PoisonValue::get(I->getType()), Prev);
        R = P;
      }
      Results[I].push_back(R);
    }
  }
  for (Instruction *I : Span) {
    if (I->getType()->isVoidTy())
      continue;
    SmallVector<Value *, 16> &Lanes = Results[I];
    WarpValue &WV = Map[I];
    WV = WarpValue();
    if (!widenable(I->getType())) {
      WV.Lanes.assign(Lanes.begin(), Lanes.end());
      continue;
    }
    Value *V = PoisonValue::get(vecTy(I->getType()));
    unsigned N = elementsPerLane(I->getType());
    for (unsigned L = 0; L < W; ++L)
      for (unsigned K = 0; K < N; ++K)
        V = B.CreateInsertElement(V, N == 1 ? Lanes[L] : B.CreateExtractElement(Lanes[L], K), B.getInt32(L * N + K));
    WV.Vector = V;
    // A value the analysis found uniform is the same in every lane that ran it: lane 0's stands for all
    // (only lanes that are on read it).
    if (!SA->of(I).isVarying())
      WV.Scalar = B.CreateExtractElement(V, firstLane(M));
  }
}
