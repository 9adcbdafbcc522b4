// See Markers.h. The marks are metadata, which cloning (the block functions copy the thread function) keeps.
#include "Markers.h"

#include "ptxforge/codegen/ThreadContext.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Metadata.h"

#include <array>
#include <map>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::detail;

namespace {

constexpr llvm::StringLiteral CutKind = "ptxforge.cut";
constexpr llvm::StringLiteral FiberOnlyKind = "ptxforge.fiber_only";
constexpr llvm::StringLiteral MisalignedKind = "ptxforge.misaligned_bits";
constexpr llvm::StringLiteral SerialKind = "ptxforge.serial_rmw";
constexpr llvm::StringLiteral BlockVolatileKind = "ptxforge.block_volatile";
constexpr llvm::StringLiteral CutEdgeKind = "ptxforge.cut_edge";
constexpr llvm::StringLiteral WarpSlotKind = "ptxforge.warp_slot";
constexpr llvm::StringLiteral BlockOfThreadKind = "ptxforge.block_of_thread";

llvm::MDNode *emptyNode(llvm::LLVMContext &C) { return llvm::MDNode::get(C, {}); }

llvm::MDNode *intNode(llvm::LLVMContext &C, llvm::ArrayRef<int> Values) {
  llvm::Type *I32 = llvm::Type::getInt32Ty(C);
  llvm::SmallVector<llvm::Metadata *, 7> Fields;
  for (int V : Values)
    Fields.push_back(llvm::ConstantAsMetadata::get(llvm::ConstantInt::getSigned(I32, V)));
  return llvm::MDNode::get(C, Fields);
}

/// The N integers of a node made by intNode, or nothing when it is not one.
template <unsigned N> std::optional<std::array<int, N>> intsOf(const llvm::MDNode *Node) {
  if (!Node || Node->getNumOperands() != N)
    return std::nullopt;
  std::array<int, N> V;
  for (unsigned K = 0; K < N; ++K) {
    auto *C = llvm::mdconst::dyn_extract_or_null<llvm::ConstantInt>(Node->getOperand(K));
    if (!C)
      return std::nullopt;
    V[K] = static_cast<int>(C->getSExtValue());
  }
  return V;
}

llvm::Error contractError(const llvm::Function &F, const llvm::Twine &Rule) {
  return llvm::createStringError(std::errc::invalid_argument, "region builder contract broken in %s: %s",
                                 F.getName().str().c_str(), Rule.str().c_str());
}

llvm::Error checkCut(const llvm::Function &F, const llvm::CallInst &CI, const CutOperands &Cut) {
  int Args = static_cast<int>(CI.arg_size());
  for (int Op : {Cut.Arg, Cut.Value, Cut.B, Cut.C, Cut.Mask, Cut.PredOut, Cut.Buffer})
    if (Op >= Args)
      return contractError(F, "a cut names operand " + llvm::Twine(Op) + " of a call with " + llvm::Twine(Args));
  if (Cut.Arg >= 0 && !llvm::isa<llvm::ConstantInt>(CI.getArgOperand(Cut.Arg)))
    return contractError(F, "a cut's mode operand is not a constant");
  if (Cut.PredOut >= 0 && !CI.getArgOperand(Cut.PredOut)->getType()->isPointerTy())
    return contractError(F, "a cut's predicate result is not a pointer");
  // The dispatcher reads and writes the registers where the thread keeps them: its own alloca, which the region
  // builder makes a per-thread array.
  if (Cut.Buffer >= 0 && !llvm::isa<llvm::AllocaInst>(CI.getArgOperand(Cut.Buffer)->stripInBoundsConstantOffsets()))
    return contractError(F, "a cut's register buffer is not an alloca of the thread");
  return llvm::Error::success();
}

} // namespace

void ptxforge::codegen::detail::markRegionCut(llvm::CallInst *CI, const CutOperands &Ops) {
  CI->setMetadata(CutKind, intNode(CI->getContext(), {static_cast<int>(Ops.Kind), Ops.Arg, Ops.Value, Ops.B, Ops.C,
                                                      Ops.Mask, Ops.PredOut, Ops.Buffer}));
}

