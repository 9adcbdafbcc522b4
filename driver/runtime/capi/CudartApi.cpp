// The CUDA runtime API's C entry points (libcudart.so.13). Each checks its arguments, calls the runtime core
// (ptxforge::runtime: registration, launches, contexts, errors) or the driver API of libcuda.so.1 beneath it,
// and records a failure as the thread's last error. The runtime sits on libcuda.so.1 as NVIDIA's does, so a
// process has one driver state: contexts, memory and modules are shared with programs' own driver calls.
// CudartApi.def lists the entry points; libcudart.map gives them the symbol version programs import.
#include "ptxforge/runtime/Arrays.h"
#include "ptxforge/runtime/Copy.h"
#include "ptxforge/runtime/DeviceProperties.h"
#include "ptxforge/runtime/Errors.h"
#include "ptxforge/runtime/Launch.h"
#include "ptxforge/runtime/Registry.h"
#include "ptxforge/runtime/RuntimeContext.h"

#include <cstdio>
#include <cstring>
#include <new>

#define CUDART_API extern "C" __attribute__((visibility("default")))

using namespace ptxforge::runtime;

namespace {

/// Runs an entry point's body: no exception escapes into C code, and a failure becomes the last error.
template <class F> cudaError_t entry(F &&Body) noexcept {
  try {
    return record(Body());
  } catch (const std::bad_alloc &) {
    return record(cudaErrorMemoryAllocation);
  } catch (...) {
    return record(cudaErrorUnknown);
  }
}

/// The driver call R in runtime terms.
cudaError_t drv(CUresult R) { return fromDriver(R); }

CUdeviceptr dptr(const void *P) { return reinterpret_cast<CUdeviceptr>(P); }

/// The CUfunction of a host stub or cudaKernel_t.
cudaError_t functionOf(const void *Func, CUfunction *Out) {
  const KernelEntry *K = FatbinRegistry::get().kernel(Func);
  if (!K)
    return cudaErrorInvalidDeviceFunction;
  return FatbinRegistry::get().function(*K, Out);
}

} // namespace

// ---- registration (nvcc's host code, before main and at exit) ----
CUDART_API void **__cudaRegisterFatBinary(void *fatCubin) { return FatbinRegistry::get().registerFatbin(fatCubin); }
CUDART_API void __cudaRegisterFatBinaryEnd(void **) {}
CUDART_API void __cudaUnregisterFatBinary(void **fatCubinHandle) {
  FatbinRegistry::get().unregisterFatbin(fatCubinHandle);
}
CUDART_API void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *, int,
                                       uint3 *, uint3 *, dim3 *, dim3 *, int *) {
  FatbinRegistry::get().registerKernel(fatCubinHandle, hostFun, deviceFun);
}
CUDART_API void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *, int,
                                  size_t size, int constant, int) {
  FatbinRegistry::get().registerVariable(fatCubinHandle, hostVar, deviceAddress, size, constant != 0, nullptr);
}
CUDART_API void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
                                         const char *, int, size_t size, int constant, int) {
  FatbinRegistry::get().registerVariable(fatCubinHandle, hostVarPtrAddress, deviceAddress, size, constant != 0,
                                         hostVarPtrAddress);
}
CUDART_API char __cudaInitModule(void **fatCubinHandle) {
  return FatbinRegistry::get().initModule(fatCubinHandle) == cudaSuccess;
}

