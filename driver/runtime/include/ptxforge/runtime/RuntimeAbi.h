// The CUDA 13 runtime's C ABI as programs compiled against NVIDIA's cuda_runtime.h see it: the types, enum
// values and struct layouts libcudart.so.13's entry points take. Only what ptxforge's runtime implements is
// here; names are CUDA's so the entry points read like their documentation. Driver types (streams, events)
// are cuda.h's: a cudaStream_t is a CUstream, as in NVIDIA's headers.
#pragma once

#include <cuda.h>

#include <cstddef>

#ifdef __CUDA_RUNTIME_API_H__
#error "RuntimeAbi.h replaces NVIDIA's runtime headers inside ptxforge; include only one of them"
#endif

extern "C" {

/// CUDA 13's cudaError codes (driver_types.h); RuntimeErrors.def lists them with names and strings.
enum cudaError {
#define CUDART_ERROR(Name, Value, Text) Name = Value,
#include "ptxforge/runtime/RuntimeErrors.def"
#undef CUDART_ERROR
};
typedef enum cudaError cudaError_t;

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
};

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef struct CUfunc_st *cudaFunction_t;
typedef struct CUkern_st *cudaKernel_t;
typedef struct CUmemPoolHandle_st *cudaMemPool_t;
typedef void (*cudaHostFn_t)(void *UserData);
typedef void (*cudaStreamCallback_t)(cudaStream_t, cudaError_t, void *);

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

enum cudaMemoryType {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3,
};

// ---- arrays, textures, surfaces (driver_types.h, texture_types.h, surface_types.h) ----
/// cudaArray_t is CUarray: NVIDIA documents the two as interchangeable.
typedef struct CUarray_st *cudaArray_t;
/// cudaMipmappedArray_t is CUmipmappedArray, as cudaArray_t is CUarray.
typedef struct CUmipmappedArray_st *cudaMipmappedArray_t;
typedef const struct CUmipmappedArray_st *cudaMipmappedArray_const_t;
typedef const struct CUarray_st *cudaArray_const_t;
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;

enum cudaChannelFormatKind {
  cudaChannelFormatKindSigned = 0,
  cudaChannelFormatKindUnsigned = 1,
  cudaChannelFormatKindFloat = 2,
  cudaChannelFormatKindNone = 3,
};

struct cudaChannelFormatDesc {
  int x, y, z, w;
  enum cudaChannelFormatKind f;
};

struct cudaExtent {
  size_t width, height, depth;
};
struct cudaPos {
  size_t x, y, z;
};
struct cudaPitchedPtr {
  void *ptr;
  size_t pitch, xsize, ysize;
};

struct cudaMemcpy3DParms {
  cudaArray_t srcArray;
  struct cudaPos srcPos;
  struct cudaPitchedPtr srcPtr;
  cudaArray_t dstArray;
  struct cudaPos dstPos;
  struct cudaPitchedPtr dstPtr;
  struct cudaExtent extent;
  enum cudaMemcpyKind kind;
};

enum cudaResourceType {
  cudaResourceTypeArray = 0,
  cudaResourceTypeMipmappedArray = 1,
  cudaResourceTypeLinear = 2,
  cudaResourceTypePitch2D = 3,
};

struct cudaResourceDesc {
  enum cudaResourceType resType;
  union {
    struct {
      cudaArray_t array;
    } array;
    struct {
      cudaMipmappedArray_t mipmap;
    } mipmap;
    struct {
      void *devPtr;
      struct cudaChannelFormatDesc desc;
      size_t sizeInBytes;
    } linear;
    struct {
      void *devPtr;
      struct cudaChannelFormatDesc desc;
      size_t width, height, pitchInBytes;
    } pitch2D;
    struct {
      int reserved[32];
    } reserved;
  } res;
  unsigned int flags;
};

struct cudaResourceViewDesc {
  int format;
  size_t width, height, depth;
  unsigned int firstMipmapLevel, lastMipmapLevel, firstLayer, lastLayer;
  unsigned int reserved[16];
};

enum cudaTextureAddressMode {
  cudaAddressModeWrap = 0,
  cudaAddressModeClamp,
  cudaAddressModeMirror,
  cudaAddressModeBorder
};
enum cudaTextureFilterMode { cudaFilterModePoint = 0, cudaFilterModeLinear = 1 };
enum cudaTextureReadMode { cudaReadModeElementType = 0, cudaReadModeNormalizedFloat = 1 };

