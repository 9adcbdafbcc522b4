// Lazy loading per kernel (CUDA_MODULE_LOADING=LAZY): a kernel compiles alone at its first use, every kernel
// of a module sees the same module variables (one definition, initialised once, the address cuModuleGetGlobal
// gives) and the same address-taken functions, and the compute cache keeps each kernel's code apart.
#include "ComputeCacheTestSupport.h"

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

/// `counter` starts at 5; `bump` adds its parameter to it, `fetch` copies it out, `take_address` stores the
/// address of `twice` in `fn` and `call_fn` calls whatever `fn` points to with 21.
const char *SharedState = R"(.version 7.5
.target sm_75
.address_size 64
.visible .global .align 4 .u32 counter = 5;
.visible .global .align 8 .u64 fn;

.func (.param .b32 r) twice(.param .b32 x)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [x];
  add.s32 %r2, %r1, %r1;
  st.param.b32 [r], %r2;
  ret;
}

.visible .entry bump(.param .u32 p_by)
{
  .reg .b32 %r<4>;
  ld.param.u32 %r1, [p_by];
  ld.global.u32 %r2, [counter];
  add.s32 %r3, %r2, %r1;
  st.global.u32 [counter], %r3;
  ret;
}

.visible .entry fetch(.param .u64 p_out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p_out];
  ld.global.u32 %r1, [counter];
  st.global.u32 [%rd1], %r1;
  ret;
}

.visible .entry take_address()
{
  .reg .b64 %rd<2>;
  mov.u64 %rd1, twice;
  st.global.u64 [fn], %rd1;
  ret;
}

.visible .entry call_fn(.param .u64 p_out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p_out];
  ld.global.u64 %rd2, [fn];
  {
    .param .b32 a;
    .param .b32 r;
    st.param.b32 [a], 21;
proto: .callprototype (.param .b32 _) _ (.param .b32 _);
    call (r), %rd2, (a), proto;
    ld.param.b32 %r1, [r];
  }
  st.global.u32 [%rd1], %r1;
  ret;
}
)";

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
  auto Params = F->packParams(Args.data());
  if (!Params)
    return llvm::toString(Params.takeError());
  codegen::LaunchConfig Config;
  Config.Grid = {1, 1, 1};
  Config.Block = {1, 1, 1};
  if (llvm::Error E = launch(cacheTestContext(), nullptr, *F, Config, std::move(*Params)))
    return llvm::toString(std::move(E));
  cacheTestContext().waitIdle();
  return "";
}

/// A u32 the kernels write through a pointer parameter.
struct Output {
  uint64_t Address = 0;
  Output() {
    auto A = DeviceMemory::get().allocate(4, MemoryKind::Device, &cacheTestContext());
    REQUIRE(static_cast<bool>(A));
    Address = *A;
    std::memset(reinterpret_cast<void *>(Address), 0, 4);
  }
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
  auto M = loadLazily(SharedState);
  CHECK(M->functionCount() == 4);
  REQUIRE(!llvm::errorToBool(M->materialize()));
  CHECK(M->functions().size() == 4); // handles, without code yet
  CHECK(M->compiledFunctionCount() == 0);
  CHECK(Scope.cache().stats().Stores == 1); // the module's shared part (its variables) and kernel index

  Function *Bump = M->function("bump"); // cuModuleGetFunction compiles the kernel
  REQUIRE(Bump != nullptr);
  CHECK(Bump->compiledCode() != nullptr);
  CHECK(M->compiledFunctionCount() == 1);
  M->waitForBackgroundCompiles(); // the optimized code reaches the cache (tiered JIT)
  CHECK(Scope.cache().stats().Stores == 2);

  Output Out;
  uint64_t OutPtr = Out.Address;
  CHECK(runOne(*M, "fetch", {&OutPtr}) == ""); // a launch compiles the kernel too
  CHECK(M->compiledFunctionCount() == 2);
  CHECK(Out.value() == 5);
  M->waitForBackgroundCompiles();
  CHECK(Scope.cache().stats().Stores == 3);
}

TEST_CASE("kernels compiled at different times share the module's variables, initialised once") {
  GlobalCacheScope Scope;
  auto M = loadLazily(SharedState);
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
  auto M = loadLazily(SharedState);
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
    auto Cold = loadLazily(SharedState);
    Function *Bump = Cold->function("bump");
    REQUIRE(Bump != nullptr);
    CHECK_FALSE(Cold->fromComputeCache());
    CHECK_FALSE(Bump->fromComputeCache());
    Cold->waitForBackgroundCompiles(); // the unload would cancel bump's optimized compile
  }
  ComputeCacheStats Before = Scope.cache().stats();
  auto Warm = loadLazily(SharedState);
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
  CHECK(Scope.cache().stats().Stores == Before.Stores + 1);
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
  Source.Image = SharedState;
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
  auto M = loadLazily(SharedState);
  auto Missing = M->loadFunction("no_such_kernel");
  REQUIRE_FALSE(static_cast<bool>(Missing));
  CHECK(takeStatus(Missing.takeError()) == Status::NotFound);
  CHECK(M->compiledFunctionCount() == 0);
}