// ---- launches ----
CUDART_API unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, cudaStream_t stream) {
  pushCallConfiguration({gridDim, blockDim, sharedMem, stream});
  return 0;
}
CUDART_API cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream) {
  CallConfiguration C;
  if (cudaError_t E = popCallConfiguration(C))
    return E;
  *gridDim = C.Grid;
  *blockDim = C.Block;
  *sharedMem = C.SharedBytes;
  *static_cast<cudaStream_t *>(stream) = C.Stream;
  return cudaSuccess;
}
CUDART_API cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun) {
  const KernelEntry *K = FatbinRegistry::get().kernel(hostFun);
  if (!kernel || !K)
    return cudaErrorInvalidDeviceFunction;
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<KernelEntry *>(K));
  return cudaSuccess;
}
CUDART_API cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr) {
  return entry([&] { return __cudaGetKernel(kernelPtr, entryFuncAddr); });
}
CUDART_API cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                          size_t sharedMem, cudaStream_t stream) {
  return entry(
      [&] { return launchKernel(FatbinRegistry::get().kernel(kernel), gridDim, blockDim, args, sharedMem, stream); });
}
CUDART_API cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                               size_t sharedMem, cudaStream_t stream) {
  return __cudaLaunchKernel(kernel, gridDim, blockDim, args, sharedMem, stream ? stream : CU_STREAM_PER_THREAD);
}
CUDART_API cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                        cudaStream_t stream) {
  return entry(
      [&] { return launchKernel(FatbinRegistry::get().kernel(func), gridDim, blockDim, args, sharedMem, stream); });
}
CUDART_API cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args) {
  return entry([&] {
    if (!config || (config->numAttrs && !config->attrs))
      return cudaErrorInvalidValue;
    // Launch attributes tune scheduling on a GPU (priorities, clusters, programmatic serialisation); the CPU
    // runs the grid the same way under all of them but the cooperative one (all blocks resident, grid sync).
    bool Cooperative = false;
    for (unsigned I = 0; I < config->numAttrs; ++I)
      if (config->attrs[I].id == cudaLaunchAttributeCooperative)
        Cooperative = config->attrs[I].val.cooperative != 0;
    return launchKernel(FatbinRegistry::get().kernel(func), config->gridDim, config->blockDim, args,
                        config->dynamicSmemBytes, config->stream, Cooperative);
  });
}
CUDART_API cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                                   size_t sharedMem, cudaStream_t stream) {
  return entry([&] {
    return launchKernel(FatbinRegistry::get().kernel(func), gridDim, blockDim, args, sharedMem, stream, true);
  });
}
CUDART_API cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                                        size_t sharedMem, cudaStream_t stream) {
  return cudaLaunchCooperativeKernel(func, gridDim, blockDim, args, sharedMem, stream ? stream : CU_STREAM_PER_THREAD);
}

// ---- errors ----
CUDART_API cudaError_t cudaGetLastError() { return takeLastError(); }
CUDART_API cudaError_t cudaPeekAtLastError() { return lastError(); }
CUDART_API const char *cudaGetErrorName(cudaError_t error) {
  const char *Name = errorName(error);
  return Name ? Name : "unrecognized error code";
}
CUDART_API const char *cudaGetErrorString(cudaError_t error) {
  const char *Text = errorString(error);
  return Text ? Text : "unrecognized error code";
}

