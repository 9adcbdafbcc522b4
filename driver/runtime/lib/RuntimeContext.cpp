#include "ptxforge/runtime/RuntimeContext.h"

#include "ptxforge/runtime/Errors.h"
#include "ptxforge/runtime/Registry.h"

#include <map>
#include <mutex>

namespace ptxforge::runtime {

namespace {
thread_local int ThreadDevice = 0;

/// The primary contexts the runtime holds a reference on, by device.
struct PrimaryContexts {
  std::mutex Lock;
  std::map<int, CUcontext> Retained;
};
PrimaryContexts &primaries() {
  static auto *P = new PrimaryContexts; // never destroyed: atexit handlers still use it
  return *P;
}

cudaError_t retainPrimary(int Device, CUcontext *Out) {
  PrimaryContexts &P = primaries();
  std::scoped_lock L(P.Lock);
  CUcontext &Held = P.Retained[Device];
  if (!Held) {
    CUcontext C = nullptr;
    if (CUresult R = cuDevicePrimaryCtxRetain(&C, Device); R != CUDA_SUCCESS)
      return fromDriver(R);
    Held = C;
  }
  *Out = Held;
  return cudaSuccess;
}

/// A context that is current but destroyed underneath (cuCtxDestroy elsewhere) does not count.
bool usable(CUcontext C) {
  CUdevice D;
  return C && cuCtxGetDevice(&D) == CUDA_SUCCESS;
}
} // namespace

cudaError_t initDriver() {
  static const CUresult Init = cuInit(0);
  if (Init == CUDA_SUCCESS)
    return cudaSuccess;
  return Init == CUDA_ERROR_NO_DEVICE ? cudaErrorNoDevice : fromDriver(Init);
}

cudaError_t ensureContext(CUcontext *Out) {
  if (cudaError_t E = initDriver())
    return E;
  CUcontext C = nullptr;
  cuCtxGetCurrent(&C);
  if (!usable(C)) {
    if (cudaError_t E = retainPrimary(ThreadDevice, &C))
      return E;
    if (CUresult R = cuCtxSetCurrent(C); R != CUDA_SUCCESS)
      return fromDriver(R);
  }
  if (Out)
    *Out = C;
  return cudaSuccess;
}

cudaError_t checkDevice(int D) {
  if (cudaError_t E = initDriver())
    return E;
  int Count = 0;
  if (CUresult R = cuDeviceGetCount(&Count); R != CUDA_SUCCESS)
    return fromDriver(R);
  return D >= 0 && D < Count ? cudaSuccess : cudaErrorInvalidDevice;
}

cudaError_t primaryContext(int D, CUcontext *Out) {
  if (cudaError_t E = checkDevice(D))
    return E;
  return retainPrimary(D, Out);
}

cudaError_t setDevice(int D) {
  if (cudaError_t E = checkDevice(D))
    return E;
  ThreadDevice = D;
  // Since CUDA 12, cudaSetDevice initialises the device's primary context and makes it current.
  CUcontext C = nullptr;
  if (cudaError_t E = retainPrimary(D, &C))
    return E;
  return fromDriver(cuCtxSetCurrent(C));
}

cudaError_t getDevice(int *D) {
  if (cudaError_t E = initDriver())
    return E;
  CUcontext C = nullptr;
  CUdevice Dev;
  if (cuCtxGetCurrent(&C) == CUDA_SUCCESS && C && cuCtxGetDevice(&Dev) == CUDA_SUCCESS) {
    *D = Dev;
    return cudaSuccess;
  }
  *D = ThreadDevice;
  return cudaSuccess;
}

cudaError_t resetDevice() {
  if (cudaError_t E = initDriver())
    return E;
  int Device = 0;
  getDevice(&Device);
  PrimaryContexts &P = primaries();
  std::scoped_lock L(P.Lock);
  auto It = P.Retained.find(Device);
  if (It == P.Retained.end() || !It->second)
    return cudaSuccess;
  CUcontext Current = nullptr;
  cuCtxGetCurrent(&Current);
  CUcontext Primary = It->second;
  FatbinRegistry::get().forgetContext(Primary);
  cuDevicePrimaryCtxRelease(Device);
  CUresult R = cuDevicePrimaryCtxReset(Device);
  P.Retained.erase(It);
  if (Current == Primary)
    cuCtxSetCurrent(nullptr);
  return fromDriver(R);
}

} // namespace ptxforge::runtime
