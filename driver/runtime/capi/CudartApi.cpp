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
#include <map>
#include <mutex>
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
    // The driver reads the attributes (cluster shapes, cooperative launches, hints): cudaLaunchAttribute is
    // CUlaunchAttribute's layout, with the same ids.
    return launchKernelEx(FatbinRegistry::get().kernel(func), *config, args);
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
    return drv(cuDeviceCanAccessPeer(canAccessPeer, device, peerDevice));
  });
}
CUDART_API cudaError_t cudaDeviceGetP2PAttribute(int *value, int attr, int srcDevice, int dstDevice) {
  return entry([&] {
    if (cudaError_t E = checkDevice(srcDevice); E || (E = checkDevice(dstDevice)))
      return E;
    // cudaDeviceP2PAttr numbers are CUdevice_P2PAttribute's.
    return drv(cuDeviceGetP2PAttribute(value, static_cast<CUdevice_P2PAttribute>(attr), srcDevice, dstDevice));
  });
}
// Peer access is between the current device's primary context and the peer device's.
CUDART_API cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned flags) {
  return entry([&] {
    CUcontext Peer = nullptr;
    if (cudaError_t E = ensureContext(); E || (E = primaryContext(peerDevice, &Peer)))
      return E;
    return drv(cuCtxEnablePeerAccess(Peer, flags));
  });
}
CUDART_API cudaError_t cudaDeviceDisablePeerAccess(int peerDevice) {
  return entry([&] {
    CUcontext Peer = nullptr;
    if (cudaError_t E = ensureContext(); E || (E = primaryContext(peerDevice, &Peer)))
      return E;
    return drv(cuCtxDisablePeerAccess(Peer));
  });
}
// Every device's memory is the same host memory: a peer copy is a unified one (the devices are checked).
CUDART_API cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
                                           cudaStream_t stream) {
  return entry([&] {
    if (cudaError_t E = checkDevice(dstDevice); E || (E = checkDevice(srcDevice)) || (E = ensureContext()))
      return E;
    return drv(cuMemcpyAsync(dptr(dst), dptr(src), count, stream));
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
namespace {
/// cudaMalloc and its stream-ordered twins: *Out is null unless Alloc (a driver allocation) gives Size bytes; a
/// size of 0 succeeds with a null pointer.
template <class DriverAlloc> cudaError_t allocateThrough(void **Out, size_t Size, DriverAlloc Alloc) {
  return entry([&] {
    if (!Out)
      return cudaErrorInvalidValue;
    if (cudaError_t E = ensureContext())
      return E;
    *Out = nullptr;
    if (Size == 0)
      return cudaSuccess;
    CUdeviceptr P = 0;
    if (cudaError_t E = drv(Alloc(&P)))
      return E;
    *Out = reinterpret_cast<void *>(P);
    return cudaSuccess;
  });
}
} // namespace

CUDART_API cudaError_t cudaMalloc(void **devPtr, size_t size) {
  return allocateThrough(devPtr, size, [&](CUdeviceptr *P) { return cuMemAlloc(P, size); });
}
// Memory is available at once, which satisfies the stream order trivially; a capturing stream gets an allocation
// node.
CUDART_API cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream) {
  return allocateThrough(devPtr, size, [&](CUdeviceptr *P) { return cuMemAllocAsync(P, size, stream); });
}
// Memory pools are the driver's (driver/README.md): cudaMemPoolAttr, cudaMemPoolProps, cudaMemLocation and
// cudaMemAccessDesc have the driver's values and layouts.
CUDART_API cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream) {
  return allocateThrough(ptr, size, [&](CUdeviceptr *P) { return cuMemAllocFromPoolAsync(P, size, memPool, stream); });
}
CUDART_API cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool,
                                                    cudaStream_t stream) {
  return cudaMallocFromPoolAsync(ptr, size, memPool, stream ? stream : CU_STREAM_PER_THREAD);
}
// Managed memory is the host's: attaching, prefetching and advice check their arguments (the driver's) only.
CUDART_API cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void *devPtr, size_t length, unsigned flags) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuStreamAttachMemAsync(stream, dptr(devPtr), length, flags));
  });
}
CUDART_API cudaError_t cudaStreamAttachMemAsync_ptsz(cudaStream_t stream, void *devPtr, size_t length, unsigned flags) {
  return cudaStreamAttachMemAsync(stream ? stream : CU_STREAM_PER_THREAD, devPtr, length, flags);
}
CUDART_API cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count, CUmemLocation location, unsigned flags,
                                            cudaStream_t stream) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuMemPrefetchAsync_v2(dptr(devPtr), count, location, flags, stream));
  });
}
CUDART_API cudaError_t cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count, CUmemLocation location,
                                                 unsigned flags, cudaStream_t stream) {
  return cudaMemPrefetchAsync(devPtr, count, location, flags, stream ? stream : CU_STREAM_PER_THREAD);
}
CUDART_API cudaError_t cudaMemAdvise(const void *devPtr, size_t count, int advice, CUmemLocation location) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return drv(cuMemAdvise_v2(dptr(devPtr), count, static_cast<CUmem_advise>(advice), location));
  });
}
CUDART_API cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device) {
  return entry([&] {
    if (cudaError_t E = checkDevice(device))
      return E;
    return drv(cuDeviceGetDefaultMemPool(memPool, device));
  });
}
CUDART_API cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device) {
  return entry([&] {
    if (cudaError_t E = checkDevice(device))
      return E;
    return drv(cuDeviceGetMemPool(memPool, device));
  });
}
CUDART_API cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool) {
  return entry([&] {
    if (cudaError_t E = checkDevice(device))
      return E;
    return drv(cuDeviceSetMemPool(device, memPool));
  });
}
CUDART_API cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool, const CUmemPoolProps *poolProps) {
  return entry([&] {
    if (cudaError_t E = initDriver())
      return E;
    return drv(cuMemPoolCreate(memPool, poolProps));
  });
}
CUDART_API cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool) {
  return entry([&] { return drv(cuMemPoolDestroy(memPool)); });
}
CUDART_API cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, int attr, void *value) {
  return entry([&] { return drv(cuMemPoolSetAttribute(memPool, static_cast<CUmemPool_attribute>(attr), value)); });
}
CUDART_API cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, int attr, void *value) {
  return entry([&] { return drv(cuMemPoolGetAttribute(memPool, static_cast<CUmemPool_attribute>(attr), value)); });
}
CUDART_API cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep) {
  return entry([&] { return drv(cuMemPoolTrimTo(memPool, minBytesToKeep)); });
}
CUDART_API cudaError_t cudaMemPoolSetAccess(cudaMemPool_t memPool, const CUmemAccessDesc *descList, size_t count) {
  return entry([&] { return drv(cuMemPoolSetAccess(memPool, descList, count)); });
}
CUDART_API cudaError_t cudaMemPoolGetAccess(int *flags, cudaMemPool_t memPool, CUmemLocation *location) {
  return entry(
      [&] { return drv(cuMemPoolGetAccess(reinterpret_cast<CUmemAccess_flags *>(flags), memPool, location)); });
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
CUDART_API cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return devPtr ? drv(cuMemFreeAsync(dptr(devPtr), stream)) : cudaSuccess;
  });
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
CUDART_API cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *mipmappedArray, const cudaChannelFormatDesc *desc,
                                                cudaExtent extent, unsigned int numLevels, unsigned int flags) {
  return entry([&] { return mallocMipmappedArray(mipmappedArray, desc, extent, numLevels, flags); });
}
CUDART_API cudaError_t cudaGetMipmappedArrayLevel(cudaArray_t *levelArray, cudaMipmappedArray_const_t mipmappedArray,
                                                  unsigned int level) {
  return entry(
      [&] { return drv(cuMipmappedArrayGetLevel(levelArray, const_cast<CUmipmappedArray>(mipmappedArray), level)); });
}
CUDART_API cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mipmappedArray) {
  return entry([&] { return mipmappedArray ? drv(cuMipmappedArrayDestroy(mipmappedArray)) : cudaSuccess; });
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
// The kernel's name as registered (its mangled device name), as cuFuncGetName gives it; nothing is loaded.
CUDART_API cudaError_t cudaFuncGetName(const char **name, const void *func) {
  return entry([&] {
    if (!name)
      return cudaErrorInvalidValue;
    const KernelEntry *K = FatbinRegistry::get().kernel(func);
    if (!K)
      return cudaErrorInvalidDeviceFunction;
    *name = K->Name.c_str();
    return cudaSuccess;
  });
}
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
    attr->clusterDimMustBeSet = Get(CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET);
    attr->requiredClusterWidth = Get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH);
    attr->requiredClusterHeight = Get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT);
    attr->requiredClusterDepth = Get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH);
    attr->clusterSchedulingPolicyPreference = Get(CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE);
    attr->nonPortableClusterSizeAllowed = Get(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED);
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
/// A cluster occupancy query: the driver's Query on func's CUfunction and launchConfig in the driver's terms.
template <class Query>
static cudaError_t clusterQuery(int *out, const void *func, const cudaLaunchConfig_t *launchConfig, Query Q) {
  return entry([&] {
    CUfunction F = nullptr;
    if (cudaError_t E = functionOf(func, &F))
      return E;
    if (!launchConfig)
      return cudaErrorInvalidValue;
    DriverLaunchConfig C = driverLaunchConfig(*launchConfig);
    return drv(Q(out, F, &C));
  });
}
CUDART_API cudaError_t cudaOccupancyMaxActiveClusters(int *numClusters, const void *func,
                                                      const cudaLaunchConfig_t *launchConfig) {
  return clusterQuery(numClusters, func, launchConfig, cuOccupancyMaxActiveClusters);
}
CUDART_API cudaError_t cudaOccupancyMaxPotentialClusterSize(int *clusterSize, const void *func,
                                                            const cudaLaunchConfig_t *launchConfig) {
  return clusterQuery(clusterSize, func, launchConfig, cuOccupancyMaxPotentialClusterSize);
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

// ---- graphs and stream capture: the driver's, with the runtime's parameter structs converted ----
namespace {
/// Runs Body with the runtime's context current (graph calls need one for kernels, copies and allocations).
template <class F> cudaError_t inContext(F &&Body) {
  return entry([&] {
    if (cudaError_t E = ensureContext())
      return E;
    return Body();
  });
}

/// cudaKernelNodeParams as the driver's CUDA_KERNEL_NODE_PARAMS (v2: kern and ctx null).
cudaError_t driverKernelParams(const cudaKernelNodeParams *P, CUDA_KERNEL_NODE_PARAMS &Out) {
  if (!P)
    return cudaErrorInvalidValue;
  Out = {};
  if (cudaError_t E = functionOf(P->func, &Out.func))
    return E;
  Out.gridDimX = P->gridDim.x, Out.gridDimY = P->gridDim.y, Out.gridDimZ = P->gridDim.z;
  Out.blockDimX = P->blockDim.x, Out.blockDimY = P->blockDim.y, Out.blockDimZ = P->blockDim.z;
  Out.sharedMemBytes = P->sharedMemBytes;
  Out.kernelParams = P->kernelParams;
  Out.extra = P->extra;
  return cudaSuccess;
}

/// The host stub each CUfunction a kernel node was given came from (cudaGraphKernelNodeGetParams returns it).
std::mutex KernelStubsLock;
std::map<CUfunction, void *> KernelStubs;
void rememberStub(CUfunction F, void *Stub) {
  std::scoped_lock L(KernelStubsLock);
  KernelStubs[F] = Stub;
}

CUDA_MEMSET_NODE_PARAMS driverMemset(const cudaMemsetParams &P) {
  return {dptr(P.dst), P.pitch, P.value, P.elementSize, P.width, P.height};
}

cudaError_t driverMemcpy3D(const cudaMemcpy3DParms *P, CUDA_MEMCPY3D &Out) {
  CopySide Src, Dst;
  size_t Width;
  if (cudaError_t E = driverCopy3D(P, Src, Dst, Width))
    return E;
  return driverCopy(Src, Dst, Width, P->extent.height, P->extent.depth, P->kind, Out);
}

cudaError_t driverMemcpy1D(void *Dst, const void *Src, size_t Count, int Kind, CUDA_MEMCPY3D &Out) {
  CopySide S, D;
  S.Ptr = Src, D.Ptr = Dst;
  return driverCopy(S, D, Count, 1, 1, Kind, Out);
}
} // namespace

CUDART_API cudaError_t cudaStreamBeginCapture(cudaStream_t stream, int mode) {
  return inContext([&] { return drv(cuStreamBeginCapture_v2(stream, static_cast<CUstreamCaptureMode>(mode))); });
}
CUDART_API cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
                                                     const cudaGraphNode_t *dependencies,
                                                     const cudaGraphEdgeData *dependencyData, size_t numDependencies,
                                                     int mode) {
  return inContext([&] {
    return drv(cuStreamBeginCaptureToGraph(stream, graph, dependencies, dependencyData, numDependencies,
                                           static_cast<CUstreamCaptureMode>(mode)));
  });
}
CUDART_API cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph) {
  return inContext([&] { return drv(cuStreamEndCapture(stream, pGraph)); });
}
CUDART_API cudaError_t cudaStreamIsCapturing(cudaStream_t stream, int *pCaptureStatus) {
  return inContext(
      [&] { return drv(cuStreamIsCapturing(stream, reinterpret_cast<CUstreamCaptureStatus *>(pCaptureStatus))); });
}
CUDART_API cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, int *captureStatus_out, unsigned long long *id_out,
                                                cudaGraph_t *graph_out, const cudaGraphNode_t **dependencies_out,
                                                const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out) {
  return inContext([&] {
    return drv(cuStreamGetCaptureInfo_v3(stream, reinterpret_cast<CUstreamCaptureStatus *>(captureStatus_out),
                                         reinterpret_cast<cuuint64_t *>(id_out), graph_out, dependencies_out,
                                         edgeData_out, numDependencies_out));
  });
}
CUDART_API cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t *dependencies,
                                                           const cudaGraphEdgeData *dependencyData,
                                                           size_t numDependencies, unsigned flags) {
  return inContext([&] {
    return drv(cuStreamUpdateCaptureDependencies_v2(stream, dependencies, dependencyData, numDependencies, flags));
  });
}
CUDART_API cudaError_t cudaThreadExchangeStreamCaptureMode(int *mode) {
  return entry([&] { return drv(cuThreadExchangeStreamCaptureMode(reinterpret_cast<CUstreamCaptureMode *>(mode))); });
}

