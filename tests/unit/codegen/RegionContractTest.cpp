// The region passes' contracts with the lowering and with each other (codegen/lib/Markers.h): each rule broken on
// purpose gives an error naming it, and a lowering that asks for it (RegionSplitFailureIsError) fails rather than
// quietly running a kernel on fibers. The corpus sweep holds every GPU-recorded conformance kernel to that.
#include "LoopCuts.h"
#include "Markers.h"
#include "TestKernels.h"
#include "WarpRendezvous.h"
#include "ptxforge/codegen/Lowering.h"
#include "ptxforge/ptx/Frontend.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/Support/SourceMgr.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

using namespace ptxforge;
using namespace ptxforge::codegen;

namespace {

struct Lowered {
  std::unique_ptr<ptx::FrontendResult> Front;
  LoweredModule LM;
};

llvm::Expected<LoweredModule> lower(const std::string &Name, const std::string &Text, bool BlockFunctions,
                                    std::unique_ptr<ptx::FrontendResult> &Front) {
  Front = ptx::runFrontend(std::make_unique<ptx::SourceBuffer>(Name, Text));
  REQUIRE(Front->ok());
  LoweringOptions LO;
  LO.BlockFunctions = BlockFunctions;
  LO.RegionSplitFailureIsError = true;
  return lowerToLLVM(*Front->Verified, Front->Source.get(), LO);
}

/// The thread function of testing::BlockReducePtx, lowered without block functions so a test can break it first.
Lowered threadFunction() {
  Lowered L;
  auto LM = lower("reduce.ptx", testing::BlockReducePtx, false, L.Front);
  REQUIRE(static_cast<bool>(LM));
  L.LM = std::move(*LM);
  return L;
}

llvm::Function &reduceThread(Lowered &L) {
  llvm::Function *F = L.LM.Module->getFunction("__ptx_kernel_reduce");
  REQUIRE(F != nullptr);
  return *F;
}

std::string message(llvm::Error E) { return E ? llvm::toString(std::move(E)) : std::string(); }
std::string contractError(llvm::Function &F) { return message(detail::checkThreadContract(F)); }
std::string regionContractError(llvm::Function &F) { return message(detail::checkRegionContract(F)); }

/// The thread function as the region builder takes it: the warp rendezvous and the loop cuts have run.
void rewriteForBuilder(llvm::Function &F) {
  llvm::StructType *Ctx = llvm::StructType::getTypeByName(F.getContext(), "ThreadContext");
  REQUIRE(Ctx != nullptr);
  llvm::Expected<bool> Rewritten = detail::cutAtRendezvous(F, Ctx);
  REQUIRE(static_cast<bool>(Rewritten));
  CHECK(*Rewritten);
  llvm::Expected<bool> Cut = detail::cutLoops(F, LoweringOptions().RegionCutBudget);
  REQUIRE(static_cast<bool>(Cut));
}

std::vector<llvm::BranchInst *> cutEdges(llvm::Function &F, bool LoopCuts) {
  std::vector<llvm::BranchInst *> Edges;
  for (llvm::BasicBlock &BB : F)
    if (std::optional<detail::CutEdge> E = detail::cutEdgeOf(BB.getTerminator());
        E && detail::isLoopCutEdge(*E) == LoopCuts)
      Edges.push_back(llvm::cast<llvm::BranchInst>(BB.getTerminator()));
  return Edges;
}

std::vector<llvm::CallInst *> markedCuts(llvm::Function &F) {
  std::vector<llvm::CallInst *> Cuts;
  for (llvm::Instruction &I : llvm::instructions(F))
    if (auto *CI = llvm::dyn_cast<llvm::CallInst>(&I); CI && detail::regionCutOf(CI))
      Cuts.push_back(CI);
  return Cuts;
}

} // namespace

