// See WarpShapes.h: the thread loop's form and the shapes of its values across a warp's lanes.
#include "WarpShapes.h"
#include "../Markers.h"

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/GetElementPtrTypeIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Operator.h"
#include "llvm/IR/PatternMatch.h"

using namespace llvm;
using namespace ptxforge::codegen;
using namespace ptxforge::codegen::passes::warp;

Shape ptxforge::codegen::passes::warp::join(Shape A, Shape B) {
  if (A.K == Kind::None)
    return B;
  if (B.K == Kind::None || A == B)
    return A;
  return Shape::varying();
}

namespace {

/// Whether the loop's latch continues with the next thread while `IVNext Pred N` holds, and if so End = N.
Value *loopEnd(const ThreadLoop &TL, const Value *IVNext) {
  auto *Br = dyn_cast<BranchInst>(TL.Latch->getTerminator());
  auto *Cmp = Br && Br->isConditional() ? dyn_cast<ICmpInst>(Br->getCondition()) : nullptr;
  if (!Cmp)
    return nullptr;
  CmpInst::Predicate P = Cmp->getPredicate();
  Value *N = Cmp->getOperand(1);
  if (Cmp->getOperand(0) != IVNext) {
    if (Cmp->getOperand(1) != IVNext)
      return nullptr;
    P = CmpInst::getSwappedPredicate(P);
    N = Cmp->getOperand(0);
  }
  if (!TL.L->isLoopInvariant(N))
    return nullptr;
  if (Br->getSuccessor(0) != TL.Header)
    P = CmpInst::getInversePredicate(P); // now: continue while `IVNext P N`
  bool Continues = P == CmpInst::ICMP_NE || P == CmpInst::ICMP_ULT || P == CmpInst::ICMP_SLT;
  return Continues ? N : nullptr;
}

/// The reduction a header phi carries, if every use of its chain in the loop is one operation of one kind
/// (or the phis and selects merging them) and the chain leaves the loop only through the exit block.
std::optional<ReductionOp> matchReduction(ThreadLoop &TL, PHINode &P) {
  std::optional<ReductionOp> Op;
  auto opOf = [](const Instruction &I) -> std::optional<ReductionOp> {
    if (I.getOpcode() == Instruction::Or)
      return ReductionOp::Or;
    if (I.getOpcode() == Instruction::And)
      return ReductionOp::And;
    if (auto *II = dyn_cast<IntrinsicInst>(&I))
      switch (II->getIntrinsicID()) {
      case Intrinsic::umin:
        return ReductionOp::UMin;
      case Intrinsic::umax:
        return ReductionOp::UMax;
      case Intrinsic::smin:
        return ReductionOp::SMin;
      case Intrinsic::smax:
        return ReductionOp::SMax;
      default:
        break;
      }
    return std::nullopt;
  };
  SmallVector<Instruction *, 8> Work{&P};
  DenseMap<const Value *, PHINode *> Chain{{&P, &P}};
  while (!Work.empty()) {
    Instruction *I = Work.pop_back_val();
    for (User *U : I->users()) {
      auto *UI = cast<Instruction>(U);
      if (!TL.L->contains(UI)) {
        if (UI->getParent() != TL.Exit || !isa<PHINode>(UI))
          return std::nullopt;
        continue;
      }
      if (Chain.count(UI))
        continue;
      if (auto *Sel = dyn_cast<SelectInst>(UI); Sel && Sel->getCondition() == I)
        return std::nullopt;
      if (!isa<PHINode>(UI) && !isa<SelectInst>(UI)) {
        std::optional<ReductionOp> K = opOf(*UI);
        if (!K || (Op && *Op != *K))
          return std::nullopt;
        Op = K;
      }
      Chain[UI] = &P;
      Work.push_back(UI);
    }
  }
  if (!Op || !Chain.count(P.getIncomingValueForBlock(TL.Latch)))
    return std::nullopt;
  TL.ReductionChain.insert(Chain.begin(), Chain.end());
  return Op;
}

std::string matchHeaderPhis(ThreadLoop &TL) {
  for (PHINode &P : TL.Header->phis()) {
    Value *Next = P.getIncomingValueForBlock(TL.Latch);
    const APInt *Step;
    using namespace PatternMatch;
    if (match(Next, m_Add(m_Specific(&P), m_APInt(Step))) && Step->getSignificantBits() <= 32) {
      TL.Inductions.push_back({&P, Step->getSExtValue()});
      if (Step->isOne() && !TL.IV && loopEnd(TL, Next))
        TL.IV = &P;
      continue;
    }
    if (std::optional<ReductionOp> Op = matchReduction(TL, P)) {
      TL.Reductions.push_back({&P, *Op});
      continue;
    }
    return "a value carried from thread to thread that is neither an induction nor a reduction";
  }
  if (!TL.IV)
    return "no thread counter running to a bound";
  TL.Start = TL.IV->getIncomingValueForBlock(TL.Preheader);
  TL.End = loopEnd(TL, TL.IV->getIncomingValueForBlock(TL.Latch));
  return "";
}

/// Every value leaving the loop must be one the vectorized loop can give: a reduction's result or a value
/// defined before the loop.
std::string matchExitValues(const ThreadLoop &TL) {
  for (PHINode &P : TL.Exit->phis()) {
    Value *V = P.getIncomingValueForBlock(TL.Latch);
    if (TL.L->contains(dyn_cast<Instruction>(V)) && !TL.ReductionChain.count(V))
      return "a thread's value used after the loop";
  }
  return "";
}

std::string matchBody(ThreadLoop &TL) {
  for (BasicBlock *BB : TL.L->blocks()) {
    for (BasicBlock *S : successors(BB)) {
      if (TL.L->contains(S) || (BB == TL.Latch && S == TL.Exit))
        continue;
      if (!isa<UnreachableInst>(S->getTerminator()))
        return "a thread leaves the loop other than by its latch";
      TL.NoReturnExits.insert(S);
    }
    for (Instruction &I : *BB) {
      if (isa<InvokeInst, CallBrInst, IndirectBrInst, VAArgInst, LandingPadInst, AllocaInst>(I))
        return std::string("unsupported instruction: ") + I.getOpcodeName();
      if (auto *CB = dyn_cast<CallBase>(&I); CB && CB->isInlineAsm())
        return "inline assembly";
      if (const MDNode *Serial = isa<LoadInst>(I) ? ptxforge::codegen::detail::serialReadModifyWriteOf(I) : nullptr) {
        auto It = I.getIterator();
        while (!It->isTerminator() &&
               !(isa<StoreInst>(*It) && ptxforge::codegen::detail::serialReadModifyWriteOf(*It) == Serial))
          ++It;
        if (It->isTerminator())
          return "a shared-memory atomic split across blocks";
      }
      if (I.getType()->isStructTy() || I.getType()->isArrayTy())
        if (isa<PHINode>(I))
          return "a phi of aggregate type";
    }
  }
  return "";
}

} // namespace

