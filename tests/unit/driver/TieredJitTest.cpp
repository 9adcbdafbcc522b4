// The tiered JIT through the driver: a lazily compiled kernel without optimized code in the compute cache starts
// on its quick code (no block function) with its optimized code compiling in the background; launches are right
// before and after the optimized code arrives; the cache keeps only the optimized code, which a later load
// takes directly; unloading a module whose kernel is still compiling waits for that compile; a forked child does
// not wait for its parent's compiles at exit.
#include "ComputeCacheKernels.h"
#include "ComputeCacheTestSupport.h"

#include "ptxforge/driver/Module.h"

#include <doctest/doctest.h>

#include <csignal>
#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>

using namespace ptxforge;
using namespace ptxforge::driver;
using namespace ptxforge::testing;

namespace {

bool runsBlockFunction(const Function &F) {
  const KernelCode *K = F.compiledCode();
  return K && K->Code->blockEntry(*K->Kernel) != nullptr;
}

} // namespace

TEST_CASE("a kernel starts on its quick code and moves to its optimized code, which the cache keeps") {
  if (processSettings().Tier != JitTier::Tiered)
    return; // PTXFORGE_JIT_TIER chose one tier for the whole process
  GlobalCacheScope Scope;
  const std::string Ptx = scaleModule("0f40a00000"); // 5.0
  {
    auto Cold = loadLazily(Ptx);
    Function *F = Cold->function("scale");
    REQUIRE(F != nullptr);
    CHECK_FALSE(runsBlockFunction(*F)); // the quick code: thread functions only
    REQUIRE(F->upgrade() != nullptr);
    CHECK(runScale(cacheTestContext(), *Cold, 5.0f).empty()); // waits for the optimized code at the end
    bool Arrived = F->upgrade()->Block.load() != nullptr;
    CHECK(Arrived);
    CHECK_FALSE(F->upgrade()->Compiling.load());
    CHECK(runScale(cacheTestContext(), *Cold, 5.0f).empty()); // now on the optimized code
    CHECK(Scope.cache().stats().Stores == 2); // the shared part and the optimized kernel; never quick code
  }
  auto Warm = loadLazily(Ptx);
  Function *F = Warm->function("scale");
  REQUIRE(F != nullptr);
  CHECK(F->fromComputeCache());
  CHECK(runsBlockFunction(*F)); // straight to the optimized code
  CHECK(F->upgrade() == nullptr);
  CHECK(runScale(cacheTestContext(), *Warm, 5.0f).empty());
}

TEST_CASE("unloading a module while its kernel's optimized code compiles waits for the compile") {
  GlobalCacheScope Scope;
  for (const char *Factor : {"0f40c00000", "0f40e00000", "0f41000000"}) { // 6, 7, 8: three modules
    auto M = loadLazily(scaleModule(Factor));
    REQUIRE(M->function("scale") != nullptr);
    // M goes away here, its background compile likely still running.
  }
  // Each unload waited for its compile, which stored the optimized kernel beside the module's shared part.
  CHECK(Scope.cache().stats().Stores == 6);
  CHECK(Scope.cache().stats().Corrupt == 0);
}

TEST_CASE("a child of fork() exits at once although the parent's background compile still runs") {
  GlobalCacheScope Scope;
  auto M = loadLazily(scaleModule("0f41100000")); // 9.0
  REQUIRE(M->function("scale") != nullptr);
  pid_t Child = ::fork();
  if (Child == 0)
    std::exit(0); // the exit handler must not wait for the parent's job, which has no thread here
  REQUIRE(Child > 0);
  int Status = 0;
  bool Exited = false;
  for (int I = 0; I < 2000 && !Exited; ++I) { // up to 20 s
    Exited = ::waitpid(Child, &Status, WNOHANG) == Child;
    if (!Exited)
      ::usleep(10000);
  }
  if (!Exited)
    ::kill(Child, SIGKILL), ::waitpid(Child, &Status, 0);
  CHECK(Exited);
  CHECK((WIFEXITED(Status) && WEXITSTATUS(Status) == 0));
}