TEST_CASE("the lowering's thread function keeps the region builder's contract") {
  Lowered L = threadFunction();
  llvm::Function &F = reduceThread(L);
  CHECK(contractError(F).empty());
  // Two barriers and a shuffle, each marked with the operands the rendezvous reads.
  std::vector<llvm::CallInst *> Cuts = markedCuts(F);
  REQUIRE(Cuts.size() == 3);
  auto Shfl = detail::regionCutOf(Cuts.back());
  CHECK(Shfl->Kind == RCShfl);
  CHECK(Shfl->Arg == 1);
  CHECK(Shfl->PredOut == 6);
  CHECK(detail::misalignedAccumulatorOf(F) != nullptr);
}

TEST_CASE("each broken rule of the contract is an error that names it") {
  SUBCASE("a phi node") {
    Lowered L = threadFunction();
    llvm::Function &F = reduceThread(L);
    llvm::BasicBlock &BB = *std::next(F.begin());
    llvm::IRBuilder<> B(&BB, BB.begin());
    llvm::PHINode *P = B.CreatePHI(B.getInt32Ty(), 0, "stray");
    for (llvm::BasicBlock *Pred : llvm::predecessors(&BB))
      P->addIncoming(B.getInt32(0), Pred);
    CHECK(contractError(F).find("phi node") != std::string::npos);
  }
  SUBCASE("cuts that lost their marks") {
    Lowered L = threadFunction();
    llvm::Function &F = reduceThread(L);
    for (llvm::CallInst *CI : markedCuts(F))
      CI->setMetadata("ptxforge.cut", nullptr);
    CHECK(contractError(F).find("no marked cut") != std::string::npos);
  }
  SUBCASE("a malformed mark") {
    Lowered L = threadFunction();
    llvm::Function &F = reduceThread(L);
    llvm::CallInst *CI = markedCuts(F).front();
    CI->setMetadata("ptxforge.cut", llvm::MDNode::get(F.getContext(), {}));
    CHECK(contractError(F).find("malformed cut mark") != std::string::npos);
  }
  SUBCASE("a mark naming an operand the call does not have") {
    Lowered L = threadFunction();
    llvm::Function &F = reduceThread(L);
    llvm::CallInst *CI = markedCuts(F).front();
    detail::markRegionCut(CI, {RCBarrier, -1, /*Value=*/9});
    CHECK(contractError(F).find("names operand 9") != std::string::npos);
  }
  SUBCASE("a shuffle whose mode is not a constant") {
    Lowered L = threadFunction();
    llvm::Function &F = reduceThread(L);
    llvm::CallInst *Shfl = markedCuts(F).back();
    llvm::IRBuilder<> B(Shfl);
    llvm::Value *Mode = B.CreateLoad(B.getInt32Ty(), detail::misalignedAccumulatorOf(F));
    Shfl->setArgOperand(1, Mode);
    CHECK(contractError(F).find("mode operand is not a constant") != std::string::npos);
  }
  SUBCASE("a matrix collective's registers that are not the thread's own alloca") {
    Lowered L = threadFunction();
    llvm::Function &F = reduceThread(L);
    llvm::CallInst *Shfl = markedCuts(F).back();
    detail::CutOperands Ops = *detail::regionCutOf(Shfl);
    Ops.Buffer = 1; // the mode, a constant: the dispatcher could not write the registers back
    detail::markRegionCut(Shfl, Ops);
    CHECK(contractError(F).find("register buffer is not an alloca") != std::string::npos);
  }
  SUBCASE("a rendezvous only fibers implement") {
    Lowered L = threadFunction();
    llvm::Function &F = reduceThread(L);
    detail::markFiberOnly(markedCuts(F).front());
    CHECK(contractError(F).find("only fibers implement") != std::string::npos);
  }
  SUBCASE("a second misaligned-bits accumulator") {
    Lowered L = threadFunction();
    llvm::Function &F = reduceThread(L);
    llvm::IRBuilder<> B(&F.getEntryBlock(), F.getEntryBlock().begin());
    detail::markMisalignedAccumulator(B.CreateAlloca(B.getInt32Ty()));
    CHECK(contractError(F).find("misaligned-bits accumulator") != std::string::npos);
  }
  SUBCASE("not a thread function") {
    Lowered L = threadFunction();
    llvm::Function *Other = L.LM.Module->getFunction("ptxrt_bar_sync");
    REQUIRE(Other != nullptr);
    CHECK(contractError(*Other).find("not a thread function") != std::string::npos);
  }
}

