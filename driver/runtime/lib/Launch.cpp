#include "ptxforge/runtime/Launch.h"

#include "ptxforge/runtime/Errors.h"

#include <vector>

namespace ptxforge::runtime {

namespace {
thread_local std::vector<CallConfiguration> Configurations;
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
                         cudaStream_t Stream) {
  if (!K)
    return cudaErrorInvalidDeviceFunction;
  CUfunction F = nullptr;
  if (cudaError_t E = FatbinRegistry::get().function(*K, &F))
    return E;
  if (SharedBytes > 0xffffffffu)
    return cudaErrorInvalidValue;
  return fromDriver(cuLaunchKernel(F, Grid.x, Grid.y, Grid.z, Block.x, Block.y, Block.z,
                                   static_cast<unsigned>(SharedBytes), Stream, Args, nullptr));
}

} // namespace ptxforge::runtime
