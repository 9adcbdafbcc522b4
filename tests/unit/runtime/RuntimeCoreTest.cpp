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

// Host "stubs" and shadows: only their addresses matter to the registry (the kernel is extern "C").
void squarePlusStub() {}
void sassOnlyStub() {}
int MagicShadow;

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