std::optional<CutOperands> ptxforge::codegen::detail::regionCutOf(const llvm::CallInst *CI) {
  std::optional<std::array<int, 8>> V = intsOf<8>(CI->getMetadata(CutKind));
  if (!V || (*V)[0] < static_cast<int>(RCBarrier) || (*V)[0] >= static_cast<int>(NumRegionCutKinds))
    return std::nullopt;
  auto [Kind, Arg, Value, B, C, Mask, PredOut, Buffer] = *V;
  return CutOperands{static_cast<RegionCutKind>(Kind), Arg, Value, B, C, Mask, PredOut, Buffer};
}

void ptxforge::codegen::detail::markCutEdge(llvm::BranchInst *Br, const CutEdge &E) {
  Br->setMetadata(CutEdgeKind, intNode(Br->getContext(), {static_cast<int>(E.Cut.Kind), static_cast<int>(E.Cut.Arg),
                                                          static_cast<int>(E.Order)}));
}

std::optional<CutEdge> ptxforge::codegen::detail::cutEdgeOf(const llvm::Instruction *Term) {
  std::optional<std::array<int, 3>> V = intsOf<3>(Term->getMetadata(CutEdgeKind));
  if (!V || (*V)[0] < static_cast<int>(RCBarrier) || (*V)[0] >= static_cast<int>(NumRegionCutKinds) || (*V)[2] < 0)
    return std::nullopt;
  return CutEdge{{static_cast<uint32_t>((*V)[0]), static_cast<uint32_t>((*V)[1])}, static_cast<unsigned>((*V)[2])};
}

void ptxforge::codegen::detail::clearCutEdge(llvm::Instruction *Term) { Term->setMetadata(CutEdgeKind, nullptr); }

void ptxforge::codegen::detail::markWarpSlot(llvm::AllocaInst *A, WarpSlot S) {
  A->setMetadata(WarpSlotKind, intNode(A->getContext(), {static_cast<int>(S)}));
}

std::optional<WarpSlot> ptxforge::codegen::detail::warpSlotOf(const llvm::Instruction &I) {
  std::optional<std::array<int, 1>> V = intsOf<1>(I.getMetadata(WarpSlotKind));
  if (!V || (*V)[0] < 0 || (*V)[0] >= static_cast<int>(NumWarpSlots))
    return std::nullopt;
  return static_cast<WarpSlot>((*V)[0]);
}

void ptxforge::codegen::detail::clearWarpSlot(llvm::Instruction &I) { I.setMetadata(WarpSlotKind, nullptr); }

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

llvm::LoadInst *ptxforge::codegen::detail::withLaunchRange(llvm::LoadInst *L, unsigned Field, unsigned Index) {
  uint64_t Low = 0, End = 0; // [Low, End)
  if (Field == TCTid && Index < 3)
    End = MaxBlockDim[Index];
  else if (Field == TCNtid && Index < 3)
    Low = 1, End = MaxBlockDim[Index] + 1;
  else if (Field == TCLaneId)
    End = 32;
  if (End && L->getType()->isIntegerTy(32))
    L->setMetadata(llvm::LLVMContext::MD_range,
                   llvm::MDBuilder(L->getContext()).createRange(llvm::APInt(32, Low), llvm::APInt(32, End)));
  return L;
}

void ptxforge::codegen::detail::markBlockVolatile(llvm::Instruction *I) {
  I->setMetadata(BlockVolatileKind, emptyNode(I->getContext()));
}

bool ptxforge::codegen::detail::isBlockVolatile(const llvm::Instruction &I) {
  return I.getMetadata(BlockVolatileKind) != nullptr;
}

void ptxforge::codegen::detail::markBlockOfThread(llvm::Instruction *Div) {
  Div->setMetadata(BlockOfThreadKind, emptyNode(Div->getContext()));
}

