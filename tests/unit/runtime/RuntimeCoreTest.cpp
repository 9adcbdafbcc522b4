#include "ptxforge/runtime/Errors.h"
#include "ptxforge/runtime/Launch.h"
#include "ptxforge/runtime/Registry.h"
#include "ptxforge/runtime/RuntimeContext.h"

#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace ptxforge::runtime;

namespace {

/// A fatbinary of shared/fatbins, kept alive with the wrapper nvcc's host code would hand the runtime.
struct WrappedFatbin {
  std::vector<char> Bytes;
  FatbinWrapper Wrapper{};
  explicit WrappedFatbin(const char *Name) {
    std::ifstream In(std::string(PTXFORGE_SHARED_DIR) + "/fatbins/" + Name, std::ios::binary);
    Bytes.assign(std::istreambuf_iterator<char>(In), {});
    Wrapper = {FatbinWrapperMagic, 1, Bytes.data(), nullptr};
  }
};

/// What an nvcc -rdc=true program registers: the wrapper of `nvcc -dlink`'s fatbinary (version 2; an empty
/// container for a PTX-only build) pointing at each translation unit's relocatable fatbinary, nvcc's
/// -fatbin -rdc=true output of tests/unit/driver/inputs' sources.
struct LinkedProgram {
  std::vector<std::vector<char>> Units;
  std::vector<const void *> UnitList; ///< null-terminated, as the link stub's __cudaPrelinkedFatbins
  uint64_t DeviceLinked[2] = {0x00100001ba55ed50ull, 0};
  FatbinWrapper Wrapper{};
  explicit LinkedProgram(std::initializer_list<const char *> Names) {
    for (const char *Name : Names) {
      std::ifstream In(std::string(PTXFORGE_SOURCE_DIR) + "/tests/unit/driver/inputs/" + Name + ".rdc.fatbin",
                       std::ios::binary);
      Units.emplace_back(std::istreambuf_iterator<char>(In), std::istreambuf_iterator<char>());
      REQUIRE(!Units.back().empty());
    }
    for (const auto &U : Units)
      UnitList.push_back(U.data());
    UnitList.push_back(nullptr);
    Wrapper = {FatbinWrapperMagic, LinkedFatbinWrapperVersion, DeviceLinked, UnitList.data()};
  }
};

// Host "stubs" and shadows: only their addresses matter to the registry (the kernel is extern "C").
void squarePlusStub() {}
void sassOnlyStub() {}
int MagicShadow;
void linkKernelStub() {}
void readCounterStub() {}
void unresolvedStub() {}
void noPtxStub() {}
int BiasShadow;

} // namespace

TEST_CASE("errors: CUresults map to CUDA 13's runtime codes, with NVIDIA's names and strings") {
  CHECK(fromDriver(CUDA_SUCCESS) == cudaSuccess);
  CHECK(fromDriver(CUDA_ERROR_OUT_OF_MEMORY) == cudaErrorMemoryAllocation);
  CHECK(fromDriver(CUDA_ERROR_NO_BINARY_FOR_GPU) == cudaErrorNoKernelImageForDevice);
  CHECK(fromDriver(CUDA_ERROR_INVALID_CONTEXT) == cudaErrorDeviceUninitialized);
  CHECK(fromDriver(CUDA_ERROR_ILLEGAL_ADDRESS) == cudaErrorIllegalAddress);
  CHECK(fromDriver(CUDA_ERROR_LAUNCH_FAILED) == cudaErrorLaunchFailure);
  CHECK(std::string(errorName(cudaErrorInvalidValue)) == "cudaErrorInvalidValue");
  CHECK(std::string(errorString(cudaErrorInvalidConfiguration)) == "invalid configuration argument");
  CHECK(std::string(errorString(cudaErrorMemoryAllocation)) == "out of memory");
  // From 100 on the wording is the driver's.
  CHECK(std::string(errorString(cudaErrorIllegalAddress)) == "an illegal memory access was encountered");
  CHECK(errorName(static_cast<cudaError_t>(12345)) == nullptr);
  CHECK(errorString(static_cast<cudaError_t>(12345)) == nullptr);
}