// ---- versions, devices ----
CUDART_API cudaError_t cudaRuntimeGetVersion(int *runtimeVersion) {
  return entry([&] {
    if (!runtimeVersion)
      return cudaErrorInvalidValue;
    *runtimeVersion = CUDA_VERSION;
    return cudaSuccess;
  });
}
CUDART_API cudaError_t cudaDriverGetVersion(int *driverVersion) {
  return entry([&] { return driverVersion ? drv(cuDriverGetVersion(driverVersion)) : cudaErrorInvalidValue; });
}
CUDART_API cudaError_t cudaGetDeviceCount(int *count) {
  return entry([&] {
    if (!count)
      return cudaErrorInvalidValue;
    *count = 0;
    if (cudaError_t E = initDriver())
      return E;
    return drv(cuDeviceGetCount(count));
  });
}
CUDART_API cudaError_t cudaSetDevice(int device) {
  return entry([&] { return setDevice(device); });
}
CUDART_API cudaError_t cudaGetDevice(int *device) {
  return entry([&] { return device ? getDevice(device) : cudaErrorInvalidValue; });
}
CUDART_API cudaError_t cudaInitDevice(int device, unsigned, unsigned) {
  return entry([&] { return checkDevice(device); });
}
CUDART_API cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device) {
  return entry([&] { return prop ? deviceProperties(*prop, device) : cudaErrorInvalidValue; });
}
CUDART_API cudaError_t cudaDeviceGetAttribute(int *value, int attr, int device) {
  return entry([&] {
    if (!value)
      return cudaErrorInvalidValue;
    if (cudaError_t E = checkDevice(device))
      return E;
    // cudaDeviceAttr numbers are CUdevice_attribute's.
    return drv(cuDeviceGetAttribute(value, static_cast<CUdevice_attribute>(attr), device));
  });
}
CUDART_API cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device) {
  return entry([&] { return drv(cuDeviceGetPCIBusId(pciBusId, len, device)); });
}
CUDART_API cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice) {
  return entry([&] {
    if (!canAccessPeer)
      return cudaErrorInvalidValue;
    if (cudaError_t E = checkDevice(device); E || (E = checkDevice(peerDevice)))
      return E;
    *canAccessPeer = 0; // one device: no peers
    return cudaSuccess;
  });
}
CUDART_API cudaError_t cudaSetDeviceFlags(unsigned flags) {
  return entry([&] {
    int D = 0;
    if (cudaError_t E = getDevice(&D))
      return E;
    return drv(cuDevicePrimaryCtxSetFlags(D, flags & ~8u)); // cudaDeviceMapHost (8) is always on
  });
}
CUDART_API cudaError_t cudaGetDeviceFlags(unsigned *flags) {
  return entry([&] {
    if (!flags)
      return cudaErrorInvalidValue;
    int D = 0, Active = 0;
    if (cudaError_t E = getDevice(&D))
      return E;
    unsigned F = 0;
    if (cudaError_t E = drv(cuDevicePrimaryCtxGetState(D, &F, &Active)))
      return E;
    *flags = F | 8u;
    return cudaSuccess;
  });
}
CUDART_API cudaError_t cudaDeviceSynchronize() {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuCtxSynchronize());
  });
}
CUDART_API cudaError_t cudaDeviceReset() {
  return entry([&] { return resetDevice(); });
}
CUDART_API cudaError_t cudaDeviceSetLimit(int limit, size_t value) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuCtxSetLimit(static_cast<CUlimit>(limit), value)); // cudaLimit numbers are CUlimit's
  });
}
CUDART_API cudaError_t cudaDeviceGetLimit(size_t *pValue, int limit) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuCtxGetLimit(pValue, static_cast<CUlimit>(limit)));
  });
}
CUDART_API cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuCtxGetStreamPriorityRange(leastPriority, greatestPriority));
  });
}
CUDART_API cudaError_t cudaDeviceSetCacheConfig(int cacheConfig) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuCtxSetCacheConfig(static_cast<CUfunc_cache>(cacheConfig)));
  });
}
CUDART_API cudaError_t cudaDeviceGetCacheConfig(int *pCacheConfig) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuCtxGetCacheConfig(reinterpret_cast<CUfunc_cache *>(pCacheConfig)));
  });
}
CUDART_API cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned cudaVersion,
                                                        unsigned long long flags, int *driverStatus) {
  return entry([&] {
    if (cudaError_t E = initDriver())
      return E;
    return drv(cuGetProcAddress(symbol, funcPtr, static_cast<int>(cudaVersion), flags,
                                reinterpret_cast<CUdriverProcAddressQueryResult *>(driverStatus)));
  });
}
CUDART_API cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                               int *driverStatus) {
  return cudaGetDriverEntryPointByVersion(symbol, funcPtr, CUDA_VERSION, flags, driverStatus);
}