bool ptxforge::codegen::detail::isBlockOfThread(const llvm::Instruction &I) {
  return I.getOpcode() == llvm::Instruction::UDiv && I.getMetadata(BlockOfThreadKind);
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

bool ptxforge::codegen::detail::hasRegionMarks(const llvm::Function &F) {
  return llvm::any_of(llvm::instructions(F),
                      [](const llvm::Instruction &I) { return I.getMetadata(CutKind) || I.getMetadata(CutEdgeKind); });
}

unsigned ptxforge::codegen::detail::markedCuts(const llvm::Function &F) {
  return static_cast<unsigned>(llvm::count_if(llvm::instructions(F), [](const llvm::Instruction &I) {
    auto *CI = llvm::dyn_cast<llvm::CallInst>(&I);
    std::optional<CutEdge> E = cutEdgeOf(&I);
    return (CI && regionCutOf(CI)) || (E && !isLoopCutEdge(*E));
  }));
}

namespace {

/// The contract's rules, walked once; Rewritten: the rendezvous calls must have become cut edges (the builder's
/// input).
class ContractCheck {
public:
  ContractCheck(const llvm::Function &F, bool Rewritten) : F(F), Rewritten(Rewritten) {}

  llvm::Error run() {
    if (F.arg_size() != 2 || !F.getArg(0)->getType()->isPointerTy() || !F.getArg(1)->getType()->isPointerTy())
      return contractError(F, "not a thread function (ThreadContext *, const char *params)");
    for (const llvm::Instruction &I : llvm::instructions(F))
      if (llvm::Error E = check(I))
        return E;
    if (!Cuts)
      return contractError(F, "no marked cut (its barriers and collectives lost their marks)");
    return llvm::Error::success();
  }

private:
  llvm::Error check(const llvm::Instruction &I) {
    if (llvm::isa<llvm::PHINode>(I))
      return contractError(F, "a phi node (the lowering's code is phi-free; values cross regions in memory)");
    if (I.getMetadata(MisalignedKind) && (!isEntryAlloca(I, 32) || ++Accumulators > 1))
      return contractError(F, "the misaligned-bits accumulator is not one static i32 alloca of the entry block");
    if (I.getMetadata(WarpSlotKind)) {
      std::optional<WarpSlot> S = warpSlotOf(I);
      if (!S || !isEntryAlloca(I, isWideWarpSlot(*S) ? 64 : 32) || Slots[*S]++)
        return contractError(F, "a warp slot is not one static alloca of the entry block per slot, of its width");
    }
    if (I.getMetadata(CutEdgeKind))
      return checkEdge(I);
    auto *CI = llvm::dyn_cast<llvm::CallInst>(&I);
    if (!CI)
      return llvm::Error::success();
    if (isFiberOnly(CI))
      return contractError(F, "a rendezvous only fibers implement (the PTX-level check should have kept it)");
    if (std::optional<CutOperands> Cut = regionCutOf(CI)) {
      ++Cuts;
      if (Rewritten)
        return contractError(F, "a rendezvous call the warp rendezvous has not cut at (run ptxforge-warp-rendezvous)");
      return checkCut(F, *CI, *Cut);
    }
    if (CI->getMetadata(CutKind))
      return contractError(F, "a malformed cut mark");
    return llvm::Error::success();
  }

  llvm::Error checkEdge(const llvm::Instruction &I) {
    std::optional<CutEdge> E = cutEdgeOf(&I);
    auto *Br = llvm::dyn_cast<llvm::BranchInst>(&I);
    if (!E || !Br || !Br->isUnconditional())
      return contractError(F, "a cut edge mark that is malformed or not on an unconditional branch");
    ++Cuts;
    if (!isLoopCutEdge(*E))
      return llvm::Error::success();
    const llvm::BasicBlock *&Target = LoopTargets[E->Order];
    if (Target && Target != Br->getSuccessor(0))
      return contractError(F, "the stops of one loop cut enter different blocks");
    Target = Br->getSuccessor(0);
    return llvm::Error::success();
  }

  bool isEntryAlloca(const llvm::Instruction &I, unsigned Bits) const {
    auto *A = llvm::dyn_cast<llvm::AllocaInst>(&I);
    return A && A->getParent() == &F.getEntryBlock() && A->isStaticAlloca() && A->getAllocatedType()->isIntegerTy(Bits);
  }

  const llvm::Function &F;
  bool Rewritten;
  unsigned Cuts = 0, Accumulators = 0;
  unsigned Slots[NumWarpSlots] = {};
  std::map<unsigned, const llvm::BasicBlock *> LoopTargets;
};

} // namespace

llvm::Error ptxforge::codegen::detail::checkThreadContract(const llvm::Function &F) {
  return ContractCheck(F, false).run();
}

llvm::Error ptxforge::codegen::detail::checkRegionContract(const llvm::Function &F) {
  return ContractCheck(F, true).run();
}
