// See WarpRendezvous.h. The dispatcher runs between region loops, when every live thread has stopped at a
// cut; exec/RegionRendezvous.cpp says why releasing there matches the fiber mode's rendezvous.
#include "WarpRendezvous.h"
#include "LoopCuts.h"
#include "Markers.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"

using namespace ptxforge;
using namespace ptxforge::codegen;
using namespace ptxforge::codegen::detail;
using ptx::Modifier;
using ptx::Opcode;

bool ptxforge::codegen::detail::isRegionCutCollective(const ptx::Instruction &I) {
  switch (I.Op) {
  case Opcode::Shfl: // without .sync or a mask operand the member mask is %activemask: fibers decide that
    return I.has(Modifier::Sync) && I.Operands.size() >= 5;
  case Opcode::Vote:
    return I.has(Modifier::Sync) && I.Operands.size() >= 3;
  case Opcode::Redux:
    return I.Operands.size() >= 3 && !ptx::isFloat(I.type());
  case Opcode::Match:
    return I.Operands.size() >= 3;
  case Opcode::Bar:
  case Opcode::Barrier:
    return I.has(Modifier::Warp) && !I.Operands.empty();
  case Opcode::Ldmatrix: // every lane of the warp, as the dispatcher releases them (lower/MatrixOps.cpp)
  case Opcode::Stmatrix:
  case Opcode::Movmatrix:
    return !isFiberOnlyMatrixForm(I);
  case Opcode::Mma: // mma.sp expands its sparse A in a rendezvous of its own
    return !I.has(Modifier::Sp) && !I.has(Modifier::Sp_OrderedMetadata) && !isFiberOnlyMatrixForm(I);
  case Opcode::Wmma: // loads and stores are each lane's own accesses
    return I.has(Modifier::Mma);
  default:
    return false;
  }
}

std::optional<RegionCut> ptxforge::codegen::detail::callCutOf(const llvm::CallInst *CI) {
  std::optional<CutOperands> Ops = regionCutOf(CI);
  if (!Ops)
    return std::nullopt;
  RegionCut Cut{Ops->Kind, 0};
  if (Ops->Arg >= 0) // a constant: checkThreadContract made sure
    Cut.Arg = static_cast<uint32_t>(llvm::cast<llvm::ConstantInt>(CI->getArgOperand(Ops->Arg))->getZExtValue());
  if (Cut.Kind == RCMatchAny && Cut.Arg) {
    Cut.Kind = RCMatchAll;
    Cut.Arg = 0;
  }
  return Cut;
}

llvm::BasicBlock::iterator ptxforge::codegen::detail::gatherEntryAllocas(llvm::Function &F) {
  llvm::BasicBlock &Entry = F.getEntryBlock();
  std::vector<llvm::AllocaInst *> EntryAllocas;
  for (llvm::Instruction &I : Entry)
    if (auto *A = llvm::dyn_cast<llvm::AllocaInst>(&I); A && A->isStaticAlloca())
      EntryAllocas.push_back(A);
  for (llvm::AllocaInst *A : llvm::reverse(EntryAllocas))
    A->moveBefore(Entry.begin());
  llvm::BasicBlock::iterator FirstCode = Entry.begin();
  while (llvm::isa<llvm::AllocaInst>(*FirstCode))
    ++FirstCode;
  return FirstCode;
}

namespace {

/// cutAtRendezvous for one function, and the warp slots it made so far.
class Rewriter {
public:
  Rewriter(llvm::Function &F, llvm::StructType *ThreadCtxTy)
      : F(F), ThreadCtxTy(ThreadCtxTy), Misaligned(misalignedAccumulatorOf(F)) {}