// ---- memory ----
CUDART_API cudaError_t cudaMalloc(void **devPtr, size_t size) {
  return entry([&] {
    if (!devPtr)
      return cudaErrorInvalidValue;
    if (cudaError_t E = ensureContext())
      return E;
    *devPtr = nullptr;
    if (size == 0)
      return cudaSuccess; // cudaMalloc(0) succeeds with a null pointer
    CUdeviceptr P = 0;
    if (cudaError_t E = drv(cuMemAlloc(&P, size)))
      return E;
    *devPtr = reinterpret_cast<void *>(P);
    return cudaSuccess;
  });
}
CUDART_API cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t) {
  // Memory is available at once, which satisfies the stream order trivially.
  return cudaMalloc(devPtr, size);
}
CUDART_API cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height) {
  return entry([&] {
    if (!devPtr || !pitch)
      return cudaErrorInvalidValue;
    if (cudaError_t E = ensureContext())
      return E;
    CUdeviceptr P = 0;
    if (cudaError_t E = drv(cuMemAllocPitch(&P, pitch, width, height, 16)))
      return E;
    *devPtr = reinterpret_cast<void *>(P);
    return cudaSuccess;
  });
}
CUDART_API cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned flags) {
  return entry([&] {
    if (!devPtr)
      return cudaErrorInvalidValue;
    if (cudaError_t E = ensureContext())
      return E;
    CUdeviceptr P = 0;
    if (cudaError_t E = drv(cuMemAllocManaged(&P, size, flags)))
      return E;
    *devPtr = reinterpret_cast<void *>(P);
    return cudaSuccess;
  });
}
CUDART_API cudaError_t cudaFree(void *devPtr) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return devPtr ? drv(cuMemFree(dptr(devPtr))) : cudaSuccess;
  });
}
CUDART_API cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t) {
  // cuMemFree waits for the context's queued work, the stream's included: a stream-ordered free, stricter.
  return cudaFree(devPtr);
}
CUDART_API cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned flags) {
  return entry([&] {
    if (!pHost)
      return cudaErrorInvalidValue;
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuMemHostAlloc(pHost, size, flags)); // cudaHostAlloc* flags are CU_MEMHOSTALLOC_*'s
  });
}
CUDART_API cudaError_t cudaMallocHost(void **ptr, size_t size) { return cudaHostAlloc(ptr, size, 0); }
CUDART_API cudaError_t cudaFreeHost(void *ptr) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return ptr ? drv(cuMemFreeHost(ptr)) : cudaSuccess;
  });
}
CUDART_API cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned flags) {
  return entry([&] {
    if (!pDevice)
      return cudaErrorInvalidValue;
    if (cudaError_t E = ensureContext())
      return E;
    CUdeviceptr P = 0;
    if (cudaError_t E = drv(cuMemHostGetDevicePointer(&P, pHost, flags)))
      return E;
    *pDevice = reinterpret_cast<void *>(P);
    return cudaSuccess;
  });
}
CUDART_API cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned flags) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuMemHostRegister(ptr, size, flags));
  });
}
CUDART_API cudaError_t cudaHostUnregister(void *ptr) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuMemHostUnregister(ptr));
  });
}
CUDART_API cudaError_t cudaMemGetInfo(size_t *free, size_t *total) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuMemGetInfo(free, total));
  });
}
CUDART_API cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *attributes, const void *ptr) {
  return entry([&] {
    if (!attributes)
      return cudaErrorInvalidValue;
    if (cudaError_t E = ensureContext())
      return E;
    std::memset(attributes, 0, sizeof *attributes);
    unsigned Type = 0;
    int Ordinal = 0, Managed = 0;
    CUdeviceptr Device = 0;
    void *Host = nullptr;
    CUpointer_attribute Which[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                   CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                                   CU_POINTER_ATTRIBUTE_HOST_POINTER};
    void *Data[] = {&Type, &Ordinal, &Managed, &Device, &Host};
    if (cuPointerGetAttributes(5, Which, Data, dptr(ptr)) != CUDA_SUCCESS || Type == 0) {
      attributes->type = cudaMemoryTypeUnregistered; // memory the CUDA runtime does not know
      attributes->device = -2;
      attributes->hostPointer = const_cast<void *>(ptr);
      return cudaSuccess;
    }
    attributes->type = Managed                      ? cudaMemoryTypeManaged
                       : Type == CU_MEMORYTYPE_HOST ? cudaMemoryTypeHost
                                                    : cudaMemoryTypeDevice;
    attributes->device = Ordinal;
    attributes->devicePointer = reinterpret_cast<void *>(Device);
    attributes->hostPointer = Host;
    return cudaSuccess;
  });
}