TEST_CASE("errors: the last error is per thread, kept until read") {
  takeLastError();
  CHECK(record(cudaSuccess) == cudaSuccess);
  CHECK(lastError() == cudaSuccess);
  CHECK(record(cudaErrorInvalidValue) == cudaErrorInvalidValue);
  CHECK(record(cudaSuccess) == cudaSuccess); // a later success does not clear it
  CHECK(lastError() == cudaErrorInvalidValue);
  CHECK(takeLastError() == cudaErrorInvalidValue);
  CHECK(lastError() == cudaSuccess);
}

TEST_CASE("launch: call configurations nest last in, first out") {
  CallConfiguration C;
  CHECK(popCallConfiguration(C) == cudaErrorMissingConfiguration);
  pushCallConfiguration({{1, 1, 1}, {32, 1, 1}, 0, nullptr});
  pushCallConfiguration({{2, 1, 1}, {64, 1, 1}, 128, nullptr});
  REQUIRE(popCallConfiguration(C) == cudaSuccess);
  CHECK((C.Grid.x == 2 && C.Block.x == 64 && C.SharedBytes == 128));
  REQUIRE(popCallConfiguration(C) == cudaSuccess);
  CHECK(C.Grid.x == 1);
  CHECK(popCallConfiguration(C) == cudaErrorMissingConfiguration);
}

TEST_CASE("registry: a wrapped fatbinary's kernel and variable load lazily and run") {
  FatbinRegistry &R = FatbinRegistry::get();
  FatbinWrapper Bad{0x1234, 1, nullptr, nullptr};
  CHECK(R.registerFatbin(&Bad) == nullptr);

  static WrappedFatbin F("fb_sm75_sm90_default.fatbin");
  REQUIRE(!F.Bytes.empty());
  void **Handle = R.registerFatbin(&F.Wrapper);
  REQUIRE(Handle != nullptr);
  R.registerKernel(Handle, reinterpret_cast<const void *>(&squarePlusStub), "fb_square_plus");
  R.registerVariable(Handle, &MagicShadow, "fb_magic", sizeof(int), false, nullptr);

  CUdeviceptr Magic = 0;
  size_t Size = 0;
  REQUIRE(R.variable(&MagicShadow, &Magic, &Size) == cudaSuccess);
  CHECK(Size == 4);
  CHECK(*reinterpret_cast<unsigned *>(Magic) == 0x600dcafeu); // the image's initialiser; unified addressing
  int NotRegistered;
  CHECK(R.variable(&NotRegistered, &Magic, &Size) == cudaErrorInvalidSymbol);

  const KernelEntry *K = R.kernel(reinterpret_cast<const void *>(&squarePlusStub));
  REQUIRE(K != nullptr);
  CHECK(R.kernel(K) == K); // a cudaKernel_t is the entry itself
  const int N = 100;
  CUdeviceptr In = 0, Out = 0;
  REQUIRE(cuMemAlloc(&In, N * sizeof(float)) == CUDA_SUCCESS);
  REQUIRE(cuMemAlloc(&Out, N * sizeof(float)) == CUDA_SUCCESS);
  for (int I = 0; I < N; ++I)
    reinterpret_cast<float *>(In)[I] = float(I);
  int Count = N;
  void *Args[] = {&In, &Out, &Count};
  REQUIRE(launchKernel(K, {1, 1, 1}, {128, 1, 1}, Args, 0, nullptr) == cudaSuccess);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(reinterpret_cast<float *>(Out)[9] == 9.0f * 9.0f + 254.0f);
  CHECK(launchKernel(K, {1, 1, 1}, {2048, 1, 1}, Args, 0, nullptr) == cudaErrorInvalidValue);
  CHECK(launchKernel(nullptr, {1, 1, 1}, {1, 1, 1}, Args, 0, nullptr) == cudaErrorInvalidDeviceFunction);
  cuMemFree(In);
  cuMemFree(Out);
}

TEST_CASE("registry: a fatbinary with SASS only has no kernel image for the device") {
  FatbinRegistry &R = FatbinRegistry::get();
  static WrappedFatbin F("fb_sass_only_sm90.fatbin");
  void **Handle = R.registerFatbin(&F.Wrapper);
  REQUIRE(Handle != nullptr);
  R.registerKernel(Handle, reinterpret_cast<const void *>(&sassOnlyStub), "fb_square_plus");
  CUfunction Fn = nullptr;
  const KernelEntry *K = R.kernel(reinterpret_cast<const void *>(&sassOnlyStub));
  REQUIRE(K != nullptr);
  CHECK(R.function(*K, &Fn) == cudaErrorNoKernelImageForDevice);
  CHECK(R.function(*K, &Fn) == cudaErrorNoKernelImageForDevice); // remembered, not loaded again
  R.unregisterFatbin(Handle);
  CHECK(R.kernel(reinterpret_cast<const void *>(&sassOnlyStub)) == nullptr);
}