  /// Cuts F after CI, a marked rendezvous: the branch there becomes its cut edge, and CI goes. A collective
  /// deposits its inputs before the edge and its results are read after it.
  void cut(llvm::CallInst *CI, const RegionCut &Cut) {
    bool Barrier = Cut.Kind == RCBarrier, Lockstep = Cut.Kind == RCLoop;
    llvm::BasicBlock *Cont = CI->getParent()->splitBasicBlock(CI->getNextNode(), Barrier    ? "after.barrier"
                                                                                 : Lockstep ? "after.lockstep"
                                                                                            : "after.collective");
    markCutEdge(llvm::cast<llvm::BranchInst>(CI->getParent()->getTerminator()), {Cut});
    if (!Barrier && !Lockstep)
      rewrite(CI, Cont);
    CI->eraseFromParent();
  }

private:
  void rewrite(llvm::CallInst *CI, llvm::BasicBlock *Cont) {
    const CutOperands H = *regionCutOf(CI);
    llvm::IRBuilder<> B(CI);
    auto Deposit = [&](int Operand, WarpSlot S) {
      if (Operand < 0)
        return;
      llvm::AllocaInst *A = slot(S);
      llvm::Value *V = CI->getArgOperand(Operand);
      if (V->getType()->isPointerTy()) // an address: the row of ldmatrix, the registers of a matrix collective
        V = B.CreatePtrToInt(V, B.getInt64Ty());
      B.CreateStore(B.CreateZExtOrTrunc(V, A->getAllocatedType()), A);
    };
    Deposit(H.Value, WSValue);
    Deposit(H.B, WSOperandB);
    Deposit(H.C, WSOperandC);
    Deposit(H.Buffer, WSBuffer);
    // A collective without a member mask (the matrix ones) is the whole warp's: lanes meet by their masks.
    if (H.Mask >= 0)
      Deposit(H.Mask, WSMask);
    else
      B.CreateStore(B.getInt32(~0u), slot(WSMask));
    // The accumulated misaligned-address bits go to the context, checked at the end of the region's loop,
    // since the next region starts the accumulator afresh (BarrierRegions.cpp).
    if (Misaligned) {
      llvm::Value *Field = B.CreateStructGEP(ThreadCtxTy, F.getArg(0), TCMisalignedBits);
      llvm::Value *Pending = B.CreateLoad(B.getInt32Ty(), Field);
      B.CreateStore(B.CreateOr(Pending, B.CreateLoad(B.getInt32Ty(), Misaligned)), Field);
    }
    B.SetInsertPoint(Cont, Cont->getFirstInsertionPt());
    if (!CI->use_empty())
      CI->replaceAllUsesWith(B.CreateLoad(CI->getType(), slot(WSOut)));
    if (H.PredOut >= 0)
      B.CreateStore(B.CreateLoad(B.getInt32Ty(), slot(WSPred)), CI->getArgOperand(H.PredOut));
  }

  llvm::AllocaInst *slot(WarpSlot S) {
    if (!Slots[S]) {
      static const char *const Names[NumWarpSlots] = {"warp.value", "warp.b",    "warp.c",     "warp.mask",
                                                      "warp.out",   "warp.pred", "warp.buffer"};
      // After the entry block's allocas (gathered at its top), in the order of first use.
      llvm::BasicBlock::iterator At = F.getEntryBlock().begin();
      while (llvm::isa<llvm::AllocaInst>(*At))
        ++At;
      llvm::IRBuilder<> B(&F.getEntryBlock(), At);
      Slots[S] = B.CreateAlloca(isWideWarpSlot(S) ? B.getInt64Ty() : B.getInt32Ty(), nullptr, Names[S]);
      markWarpSlot(Slots[S], S);
    }
    return Slots[S];
  }

  llvm::Function &F;
  llvm::StructType *ThreadCtxTy;
  llvm::AllocaInst *Misaligned;
  llvm::AllocaInst *Slots[NumWarpSlots] = {};
};

} // namespace

llvm::Expected<bool> ptxforge::codegen::detail::cutAtRendezvous(llvm::Function &F, llvm::StructType *ThreadCtxTy) {
  if (llvm::Error E = checkThreadContract(F))
    return E;
  std::vector<std::pair<llvm::CallInst *, RegionCut>> Found;
  for (llvm::Instruction &I : llvm::instructions(F))
    if (auto *CI = llvm::dyn_cast<llvm::CallInst>(&I))
      if (std::optional<RegionCut> Cut = callCutOf(CI))
        Found.push_back({CI, *Cut});
  if (Found.empty())
    return false;
  gatherEntryAllocas(F);
  Rewriter R(F, ThreadCtxTy);
  for (auto &[CI, Cut] : Found)
    R.cut(CI, Cut);
  return true;
}