CUDART_API cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, int kind) {
  return entry([&] { return copy(dst, src, count, kind, false, nullptr); });
}
CUDART_API cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, int kind, cudaStream_t stream) {
  return entry([&] { return copy(dst, src, count, kind, true, stream); });
}
CUDART_API cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                    size_t height, int kind) {
  return entry([&] { return copy2D(dst, dpitch, src, spitch, width, height, kind, false, nullptr); });
}
CUDART_API cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                         size_t height, int kind, cudaStream_t stream) {
  return entry([&] { return copy2D(dst, dpitch, src, spitch, width, height, kind, true, stream); });
}
// ---- arrays, texture and surface objects ----
CUDART_API cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f) {
  return {x, y, z, w, f};
}
CUDART_API cudaError_t cudaMallocArray(cudaArray_t *array, const cudaChannelFormatDesc *desc, size_t width,
                                       size_t height, unsigned int flags) {
  return entry([&] { return mallocArray(array, desc, {width, height, 0}, flags, false); });
}
CUDART_API cudaError_t cudaMalloc3DArray(cudaArray_t *array, const cudaChannelFormatDesc *desc, cudaExtent extent,
                                         unsigned int flags) {
  return entry([&] { return mallocArray(array, desc, extent, flags, true); });
}
CUDART_API cudaError_t cudaFreeArray(cudaArray_t array) {
  return entry([&] { return array ? drv(cuArrayDestroy(array)) : cudaSuccess; });
}
CUDART_API cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc *desc, cudaExtent *extent, unsigned int *flags,
                                        cudaArray_t array) {
  return entry([&] { return arrayInfo(desc, extent, flags, array); });
}
CUDART_API cudaError_t cudaGetChannelDesc(cudaChannelFormatDesc *desc, cudaArray_const_t array) {
  return entry([&] { return desc ? arrayInfo(desc, nullptr, nullptr, array) : cudaErrorInvalidValue; });
}

namespace {
CopySide arrayAt(cudaArray_const_t A, size_t X, size_t Y) {
  CopySide S;
  S.Array = A, S.X = X, S.Y = Y;
  return S;
}
CopySide memoryAt(const void *P, size_t Pitch) {
  CopySide S;
  S.Ptr = P, S.Pitch = Pitch;
  return S;
}
} // namespace

CUDART_API cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                           size_t spitch, size_t width, size_t height, int kind) {
  return entry([&] {
    return width > spitch ? cudaErrorInvalidPitchValue
                          : copyArray(memoryAt(src, spitch), arrayAt(dst, wOffset, hOffset), width, height, 1, kind,
                                      false, nullptr);
  });
}
CUDART_API cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                                size_t spitch, size_t width, size_t height, int kind,
                                                cudaStream_t stream) {
  return entry([&] {
    return width > spitch
               ? cudaErrorInvalidPitchValue
               : copyArray(memoryAt(src, spitch), arrayAt(dst, wOffset, hOffset), width, height, 1, kind, true, stream);
  });
}
CUDART_API cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                             size_t hOffset, size_t width, size_t height, int kind) {
  return entry([&] {
    return width > dpitch ? cudaErrorInvalidPitchValue
                          : copyArray(arrayAt(src, wOffset, hOffset), memoryAt(dst, dpitch), width, height, 1, kind,
                                      false, nullptr);
  });
}
CUDART_API cudaError_t cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                                  size_t hOffset, size_t width, size_t height, int kind,
                                                  cudaStream_t stream) {
  return entry([&] {
    return width > dpitch
               ? cudaErrorInvalidPitchValue
               : copyArray(arrayAt(src, wOffset, hOffset), memoryAt(dst, dpitch), width, height, 1, kind, true, stream);
  });
}
CUDART_API cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
                                                cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc,
                                                size_t width, size_t height, int kind) {
  return entry([&] {
    return copyArray(arrayAt(src, wOffsetSrc, hOffsetSrc), arrayAt(dst, wOffsetDst, hOffsetDst), width, height, 1, kind,
                     false, nullptr);
  });
}
CUDART_API cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t count,
                                         int kind) {
  return entry([&] {
    return copyArrayLinear(dst, wOffset, hOffset, const_cast<void *>(src), count, true, kind, false, nullptr);
  });
}
CUDART_API cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                              size_t count, int kind, cudaStream_t stream) {
  return entry(
      [&] { return copyArrayLinear(dst, wOffset, hOffset, const_cast<void *>(src), count, true, kind, true, stream); });
}
CUDART_API cudaError_t cudaMemcpyFromArray(void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                           size_t count, int kind) {
  return entry([&] { return copyArrayLinear(src, wOffset, hOffset, dst, count, false, kind, false, nullptr); });
}
CUDART_API cudaError_t cudaMemcpyFromArrayAsync(void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                                size_t count, int kind, cudaStream_t stream) {
  return entry([&] { return copyArrayLinear(src, wOffset, hOffset, dst, count, false, kind, true, stream); });
}
CUDART_API cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms *p) {
  return entry([&] { return copy3D(p, false, nullptr); });
}
CUDART_API cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms *p, cudaStream_t stream) {
  return entry([&] { return copy3D(p, true, stream); });
}
CUDART_API cudaError_t cudaCreateTextureObject(cudaTextureObject_t *pTexObject, const cudaResourceDesc *pResDesc,
                                               const cudaTextureDesc *pTexDesc,
                                               const cudaResourceViewDesc *pResViewDesc) {
  return entry([&] { return createTextureObject(pTexObject, pResDesc, pTexDesc, pResViewDesc); });
}
CUDART_API cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject) {
  return entry([&] { return drv(cuTexObjectDestroy(texObject)); });
}
CUDART_API cudaError_t cudaGetTextureObjectResourceDesc(cudaResourceDesc *pResDesc, cudaTextureObject_t texObject) {
  return entry([&] { return objectResourceDesc(pResDesc, texObject, false); });
}
CUDART_API cudaError_t cudaGetTextureObjectTextureDesc(cudaTextureDesc *pTexDesc, cudaTextureObject_t texObject) {
  return entry([&] { return textureDesc(pTexDesc, texObject); });
}
CUDART_API cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t *pSurfObject, const cudaResourceDesc *pResDesc) {
  return entry([&] { return createSurfaceObject(pSurfObject, pResDesc); });
}
CUDART_API cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surfObject) {
  return entry([&] { return drv(cuSurfObjectDestroy(surfObject)); });
}
CUDART_API cudaError_t cudaGetSurfaceObjectResourceDesc(cudaResourceDesc *pResDesc, cudaSurfaceObject_t surfObject) {
  return entry([&] { return objectResourceDesc(pResDesc, surfObject, true); });
}

