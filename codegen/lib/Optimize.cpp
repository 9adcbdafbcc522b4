// The -O pipeline with ptxforge's passes hooked in (see passes/Passes.h for what each is for).
#include "ptxforge/codegen/Optimize.h"
#include "ptxforge/codegen/Lowering.h"

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

/// The thread loops carry vectorization hints (WidenThreadLoopsPass), and LLVM reports why a hinted loop is not
/// vectorized on stderr whether or not remarks were asked for: for a JIT that is noise in the user's program's
/// output. Unless setProcessLLVMOptions asked LLVM for something, optimization remarks are dropped.
struct QuietRemarks : llvm::DiagnosticHandler {
  bool handleDiagnostics(const llvm::DiagnosticInfo &DI) override {
    return !LLVMOptionsGiven.load(std::memory_order_relaxed) && llvm::isa<llvm::DiagnosticInfoOptimizationBase>(DI);
  }
};

/// The analysis managers of one pipeline run, registered with a PassBuilder and with each other.
struct Analyses {
  llvm::LoopAnalysisManager LAM;
  llvm::FunctionAnalysisManager FAM;
  llvm::CGSCCAnalysisManager CGAM;
  llvm::ModuleAnalysisManager MAM;
  void registerWith(llvm::PassBuilder &PB) {
    PB.registerModuleAnalyses(MAM);
    PB.registerCGSCCAnalyses(CGAM);
    PB.registerFunctionAnalyses(FAM);
    PB.registerLoopAnalyses(LAM);
    PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  }
};
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
    // rsqrt.approx.f32 (lower/ApproxMath.cpp) is the hardware estimate plus Newton-Raphson steps. Two steps
    // everywhere: one after AVX-512's rsqrt14 met the PTX bound on Zen 4 but not on Sapphire Rapids, whose
    // estimate differs (136 of 200k inputs past 2 ulp in tests/unit/codegen).
    F.addFnAttr("reciprocal-estimates", "sqrtf:2,vec-sqrtf:2");
  }
  Analyses AM;
  llvm::PipelineTuningOptions PTO;
  // LLVM's instrumentation (-time-passes, -print-after=...) only where setProcessLLVMOptions can have asked for
  // it: its callbacks run around every pass of every JIT compile.
  llvm::PassInstrumentationCallbacks PIC;
  std::optional<llvm::StandardInstrumentations> SI;
  if (LLVMOptionsGiven.load(std::memory_order_relaxed)) {
    SI.emplace(M.getContext(), /*DebugLogging=*/false);
    SI->registerCallbacks(PIC, &AM.MAM);
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
  passes::registerPasses(PB, &PIC);
  // PTX addresses are integers; once registers are SSA values, give memory accesses pointer provenance so
  // alias analysis, SCEV and the loop vectorizer can reason about them.
  PB.registerPeepholeEPCallback(
      [](llvm::FunctionPassManager &FPM, llvm::OptimizationLevel) { FPM.addPass(passes::PointerProvenancePass()); });
  PB.registerVectorizerStartEPCallback([Lanes, &Options](llvm::FunctionPassManager &FPM, llvm::OptimizationLevel) {
    if (Options.WarpVectorize)
      FPM.addPass(passes::WarpVectorizePass(Lanes));
    // Last before LLVM's loop vectorizer: it keeps the wrap checks that vectorizer would drop.
    FPM.addPass(passes::HideNarrowRecurrencesPass());
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
  AM.registerWith(PB);
  llvm::OptimizationLevel OL = Level == 0   ? llvm::OptimizationLevel::O0
                               : Level == 1 ? llvm::OptimizationLevel::O1
                               : Level == 2 ? llvm::OptimizationLevel::O2
                                            : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager MPM;
  if (Lanes)
    MPM.addPass(llvm::createModuleToFunctionPassAdaptor(passes::WidenThreadLoopsPass(Lanes)));
  if (Level > 0)
    MPM.addPass(passes::LimitOptimizationPass(Options.FunctionSizeBudget));
  MPM.addPass(Level == 0 ? PB.buildO0DefaultPipeline(OL) : PB.buildPerModuleDefaultPipeline(OL));
  // The quick tier's code generator is the fast instruction selector: last, what it would hand to SelectionDAG
  // becomes what it selects itself.
  if (Options.FastCodeGen)
    MPM.addPass(llvm::createModuleToFunctionPassAdaptor(passes::FastISelFormsPass()));
  MPM.run(M, AM.MAM);
  return cancelRequested(Cancel) ? compileCancelled() : llvm::Error::success();
}

llvm::Error ptxforge::codegen::runPassPipeline(llvm::Module &M, llvm::TargetMachine &TM, llvm::StringRef Pipeline) {
  Analyses AM;
  // Always instrumented: the caller is a tool run for its -print-after and -time-passes.
  llvm::PassInstrumentationCallbacks PIC;
  llvm::StandardInstrumentations SI(M.getContext(), /*DebugLogging=*/false);
  SI.registerCallbacks(PIC, &AM.MAM);
  llvm::PassBuilder PB(&TM, llvm::PipelineTuningOptions(), std::nullopt, &PIC);
  passes::registerPasses(PB, &PIC);
  AM.registerWith(PB);
  llvm::ModulePassManager MPM;
  if (llvm::Error E = PB.parsePassPipeline(MPM, Pipeline))
    return E;
  MPM.run(M, AM.MAM);
  return llvm::Error::success();
}