TEST_CASE("the warp rendezvous and the loop cuts leave what the region builder reads") {
  Lowered L = threadFunction();
  llvm::Function &F = reduceThread(L);
  // Before the warp rendezvous the barriers and the shuffle are calls the builder cannot cut at.
  CHECK(regionContractError(F).find("has not cut at") != std::string::npos);
  rewriteForBuilder(F);
  CHECK(regionContractError(F).empty());
  // Each rendezvous became a cut edge with its {kind, arg}, the shuffle's with slots marked for the release.
  std::vector<llvm::BranchInst *> Rendezvous = cutEdges(F, false);
  REQUIRE(Rendezvous.size() == 3);
  CHECK(detail::cutEdgeOf(Rendezvous[0])->Cut.Kind == RCBarrier);
  CHECK(detail::cutEdgeOf(Rendezvous[2])->Cut.Kind == RCShfl);
  CHECK(detail::cutEdgeOf(Rendezvous[2])->Cut.Arg == 1);
  CHECK(markedCuts(F).empty());
  unsigned Slots = 0;
  for (llvm::Instruction &I : F.getEntryBlock())
    Slots += detail::warpSlotOf(I).has_value();
  CHECK(Slots == 6);
}

TEST_CASE("each broken rule of the passes' own marks is an error that names it") {
  Lowered L = threadFunction();
  llvm::Function &F = reduceThread(L);
  rewriteForBuilder(F);
  llvm::BranchInst *Edge = cutEdges(F, false).back();
  SUBCASE("a cut edge on a conditional branch") {
    llvm::BasicBlock *Next = Edge->getSuccessor(0);
    llvm::IRBuilder<> B(Edge);
    llvm::BranchInst *Cond = B.CreateCondBr(B.getTrue(), Next, Next);
    detail::markCutEdge(Cond, *detail::cutEdgeOf(Edge));
    Edge->eraseFromParent();
    CHECK(regionContractError(F).find("not on an unconditional branch") != std::string::npos);
  }
  SUBCASE("two stops of one loop cut entering different blocks") {
    llvm::BranchInst *Other = nullptr;
    for (llvm::BasicBlock &BB : F)
      if (auto *Br = llvm::dyn_cast<llvm::BranchInst>(BB.getTerminator());
          Br && Br != Edge && Br->isUnconditional() && Br->getSuccessor(0) != Edge->getSuccessor(0))
        Other = Br;
    REQUIRE(Other != nullptr);
    detail::markCutEdge(Edge, {{RCLoop, 0}, 7});
    detail::markCutEdge(Other, {{RCLoop, 0}, 7});
    CHECK(regionContractError(F).find("enter different blocks") != std::string::npos);
  }
  SUBCASE("a warp slot of the wrong width") {
    llvm::IRBuilder<> B(&F.getEntryBlock(), F.getEntryBlock().begin());
    detail::markWarpSlot(B.CreateAlloca(B.getInt16Ty()), detail::WSMask);
    CHECK(regionContractError(F).find("warp slot") != std::string::npos);
  }
  SUBCASE("a second slot for the same value") {
    llvm::IRBuilder<> B(&F.getEntryBlock(), F.getEntryBlock().begin());
    detail::markWarpSlot(B.CreateAlloca(B.getInt64Ty()), detail::WSValue);
    CHECK(regionContractError(F).find("warp slot") != std::string::npos);
  }
}

