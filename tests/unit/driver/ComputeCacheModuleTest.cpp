// The compute cache through module loading: a second load takes the code from the cache; one byte of PTX, a
// JIT option that changes code or another compute capability compile afresh; damaged entries are recompiled
// and run correctly; an unwritable cache still loads (with a warning); CUDA_MODULE_LOADING's lazy and eager
// loading, with threads racing to the first use of a lazy module. A lazily loaded module has one entry for
// what its kernels share (with the kernel index) and one per kernel it compiled (LazyModuleTest.cpp).
#include "ComputeCacheKernels.h"
#include "ComputeCacheTestSupport.h"

#include "ptxforge/driver/ComputeCache.h"
#include "ptxforge/driver/Module.h"

#include <doctest/doctest.h>

#include <thread>

using namespace ptxforge;
using namespace ptxforge::driver;
using namespace ptxforge::testing;

namespace {

const std::string Twice = scaleModule("0f40000000");

/// Loads PTX text as cuModuleLoadData does (lazy unless CUDA_MODULE_LOADING=EAGER) and materializes it.
std::unique_ptr<Module> loadAndMaterialize(const std::string &Ptx, JitOptions Options = {}) {
  JitLogs Logs;
  ModuleSource Source;
  Source.Image = Ptx.c_str();
  auto M = Module::load(cacheTestContext(), Source, Options, Logs);
  REQUIRE_MESSAGE(static_cast<bool>(M), Logs.Error);
  REQUIRE(!llvm::errorToBool((*M)->materialize()));
  return std::move(*M);
}

} // namespace

TEST_CASE("a module's code is compiled once, then loaded from the compute cache") {
  GlobalCacheScope Scope;
  auto Cold = loadAndMaterialize(Twice);
  CHECK_FALSE(Cold->fromComputeCache());
  CHECK(runScale(cacheTestContext(), *Cold, 2.0f).empty());
  CHECK(Scope.cache().stats().Stores == 3); // the shared part, the kernel's quick and optimized code
  CHECK(Scope.cache().stats().Entries == 3);

  auto Warm = loadAndMaterialize(Twice);
  CHECK(Warm->fromComputeCache());
  CHECK(runScale(cacheTestContext(), *Warm, 2.0f).empty());
  CHECK(Warm->function("scale")->fromComputeCache());
  CHECK(Scope.cache().stats().Hits == 2);

  // CU_JIT_LOG_VERBOSE changes no code: still a hit.
  JitOptions Verbose;
  Verbose.Verbose = true;
  CHECK(loadAndMaterialize(Twice, Verbose)->fromComputeCache());
}

TEST_CASE("one byte of PTX, the optimisation level or another compute capability is a miss") {
  GlobalCacheScope Scope;
  CHECK_FALSE(loadAndMaterialize(Twice)->fromComputeCache());
  // 0f40400000 (3.0) differs from 0f40000000 (2.0) in one byte of the PTX text.
  auto Changed = loadAndMaterialize(scaleModule("0f40400000"));
  CHECK_FALSE(Changed->fromComputeCache());
  CHECK(runScale(cacheTestContext(), *Changed, 3.0f).empty());
  JitOptions O1;
  O1.OptLevel = 1;
  CHECK_FALSE(loadAndMaterialize(Twice, O1)->fromComputeCache());
  CHECK(loadAndMaterialize(Twice, O1)->fromComputeCache());
  JitOptions Cc80;
  Cc80.TargetCc = 80;
  CHECK_FALSE(loadAndMaterialize(Twice, Cc80)->fromComputeCache());
  CHECK(loadAndMaterialize(Twice, Cc80)->fromComputeCache());
  CHECK(loadAndMaterialize(Twice)->fromComputeCache());
  CHECK(Scope.cache().stats().Entries == 6); // four shared parts, and the kernel (quick, optimized) of the one that ran
}

TEST_CASE("truncated and bit-flipped entries are recompiled and the kernel runs correctly") {
  GlobalCacheScope Scope;
  loadAndMaterialize(Twice);
  std::vector<std::string> Names = listNames(Scope.path());
  REQUIRE(Names.size() == 1);
  std::string Entry = Scope.path() + "/" + Names[0];
  std::string Good = readFile(Entry);
  for (int Damage = 0; Damage < 3; ++Damage) {
    std::string Bad = Good;
    if (Damage == 0)
      Bad.resize(Bad.size() / 3);
    else if (Damage == 1)
      Bad[Bad.size() / 2] ^= 0x04;
    else
      Bad[Bad.size() - 1] ^= 0x80;
    writeFile(Entry, Bad);
    auto M = loadAndMaterialize(Twice);
    CHECK_FALSE(M->fromComputeCache());
    CHECK(runScale(cacheTestContext(), *M, 2.0f).empty());
    // The recompiled code was stored again, whole.
    CHECK(loadAndMaterialize(Twice)->fromComputeCache());
  }
  CHECK(Scope.cache().stats().Corrupt == 3);
}

TEST_CASE("an unwritable cache directory still loads and runs modules, with one warning") {
  GlobalCacheScope Scope;
  writeFile(Scope.path() + "/file", "in the way");
  ComputeCacheConfig C = Scope.cache().config();
  C.Directory = Scope.path() + "/file/cache";
  Scope.cache().reconfigure(C);
  std::string Err = captureStderr([&] {
    for (const char *Factor : {"0f40000000", "0f40400000"}) {
      auto M = loadAndMaterialize(scaleModule(Factor));
      CHECK_FALSE(M->fromComputeCache());
      CHECK(runScale(cacheTestContext(), *M, Factor == std::string("0f40000000") ? 2.0f : 3.0f).empty());
    }
  });
  CHECK(countOf(Err, "warning: compute cache") == 1);
}

