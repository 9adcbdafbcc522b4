// The -O pipeline with ptxforge's passes hooked in (see passes/Passes.h for what each is for).
#include "ptxforge/codegen/Optimize.h"
#include "ptxforge/codegen/Lowering.h"

#include "ThreadLoop.h"
#include "passes/Passes.h"

#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <mutex>
#include <optional>
#include <string>

using namespace ptxforge::codegen;

namespace {
/// Whether setProcessLLVMOptions ran: LLVM was asked for something (remarks, timings, printing), so ptxforge's
/// compiles instrument their passes and keep LLVM's remarks.
std::atomic<bool> LLVMOptionsGiven{false};

/// The thread loops carry vectorization hints (widenThreadLoops), and LLVM reports why a hinted loop is not
/// vectorized on stderr whether or not remarks were asked for: for a JIT that is noise in the user's program's
/// output. Unless setProcessLLVMOptions asked LLVM for something, optimization remarks are dropped.
struct QuietRemarks : llvm::DiagnosticHandler {
  bool handleDiagnostics(const llvm::DiagnosticInfo &DI) override {
    return !LLVMOptionsGiven.load(std::memory_order_relaxed) && llvm::isa<llvm::DiagnosticInfoOptimizationBase>(DI);
  }
};

/// Loops over threads run 16 lanes of 32-bit values per AVX-512 vector. LLVM's cost model picks 8 lanes on some
/// AVX-512 hosts (Sapphire Rapids) even with 512-bit vectors preferred: measured there, 16 lanes ran nbody 1.8x,
/// black-scholes 1.5x and sgemm 1.2x faster. One vector per iteration (interleave count 1): a thread loop's trip
/// count is a row of the block, known only at launch, and every row that is a multiple of the width then runs in
/// vector code. With two vectors per iteration a row of 16 threads (sgemm) never entered the vector loop and ran
/// in the scalar remainder, which LLVM's epilogue vectorization makes 16 lanes wide only under its process-global
/// -epilogue-vectorization-force-VF (a library must not set it). The lowering marks the thread loops (ThreadLoop.h).
void widenThreadLoops(llvm::Function &F, unsigned Lanes) {
  llvm::LLVMContext &C = F.getContext();
  for (llvm::BasicBlock &BB : F) {
    llvm::Instruction *Term = BB.getTerminator();
    llvm::MDNode *Id = Term ? Term->getMetadata(llvm::LLVMContext::MD_loop) : nullptr;
    if (!Id)
      continue;
    bool Marked = false;
    llvm::SmallVector<llvm::Metadata *, 4> Props;
    for (unsigned K = 1; K < Id->getNumOperands(); ++K) {
      auto *P = llvm::dyn_cast<llvm::MDNode>(Id->getOperand(K));
      auto *Name = P && P->getNumOperands() ? llvm::dyn_cast<llvm::MDString>(P->getOperand(0)) : nullptr;
      Marked = Marked || (Name && Name->getString() == detail::ThreadLoopMarker);
      Props.push_back(Id->getOperand(K)); // the marker stays for WarpVectorizePass
    }
    if (!Marked)
      continue;
    Props.push_back(detail::loopProperty(C, "llvm.loop.vectorize.width", Lanes));
    Props.push_back(detail::loopProperty(C, "llvm.loop.interleave.count", 1));
    Term->setMetadata(llvm::LLVMContext::MD_loop, detail::loopId(C, Props));
  }
}
/// Functions over CompileOptions::FunctionSizeBudget (instructions) are left unoptimized (optnone), so that no
/// input makes the optimizer run without bound. One called only through always-inline would be inlined into
/// its caller, which the budget would then not cover: it is kept out of line instead.
void limitOptimization(llvm::Module &M, unsigned Budget) {
  if (!Budget)
    return;
  for (llvm::Function &F : M) {
    if (F.isDeclaration() || F.getInstructionCount() <= Budget)
      continue;
    F.removeFnAttr(llvm::Attribute::AlwaysInline);
    F.addFnAttr(llvm::Attribute::NoInline);
    F.addFnAttr(llvm::Attribute::OptimizeNone);
    llvm::OptimizationRemarkMissed R("ptxforge-budget", "FunctionTooLarge", &F);
    R << F.getName() << " is compiled without optimization: " << std::to_string(F.getInstructionCount())
      << " instructions, more than the budget of " << std::to_string(Budget);
    M.getContext().diagnose(R);
  }
}
} // namespace

llvm::Error ptxforge::codegen::setProcessLLVMOptions(llvm::StringRef Args) {
  static std::mutex Lock;
  static llvm::BumpPtrAllocator Alloc; // LLVM's options keep pointers into the strings parsed
  static llvm::StringSaver Saver(Alloc);
  std::scoped_lock L(Lock);
  llvm::SmallVector<const char *, 8> Argv{"ptxforge"};
  llvm::cl::TokenizeGNUCommandLine(Args, Saver, Argv);
  std::string Errors;
  llvm::raw_string_ostream OS(Errors);
  bool Ok = llvm::cl::ParseCommandLineOptions(static_cast<int>(Argv.size()), Argv.data(), "", &OS);
  LLVMOptionsGiven.store(true, std::memory_order_relaxed);
  if (!Ok)
    return llvm::createStringError(std::errc::invalid_argument, "%s", llvm::StringRef(Errors).trim().str().c_str());
  return llvm::Error::success();
}