TEST_CASE("registry: an -rdc=true program's translation units are linked into one module at the first use") {
  FatbinRegistry &R = FatbinRegistry::get();
  // The SASS-only unit is left out, as libcudadevrt's is: nothing needs it.
  static LinkedProgram P({"rdc_sass_only", "link_main", "link_lib", "link_const"});
  void **Handle = R.registerFatbin(&P.Wrapper);
  REQUIRE(Handle != nullptr);
  R.registerKernel(Handle, reinterpret_cast<const void *>(&linkKernelStub), "link_kernel");
  R.registerKernel(Handle, reinterpret_cast<const void *>(&readCounterStub), "read_counter");
  R.registerVariable(Handle, &BiasShadow, "g_bias", sizeof(int), false, nullptr);

  CUdeviceptr Bias = 0;
  size_t Size = 0;
  REQUIRE(R.variable(&BiasShadow, &Bias, &Size) == cudaSuccess); // defined in link_lib, used by link_main
  CHECK(*reinterpret_cast<int *>(Bias) == 7);

  const int N = 64;
  CUdeviceptr Out = 0, FOut = 0, Count = 0;
  REQUIRE(cuMemAlloc(&Out, N * sizeof(int)) == CUDA_SUCCESS);
  REQUIRE(cuMemAlloc(&FOut, N * sizeof(float)) == CUDA_SUCCESS);
  REQUIRE(cuMemAlloc(&Count, sizeof(int)) == CUDA_SUCCESS);
  int NArg = N;
  void *Args[] = {&Out, &FOut, &NArg};
  const KernelEntry *K = R.kernel(reinterpret_cast<const void *>(&linkKernelStub));
  REQUIRE(K != nullptr);
  REQUIRE(launchKernel(K, {1, 1, 1}, {N, 1, 1}, Args, 0, nullptr) == cudaSuccess);
  void *CountArgs[] = {&Count};
  REQUIRE(launchKernel(R.kernel(reinterpret_cast<const void *>(&readCounterStub)), {1, 1, 1}, {1, 1, 1}, CountArgs, 0,
                       nullptr) == cudaSuccess);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
  for (int I : {0, 5, 63}) {
    // add_bias(helper_main(i)) + g_bias, each unit's internal helper and counter its own (link_main.cu)
    CHECK(reinterpret_cast<int *>(Out)[I] == 2 * I + 100 + 1000 + 7 + 7);
    CHECK(reinterpret_cast<float *>(FOut)[I] == I * 2.5f + 2.5f);
  }
  CHECK(*reinterpret_cast<int *>(Count) == N);
  cuMemFree(Out);
  cuMemFree(FOut);
  cuMemFree(Count);
}

TEST_CASE("registry: an -rdc=true program whose device code does not link fails its launches, the process lives") {
  FatbinRegistry &R = FatbinRegistry::get();
  static LinkedProgram Unresolved({"link_main", "link_lib"}); // scaled() and c_scale are in link_const
  void **Handle = R.registerFatbin(&Unresolved.Wrapper);
  REQUIRE(Handle != nullptr);
  R.registerKernel(Handle, reinterpret_cast<const void *>(&unresolvedStub), "link_kernel");
  const KernelEntry *K = R.kernel(reinterpret_cast<const void *>(&unresolvedStub));
  REQUIRE(K != nullptr);
  CUfunction Fn = nullptr;
  CHECK(R.function(*K, &Fn) == cudaErrorInvalidPtx);
  CHECK(R.function(*K, &Fn) == cudaErrorInvalidPtx); // remembered, not linked again

  static LinkedProgram SassOnly({"rdc_sass_only"});
  Handle = R.registerFatbin(&SassOnly.Wrapper);
  REQUIRE(Handle != nullptr);
  R.registerKernel(Handle, reinterpret_cast<const void *>(&noPtxStub), "sass_only_kernel");
  K = R.kernel(reinterpret_cast<const void *>(&noPtxStub));
  REQUIRE(K != nullptr);
  CHECK(R.function(*K, &Fn) == cudaErrorNoKernelImageForDevice);
}