TEST_CASE("CUDA_CACHE_DISABLE=1 compiles every load") {
  GlobalCacheScope Scope;
  EnvScope Env({"CUDA_CACHE_DISABLE", "CUDA_CACHE_PATH"});
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  ::setenv("CUDA_CACHE_PATH", Scope.path().c_str(), 1);
  Scope.cache().reconfigure(ComputeCacheConfig::fromEnvironment());
  CHECK_FALSE(loadAndMaterialize(Twice)->fromComputeCache());
  CHECK_FALSE(loadAndMaterialize(Twice)->fromComputeCache());
  CHECK(listNames(Scope.path()).empty());
}

TEST_CASE("CUDA_MODULE_LOADING: lazy loads compile at first use, EAGER at load") {
  GlobalCacheScope Scope;
  EnvScope Env({"CUDA_MODULE_LOADING"});
  CHECK(moduleLoadingMode() == ModuleLoading::Lazy);
  ModuleSource Source;
  Source.Image = Twice.c_str();
  JitLogs Logs;
  JitOptions Verbose;
  Verbose.Verbose = true;
  auto Lazy = Module::load(cacheTestContext(), Source, Verbose, Logs);
  REQUIRE(static_cast<bool>(Lazy));
  CHECK_FALSE((*Lazy)->materialized());
  CHECK((*Lazy)->functionCount() == 1);
  CHECK((*Lazy)->functions().empty());
  CHECK(Logs.Info.find("each kernel at its first use") != std::string::npos);
  CHECK(Scope.cache().stats().Entries == 0); // nothing compiled yet
  CHECK(runScale(cacheTestContext(), **Lazy, 2.0f).empty());
  CHECK((*Lazy)->materialized());
  CHECK((*Lazy)->functions().size() == 1);

  ::setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  CHECK(moduleLoadingMode() == ModuleLoading::Eager);
  auto Eager = Module::load(cacheTestContext(), Source, JitOptions(), Logs);
  REQUIRE(static_cast<bool>(Eager));
  CHECK((*Eager)->materialized());
  CHECK((*Eager)->compiledFunctionCount() == 1);
  CHECK_FALSE((*Eager)->fromComputeCache()); // compiled whole: another entry than the lazy load's parts
  auto EagerAgain = Module::load(cacheTestContext(), Source, JitOptions(), Logs);
  REQUIRE(static_cast<bool>(EagerAgain));
  CHECK((*EagerAgain)->fromComputeCache());
  ::setenv("CUDA_MODULE_LOADING", "DEFAULT", 1);
  CHECK(moduleLoadingMode() == ModuleLoading::Lazy);
}

TEST_CASE("threads racing to the first use of a lazy module compile it once") {
  GlobalCacheScope Scope;
  EnvScope Env({"CUDA_MODULE_LOADING"});
  ModuleSource Source;
  std::string Ptx = scaleModule("0f3F000000");
  Source.Image = Ptx.c_str();
  JitLogs Logs;
  auto M = Module::load(cacheTestContext(), Source, JitOptions(), Logs);
  REQUIRE(static_cast<bool>(M));
  std::vector<Function *> Seen(8, nullptr);
  std::vector<std::thread> Threads;
  for (int I = 0; I < 8; ++I)
    Threads.emplace_back([&, I] { Seen[I] = (*M)->function("scale"); });
  for (std::thread &T : Threads)
    T.join();
  REQUIRE(Seen[0] != nullptr);
  for (Function *F : Seen)
    CHECK(F == Seen[0]);
  (*M)->waitForBackgroundCompiles();        // the tiered JIT stores the kernel's optimized code when it is compiled
  CHECK(Scope.cache().stats().Stores == 3); // the shared part and the kernel's quick and optimized code, once each
  CHECK(runScale(cacheTestContext(), **M, 0.5f).empty());
}

TEST_CASE("CUDA_CACHE_MAXSIZE evicts the least recently loaded module's code") {
  GlobalCacheScope Scope;
  EnvScope Env({"CUDA_CACHE_PATH", "CUDA_CACHE_MAXSIZE", "CUDA_CACHE_DISABLE"});
  std::string A = scaleModule("0f40000000"), B = scaleModule("0f40400000"), C = scaleModule("0f40800000");
  loadAndMaterialize(A);
  uint64_t One = Scope.cache().stats().Bytes;
  REQUIRE(One > 0);
  // Room for two entries of this size (the three modules differ in one constant), not three.
  ::setenv("CUDA_CACHE_PATH", Scope.path().c_str(), 1);
  ::setenv("CUDA_CACHE_MAXSIZE", std::to_string(One * 5 / 2).c_str(), 1);
  Scope.cache().reconfigure(ComputeCacheConfig::fromEnvironment());
  loadAndMaterialize(B);
  CHECK(Scope.cache().stats().Entries == 2);
  loadAndMaterialize(C);
  CHECK(Scope.cache().stats().Entries == 2);
  CHECK(Scope.cache().stats().Evictions == 1);
  CHECK(loadAndMaterialize(C)->fromComputeCache());
  CHECK(loadAndMaterialize(B)->fromComputeCache());
  auto Again = loadAndMaterialize(A); // evicted: compiled again, and runs
  CHECK_FALSE(Again->fromComputeCache());
  CHECK(runScale(cacheTestContext(), *Again, 2.0f).empty());
  CHECK(Scope.cache().stats().Bytes <= One * 5 / 2);
}
