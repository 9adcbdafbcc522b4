// driver::Settings: each environment variable that configures codegen and fatbinary selection is parsed in one
// place, and every setting that changes the generated code changes the compute cache's key.
#include "ptxforge/driver/Settings.h"
#include "ptxforge/driver/ComputeCache.h"
#include "ptxforge/driver/Device.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace ptxforge;
using namespace ptxforge::driver;

namespace {

/// Sets the variables for one scope, and unsets them afterwards.
struct EnvScope {
  std::vector<std::string> Names;
  EnvScope(std::initializer_list<std::pair<const char *, const char *>> Vars) {
    for (auto [Name, Value] : Vars) {
      ::setenv(Name, Value, 1);
      Names.push_back(Name);
    }
  }
  ~EnvScope() {
    for (const std::string &N : Names)
      ::unsetenv(N.c_str());
  }
};

} // namespace

TEST_CASE("CUDA_FORCE_PTX_JIT and CUDA_DISABLE_PTX_JIT are set when their value is a nonzero integer") {
  {
    EnvScope E{{"CUDA_FORCE_PTX_JIT", "1"}, {"CUDA_DISABLE_PTX_JIT", "0"}};
    fatbin::JitPolicy P = jitPolicyFromEnvironment();
    CHECK(P.ForcePtxJit);
    CHECK_FALSE(P.DisablePtxJit);
  }
  {
    EnvScope E{{"CUDA_FORCE_PTX_JIT", "yes"}, {"CUDA_DISABLE_PTX_JIT", " 1 "}};
    fatbin::JitPolicy P = Settings::fromEnvironment().Jit;
    CHECK_FALSE(P.ForcePtxJit);
    CHECK(P.DisablePtxJit);
  }
  fatbin::JitPolicy P = jitPolicyFromEnvironment();
  CHECK_FALSE(P.ForcePtxJit);
  CHECK_FALSE(P.DisablePtxJit);
}

TEST_CASE("without variables the settings are codegen's defaults, the streaming threshold the host's") {
  Settings S = Settings::fromEnvironment();
  CHECK(S.Compile.TargetCpu.empty());
  CHECK(S.Compile.StreamingStoreBytes == hostStreamingStoreBytes());
  CHECK(hostStreamingStoreBytes() > 0);
  CHECK(S.Compile.Lowering.LoopCuts);
  CHECK(S.Compile.Lowering.BlockFunctions);
  CHECK(S.Compile.Perf == codegen::PerfMap::Off);
  CHECK(S.Tier == JitTier::Tiered);
  CHECK(S.Workers == 0);
  CHECK(S.PinWorkers);
  CHECK(S.LLVMArgs.empty());
}

TEST_CASE("each PTXFORGE_ variable reaches its option") {
  EnvScope E{{"PTXFORGE_JIT_CPU", "x86-64-v3"}, {"PTXFORGE_STREAMING_STORES", "1"},    {"PTXFORGE_LOOP_CUTS", "0"},
             {"PTXFORGE_JIT_TIER", "0"},        {"PTXFORGE_PERF_MAP", "objects"},      {"PTXFORGE_WORKERS", "3"},
             {"PTXFORGE_PIN_WORKERS", "0"},     {"PTXFORGE_LLVM_ARGS", "-time-passes"}};
  Settings S = Settings::fromEnvironment();
  CHECK(S.Compile.TargetCpu == "x86-64-v3");
  CHECK(S.Compile.StreamingStoreBytes == 1);
  CHECK_FALSE(S.Compile.Lowering.LoopCuts);
  CHECK(S.Tier == JitTier::Quick);
  CHECK_FALSE(S.Compile.Lowering.BlockFunctions); // the quick tier lowers without block functions
  CHECK(S.Compile.FastCodeGen);                   // and compiles with -O0's code generator
  CHECK(S.Compile.OptLevel == 1);
  CHECK(S.Compile.Perf == codegen::PerfMap::Objects);
  CHECK(S.Workers == 3);
  CHECK_FALSE(S.PinWorkers);
  CHECK(S.LLVMArgs == "-time-passes");
  codegen::LaunchConfig C = S.launchConfig({});
  CHECK(C.Workers == 3);
  CHECK_FALSE(C.PinWorkers);
  codegen::LaunchConfig Explicit;
  Explicit.Workers = 1;
  CHECK(S.launchConfig(Explicit).Workers == 1);
}

TEST_CASE("other spellings: PTXFORGE_JIT_TIER=2, PTXFORGE_PERF_MAP=1, PTXFORGE_STREAMING_STORES=0") {
  EnvScope E{{"PTXFORGE_JIT_TIER", "2"}, {"PTXFORGE_PERF_MAP", "1"}, {"PTXFORGE_STREAMING_STORES", "0"}};
  Settings S = Settings::fromEnvironment();
  CHECK(S.Tier == JitTier::Optimized);
  CHECK(S.Compile.Lowering.BlockFunctions);
  CHECK(S.Compile.Perf == codegen::PerfMap::Symbols);
  CHECK(S.Compile.StreamingStoreBytes == 0);
}