CUDART_API cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned flags) {
  return inContext([&] { return drv(cuGraphCreate(pGraph, flags)); });
}
CUDART_API cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  return entry([&] { return drv(cuGraphDestroy(graph)); });
}
CUDART_API cudaError_t cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t originalGraph) {
  return entry([&] { return drv(cuGraphClone(pGraphClone, originalGraph)); });
}
CUDART_API cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t *pNode, cudaGraphNode_t originalNode,
                                                cudaGraph_t clonedGraph) {
  return entry([&] { return drv(cuGraphNodeFindInClone(pNode, originalNode, clonedGraph)); });
}

CUDART_API cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                              const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                              const cudaKernelNodeParams *pNodeParams) {
  return inContext([&] {
    CUDA_KERNEL_NODE_PARAMS P;
    if (cudaError_t E = driverKernelParams(pNodeParams, P))
      return E;
    rememberStub(P.func, pNodeParams->func);
    return drv(cuGraphAddKernelNode_v2(pGraphNode, graph, pDependencies, numDependencies, &P));
  });
}
CUDART_API cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, cudaKernelNodeParams *pNodeParams) {
  return entry([&] {
    if (!pNodeParams)
      return cudaErrorInvalidValue;
    CUDA_KERNEL_NODE_PARAMS P;
    if (cudaError_t E = drv(cuGraphKernelNodeGetParams_v2(node, &P)))
      return E;
    {
      std::scoped_lock L(KernelStubsLock);
      auto It = KernelStubs.find(P.func);
      pNodeParams->func = It == KernelStubs.end() ? reinterpret_cast<void *>(P.func) : It->second;
    }
    pNodeParams->gridDim = {P.gridDimX, P.gridDimY, P.gridDimZ};
    pNodeParams->blockDim = {P.blockDimX, P.blockDimY, P.blockDimZ};
    pNodeParams->sharedMemBytes = P.sharedMemBytes;
    pNodeParams->kernelParams = P.kernelParams;
    pNodeParams->extra = P.extra;
    return cudaSuccess;
  });
}
CUDART_API cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const cudaKernelNodeParams *pNodeParams) {
  return inContext([&] {
    CUDA_KERNEL_NODE_PARAMS P;
    if (cudaError_t E = driverKernelParams(pNodeParams, P))
      return E;
    rememberStub(P.func, pNodeParams->func);
    return drv(cuGraphKernelNodeSetParams_v2(node, &P));
  });
}
CUDART_API cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                        const cudaKernelNodeParams *pNodeParams) {
  return inContext([&] {
    CUDA_KERNEL_NODE_PARAMS P;
    if (cudaError_t E = driverKernelParams(pNodeParams, P))
      return E;
    rememberStub(P.func, pNodeParams->func);
    return drv(cuGraphExecKernelNodeSetParams_v2(hGraphExec, node, &P));
  });
}