TEST_CASE("a region kernel gets its block function when a failed split is an error") {
  std::unique_ptr<ptx::FrontendResult> Front;
  auto LM = lower("reduce.ptx", testing::BlockReducePtx, true, Front);
  REQUIRE(static_cast<bool>(LM));
  REQUIRE(LM->Kernels.size() == 1);
  CHECK(LM->Kernels[0].BlockSymbol == "__ptx_block_reduce");
}

// Every conformance kernel the region builder takes on must split: a failure here is a lowering change that
// broke the contract, which users would only see as a slower kernel.
TEST_CASE("every GPU-recorded conformance module lowers with region-split failures as errors") {
  namespace fs = std::filesystem;
  fs::path Corpus = fs::path(PTXFORGE_SHARED_DIR) / "conformance";
  if (!fs::exists(Corpus)) {
    MESSAGE("skipped: no conformance corpus at " << Corpus.string());
    return;
  }
  size_t Modules = 0, WithBlocks = 0;
  for (const fs::directory_entry &E : fs::recursive_directory_iterator(Corpus)) {
    if (E.path().extension() != ".ptx")
      continue;
    std::ifstream In(E.path());
    std::stringstream SS;
    SS << In.rdbuf();
    std::unique_ptr<ptx::FrontendResult> Front =
        ptx::runFrontend(std::make_unique<ptx::SourceBuffer>(E.path().string(), SS.str()));
    if (!Front->ok())
      continue; // modules this device cannot load are the loader's business, not the builder's
    LoweringOptions LO;
    LO.RegionSplitFailureIsError = true;
    auto LM = lowerToLLVM(*Front->Verified, Front->Source.get(), LO);
    INFO(E.path().string());
    REQUIRE_MESSAGE(static_cast<bool>(LM), (LM ? "" : llvm::toString(LM.takeError())));
    ++Modules;
    for (const KernelInfo &K : LM->Kernels)
      WithBlocks += !K.BlockSymbol.empty();
  }
  CHECK(Modules > 100);
  CHECK(WithBlocks > 100);
}

// A region's uniform candidates are registers whose values feed addresses through other registers. A helper's
// buffer (an array alloca: a matrix collective's fragments, which every mma of a kernel passes through) is no
// register: searching through it reached most of compute_gemm (2,000 wmma) from every load, minutes of compile.
TEST_CASE("a register whose value reaches an address only through a helper's buffer is no uniform candidate") {
  llvm::LLVMContext Ctx;
  llvm::SMDiagnostic Err;
  std::unique_ptr<llvm::Module> M = llvm::parseAssemblyString(R"(
define void @f(ptr %p) {
entry:
  %counter = alloca i32
  %index = alloca i32
  %buffer = alloca i32, i32 4
  br label %region
region:
  %c = load i32, ptr %counter
  store i32 %c, ptr %buffer
  %b = load i32, ptr %buffer
  %i = load i32, ptr %index
  %at = getelementptr i32, ptr %p, i32 %i
  %v = load i32, ptr %at
  %at2 = getelementptr i32, ptr %p, i32 %b
  store i32 %v, ptr %at2
  ret void
}
)",
                                                              Err, Ctx);
  REQUIRE(M != nullptr);
  llvm::Function &F = *M->getFunction("f");
  llvm::DenseMap<llvm::AllocaInst *, llvm::Value *> PerThread;
  llvm::AllocaInst *Index = nullptr;
  for (llvm::Instruction &I : F.getEntryBlock())
    if (auto *A = llvm::dyn_cast<llvm::AllocaInst>(&I)) {
      PerThread[A] = A; // the arrays themselves do not matter to the search
      if (A->getName() == "index")
        Index = A;
    }
  llvm::BasicBlock *Region = &*std::next(F.begin());
  std::vector<llvm::AllocaInst *> Found = detail::uniformCandidates(
      {Region}, [](const llvm::Instruction *) { return false; }, PerThread);
  // The index feeds an address; the counter only through the buffer.
  REQUIRE(Found.size() == 1);
  CHECK(Found[0] == Index);
}