CUDART_API cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count) {
  return entry([&] {
    if (cudaError_t E = checkDevice(dstDevice); E || (E = checkDevice(srcDevice)))
      return E;
    return copy(dst, src, count, cudaMemcpyDeviceToDevice, false, nullptr);
  });
}
CUDART_API cudaError_t cudaMemset(void *devPtr, int value, size_t count) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return count ? drv(cuMemsetD8(dptr(devPtr), static_cast<unsigned char>(value), count)) : cudaSuccess;
  });
}
CUDART_API cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return count ? drv(cuMemsetD8Async(dptr(devPtr), static_cast<unsigned char>(value), count, stream)) : cudaSuccess;
  });
}
CUDART_API cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuMemsetD2D8(dptr(devPtr), pitch, static_cast<unsigned char>(value), width, height));
  });
}
CUDART_API cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                                         cudaStream_t stream) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuMemsetD2D8Async(dptr(devPtr), pitch, static_cast<unsigned char>(value), width, height, stream));
  });
}

// ---- symbols ----
CUDART_API cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol) {
  return entry([&] {
    if (!devPtr)
      return cudaErrorInvalidValue;
    CUdeviceptr Address = 0;
    size_t Size = 0;
    if (cudaError_t E = FatbinRegistry::get().variable(symbol, &Address, &Size))
      return E;
    *devPtr = reinterpret_cast<void *>(Address);
    return cudaSuccess;
  });
}
CUDART_API cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol) {
  return entry([&] {
    if (!size)
      return cudaErrorInvalidValue;
    CUdeviceptr Address = 0;
    return FatbinRegistry::get().variable(symbol, &Address, size);
  });
}
CUDART_API cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset, int kind) {
  return entry([&] { return symbolCopy(true, const_cast<void *>(src), symbol, count, offset, kind, false, nullptr); });
}
CUDART_API cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset, int kind) {
  return entry([&] { return symbolCopy(false, dst, symbol, count, offset, kind, false, nullptr); });
}
CUDART_API cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
                                               int kind, cudaStream_t stream) {
  return entry([&] { return symbolCopy(true, const_cast<void *>(src), symbol, count, offset, kind, true, stream); });
}
CUDART_API cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset, int kind,
                                                 cudaStream_t stream) {
  return entry([&] { return symbolCopy(false, dst, symbol, count, offset, kind, true, stream); });
}