CUDART_API cudaError_t cudaGraphConditionalHandleCreate(unsigned long long *pHandle_out, cudaGraph_t graph,
                                                        unsigned defaultLaunchValue, unsigned flags) {
  return inContext([&] {
    return drv(cuGraphConditionalHandleCreate(reinterpret_cast<CUgraphConditionalHandle *>(pHandle_out), graph, nullptr,
                                              defaultLaunchValue, flags));
  });
}

namespace {
/// cudaGraphNodeParams as the driver's CUgraphNodeParams: kernels by host stub become CUfunctions, copies one
/// CUDA_MEMCPY3D; the other kinds have the driver's layouts. The reserved fields go as they are, for the driver
/// to check.
cudaError_t driverNodeParams(const cudaGraphNodeParams *Params, CUgraphNodeParams &Out) {
  if (!Params)
    return cudaErrorInvalidValue;
  const cudaGraphNodeParams &In = *Params;
  Out = {};
  Out.type = static_cast<CUgraphNodeType>(In.type);
  std::memcpy(Out.reserved0, In.reserved0, sizeof Out.reserved0);
  Out.reserved2 = In.reserved2;
  switch (In.type) {
  case CU_GRAPH_NODE_TYPE_KERNEL: {
    if (cudaError_t E = driverKernelParams(&In.kernel, Out.kernel))
      return E;
    rememberStub(Out.kernel.func, In.kernel.func);
    return cudaSuccess;
  }
  case CU_GRAPH_NODE_TYPE_MEMCPY:
    Out.memcpy.flags = In.memcpy.flags;
    return driverMemcpy3D(&In.memcpy.copyParams, Out.memcpy.copyParams);
  case CU_GRAPH_NODE_TYPE_MEMSET: {
    CUDA_MEMSET_NODE_PARAMS M = driverMemset(In.memset);
    Out.memset = {M.dst, M.pitch, M.value, M.elementSize, M.width, M.height, nullptr};
    return cudaSuccess;
  }
  case CU_GRAPH_NODE_TYPE_HOST:
    Out.host = {In.host.fn, In.host.userData};
    return cudaSuccess;
  case CU_GRAPH_NODE_TYPE_GRAPH:
    Out.graph = {In.graph.graph, static_cast<CUgraphChildGraphNodeOwnership>(In.graph.ownership)};
    return cudaSuccess;
  case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
    Out.eventWait.event = In.eventWait.event;
    return cudaSuccess;
  case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
    Out.eventRecord.event = In.eventRecord.event;
    return cudaSuccess;
  case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
    std::memcpy(&Out.alloc, &In.alloc, sizeof In.alloc);
    return cudaSuccess;
  case CU_GRAPH_NODE_TYPE_MEM_FREE:
    Out.free.dptr = dptr(In.free.dptr);
    return cudaSuccess;
  case CU_GRAPH_NODE_TYPE_CONDITIONAL:
    Out.conditional.handle = In.conditional.handle;
    Out.conditional.type = static_cast<CUgraphConditionalNodeType>(In.conditional.type);
    Out.conditional.size = In.conditional.size;
    return cudaSuccess;
  default: // empty, and the kinds the driver refuses
    return cudaSuccess;
  }
}
} // namespace