TEST_CASE("the quick code: thread functions, -O1 at most, -O0's code generator, and keys of its own") {
  codegen::CompileOptions O;
  O.OptLevel = 3;
  codegen::CompileOptions Q = codegen::quickCode(O);
  CHECK_FALSE(Q.Lowering.BlockFunctions);
  CHECK(Q.OptLevel == 1);
  CHECK(Q.FastCodeGen);
  CHECK(Q.codeKey() != O.codeKey());
  O.OptLevel = 0; // CU_JIT_OPTIMIZATION_LEVEL=0 stays 0
  CHECK(codegen::quickCode(O).OptLevel == 0);
  CHECK(codegen::quickCode(Q).codeKey() == Q.codeKey());
}

TEST_CASE("every option that changes the code changes the compute cache key; the perf map does not") {
  const std::string Ptx = ".version 8.0\n.target sm_80\n.address_size 64\n";
  auto key = [&](const codegen::CompileOptions &O) { return computeCacheKey({Ptx, 90, O.codeKey()}); };
  const codegen::CompileOptions Base;
  std::vector<codegen::CompileOptions> Changed(6, Base);
  Changed[0].OptLevel = 3;
  Changed[1].TargetCpu = "x86-64-v3";
  Changed[2].StreamingStoreBytes = Base.StreamingStoreBytes / 2; // another host cache size
  Changed[3].Lowering.LoopCuts = false;
  Changed[4].Lowering.BlockFunctions = false;
  Changed[5].FastCodeGen = true;
  for (size_t I = 0; I < Changed.size(); ++I) {
    CAPTURE(I);
    CHECK(key(Changed[I]) != key(Base));
    for (size_t J = 0; J < I; ++J)
      CHECK(key(Changed[I]) != key(Changed[J]));
  }
  codegen::CompileOptions Perf = Base;
  Perf.Perf = codegen::PerfMap::Symbols;
  Perf.Lowering.ModuleName = "other";
  CHECK(key(Perf) == key(Base));
}

TEST_CASE("PTXFORGE_DEVICE_CC in every spelling, as cuInit and the CLI read it") {
  auto Default = deviceComputeCapabilityFromEnvironment(); // unset
  REQUIRE(static_cast<bool>(Default));
  CHECK(*Default == DefaultComputeCapability);
  CHECK(DefaultComputeCapability == 130);
  for (auto [Text, CC] : {std::pair<const char *, unsigned>{"90", 90},
                          {"9.0", 90},
                          {"sm_90", 90},
                          {"sm_90a", 90},
                          {"compute_80", 80},
                          {"8.6", 86},
                          {"103", 103}}) {
    EnvScope E{{"PTXFORGE_DEVICE_CC", Text}};
    CAPTURE(Text);
    auto Read = deviceComputeCapabilityFromEnvironment();
    REQUIRE(static_cast<bool>(Read));
    CHECK(*Read == CC);
  }
  EnvScope E{{"PTXFORGE_DEVICE_CC", "sm_9x"}};
  auto Bad = deviceComputeCapabilityFromEnvironment();
  REQUIRE_FALSE(static_cast<bool>(Bad));
  CHECK(llvm::toString(Bad.takeError()).find("PTXFORGE_DEVICE_CC: 'sm_9x' is not a compute capability") !=
        std::string::npos);
}

TEST_CASE("PTXFORGE_LAUNCH_TIMEOUT: seconds for the launch watchdog; anything but a non-negative number is invalid") {
  {
    Settings S = Settings::fromEnvironment();
    CHECK(S.LaunchTimeoutSeconds == 0);
    CHECK_FALSE(S.LaunchTimeoutInvalid);
  }
  {
    EnvScope E{{"PTXFORGE_LAUNCH_TIMEOUT", "2.5"}};
    Settings S = Settings::fromEnvironment();
    CHECK(S.LaunchTimeoutSeconds == 2.5);
    CHECK_FALSE(S.LaunchTimeoutInvalid);
    CHECK(S.launchConfig({}).TimeoutSeconds == 2.5);
  }
  for (const char *Bad : {"abc", "-1", "inf", "1s"}) {
    EnvScope E{{"PTXFORGE_LAUNCH_TIMEOUT", Bad}};
    Settings S = Settings::fromEnvironment();
    CHECK_MESSAGE(S.LaunchTimeoutInvalid, Bad);
    CHECK(S.LaunchTimeoutSeconds == 0);
  }
}
