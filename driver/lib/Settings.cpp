// The environment variables that configure codegen and fatbinary selection, each parsed here and nowhere else
// (see Settings.h).
#include "ptxforge/driver/Settings.h"

#include "ptxforge/codegen/Optimize.h"

#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

using namespace ptxforge;
using namespace ptxforge::driver;

namespace {

/// The variable's value, trimmed; empty when unset.
llvm::StringRef env(const char *Name) {
  const char *V = std::getenv(Name);
  return V ? llvm::StringRef(V).trim() : llvm::StringRef();
}

/// NVIDIA's reading of its switches: set when the value is a nonzero integer.
bool envFlag(const char *Name) {
  long long N = 0;
  return !env(Name).getAsInteger(10, N) && N != 0;
}

codegen::PerfMap perfMap(llvm::StringRef V) {
  if (V.empty() || V == "0")
    return codegen::PerfMap::Off;
  return V == "objects" ? codegen::PerfMap::Objects : codegen::PerfMap::Symbols;
}

JitTier jitTier(llvm::StringRef V) {
  return V == "0" ? JitTier::Quick : V == "2" ? JitTier::Optimized : JitTier::Tiered;
}

} // namespace

fatbin::JitPolicy ptxforge::driver::jitPolicyFromEnvironment() {
  fatbin::JitPolicy P;
  P.ForcePtxJit = envFlag("CUDA_FORCE_PTX_JIT");
  P.DisablePtxJit = envFlag("CUDA_DISABLE_PTX_JIT");
  return P;
}

uint64_t ptxforge::driver::hostStreamingStoreBytes() {
  std::ifstream In("/sys/devices/system/cpu/cpu0/cache/index3/size");
  uint64_t K = 0;
  char Unit = 0;
  if (In && In >> K >> Unit && K)
    return (K << (Unit == 'M' ? 20 : 10)) / 2;
  return codegen::DefaultStreamingStoreBytes;
}

Settings Settings::fromEnvironment() {
  Settings S;
  S.Compile.TargetCpu = env("PTXFORGE_JIT_CPU").str();
  uint64_t Bytes = 0;
  S.Compile.StreamingStoreBytes =
      env("PTXFORGE_STREAMING_STORES").getAsInteger(10, Bytes) ? hostStreamingStoreBytes() : Bytes;
  S.Compile.Lowering.LoopCuts = env("PTXFORGE_LOOP_CUTS") != "0";
  unsigned Cuts = 0;
  if (!env("PTXFORGE_REGION_CUTS").getAsInteger(10, Cuts))
    S.Compile.Lowering.RegionCutBudget = Cuts;
  if (unsigned Hot; !env("PTXFORGE_HOT_REGION_CUTS").getAsInteger(10, Hot))
    S.Compile.Lowering.HotRegionCutLimit = Hot;
  if (llvm::StringRef R = env("PTXFORGE_RESUME_LOOPS"); R == "0" || R == "1")
    S.Compile.Lowering.Resume = R == "1" ? codegen::ResumeLoops::Emit : codegen::ResumeLoops::Omit;
  S.Compile.WarpVectorize = env("PTXFORGE_WARP_VECTORIZE") != "0";
  S.Tier = jitTier(env("PTXFORGE_JIT_TIER"));
  if (S.Tier == JitTier::Quick)
    S.Compile = codegen::quickCode(S.Compile);
  S.Compile.Perf = perfMap(env("PTXFORGE_PERF_MAP"));
  unsigned Workers = 0;
  if (!env("PTXFORGE_WORKERS").getAsInteger(10, Workers))
    S.Workers = Workers;
  S.PinWorkers = env("PTXFORGE_PIN_WORKERS") != "0";
  if (llvm::StringRef T = env("PTXFORGE_LAUNCH_TIMEOUT"); !T.empty()) {
    double Seconds = 0;
    S.LaunchTimeoutInvalid = T.getAsDouble(Seconds) || !std::isfinite(Seconds) || Seconds < 0;
    S.LaunchTimeoutSeconds = S.LaunchTimeoutInvalid ? 0 : Seconds;
  }
  S.LLVMArgs = env("PTXFORGE_LLVM_ARGS").str();
  S.Verbose = std::getenv("PTXFORGE_DRIVER_VERBOSE") != nullptr;
  S.Memcheck = envFlag("PTXFORGE_MEMCHECK");
  if (S.Memcheck) {
    S.Compile.Lowering.Memcheck = true;
    S.Compile = codegen::quickCode(S.Compile);
    S.Tier = JitTier::Quick;
  }
  S.Jit = jitPolicyFromEnvironment();
  return S;
}

codegen::LaunchConfig Settings::launchConfig(codegen::LaunchConfig Config) const {
  if (!Config.Workers)
    Config.Workers = Workers;
  Config.PinWorkers = PinWorkers;
  Config.TimeoutSeconds = LaunchTimeoutSeconds;
  if (Memcheck)
    Config.MemcheckFindings = &memcheckFindings();
  return Config;
}

const Settings &ptxforge::driver::processSettings() {
  static const Settings S = [] {
    Settings Read = Settings::fromEnvironment();
    if (!Read.LLVMArgs.empty())
      if (llvm::Error E = codegen::setProcessLLVMOptions(Read.LLVMArgs))
        std::fprintf(stderr, "ptxforge: PTXFORGE_LLVM_ARGS: %s\n", llvm::toString(std::move(E)).c_str());
    if (Read.LaunchTimeoutInvalid)
      std::fprintf(stderr, "ptxforge: PTXFORGE_LAUNCH_TIMEOUT: '%s' is not a number of seconds; no watchdog\n",
                   std::getenv("PTXFORGE_LAUNCH_TIMEOUT"));
    return Read;
  }();
  return S;
}

codegen::MemcheckLog &ptxforge::driver::memcheckFindings() {
  // Made by the first memcheck launch, which prints the sanitizer's banner; the exit prints the summary. Never
  // destroyed: launches may still run during exit.
  static codegen::MemcheckLog *Log = [] {
    std::fputs("========= COMPUTE-SANITIZER (ptxforge memcheck)\n", stdout);
    std::fflush(stdout);
    std::atexit([] {
      printMemcheckFindings();
      std::fputs(memcheckFindings().summary().c_str(), stdout);
      std::fflush(stdout);
    });
    return new codegen::MemcheckLog();
  }();
  return *Log;
}

void ptxforge::driver::printMemcheckFindings() {
  std::string Text = memcheckFindings().take();
  if (Text.empty())
    return;
  std::fputs(Text.c_str(), stdout);
  std::fflush(stdout);
}