CUDART_API cudaError_t cudaGraphAddNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                        const cudaGraphNode_t *pDependencies, const cudaGraphEdgeData *dependencyData,
                                        size_t numDependencies, cudaGraphNodeParams *nodeParams) {
  return inContext([&] {
    CUgraphNodeParams P;
    if (cudaError_t E = driverNodeParams(nodeParams, P))
      return E;
    if (cudaError_t E = drv(cuGraphAddNode_v2(pGraphNode, graph, pDependencies, dependencyData, numDependencies, &P)))
      return E;
    // What the driver hands back: a conditional node's bodies, an alloc node's address.
    if (nodeParams->type == CU_GRAPH_NODE_TYPE_CONDITIONAL)
      nodeParams->conditional.phGraph_out = P.conditional.phGraph_out;
    if (nodeParams->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
      nodeParams->alloc.dptr = reinterpret_cast<void *>(P.alloc.dptr);
    return cudaSuccess;
  });
}
CUDART_API cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t node, cudaGraphNodeParams *nodeParams) {
  return inContext([&] {
    CUgraphNodeParams P;
    if (cudaError_t E = driverNodeParams(nodeParams, P))
      return E;
    return drv(cuGraphNodeSetParams(node, &P));
  });
}
CUDART_API cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t graphExec, cudaGraphNode_t node,
                                                  cudaGraphNodeParams *nodeParams) {
  return inContext([&] {
    CUgraphNodeParams P;
    if (cudaError_t E = driverNodeParams(nodeParams, P))
      return E;
    return drv(cuGraphExecNodeSetParams(graphExec, node, &P));
  });
}