struct cudaTextureDesc {
  enum cudaTextureAddressMode addressMode[3];
  enum cudaTextureFilterMode filterMode;
  enum cudaTextureReadMode readMode;
  int sRGB;
  float borderColor[4];
  int normalizedCoords;
  unsigned int maxAnisotropy;
  enum cudaTextureFilterMode mipmapFilterMode;
  float mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp;
  int disableTrilinearOptimization;
  int seamlessCubemap;
};

enum {
  cudaArrayDefault = 0x00,
  cudaArrayLayered = 0x01,
  cudaArraySurfaceLoadStore = 0x02,
  cudaArrayCubemap = 0x04,
  cudaArrayTextureGather = 0x08,
};

struct cudaPointerAttributes {
  enum cudaMemoryType type;
  int device;
  void *devicePointer;
  void *hostPointer;
  long reserved[8];
};

/// cudaFuncAttribute values equal CUfunction_attribute's for the settable ones (8 and up).
enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};

struct cudaFuncAttributes {
  size_t sharedSizeBytes, constSizeBytes, localSizeBytes;
  int maxThreadsPerBlock, numRegs, ptxVersion, binaryVersion, cacheModeCA, maxDynamicSharedSizeBytes,
      preferredShmemCarveout, clusterDimMustBeSet, requiredClusterWidth, requiredClusterHeight, requiredClusterDepth,
      clusterSchedulingPolicyPreference, nonPortableClusterSizeAllowed;
  int reserved[16];
};

struct cudaUUID_t {
  char bytes[16];
};

/// CUDA 13's cudaDeviceProp (the fields CUDA 12 deprecated are gone; the layout is 13.0's).
struct cudaDeviceProp {
  char name[256];
  cudaUUID_t uuid;
  char luid[8];
  unsigned luidDeviceNodeMask;
  size_t totalGlobalMem, sharedMemPerBlock;
  int regsPerBlock, warpSize;
  size_t memPitch;
  int maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3];
  size_t totalConstMem;
  int major, minor;
  size_t textureAlignment, texturePitchAlignment;
  int multiProcessorCount, integrated, canMapHostMemory, maxTexture1D, maxTexture1DMipmap, maxTexture2D[2],
      maxTexture2DMipmap[2], maxTexture2DLinear[3], maxTexture2DGather[2], maxTexture3D[3], maxTexture3DAlt[3],
      maxTextureCubemap, maxTexture1DLayered[2], maxTexture2DLayered[3], maxTextureCubemapLayered[2], maxSurface1D,
      maxSurface2D[2], maxSurface3D[3], maxSurface1DLayered[2], maxSurface2DLayered[3], maxSurfaceCubemap,
      maxSurfaceCubemapLayered[2];
  size_t surfaceAlignment;
  int concurrentKernels, ECCEnabled, pciBusID, pciDeviceID, pciDomainID, tccDriver, asyncEngineCount, unifiedAddressing,
      memoryBusWidth, l2CacheSize, persistingL2CacheMaxSize, maxThreadsPerMultiProcessor, streamPrioritiesSupported,
      globalL1CacheSupported, localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor, managedMemory, isMultiGpuBoard, multiGpuBoardGroupID, hostNativeAtomicSupported,
      pageableMemoryAccess, concurrentManagedAccess, computePreemptionSupported, canUseHostPointerForRegisteredMem,
      cooperativeLaunch;
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables, directManagedMemAccessFromHost, maxBlocksPerMultiProcessor,
      accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
  int hostRegisterSupported, sparseCudaArraySupported, hostRegisterReadOnlySupported, timelineSemaphoreInteropSupported,
      memoryPoolsSupported, gpuDirectRDMASupported;
  unsigned gpuDirectRDMAFlushWritesOptions;
  int gpuDirectRDMAWritesOrdering;
  unsigned memoryPoolSupportedHandleTypes;
  int deferredMappingCudaArraySupported, ipcEventSupported, clusterLaunch, unifiedFunctionPointers, deviceNumaConfig,
      deviceNumaId, mpsEnabled, hostNumaId;
  unsigned gpuPciDeviceID, gpuPciSubsystemID;
  int hostNumaMultinodeIpcSupported;
  int reserved[56];
};

// ---- graphs and stream capture (driver_types.h): handles are the driver's; the node parameter structs are the
// runtime's own (host stubs for kernels, cudaMemcpy3DParms for copies) ----
typedef struct CUgraph_st *cudaGraph_t;
typedef struct CUgraphNode_st *cudaGraphNode_t;
typedef struct CUgraphExec_st *cudaGraphExec_t;
typedef CUgraphEdgeData cudaGraphEdgeData; ///< the same fields (cudaGraphEdgeData_st) and layout
enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2,
};
enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2,
};

