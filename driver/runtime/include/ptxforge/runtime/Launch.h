// Kernel launches: `kernel<<<grid, block, smem, stream>>>(args)` pushes a call configuration, and the host stub
// nvcc generates pops it and launches the kernel it registered (__cudaLaunchKernel, or cudaLaunchKernel with
// -D__NV_LEGACY_LAUNCH). The configuration stack is per thread, as launches nest through argument evaluation.
#pragma once

#include "ptxforge/runtime/Registry.h"

namespace ptxforge::runtime {
struct DriverLaunchConfig;
}
extern "C" {
// libcuda.so.1's, with CUDA's CUlaunchConfig (ptxforge::runtime::DriverLaunchConfig).
CUresult cuLaunchKernelEx(const ptxforge::runtime::DriverLaunchConfig *config, CUfunction f, void **kernelParams,
                          void **extra);
CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func,
                                      const ptxforge::runtime::DriverLaunchConfig *config);
CUresult cuOccupancyMaxPotentialClusterSize(int *clusterSize, CUfunction func,
                                            const ptxforge::runtime::DriverLaunchConfig *config);
}

namespace ptxforge::runtime {

struct CallConfiguration {
  dim3 Grid, Block;
  size_t SharedBytes = 0;
  cudaStream_t Stream = nullptr;
};
void pushCallConfiguration(const CallConfiguration &C);
/// cudaErrorMissingConfiguration when nothing was pushed.
cudaError_t popCallConfiguration(CallConfiguration &C);

/// PTXFORGE_CUDART_VERBOSE=1: launches and occupancy answers are logged to stderr (which kernels a library
/// like CUB runs, and how it sizes their grids).
bool verbose();

/// Launches K (null: cudaErrorInvalidDeviceFunction) with Args, one pointer per kernel parameter. A bad
/// configuration is cudaErrorInvalidValue (CUDA 13, as the driver reports it).
cudaError_t launchKernel(const KernelEntry *K, dim3 Grid, dim3 Block, void **Args, size_t SharedBytes,
                         cudaStream_t Stream, bool Cooperative = false);
/// cudaLaunchKernelExC: the driver's cuLaunchKernelEx with the same attributes (cluster shapes, cooperative).
cudaError_t launchKernelEx(const KernelEntry *K, const cudaLaunchConfig_t &Config, void **Args);

/// cuLaunchKernelEx's and the cluster occupancy functions' CUlaunchConfig, as CUDA's cuda.h lays it out
/// (ptxforge's cuda.h does not declare it); the attributes are cudaLaunchAttribute's layout, CUlaunchAttribute's.
struct DriverLaunchConfig {
  unsigned GridDimX, GridDimY, GridDimZ, BlockDimX, BlockDimY, BlockDimZ, SharedMemBytes;
  CUstream Stream;
  const cudaLaunchAttribute *Attrs;
  unsigned NumAttrs;
};
DriverLaunchConfig driverLaunchConfig(const cudaLaunchConfig_t &C);

} // namespace ptxforge::runtime