CUDART_API cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                              const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                              const cudaMemcpy3DParms *pCopyParams) {
  return inContext([&] {
    CUDA_MEMCPY3D C;
    if (cudaError_t E = driverMemcpy3D(pCopyParams, C))
      return E;
    return drv(cuGraphAddMemcpyNode(pGraphNode, graph, pDependencies, numDependencies, &C, nullptr));
  });
}
CUDART_API cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                const cudaGraphNode_t *pDependencies, size_t numDependencies, void *dst,
                                                const void *src, size_t count, int kind) {
  return inContext([&] {
    CUDA_MEMCPY3D C;
    if (cudaError_t E = driverMemcpy1D(dst, src, count, kind, C))
      return E;
    return drv(cuGraphAddMemcpyNode(pGraphNode, graph, pDependencies, numDependencies, &C, nullptr));
  });
}
CUDART_API cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node, const cudaMemcpy3DParms *pNodeParams) {
  return inContext([&] {
    CUDA_MEMCPY3D C;
    if (cudaError_t E = driverMemcpy3D(pNodeParams, C))
      return E;
    return drv(cuGraphMemcpyNodeSetParams(node, &C));
  });
}
CUDART_API cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void *dst, const void *src, size_t count,
                                                      int kind) {
  return inContext([&] {
    CUDA_MEMCPY3D C;
    if (cudaError_t E = driverMemcpy1D(dst, src, count, kind, C))
      return E;
    return drv(cuGraphMemcpyNodeSetParams(node, &C));
  });
}
CUDART_API cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                        const cudaMemcpy3DParms *pNodeParams) {
  return inContext([&] {
    CUDA_MEMCPY3D C;
    if (cudaError_t E = driverMemcpy3D(pNodeParams, C))
      return E;
    return drv(cuGraphExecMemcpyNodeSetParams(hGraphExec, node, &C, nullptr));
  });
}
CUDART_API cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t hGraphExec, cudaGraphNode_t node, void *dst,
                                                          const void *src, size_t count, int kind) {
  return inContext([&] {
    CUDA_MEMCPY3D C;
    if (cudaError_t E = driverMemcpy1D(dst, src, count, kind, C))
      return E;
    return drv(cuGraphExecMemcpyNodeSetParams(hGraphExec, node, &C, nullptr));
  });
}

