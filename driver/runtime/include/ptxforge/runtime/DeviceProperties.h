// cudaGetDeviceProperties: a cudaDeviceProp filled from the driver's device attributes (cuDeviceGetAttribute,
// cuDeviceGetName, cuDeviceTotalMem, cuDeviceGetUuid), so the runtime and driver APIs report the same device.
#pragma once

#include "ptxforge/runtime/RuntimeAbi.h"

namespace ptxforge::runtime {

cudaError_t deviceProperties(cudaDeviceProp &P, int Device);

} // namespace ptxforge::runtime
