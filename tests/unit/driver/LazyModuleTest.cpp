// Lazy loading per kernel (CUDA_MODULE_LOADING=LAZY): a kernel compiles alone at its first use, every kernel
// of a module sees the same module variables (one definition, initialised once, the address cuModuleGetGlobal
// gives) and the same address-taken functions, and the compute cache keeps each kernel's code apart.
#include "ComputeCacheTestSupport.h"
#include "TestKernels.h"

#include "ptxforge/driver/ComputeCache.h"
#include "ptxforge/driver/Launch.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Module.h"

#include <doctest/doctest.h>

#include <cstring>

using namespace ptxforge;
using namespace ptxforge::driver;
using namespace ptxforge::testing;

namespace {

/// Runs one thread of kernel Name with Args (kernelParams), waiting for it; empty when all went well.
std::string runOne(Module &M, const char *Name, std::vector<void *> Args = {}) {
  if (llvm::Error E = M.materialize())
    return llvm::toString(std::move(E));
  Function *F = nullptr;
  for (const auto &Candidate : M.functions())
    if (Candidate->name() == Name)
      F = Candidate.get();
  if (!F)
    return std::string("no kernel ") + Name;
  if (llvm::Error E = launchThreads(*F, std::move(Args), 1))
    return llvm::toString(std::move(E));
  cacheTestContext().waitIdle();
  return "";
}

/// A u32 the kernels write through a pointer parameter.
struct Output {
  uint64_t Address = zeroedDeviceMemory(4);
  ~Output() { llvm::consumeError(DeviceMemory::get().free(Address, {MemoryKind::Device})); }
  uint32_t value() const {
    uint32_t V;
    std::memcpy(&V, reinterpret_cast<const void *>(Address), 4);
    return V;
  }
};

uint32_t readGlobal(const Module::Global &G) {
  uint32_t V;
  std::memcpy(&V, reinterpret_cast<const void *>(G.Address), 4);
  return V;
}

} // namespace

TEST_CASE("a lazily loaded module compiles only the kernels that are used, each at its first use") {
  GlobalCacheScope Scope;
  auto M = loadLazily(SharedStatePtx);
  CHECK(M->functionCount() == 4);
  REQUIRE(!llvm::errorToBool(M->materialize()));
  CHECK(M->functions().size() == 4); // handles, without code yet
  CHECK(M->compiledFunctionCount() == 0);
  CHECK(Scope.cache().stats().Stores == 1); // the module's shared part (its variables) and kernel index

  Function *Bump = M->function("bump"); // cuModuleGetFunction compiles the kernel
  REQUIRE(Bump != nullptr);
  CHECK(Bump->compiledCode() != nullptr);
  CHECK(M->compiledFunctionCount() == 1);
  M->waitForBackgroundCompiles(); // the quick code, then the optimized code reach the cache (tiered JIT)
  CHECK(Scope.cache().stats().Stores == 3);

  Output Out;
  uint64_t OutPtr = Out.Address;
  CHECK(runOne(*M, "fetch", {&OutPtr}) == ""); // a launch compiles the kernel too
  CHECK(M->compiledFunctionCount() == 2);
  CHECK(Out.value() == 5);
  M->waitForBackgroundCompiles();
  CHECK(Scope.cache().stats().Stores == 5);
}

TEST_CASE("kernels compiled at different times share the module's variables, initialised once") {
  GlobalCacheScope Scope;
  auto M = loadLazily(SharedStatePtx);
  std::optional<Module::Global> Counter = M->global("counter"); // cuModuleGetGlobal compiles no kernel
  REQUIRE(Counter);
  CHECK(Counter->Size == 4);
  CHECK(M->compiledFunctionCount() == 0);
  CHECK(readGlobal(*Counter) == 5);

  uint32_t By = 10;
  CHECK(runOne(*M, "bump", {&By}) == "");
  CHECK(readGlobal(*Counter) == 15); // the kernel wrote the variable cuModuleGetGlobal sees
  uint32_t FromHost = 100;
  std::memcpy(reinterpret_cast<void *>(Counter->Address), &FromHost, 4);

  // fetch compiles now: it reads what bump and the host wrote, not a second, freshly initialised copy.
  Output Out;
  uint64_t OutPtr = Out.Address;
  CHECK(runOne(*M, "fetch", {&OutPtr}) == "");
  CHECK(Out.value() == 100);
  CHECK(M->global("counter")->Address == Counter->Address);
  CHECK(M->compiledFunctionCount() == 2);
}