CUDART_API cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                              const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                              const cudaMemsetParams *pMemsetParams) {
  return inContext([&] {
    if (!pMemsetParams)
      return cudaErrorInvalidValue;
    CUDA_MEMSET_NODE_PARAMS P = driverMemset(*pMemsetParams);
    return drv(cuGraphAddMemsetNode(pGraphNode, graph, pDependencies, numDependencies, &P, nullptr));
  });
}
CUDART_API cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t node, cudaMemsetParams *pNodeParams) {
  return entry([&] {
    if (!pNodeParams)
      return cudaErrorInvalidValue;
    CUDA_MEMSET_NODE_PARAMS P;
    if (cudaError_t E = drv(cuGraphMemsetNodeGetParams(node, &P)))
      return E;
    *pNodeParams = {reinterpret_cast<void *>(P.dst), P.pitch, P.value, P.elementSize, P.width, P.height};
    return cudaSuccess;
  });
}
CUDART_API cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t node, const cudaMemsetParams *pNodeParams) {
  return inContext([&] {
    if (!pNodeParams)
      return cudaErrorInvalidValue;
    CUDA_MEMSET_NODE_PARAMS P = driverMemset(*pNodeParams);
    return drv(cuGraphMemsetNodeSetParams(node, &P));
  });
}
CUDART_API cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                        const cudaMemsetParams *pNodeParams) {
  return inContext([&] {
    if (!pNodeParams)
      return cudaErrorInvalidValue;
    CUDA_MEMSET_NODE_PARAMS P = driverMemset(*pNodeParams);
    return drv(cuGraphExecMemsetNodeSetParams(hGraphExec, node, &P, nullptr));
  });
}