llvm::Error ptxforge::codegen::optimizeModule(llvm::Module &M, llvm::TargetMachine &TM, const CompileOptions &Options) {
  const unsigned Level = Options.OptLevel;
  const CancelToken *Cancel = Options.Cancel;
  // Thread loops are vectorized across threads: with AVX-512, full-width vectors halve the instructions per
  // thread (LLVM's x86 tuning prefers 256 bits for scalar code's sake; Zen 4 runs 512-bit operations at the
  // same FLOP rate).
  M.getContext().setDiagnosticHandler(std::make_unique<QuietRemarks>());
  // The subtarget, not the feature string: a psABI level (x86-64-v3, -v4) implies its features by name.
  const llvm::MCSubtargetInfo *STI = TM.getMCSubtargetInfo();
  bool Avx512 = STI->checkFeatures("+avx512f");
  // AVX2 without AVX-512: one 8-lane vector per register. Left to itself LLVM sizes such loops by their widest
  // type (the 64-bit address bits the misalignment check collects) and picks 4 lanes, building each iteration's
  // thread ids lane by lane: measured 2.5x slower on saxpy than 8 lanes.
  unsigned Lanes = Avx512 ? 16 : STI->checkFeatures("+avx2") ? 8 : 0;
  for (llvm::Function &F : M) {
    if (F.isDeclaration())
      continue;
    if (Avx512)
      F.addFnAttr("prefer-vector-width", "512");
    if (Lanes)
      widenThreadLoops(F, Lanes);
    // rsqrt.approx.f32 (lower/ApproxMath.cpp) is the hardware estimate plus Newton-Raphson steps. Two steps
    // everywhere: one after AVX-512's rsqrt14 met the PTX bound on Zen 4 but not on Sapphire Rapids, whose
    // estimate differs (136 of 200k inputs past 2 ulp in tests/unit/codegen).
    F.addFnAttr("reciprocal-estimates", "sqrtf:2,vec-sqrtf:2");
  }
  if (Level > 0)
    limitOptimization(M, Options.FunctionSizeBudget);
  llvm::LoopAnalysisManager LAM;
  llvm::FunctionAnalysisManager FAM;
  llvm::CGSCCAnalysisManager CGAM;
  llvm::ModuleAnalysisManager MAM;
  llvm::PipelineTuningOptions PTO;
  // LLVM's instrumentation (-time-passes, -print-after=...) only where setProcessLLVMOptions can have asked for
  // it: its callbacks run around every pass of every JIT compile.
  llvm::PassInstrumentationCallbacks PIC;
  std::optional<llvm::StandardInstrumentations> SI;
  if (LLVMOptionsGiven.load(std::memory_order_relaxed)) {
    SI.emplace(M.getContext(), /*DebugLogging=*/false);
    SI->registerCallbacks(PIC, &MAM);
  }
  // A cancelled compile skips every pass LLVM lets it skip (all but a few required ones, which are quick).
  if (Cancel)
    PIC.registerShouldRunOptionalPassCallback(
        [Cancel](llvm::StringRef, llvm::Any) { return !cancelRequested(Cancel); });
  // optnone (limitOptimization's budget) is honoured by an instrumentation callback, not by the passes.
  llvm::OptNoneInstrumentation OptNone(/*DebugLogging=*/false);
  if (!SI)
    OptNone.registerCallbacks(PIC);
  llvm::PassBuilder PB(&TM, PTO, std::nullopt, &PIC);
  // PTX addresses are integers; once registers are SSA values, give memory accesses pointer provenance so
  // alias analysis, SCEV and the loop vectorizer can reason about them.
  PB.registerPeepholeEPCallback(
      [](llvm::FunctionPassManager &FPM, llvm::OptimizationLevel) { FPM.addPass(passes::PointerProvenancePass()); });
  PB.registerVectorizerStartEPCallback([Lanes, &Options](llvm::FunctionPassManager &FPM, llvm::OptimizationLevel) {
    if (Options.WarpVectorize)
      FPM.addPass(passes::WarpVectorizePass(Lanes));
  });
  PB.registerOptimizerLastEPCallback(
      [&Options](llvm::ModulePassManager &MPM, llvm::OptimizationLevel, llvm::ThinOrFullLTOPhase) {
        llvm::FunctionPassManager FPM;
        FPM.addPass(passes::LaneSequencesPass());
        FPM.addPass(passes::PrefetchSteppedPointersPass());
        FPM.addPass(passes::ContiguousGathersPass());
        FPM.addPass(passes::UnmaskFullVectorsPass());
        FPM.addPass(passes::StreamingStoresPass(Options.StreamingStoreBytes));
        MPM.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(FPM)));
      });
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  llvm::OptimizationLevel OL = Level == 0   ? llvm::OptimizationLevel::O0
                               : Level == 1 ? llvm::OptimizationLevel::O1
                               : Level == 2 ? llvm::OptimizationLevel::O2
                                            : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager MPM = Level == 0 ? PB.buildO0DefaultPipeline(OL) : PB.buildPerModuleDefaultPipeline(OL);
  MPM.run(M, MAM);
  return cancelRequested(Cancel) ? compileCancelled() : llvm::Error::success();
}
