#include "ptxforge/runtime/DeviceProperties.h"

#include "ptxforge/runtime/Errors.h"
#include "ptxforge/runtime/RuntimeContext.h"

#include <cstring>

namespace ptxforge::runtime {

namespace {
/// Reads attributes into fields; the first failure wins (an attribute the driver lacks reads as 0).
struct AttributeReader {
  CUdevice Device;
  cudaError_t Error = cudaSuccess;

  int get(CUdevice_attribute A) {
    int V = 0;
    CUresult R = cuDeviceGetAttribute(&V, A, Device);
    if (R != CUDA_SUCCESS && R != CUDA_ERROR_INVALID_VALUE && !Error)
      Error = fromDriver(R);
    return V;
  }
};
} // namespace

cudaError_t deviceProperties(cudaDeviceProp &P, int Device) {
  if (cudaError_t E = checkDevice(Device))
    return E;
  std::memset(&P, 0, sizeof P);
  if (CUresult R = cuDeviceGetName(P.name, sizeof P.name, Device); R != CUDA_SUCCESS)
    return fromDriver(R);
  CUuuid Uuid;
  if (cuDeviceGetUuid(&Uuid, Device) == CUDA_SUCCESS)
    std::memcpy(P.uuid.bytes, Uuid.bytes, sizeof P.uuid.bytes);
  size_t Total = 0;
  if (CUresult R = cuDeviceTotalMem(&Total, Device); R != CUDA_SUCCESS)
    return fromDriver(R);
  P.totalGlobalMem = Total;

  AttributeReader A{Device};
#define DEVICE_PROPERTY(FIELD, ATTRIBUTE) P.FIELD = A.get(CU_DEVICE_ATTRIBUTE_##ATTRIBUTE);
#include "DeviceProperties.def"
#undef DEVICE_PROPERTY
  return A.Error;
}

} // namespace ptxforge::runtime