// cudaHostNodeParams is CUDA_HOST_NODE_PARAMS field for field.
CUDART_API cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                            const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                            const cudaHostNodeParams *pNodeParams) {
  return inContext([&] {
    return drv(cuGraphAddHostNode(pGraphNode, graph, pDependencies, numDependencies,
                                  reinterpret_cast<const CUDA_HOST_NODE_PARAMS *>(pNodeParams)));
  });
}
CUDART_API cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node, cudaHostNodeParams *pNodeParams) {
  return entry(
      [&] { return drv(cuGraphHostNodeGetParams(node, reinterpret_cast<CUDA_HOST_NODE_PARAMS *>(pNodeParams))); });
}
CUDART_API cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node, const cudaHostNodeParams *pNodeParams) {
  return entry([&] {
    return drv(cuGraphHostNodeSetParams(node, reinterpret_cast<const CUDA_HOST_NODE_PARAMS *>(pNodeParams)));
  });
}
CUDART_API cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                      const cudaHostNodeParams *pNodeParams) {
  return entry([&] {
    return drv(
        cuGraphExecHostNodeSetParams(hGraphExec, node, reinterpret_cast<const CUDA_HOST_NODE_PARAMS *>(pNodeParams)));
  });
}

CUDART_API cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                  const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                  cudaGraph_t childGraph) {
  return entry(
      [&] { return drv(cuGraphAddChildGraphNode(pGraphNode, graph, pDependencies, numDependencies, childGraph)); });
}
CUDART_API cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t *pGraph) {
  return entry([&] { return drv(cuGraphChildGraphNodeGetGraph(node, pGraph)); });
}
CUDART_API cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                             const cudaGraphNode_t *pDependencies, size_t numDependencies) {
  return entry([&] { return drv(cuGraphAddEmptyNode(pGraphNode, graph, pDependencies, numDependencies)); });
}
CUDART_API cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                   const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                   cudaEvent_t event) {
  return entry(
      [&] { return drv(cuGraphAddEventRecordNode(pGraphNode, graph, pDependencies, numDependencies, event)); });
}
CUDART_API cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                 const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                 cudaEvent_t event) {
  return entry([&] { return drv(cuGraphAddEventWaitNode(pGraphNode, graph, pDependencies, numDependencies, event)); });
}
CUDART_API cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node, cudaEvent_t *event_out) {
  return entry([&] { return drv(cuGraphEventRecordNodeGetEvent(node, event_out)); });
}
CUDART_API cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node, cudaEvent_t *event_out) {
  return entry([&] { return drv(cuGraphEventWaitNodeGetEvent(node, event_out)); });
}

CUDART_API cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event) {
  return entry([&] { return drv(cuGraphEventRecordNodeSetEvent(node, event)); });
}
CUDART_API cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event) {
  return entry([&] { return drv(cuGraphEventWaitNodeSetEvent(node, event)); });
}
CUDART_API cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,
                                                            cudaEvent_t event) {
  return entry([&] { return drv(cuGraphExecEventRecordNodeSetEvent(hGraphExec, hNode, event)); });
}
CUDART_API cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,
                                                          cudaEvent_t event) {
  return entry([&] { return drv(cuGraphExecEventWaitNodeSetEvent(hGraphExec, hNode, event)); });
}

// cudaMemAllocNodeParams is CUDA_MEM_ALLOC_NODE_PARAMS field for field (cudaMemPoolProps is CUmemPoolProps).
CUDART_API cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                cudaMemAllocNodeParams *nodeParams) {
  return inContext([&] {
    return drv(cuGraphAddMemAllocNode(pGraphNode, graph, pDependencies, numDependencies,
                                      reinterpret_cast<CUDA_MEM_ALLOC_NODE_PARAMS *>(nodeParams)));
  });
}
CUDART_API cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, cudaMemAllocNodeParams *params_out) {
  return entry([&] {
    return drv(cuGraphMemAllocNodeGetParams(node, reinterpret_cast<CUDA_MEM_ALLOC_NODE_PARAMS *>(params_out)));
  });
}
CUDART_API cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                               const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                               void *dptr_) {
  return entry(
      [&] { return drv(cuGraphAddMemFreeNode(pGraphNode, graph, pDependencies, numDependencies, dptr(dptr_))); });
}
CUDART_API cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void *dptr_out) {
  return entry([&] { return drv(cuGraphMemFreeNodeGetParams(node, static_cast<CUdeviceptr *>(dptr_out))); });
}
CUDART_API cudaError_t cudaDeviceGraphMemTrim(int device) {
  return inContext([&] { return drv(cuDeviceGraphMemTrim(device)); });
}
CUDART_API cudaError_t cudaDeviceGetGraphMemAttribute(int device, int attr, void *value) {
  return inContext(
      [&] { return drv(cuDeviceGetGraphMemAttribute(device, static_cast<CUgraphMem_attribute>(attr), value)); });
}
CUDART_API cudaError_t cudaDeviceSetGraphMemAttribute(int device, int attr, void *value) {
  return inContext(
      [&] { return drv(cuDeviceSetGraphMemAttribute(device, static_cast<CUgraphMem_attribute>(attr), value)); });
}