std::string ptxforge::codegen::passes::warp::matchThreadLoop(Loop &L, ThreadLoop &TL) {
  TL.L = &L;
  TL.Preheader = L.getLoopPreheader();
  TL.Header = L.getHeader();
  TL.Latch = L.getLoopLatch();
  if (!TL.Preheader || !TL.Latch)
    return "the loop has no preheader or more than one latch";
  auto *Br = dyn_cast<BranchInst>(TL.Latch->getTerminator());
  if (!Br || !Br->isConditional())
    return "the latch does not branch on a condition";
  TL.Exit = Br->getSuccessor(0) == TL.Header ? Br->getSuccessor(1) : Br->getSuccessor(0);
  if (TL.L->contains(TL.Exit) || !TL.Exit->getSinglePredecessor())
    return "the loop's exit is not dedicated";
  for (auto Step : {matchHeaderPhis, matchBody})
    if (std::string E = Step(TL); !E.empty())
      return E;
  return matchExitValues(TL);
}

bool Shapes::inBody(const Value *V) const {
  auto *I = dyn_cast<Instruction>(V);
  return I && TL.L->contains(I);
}

Shape Shapes::of(const Value *V) const {
  if (!inBody(V))
    return Shape::uniform();
  auto It = S.find(V);
  return It == S.end() ? Shape::none() : It->second;
}

Shape Shapes::bounded(Shape Sh) const {
  if (Sh.isConsecutive() && (Sh.Stride > (int64_t(1) << 40) || Sh.Stride < -(int64_t(1) << 40)))
    return Shape::varying();
  return Sh;
}

StoreInst *Shapes::laneStoreRead(const LoadInst &L) const {
  int64_t LOff = 0;
  const Value *LBase = GetPointerBaseWithConstantOffset(L.getPointerOperand(), LOff, DL);
  for (StoreInst *St : TL.LaneStores) {
    int64_t SOff = 0;
    const Value *SBase = GetPointerBaseWithConstantOffset(St->getPointerOperand(), SOff, DL);
    if (SBase == LBase && SOff == LOff)
      return St;
  }
  return nullptr;
}

