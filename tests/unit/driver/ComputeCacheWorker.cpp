// One of the processes of the compute cache's concurrency test (ComputeCacheProcessTest.cpp starts several at
// once on one empty cache directory): loads the same three modules ROUNDS times through the driver core (each
// round a fresh module, so later rounds read what this or another process stored), launches each kernel and
// checks every output element. Prints its cache counters; exits 0 only when every result was right and no
// corrupt (partial) entry was ever read.
//   compute_cache_worker CACHE_DIR ROUNDS
#include "ComputeCacheKernels.h"

#include "ptxforge/driver/ComputeCache.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Module.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

using namespace ptxforge;
using namespace ptxforge::driver;
using namespace ptxforge::testing;

namespace {

bool fail(const std::string &Why) {
  std::fprintf(stderr, "compute_cache_worker %d: %s\n", static_cast<int>(::getpid()), Why.c_str());
  return false;
}

bool runModule(Context &Ctx, const std::string &Ptx, float Factor) {
  JitLogs Logs;
  ModuleSource Source;
  Source.Image = Ptx.c_str();
  auto M = Module::load(Ctx, Source, JitOptions(), Logs);
  if (!M)
    return fail("load: " + llvm::toString(M.takeError()) + " " + Logs.Error);
  std::string Why = runScale(Ctx, **M, Factor);
  return Why.empty() || fail(Why);
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: compute_cache_worker CACHE_DIR ROUNDS\n");
    return 2;
  }
  ::setenv("CUDA_CACHE_PATH", argv[1], 1);
  ::unsetenv("CUDA_CACHE_DISABLE");
  ::unsetenv("CUDA_CACHE_MAXSIZE");
  ComputeCache::global().reconfigure(ComputeCacheConfig::fromEnvironment());
  int Rounds = std::atoi(argv[2]);
  if (llvm::Error E = Driver::get().initialize()) {
    std::fprintf(stderr, "initialize: %s\n", llvm::toString(std::move(E)).c_str());
    return 1;
  }
  auto Ctx = Driver::get().createContext(0, 0);
  if (!Ctx) {
    std::fprintf(stderr, "context: %s\n", llvm::toString(Ctx.takeError()).c_str());
    return 1;
  }
  struct Case {
    const char *Literal;
    float Factor;
  } Cases[] = {{"0f40000000", 2.0f}, {"0f40400000", 3.0f}, {"0fBF000000", -0.5f}};
  bool Ok = true;
  for (int Round = 0; Round < Rounds; ++Round)
    for (const Case &C : Cases)
      Ok &= runModule(**Ctx, scaleModule(C.Literal), C.Factor);
  ComputeCacheStats S = ComputeCache::global().stats();
  std::printf("hits=%llu misses=%llu stores=%llu corrupt=%llu\n", static_cast<unsigned long long>(S.Hits),
              static_cast<unsigned long long>(S.Misses), static_cast<unsigned long long>(S.Stores),
              static_cast<unsigned long long>(S.Corrupt));
  if (S.Corrupt != 0)
    Ok = fail("read a corrupt entry");
  return Ok ? 0 : 1;
}