CUDART_API cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, int *pType) {
  return entry([&] { return drv(cuGraphNodeGetType(node, reinterpret_cast<CUgraphNodeType *>(pType))); });
}
CUDART_API cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes) {
  return entry([&] { return drv(cuGraphGetNodes(graph, nodes, numNodes)); });
}
CUDART_API cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t *pRootNodes, size_t *pNumRootNodes) {
  return entry([&] { return drv(cuGraphGetRootNodes(graph, pRootNodes, pNumRootNodes)); });
}
CUDART_API cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t *from, cudaGraphNode_t *to,
                                         cudaGraphEdgeData *edgeData, size_t *numEdges) {
  return entry([&] { return drv(cuGraphGetEdges_v2(graph, from, to, edgeData, numEdges)); });
}
CUDART_API cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *pDependencies,
                                                    cudaGraphEdgeData *edgeData, size_t *pNumDependencies) {
  return entry([&] { return drv(cuGraphNodeGetDependencies_v2(node, pDependencies, edgeData, pNumDependencies)); });
}
CUDART_API cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t *pDependentNodes,
                                                      cudaGraphEdgeData *edgeData, size_t *pNumDependentNodes) {
  return entry(
      [&] { return drv(cuGraphNodeGetDependentNodes_v2(node, pDependentNodes, edgeData, pNumDependentNodes)); });
}
CUDART_API cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from,
                                                const cudaGraphNode_t *to, const cudaGraphEdgeData *edgeData,
                                                size_t numDependencies) {
  return entry([&] { return drv(cuGraphAddDependencies_v2(graph, from, to, edgeData, numDependencies)); });
}
CUDART_API cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph, const cudaGraphNode_t *from,
                                                   const cudaGraphNode_t *to, const cudaGraphEdgeData *edgeData,
                                                   size_t numDependencies) {
  return entry([&] { return drv(cuGraphRemoveDependencies_v2(graph, from, to, edgeData, numDependencies)); });
}
CUDART_API cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node) {
  return entry([&] { return drv(cuGraphDestroyNode(node)); });
}

CUDART_API cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                     unsigned long long flags) {
  return inContext([&] { return drv(cuGraphInstantiateWithFlags(pGraphExec, graph, flags)); });
}
CUDART_API cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags) {
  return cudaGraphInstantiateWithFlags(pGraphExec, graph, flags);
}
CUDART_API cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t graphExec, unsigned long long *flags) {
  return entry([&] { return drv(cuGraphExecGetFlags(graphExec, reinterpret_cast<cuuint64_t *>(flags))); });
}
CUDART_API cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                           cudaGraphExecUpdateResultInfo *resultInfo) {
  return entry([&] {
    return drv(cuGraphExecUpdate_v2(hGraphExec, hGraph, reinterpret_cast<CUgraphExecUpdateResultInfo *>(resultInfo)));
  });
}
CUDART_API cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return inContext([&] { return drv(cuGraphUpload(graphExec, stream)); });
}
CUDART_API cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return inContext([&] { return drv(cuGraphLaunch(graphExec, stream)); });
}
CUDART_API cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  return entry([&] { return drv(cuGraphExecDestroy(graphExec)); });
}
CUDART_API cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char *path, unsigned flags) {
  return entry([&] { return drv(cuGraphDebugDotPrint(graph, path, flags)); });
}

// Every entry point CudartApi.def lists is defined above.
#define CUDART_ENTRY(Name) static_assert(sizeof(&Name) != 0);
#include "CudartApi.def"
#undef CUDART_ENTRY