Shape Shapes::transferBinary(const BinaryOperator &BO) const {
  Shape A = of(BO.getOperand(0)), B = of(BO.getOperand(1));
  if (A.K == Kind::None || B.K == Kind::None)
    return Shape::none();
  if (A.isUniform() && B.isUniform())
    return Shape::uniform();
  // A flat block group's block of a thread: the lowering groups only blocks no warp straddles.
  if (ptxforge::codegen::detail::isBlockOfThread(BO) && !A.isVarying() && B.isUniform())
    return Shape::uniform();
  if (A.isVarying() || B.isVarying() || !BO.getType()->isIntegerTy())
    return Shape::varying();
  const APInt *C = nullptr;
  using namespace PatternMatch;
  switch (BO.getOpcode()) {
  case Instruction::Add:
    return bounded(Shape::consecutive(A.Stride + B.Stride));
  case Instruction::Or:
    if (cast<PossiblyDisjointInst>(BO).isDisjoint())
      return bounded(Shape::consecutive(A.Stride + B.Stride));
    return Shape::varying();
  case Instruction::Sub:
    return bounded(Shape::consecutive(A.Stride - B.Stride));
  case Instruction::Mul:
    if (A.isConsecutive() && match(BO.getOperand(1), m_APInt(C)) && C->getSignificantBits() <= 32)
      return bounded(Shape::consecutive(A.Stride * C->getSExtValue()));
    if (B.isConsecutive() && match(BO.getOperand(0), m_APInt(C)) && C->getSignificantBits() <= 32)
      return bounded(Shape::consecutive(B.Stride * C->getSExtValue()));
    return Shape::varying();
  case Instruction::Shl:
    if (A.isConsecutive() && B.isUniform() && match(BO.getOperand(1), m_APInt(C)) && C->ult(32))
      return bounded(Shape::consecutive(A.Stride * (int64_t(1) << C->getZExtValue())));
    return Shape::varying();
  default:
    return Shape::varying();
  }
}

Shape Shapes::transferGEP(const GetElementPtrInst &G) const {
  Shape Base = of(G.getPointerOperand());
  if (Base.K == Kind::None || Base.isVarying())
    return Base;
  int64_t Stride = Base.Stride;
  bool AllUniform = Base.isUniform();
  for (gep_type_iterator GTI = gep_type_begin(G), E = gep_type_end(G); GTI != E; ++GTI) {
    Shape I = of(GTI.getOperand());
    if (I.K == Kind::None)
      return I;
    if (I.isUniform())
      continue;
    AllUniform = false;
    if (I.isVarying() || GTI.isStruct() || GTI.getSequentialElementStride(DL).isScalable())
      return Shape::varying();
    Stride += I.Stride * int64_t(GTI.getSequentialElementStride(DL).getFixedValue());
  }
  return AllUniform ? Shape::uniform() : bounded(Shape::consecutive(Stride));
}

Shape Shapes::transferPhi(const PHINode &P) const {
  // Inner loop headers keep their phis (the back edge is a real edge of the vector code): a counter that every
  // lane steps alike stays uniform. Elsewhere the body is linearized and a phi becomes a select by the masks of
  // its incoming edges, varying unless every edge brings the same value.
  const Loop *In = LI.getLoopFor(P.getParent());
  bool InnerHeader = In != TL.L && In->getHeader() == P.getParent();
  Shape R = Shape::none();
  const Value *Same = P.getIncomingValue(0);
  for (const BasicBlock *Pred : P.blocks())
    if (!LI.getLoopFor(Pred)->contains(P.getParent()))
      return Shape::varying(); // leaving an inner loop: each lane's value from the trip it left in
  for (const Value *V : P.incoming_values()) {
    R = join(R, of(V));
    if (V != Same)
      Same = nullptr;
  }
  if (InnerHeader || Same)
    return R;
  return Shape::varying();
}

Shape Shapes::transfer(const Instruction &I) const {
  if (auto *P = dyn_cast<PHINode>(&I))
    return transferPhi(*P);
  if (auto *BO = dyn_cast<BinaryOperator>(&I))
    return transferBinary(*BO);
  if (auto *G = dyn_cast<GetElementPtrInst>(&I))
    return transferGEP(*G);
  if (isa<AtomicRMWInst, AtomicCmpXchgInst>(I))
    return Shape::varying();
  if (auto *L = dyn_cast<LoadInst>(&I)) {
    if (StoreInst *St = laneStoreRead(*L))
      return of(St->getValueOperand());
    Shape A = of(L->getPointerOperand());
    if (A.K == Kind::None)
      return A;
    return A.isUniform() && L->isSimple() ? A : Shape::varying();
  }
  if (auto *CB = dyn_cast<CallBase>(&I))
    if (!CB->doesNotAccessMemory())
      return Shape::varying();
  Shape R = Shape::uniform();
  for (const Value *Op : I.operands()) {
    Shape O = of(Op);
    if (O.K == Kind::None)
      return O;
    R = O.isUniform() ? R : Shape::varying();
  }
  // Conversions keep a consecutive value consecutive (the vectorizer checks at run time that an extension
  // does not wrap within the warp); everything else with a non-uniform operand varies.
  if (R.isVarying() && (isa<CastInst>(I) || isa<FreezeInst>(I))) {
    Shape O = of(I.getOperand(0));
    bool IntOrPtr = I.getType()->isIntOrPtrTy() && I.getOperand(0)->getType()->isIntOrPtrTy();
    if (O.isConsecutive() && IntOrPtr)
      return O;
  }
  return R;
}