ptxforge::codegen::detail::WarpRendezvous::WarpRendezvous(ModuleLowering &ML, llvm::Function &F) : ML(ML) {
  for (llvm::Instruction &I : F.getEntryBlock())
    if (std::optional<WarpSlot> S = warpSlotOf(I)) {
      Slots[*S] = llvm::cast<llvm::AllocaInst>(&I);
      Registers.push_back(Slots[*S]);
      clearWarpSlot(I);
    }
}

llvm::Value *WarpRendezvous::arrayOf(Slot S, const llvm::DenseMap<llvm::AllocaInst *, llvm::Value *> &PerThread) const {
  auto It = Slots[S] ? PerThread.find(Slots[S]) : PerThread.end();
  return It == PerThread.end() ? nullptr : It->second;
}

llvm::Value *WarpRendezvous::emitRelease(llvm::IRBuilder<> &B, llvm::Value *Ctx, llvm::Value *States, llvm::Value *N,
                                         llvm::Value *Span, llvm::ArrayRef<RegionCut> Cuts,
                                         const llvm::DenseMap<llvm::AllocaInst *, llvm::Value *> &PerThread) {
  llvm::GlobalVariable *CutTable = emitCutTable(ML.Mod, *B.GetInsertBlock()->getParent(), Cuts);
  llvm::Type *Ptr = B.getPtrTy(), *I32 = B.getInt32Ty();
  llvm::FunctionCallee Release = ML.Mod.getOrInsertFunction("ptxrt_region_release", I32, Ptr, Ptr, I32, Ptr, Ptr, Ptr,
                                                            Ptr, Ptr, Ptr, Ptr, Ptr, Ptr);
  // It keeps no pointer: the arrays stay local to this function for alias analysis.
  if (auto *Fn = llvm::dyn_cast<llvm::Function>(Release.getCallee())) {
    Fn->setDoesNotThrow();
    for (unsigned A = 0; A < Fn->arg_size(); ++A)
      if (Fn->getArg(A)->getType()->isPointerTy())
        Fn->addParamAttr(A, llvm::Attribute::getWithCaptureInfo(ML.Ctx, llvm::CaptureInfo::none()));
  }
  std::vector<llvm::Value *> Args{Ctx, States, N, Span, CutTable};
  for (unsigned S = 0; S < NumWarpSlots; ++S) {
    llvm::Value *Array = arrayOf(static_cast<Slot>(S), PerThread);
    Args.push_back(Array ? Array : llvm::ConstantPointerNull::get(B.getPtrTy()));
  }
  return B.CreateCall(Release, Args);
}

