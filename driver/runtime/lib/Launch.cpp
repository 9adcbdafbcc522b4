#include "ptxforge/runtime/Launch.h"

#include "ptxforge/runtime/Errors.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace ptxforge::runtime {

namespace {
thread_local std::vector<CallConfiguration> Configurations;
} // namespace

bool verbose() {
  static const bool V = std::getenv("PTXFORGE_CUDART_VERBOSE") != nullptr;
  return V;
}

void pushCallConfiguration(const CallConfiguration &C) { Configurations.push_back(C); }

cudaError_t popCallConfiguration(CallConfiguration &C) {
  if (Configurations.empty())
    return cudaErrorMissingConfiguration;
  C = Configurations.back();
  Configurations.pop_back();
  return cudaSuccess;
}

cudaError_t launchKernel(const KernelEntry *K, dim3 Grid, dim3 Block, void **Args, size_t SharedBytes,
                         cudaStream_t Stream, bool Cooperative) {
  if (!K)
    return cudaErrorInvalidDeviceFunction;
  CUfunction F = nullptr;
  if (cudaError_t E = FatbinRegistry::get().function(*K, &F))
    return E;
  if (SharedBytes > 0xffffffffu)
    return cudaErrorInvalidValue;
  cudaError_t E = Cooperative
                      ? fromDriver(cuLaunchCooperativeKernel(F, Grid.x, Grid.y, Grid.z, Block.x, Block.y, Block.z,
                                                             static_cast<unsigned>(SharedBytes), Stream, Args))
                      : fromDriver(cuLaunchKernel(F, Grid.x, Grid.y, Grid.z, Block.x, Block.y, Block.z,
                                                  static_cast<unsigned>(SharedBytes), Stream, Args, nullptr));
  if (verbose())
    std::fprintf(stderr, "ptxforge cudart: launch %s grid (%u,%u,%u) block (%u,%u,%u) smem %zu stream %p: %s\n",
                 K->Name.c_str(), Grid.x, Grid.y, Grid.z, Block.x, Block.y, Block.z, SharedBytes,
                 static_cast<void *>(Stream), errorName(E));
  return E;
}

DriverLaunchConfig driverLaunchConfig(const cudaLaunchConfig_t &C) {
  return {C.gridDim.x,
          C.gridDim.y,
          C.gridDim.z,
          C.blockDim.x,
          C.blockDim.y,
          C.blockDim.z,
          static_cast<unsigned>(C.dynamicSmemBytes),
          C.stream,
          C.attrs,
          C.numAttrs};
}

cudaError_t launchKernelEx(const KernelEntry *K, const cudaLaunchConfig_t &Config, void **Args) {
  if (!K)
    return cudaErrorInvalidDeviceFunction;
  CUfunction F = nullptr;
  if (cudaError_t E = FatbinRegistry::get().function(*K, &F))
    return E;
  if (Config.dynamicSmemBytes > 0xffffffffu)
    return cudaErrorInvalidValue;
  DriverLaunchConfig C = driverLaunchConfig(Config);
  cudaError_t E = fromDriver(cuLaunchKernelEx(&C, F, Args, nullptr));
  if (verbose())
    std::fprintf(stderr, "ptxforge cudart: launch %s grid (%u,%u,%u) block (%u,%u,%u) smem %zu, %u attributes: %s\n",
                 K->Name.c_str(), C.GridDimX, C.GridDimY, C.GridDimZ, C.BlockDimX, C.BlockDimY, C.BlockDimZ,
                 Config.dynamicSmemBytes, C.NumAttrs, errorName(E));
  return E;
}

} // namespace ptxforge::runtime