std::string Shapes::run() {
  for (const auto &[P, Step] : TL.Inductions)
    S[P] = Shape::consecutive(Step);
  for (const auto &[P, Op] : TL.Reductions)
    S[P] = Shape::varying();
  SmallVector<Instruction *, 64> Order;
  for (BasicBlock *BB : TL.L->blocks())
    for (Instruction &I : *BB)
      if (!S.count(&I))
        Order.push_back(&I);
  fixpoint(Order);
  return privateMemory();
}

void Shapes::fixpoint(ArrayRef<Instruction *> Order) {
  // Stores of a thread's own value to a fixed place of its context, in the header (the ids a thread loop
  // stores for the thread's code): loads from there read the lane's value, and calls run per lane see it.
  auto *Ctx = TL.Header->getParent()->arg_empty() ? nullptr : TL.Header->getParent()->getArg(0);
  auto &LaneStores = const_cast<ThreadLoop &>(TL).LaneStores;
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (Instruction *I : Order) {
      if (auto *St = dyn_cast<StoreInst>(I);
          St && St->getParent() == TL.Header && Ctx && getUnderlyingObject(St->getPointerOperand()) == Ctx &&
          of(St->getPointerOperand()).isUniform() && !of(St->getValueOperand()).isUniform() &&
          of(St->getValueOperand()).K != Kind::None && !llvm::is_contained(LaneStores, St)) {
        LaneStores.push_back(St);
        Changed = true;
      }
      if (I->getType()->isVoidTy())
        continue;
      Shape Old = of(I), New = join(Old, transfer(*I));
      if (New != Old) {
        S[I] = New;
        Changed = true;
      }
    }
  }
}

std::unique_ptr<Shapes> Shapes::assuming(const Loop &L, ArrayRef<std::pair<const PHINode *, Shape>> Assumed) const {
  auto R = std::make_unique<Shapes>(*this);
  SmallVector<Instruction *, 64> Order;
  for (BasicBlock *BB : L.blocks())
    for (Instruction &I : *BB) {
      R->S.erase(&I);
      if (!llvm::any_of(Assumed, [&](auto &A) { return A.first == &I; }))
        Order.push_back(&I);
    }
  for (auto &[P, Sh] : Assumed)
    R->S[P] = Sh;
  R->fixpoint(Order);
  for (auto &[P, Sh] : Assumed)
    if (R->of(P->getIncomingValueForBlock(L.getLoopLatch())) != Sh)
      return nullptr;
  return R;
}

int64_t Shapes::strideBehind(const Value *V) const {
  SmallVector<const Value *, 8> Work{V};
  SmallPtrSet<const Value *, 16> Seen;
  int64_t Stride = 0;
  while (!Work.empty() && Seen.size() < 64) {
    const Value *X = Work.pop_back_val();
    if (!Seen.insert(X).second)
      continue;
    Shape Sh = of(X);
    if (Sh.isConsecutive()) {
      if (Stride && Stride != Sh.Stride)
        return 0;
      Stride = Sh.Stride;
    } else if (auto *P = dyn_cast<PHINode>(X); P && Sh.isVarying()) {
      Work.append(P->value_op_begin(), P->value_op_end());
    } else if (auto *Sel = dyn_cast<SelectInst>(X); Sel && Sh.isVarying()) {
      Work.push_back(Sel->getTrueValue());
      Work.push_back(Sel->getFalseValue());
    } else if (!Sh.isUniform() || !isa<Constant>(X)) {
      return 0;
    }
  }
  return Work.empty() ? Stride : 0;
}

/// ptxforge's own arrays indexed by thread (registers kept across a cut) are memory like any other. A stack slot
/// every thread uses at one address (a thread's local memory) would need a copy per lane: not done.
std::string Shapes::privateMemory() const {
  auto atOneSlot = [&](const Value *Ptr) {
    return Ptr->getType()->isPointerTy() && isa<AllocaInst>(getUnderlyingObject(Ptr)) && of(Ptr).isUniform();
  };
  for (BasicBlock *BB : TL.L->blocks())
    for (Instruction &I : *BB) {
      if (auto *St = dyn_cast<StoreInst>(&I)) {
        if (atOneSlot(St->getPointerOperand()) && !of(St->getValueOperand()).isUniform())
          return "memory private to a thread";
      } else if (I.mayWriteToMemory() && !isa<StoreInst>(I)) {
        for (const Value *Op : I.operands())
          if (atOneSlot(Op))
            return "memory private to a thread";
      }
    }
  return "";
}