struct cudaKernelNodeParams {
  void *func; ///< a host stub or cudaKernel_t
  dim3 gridDim;
  dim3 blockDim;
  unsigned sharedMemBytes;
  void **kernelParams;
  void **extra;
};
struct cudaMemsetParams {
  void *dst;
  size_t pitch;
  unsigned value;
  unsigned elementSize;
  size_t width;
  size_t height;
};
struct cudaHostNodeParams {
  cudaHostFn_t fn;
  void *userData;
};
/// cudaMemPoolProps, cudaMemLocation and cudaMemAccessDesc have the driver structs' layouts and values.
struct cudaMemAllocNodeParams {
  CUmemPoolProps poolProps;
  const CUmemAccessDesc *accessDescs;
  size_t accessDescCount;
  size_t bytesize;
  void *dptr;
};
static_assert(sizeof(cudaMemAllocNodeParams) == sizeof(CUDA_MEM_ALLOC_NODE_PARAMS), "cudaMemAllocNodeParams layout");
/// cudaGraphAddNode's parameters (cudaGraphNodeParams): the union members of the node kinds ptxforge
/// implements; kernel and memset are the V2 structs, which begin as the structs above.
struct cudaConditionalNodeParams {
  unsigned long long handle;
  int type; ///< cudaGraphConditionalNodeType: CUgraphConditionalNodeType's values
  unsigned size;
  cudaGraph_t *phGraph_out;
};
struct cudaChildGraphNodeParams {
  cudaGraph_t graph;
  int ownership;
};
struct cudaGraphNodeParams {
  int type; ///< cudaGraphNodeType: CUgraphNodeType's values
  int reserved0[3];
  union {
    long long reserved1[29];
    cudaKernelNodeParams kernel;
    struct {
      int flags;
      int reserved[3];
      cudaMemcpy3DParms copyParams;
    } memcpy;
    cudaMemsetParams memset;
    cudaHostNodeParams host;
    cudaChildGraphNodeParams graph;
    struct {
      CUevent event;
    } eventWait, eventRecord;
    cudaMemAllocNodeParams alloc; ///< cudaMemAllocNodeParamsV2: the same fields
    struct {
      void *dptr;
    } free;
    cudaConditionalNodeParams conditional;
  };
  long long reserved2;
};
static_assert(sizeof(cudaGraphNodeParams) == 256 && sizeof(cudaGraphNodeParams) == sizeof(CUgraphNodeParams),
              "cudaGraphNodeParams layout");

struct cudaGraphExecUpdateResultInfo {
  int result; ///< cudaGraphExecUpdateResult: CUgraphExecUpdateResult's values
  cudaGraphNode_t errorNode;
  cudaGraphNode_t errorFromNode;
};

/// cudaLaunchKernelExC's configuration; attribute values are a 64-byte union.
struct cudaLaunchAttribute {
  int id; ///< cudaLaunchAttributeID: 0 ignore, 2 cooperative, ...
  char pad[4];
  union {
    char raw[64];
    int cooperative;
  } val;
};
enum { cudaLaunchAttributeIgnore = 0, cudaLaunchAttributeCooperative = 2 };

struct cudaLaunchConfig_t {
  dim3 gridDim, blockDim;
  size_t dynamicSmemBytes;
  cudaStream_t stream;
  cudaLaunchAttribute *attrs;
  unsigned numAttrs;
};

/// The wrapper nvcc's host code hands __cudaRegisterFatBinary (`__fatBinC_Wrapper_t`).
struct FatbinWrapper {
  int Magic; ///< 0x466243b1
  int Version;
  const void *Data; ///< the fatbinary container (magic 0xBA55ED50)
  /// Version 2 (the wrapper of `nvcc -dlink`'s output, registered by its link stub for -rdc=true programs):
  /// a null-terminated array of each translation unit's relocatable fatbinary (in `__nv_relfatbin`).
  void *FilenameOrFatbins;
};
constexpr int FatbinWrapperMagic = 0x466243b1;
constexpr int LinkedFatbinWrapperVersion = 2;

} // extern "C"

static_assert(sizeof(cudaDeviceProp) == 1008, "CUDA 13.0's cudaDeviceProp is 1008 bytes");
static_assert(sizeof(cudaFuncAttributes) == 144, "CUDA 13.0's cudaFuncAttributes is 144 bytes");
static_assert(sizeof(cudaLaunchAttribute) == 72, "CUDA 13.0's cudaLaunchAttribute is 72 bytes");