llvm::BasicBlock *WarpRendezvous::emitWarpRelease(const RegionCut &Cut, llvm::Value *Span, llvm::Value *Rows,
                                                  const llvm::DenseMap<llvm::AllocaInst *, llvm::Value *> &PerThread,
                                                  llvm::BasicBlock *Released, llvm::BasicBlock *Otherwise) {
  auto array = [&](Slot S) { return arrayOf(S, PerThread); };
  WarpArrays A{array(WSValue), array(WSOperandB), array(WSOperandC), array(WSMask), array(WSOut), array(WSPred)};
  bool Shuffle = Cut.Kind == RCShfl && A.B && A.C && A.Value;
  bool Reduce = (Cut.Kind == RCVote || Cut.Kind == RCRedux) && A.Value;
  // bar.warp.sync: whole warps with full masks are complete; nothing to compute.
  bool Sync = Cut.Kind == RCWarpSync;
  if (!Span || !A.Mask || !(Shuffle || Reduce || Sync))
    return nullptr;
  llvm::LLVMContext &C = ML.Ctx;
  llvm::Function *F = Released->getParent();
  llvm::BasicBlock *Check = llvm::BasicBlock::Create(C, "warp.local", F);
  llvm::BasicBlock *Loop = llvm::BasicBlock::Create(C, Shuffle ? "warp.local.shfl" : "warp.local.reduce", F);
  llvm::BasicBlock *Done = llvm::BasicBlock::Create(C, "warp.local.done", F);
  llvm::IRBuilder<> B(Check);
  llvm::Type *I32 = B.getInt32Ty();
  llvm::Value *Begin = B.CreateLoad(I32, Span);
  llvm::Value *Count =
      B.CreateMul(B.CreateSub(B.CreateLoad(I32, B.CreateConstInBoundsGEP1_32(I32, Span, 1)), Begin), Rows);
  llvm::Value *End = B.CreateAdd(Begin, Count);
  // Whole warps only: a lane beyond the block's last thread does not exist, and the runtime decides then.
  llvm::Value *Whole = B.CreateAnd(B.CreateICmpEQ(B.CreateAnd(B.CreateOr(Begin, Count), 31), B.getInt32(0)),
                                   B.CreateICmpNE(Count, B.getInt32(0)));
  B.CreateCondBr(Whole, Loop, Otherwise);

  // The loop steps by a thread (shuffles) or a warp (votes, reductions); the member masks are AND-ed on the way
  // and must all be full, else the runtime recomputes.
  B.SetInsertPoint(Loop);
  llvm::PHINode *T = B.CreatePHI(I32, 2, "t");
  llvm::PHINode *AllMasks = B.CreatePHI(I32, 2, "masks");
  T->addIncoming(Begin, Check);
  AllMasks->addIncoming(B.getInt32(~0u), Check);
  llvm::Value *Masks = Shuffle ? emitShuffle(B, Cut, A, T, AllMasks) : emitWarpReduction(B, Cut, A, T, AllMasks);
  llvm::Value *Next = B.CreateAdd(T, B.getInt32(Shuffle ? 1 : 32));
  T->addIncoming(Next, Loop);
  AllMasks->addIncoming(Masks, Loop);
  B.CreateCondBr(B.CreateICmpULT(Next, End), Loop, Done);
  B.SetInsertPoint(Done);
  B.CreateCondBr(B.CreateICmpEQ(Masks, B.getInt32(~0u)), Released, Otherwise);
  return Check;
}

llvm::Value *WarpRendezvous::emitShuffle(llvm::IRBuilder<> &B, const RegionCut &Cut, const WarpArrays &A,
                                         llvm::Value *T, llvm::Value *Masks) {
  // Lane T's source as computeShfl (exec/WarpCollectives.cpp) finds it, for a warp whose 32 lanes all take part.
  llvm::Type *I32 = B.getInt32Ty(), *I64 = B.getInt64Ty();
  llvm::Value *T64 = B.CreateZExt(T, I64);
  auto load = [&](llvm::Value *Arr) { return B.CreateLoad(I32, B.CreateGEP(I32, Arr, T64)); };
  llvm::Value *AllMasks = B.CreateAnd(Masks, load(A.Mask));
  llvm::Value *Lane = B.CreateAnd(T, 31);
  llvm::Value *Bv = B.CreateAnd(load(A.B), 31), *Cv = load(A.C);
  llvm::Value *Clamp = B.CreateAnd(Cv, 31), *Seg = B.CreateAnd(B.CreateLShr(Cv, 8), 31);
  llvm::Value *MaxLane = B.CreateOr(B.CreateAnd(Lane, Seg), B.CreateAnd(Clamp, B.CreateNot(Seg)));
  llvm::Value *J, *P;
  switch (Cut.Arg) {
  case 0: // up
    J = B.CreateSub(Lane, Bv);
    P = B.CreateICmpSGE(J, MaxLane);
    break;
  case 1: // down
    J = B.CreateAdd(Lane, Bv);
    P = B.CreateICmpSLE(J, MaxLane);
    break;
  case 2: // bfly
    J = B.CreateXor(Lane, Bv);
    P = B.CreateICmpSLE(J, MaxLane);
    break;
  default: // idx
    J = B.CreateOr(B.CreateAnd(Lane, Seg), B.CreateAnd(Bv, B.CreateNot(Seg)));
    P = B.CreateICmpSLE(J, MaxLane);
    break;
  }
  J = B.CreateSelect(P, J, Lane);
  if (A.Out) {
    llvm::Value *Src = B.CreateZExt(B.CreateOr(B.CreateAnd(T, ~31u), J), I64);
    llvm::Value *V = B.CreateTrunc(B.CreateLoad(I64, B.CreateGEP(I64, A.Value, Src)), I32);
    B.CreateStore(V, B.CreateGEP(I32, A.Out, T64));
  }
  if (A.Pred)
    B.CreateStore(B.CreateZExt(P, I32), B.CreateGEP(I32, A.Pred, T64));
  return AllMasks;
}

