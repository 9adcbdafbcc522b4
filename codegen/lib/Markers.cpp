// See Markers.h. The marks are metadata, which cloning (the block functions copy the thread function) keeps.
#include "Markers.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Metadata.h"

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::detail;

namespace {

constexpr llvm::StringLiteral CutKind = "ptxforge.cut";
constexpr llvm::StringLiteral FiberOnlyKind = "ptxforge.fiber_only";
constexpr llvm::StringLiteral MisalignedKind = "ptxforge.misaligned_bits";
constexpr llvm::StringLiteral SerialKind = "ptxforge.serial_rmw";

llvm::MDNode *emptyNode(llvm::LLVMContext &C) { return llvm::MDNode::get(C, {}); }

llvm::Error contractError(const llvm::Function &F, const llvm::Twine &Rule) {
  return llvm::createStringError(std::errc::invalid_argument, "region builder contract broken in %s: %s",
                                 F.getName().str().c_str(), Rule.str().c_str());
}

llvm::Error checkCut(const llvm::Function &F, const llvm::CallInst &CI, const CutOperands &Cut) {
  int Args = static_cast<int>(CI.arg_size());
  for (int Op : {Cut.Arg, Cut.Value, Cut.B, Cut.C, Cut.Mask, Cut.PredOut})
    if (Op >= Args)
      return contractError(F, "a cut names operand " + llvm::Twine(Op) + " of a call with " + llvm::Twine(Args));
  if (Cut.Arg >= 0 && !llvm::isa<llvm::ConstantInt>(CI.getArgOperand(Cut.Arg)))
    return contractError(F, "a cut's mode operand is not a constant");
  if (Cut.PredOut >= 0 && !CI.getArgOperand(Cut.PredOut)->getType()->isPointerTy())
    return contractError(F, "a cut's predicate result is not a pointer");
  return llvm::Error::success();
}

} // namespace

void ptxforge::codegen::detail::markRegionCut(llvm::CallInst *CI, const CutOperands &Ops) {
  llvm::LLVMContext &C = CI->getContext();
  llvm::Type *I32 = llvm::Type::getInt32Ty(C);
  llvm::SmallVector<llvm::Metadata *, 7> Fields;
  for (int V : {static_cast<int>(Ops.Kind), Ops.Arg, Ops.Value, Ops.B, Ops.C, Ops.Mask, Ops.PredOut})
    Fields.push_back(llvm::ConstantAsMetadata::get(llvm::ConstantInt::getSigned(I32, V)));
  CI->setMetadata(CutKind, llvm::MDNode::get(C, Fields));
}

std::optional<CutOperands> ptxforge::codegen::detail::regionCutOf(const llvm::CallInst *CI) {
  const llvm::MDNode *N = CI->getMetadata(CutKind);
  if (!N || N->getNumOperands() != 7)
    return std::nullopt;
  int V[7];
  for (unsigned K = 0; K < 7; ++K) {
    auto *C = llvm::mdconst::dyn_extract_or_null<llvm::ConstantInt>(N->getOperand(K));
    if (!C)
      return std::nullopt;
    V[K] = static_cast<int>(C->getSExtValue());
  }
  return CutOperands{static_cast<RegionCutKind>(V[0]), V[1], V[2], V[3], V[4], V[5], V[6]};
}

void ptxforge::codegen::detail::markFiberOnly(llvm::CallInst *CI) {
  CI->setMetadata(FiberOnlyKind, emptyNode(CI->getContext()));
}

bool ptxforge::codegen::detail::isFiberOnly(const llvm::CallInst *CI) { return CI->getMetadata(FiberOnlyKind); }

void ptxforge::codegen::detail::markSerialReadModifyWrite(llvm::Instruction *Load, llvm::Instruction *Store) {
  llvm::MDNode *Pair = llvm::MDNode::getDistinct(Load->getContext(), {});
  Load->setMetadata(SerialKind, Pair);
  Store->setMetadata(SerialKind, Pair);
}

const llvm::MDNode *ptxforge::codegen::detail::serialReadModifyWriteOf(const llvm::Instruction &I) {
  return I.getMetadata(SerialKind);
}

void ptxforge::codegen::detail::markMisalignedAccumulator(llvm::AllocaInst *A) {
  A->setMetadata(MisalignedKind, emptyNode(A->getContext()));
}

llvm::AllocaInst *ptxforge::codegen::detail::misalignedAccumulatorOf(const llvm::Function &F) {
  if (F.empty())
    return nullptr;
  for (const llvm::Instruction &I : F.getEntryBlock())
    if (I.getMetadata(MisalignedKind))
      return const_cast<llvm::AllocaInst *>(llvm::dyn_cast<llvm::AllocaInst>(&I));
  return nullptr;
}

llvm::Error ptxforge::codegen::detail::checkRegionContract(const llvm::Function &F) {
  if (F.arg_size() != 2 || !F.getArg(0)->getType()->isPointerTy() || !F.getArg(1)->getType()->isPointerTy())
    return contractError(F, "not a thread function (ThreadContext *, const char *params)");
  unsigned Cuts = 0, Accumulators = 0;
  for (const llvm::Instruction &I : llvm::instructions(F)) {
    if (llvm::isa<llvm::PHINode>(I))
      return contractError(F, "a phi node (the lowering's code is phi-free; values cross regions in memory)");
    if (I.getMetadata(MisalignedKind)) {
      auto *A = llvm::dyn_cast<llvm::AllocaInst>(&I);
      if (!A || A->getParent() != &F.getEntryBlock() || !A->isStaticAlloca() ||
          !A->getAllocatedType()->isIntegerTy(32) || ++Accumulators > 1)
        return contractError(F, "the misaligned-bits accumulator is not one static i32 alloca of the entry block");
    }
    auto *CI = llvm::dyn_cast<llvm::CallInst>(&I);
    if (!CI)
      continue;
    if (isFiberOnly(CI))
      return contractError(F, "a rendezvous only fibers implement (the PTX-level check should have kept it)");
    if (std::optional<CutOperands> Cut = regionCutOf(CI)) {
      if (llvm::Error E = checkCut(F, *CI, *Cut))
        return E;
      ++Cuts;
    } else if (CI->getMetadata(CutKind)) {
      return contractError(F, "a malformed cut mark");
    }
  }
  if (!Cuts)
    return contractError(F, "no marked cut (its barriers and collectives lost their marks)");
  return llvm::Error::success();
}
