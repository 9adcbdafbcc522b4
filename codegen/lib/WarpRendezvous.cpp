// See WarpRendezvous.h. The dispatcher runs between region loops, when every live thread has stopped at a
// cut; exec/RegionRendezvous.cpp says why releasing there matches the fiber mode's rendezvous.
#include "WarpRendezvous.h"
#include "LoopCuts.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/Constants.h"

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
  default:
    return false;
  }
}

namespace {

/// How a runtime helper call maps onto a cut: the operand holding the constant mode/operation (-1: none) and
/// the operands going into each per-thread array (-1: unused).
struct HelperCut {
  llvm::StringLiteral Name;
  RegionCutKind Kind;
  int Arg, Value, B, C, Mask, PredOut;
};

constexpr HelperCut Helpers[] = {
    {"ptxrt_bar_sync", RCBarrier, -1, -1, -1, -1, -1, -1},
    {"ptxrt_shfl", RCShfl, 1, 2, 3, 4, 5, 6},
    {"ptxrt_vote", RCVote, 1, 2, -1, -1, 3, -1},
    {"ptxrt_redux", RCRedux, 1, 2, -1, -1, 3, -1},
    {"ptxrt_match", RCMatchAny, 1, 2, -1, -1, 3, 4},
    {"ptxrt_warp_sync", RCWarpSync, -1, -1, -1, -1, 1, -1},
};

/// Helpers that rendezvous in ways only fibers implement.
constexpr llvm::StringLiteral FiberOnly[] = {"ptxrt_activemask", "ptxrt_elect", "ptxrt_bar_arrive", "ptxrt_bar_red"};

const HelperCut *helperOf(const llvm::CallInst *CI) {
  const llvm::Function *Fn = CI->getCalledFunction();
  if (!Fn)
    return nullptr;
  for (const HelperCut &H : Helpers)
    if (Fn->getName() == H.Name)
      return &H;
  return nullptr;
}

} // namespace

std::optional<RegionCut> WarpRendezvous::cutOf(const llvm::CallInst *CI, bool &Unsupported) {
  const HelperCut *H = helperOf(CI);
  if (!H) {
    if (const llvm::Function *Fn = CI->getCalledFunction())
      for (llvm::StringRef Name : FiberOnly)
        Unsupported |= Fn->getName() == Name;
    return std::nullopt;
  }
  RegionCut Cut{H->Kind, 0};
  if (H->Arg >= 0) {
    auto *Arg = llvm::dyn_cast<llvm::ConstantInt>(CI->getArgOperand(H->Arg));
    if (!Arg) {
      Unsupported = true;
      return std::nullopt;
    }
    Cut.Arg = static_cast<uint32_t>(Arg->getZExtValue());
  }
  if (Cut.Kind == RCMatchAny && Cut.Arg) {
    Cut.Kind = RCMatchAll;
    Cut.Arg = 0;
  }
  return Cut;
}

llvm::AllocaInst *WarpRendezvous::slot(Slot S) {
  if (!Slots[S]) {
    static const char *const Names[NumSlots] = {"warp.value", "warp.b", "warp.c", "warp.mask", "warp.out",
                                                "warp.pred"};
    llvm::IRBuilder<> B(Setup->getTerminator());
    Slots[S] = B.CreateAlloca(S == Value ? B.getInt64Ty() : B.getInt32Ty(), nullptr, Names[S]);
    Registers.push_back(Slots[S]);
  }
  return Slots[S];
}

void WarpRendezvous::rewrite(llvm::CallInst *CI, llvm::BasicBlock *Cont) {
  const HelperCut &H = *helperOf(CI);
  llvm::IRBuilder<> B(CI);
  auto Deposit = [&](int Operand, Slot S) {
    if (Operand < 0)
      return;
    llvm::AllocaInst *A = slot(S);
    B.CreateStore(B.CreateZExtOrTrunc(CI->getArgOperand(Operand), A->getAllocatedType()), A);
  };
  Deposit(H.Value, Value);
  Deposit(H.B, OperandB);
  Deposit(H.C, OperandC);
  Deposit(H.Mask, Mask);
  // The accumulated misaligned-address bits go to the context, checked at the end of this loop, since the
  // next region starts the accumulator afresh (BarrierRegions.cpp).
  if (Misaligned) {
    llvm::Value *Field = B.CreateStructGEP(ML.ThreadCtxTy, CI->getArgOperand(0), TCMisalignedBits);
    llvm::Value *Pending = B.CreateLoad(B.getInt32Ty(), Field);
    B.CreateStore(B.CreateOr(Pending, B.CreateLoad(B.getInt32Ty(), Misaligned)), Field);
  }
  B.SetInsertPoint(Cont, Cont->getFirstInsertionPt());
  if (!CI->use_empty())
    CI->replaceAllUsesWith(B.CreateLoad(CI->getType(), slot(Out)));
  if (H.PredOut >= 0)
    B.CreateStore(B.CreateLoad(B.getInt32Ty(), slot(Pred)), CI->getArgOperand(H.PredOut));
}

llvm::Value *WarpRendezvous::emitRelease(llvm::IRBuilder<> &B, llvm::Value *Ctx, llvm::Value *States, llvm::Value *N,
                                         llvm::ArrayRef<RegionCut> Cuts,
                                         const llvm::DenseMap<llvm::AllocaInst *, llvm::Value *> &PerThread) {
  llvm::GlobalVariable *CutTable = emitCutTable(ML.Mod, *B.GetInsertBlock()->getParent(), Cuts);
  llvm::Type *Ptr = B.getPtrTy(), *I32 = B.getInt32Ty();
  llvm::FunctionCallee Release = ML.Mod.getOrInsertFunction(
      "ptxrt_region_release", I32, Ptr, Ptr, I32, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr);
  // It keeps no pointer: the arrays stay local to this function for alias analysis.
  if (auto *Fn = llvm::dyn_cast<llvm::Function>(Release.getCallee())) {
    Fn->setDoesNotThrow();
    for (unsigned A = 0; A < Fn->arg_size(); ++A)
      if (Fn->getArg(A)->getType()->isPointerTy())
        Fn->addParamAttr(A, llvm::Attribute::getWithCaptureInfo(ML.Ctx, llvm::CaptureInfo::none()));
  }
  std::vector<llvm::Value *> Args{Ctx, States, N, CutTable};
  for (unsigned S = 0; S < NumSlots; ++S) {
    auto It = Slots[S] ? PerThread.find(Slots[S]) : PerThread.end();
    Args.push_back(It == PerThread.end() ? static_cast<llvm::Value *>(llvm::ConstantPointerNull::get(B.getPtrTy()))
                                         : It->second);
  }
  return B.CreateCall(Release, Args);
}