// ---- streams ----
CUDART_API cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned flags, int priority) {
  return entry([&] {
    if (!pStream)
      return cudaErrorInvalidValue;
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuStreamCreateWithPriority(pStream, flags, priority)); // cudaStream* flags are CU_STREAM_*'s
  });
}
CUDART_API cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned flags) {
  return cudaStreamCreateWithPriority(pStream, flags, 0);
}
CUDART_API cudaError_t cudaStreamCreate(cudaStream_t *pStream) { return cudaStreamCreateWithPriority(pStream, 0, 0); }
CUDART_API cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuStreamDestroy(stream));
  });
}
CUDART_API cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuStreamSynchronize(stream));
  });
}
/// cudaStreamQuery/cudaEventQuery: "not ready" is an answer, not an error to remember as the last one.
template <class F> cudaError_t query(F &&Ask) noexcept {
  cudaError_t Answer = cudaErrorUnknown;
  entry([&] {
    if (cudaError_t E = ensureContext())
      return Answer = E;
    Answer = drv(Ask());
    return Answer == cudaErrorNotReady ? cudaSuccess : Answer;
  });
  return Answer;
}
CUDART_API cudaError_t cudaStreamQuery(cudaStream_t stream) {
  return query([&] { return cuStreamQuery(stream); });
}
CUDART_API cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuStreamWaitEvent(stream, event, flags));
  });
}
CUDART_API cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned *flags) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuStreamGetFlags(hStream, flags));
  });
}
CUDART_API cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuStreamGetPriority(hStream, priority));
  });
}
CUDART_API cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
                                             unsigned flags) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    // The callback's cudaError_t and CUresult arguments are both plain enums: success is 0 in each.
    return drv(cuStreamAddCallback(stream, reinterpret_cast<CUstreamCallback>(callback), userData, flags));
  });
}
CUDART_API cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuLaunchHostFunc(stream, fn, userData));
  });
}
CUDART_API cudaError_t cudaStreamIsCapturing(cudaStream_t stream, int *pCaptureStatus) {
  return entry([&] {
    if (!pCaptureStatus)
      return cudaErrorInvalidValue;
    if (cudaError_t E = ensureContext())
      return E;
    unsigned Flags = 0;
    if (stream && stream != CU_STREAM_LEGACY && stream != CU_STREAM_PER_THREAD)
      if (cudaError_t E = drv(cuStreamGetFlags(stream, &Flags)))
        return E;
    *pCaptureStatus = 0; // cudaStreamCaptureStatusNone: ptxforge has no graphs to capture into
    return cudaSuccess;
  });
}
CUDART_API cudaError_t cudaThreadExchangeStreamCaptureMode(int *mode) {
  return entry([&] { return mode ? cudaSuccess : cudaErrorInvalidValue; });
}

// ---- events ----
CUDART_API cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags) {
  return entry([&] {
    if (!event)
      return cudaErrorInvalidValue;
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuEventCreate(event, flags)); // cudaEvent* flags are CU_EVENT_*'s
  });
}
CUDART_API cudaError_t cudaEventCreate(cudaEvent_t *event) { return cudaEventCreateWithFlags(event, 0); }
CUDART_API cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned flags) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuEventRecordWithFlags(event, stream, flags));
  });
}
CUDART_API cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return cudaEventRecordWithFlags(event, stream, 0);
}
CUDART_API cudaError_t cudaEventQuery(cudaEvent_t event) {
  return query([&] { return cuEventQuery(event); });
}
CUDART_API cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuEventSynchronize(event));
  });
}
CUDART_API cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuEventElapsedTime(ms, start, end));
  });
}
CUDART_API cudaError_t cudaEventDestroy(cudaEvent_t event) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuEventDestroy(event));
  });
}

