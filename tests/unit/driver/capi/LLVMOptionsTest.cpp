// A host program that uses LLVM itself keeps its LLVM options when it loads libcuda.so.1 and JIT-compiles a kernel:
// LLVM's option registry is process-global (one libLLVM per process), so ptxforge must leave it alone. This test
// process links libLLVM, sets options of its own, then dlopens libcuda.so.1, compiles and runs a kernel through
// it and checks that no option changed.
#include "TestKernels.h"

#include "cuda.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <dlfcn.h>
#include <map>
#include <string>
#include <vector>

namespace {

/// An option of the host program (registered in the process's one LLVM option registry).
llvm::cl::opt<int> HostOption("ptxforge-test-host-option", llvm::cl::init(0), llvm::cl::Hidden);

/// How often each registered option was given: any cl::ParseCommandLineOptions that sets one changes this.
std::map<std::string, int> occurrences() {
  std::map<std::string, int> Out;
  for (const auto &[Name, Opt] : llvm::cl::getRegisteredOptions())
    Out[Name.str()] = Opt->getNumOccurrences();
  return Out;
}

/// LoopVectorize's -epilogue-vectorization-force-VF (a cl::opt<unsigned> of libLLVM).
unsigned epilogueVF() {
  llvm::cl::Option *O = llvm::cl::getRegisteredOptions().lookup("epilogue-vectorization-force-VF");
  REQUIRE(O != nullptr);
  return static_cast<llvm::cl::opt<unsigned> *>(O)->getValue();
}

template <class F> F symbol(void *Lib, const char *Name) {
  void *P = dlsym(Lib, Name);
  REQUIRE_MESSAGE(P != nullptr, Name);
  return reinterpret_cast<F>(P);
}

/// Runs `scale` (factor 3) over N elements through libcuda.so.1; returns the first wrong element's index, or N.
unsigned runScaleThroughLibcuda(void *Lib) {
  auto Init = symbol<decltype(&cuInit)>(Lib, "cuInit");
  auto DeviceGet = symbol<decltype(&cuDeviceGet)>(Lib, "cuDeviceGet");
  auto CtxCreate = symbol<decltype(&cuCtxCreate)>(Lib, "cuCtxCreate_v4");
  auto LoadData = symbol<decltype(&cuModuleLoadData)>(Lib, "cuModuleLoadData");
  auto GetFunction = symbol<decltype(&cuModuleGetFunction)>(Lib, "cuModuleGetFunction");
  auto MemAlloc = symbol<decltype(&cuMemAlloc)>(Lib, "cuMemAlloc_v2");
  auto Launch = symbol<decltype(&cuLaunchKernel)>(Lib, "cuLaunchKernel");
  auto Sync = symbol<decltype(&cuCtxSynchronize)>(Lib, "cuCtxSynchronize");
  auto CopyDtoH = symbol<decltype(&cuMemcpyDtoH)>(Lib, "cuMemcpyDtoH_v2");
  REQUIRE(Init(0) == CUDA_SUCCESS);
  CUdevice Dev;
  REQUIRE(DeviceGet(&Dev, 0) == CUDA_SUCCESS);
  CUcontext Ctx;
  REQUIRE(CtxCreate(&Ctx, nullptr, 0, Dev) == CUDA_SUCCESS);
  const std::string Ptx = ptxforge::testing::scaleModule("0f40400000"); // 3.0
  CUmodule M;
  REQUIRE(LoadData(&M, Ptx.c_str()) == CUDA_SUCCESS);
  CUfunction F;
  REQUIRE(GetFunction(&F, M, "scale") == CUDA_SUCCESS);
  constexpr unsigned N = 1000;
  CUdeviceptr Out;
  REQUIRE(MemAlloc(&Out, N * sizeof(float)) == CUDA_SUCCESS);
  unsigned Count = N;
  void *Args[] = {&Out, &Count};
  REQUIRE(Launch(F, (N + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, Args, nullptr) == CUDA_SUCCESS);
  REQUIRE(Sync() == CUDA_SUCCESS);
  std::vector<float> Host(N);
  REQUIRE(CopyDtoH(Host.data(), Out, N * sizeof(float)) == CUDA_SUCCESS);
  for (unsigned I = 0; I < N; ++I)
    if (Host[I] != 3.0f * static_cast<float>(I))
      return I;
  return N;
}

} // namespace

TEST_CASE("loading libcuda.so.1 and JIT-compiling a kernel leaves the host program's LLVM options as they were") {
  // The whole optimized pipeline, compiled now: no cached code, no quick tier, the module compiled at load.
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  ::setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  ::setenv("PTXFORGE_JIT_TIER", "2", 1);
  ::unsetenv("PTXFORGE_LLVM_ARGS"); // the debugging switch that may change them is not set
  const char *Argv[] = {"host-program", "-epilogue-vectorization-force-VF=2", "-ptxforge-test-host-option=7"};
  REQUIRE(llvm::cl::ParseCommandLineOptions(3, Argv, "", &llvm::errs()));
  REQUIRE(epilogueVF() == 2);
  const std::map<std::string, int> Before = occurrences();

  void *Lib = dlopen(PTXFORGE_LIBCUDA, RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(Lib != nullptr, std::string(Lib ? "" : dlerror()));
  CHECK(runScaleThroughLibcuda(Lib) == 1000);

  CHECK(epilogueVF() == 2);
  CHECK(HostOption == 7);
  const std::map<std::string, int> After = occurrences();
  for (const auto &[Name, Count] : After) {
    auto It = Before.find(Name);
    CAPTURE(Name);
    CHECK(Count == (It == Before.end() ? 0 : It->second));
  }
}