TEST_CASE("a function address taken in one lazily compiled kernel is called from another") {
  GlobalCacheScope Scope;
  auto M = loadLazily(SharedStatePtx);
  CHECK(runOne(*M, "take_address") == "");
  Output Out;
  uint64_t OutPtr = Out.Address;
  CHECK(runOne(*M, "call_fn", {&OutPtr}) == "");
  CHECK(Out.value() == 42);
  CHECK(M->compiledFunctionCount() == 2);
}

TEST_CASE("the compute cache keeps each kernel's code: hits for kernels compiled before, misses for others") {
  GlobalCacheScope Scope;
  {
    auto Cold = loadLazily(SharedStatePtx);
    Function *Bump = Cold->function("bump");
    REQUIRE(Bump != nullptr);
    CHECK_FALSE(Cold->fromComputeCache());
    CHECK_FALSE(Bump->fromComputeCache());
    Cold->waitForBackgroundCompiles(); // the unload would cancel bump's optimized compile
  }
  ComputeCacheStats Before = Scope.cache().stats();
  auto Warm = loadLazily(SharedStatePtx);
  Function *Bump = Warm->function("bump");
  REQUIRE(Bump != nullptr);
  CHECK(Warm->fromComputeCache());
  CHECK(Bump->fromComputeCache());
  CHECK(Scope.cache().stats().Hits == Before.Hits + 2); // the shared part and bump
  CHECK(Scope.cache().stats().Stores == Before.Stores);

  Function *Fetch = Warm->function("fetch"); // never compiled before: a miss, compiled and stored
  REQUIRE(Fetch != nullptr);
  CHECK_FALSE(Fetch->fromComputeCache());
  Warm->waitForBackgroundCompiles();
  CHECK(Scope.cache().stats().Stores == Before.Stores + 2); // its quick and optimized code
  Output Out;
  uint64_t OutPtr = Out.Address;
  CHECK(runOne(*Warm, "fetch", {&OutPtr}) == "");
  CHECK(Out.value() == 5);
}

TEST_CASE("CUDA_MODULE_LOADING=EAGER compiles every kernel at load") {
  GlobalCacheScope Scope;
  EnvScope Env({"CUDA_MODULE_LOADING"});
  ::setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  JitLogs Logs;
  ModuleSource Source;
  Source.Image = SharedStatePtx.c_str();
  auto M = Module::load(cacheTestContext(), Source, JitOptions(), Logs);
  REQUIRE_MESSAGE(static_cast<bool>(M), Logs.Error);
  CHECK((*M)->compiledFunctionCount() == 4);
  CHECK(Scope.cache().stats().Stores == 1); // one entry: the whole module
  uint32_t By = 1;
  CHECK(runOne(**M, "bump", {&By}) == "");
  CHECK(readGlobal(*(*M)->global("counter")) == 6);
}

TEST_CASE("asking a lazily loaded module for a kernel it lacks is NotFound and compiles nothing") {
  GlobalCacheScope Scope;
  auto M = loadLazily(SharedStatePtx);
  auto Missing = M->loadFunction("no_such_kernel");
  REQUIRE_FALSE(static_cast<bool>(Missing));
  CHECK(takeStatus(Missing.takeError()) == Status::NotFound);
  CHECK(M->compiledFunctionCount() == 0);
}