// ---- kernels: attributes, occupancy ----
CUDART_API cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, const void *func) {
  return entry([&] {
    if (!attr)
      return cudaErrorInvalidValue;
    CUfunction F = nullptr;
    if (cudaError_t E = functionOf(func, &F))
      return E;
    std::memset(attr, 0, sizeof *attr);
    auto Get = [&](CUfunction_attribute A) {
      int V = 0;
      cuFuncGetAttribute(&V, A, F);
      return V;
    };
    attr->maxThreadsPerBlock = Get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    attr->sharedSizeBytes = Get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    attr->constSizeBytes = Get(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
    attr->localSizeBytes = Get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    attr->numRegs = Get(CU_FUNC_ATTRIBUTE_NUM_REGS);
    attr->ptxVersion = Get(CU_FUNC_ATTRIBUTE_PTX_VERSION);
    attr->binaryVersion = Get(CU_FUNC_ATTRIBUTE_BINARY_VERSION);
    attr->cacheModeCA = Get(CU_FUNC_ATTRIBUTE_CACHE_MODE_CA);
    attr->maxDynamicSharedSizeBytes = Get(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    attr->preferredShmemCarveout = Get(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT);
    return cudaSuccess;
  });
}
CUDART_API cudaError_t cudaFuncSetAttribute(const void *func, int attr, int value) {
  return entry([&] {
    CUfunction F = nullptr;
    if (cudaError_t E = functionOf(func, &F))
      return E;
    return drv(cuFuncSetAttribute(F, static_cast<CUfunction_attribute>(attr), value));
  });
}
CUDART_API cudaError_t cudaFuncSetCacheConfig(const void *func, int cacheConfig) {
  return entry([&] {
    CUfunction F = nullptr;
    if (cudaError_t E = functionOf(func, &F))
      return E;
    return drv(cuFuncSetCacheConfig(F, static_cast<CUfunc_cache>(cacheConfig)));
  });
}
CUDART_API cudaError_t cudaGetFuncBySymbol(cudaFunction_t *functionPtr, const void *symbolPtr) {
  return entry([&] {
    if (!functionPtr)
      return cudaErrorInvalidValue;
    CUfunction F = nullptr;
    if (cudaError_t E = functionOf(symbolPtr, &F))
      return E;
    *functionPtr = reinterpret_cast<cudaFunction_t>(F);
    return cudaSuccess;
  });
}
CUDART_API cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func,
                                                                              int blockSize, size_t dynamicSMemSize,
                                                                              unsigned flags) {
  return entry([&] {
    CUfunction F = nullptr;
    if (cudaError_t E = functionOf(func, &F))
      return E;
    cudaError_t E =
        drv(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, F, blockSize, dynamicSMemSize, flags));
    if (verbose()) {
      int Regs = 0, Static = 0;
      cuFuncGetAttribute(&Regs, CU_FUNC_ATTRIBUTE_NUM_REGS, F);
      cuFuncGetAttribute(&Static, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, F);
      std::fprintf(stderr,
                   "ptxforge cudart: occupancy of %s, %d threads, %zu + %d shared bytes, %d registers: %d (%s)\n",
                   FatbinRegistry::get().kernel(func)->Name.c_str(), blockSize, dynamicSMemSize, Static, Regs,
                   E ? 0 : *numBlocks, errorName(E));
    }
    return E;
  });
}
CUDART_API cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
                                                                     size_t dynamicSMemSize) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize, 0);
}
CUDART_API cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, const void *func,
                                                                 int numBlocks, int blockSize) {
  return entry([&] {
    CUfunction F = nullptr;
    if (cudaError_t E = functionOf(func, &F))
      return E;
    return drv(cuOccupancyAvailableDynamicSMemPerBlock(dynamicSmemSize, F, numBlocks, blockSize));
  });
}

// ---- profiler (nothing to start: ptxforge has no profiler to hand control to) ----
CUDART_API cudaError_t cudaProfilerStart() {
  return entry([&] { return ensureContext(); });
}
CUDART_API cudaError_t cudaProfilerStop() {
  return entry([&] { return ensureContext(); });
}

// Every entry point CudartApi.def lists is defined above.
#define CUDART_ENTRY(Name) static_assert(sizeof(&Name) != 0);
#include "CudartApi.def"
#undef CUDART_ENTRY
