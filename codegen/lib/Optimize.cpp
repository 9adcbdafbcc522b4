// The -O pipeline with ptxforge's passes hooked in (see passes/Passes.h for what each is for).
#include "ptxforge/codegen/Optimize.h"

#include "passes/Passes.h"

#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/StringSaver.h"

#include <cstdlib>
#include <mutex>

using namespace ptxforge::codegen;

namespace {
/// PTXFORGE_LLVM_ARGS: LLVM's own options for whoever tunes the code generator (what clang's -mllvm passes),
/// e.g. "-pass-remarks-missed=loop-vectorize" to see why a thread loop stays scalar. Read once per process.
void applyLLVMArgs() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    const char *Env = std::getenv("PTXFORGE_LLVM_ARGS");
    if (!Env || !*Env)
      return;
    static llvm::BumpPtrAllocator Alloc;
    static llvm::StringSaver Saver(Alloc);
    llvm::SmallVector<const char *, 8> Argv{"ptxforge"};
    llvm::cl::TokenizeGNUCommandLine(Env, Saver, Argv);
    llvm::cl::ParseCommandLineOptions(static_cast<int>(Argv.size()), Argv.data(), "", &llvm::errs());
  });
}
} // namespace

llvm::Error ptxforge::codegen::optimizeModule(llvm::Module &M, llvm::TargetMachine &TM, unsigned Level) {
  applyLLVMArgs();
  // Thread loops are vectorized across threads: with AVX-512, full-width vectors halve the instructions per
  // thread (LLVM's x86 tuning prefers 256 bits for scalar code's sake; Zen 4 runs 512-bit operations at the
  // same FLOP rate).
  bool Avx512 = llvm::StringRef(TM.getTargetFeatureString()).contains("+avx512f");
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
  llvm::LoopAnalysisManager LAM;
  llvm::FunctionAnalysisManager FAM;
  llvm::CGSCCAnalysisManager CGAM;
  llvm::ModuleAnalysisManager MAM;
  llvm::PipelineTuningOptions PTO;
  llvm::PassBuilder PB(&TM, PTO);
  // PTX addresses are integers; once registers are SSA values, give memory accesses pointer provenance so
  // alias analysis, SCEV and the loop vectorizer can reason about them.
  PB.registerPeepholeEPCallback([](llvm::FunctionPassManager &FPM, llvm::OptimizationLevel) {
    FPM.addPass(passes::PointerProvenancePass());
  });
  PB.registerOptimizerLastEPCallback([](llvm::ModulePassManager &MPM, llvm::OptimizationLevel,
                                        llvm::ThinOrFullLTOPhase) {
    MPM.addPass(llvm::createModuleToFunctionPassAdaptor(passes::UnmaskFullVectorsPass()));
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
  return llvm::Error::success();
}
