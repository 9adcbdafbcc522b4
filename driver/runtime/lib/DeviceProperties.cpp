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
  P.sharedMemPerBlock = A.get(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  P.regsPerBlock = A.get(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  P.warpSize = A.get(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  P.memPitch = static_cast<unsigned>(A.get(CU_DEVICE_ATTRIBUTE_MAX_PITCH));
  P.maxThreadsPerBlock = A.get(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  P.maxThreadsDim[0] = A.get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  P.maxThreadsDim[1] = A.get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  P.maxThreadsDim[2] = A.get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  P.maxGridSize[0] = A.get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  P.maxGridSize[1] = A.get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  P.maxGridSize[2] = A.get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  P.totalConstMem = A.get(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY);
  P.major = A.get(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  P.minor = A.get(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  P.textureAlignment = A.get(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT);
  P.texturePitchAlignment = A.get(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT);
  P.multiProcessorCount = A.get(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  P.integrated = A.get(CU_DEVICE_ATTRIBUTE_INTEGRATED);
  P.canMapHostMemory = A.get(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY);
  P.maxTexture1D = A.get(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH);
  P.maxTexture2D[0] = A.get(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH);
  P.maxTexture2D[1] = A.get(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT);
  P.maxTexture3D[0] = A.get(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH);
  P.maxTexture3D[1] = A.get(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT);
  P.maxTexture3D[2] = A.get(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH);
  P.surfaceAlignment = A.get(CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT);
  P.concurrentKernels = A.get(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS);
  P.ECCEnabled = A.get(CU_DEVICE_ATTRIBUTE_ECC_ENABLED);
  P.pciBusID = A.get(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
  P.pciDeviceID = A.get(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
  P.pciDomainID = A.get(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
  P.tccDriver = A.get(CU_DEVICE_ATTRIBUTE_TCC_DRIVER);
  P.asyncEngineCount = A.get(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
  P.unifiedAddressing = A.get(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
  P.memoryBusWidth = A.get(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  P.l2CacheSize = A.get(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  P.persistingL2CacheMaxSize = A.get(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
  P.maxThreadsPerMultiProcessor = A.get(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  P.streamPrioritiesSupported = A.get(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED);
  P.globalL1CacheSupported = A.get(CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED);
  P.localL1CacheSupported = A.get(CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED);
  P.sharedMemPerMultiprocessor = A.get(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  P.regsPerMultiprocessor = A.get(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  P.managedMemory = A.get(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY);
  P.isMultiGpuBoard = A.get(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD);
  P.multiGpuBoardGroupID = A.get(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID);
  P.hostNativeAtomicSupported = A.get(CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED);
  P.pageableMemoryAccess = A.get(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS);
  P.concurrentManagedAccess = A.get(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS);
  P.computePreemptionSupported = A.get(CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED);
  P.canUseHostPointerForRegisteredMem = A.get(CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM);
  P.cooperativeLaunch = A.get(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH);
  P.sharedMemPerBlockOptin = A.get(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  P.pageableMemoryAccessUsesHostPageTables = A.get(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES);
  P.directManagedMemAccessFromHost = A.get(CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST);
  P.maxBlocksPerMultiProcessor = A.get(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  P.accessPolicyMaxWindowSize = A.get(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE);
  P.reservedSharedMemPerBlock = A.get(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
  P.hostRegisterSupported = A.get(CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED);
  P.sparseCudaArraySupported = A.get(CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED);
  P.hostRegisterReadOnlySupported = A.get(CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED);
  P.timelineSemaphoreInteropSupported = A.get(CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED);
  P.memoryPoolsSupported = A.get(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED);
  P.gpuDirectRDMASupported = A.get(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED);
  P.gpuDirectRDMAFlushWritesOptions = A.get(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS);
  P.gpuDirectRDMAWritesOrdering = A.get(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING);
  P.memoryPoolSupportedHandleTypes = A.get(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES);
  P.deferredMappingCudaArraySupported = A.get(CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED);
  P.ipcEventSupported = A.get(CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED);
  P.clusterLaunch = A.get(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH);
  P.unifiedFunctionPointers = A.get(CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS);
  P.deviceNumaConfig = A.get(CU_DEVICE_ATTRIBUTE_NUMA_CONFIG);
  P.deviceNumaId = A.get(CU_DEVICE_ATTRIBUTE_NUMA_ID);
  P.mpsEnabled = A.get(CU_DEVICE_ATTRIBUTE_MPS_ENABLED);
  P.hostNumaId = A.get(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
  P.gpuPciDeviceID = A.get(CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID);
  P.gpuPciSubsystemID = A.get(CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID);
  P.hostNumaMultinodeIpcSupported = A.get(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED);
  return A.Error;
}

} // namespace ptxforge::runtime