llvm::Value *WarpRendezvous::emitWarpReduction(llvm::IRBuilder<> &B, const RegionCut &Cut, const WarpArrays &A,
                                               llvm::Value *T, llvm::Value *Masks) {
  // The warp whose lane 0 is thread T, as one 32-lane vector: computeVote and computeRedux
  // (exec/WarpCollectives.cpp) for a warp whose 32 lanes all take part; bar.warp.sync only checks the masks.
  llvm::Type *I32 = B.getInt32Ty(), *I64 = B.getInt64Ty();
  auto *V32 = llvm::FixedVectorType::get(I32, 32), *V64 = llvm::FixedVectorType::get(I64, 32);
  llvm::Value *T64 = B.CreateZExt(T, I64);
  auto warp = [&](llvm::Type *Ty, llvm::Value *Arr) {
    return B.CreateAlignedLoad(Ty, B.CreateGEP(Ty->getScalarType(), Arr, T64), llvm::Align(4));
  };
  llvm::Value *AllMasks = B.CreateAnd(Masks, B.CreateAndReduce(warp(V32, A.Mask)));
  if (Cut.Kind == RCWarpSync)
    return AllMasks;
  llvm::Value *Values = warp(V64, A.Value);
  llvm::Value *R;
  if (Cut.Kind == RCVote) {
    llvm::Value *Ballot = B.CreateBitCast(B.CreateICmpNE(Values, llvm::Constant::getNullValue(V64)), I32);
    auto all = [&] { return B.CreateICmpEQ(Ballot, B.getInt32(~0u)); };
    auto none = [&] { return B.CreateICmpEQ(Ballot, B.getInt32(0)); };
    switch (Cut.Arg) {
    case 0:
      R = B.CreateZExt(all(), I32);
      break;
    case 1:
      R = B.CreateZExt(B.CreateNot(none()), I32);
      break;
    case 2:
      R = B.CreateZExt(B.CreateOr(all(), none()), I32);
      break;
    default:
      R = Ballot;
      break;
    }
  } else {
    llvm::Value *V = B.CreateTrunc(Values, V32);
    switch (Cut.Arg) {
    case 0:
      R = B.CreateAddReduce(V);
      break;
    case 1:
      R = B.CreateIntMinReduce(V, /*IsSigned=*/false);
      break;
    case 2:
      R = B.CreateIntMaxReduce(V, /*IsSigned=*/false);
      break;
    case 3:
      R = B.CreateIntMinReduce(V, /*IsSigned=*/true);
      break;
    case 4:
      R = B.CreateIntMaxReduce(V, /*IsSigned=*/true);
      break;
    case 5:
      R = B.CreateAndReduce(V);
      break;
    case 6:
      R = B.CreateOrReduce(V);
      break;
    default:
      R = B.CreateXorReduce(V);
      break;
    }
  }
  if (A.Out)
    B.CreateAlignedStore(B.CreateVectorSplat(32, R), B.CreateGEP(I32, A.Out, T64), llvm::Align(4));
  return AllMasks;
}
