// The process of the tiered JIT's prompt-exit test (TieredJitTest.cpp): with the compute cache in CACHE_DIR,
// loads PTX (a module whose optimized compile takes seconds), takes its first KERNELS kernels, which start on
// their quick code with their optimized compiles in the background, runs a small kernel of another module and
// checks it, prints what it did and the CLOCK_MONOTONIC time of its last call, and returns from main while the
// compiles still run. MODE "unload": it unloads both modules as its last calls; "exit": it leaves them loaded;
// "atexit": an exit handler registered before the first driver call unloads them, as CUDA's runtime does.
//   tiered_exit_worker CACHE_DIR PTX KERNELS unload|exit|atexit
#include "ComputeCacheKernels.h"

#include "ptxforge/driver/ComputeCache.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Module.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

using namespace ptxforge;
using namespace ptxforge::driver;
using namespace ptxforge::testing;

namespace {

int fail(const std::string &Why) {
  std::fprintf(stderr, "tiered_exit_worker: %s\n", Why.c_str());
  return 1;
}

std::unique_ptr<Module> loadLazily(Context &Ctx, const std::string &Ptx, std::string &Error) {
  JitLogs Logs;
  ModuleSource Source;
  Source.Image = Ptx.c_str();
  auto M = Module::load(Ctx, Source, JitOptions(), Logs);
  if (!M) {
    Error = llvm::toString(M.takeError()) + " " + Logs.Error;
    return nullptr;
  }
  return std::move(*M);
}

std::unique_ptr<Module> Big, Small;

} // namespace

int main(int argc, char **argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: tiered_exit_worker CACHE_DIR PTX KERNELS unload|exit|atexit\n");
    return 2;
  }
  ::setenv("CUDA_CACHE_PATH", argv[1], 1);
  ::unsetenv("CUDA_CACHE_DISABLE");
  ::unsetenv("CUDA_MODULE_LOADING");
  ComputeCache::global().reconfigure(ComputeCacheConfig::fromEnvironment());
  std::ifstream In(argv[2], std::ios::binary);
  std::stringstream Text;
  Text << In.rdbuf();
  size_t Kernels = std::strtoul(argv[3], nullptr, 10);
  std::string Mode = argv[4];
  if (Mode == "atexit")
    std::atexit([] { Big.reset(), Small.reset(); });
  if (llvm::Error E = Driver::get().initialize())
    return fail("initialize: " + llvm::toString(std::move(E)));
  auto Ctx = Driver::get().createContext(0, 0);
  if (!Ctx)
    return fail("context: " + llvm::toString(Ctx.takeError()));
  std::string Error;
  Big = loadLazily(**Ctx, Text.str(), Error);
  if (!Big)
    return fail("load " + std::string(argv[2]) + ": " + Error);
  if (llvm::Error E = Big->materialize())
    return fail("materialize: " + llvm::toString(std::move(E)));
  const auto &Functions = Big->functions();
  if (Functions.size() < Kernels)
    return fail("the module has only " + std::to_string(Functions.size()) + " kernels");
  for (size_t K = 0; K < Kernels; ++K)
    if (!Big->function(Functions[K]->name()))
      return fail("kernel " + Functions[K]->name().str() + ": " + Big->materializeLog());
  Small = loadLazily(**Ctx, scaleModule("0f40a00000"), Error);
  if (!Small)
    return fail("load scale: " + Error);
  if (std::string Why = runScale(**Ctx, *Small, 5.0f, /*WaitForOptimizedCode=*/false); !Why.empty())
    return fail(Why);
  size_t Optimized = 0, Compiled = 0;
  for (size_t K = 0; K < Kernels; ++K) {
    Optimized += Functions[K]->upgrade() && Functions[K]->upgrade()->Block.load() != nullptr;
    Compiled += !Functions[K]->fromComputeCache(); // its first code (quick or optimized) compiled here
  }
  if (Mode == "unload")
    Big.reset(), Small.reset();
  ComputeCacheStats S = ComputeCache::global().stats();
  timespec Now;
  ::clock_gettime(CLOCK_MONOTONIC, &Now);
  std::printf("optimized=%zu compiled=%zu stores=%llu corrupt=%llu last_call_ns=%lld\n", Optimized, Compiled,
              static_cast<unsigned long long>(S.Stores), static_cast<unsigned long long>(S.Corrupt),
              static_cast<long long>(Now.tv_sec) * 1000000000LL + Now.tv_nsec);
  std::fflush(stdout);
  if (Mode == "exit") {
    (void)Big.release(); // loaded until the process ends, as in a program that never unloads them
    (void)Small.release();
  }
  return 0;
}
