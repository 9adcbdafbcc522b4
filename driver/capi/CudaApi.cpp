// The CUDA driver API's C entry points (libcuda.so.1). Each function only checks its arguments, unwraps the
// handles, calls the C++ core (ptxforge::driver) and maps the core's Status to a CUresult; nothing throws
// across the boundary. CudaApi.def lists the entry points implemented here (cuGetProcAddress reads it),
// CudaApiUnsupported.def the rest of CUDA 13.0's exports, defined at the end as CUDA_ERROR_NOT_SUPPORTED.
// The model is LLVM's OrcV2CBindings.cpp: opaque handles are the core's objects, wrap()/unwrap() convert.
#include <cuda.h>

#include "ptxforge/codegen/FaultGuard.h"
#include "ptxforge/driver/Array.h"
#include "ptxforge/driver/Capture.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Copy.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Graph.h"
#include "ptxforge/driver/Launch.h"
#include "ptxforge/driver/Library.h"
#include "ptxforge/driver/Link.h"
#include "ptxforge/driver/MemPool.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Module.h"
#include "ptxforge/driver/TensorMap.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MathExtras.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <mutex>
#include <new>
#include <optional>

#include <pthread.h>

#define PTXFORGE_API extern "C" __attribute__((visibility("default")))
/// A per-thread-default-stream (`_ptds`) entry that behaves as its legacy-stream twin (ptxforge runs the
/// per-thread stream in legacy order): the same code under a second exported name.
#define PTXFORGE_SAME_ENTRY(Name, Target)                                                                              \
  extern "C" __attribute__((visibility("default"), alias(#Target))) decltype(Target) Name;

using namespace ptxforge;
using namespace ptxforge::driver;

namespace {

// ---- handles ----
CUcontext wrap(Context *P) { return reinterpret_cast<CUcontext>(P); }
CUmodule wrap(Module *P) { return reinterpret_cast<CUmodule>(P); }
CUfunction wrap(Function *P) { return reinterpret_cast<CUfunction>(P); }
CUstream wrap(Stream *P) { return reinterpret_cast<CUstream>(P); }
CUevent wrap(Event *P) { return reinterpret_cast<CUevent>(P); }
CUlinkState wrap(Linker *P) { return reinterpret_cast<CUlinkState>(P); }
Context *unwrap(CUcontext H) { return Driver::get().Contexts.contains(H) ? reinterpret_cast<Context *>(H) : nullptr; }
Module *unwrap(CUmodule H) { return Driver::get().Modules.contains(H) ? reinterpret_cast<Module *>(H) : nullptr; }
Function *unwrap(CUfunction H) {
  return Driver::get().Functions.contains(H) ? reinterpret_cast<Function *>(H) : nullptr;
}
Event *unwrap(CUevent H) { return Driver::get().Events.contains(H) ? reinterpret_cast<Event *>(H) : nullptr; }
Registry<Linker> Linkers;
Linker *unwrap(CUlinkState H) { return Linkers.contains(H) ? reinterpret_cast<Linker *>(H) : nullptr; }

/// NULL and CU_STREAM_LEGACY are the legacy default stream, CU_STREAM_PER_THREAD the calling thread's own default
/// stream (Context::perThreadStream): no handle of a stream made by cuStreamCreate.
bool isDefaultStream(CUstream H) { return !H || H == CU_STREAM_LEGACY || H == CU_STREAM_PER_THREAD; }

// ---- results ----
CUresult toResult(Status S) {
  switch (S) {
  case Status::Success:
    return CUDA_SUCCESS;
  case Status::InvalidValue:
    return CUDA_ERROR_INVALID_VALUE;
  case Status::OutOfMemory:
    return CUDA_ERROR_OUT_OF_MEMORY;
  case Status::NotInitialized:
    return CUDA_ERROR_NOT_INITIALIZED;
  case Status::NoDevice:
    return CUDA_ERROR_NO_DEVICE;
  case Status::InvalidDevice:
    return CUDA_ERROR_INVALID_DEVICE;
  case Status::InvalidImage:
    return CUDA_ERROR_INVALID_IMAGE;
  case Status::InvalidContext:
    return CUDA_ERROR_INVALID_CONTEXT;
  case Status::ContextIsDestroyed:
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  case Status::NoBinaryForGpu:
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  case Status::InvalidPtx:
    return CUDA_ERROR_INVALID_PTX;
  case Status::UnsupportedPtxVersion:
    return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
  case Status::JitCompilationDisabled:
    return CUDA_ERROR_JIT_COMPILATION_DISABLED;
  case Status::FileNotFound:
    return CUDA_ERROR_FILE_NOT_FOUND;
  case Status::InvalidHandle:
    return CUDA_ERROR_INVALID_HANDLE;
  case Status::NotFound:
    return CUDA_ERROR_NOT_FOUND;
  case Status::NotReady:
    return CUDA_ERROR_NOT_READY;
  case Status::IllegalAddress:
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  case Status::LaunchOutOfResources:
    return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  case Status::LaunchFailed:
    return CUDA_ERROR_LAUNCH_FAILED;
  case Status::LaunchTimeout:
    return CUDA_ERROR_LAUNCH_TIMEOUT;
  case Status::Assert:
    return CUDA_ERROR_ASSERT;
  case Status::IllegalInstruction:
    return CUDA_ERROR_ILLEGAL_INSTRUCTION;
  case Status::CooperativeLaunchTooLarge:
    return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
  case Status::InvalidClusterSize:
    return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  case Status::MisalignedAddress:
    return CUDA_ERROR_MISALIGNED_ADDRESS;
  case Status::NotSupported:
    return CUDA_ERROR_NOT_SUPPORTED;
  case Status::NotPermitted:
    return CUDA_ERROR_NOT_PERMITTED;
  case Status::IllegalState:
    return CUDA_ERROR_ILLEGAL_STATE;
  case Status::StreamCaptureUnsupported:
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  case Status::StreamCaptureInvalidated:
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  case Status::StreamCaptureMerge:
    return CUDA_ERROR_STREAM_CAPTURE_MERGE;
  case Status::StreamCaptureUnmatched:
    return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
  case Status::StreamCaptureUnjoined:
    return CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
  case Status::StreamCaptureIsolation:
    return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
  case Status::StreamCaptureImplicit:
    return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
  case Status::CapturedEvent:
    return CUDA_ERROR_CAPTURED_EVENT;
  case Status::StreamCaptureWrongThread:
    return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
  case Status::GraphExecUpdateFailure:
    return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  case Status::Unknown:
    return CUDA_ERROR_UNKNOWN;
  }
  return CUDA_ERROR_UNKNOWN;
}
CUresult toResult(llvm::Error E) { return toResult(takeStatus(std::move(E))); }
CUresult sticky() { return toResult(Driver::get().stickyError()); }

/// Runs an entry point's body behind the C boundary: no exception escapes into C code.
template <class F> CUresult boundary(F &&Body) noexcept {
  try {
    return Body();
  } catch (const std::bad_alloc &) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
}

bool initialized() { return Driver::get().initialized(); }
bool validDevice(CUdevice D) { return D >= 0 && D < deviceCount(); }

/// The checks of a query about device Dev, in NVIDIA's order: the driver initialized, every output pointer given,
/// a valid device.
CUresult checkDeviceQuery(CUdevice Dev, std::initializer_list<const void *> Outs) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  for (const void *Out : Outs)
    if (!Out)
      return CUDA_ERROR_INVALID_VALUE;
  return validDevice(Dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

/// The calling thread's current context, or the error for a call that needs one.
CUresult current(Context *&Out) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  auto C = currentContext();
  if (!C)
    return toResult(C.takeError());
  Out = *C;
  return CUDA_SUCCESS;
}

/// The context and stream work on H goes to: the stream's own context, or the current context's legacy
/// default stream (null Stream) or the calling thread's per-thread default stream.
CUresult streamTarget(CUstream H, Context *&Ctx, Stream *&S) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (isDefaultStream(H)) {
    S = nullptr;
    if (CUresult R = current(Ctx); R != CUDA_SUCCESS || H != CU_STREAM_PER_THREAD)
      return R;
    auto Own = Ctx->perThreadStream();
    if (!Own)
      return toResult(Own.takeError());
    S = *Own;
    return CUDA_SUCCESS;
  }
  if (!Driver::get().Streams.contains(H))
    return CUDA_ERROR_INVALID_HANDLE;
  S = reinterpret_cast<Stream *>(H);
  Ctx = &S->context();
  return CUDA_SUCCESS;
}

bool verbose() {
  static const bool V = std::getenv("PTXFORGE_DRIVER_VERBOSE") != nullptr;
  return V;
}

/// PTXFORGE_DRIVER_VERBOSE: a failed load's error log on stderr, on lines of its own (some logs are one
/// message without a newline, as in the caller's JIT log buffer).
void printErrorLog(const std::string &Log) {
  if (!verbose() || Log.empty())
    return;
  std::fprintf(stderr, "%s%s", Log.c_str(), Log.back() == '\n' ? "" : "\n");
}

// ---- error names and strings (NVIDIA's driver wording) ----
struct ErrorText {
  CUresult Code;
  const char *Name, *Text;
};
#define E(Code, Text)                                                                                                  \
  { Code, #Code, Text }
constexpr ErrorText ErrorTexts[] = {
    E(CUDA_SUCCESS, "no error"),
    E(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    E(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    E(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
    E(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
    E(CUDA_ERROR_PROFILER_DISABLED, "profiler disabled while using external profiling tool"),
    E(CUDA_ERROR_PROFILER_NOT_INITIALIZED, "profiler not initialized: call cudaProfilerInitialize()"),
    E(CUDA_ERROR_PROFILER_ALREADY_STARTED, "profiler already started"),
    E(CUDA_ERROR_PROFILER_ALREADY_STOPPED, "profiler already stopped"),
    E(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library"),
    E(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "API call is not supported in the installed CUDA driver"),
    E(CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA-capable device(s) is/are busy or unavailable"),
    E(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
    E(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
    E(CUDA_ERROR_DEVICE_NOT_LICENSED, "device doesn't have valid Grid license"),
    E(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
    E(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
    E(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context already current"),
    E(CUDA_ERROR_MAP_FAILED, "mapping of buffer object failed"),
    E(CUDA_ERROR_UNMAP_FAILED, "unmapping of buffer object failed"),
    E(CUDA_ERROR_ARRAY_IS_MAPPED, "array is mapped"),
    E(CUDA_ERROR_ALREADY_MAPPED, "resource already mapped"),
    E(CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"),
    E(CUDA_ERROR_ALREADY_ACQUIRED, "resource already acquired"),
    E(CUDA_ERROR_NOT_MAPPED, "resource not mapped"),
    E(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, "resource not mapped as array"),
    E(CUDA_ERROR_NOT_MAPPED_AS_POINTER, "resource not mapped as pointer"),
    E(CUDA_ERROR_ECC_UNCORRECTABLE, "uncorrectable ECC error encountered"),
    E(CUDA_ERROR_UNSUPPORTED_LIMIT, "limit is not supported on this architecture"),
    E(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "exclusive-thread device already in use by a different thread"),
    E(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "peer access is not supported between these two devices"),
    E(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"),
    E(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, "invalid OpenGL or DirectX context"),
    E(CUDA_ERROR_NVLINK_UNCORRECTABLE, "uncorrectable NVLink error detected during the execution"),
    E(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "PTX JIT compiler library not found"),
    E(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the provided PTX was compiled with an unsupported toolchain."),
    E(CUDA_ERROR_JIT_COMPILATION_DISABLED, "PTX JIT compilation was disabled"),
    E(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, "the provided execution affinity is not supported"),
    E(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, "the provided PTX contains unsupported call to cudaDeviceSynchronize"),
    E(CUDA_ERROR_CONTAINED, "Invalid access of peer GPU memory over nvlink or a hardware error"),
    E(CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid"),
    E(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
    E(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "shared object symbol not found"),
    E(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "shared object initialization failed"),
    E(CUDA_ERROR_OPERATING_SYSTEM, "OS call failed or operation not supported on this OS"),
    E(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
    E(CUDA_ERROR_ILLEGAL_STATE, "the operation cannot be performed in the present state"),
    E(CUDA_ERROR_LOSSY_QUERY, "attempted introspection would be semantically lossy"),
    E(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
    E(CUDA_ERROR_NOT_READY, "device not ready"),
    E(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
    E(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"),
    E(CUDA_ERROR_LAUNCH_TIMEOUT, "the launch timed out and was terminated"),
    E(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, "launch uses incompatible texturing mode"),
    E(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access is already enabled"),
    E(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access has not been enabled"),
    E(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "cannot set while device is active in this process"),
    E(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"),
    E(CUDA_ERROR_ASSERT, "device-side assert triggered"),
    E(CUDA_ERROR_TOO_MANY_PEERS, "peer mapping resources exhausted"),
    E(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "part or all of the requested memory range is already mapped"),
    E(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "pointer does not correspond to a registered memory region"),
    E(CUDA_ERROR_HARDWARE_STACK_ERROR, "hardware stack error"),
    E(CUDA_ERROR_ILLEGAL_INSTRUCTION, "an illegal instruction was encountered"),
    E(CUDA_ERROR_MISALIGNED_ADDRESS, "misaligned address"),
    E(CUDA_ERROR_INVALID_ADDRESS_SPACE, "operation not supported on global/shared address space"),
    E(CUDA_ERROR_INVALID_PC, "invalid program counter"),
    E(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
    E(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "too many blocks in cooperative launch"),
    E(CUDA_ERROR_TENSOR_MEMORY_LEAK, "tensor memory not completely freed"),
    E(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
    E(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
    E(CUDA_ERROR_SYSTEM_NOT_READY, "system not yet initialized"),
    E(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "system has unsupported display driver / cuda driver combination"),
    E(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "forward compatibility was attempted on non supported HW"),
    E(CUDA_ERROR_MPS_CONNECTION_FAILED, "MPS client failed to connect to the MPS control daemon or the MPS server"),
    E(CUDA_ERROR_MPS_RPC_FAILURE, "the remote procedural call between the MPS server and the MPS client failed"),
    E(CUDA_ERROR_MPS_SERVER_NOT_READY, "MPS server is not ready to accept new MPS client requests"),
    E(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, "the hardware resources required to create MPS client have been exhausted"),
    E(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED,
      "the hardware resources required to support device connections have been exhausted"),
    E(CUDA_ERROR_MPS_CLIENT_TERMINATED, "the MPS client has been terminated by the server"),
    E(CUDA_ERROR_CDP_NOT_SUPPORTED,
      "is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does not support it"),
    E(CUDA_ERROR_CDP_VERSION_MISMATCH,
      "unsupported interaction between different versions of CUDA Dynamic Parallelism"),
    E(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing"),
    E(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "operation failed due to a previous error during capture"),
    E(CUDA_ERROR_STREAM_CAPTURE_MERGE, "operation would result in a merge of separate capture sequences"),
    E(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "capture was not ended in the same stream as it began"),
    E(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "capturing stream has unjoined work"),
    E(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "dependency created on uncaptured work in another stream"),
    E(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
      "operation would make the legacy stream depend on a capturing blocking stream"),
    E(CUDA_ERROR_CAPTURED_EVENT, "operation not permitted on an event last recorded in a capturing stream"),
    E(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
      "attempt to terminate a thread-local capture sequence from another thread"),
    E(CUDA_ERROR_TIMEOUT, "wait operation timed out"),
    E(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "the graph update was not performed because it included changes which "
                                            "violated constraints specific to instantiated graph update"),
    E(CUDA_ERROR_EXTERNAL_DEVICE, "an async error has occured in external entity outside of CUDA"),
    E(CUDA_ERROR_INVALID_CLUSTER_SIZE, "a kernel launch error has occurred due to cluster misconfiguration"),
    E(CUDA_ERROR_FUNCTION_NOT_LOADED,
      "the function handle is not loaded when calling an API that requires a loaded function"),
    E(CUDA_ERROR_INVALID_RESOURCE_TYPE,
      "one or more resources passed in are not valid resource types for the operation"),
    E(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
      "one or more resources are insufficient or non-applicable for the operation"),
    E(CUDA_ERROR_KEY_ROTATION, "an error happened during the key rotation sequence"),
    E(CUDA_ERROR_UNKNOWN, "unknown error"),
};
#undef E

const ErrorText *findError(CUresult R) {
  for (const ErrorText &T : ErrorTexts)
    if (T.Code == R)
      return &T;
  return nullptr;
}

// ---- device attributes ----
/// Every CUdevice_attribute, answered from the emulated device's properties; nothing for values outside the enum.
std::optional<int> deviceAttribute(CUdevice_attribute A, const DeviceProperties &P) {
  auto Clamp = [](uint64_t V) { return static_cast<int>(std::min<uint64_t>(V, INT32_MAX)); };
  switch (A) {
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    return Clamp(P.MaxThreadsPerBlock);
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    return Clamp(P.MaxBlockDim[0]);
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
    return Clamp(P.MaxBlockDim[1]);
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
    return Clamp(P.MaxBlockDim[2]);
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
    return Clamp(P.MaxGridDim[0]);
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    return Clamp(P.MaxGridDim[1]);
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
    return Clamp(P.MaxGridDim[2]);
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    return Clamp(P.SharedMemoryPerBlock);
  case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
    return Clamp(P.TotalConstantMemory);
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
    return Clamp(P.WarpSize);
  case CU_DEVICE_ATTRIBUTE_MAX_PITCH:
    return INT32_MAX;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
    return Clamp(P.RegistersPerBlock);
  case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
    return Clamp(P.ClockRateKHz);
  case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT:
    return 512;
  case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP:
    return 1;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    return Clamp(P.MultiprocessorCount);
  case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT:
    return 0;
  case CU_DEVICE_ATTRIBUTE_INTEGRATED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
    return 1;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
    return CU_COMPUTEMODE_DEFAULT;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH:
    return 131072;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH:
    return 131072;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT:
    return 65536;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH:
    return 16384;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT:
    return 16384;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH:
    return 16384;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS:
    return 2048;
  case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT:
    return 512;
  case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
    return 1;
  case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
    return Clamp(P.PciBus);
  case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
    return Clamp(P.PciDevice);
  case CU_DEVICE_ATTRIBUTE_TCC_DRIVER:
    return 0;
  case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
    return Clamp(P.ClockRateKHz);
  case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
    return 64;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
    return Clamp(P.L2CacheBytes);
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
    return Clamp(P.MaxThreadsPerMultiprocessor);
  case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
    return 2;
  case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
    return 1;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS:
    return 2048;
  case CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER:
    return 1;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE:
    return 8192;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE:
    return 8192;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
    return Clamp(P.PciDomain);
  case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT:
    return 32;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS:
    return 2046;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH:
    return 131072;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT:
    return 65536;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH:
    return 16384;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT:
    return 16384;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH:
    return 16384;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS:
    return 2048;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS:
    return 2048;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS:
    return 2046;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH:
    return 268435456;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH:
    return 131072;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT:
    return 65000;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH:
    return 2097120;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    return Clamp(P.CcMajor);
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    return Clamp(P.CcMinor);
  case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH:
    return 32768;
  case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:
    return 1;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED:
    return 1;
  case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED:
    return 1;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
    return Clamp(P.SharedMemoryPerMultiprocessor);
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
    return Clamp(P.RegistersPerMultiprocessor);
  case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
    return 1;
  case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD:
    return 0;
  case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID:
    return 0;
  case CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED:
    return 1; // the device is the host
  case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO:
    return 2;
  case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS:
    return 1; // kernels can read any host memory
  case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
    return 1;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED:
    return 1;
  case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM:
    return 1;
  case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1:
    return 0;
  case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1:
    return 0;
  case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1:
    return 0;
  case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
    return 1;
  case CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH:
    return 0;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    return Clamp(P.SharedMemoryPerBlockOptin);
  case CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES:
    return 0;
  case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED:
    return 1;
  case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES:
    return 1;
  case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST:
    return 1;
  case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    return 0; // no cuMemCreate/cuMemMap yet
  case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
    return Clamp(P.MaxBlocksPerMultiprocessor);
  case CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE:
    return 0;
  case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE:
    return 0;
  case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK:
    return Clamp(P.ReservedSharedMemoryPerBlock);
  case CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
    return 1; // cuMemAllocAsync/cuMemFreeAsync, captured as graph memory nodes
  case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS:
    return 0;
  case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING:
    return 0;
  case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES:
    return 0;
  case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
    return 0; // no thread-block clusters yet
  case CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS:
    return 0;
  case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR:
    return 0;
  case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT:
    return 1;
  case CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS:
    return 0;
  case CU_DEVICE_ATTRIBUTE_NUMA_CONFIG:
    return 0;
  case CU_DEVICE_ATTRIBUTE_NUMA_ID:
    return -1;
  case CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_MPS_ENABLED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID:
    return -1;
  case CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK:
    return 0;
  case CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH:
    return 0;
  case CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID:
    return 0;
  case CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID:
    return 0;
  case CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED:
    return 0;
  case CU_DEVICE_ATTRIBUTE_MAX:
    break;
  }
  return std::nullopt;
}

// ---- JIT options ----
/// The parsed option list of cuModuleLoadDataEx / cuLinkCreate, with the slots written back afterwards.
struct JitOptionList {
  JitOptions Options;
  char *InfoLog = nullptr, *ErrorLog = nullptr;
  size_t InfoSize = 0, ErrorSize = 0;
  void **InfoSizeSlot = nullptr, **ErrorSizeSlot = nullptr, **WallTimeSlot = nullptr;

  CUresult parse(unsigned N, const CUjit_option *Keys, void **Values) {
    if (N && (!Keys || !Values))
      return CUDA_ERROR_INVALID_VALUE;
    for (unsigned I = 0; I < N; ++I) {
      uintptr_t V = reinterpret_cast<uintptr_t>(Values[I]);
      switch (Keys[I]) {
      case CU_JIT_INFO_LOG_BUFFER:
        InfoLog = static_cast<char *>(Values[I]);
        break;
      case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
        InfoSize = static_cast<unsigned>(V), InfoSizeSlot = &Values[I];
        break;
      case CU_JIT_ERROR_LOG_BUFFER:
        ErrorLog = static_cast<char *>(Values[I]);
        break;
      case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
        ErrorSize = static_cast<unsigned>(V), ErrorSizeSlot = &Values[I];
        break;
      case CU_JIT_WALL_TIME:
        WallTimeSlot = &Values[I];
        break;
      case CU_JIT_OPTIMIZATION_LEVEL:
        if (static_cast<unsigned>(V) > 4)
          return CUDA_ERROR_INVALID_VALUE;
        Options.OptLevel = static_cast<unsigned>(V);
        break;
      case CU_JIT_TARGET: {
        unsigned T = static_cast<unsigned>(V);
        unsigned Base = T & 0xffff;
        if ((T & ~0x3ffffu) || Base < 30 || Base > 200)
          return CUDA_ERROR_INVALID_VALUE;
        Options.TargetCc = Base;
        break;
      }
      case CU_JIT_LOG_VERBOSE:
        Options.Verbose = V != 0;
        break;
      case CU_JIT_TARGET_FROM_CUCONTEXT: // the default
      case CU_JIT_MAX_REGISTERS:
      case CU_JIT_THREADS_PER_BLOCK:
      case CU_JIT_FALLBACK_STRATEGY:
      case CU_JIT_GENERATE_DEBUG_INFO:
      case CU_JIT_GENERATE_LINE_INFO:
      case CU_JIT_CACHE_MODE:
      case CU_JIT_NEW_SM3X_OPT:
      case CU_JIT_FAST_COMPILE:
      case CU_JIT_GLOBAL_SYMBOL_NAMES:
      case CU_JIT_GLOBAL_SYMBOL_ADDRESSES:
      case CU_JIT_GLOBAL_SYMBOL_COUNT:
      case CU_JIT_LTO:
      case CU_JIT_FTZ:
      case CU_JIT_PREC_DIV:
      case CU_JIT_PREC_SQRT:
      case CU_JIT_FMA:
      case CU_JIT_REFERENCED_KERNEL_NAMES:
      case CU_JIT_REFERENCED_KERNEL_COUNT:
      case CU_JIT_REFERENCED_VARIABLE_NAMES:
      case CU_JIT_REFERENCED_VARIABLE_COUNT:
      case CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES:
      case CU_JIT_POSITION_INDEPENDENT_CODE:
      case CU_JIT_MIN_CTA_PER_SM:
      case CU_JIT_MAX_THREADS_PER_BLOCK:
      case CU_JIT_OVERRIDE_DIRECTIVE_VALUES:
      case CU_JIT_SPLIT_COMPILE:
        break; // accepted; they tune NVIDIA's code generator
      default:
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
    Options.ErrorLog = ErrorLog && ErrorSize;
    return CUDA_SUCCESS;
  }

  static void writeLog(char *Buffer, size_t Size, void **SizeSlot, const std::string &Text) {
    size_t Written = 0;
    if (Buffer && Size) {
      Written = std::min(Text.size(), Size - 1);
      std::memcpy(Buffer, Text.data(), Written);
      Buffer[Written] = 0;
    }
    if (SizeSlot)
      *SizeSlot = reinterpret_cast<void *>(static_cast<uintptr_t>(Written));
  }

  /// Writes the logs and the wall time back into the caller's buffers and option values.
  void report(const JitLogs &Logs) const {
    writeLog(InfoLog, InfoSize, InfoSizeSlot, Logs.Info);
    writeLog(ErrorLog, ErrorSize, ErrorSizeSlot, Logs.Error);
    if (WallTimeSlot) {
      float Ms = Logs.WallMilliseconds;
      *WallTimeSlot = nullptr;
      std::memcpy(WallTimeSlot, &Ms, sizeof Ms);
    }
    printErrorLog(Logs.Error);
  }
};

CUresult loadModule(CUmodule *Out, const ModuleSource &Source, JitOptionList &Opts) {
  if (!Out)
    return CUDA_ERROR_INVALID_VALUE;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  JitLogs Logs;
  auto M = Module::load(*Ctx, Source, Opts.Options, Logs);
  Opts.report(Logs);
  if (!M)
    return toResult(M.takeError());
  *Out = wrap(Ctx->adoptModule(std::move(*M)));
  return CUDA_SUCCESS;
}

// ---- copies ----
CUresult copy(CUstream H, bool Async, const CopyRegion &R) {
  Context *Ctx;
  Stream *S;
  if (CUresult Res = streamTarget(H, Ctx, S))
    return Res;
  return toResult(copyMemory(*Ctx, S, Async, R));
}

CopyRegion linear(uint64_t Dst, Side DstSide, uint64_t Src, Side SrcSide, size_t Bytes) {
  CopyRegion R;
  R.Dst = Dst, R.DstSide = DstSide, R.Src = Src, R.SrcSide = SrcSide, R.Width = Bytes;
  return R;
}

/// The array side of a CUDA_MEMCPY2D/3D: the address of byte X of row Y of slice (or layer) Z, and the array's
/// pitch and rows per slice; the Width x Rows x Depth box must lie inside the array.
CUresult arraySide(CUarray H, size_t X, size_t Y, size_t Z, size_t Width, size_t Rows, size_t Depth, uint64_t &Address,
                   Side &S, uint64_t &Pitch, uint64_t &SliceRows) {
  Array *A = Array::lookup(H);
  if (!A)
    return CUDA_ERROR_INVALID_VALUE;
  Depth = std::max<size_t>(Depth, 1), Rows = std::max<size_t>(Rows, 1);
  if (X > A->rowBytes() || Width > A->rowBytes() - X || Y > A->rows() || Rows > A->rows() - Y || Z > A->slices() ||
      Depth > A->slices() - Z)
    return CUDA_ERROR_INVALID_VALUE;
  S = Side::Device, Pitch = A->rowBytes(), SliceRows = A->rows();
  Address = A->base() + (Z * A->rows() + Y) * A->rowBytes() + X;
  return CUDA_SUCCESS;
}

/// One side of a CUDA_MEMCPY2D/3D: its address (with the X/Y/Z offsets applied) and kind.
CUresult copySide(CUmemorytype Type, const void *Host, CUdeviceptr Device, CUarray Array, size_t X, size_t Y, size_t Z,
                  size_t Pitch, size_t Height, size_t Width, size_t Rows, uint64_t &Address, Side &S) {
  switch (Type) {
  case CU_MEMORYTYPE_HOST:
    S = Side::Host, Address = reinterpret_cast<uint64_t>(Host);
    break;
  case CU_MEMORYTYPE_DEVICE:
    S = Side::Device, Address = Device;
    break;
  case CU_MEMORYTYPE_UNIFIED:
    S = Side::Unified, Address = Device;
    break;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
  if ((Rows > 1 || Y || Z) && X + Width > Pitch)
    return CUDA_ERROR_INVALID_VALUE;
  if (!Address)
    return CUDA_ERROR_INVALID_VALUE;
  Address += (Z * Height + Y) * Pitch + X;
  return CUDA_SUCCESS;
}

CUresult copy2D(const CUDA_MEMCPY2D *C, CUstream H, bool Async) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!C)
    return CUDA_ERROR_INVALID_VALUE;
  CopyRegion R;
  R.Width = C->WidthInBytes, R.Height = C->Height;
  R.SrcPitch = C->srcPitch, R.DstPitch = C->dstPitch;
  uint64_t Unused;
  if (CUresult E = C->srcMemoryType == CU_MEMORYTYPE_ARRAY
                       ? arraySide(C->srcArray, C->srcXInBytes, C->srcY, 0, C->WidthInBytes, C->Height, 1, R.Src,
                                   R.SrcSide, R.SrcPitch, Unused)
                       : copySide(C->srcMemoryType, C->srcHost, C->srcDevice, C->srcArray, C->srcXInBytes, C->srcY, 0,
                                  C->srcPitch, 0, C->WidthInBytes, C->Height, R.Src, R.SrcSide))
    return E;
  if (CUresult E = C->dstMemoryType == CU_MEMORYTYPE_ARRAY
                       ? arraySide(C->dstArray, C->dstXInBytes, C->dstY, 0, C->WidthInBytes, C->Height, 1, R.Dst,
                                   R.DstSide, R.DstPitch, Unused)
                       : copySide(C->dstMemoryType, C->dstHost, C->dstDevice, C->dstArray, C->dstXInBytes, C->dstY, 0,
                                  C->dstPitch, 0, C->WidthInBytes, C->Height, R.Dst, R.DstSide))
    return E;
  return copy(H, Async, R);
}

/// The copy a CUDA_MEMCPY3D describes.
CUresult copyRegion3D(const CUDA_MEMCPY3D *C, CopyRegion &R) {
  if (!C || C->srcLOD || C->dstLOD || C->reserved0 || C->reserved1)
    return CUDA_ERROR_INVALID_VALUE;
  R.Width = C->WidthInBytes, R.Height = C->Height, R.Depth = C->Depth;
  R.SrcPitch = C->srcPitch, R.DstPitch = C->dstPitch;
  R.SrcHeight = C->Depth > 1 || C->srcZ ? C->srcHeight : C->Height;
  R.DstHeight = C->Depth > 1 || C->dstZ ? C->dstHeight : C->Height;
  size_t Rows = C->Height * std::max<size_t>(C->Depth, 1);
  if (CUresult E = C->srcMemoryType == CU_MEMORYTYPE_ARRAY
                       ? arraySide(C->srcArray, C->srcXInBytes, C->srcY, C->srcZ, C->WidthInBytes, C->Height, C->Depth,
                                   R.Src, R.SrcSide, R.SrcPitch, R.SrcHeight)
                       : copySide(C->srcMemoryType, C->srcHost, C->srcDevice, C->srcArray, C->srcXInBytes, C->srcY,
                                  C->srcZ, C->srcPitch, R.SrcHeight, C->WidthInBytes, Rows, R.Src, R.SrcSide))
    return E;
  if (CUresult E = C->dstMemoryType == CU_MEMORYTYPE_ARRAY
                       ? arraySide(C->dstArray, C->dstXInBytes, C->dstY, C->dstZ, C->WidthInBytes, C->Height, C->Depth,
                                   R.Dst, R.DstSide, R.DstPitch, R.DstHeight)
                       : copySide(C->dstMemoryType, C->dstHost, C->dstDevice, C->dstArray, C->dstXInBytes, C->dstY,
                                  C->dstZ, C->dstPitch, R.DstHeight, C->WidthInBytes, Rows, R.Dst, R.DstSide))
    return E;
  return CUDA_SUCCESS;
}

CUresult copy3D(const CUDA_MEMCPY3D *C, CUstream H, bool Async) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  CopyRegion R;
  if (CUresult E = copyRegion3D(C, R))
    return E;
  return copy(H, Async, R);
}

CUresult fill(CUstream H, bool Async, CUdeviceptr Dst, size_t Pitch, uint32_t Value, unsigned Bytes, size_t Width,
              size_t Height) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(H, Ctx, S))
    return R;
  return toResult(fillMemory(*Ctx, S, Async, Dst, Pitch, Value, Bytes, Width, Height));
}

CUresult hostAlloc(void **Out, size_t Bytes, unsigned Flags) {
  if (!Out || !Bytes || (Flags & ~0x7u))
    return CUDA_ERROR_INVALID_VALUE;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  if (Driver::get().stickyError() != Status::Success)
    return sticky();
  if (llvm::Error E = checkUnsafeCall()) // page-locked host memory is one of the capture's unsafe calls
    return toResult(std::move(E));
  auto P = DeviceMemory::get().allocate(Bytes, MemoryKind::Host, Ctx, Flags);
  if (!P)
    return toResult(P.takeError());
  *Out = reinterpret_cast<void *>(*P);
  return CUDA_SUCCESS;
}

// ---- pointer attributes ----
/// The size of one attribute's value, for cuPointerGetAttributes on unknown pointers.
size_t pointerAttributeSize(CUpointer_attribute A) {
  switch (A) {
  case CU_POINTER_ATTRIBUTE_CONTEXT:
  case CU_POINTER_ATTRIBUTE_HOST_POINTER:
  case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
  case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
    return sizeof(void *);
  case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
  case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    return sizeof(CUdeviceptr);
  case CU_POINTER_ATTRIBUTE_BUFFER_ID:
  case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
  case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
    return sizeof(unsigned long long);
  case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
  case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
    return sizeof(size_t);
  case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
  case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
    return sizeof(unsigned int);
  default:
    return sizeof(int);
  }
}

template <class T> void put(void *Data, T V) { std::memcpy(Data, &V, sizeof V); }

CUresult pointerAttribute(void *Data, CUpointer_attribute Attr, CUdeviceptr Ptr) {
  if (!Data)
    return CUDA_ERROR_INVALID_VALUE;
  auto A = DeviceMemory::get().find(Ptr);
  if (!A)
    return CUDA_ERROR_INVALID_VALUE;
  bool Host = A->isHost();
  switch (Attr) {
  case CU_POINTER_ATTRIBUTE_CONTEXT:
    put(Data, wrap(A->Owner));
    break;
  case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    put<unsigned>(Data, Host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE);
    break;
  case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    put<CUdeviceptr>(Data, Ptr);
    break;
  case CU_POINTER_ATTRIBUTE_HOST_POINTER:
    if (!Host && A->Kind != MemoryKind::Managed)
      return CUDA_ERROR_INVALID_VALUE;
    put(Data, reinterpret_cast<void *>(Ptr));
    break;
  case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
    return CUDA_ERROR_NOT_SUPPORTED;
  case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    put<int>(Data, 1);
    break;
  case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    put<unsigned long long>(Data, A->BufferId);
    break;
  case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    put<int>(Data, A->Kind == MemoryKind::Managed);
    break;
  case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
    put<int>(Data, 0);
    break;
  case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    put<int>(Data, 0);
    break;
  case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    put<CUdeviceptr>(Data, A->Base);
    break;
  case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    put<size_t>(Data, A->Size);
    break;
  case CU_POINTER_ATTRIBUTE_MAPPED:
    put<int>(Data, 1);
    break;
  case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
    put<unsigned long long>(Data, 0);
    break;
  case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    put<int>(Data, 0);
    break;
  case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
    put<unsigned>(Data, 3);
    break; // read and write
  case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
    put<void *>(Data, A->Pool);
    break;
  case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
    put<size_t>(Data, A->Size);
    break;
  case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
    put(Data, reinterpret_cast<void *>(A->Base));
    break;
  case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
    put<unsigned long long>(Data, A->BufferId);
    break;
  case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
    put<int>(Data, 0);
    break;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

// ---- launches ----
/// Copies a launch's arguments (kernelParams, or the `extra` buffer) into Out. Runs under the fault guard, so
/// nothing may escape it: an exception would leave the guard armed.
CUresult packLaunchParams(const Function &Fn, void **KernelParams, void **Extra, std::vector<char> &Out) noexcept {
  try {
    llvm::Expected<std::vector<char>> Params = std::vector<char>();
    if (Extra) {
      const void *Buffer = nullptr;
      size_t Size = 0;
      for (size_t I = 0; Extra[I] != CU_LAUNCH_PARAM_END; I += 2) {
        if (Extra[I] == CU_LAUNCH_PARAM_BUFFER_POINTER)
          Buffer = Extra[I + 1];
        else if (Extra[I] == CU_LAUNCH_PARAM_BUFFER_SIZE && Extra[I + 1])
          Size = *static_cast<const size_t *>(Extra[I + 1]);
        else
          return CUDA_ERROR_INVALID_VALUE;
      }
      Params = Fn.packParams(Buffer, Size);
    } else {
      Params = Fn.packParams(KernelParams);
    }
    if (!Params)
      return toResult(Params.takeError());
    Out = std::move(*Params);
    return CUDA_SUCCESS;
  } catch (const std::bad_alloc &) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
}

/// The calling thread's stack, [Low, High): mapped from the stack pointer up.
struct StackRange {
  uintptr_t Low = 0, High = 0;
};

const StackRange &threadStack() {
  thread_local StackRange R = [] {
    StackRange S;
    pthread_attr_t A;
    void *Addr = nullptr;
    size_t Size = 0;
    if (pthread_getattr_np(pthread_self(), &A) == 0) {
      if (pthread_attr_getstack(&A, &Addr, &Size) == 0)
        S = {reinterpret_cast<uintptr_t>(Addr), reinterpret_cast<uintptr_t>(Addr) + Size};
      pthread_attr_destroy(&A);
    }
    return S;
  }();
  return R;
}

/// Whether the kernelParams array and every argument it points to lie on this thread's stack above the
/// current frame (the usual case: arrays of locals, and nvcc's launch stubs), which is mapped: copying them
/// cannot fault, so no guard is needed. The guard checks the signal handlers and saves the signal mask, five
/// system calls per launch.
bool argumentsOnThisStack(const Function &Fn, void **KernelParams) {
  const StackRange &S = threadStack();
  uintptr_t Low = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (Low < S.Low || Low >= S.High)
    return false; // running on a stack of the program's own (a fiber's)
  auto OnStack = [&](const void *P, uint64_t Bytes) {
    uintptr_t A = reinterpret_cast<uintptr_t>(P);
    return A >= Low && A < S.High && Bytes <= S.High - A;
  };
  const auto &Params = Fn.info().Params;
  if (Params.empty())
    return true;
  if (!KernelParams || !OnStack(KernelParams, Params.size() * sizeof(void *)))
    return false;
  for (size_t I = 0; I < Params.size(); ++I)
    if (!OnStack(KernelParams[I], Params[I].Size))
      return false;
  return true;
}

CUresult launchKernel(CUfunction F, unsigned Gx, unsigned Gy, unsigned Gz, unsigned Bx, unsigned By, unsigned Bz,
                      unsigned SharedBytes, CUstream H, void **KernelParams, void **Extra,
                      LaunchKind Kind = LaunchKind::Normal, const codegen::Dim3 *Cluster = nullptr) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Function *Fn = unwrap(F);
  if (!Fn)
    return CUDA_ERROR_INVALID_HANDLE;
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(H, Ctx, S))
    return R;
  if (Driver::get().stickyError() != Status::Success)
    return sticky();
  if (KernelParams && Extra)
    return CUDA_ERROR_INVALID_VALUE;
  // The arrays and what they point to are the caller's: a bogus pointer faults while they are copied, which
  // is an invalid value (the copy is abandoned; what it allocated leaks), not the end of the process.
  CUresult R = CUDA_SUCCESS;
  std::vector<char> Params;
  if (!Extra && argumentsOnThisStack(*Fn, KernelParams))
    R = packLaunchParams(*Fn, KernelParams, Extra, Params);
  else if (codegen::runWithFaultGuard([&] { R = packLaunchParams(*Fn, KernelParams, Extra, Params); }))
    return CUDA_ERROR_INVALID_VALUE;
  if (R != CUDA_SUCCESS)
    return R;
  codegen::LaunchConfig Config;
  Config.Grid = {Gx, Gy, Gz};
  Config.Block = {Bx, By, Bz};
  Config.DynamicSharedBytes = SharedBytes;
  if (Cluster) {
    Config.Cluster = *Cluster;
    Config.ExplicitCluster = true;
  }
  return toResult(launch(*Ctx, S, *Fn, Config, std::move(Params), Kind));
}

// ---- entry point lookup ----
struct ApiEntry {
  const char *Name, *Symbol;
  int Version;
  void *Fn;
};

} // namespace

// =====================================================================================================
// Errors, initialisation, versions
// =====================================================================================================

PTXFORGE_API CUresult cuGetErrorString(CUresult error, const char **pStr) {
  if (!pStr)
    return CUDA_ERROR_INVALID_VALUE;
  const ErrorText *T = findError(error);
  *pStr = T ? T->Text : nullptr;
  return T ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

PTXFORGE_API CUresult cuGetErrorName(CUresult error, const char **pStr) {
  if (!pStr)
    return CUDA_ERROR_INVALID_VALUE;
  const ErrorText *T = findError(error);
  *pStr = T ? T->Name : nullptr;
  return T ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

PTXFORGE_API CUresult cuInit(unsigned int Flags) {
  if (Flags)
    return CUDA_ERROR_INVALID_VALUE;
  // Kernels' device-side cudaDeviceGetAttribute answers as cuDeviceGetAttribute does.
  DeviceAttributeQuery = [](int A) { return deviceAttribute(static_cast<CUdevice_attribute>(A), deviceProperties()); };
  return boundary([&] { return toResult(Driver::get().initialize()); });
}

PTXFORGE_API CUresult cuDriverGetVersion(int *driverVersion) {
  if (!driverVersion)
    return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = CUDA_VERSION;
  return CUDA_SUCCESS;
}

// =====================================================================================================
// Devices
// =====================================================================================================

PTXFORGE_API CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  if (CUresult R = checkDeviceQuery(ordinal, {device}))
    return R;
  *device = ordinal;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuDeviceGetCount(int *count) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!count)
    return CUDA_ERROR_INVALID_VALUE;
  *count = deviceCount();
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!name || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (!validDevice(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  const std::string &N = deviceProperties(dev).Name;
  size_t Bytes = std::min(N.size(), size_t(len) - 1);
  std::memcpy(name, N.data(), Bytes);
  name[Bytes] = 0;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev) {
  if (CUresult R = checkDeviceQuery(dev, {uuid}))
    return R;
  std::memcpy(uuid->bytes, deviceProperties(dev).Uuid.data(), 16);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) { return cuDeviceGetUuid_v2(uuid, dev); }

PTXFORGE_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
  if (CUresult R = checkDeviceQuery(dev, {bytes}))
    return R;
  *bytes = deviceProperties(dev).TotalMemory;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) {
  if (CUresult R = checkDeviceQuery(dev, {pi}))
    return R;
  std::optional<int> V = deviceAttribute(attrib, deviceProperties(dev));
  if (!V)
    return CUDA_ERROR_INVALID_VALUE;
  *pi = *V;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev) {
  if (CUresult R = checkDeviceQuery(dev, {major, minor}))
    return R;
  *major = static_cast<int>(deviceProperties(dev).CcMajor);
  *minor = static_cast<int>(deviceProperties(dev).CcMinor);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuDeviceGetProperties(CUdevprop *prop, CUdevice dev) {
  if (CUresult R = checkDeviceQuery(dev, {prop}))
    return R;
  const DeviceProperties &P = deviceProperties(dev);
  prop->maxThreadsPerBlock = static_cast<int>(P.MaxThreadsPerBlock);
  for (int I = 0; I < 3; ++I) {
    prop->maxThreadsDim[I] = static_cast<int>(P.MaxBlockDim[I]);
    prop->maxGridSize[I] = static_cast<int>(P.MaxGridDim[I]);
  }
  prop->sharedMemPerBlock = static_cast<int>(P.SharedMemoryPerBlock);
  prop->totalConstantMemory = static_cast<int>(P.TotalConstantMemory);
  prop->SIMDWidth = static_cast<int>(P.WarpSize);
  prop->memPitch = INT32_MAX;
  prop->regsPerBlock = static_cast<int>(P.RegistersPerBlock);
  prop->clockRate = static_cast<int>(P.ClockRateKHz);
  prop->textureAlign = 512;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!pciBusId || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (!validDevice(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  const DeviceProperties &P = deviceProperties(dev);
  std::snprintf(pciBusId, size_t(len), "%08X:%02X:%02X.0", P.PciDomain, P.PciBus, P.PciDevice);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!dev || !pciBusId)
    return CUDA_ERROR_INVALID_VALUE;
  unsigned Domain = 0, Bus = 0, Device = 0, Fn = 0;
  if (std::sscanf(pciBusId, "%x:%x:%x.%x", &Domain, &Bus, &Device, &Fn) == 4 ||
      (Domain = 0, std::sscanf(pciBusId, "%x:%x.%x", &Bus, &Device, &Fn) == 3)) {
    for (int D = 0; D < deviceCount(); ++D) {
      const DeviceProperties &P = deviceProperties(D);
      if (Domain == P.PciDomain && Bus == P.PciBus && Device == P.PciDevice) {
        *dev = D;
        return CUDA_SUCCESS;
      }
    }
    return CUDA_ERROR_INVALID_DEVICE;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

PTXFORGE_API CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!canAccessPeer)
    return CUDA_ERROR_INVALID_VALUE;
  if (!validDevice(dev) || !validDevice(peerDev))
    return CUDA_ERROR_INVALID_DEVICE;
  *canAccessPeer = dev != peerDev; // every device is the same host memory; a device is not its own peer
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                                              CUdevice dstDevice) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!value)
    return CUDA_ERROR_INVALID_VALUE;
  if (!validDevice(srcDevice) || !validDevice(dstDevice) || srcDevice == dstDevice)
    return CUDA_ERROR_INVALID_DEVICE;
  switch (attrib) {
  case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK:
    *value = 0; // the same memory: no link is better than another
    return CUDA_SUCCESS;
  case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
  case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
  case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED:
    *value = 1;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

PTXFORGE_API CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  Context *Peer = unwrap(peerContext);
  if (!Peer || Peer->isDestroyed())
    return CUDA_ERROR_INVALID_CONTEXT;
  if (Flags)
    return CUDA_ERROR_INVALID_VALUE;
  if (Peer->device() == Ctx->device())
    return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED; // cuDeviceCanAccessPeer says no for a device and itself
  return Ctx->enablePeer(*Peer) ? CUDA_SUCCESS : CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
}

PTXFORGE_API CUresult cuCtxDisablePeerAccess(CUcontext peerContext) {
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  Context *Peer = unwrap(peerContext);
  if (!Peer || Peer->isDestroyed())
    return CUDA_ERROR_INVALID_CONTEXT;
  return Ctx->disablePeer(*Peer) ? CUDA_SUCCESS : CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
}

// =====================================================================================================
// Primary contexts
// =====================================================================================================

PTXFORGE_API CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
  if (CUresult R = checkDeviceQuery(dev, {pctx}))
    return R;
  return boundary([&] {
    auto C = Driver::get().retainPrimary(dev);
    if (!C)
      return toResult(C.takeError());
    *pctx = wrap(*C);
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!validDevice(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  return boundary([&] { return toResult(Driver::get().releasePrimary(dev)); });
}

PTXFORGE_API CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }

PTXFORGE_API CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!validDevice(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  if (flags & ~unsigned(CU_CTX_FLAGS_MASK))
    return CUDA_ERROR_INVALID_VALUE;
  return toResult(Driver::get().setPrimaryFlags(dev, flags));
}

PTXFORGE_API CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
  return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

PTXFORGE_API CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active) {
  if (CUresult R = checkDeviceQuery(dev, {flags, active}))
    return R;
  Driver::PrimaryState S = Driver::get().primaryState(dev);
  *flags = S.Flags;
  *active = S.Active ? 1 : 0;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!validDevice(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  return boundary([&] {
    Driver::get().resetPrimary(dev);
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuDevicePrimaryCtxReset(CUdevice dev) { return cuDevicePrimaryCtxReset_v2(dev); }

// =====================================================================================================
// Contexts
// =====================================================================================================

PTXFORGE_API CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
                                     CUdevice dev) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!pctx || (flags & ~unsigned(CU_CTX_FLAGS_MASK)))
    return CUDA_ERROR_INVALID_VALUE;
  if (!validDevice(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  if (ctxCreateParams && ctxCreateParams->cigParams)
    return CUDA_ERROR_NOT_SUPPORTED; // no graphics interop
  return boundary([&] {
    auto C = Driver::get().createContext(dev, flags);
    if (!C)
      return toResult(C.takeError());
    *pctx = wrap(*C);
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev) {
  return cuCtxCreate_v4(pctx, nullptr, flags, dev);
}

PTXFORGE_API CUresult cuCtxDestroy_v2(CUcontext ctx) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!ctx)
    return CUDA_ERROR_INVALID_VALUE;
  Context *C = unwrap(ctx);
  if (!C)
    return CUDA_ERROR_INVALID_CONTEXT;
  return boundary([&] { return toResult(Driver::get().destroyContext(C)); });
}

PTXFORGE_API CUresult cuCtxDestroy(CUcontext ctx) { return cuCtxDestroy_v2(ctx); }

PTXFORGE_API CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!ctx)
    return CUDA_ERROR_INVALID_VALUE;
  Context *C = unwrap(ctx);
  if (!C || C->isDestroyed())
    return CUDA_ERROR_INVALID_CONTEXT;
  ContextStack::push(C);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuCtxPushCurrent(CUcontext ctx) { return cuCtxPushCurrent_v2(ctx); }

PTXFORGE_API CUresult cuCtxPopCurrent_v2(CUcontext *pctx) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Context *C = ContextStack::pop();
  if (!C)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (pctx)
    *pctx = wrap(C);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuCtxPopCurrent(CUcontext *pctx) { return cuCtxPopCurrent_v2(pctx); }

PTXFORGE_API CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Context *C = nullptr;
  if (ctx) {
    // An inactive primary context's handle stays valid and may be made current (NVIDIA's runtime does so with
    // the handle the export table gives it, before it retains the context); work on it fails until then.
    C = unwrap(ctx);
    if (!C || (C->isDestroyed() && !C->isPrimary()))
      return CUDA_ERROR_INVALID_CONTEXT;
  }
  ContextStack::setCurrent(C);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuCtxGetCurrent(CUcontext *pctx) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!pctx)
    return CUDA_ERROR_INVALID_VALUE;
  *pctx = wrap(ContextStack::current());
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuCtxGetDevice(CUdevice *device) {
  if (!device)
    return initialized() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  *device = Ctx->device();
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuCtxGetFlags(unsigned int *flags) {
  if (!flags)
    return initialized() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  *flags = Ctx->flags();
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuCtxSetFlags(unsigned int flags) {
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  if (flags & ~unsigned(CU_CTX_FLAGS_MASK))
    return CUDA_ERROR_INVALID_VALUE;
  Ctx->setFlags(flags);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!ctxId)
    return CUDA_ERROR_INVALID_VALUE;
  Context *C = nullptr;
  if (ctx) {
    C = unwrap(ctx);
    if (!C)
      return CUDA_ERROR_INVALID_CONTEXT;
  } else if (CUresult R = current(C)) {
    return R;
  }
  *ctxId = C->id();
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuCtxSynchronize(void) {
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  return boundary([&] {
    if (llvm::Error E = checkSynchronize(*Ctx, nullptr, /*WholeContext=*/true))
      return toResult(std::move(E));
    Ctx->waitIdle();
    return sticky();
  });
}

namespace {
std::optional<Limit> toLimit(CUlimit L) {
  switch (L) {
  case CU_LIMIT_STACK_SIZE:
    return Limit::StackSize;
  case CU_LIMIT_PRINTF_FIFO_SIZE:
    return Limit::PrintfFifoSize;
  case CU_LIMIT_MALLOC_HEAP_SIZE:
    return Limit::MallocHeapSize;
  case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
    return Limit::DevRuntimeSyncDepth;
  case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT:
    return Limit::DevRuntimePendingLaunchCount;
  case CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
    return Limit::MaxL2FetchGranularity;
  case CU_LIMIT_PERSISTING_L2_CACHE_SIZE:
    return Limit::PersistingL2CacheSize;
  default:
    return std::nullopt;
  }
}
} // namespace

PTXFORGE_API CUresult cuCtxSetLimit(CUlimit limit, size_t value) {
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  if (limit == CU_LIMIT_SHMEM_SIZE || limit == CU_LIMIT_CIG_ENABLED || limit == CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED)
    return CUDA_ERROR_UNSUPPORTED_LIMIT;
  std::optional<Limit> L = toLimit(limit);
  if (!L)
    return CUDA_ERROR_INVALID_VALUE;
  Ctx->setLimit(*L, value);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit) {
  if (!pvalue)
    return initialized() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  if (limit == CU_LIMIT_CIG_ENABLED) {
    // No context is a CUDA-in-Graphics one here; cuBLASLt asks at its initialisation and gives up on an error.
    *pvalue = 0;
    return CUDA_SUCCESS;
  }
  if (limit == CU_LIMIT_SHMEM_SIZE || limit == CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED)
    return CUDA_ERROR_UNSUPPORTED_LIMIT;
  std::optional<Limit> L = toLimit(limit);
  if (!L)
    return CUDA_ERROR_INVALID_VALUE;
  *pvalue = Ctx->limit(*L);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuCtxGetCacheConfig(CUfunc_cache *pconfig) {
  if (!pconfig)
    return initialized() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  *pconfig = static_cast<CUfunc_cache>(Ctx->cacheConfig());
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuCtxSetCacheConfig(CUfunc_cache config) {
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  if (unsigned(config) > CU_FUNC_CACHE_PREFER_EQUAL)
    return CUDA_ERROR_INVALID_VALUE;
  Ctx->setCacheConfig(config);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!version)
    return CUDA_ERROR_INVALID_VALUE;
  if (ctx ? !unwrap(ctx) : !ContextStack::current())
    return CUDA_ERROR_INVALID_CONTEXT;
  *version = 3020; // what NVIDIA's driver reports for every context since CUDA 3.2
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority) {
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  if (leastPriority)
    *leastPriority = 0;
  if (greatestPriority)
    *greatestPriority = -5;
  return CUDA_SUCCESS;
}

// =====================================================================================================
// Modules and functions
// =====================================================================================================

PTXFORGE_API CUresult cuModuleLoad(CUmodule *module, const char *fname) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!module || !fname)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    ModuleSource Source;
    Source.K = ModuleSource::Kind::File;
    Source.Path = fname;
    JitOptionList Opts;
    return loadModule(module, Source, Opts);
  });
}

PTXFORGE_API CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                         CUjit_option *options, void **optionValues) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!module || !image)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    JitOptionList Opts;
    if (CUresult R = Opts.parse(numOptions, options, optionValues))
      return R;
    ModuleSource Source;
    Source.Image = image;
    return loadModule(module, Source, Opts);
  });
}

PTXFORGE_API CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  return cuModuleLoadDataEx(module, image, 0, nullptr, nullptr);
}

PTXFORGE_API CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin) {
  return cuModuleLoadDataEx(module, fatCubin, 0, nullptr, nullptr);
}

PTXFORGE_API CUresult cuModuleUnload(CUmodule hmod) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Module *M = unwrap(hmod);
  if (!M)
    return CUDA_ERROR_INVALID_HANDLE;
  return boundary([&] {
    M->context().unloadModule(M);
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!mode)
    return CUDA_ERROR_INVALID_VALUE;
  *mode = moduleLoadingMode() == ModuleLoading::Eager ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!hfunc || !name)
    return CUDA_ERROR_INVALID_VALUE;
  Module *M = unwrap(hmod);
  if (!M)
    return CUDA_ERROR_INVALID_HANDLE;
  auto F = M->loadFunction(name); // a lazily loaded module compiles the kernel here
  if (!F)
    return toResult(F.takeError());
  *hfunc = wrap(*F);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule mod) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!count)
    return CUDA_ERROR_INVALID_VALUE;
  Module *M = unwrap(mod);
  if (!M)
    return CUDA_ERROR_INVALID_HANDLE;
  *count = static_cast<unsigned>(M->functionCount());
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuModuleEnumerateFunctions(CUfunction *functions, unsigned int numFunctions, CUmodule mod) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!functions && numFunctions)
    return CUDA_ERROR_INVALID_VALUE;
  Module *M = unwrap(mod);
  if (!M)
    return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult R = toResult(M->materialize()))
    return R;
  if (numFunctions > M->functions().size())
    return CUDA_ERROR_INVALID_VALUE;
  for (unsigned I = 0; I < numFunctions; ++I)
    functions[I] = wrap(M->functions()[I].get());
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!name)
    return CUDA_ERROR_INVALID_VALUE;
  Module *M = unwrap(hmod);
  if (!M)
    return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult R = toResult(M->materialize()))
    return R;
  std::optional<Module::Global> G = M->global(name);
  if (!G)
    return CUDA_ERROR_NOT_FOUND;
  if (dptr)
    *dptr = G->Address;
  if (bytes)
    *bytes = G->Size;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!pi)
    return CUDA_ERROR_INVALID_VALUE;
  Function *F = unwrap(hfunc);
  if (!F)
    return CUDA_ERROR_INVALID_HANDLE;
  switch (attrib) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *pi = int(F->maxThreadsPerBlock());
    break;
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
    *pi = int(F->staticSharedBytes());
    break;
  case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
    *pi = int(F->constBytes());
    break;
  case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
    *pi = int(F->localBytes());
    break;
  case CU_FUNC_ATTRIBUTE_NUM_REGS:
    *pi = int(F->numRegisters());
    break;
  case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    *pi = int(F->module().ptxTarget(F->name()));
    break;
  case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
    *pi = int(F->module().binaryVersion());
    break;
  case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
    *pi = 0;
    break;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    *pi = int(F->maxDynamicSharedBytes());
    break;
  case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
    *pi = F->preferredCarveout();
    break;
  case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
    *pi = F->info().ExplicitCluster;
    break;
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
    *pi = int(F->requiredClusterDim(attrib - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH));
    break;
  case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
    *pi = F->nonPortableClusterSizeAllowed();
    break;
  case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    *pi = F->clusterSchedulingPolicy();
    break;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Function *F = unwrap(hfunc);
  if (!F)
    return CUDA_ERROR_INVALID_HANDLE;
  switch (attrib) {
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    return toResult(F->setMaxDynamicSharedBytes(value));
  case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
    return toResult(F->setPreferredCarveout(value));
  case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
    return toResult(F->setNonPortableClusterSizeAllowed(value));
  case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    return toResult(F->setClusterSchedulingPolicy(value));
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
    return toResult(F->setRequiredClusterDim(attrib - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, value));
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

PTXFORGE_API CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Function *F = unwrap(hfunc);
  if (!F)
    return CUDA_ERROR_INVALID_HANDLE;
  if (unsigned(config) > CU_FUNC_CACHE_PREFER_EQUAL)
    return CUDA_ERROR_INVALID_VALUE;
  F->setCacheConfig(config);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuFuncGetModule(CUmodule *hmod, CUfunction hfunc) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!hmod)
    return CUDA_ERROR_INVALID_VALUE;
  Function *F = unwrap(hfunc);
  if (!F)
    return CUDA_ERROR_INVALID_HANDLE;
  *hmod = wrap(&F->module());
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuFuncGetName(const char **name, CUfunction hfunc) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!name)
    return CUDA_ERROR_INVALID_VALUE;
  Function *F = unwrap(hfunc);
  if (!F)
    return CUDA_ERROR_INVALID_HANDLE;
  *name = F->info().Name.c_str();
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Function *F = unwrap(func);
  if (!F)
    return CUDA_ERROR_INVALID_HANDLE;
  if (paramIndex >= F->info().Params.size())
    return CUDA_ERROR_INVALID_VALUE;
  if (paramOffset)
    *paramOffset = F->info().Params[paramIndex].Offset;
  if (paramSize)
    *paramSize = F->info().Params[paramIndex].Size;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuFuncIsLoaded(CUfunctionLoadingState *state, CUfunction function) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!state)
    return CUDA_ERROR_INVALID_VALUE;
  if (!unwrap(function))
    return CUDA_ERROR_INVALID_HANDLE;
  *state = CU_FUNCTION_LOADING_STATE_LOADED; // modules load eagerly
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuFuncLoad(CUfunction function) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  return unwrap(function) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

// ---- libraries (context-independent modules) and their kernels ----

namespace {
Library *unwrap(CUlibrary H) { return Library::registry().contains(H) ? reinterpret_cast<Library *>(H) : nullptr; }
/// A CUkernel is its module's Function: NVIDIA's driver also takes a kernel where a function is expected.
Function *unwrap(CUkernel H) { return unwrap(reinterpret_cast<CUfunction>(H)); }

/// Whether the library options say the image outlives the library (then it may be read at the first use).
CUresult imagePreserved(unsigned N, const CUlibraryOption *Keys, void *const *Values, bool &Preserved) {
  Preserved = false;
  if (N && !Keys)
    return CUDA_ERROR_INVALID_VALUE;
  for (unsigned I = 0; I < N; ++I) {
    // cuBLASLt passes CU_LIBRARY_BINARY_IS_PRESERVED without a value array, which NVIDIA's driver accepts: no
    // value is a null one (not preserved: the image is read at once).
    if (Keys[I] == CU_LIBRARY_BINARY_IS_PRESERVED)
      Preserved = Values && Values[I] != nullptr;
    else if (Keys[I] != CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE)
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult loadLibrary(CUlibrary *Out, ModuleSource Source, unsigned NumJit, CUjit_option *JitKeys, void **JitValues,
                     bool LoadNow) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  JitOptionList Opts;
  if (CUresult R = Opts.parse(NumJit, JitKeys, JitValues))
    return R;
  auto L = std::make_unique<Library>(std::move(Source), Opts.Options);
  if (LoadNow) {
    JitLogs Logs;
    auto M = L->module(Logs);
    Opts.report(Logs);
    if (!M)
      return toResult(M.takeError());
  }
  Library *P = L.release();
  Library::registry().add(P);
  *Out = reinterpret_cast<CUlibrary>(P);
  return CUDA_SUCCESS;
}

/// The library's module, loaded now if it was not.
CUresult libraryModule(CUlibrary H, Module *&M) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Library *L = unwrap(H);
  if (!L)
    return CUDA_ERROR_INVALID_HANDLE;
  JitLogs Logs;
  auto Loaded = L->module(Logs);
  printErrorLog(Logs.Error);
  if (!Loaded) {
    Status S = takeStatus(Loaded.takeError());
    if (verbose())
      std::fprintf(stderr, "ptxforge: loading a library's module failed (CUresult %d)\n", int(toResult(S)));
    return toResult(S);
  }
  M = *Loaded;
  return CUDA_SUCCESS;
}
} // namespace

PTXFORGE_API CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                        void **jitOptionsValues, unsigned int numJitOptions,
                                        CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                        unsigned int numLibraryOptions) {
  if (!library || !code)
    return CUDA_ERROR_INVALID_VALUE;
  bool Preserved;
  if (CUresult R = imagePreserved(numLibraryOptions, libraryOptions, libraryOptionValues, Preserved))
    return R;
  return boundary([&] {
    return loadLibrary(library, Library::imageSource(code), numJitOptions, jitOptions, jitOptionsValues, !Preserved);
  });
}

PTXFORGE_API CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                                            void **jitOptionsValues, unsigned int numJitOptions,
                                            CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                            unsigned int numLibraryOptions) {
  if (!library || !fileName)
    return CUDA_ERROR_INVALID_VALUE;
  bool Preserved;
  if (CUresult R = imagePreserved(numLibraryOptions, libraryOptions, libraryOptionValues, Preserved))
    return R;
  return boundary([&] {
    ModuleSource Source;
    Source.K = ModuleSource::Kind::File;
    Source.Path = fileName;
    return loadLibrary(library, Source, numJitOptions, jitOptions, jitOptionsValues, true);
  });
}

PTXFORGE_API CUresult cuLibraryUnload(CUlibrary library) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Library *L = unwrap(library);
  if (!L)
    return CUDA_ERROR_INVALID_HANDLE;
  return boundary([&] {
    Library::registry().remove(L);
    L->unload();
    delete L;
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library) {
  if (!pMod)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    Module *M;
    if (CUresult R = libraryModule(library, M))
      return R;
    *pMod = wrap(M);
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name) {
  if (!pKernel || !name)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    Module *M;
    if (CUresult R = libraryModule(library, M))
      return R;
    // The kernel compiles at its first launch, not here (NVIDIA's lazy loading does the same).
    auto F = M->findFunction(name);
    if (!F) {
      if (verbose())
        std::fprintf(stderr, "ptxforge: cuLibraryGetKernel: %s\n", llvm::toString(F.takeError()).c_str());
      return CUDA_ERROR_NOT_FOUND;
    }
    *pKernel = reinterpret_cast<CUkernel>(*F);
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib) {
  if (!count)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    Module *M;
    if (CUresult R = libraryModule(lib, M))
      return R;
    return cuModuleGetFunctionCount(count, wrap(M));
  });
}

PTXFORGE_API CUresult cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels, CUlibrary lib) {
  if (!kernels)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    Module *M;
    if (CUresult R = libraryModule(lib, M))
      return R;
    return cuModuleEnumerateFunctions(reinterpret_cast<CUfunction *>(kernels), numKernels, wrap(M));
  });
}

PTXFORGE_API CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name) {
  return boundary([&] {
    Module *M;
    if (CUresult R = libraryModule(library, M))
      return R;
    return cuModuleGetGlobal_v2(dptr, bytes, wrap(M), name);
  });
}

PTXFORGE_API CUresult cuLibraryGetManaged(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name) {
  return cuLibraryGetGlobal(dptr, bytes, library, name); // managed variables live in unified memory here
}

PTXFORGE_API CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!pFunc)
    return CUDA_ERROR_INVALID_VALUE;
  Function *F = unwrap(kernel);
  if (!F)
    return CUDA_ERROR_INVALID_HANDLE;
  *pFunc = wrap(F);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev) {
  if (!validDevice(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  return cuFuncGetAttribute(pi, attrib, reinterpret_cast<CUfunction>(kernel));
}

PTXFORGE_API CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev) {
  if (!validDevice(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  return cuFuncSetAttribute(reinterpret_cast<CUfunction>(kernel), attrib, val);
}

PTXFORGE_API CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev) {
  if (!validDevice(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  return cuFuncSetCacheConfig(reinterpret_cast<CUfunction>(kernel), config);
}

PTXFORGE_API CUresult cuKernelGetName(const char **name, CUkernel hfunc) {
  return cuFuncGetName(name, reinterpret_cast<CUfunction>(hfunc));
}

PTXFORGE_API CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize) {
  return cuFuncGetParamInfo(reinterpret_cast<CUfunction>(kernel), paramIndex, paramOffset, paramSize);
}

// ---- JIT linking ----

namespace {
/// A link's options and where its logs go, owned next to the core's Linker.
struct LinkSession {
  JitOptionList Opts;
  std::unique_ptr<Linker> L;
  JitLogs Logs;
};
std::mutex LinkLock;
std::vector<std::unique_ptr<LinkSession>> LinkSessions;
LinkSession *sessionOf(CUlinkState H) {
  Linker *L = unwrap(H);
  if (!L)
    return nullptr;
  std::scoped_lock G(LinkLock);
  for (auto &S : LinkSessions)
    if (S->L.get() == L)
      return S.get();
  return nullptr;
}

CUresult addLinkInput(CUlinkState state, CUjitInputType type, const ModuleSource &Source, llvm::StringRef Text,
                      const char *Name) {
  LinkSession *S = sessionOf(state);
  if (!S)
    return CUDA_ERROR_INVALID_HANDLE;
  llvm::Error E = llvm::Error::success();
  switch (type) {
  case CU_JIT_INPUT_PTX:
    if (Source.K == ModuleSource::Kind::File) {
      JitLogs Logs;
      auto Sel = selectPtx(Source, S->L->options().TargetCc.value_or(deviceProperties().computeCapability()), Logs);
      E = Sel ? S->L->addPtx(Sel->Text, Sel->Name, S->Logs) : Sel.takeError();
    } else {
      E = S->L->addPtx(Text, Name ? Name : "<ptx input>", S->Logs);
    }
    break;
  case CU_JIT_INPUT_FATBINARY:
    E = S->L->addImage(Source, Name ? Name : "", S->Logs);
    break;
  case CU_JIT_INPUT_CUBIN:
    E = S->L->addCubin(Source, Text, S->Logs);
    break;
  default:
    S->Logs.Error += "ptxforge: only PTX and fatbinary link inputs are supported\n";
    E = makeError(Status::NotSupported, "link input type");
    break;
  }
  CUresult R = toResult(std::move(E));
  S->Opts.report(S->Logs);
  return R;
}
} // namespace

PTXFORGE_API CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options, void **optionValues,
                                      CUlinkState *stateOut) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!stateOut)
    return CUDA_ERROR_INVALID_VALUE;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  return boundary([&] {
    auto S = std::make_unique<LinkSession>();
    if (CUresult R = S->Opts.parse(numOptions, options, optionValues))
      return R;
    if (!S->Opts.Options.TargetCc) // the inputs are chosen for the current context's device
      S->Opts.Options.TargetCc = deviceProperties(Ctx->device()).computeCapability();
    S->L = std::make_unique<Linker>(S->Opts.Options);
    Linker *L = S->L.get();
    {
      std::scoped_lock G(LinkLock);
      LinkSessions.push_back(std::move(S));
    }
    Linkers.add(L);
    *stateOut = wrap(L);
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuLinkCreate(unsigned int numOptions, CUjit_option *options, void **optionValues,
                                   CUlinkState *stateOut) {
  return cuLinkCreate_v2(numOptions, options, optionValues, stateOut);
}

PTXFORGE_API CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size,
                                       const char *name, unsigned int numOptions, CUjit_option *options,
                                       void **optionValues) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!data || !size)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    ModuleSource Source;
    Source.Image = data;
    return addLinkInput(state, type, Source, llvm::StringRef(static_cast<const char *>(data), size), name);
  });
}

PTXFORGE_API CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                                    unsigned int numOptions, CUjit_option *options, void **optionValues) {
  return cuLinkAddData_v2(state, type, data, size, name, numOptions, options, optionValues);
}

PTXFORGE_API CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path,
                                       unsigned int numOptions, CUjit_option *options, void **optionValues) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!path)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    ModuleSource Source;
    Source.K = ModuleSource::Kind::File;
    Source.Path = path;
    return addLinkInput(state, type, Source, "", path);
  });
}

PTXFORGE_API CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path, unsigned int numOptions,
                                    CUjit_option *options, void **optionValues) {
  return cuLinkAddFile_v2(state, type, path, numOptions, options, optionValues);
}

PTXFORGE_API CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!cubinOut || !sizeOut)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    LinkSession *S = sessionOf(state);
    if (!S)
      return CUDA_ERROR_INVALID_HANDLE;
    auto Image = S->L->complete(S->Logs);
    S->Opts.report(S->Logs);
    if (!Image)
      return toResult(Image.takeError());
    *cubinOut = const_cast<char *>(Image->data());
    *sizeOut = Image->size();
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuLinkDestroy(CUlinkState state) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Linker *L = unwrap(state);
  if (!L)
    return CUDA_ERROR_INVALID_HANDLE;
  Linkers.remove(L);
  std::scoped_lock G(LinkLock);
  LinkSessions.erase(
      std::remove_if(LinkSessions.begin(), LinkSessions.end(), [&](const auto &S) { return S->L.get() == L; }),
      LinkSessions.end());
  return CUDA_SUCCESS;
}

// =====================================================================================================
// Memory
// =====================================================================================================

PTXFORGE_API CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
  if (!free || !total)
    return initialized() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  DeviceMemory &M = DeviceMemory::get();
  *total = M.totalBytes();
  *free = M.totalBytes() - std::min(M.totalBytes(), M.usedBytes());
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  if (!dptr || !bytesize)
    return CUDA_ERROR_INVALID_VALUE;
  if (Driver::get().stickyError() != Status::Success)
    return sticky();
  return boundary([&] {
    if (llvm::Error E = checkUnsafeCall())
      return toResult(std::move(E));
    auto P = DeviceMemory::get().allocate(bytesize, MemoryKind::Device, Ctx);
    if (!P)
      return toResult(P.takeError());
    *dptr = *P;
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                                         unsigned int ElementSizeBytes) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  if (!dptr || !pPitch || !WidthInBytes || !Height ||
      (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
    return CUDA_ERROR_INVALID_VALUE;
  if (Driver::get().stickyError() != Status::Success)
    return sticky();
  return boundary([&] {
    size_t Pitch = llvm::alignTo(WidthInBytes, 512); // the texture pitch alignment of real devices
    auto P = DeviceMemory::get().allocate(Pitch * Height, MemoryKind::Device, Ctx);
    if (!P)
      return toResult(P.takeError());
    *dptr = *P;
    *pPitch = Pitch;
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  if (!dptr || !bytesize || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
    return CUDA_ERROR_INVALID_VALUE;
  if (Driver::get().stickyError() != Status::Success)
    return sticky();
  return boundary([&] {
    auto P = DeviceMemory::get().allocate(bytesize, MemoryKind::Managed, Ctx, flags);
    if (!P)
      return toResult(P.takeError());
    *dptr = *P;
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuMemFree_v2(CUdeviceptr dptr) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  return boundary([&] {
    if (llvm::Error E = checkUnsafeCall()) // before any check of dptr, as on NVIDIA's driver
      return toResult(std::move(E));
    if (!dptr)
      return CUDA_SUCCESS;
    if (GraphMemory::isGraphAllocation(dptr)) {
      GraphMemory::unclaim(dptr);
      Ctx->waitIdle();
      GraphMemory::free(dptr);
      return CUDA_SUCCESS;
    }
    auto A = DeviceMemory::get().find(dptr);
    if (!A || A->Base != dptr || (A->Kind != MemoryKind::Device && A->Kind != MemoryKind::Managed))
      return CUDA_ERROR_INVALID_VALUE;
    // Kernels and copies queued earlier may still use it (cuMemFree synchronizes, as on NVIDIA's driver).
    if (A->Owner)
      A->Owner->waitIdle();
    return toResult(DeviceMemory::get().free(dptr, {MemoryKind::Device, MemoryKind::Managed}));
  });
}

PTXFORGE_API CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr) {
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  auto A = DeviceMemory::get().find(dptr);
  if (!A)
    return CUDA_ERROR_NOT_FOUND;
  if (pbase)
    *pbase = A->Base;
  if (psize)
    *psize = A->Size;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuMemAllocHost_v2(void **pp, size_t bytesize) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  return boundary([&] { return hostAlloc(pp, bytesize, 0); });
}

PTXFORGE_API CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  return boundary([&] { return hostAlloc(pp, bytesize, Flags); });
}

PTXFORGE_API CUresult cuMemFreeHost(void *p) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  return boundary([&] {
    uint64_t Base = reinterpret_cast<uint64_t>(p);
    auto A = DeviceMemory::get().find(Base);
    if (!A || A->Base != Base || A->Kind != MemoryKind::Host)
      return CUDA_ERROR_INVALID_VALUE;
    if (A->Owner)
      A->Owner->waitIdle();
    return toResult(DeviceMemory::get().free(Base, {MemoryKind::Host}));
  });
}

PTXFORGE_API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!pdptr || !p || Flags)
    return CUDA_ERROR_INVALID_VALUE;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  auto A = DeviceMemory::get().find(reinterpret_cast<uint64_t>(p));
  if (!A || !A->isHost())
    return CUDA_ERROR_INVALID_VALUE;
  *pdptr = reinterpret_cast<uint64_t>(p); // unified addressing: the same address on both sides
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!pFlags || !p)
    return CUDA_ERROR_INVALID_VALUE;
  auto A = DeviceMemory::get().find(reinterpret_cast<uint64_t>(p));
  if (!A || !A->isHost())
    return CUDA_ERROR_INVALID_VALUE;
  *pFlags = A->HostFlags | CU_MEMHOSTALLOC_DEVICEMAP;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!p || !bytesize || (Flags & ~0xfu))
    return CUDA_ERROR_INVALID_VALUE;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  return boundary([&] {
    uint64_t Base = reinterpret_cast<uint64_t>(p);
    DeviceMemory &M = DeviceMemory::get();
    if (M.find(Base) || M.find(Base + bytesize - 1))
      return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    if (!hostRangeAccessible(Base, bytesize, !(Flags & CU_MEMHOSTREGISTER_READ_ONLY)))
      return CUDA_ERROR_INVALID_VALUE;
    if (llvm::Error E = M.addExternal(Base, bytesize, MemoryKind::HostRegistered, Ctx, Flags)) {
      llvm::consumeError(std::move(E));
      return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    }
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags) {
  return cuMemHostRegister_v2(p, bytesize, Flags);
}

PTXFORGE_API CUresult cuMemHostUnregister(void *p) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!p)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t Base = reinterpret_cast<uint64_t>(p);
  auto A = DeviceMemory::get().find(Base);
  if (!A || A->Base != Base || A->Kind != MemoryKind::HostRegistered)
    return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  if (A->Owner)
    A->Owner->waitIdle();
  DeviceMemory::get().removeExternal(Base);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  return boundary([&] { return copy(nullptr, false, linear(dst, Side::Unified, src, Side::Unified, ByteCount)); });
}

PTXFORGE_API CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream) {
  return boundary([&] { return copy(hStream, true, linear(dst, Side::Unified, src, Side::Unified, ByteCount)); });
}

namespace {
/// cuMemcpyPeer's contexts: both live. Every device's memory is the same host memory, so the copy itself is a
/// unified one.
CUresult peerContexts(CUcontext Dst, CUcontext Src) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Context *D = unwrap(Dst), *S = unwrap(Src);
  return D && S && !D->isDestroyed() && !S->isDestroyed() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
} // namespace

PTXFORGE_API CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                   CUcontext srcContext, size_t ByteCount) {
  if (CUresult R = peerContexts(dstContext, srcContext))
    return R;
  return cuMemcpy(dstDevice, srcDevice, ByteCount);
}

PTXFORGE_API CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                        CUcontext srcContext, size_t ByteCount, CUstream hStream) {
  if (CUresult R = peerContexts(dstContext, srcContext))
    return R;
  return cuMemcpyAsync(dstDevice, srcDevice, ByteCount, hStream);
}

PTXFORGE_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount) {
  return boundary(
      [&] { return copy(nullptr, false, linear(dstDevice, Side::Device, uint64_t(srcHost), Side::Host, ByteCount)); });
}

PTXFORGE_API CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount) {
  return boundary(
      [&] { return copy(nullptr, false, linear(uint64_t(dstHost), Side::Host, srcDevice, Side::Device, ByteCount)); });
}

PTXFORGE_API CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount) {
  return boundary(
      [&] { return copy(nullptr, false, linear(dstDevice, Side::Device, srcDevice, Side::Device, ByteCount)); });
}

PTXFORGE_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                           CUstream hStream) {
  return boundary(
      [&] { return copy(hStream, true, linear(dstDevice, Side::Device, uint64_t(srcHost), Side::Host, ByteCount)); });
}

PTXFORGE_API CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream) {
  return boundary(
      [&] { return copy(hStream, true, linear(uint64_t(dstHost), Side::Host, srcDevice, Side::Device, ByteCount)); });
}

PTXFORGE_API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                           CUstream hStream) {
  return boundary(
      [&] { return copy(hStream, true, linear(dstDevice, Side::Device, srcDevice, Side::Device, ByteCount)); });
}

PTXFORGE_API CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy) {
  return boundary([&] { return copy2D(pCopy, nullptr, false); });
}

PTXFORGE_API CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy) {
  return boundary([&] { return copy2D(pCopy, nullptr, false); });
}

PTXFORGE_API CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream) {
  return boundary([&] { return copy2D(pCopy, hStream, true); });
}

PTXFORGE_API CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy) {
  return boundary([&] { return copy3D(pCopy, nullptr, false); });
}

PTXFORGE_API CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream) {
  return boundary([&] { return copy3D(pCopy, hStream, true); });
}

PTXFORGE_API CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
  return boundary([&] { return fill(nullptr, false, dstDevice, 0, uc, 1, N, 1); });
}

PTXFORGE_API CUresult cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N) {
  return boundary([&] { return fill(nullptr, false, dstDevice, 0, us, 2, N, 1); });
}

PTXFORGE_API CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N) {
  return boundary([&] { return fill(nullptr, false, dstDevice, 0, ui, 4, N, 1); });
}

PTXFORGE_API CUresult cuMemsetD2D8_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                      size_t Height) {
  return boundary([&] { return fill(nullptr, false, dstDevice, dstPitch, uc, 1, Width, Height); });
}

PTXFORGE_API CUresult cuMemsetD2D16_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                       size_t Height) {
  return boundary([&] { return fill(nullptr, false, dstDevice, dstPitch, us, 2, Width, Height); });
}

PTXFORGE_API CUresult cuMemsetD2D32_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                       size_t Height) {
  return boundary([&] { return fill(nullptr, false, dstDevice, dstPitch, ui, 4, Width, Height); });
}

PTXFORGE_API CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream) {
  return boundary([&] { return fill(hStream, true, dstDevice, 0, uc, 1, N, 1); });
}

PTXFORGE_API CUresult cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream) {
  return boundary([&] { return fill(hStream, true, dstDevice, 0, us, 2, N, 1); });
}

PTXFORGE_API CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream) {
  return boundary([&] { return fill(hStream, true, dstDevice, 0, ui, 4, N, 1); });
}

PTXFORGE_API CUresult cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                        size_t Height, CUstream hStream) {
  return boundary([&] { return fill(hStream, true, dstDevice, dstPitch, uc, 1, Width, Height); });
}

PTXFORGE_API CUresult cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                         size_t Height, CUstream hStream) {
  return boundary([&] { return fill(hStream, true, dstDevice, dstPitch, us, 2, Width, Height); });
}

PTXFORGE_API CUresult cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                         size_t Height, CUstream hStream) {
  return boundary([&] { return fill(hStream, true, dstDevice, dstPitch, ui, 4, Width, Height); });
}

PTXFORGE_API CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  return boundary([&] { return pointerAttribute(data, attribute, ptr); });
}

PTXFORGE_API CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes, void **data,
                                             CUdeviceptr ptr) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!numAttributes || !attributes || !data)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    bool Known = DeviceMemory::get().find(ptr).has_value();
    for (unsigned I = 0; I < numAttributes; ++I) {
      if (!data[I])
        continue;
      // Unknown pointers are not an error here: every attribute reads as zero ("not CUDA memory").
      if (!Known || pointerAttribute(data[I], attributes[I], ptr) != CUDA_SUCCESS)
        std::memset(data[I], 0, pointerAttributeSize(attributes[I]));
    }
    return CUDA_SUCCESS;
  });
}

// =====================================================================================================
// Streams and events
// =====================================================================================================

PTXFORGE_API CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!phStream || (flags & ~unsigned(CU_STREAM_NON_BLOCKING)))
    return CUDA_ERROR_INVALID_VALUE;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  return boundary([&] {
    Stream::Kind K = (flags & CU_STREAM_NON_BLOCKING) ? Stream::Kind::NonBlocking : Stream::Kind::Blocking;
    auto S = Ctx->createStream(K, flags, std::clamp(priority, -5, 0));
    if (!S)
      return toResult(S.takeError());
    *phStream = wrap(*S);
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags) {
  return cuStreamCreateWithPriority(phStream, Flags, 0);
}

PTXFORGE_API CUresult cuStreamGetPriority(CUstream hStream, int *priority) {
  if (!priority)
    return initialized() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  *priority = S ? S->priority() : 0;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuStreamGetFlags(CUstream hStream, unsigned int *flags) {
  if (!flags)
    return initialized() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  *flags = S ? S->flags() : 0;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuStreamGetId(CUstream hStream, unsigned long long *streamId) {
  if (!streamId)
    return initialized() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  *streamId = S ? S->id() : Ctx->legacyStream().id();
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx) {
  if (!pctx)
    return initialized() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  *pctx = wrap(Ctx);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  Event *E = unwrap(hEvent);
  if (!E)
    return CUDA_ERROR_INVALID_HANDLE;
  if (Flags & ~unsigned(CU_EVENT_WAIT_EXTERNAL))
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] { return toResult(waitEvent(*Ctx, S, *E, Flags & CU_EVENT_WAIT_EXTERNAL)); });
}

PTXFORGE_API CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
                                          unsigned int flags) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  if (!callback || flags)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    Ctx->submit(S, [callback, userData, hStream] { callback(hStream, sticky(), userData); });
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  if (!fn)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] { return toResult(launchHostFunction(*Ctx, S, fn, userData)); });
}

PTXFORGE_API CUresult cuStreamQuery(CUstream hStream) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  return boundary([&] {
    if (llvm::Error E = checkSynchronize(*Ctx, S))
      return toResult(std::move(E));
    bool Idle = S ? S->idle() : Ctx->legacyStream().idle();
    if (Driver::get().stickyError() != Status::Success)
      return sticky();
    return Idle ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
  });
}

PTXFORGE_API CUresult cuStreamSynchronize(CUstream hStream) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  return boundary([&] {
    if (llvm::Error E = checkSynchronize(*Ctx, S))
      return toResult(std::move(E));
    (S ? S->last() : Ctx->legacyStream().last()).wait();
    return sticky();
  });
}

PTXFORGE_API CUresult cuStreamDestroy_v2(CUstream hStream) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (isDefaultStream(hStream) || !Driver::get().Streams.contains(hStream))
    return CUDA_ERROR_INVALID_HANDLE;
  Stream *S = reinterpret_cast<Stream *>(hStream);
  return boundary([&] { return toResult(S->context().destroyStream(S)); });
}

PTXFORGE_API CUresult cuStreamDestroy(CUstream hStream) { return cuStreamDestroy_v2(hStream); }

PTXFORGE_API CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!phEvent || (Flags & ~0x7u) || ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)))
    return CUDA_ERROR_INVALID_VALUE;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  return boundary([&] {
    *phEvent = wrap(Ctx->createEvent(Flags, !(Flags & CU_EVENT_DISABLE_TIMING)));
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Event *E = unwrap(hEvent);
  if (!E)
    return CUDA_ERROR_INVALID_HANDLE;
  if (flags & ~unsigned(CU_EVENT_RECORD_EXTERNAL))
    return CUDA_ERROR_INVALID_VALUE;
  Context *Ctx = nullptr;
  Stream *S = nullptr; // the legacy stream of the event's own context
  if (CUresult R =
          isDefaultStream(hStream) && hStream != CU_STREAM_PER_THREAD ? CUDA_SUCCESS : streamTarget(hStream, Ctx, S))
    return R;
  if (S && &S->context() != &E->context())
    return CUDA_ERROR_INVALID_HANDLE;
  return boundary([&] { return toResult(recordEvent(E->context(), S, *E, flags & CU_EVENT_RECORD_EXTERNAL)); });
}

PTXFORGE_API CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
  return cuEventRecordWithFlags(hEvent, hStream, 0);
}

PTXFORGE_API CUresult cuEventQuery(CUevent hEvent) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Event *E = unwrap(hEvent);
  if (!E)
    return CUDA_ERROR_INVALID_HANDLE;
  if (llvm::Error Err = checkEventUsable(*E))
    return toResult(std::move(Err));
  bool Done = E->completed();
  if (Driver::get().stickyError() != Status::Success)
    return sticky();
  return Done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

PTXFORGE_API CUresult cuEventSynchronize(CUevent hEvent) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Event *E = unwrap(hEvent);
  if (!E)
    return CUDA_ERROR_INVALID_HANDLE;
  return boundary([&] {
    if (llvm::Error Err = checkEventUsable(*E))
      return toResult(std::move(Err));
    E->synchronize();
    return sticky();
  });
}

PTXFORGE_API CUresult cuEventDestroy_v2(CUevent hEvent) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Event *E = unwrap(hEvent);
  if (!E)
    return CUDA_ERROR_INVALID_HANDLE;
  return boundary([&] {
    E->context().destroyEvent(E);
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuEventDestroy(CUevent hEvent) { return cuEventDestroy_v2(hEvent); }

PTXFORGE_API CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!pMilliseconds)
    return CUDA_ERROR_INVALID_VALUE;
  Event *Start = unwrap(hStart), *End = unwrap(hEnd);
  if (!Start || !End)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!Start->timingEnabled() || !End->timingEnabled())
    return CUDA_ERROR_INVALID_HANDLE;
  auto A = Start->lastRecord(), B = End->lastRecord();
  if (!A || !B)
    return CUDA_ERROR_INVALID_HANDLE; // never recorded
  if (!A->Point.reached() || !B->Point.reached() || !A->Timed.load() || !B->Timed.load())
    return CUDA_ERROR_NOT_READY;
  *pMilliseconds = std::chrono::duration<float, std::milli>(B->When - A->When).count();
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd) {
  return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}

// =====================================================================================================
// Launches and occupancy
// =====================================================================================================

PTXFORGE_API CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                     unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                     unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra) {
  return boundary([&] {
    return launchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                        kernelParams, extra);
  });
}

PTXFORGE_API CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                                unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                                void **kernelParams) {
  return boundary([&] {
    return launchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                        kernelParams, nullptr, LaunchKind::Cooperative);
  });
}

namespace {
/// CUlaunchAttribute and CUlaunchConfig as CUDA 13's cuda.h lays them out (ptxforge's cuda.h does not declare
/// cuLaunchKernelEx's types yet).
struct LaunchAttributeAbi {
  int Id;
  char Pad[4];
  union {
    char Bytes[64];
    int Cooperative;
    struct {
      unsigned X, Y, Z;
    } ClusterDim;
    int ClusterSchedulingPolicy;
  } Value;
};
static_assert(sizeof(LaunchAttributeAbi) == 72, "CUlaunchAttribute is 72 bytes");
struct LaunchConfigAbi {
  unsigned GridDimX, GridDimY, GridDimZ, BlockDimX, BlockDimY, BlockDimZ, SharedMemBytes;
  CUstream Stream;
  const LaunchAttributeAbi *Attrs;
  unsigned NumAttrs;
};
static_assert(sizeof(LaunchConfigAbi) == 56, "CUlaunchConfig is 56 bytes");
enum : int {
  LaunchAttributeIgnore = 0,
  LaunchAttributeCooperative = 2,
  LaunchAttributeClusterDimension = 4,
  LaunchAttributeClusterSchedulingPolicy = 5,
  LaunchAttributeProgrammaticEvent = 7,
  LaunchAttributePreferredClusterDimension = 11,
  LaunchAttributeCompletionEvent = 12,
  LaunchAttributeLast = 13,
};

/// The launch kind and cluster shape cuLaunchKernelEx's attributes ask for (Cluster: set when an attribute gives
/// one). Hints (access policy, priority, sync domains, scheduling preferences, a preferred cluster shape: the
/// blocks run in clusters of the required one) and relaxations of stream order (programmatic serialization)
/// change nothing here: streams stay in order. The event-recording attributes are not modelled.
CUresult launchKindOf(const LaunchConfigAbi &C, LaunchKind &Kind, std::optional<codegen::Dim3> &Cluster) {
  if (C.NumAttrs && !C.Attrs)
    return CUDA_ERROR_INVALID_VALUE;
  Kind = LaunchKind::Normal;
  for (unsigned I = 0; I < C.NumAttrs; ++I) {
    const LaunchAttributeAbi &A = C.Attrs[I];
    switch (A.Id) {
    case LaunchAttributeCooperative:
      if (A.Value.Cooperative)
        Kind = LaunchKind::Cooperative;
      break;
    case LaunchAttributeClusterDimension:
      Cluster = codegen::Dim3{A.Value.ClusterDim.X, A.Value.ClusterDim.Y, A.Value.ClusterDim.Z};
      if (!Cluster->count())
        return CUDA_ERROR_INVALID_CLUSTER_SIZE;
      break;
    case LaunchAttributeClusterSchedulingPolicy:
      if (A.Value.ClusterSchedulingPolicy < 0 || A.Value.ClusterSchedulingPolicy > 2)
        return CUDA_ERROR_INVALID_VALUE;
      break;
    case LaunchAttributeProgrammaticEvent:
    case LaunchAttributeCompletionEvent:
      return CUDA_ERROR_NOT_SUPPORTED;
    default:
      if (A.Id < LaunchAttributeIgnore || A.Id > LaunchAttributeLast)
        return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
}
} // namespace

PTXFORGE_API CUresult cuLaunchKernelEx(const LaunchConfigAbi *config, CUfunction f, void **kernelParams, void **extra) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!config)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    LaunchKind Kind;
    std::optional<codegen::Dim3> Cluster;
    if (CUresult R = launchKindOf(*config, Kind, Cluster))
      return R;
    if (Kind == LaunchKind::Cooperative && extra)
      return CUDA_ERROR_INVALID_VALUE; // as cuLaunchCooperativeKernel: kernelParams only
    const LaunchConfigAbi &C = *config;
    return launchKernel(f, C.GridDimX, C.GridDimY, C.GridDimZ, C.BlockDimX, C.BlockDimY, C.BlockDimZ, C.SharedMemBytes,
                        C.Stream, kernelParams, extra, Kind, Cluster ? &*Cluster : nullptr);
  });
}

namespace {
/// The launch configuration of an occupancy query on clusters (cuOccupancyMaxActiveClusters and
/// cuOccupancyMaxPotentialClusterSize read the block, the shared memory and the cluster attribute).
CUresult occupancyQuery(const LaunchConfigAbi *config, CUfunction func, Function *&F, codegen::LaunchConfig &Q) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!config)
    return CUDA_ERROR_INVALID_VALUE;
  F = unwrap(func);
  if (!F)
    return CUDA_ERROR_INVALID_HANDLE;
  LaunchKind Kind;
  std::optional<codegen::Dim3> Cluster;
  if (CUresult R = launchKindOf(*config, Kind, Cluster))
    return R;
  Q.Grid = {config->GridDimX, config->GridDimY, config->GridDimZ};
  Q.Block = {config->BlockDimX, config->BlockDimY, config->BlockDimZ};
  Q.DynamicSharedBytes = config->SharedMemBytes;
  if (Cluster)
    Q.Cluster = *Cluster;
  return CUDA_SUCCESS;
}
} // namespace

PTXFORGE_API CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func, const LaunchConfigAbi *config) {
  Function *F;
  codegen::LaunchConfig Q;
  if (CUresult R = occupancyQuery(config, func, F, Q))
    return R;
  if (!numClusters)
    return CUDA_ERROR_INVALID_VALUE;
  llvm::Expected<int> N = F->maxActiveClusters(Q);
  if (!N)
    return toResult(N.takeError());
  *numClusters = *N;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuOccupancyMaxPotentialClusterSize(int *clusterSize, CUfunction func,
                                                         const LaunchConfigAbi *config) {
  Function *F;
  codegen::LaunchConfig Q;
  if (CUresult R = occupancyQuery(config, func, F, Q))
    return R;
  if (!clusterSize)
    return CUDA_ERROR_INVALID_VALUE;
  llvm::Expected<int> N = F->maxPotentialClusterSize(Q);
  if (!N)
    return toResult(N.takeError());
  *clusterSize = *N;
  return CUDA_SUCCESS;
}

// The per-thread default stream variants (_ptsz): a null stream means CU_STREAM_PER_THREAD.
namespace {
CUstream perThread(CUstream H) { return H ? H : CU_STREAM_PER_THREAD; }
} // namespace

PTXFORGE_API CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                          unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                          unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                          void **kernelParams, void **extra) {
  return cuLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                        perThread(hStream), kernelParams, extra);
}

PTXFORGE_API CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                     unsigned int gridDimZ, unsigned int blockDimX,
                                                     unsigned int blockDimY, unsigned int blockDimZ,
                                                     unsigned int sharedMemBytes, CUstream hStream,
                                                     void **kernelParams) {
  return cuLaunchCooperativeKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                                   perThread(hStream), kernelParams);
}

PTXFORGE_API CUresult cuLaunchKernelEx_ptsz(const LaunchConfigAbi *config, CUfunction f, void **kernelParams,
                                            void **extra) {
  if (!config)
    return CUDA_ERROR_INVALID_VALUE;
  LaunchConfigAbi C = *config;
  C.Stream = perThread(C.Stream);
  return cuLaunchKernelEx(&C, f, kernelParams, extra);
}

// The remaining per-thread default stream variants: synchronous calls (_ptds) are the calls themselves, stream
// calls (_ptsz) take a null stream as CU_STREAM_PER_THREAD.
PTXFORGE_API CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags) {
  return cuEventRecordWithFlags(hEvent, perThread(hStream), flags);
}
PTXFORGE_API CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) {
  return cuEventRecord(hEvent, perThread(hStream));
}
PTXFORGE_API CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData) {
  return cuLaunchHostFunc(perThread(hStream), fn, userData);
}
PTXFORGE_API CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream) {
  return cuMemcpy2DAsync_v2(pCopy, perThread(hStream));
}
PTXFORGE_SAME_ENTRY(cuMemcpy2DUnaligned_v2_ptds, cuMemcpy2DUnaligned_v2)
PTXFORGE_SAME_ENTRY(cuMemcpy2D_v2_ptds, cuMemcpy2D_v2)
PTXFORGE_API CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream hStream) {
  return cuMemcpy3DAsync_v2(pCopy, perThread(hStream));
}
PTXFORGE_SAME_ENTRY(cuMemcpy3D_v2_ptds, cuMemcpy3D_v2)
PTXFORGE_API CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream) {
  return cuMemcpyAsync(dst, src, ByteCount, perThread(hStream));
}
PTXFORGE_API CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                                CUstream hStream) {
  return cuMemcpyDtoDAsync_v2(dstDevice, srcDevice, ByteCount, perThread(hStream));
}
PTXFORGE_SAME_ENTRY(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2)
PTXFORGE_API CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                                CUstream hStream) {
  return cuMemcpyDtoHAsync_v2(dstHost, srcDevice, ByteCount, perThread(hStream));
}
PTXFORGE_SAME_ENTRY(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2)
PTXFORGE_API CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                                CUstream hStream) {
  return cuMemcpyHtoDAsync_v2(dstDevice, srcHost, ByteCount, perThread(hStream));
}
PTXFORGE_SAME_ENTRY(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2)
PTXFORGE_SAME_ENTRY(cuMemcpy_ptds, cuMemcpy)
PTXFORGE_SAME_ENTRY(cuMemcpyPeer_ptds, cuMemcpyPeer)
PTXFORGE_API CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                             CUcontext srcContext, size_t ByteCount, CUstream hStream) {
  return cuMemcpyPeerAsync(dstDevice, dstContext, srcDevice, srcContext, ByteCount, perThread(hStream));
}
PTXFORGE_API CUresult cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream) {
  return cuMemsetD16Async(dstDevice, us, N, perThread(hStream));
}
PTXFORGE_SAME_ENTRY(cuMemsetD16_v2_ptds, cuMemsetD16_v2)
PTXFORGE_API CUresult cuMemsetD2D16Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                              size_t Height, CUstream hStream) {
  return cuMemsetD2D16Async(dstDevice, dstPitch, us, Width, Height, perThread(hStream));
}
PTXFORGE_SAME_ENTRY(cuMemsetD2D16_v2_ptds, cuMemsetD2D16_v2)
PTXFORGE_API CUresult cuMemsetD2D32Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                              size_t Height, CUstream hStream) {
  return cuMemsetD2D32Async(dstDevice, dstPitch, ui, Width, Height, perThread(hStream));
}
PTXFORGE_SAME_ENTRY(cuMemsetD2D32_v2_ptds, cuMemsetD2D32_v2)
PTXFORGE_API CUresult cuMemsetD2D8Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                             size_t Height, CUstream hStream) {
  return cuMemsetD2D8Async(dstDevice, dstPitch, uc, Width, Height, perThread(hStream));
}
PTXFORGE_SAME_ENTRY(cuMemsetD2D8_v2_ptds, cuMemsetD2D8_v2)
PTXFORGE_API CUresult cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream) {
  return cuMemsetD32Async(dstDevice, ui, N, perThread(hStream));
}
PTXFORGE_SAME_ENTRY(cuMemsetD32_v2_ptds, cuMemsetD32_v2)
PTXFORGE_API CUresult cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream) {
  return cuMemsetD8Async(dstDevice, uc, N, perThread(hStream));
}
PTXFORGE_SAME_ENTRY(cuMemsetD8_v2_ptds, cuMemsetD8_v2)
PTXFORGE_API CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData,
                                               unsigned int flags) {
  return cuStreamAddCallback(perThread(hStream), callback, userData, flags);
}
PTXFORGE_API CUresult cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx) {
  return cuStreamGetCtx(perThread(hStream), pctx);
}
PTXFORGE_API CUresult cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags) {
  return cuStreamGetFlags(perThread(hStream), flags);
}
PTXFORGE_API CUresult cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId) {
  return cuStreamGetId(perThread(hStream), streamId);
}
PTXFORGE_API CUresult cuStreamGetPriority_ptsz(CUstream hStream, int *priority) {
  return cuStreamGetPriority(perThread(hStream), priority);
}
PTXFORGE_API CUresult cuStreamQuery_ptsz(CUstream hStream) { return cuStreamQuery(perThread(hStream)); }
PTXFORGE_API CUresult cuStreamSynchronize_ptsz(CUstream hStream) { return cuStreamSynchronize(perThread(hStream)); }
PTXFORGE_API CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return cuStreamWaitEvent(perThread(hStream), hEvent, Flags);
}

PTXFORGE_API CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                                cuuint64_t *id_out, CUgraph *graph_out,
                                                const CUgraphNode **dependencies_out,
                                                const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  if (!captureStatus_out)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    // The dependency array must outlive the call: each thread keeps the one it was last given.
    thread_local std::vector<CUgraphNode> Dependencies;
    thread_local std::vector<CUgraphEdgeData> EdgeData;
    CaptureInfo I = captureInfo(S);
    if (I.Status == CaptureStatus::None && !S) {
      // The legacy stream never captures; asking it while a blocking stream does is an implicit dependency.
      if (llvm::Error E = captureTarget(*Ctx, nullptr).takeError())
        return toResult(std::move(E));
    }
    *captureStatus_out = static_cast<CUstreamCaptureStatus>(I.Status);
    Dependencies.assign(I.Dependencies.size(), nullptr);
    for (size_t K = 0; K < I.Dependencies.size(); ++K)
      Dependencies[K] = reinterpret_cast<CUgraphNode>(I.Dependencies[K]);
    EdgeData.assign(I.Dependencies.size(), CUgraphEdgeData{});
    if (id_out)
      *id_out = I.Id;
    if (graph_out)
      *graph_out = reinterpret_cast<CUgraph>(I.G);
    if (dependencies_out)
      *dependencies_out = Dependencies.empty() ? nullptr : Dependencies.data();
    if (edgeData_out)
      *edgeData_out = EdgeData.empty() ? nullptr : EdgeData.data();
    if (numDependencies_out)
      *numDependencies_out = I.Dependencies.size();
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                                cuuint64_t *id_out, CUgraph *graph_out,
                                                const CUgraphNode **dependencies_out, size_t *numDependencies_out) {
  return cuStreamGetCaptureInfo_v3(hStream, captureStatus_out, id_out, graph_out, dependencies_out, nullptr,
                                   numDependencies_out);
}

PTXFORGE_API CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                             cuuint64_t *id_out) {
  return cuStreamGetCaptureInfo_v3(hStream, captureStatus_out, id_out, nullptr, nullptr, nullptr, nullptr);
}

PTXFORGE_API CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus) {
  return cuStreamGetCaptureInfo_v3(hStream, captureStatus, nullptr, nullptr, nullptr, nullptr, nullptr);
}

PTXFORGE_SAME_ENTRY(cuStreamGetCaptureInfo_v3_ptsz, cuStreamGetCaptureInfo_v3)
PTXFORGE_SAME_ENTRY(cuStreamGetCaptureInfo_v2_ptsz, cuStreamGetCaptureInfo_v2)
PTXFORGE_SAME_ENTRY(cuStreamGetCaptureInfo_ptsz, cuStreamGetCaptureInfo)
PTXFORGE_SAME_ENTRY(cuStreamIsCapturing_ptsz, cuStreamIsCapturing)

PTXFORGE_API CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func,
                                                                           int blockSize, size_t dynamicSMemSize,
                                                                           unsigned int flags) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!numBlocks || (flags & ~unsigned(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)))
    return CUDA_ERROR_INVALID_VALUE;
  Function *F = unwrap(func);
  if (!F)
    return CUDA_ERROR_INVALID_HANDLE;
  *numBlocks = F->activeBlocksPerMultiprocessor(blockSize, dynamicSMemSize);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
                                                                  size_t dynamicSMemSize) {
  return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize, 0);
}

PTXFORGE_API CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                                       CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                       size_t dynamicSMemSize, int blockSizeLimit) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!minGridSize || !blockSize)
    return CUDA_ERROR_INVALID_VALUE;
  Function *F = unwrap(func);
  if (!F)
    return CUDA_ERROR_INVALID_HANDLE;
  auto Dynamic = [&](int B) -> uint64_t {
    return blockSizeToDynamicSMemSize ? blockSizeToDynamicSMemSize(B) : dynamicSMemSize;
  };
  Function::BlockSuggestion S = F->suggestBlockSize(Dynamic, blockSizeLimit);
  *minGridSize = S.MinGridSize;
  *blockSize = S.BlockSize;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize, CUfunction func,
                                                                CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                                size_t dynamicSMemSize, int blockSizeLimit,
                                                                unsigned int flags) {
  if (flags & ~unsigned(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE))
    return CUDA_ERROR_INVALID_VALUE;
  return cuOccupancyMaxPotentialBlockSize(minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize,
                                          blockSizeLimit);
}

PTXFORGE_API CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, CUfunction func, int numBlocks,
                                                              int blockSize) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!dynamicSmemSize || numBlocks <= 0 || blockSize <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  Function *F = unwrap(func);
  if (!F)
    return CUDA_ERROR_INVALID_HANDLE;
  const DeviceProperties &P = deviceProperties(F->module().context().device());
  uint64_t PerBlock = P.SharedMemoryPerMultiprocessor / uint64_t(numBlocks);
  uint64_t Used = F->staticSharedBytes() + P.ReservedSharedMemoryPerBlock;
  uint64_t Avail = PerBlock > Used ? PerBlock - Used : 0;
  *dynamicSmemSize = std::min<uint64_t>(
      Avail, P.SharedMemoryPerBlockOptin - std::min<uint64_t>(F->staticSharedBytes(), P.SharedMemoryPerBlockOptin));
  return CUDA_SUCCESS;
}

// =====================================================================================================
// CUDA arrays, texture objects and surface objects
// =====================================================================================================

namespace {

bool texelFormat(CUarray_format F, codegen::TexelFormat &Out) {
  switch (F) {
  case CU_AD_FORMAT_UNSIGNED_INT8:
    Out = codegen::TexelFormat::U8;
    return true;
  case CU_AD_FORMAT_UNSIGNED_INT16:
    Out = codegen::TexelFormat::U16;
    return true;
  case CU_AD_FORMAT_UNSIGNED_INT32:
    Out = codegen::TexelFormat::U32;
    return true;
  case CU_AD_FORMAT_SIGNED_INT8:
    Out = codegen::TexelFormat::S8;
    return true;
  case CU_AD_FORMAT_SIGNED_INT16:
    Out = codegen::TexelFormat::S16;
    return true;
  case CU_AD_FORMAT_SIGNED_INT32:
    Out = codegen::TexelFormat::S32;
    return true;
  case CU_AD_FORMAT_HALF:
    Out = codegen::TexelFormat::F16;
    return true;
  case CU_AD_FORMAT_FLOAT:
    Out = codegen::TexelFormat::F32;
    return true;
  default:
    return false;
  }
}

CUarray_format arrayFormat(codegen::TexelFormat F) {
  switch (F) {
  case codegen::TexelFormat::U8:
    return CU_AD_FORMAT_UNSIGNED_INT8;
  case codegen::TexelFormat::U16:
    return CU_AD_FORMAT_UNSIGNED_INT16;
  case codegen::TexelFormat::U32:
    return CU_AD_FORMAT_UNSIGNED_INT32;
  case codegen::TexelFormat::S8:
    return CU_AD_FORMAT_SIGNED_INT8;
  case codegen::TexelFormat::S16:
    return CU_AD_FORMAT_SIGNED_INT16;
  case codegen::TexelFormat::S32:
    return CU_AD_FORMAT_SIGNED_INT32;
  case codegen::TexelFormat::F16:
    return CU_AD_FORMAT_HALF;
  default:
    return CU_AD_FORMAT_FLOAT;
  }
}

/// The shape D describes, checked as cuArray3DCreate checks it.
CUresult arrayShape(const CUDA_ARRAY3D_DESCRIPTOR *D, ArrayShape &S) {
  if (!D || !texelFormat(D->Format, S.Format))
    return CUDA_ERROR_INVALID_VALUE;
  // Sparse and deferred-mapping arrays (and flags CUDA does not define) are not implemented.
  if (D->Flags &
      ~unsigned(CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_TEXTURE_GATHER | CUDA_ARRAY3D_CUBEMAP))
    return D->Flags & ~0x1ffu ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;
  S.Channels = D->NumChannels, S.Width = D->Width, S.Height = D->Height, S.Depth = D->Depth;
  S.Layered = D->Flags & CUDA_ARRAY3D_LAYERED, S.SurfaceLoadStore = D->Flags & CUDA_ARRAY3D_SURFACE_LDST;
  S.Cubemap = D->Flags & CUDA_ARRAY3D_CUBEMAP;
  S.TextureGather = D->Flags & CUDA_ARRAY3D_TEXTURE_GATHER;
  if (S.TextureGather && (!S.Height || S.Depth))
    return CUDA_ERROR_INVALID_VALUE; // gather needs a 2D array
  return CUDA_SUCCESS;
}

/// What creating an array or a mipmapped array checks first, in NVIDIA's order: the driver, a current context,
/// the output, the descriptor (its shape into S), and a sticky error.
CUresult checkArrayCreate(Context *&Ctx, const void *Out, const CUDA_ARRAY3D_DESCRIPTOR *D, ArrayShape &S) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (CUresult R = current(Ctx))
    return R;
  if (!Out)
    return CUDA_ERROR_INVALID_VALUE;
  if (CUresult R = arrayShape(D, S))
    return R;
  if (Driver::get().stickyError() != Status::Success)
    return sticky();
  return CUDA_SUCCESS;
}

CUresult createArray(CUarray *Out, const CUDA_ARRAY3D_DESCRIPTOR *D) {
  Context *Ctx;
  ArrayShape S;
  if (CUresult R = checkArrayCreate(Ctx, Out, D, S))
    return R;
  return boundary([&] {
    auto A = Array::create(*Ctx, S);
    if (!A)
      return toResult(A.takeError());
    *Out = reinterpret_cast<CUarray>(*A);
    return CUDA_SUCCESS;
  });
}

/// What the texture and surface object API keeps per handle: the descriptions it was made from, for the
/// Get*Desc queries, and the array it reads (so that destroying the array first can be told).
struct ObjectRecord {
  CUDA_RESOURCE_DESC Resource;
  CUDA_TEXTURE_DESC Texture;
  bool IsSurface;
};

std::mutex ObjectsLock;
std::map<uint64_t, ObjectRecord> &objects() {
  static auto *M = new std::map<uint64_t, ObjectRecord>; // never destroyed: handles may be used during exit
  return *M;
}

/// The resource part of a texture or surface over R, checked as NVIDIA's driver checks it.
CUresult resourceDescriptor(const CUDA_RESOURCE_DESC &R, bool Surface, codegen::TextureDescriptor &D) {
  if (R.flags)
    return CUDA_ERROR_INVALID_VALUE;
  switch (R.resType) {
  case CU_RESOURCE_TYPE_ARRAY: {
    Array *A = Array::lookup(R.res.array.hArray);
    if (!A)
      return CUDA_ERROR_INVALID_HANDLE;
    if (Surface && !A->shape().SurfaceLoadStore)
      return CUDA_ERROR_INVALID_VALUE; // surfaces need CUDA_ARRAY3D_SURFACE_LDST
    D = A->resource();
    return CUDA_SUCCESS;
  }
  case CU_RESOURCE_TYPE_LINEAR:
  case CU_RESOURCE_TYPE_PITCH2D: {
    if (Surface)
      return CUDA_ERROR_INVALID_VALUE; // surfaces are over arrays only
    bool Linear = R.resType == CU_RESOURCE_TYPE_LINEAR;
    CUdeviceptr P = Linear ? R.res.linear.devPtr : R.res.pitch2D.devPtr;
    CUarray_format F = Linear ? R.res.linear.format : R.res.pitch2D.format;
    unsigned Channels = Linear ? R.res.linear.numChannels : R.res.pitch2D.numChannels;
    if (!P || P % 512 || !texelFormat(F, D.Format) || (Channels != 1 && Channels != 2 && Channels != 4))
      return CUDA_ERROR_INVALID_VALUE; // 512: CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT
    D.Channels = Channels;
    D.Resource = Linear ? codegen::TexResource::Linear : codegen::TexResource::Pitch2D;
    D.Data = reinterpret_cast<char *>(P);
    D.Dims = Linear ? 1 : 2;
    D.Width = Linear ? R.res.linear.sizeInBytes / D.texelBytes() : R.res.pitch2D.width;
    D.Height = Linear ? 1 : R.res.pitch2D.height;
    D.RowPitch = Linear ? D.Width * D.texelBytes() : R.res.pitch2D.pitchInBytes;
    D.SlicePitch = D.RowPitch * D.Height;
    if (!D.Width || D.Width > (Linear ? (1u << 27) : 131072u) || !D.Height || D.Height > 65536 ||
        (!Linear && (D.RowPitch % 32 || D.RowPitch < D.Width * D.texelBytes())))
      return CUDA_ERROR_INVALID_VALUE; // 32: CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT
    if (!DeviceMemory::get().containsRange(P, D.RowPitch * (D.Height - 1) + D.Width * D.texelBytes()))
      return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
  }
  case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY: {
    MipmappedArray *M = MipmappedArray::lookup(R.res.mipmap.hMipmappedArray);
    if (!M)
      return CUDA_ERROR_INVALID_HANDLE;
    if (Surface)
      return CUDA_ERROR_INVALID_VALUE; // a surface is over one level (cuMipmappedArrayGetLevel)
    D = M->resource();
    return CUDA_SUCCESS;
  }
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

/// The sampler part of a texture from T.
CUresult samplerDescriptor(const CUDA_TEXTURE_DESC &T, codegen::TextureDescriptor &D) {
  for (unsigned I = 0; I < 3; ++I) {
    if (T.addressMode[I] > CU_TR_ADDRESS_MODE_BORDER)
      return CUDA_ERROR_INVALID_VALUE;
    D.Address[I] = static_cast<codegen::TexAddressMode>(T.addressMode[I]);
  }
  if (T.filterMode > CU_TR_FILTER_MODE_LINEAR)
    return CUDA_ERROR_INVALID_VALUE;
  D.Filter = T.filterMode == CU_TR_FILTER_MODE_LINEAR ? codegen::TexFilterMode::Linear : codegen::TexFilterMode::Point;
  D.NormalizedCoords = T.flags & CU_TRSF_NORMALIZED_COORDINATES;
  D.ReadAsInteger = T.flags & CU_TRSF_READ_AS_INTEGER;
  std::copy(T.borderColor, T.borderColor + 4, D.BorderColor);
  if (T.mipmapFilterMode > CU_TR_FILTER_MODE_LINEAR)
    return CUDA_ERROR_INVALID_VALUE;
  D.MipmapFilter =
      T.mipmapFilterMode == CU_TR_FILTER_MODE_LINEAR ? codegen::TexFilterMode::Linear : codegen::TexFilterMode::Point;
  D.MipmapLevelBias = T.mipmapLevelBias;
  D.MinMipmapLevel = T.minMipmapLevelClamp, D.MaxMipmapLevel = T.maxMipmapLevelClamp;
  // Linear filtering needs float results: 32-bit integers, and 8/16-bit ones read as integers, cannot filter.
  bool Int32 = D.Format == codegen::TexelFormat::U32 || D.Format == codegen::TexelFormat::S32;
  bool IntRead =
      Int32 || (D.ReadAsInteger && D.Format != codegen::TexelFormat::F16 && D.Format != codegen::TexelFormat::F32);
  if (D.Filter == codegen::TexFilterMode::Linear && IntRead)
    return CUDA_ERROR_INVALID_VALUE;
  // Linear memory is fetched by integer index: no filtering, no normalized coordinates.
  if (D.Resource == codegen::TexResource::Linear && (D.Filter == codegen::TexFilterMode::Linear || D.NormalizedCoords))
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

CUresult registerObject(unsigned long long *Out, const codegen::TextureDescriptor &D, const ObjectRecord &Rec) {
  uint64_t H = codegen::registerTextureObject(D);
  if (!H)
    return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard<std::mutex> G(ObjectsLock);
  objects()[H] = Rec;
  *Out = H;
  return CUDA_SUCCESS;
}

CUresult destroyObject(uint64_t H, bool Surface) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  std::lock_guard<std::mutex> G(ObjectsLock);
  auto It = objects().find(H);
  if (It == objects().end() || It->second.IsSurface != Surface)
    return CUDA_ERROR_INVALID_VALUE;
  objects().erase(It);
  codegen::releaseTextureObject(H);
  return CUDA_SUCCESS;
}

const ObjectRecord *findObject(uint64_t H, bool Surface) {
  auto It = objects().find(H);
  return It == objects().end() || It->second.IsSurface != Surface ? nullptr : &It->second;
}

} // namespace

PTXFORGE_API CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray) {
  if (!pAllocateArray)
    return initialized() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  CUDA_ARRAY3D_DESCRIPTOR D = {};
  D.Width = pAllocateArray->Width, D.Height = pAllocateArray->Height;
  D.Format = pAllocateArray->Format, D.NumChannels = pAllocateArray->NumChannels;
  return createArray(pHandle, &D);
}

PTXFORGE_API CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray) {
  return createArray(pHandle, pAllocateArray);
}

PTXFORGE_API CUresult cuArrayDestroy(CUarray hArray) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  return boundary([&] { return toResult(Array::destroy(hArray)); });
}

PTXFORGE_API CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
                                             const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
                                             unsigned int numMipmapLevels) {
  Context *Ctx;
  ArrayShape S;
  if (CUresult R = checkArrayCreate(Ctx, pHandle, pMipmappedArrayDesc, S))
    return R;
  return boundary([&] {
    auto M = MipmappedArray::create(*Ctx, S, numMipmapLevels);
    if (!M)
      return toResult(M.takeError());
    *pHandle = reinterpret_cast<CUmipmappedArray>(*M);
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuMipmappedArrayGetLevel(CUarray *pLevelArray, CUmipmappedArray hMipmappedArray,
                                               unsigned int level) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  MipmappedArray *M = MipmappedArray::lookup(hMipmappedArray);
  if (!M)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!pLevelArray || level >= M->levels())
    return CUDA_ERROR_INVALID_VALUE;
  *pLevelArray = reinterpret_cast<CUarray>(M->level(level));
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  return boundary([&] { return toResult(MipmappedArray::destroy(hMipmappedArray)); });
}

PTXFORGE_API CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *pArrayDescriptor, CUarray hArray) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Array *A = Array::lookup(hArray);
  if (!A)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!pArrayDescriptor)
    return CUDA_ERROR_INVALID_VALUE;
  const ArrayShape &S = A->shape();
  *pArrayDescriptor = {};
  pArrayDescriptor->Width = S.Width, pArrayDescriptor->Height = S.Height, pArrayDescriptor->Depth = S.Depth;
  pArrayDescriptor->Format = arrayFormat(S.Format), pArrayDescriptor->NumChannels = S.Channels;
  pArrayDescriptor->Flags =
      (S.Layered ? CUDA_ARRAY3D_LAYERED : 0) | (S.SurfaceLoadStore ? CUDA_ARRAY3D_SURFACE_LDST : 0) |
      (S.TextureGather ? CUDA_ARRAY3D_TEXTURE_GATHER : 0) | (S.Cubemap ? CUDA_ARRAY3D_CUBEMAP : 0);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *pArrayDescriptor, CUarray hArray) {
  CUDA_ARRAY3D_DESCRIPTOR D;
  if (CUresult R = cuArray3DGetDescriptor_v2(pArrayDescriptor ? &D : nullptr, hArray))
    return R;
  // NVIDIA's driver answers for a 2D view of any array: the height, without depth or flags.
  pArrayDescriptor->Width = D.Width, pArrayDescriptor->Height = D.Height;
  pArrayDescriptor->Format = D.Format, pArrayDescriptor->NumChannels = D.NumChannels;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuTexObjectCreate(CUtexObject *pTexObject, const CUDA_RESOURCE_DESC *pResDesc,
                                        const CUDA_TEXTURE_DESC *pTexDesc,
                                        const CUDA_RESOURCE_VIEW_DESC *pResViewDesc) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  if (!pTexObject || !pResDesc || !pTexDesc)
    return CUDA_ERROR_INVALID_VALUE;
  if (pResViewDesc)
    return CUDA_ERROR_NOT_SUPPORTED; // resource views (format reinterpretation, mipmap/layer ranges)
  codegen::TextureDescriptor D;
  if (CUresult R = resourceDescriptor(*pResDesc, false, D))
    return R;
  if (CUresult R = samplerDescriptor(*pTexDesc, D))
    return R;
  return boundary([&] { return registerObject(pTexObject, D, {*pResDesc, *pTexDesc, false}); });
}

PTXFORGE_API CUresult cuTexObjectDestroy(CUtexObject texObject) { return destroyObject(texObject, false); }

PTXFORGE_API CUresult cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC *pResDesc, CUtexObject texObject) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  std::lock_guard<std::mutex> G(ObjectsLock);
  const ObjectRecord *R = findObject(texObject, false);
  if (!pResDesc || !R)
    return CUDA_ERROR_INVALID_VALUE;
  *pResDesc = R->Resource;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC *pTexDesc, CUtexObject texObject) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  std::lock_guard<std::mutex> G(ObjectsLock);
  const ObjectRecord *R = findObject(texObject, false);
  if (!pTexDesc || !R)
    return CUDA_ERROR_INVALID_VALUE;
  *pTexDesc = R->Texture;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuSurfObjectCreate(CUsurfObject *pSurfObject, const CUDA_RESOURCE_DESC *pResDesc) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  if (!pSurfObject || !pResDesc)
    return CUDA_ERROR_INVALID_VALUE;
  codegen::TextureDescriptor D;
  if (CUresult R = resourceDescriptor(*pResDesc, true, D))
    return R;
  D.IsSurface = true;
  return boundary([&] { return registerObject(pSurfObject, D, {*pResDesc, CUDA_TEXTURE_DESC{}, true}); });
}

PTXFORGE_API CUresult cuSurfObjectDestroy(CUsurfObject surfObject) { return destroyObject(surfObject, true); }

PTXFORGE_API CUresult cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC *pResDesc, CUsurfObject surfObject) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  std::lock_guard<std::mutex> G(ObjectsLock);
  const ObjectRecord *R = findObject(surfObject, true);
  if (!pResDesc || !R)
    return CUDA_ERROR_INVALID_VALUE;
  *pResDesc = R->Resource;
  return CUDA_SUCCESS;
}

// =====================================================================================================
// Entry points not implemented: CUDA_ERROR_NOT_SUPPORTED, arguments untouched
// =====================================================================================================
// Graphs and stream capture (the core is lib/Graph.cpp and lib/Capture.cpp)
// =====================================================================================================

namespace {
Registry<GraphExec> &liveExecs() {
  static Registry<GraphExec> &R = *new Registry<GraphExec>;
  return R;
}
Graph *unwrap(CUgraph H) { return Graph::isLive(H) ? reinterpret_cast<Graph *>(H) : nullptr; }
GraphNode *unwrap(CUgraphNode H) { return GraphNode::isLive(H) ? reinterpret_cast<GraphNode *>(H) : nullptr; }
GraphExec *unwrap(CUgraphExec H) { return liveExecs().contains(H) ? reinterpret_cast<GraphExec *>(H) : nullptr; }
CUgraph wrap(Graph *P) { return reinterpret_cast<CUgraph>(P); }
CUgraphNode wrap(GraphNode *P) { return reinterpret_cast<CUgraphNode>(P); }

/// The nodes of G a caller names as dependencies (InvalidValue for a null array with a count, or a bogus node).
CUresult dependencyList(const CUgraphNode *Deps, size_t Count, std::vector<GraphNode *> &Out) {
  if (Count && !Deps)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t I = 0; I < Count; ++I) {
    GraphNode *N = unwrap(Deps[I]);
    if (!N)
      return CUDA_ERROR_INVALID_VALUE;
    Out.push_back(N);
  }
  return CUDA_SUCCESS;
}

/// Adds a node of type T to hGraph after the dependencies; Fill checks the parameters and sets the node up.
template <class F>
CUresult addNode(CUgraphNode *Out, CUgraph hGraph, const CUgraphNode *Deps, size_t Count, NodeType T, F &&Fill) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Graph *G = unwrap(hGraph);
  if (!Out || !G)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    std::vector<GraphNode *> List;
    if (CUresult R = dependencyList(Deps, Count, List))
      return R;
    auto N = G->addNode(T, List);
    if (!N)
      return toResult(N.takeError());
    if (CUresult R = Fill(**N)) {
      G->destroyNode(*N);
      return R;
    }
    *Out = wrap(*N);
    return CUDA_SUCCESS;
  });
}

/// Node hNode of type T, or null.
GraphNode *nodeOfType(CUgraphNode hNode, NodeType T) {
  GraphNode *N = unwrap(hNode);
  return N && N->type() == T ? N : nullptr;
}

/// A kernel node's parameters from CUDA_KERNEL_NODE_PARAMS (v1 is v2's prefix; kern and ctx only in v2).
CUresult kernelParams(const CUDA_KERNEL_NODE_PARAMS *P, bool V2, KernelNodeParams &Out) {
  if (!P)
    return CUDA_ERROR_INVALID_VALUE;
  Function *Fn = unwrap(P->func);
  if (!P->func && V2 && P->kern)
    Fn = unwrap(reinterpret_cast<CUfunction>(P->kern));
  if (!Fn)
    return CUDA_ERROR_INVALID_VALUE;
  if (P->kernelParams && P->extra)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult R = CUDA_SUCCESS;
  std::vector<char> Params;
  if (codegen::runWithFaultGuard([&] { R = packLaunchParams(*Fn, P->kernelParams, P->extra, Params); }))
    return CUDA_ERROR_INVALID_VALUE;
  if (R != CUDA_SUCCESS)
    return R;
  codegen::LaunchConfig C;
  C.Grid = {P->gridDimX, P->gridDimY, P->gridDimZ};
  C.Block = {P->blockDimX, P->blockDimY, P->blockDimZ};
  C.DynamicSharedBytes = P->sharedMemBytes;
  if (llvm::Error E = Fn->checkLaunch(C))
    return toResult(std::move(E));
  Out.Fn = Fn, Out.Config = C, Out.Params = std::move(Params), Out.Kind = LaunchKind::Normal;
  return CUDA_SUCCESS;
}

CUresult memsetParams(const CUDA_MEMSET_NODE_PARAMS *P, MemsetNodeParams &Out) {
  if (!P)
    return CUDA_ERROR_INVALID_VALUE;
  if (llvm::Error E = checkFill(P->dst, P->pitch, P->elementSize, P->width, P->height))
    return toResult(std::move(E));
  Out = {P->dst, P->pitch, P->value, P->elementSize, P->width, P->height};
  return CUDA_SUCCESS;
}

CUresult memcpyParams(const CUDA_MEMCPY3D *P, CopyRegion &Out) {
  if (CUresult R = copyRegion3D(P, Out))
    return R;
  return toResult(checkCopy(Out));
}

CUmemorytype memoryTypeOf(Side S) {
  return S == Side::Host ? CU_MEMORYTYPE_HOST : S == Side::Device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_UNIFIED;
}

/// Writes Items to Out (when given; at most *Count of them) and their number to *Count, as the graph queries do.
template <class T, class U> CUresult listOut(const std::vector<T> &Items, U *Out, size_t *Count, U (*Conv)(const T &)) {
  if (!Count)
    return CUDA_ERROR_INVALID_VALUE;
  if (Out) {
    for (size_t I = 0; I < Items.size() && I < *Count; ++I)
      Out[I] = Conv(Items[I]);
    for (size_t I = Items.size(); I < *Count; ++I)
      Out[I] = U{};
  }
  *Count = Items.size();
  return CUDA_SUCCESS;
}
CUgraphNode nodeHandle(GraphNode *const &N) { return wrap(N); }

/// cuGraphGetEdges, cuGraphNodeGetDependencies, cuGraphNodeGetDependentNodes: edge data is all zero here.
void zeroEdgeData(CUgraphEdgeData *Data, size_t N) {
  if (Data)
    std::memset(Data, 0, N * sizeof(CUgraphEdgeData));
}

/// Edge data must be all zero: ptxforge's edges carry no ports (as cuGraphAddDependencies_v2 checks).
bool edgeDataIsZero(const CUgraphEdgeData *Data, size_t N) {
  for (size_t I = 0; Data && I < N; ++I)
    if (Data[I].from_port || Data[I].to_port || Data[I].type)
      return false;
  return true;
}

CUresult captureMode(CUstreamCaptureMode M, CaptureMode &Out) {
  if (M != CU_STREAM_CAPTURE_MODE_GLOBAL && M != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
      M != CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_ERROR_INVALID_VALUE;
  Out = static_cast<CaptureMode>(M);
  return CUDA_SUCCESS;
}
} // namespace

PTXFORGE_API CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  CaptureMode M;
  if (CUresult R = captureMode(mode, M))
    return R;
  return boundary([&] { return toResult(beginCapture(S, M)); });
}
PTXFORGE_API CUresult cuStreamBeginCapture(CUstream hStream) {
  return cuStreamBeginCapture_v2(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL);
}
PTXFORGE_SAME_ENTRY(cuStreamBeginCapture_v2_ptsz, cuStreamBeginCapture_v2)
PTXFORGE_SAME_ENTRY(cuStreamBeginCapture_ptsz, cuStreamBeginCapture)

PTXFORGE_API CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  return boundary([&] {
    CaptureInfo I = captureInfo(S);
    if (!phGraph && !I.IntoGraph) // a capture into the program's graph needs no output
      return CUDA_ERROR_INVALID_VALUE;
    if (phGraph)
      *phGraph = nullptr;
    auto G = endCapture(S);
    if (!G)
      return toResult(G.takeError());
    if (phGraph)
      *phGraph = *G ? wrap(G->release()) : wrap(I.G);
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
                                                  const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                                  CUstreamCaptureMode mode) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  Graph *G = unwrap(hGraph);
  CaptureMode M;
  if (!G || !edgeDataIsZero(dependencyData, numDependencies))
    return CUDA_ERROR_INVALID_VALUE;
  if (CUresult R = captureMode(mode, M))
    return R;
  return boundary([&] {
    std::vector<GraphNode *> Deps;
    if (CUresult R = dependencyList(dependencies, numDependencies, Deps))
      return R;
    return toResult(beginCapture(S, M, G, Deps));
  });
}
PTXFORGE_SAME_ENTRY(cuStreamBeginCaptureToGraph_ptsz, cuStreamBeginCaptureToGraph)
PTXFORGE_SAME_ENTRY(cuStreamEndCapture_ptsz, cuStreamEndCapture)

PTXFORGE_API CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode) {
  if (!mode)
    return CUDA_ERROR_INVALID_VALUE;
  CaptureMode M;
  if (CUresult R = captureMode(*mode, M))
    return R;
  *mode = static_cast<CUstreamCaptureMode>(exchangeThreadCaptureMode(M));
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuStreamUpdateCaptureDependencies_v2(CUstream hStream, CUgraphNode *dependencies,
                                                           const CUgraphEdgeData *, size_t numDependencies,
                                                           unsigned int flags) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  if (flags > CU_STREAM_SET_CAPTURE_DEPENDENCIES)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    std::vector<GraphNode *> List;
    if (CUresult R = dependencyList(dependencies, numDependencies, List))
      return R;
    return toResult(updateCaptureDependencies(S, List, flags == CU_STREAM_ADD_CAPTURE_DEPENDENCIES));
  });
}
PTXFORGE_API CUresult cuStreamUpdateCaptureDependencies(CUstream hStream, CUgraphNode *dependencies,
                                                        size_t numDependencies, unsigned int flags) {
  return cuStreamUpdateCaptureDependencies_v2(hStream, dependencies, nullptr, numDependencies, flags);
}
PTXFORGE_SAME_ENTRY(cuStreamUpdateCaptureDependencies_v2_ptsz, cuStreamUpdateCaptureDependencies_v2)
PTXFORGE_SAME_ENTRY(cuStreamUpdateCaptureDependencies_ptsz, cuStreamUpdateCaptureDependencies)

PTXFORGE_API CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  if (!dptr || !bytesize)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    auto P = allocateAsync(*Ctx, S, bytesize);
    if (!P)
      return toResult(P.takeError());
    *dptr = *P;
    return CUDA_SUCCESS;
  });
}
PTXFORGE_SAME_ENTRY(cuMemAllocAsync_ptsz, cuMemAllocAsync)

PTXFORGE_API CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  MemPool *Pool = MemPool::lookup(pool);
  if (!dptr || !bytesize || !Pool)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    auto P = allocateAsync(*Ctx, S, bytesize, Pool);
    if (!P)
      return toResult(P.takeError());
    *dptr = *P;
    return CUDA_SUCCESS;
  });
}
PTXFORGE_SAME_ENTRY(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync)

// ---- managed memory hints: device memory is the host's, so nothing moves; the arguments are checked ----
namespace {

/// [P, P+Count) must lie in one managed allocation (Count 0: P starts one), as the hints require.
CUresult managedRange(CUdeviceptr P, size_t Count) {
  auto A = DeviceMemory::get().find(P);
  if (!A || A->Kind != MemoryKind::Managed || (Count ? !A->contains(P, Count) : A->Base != P))
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

CUresult hintLocation(const CUmemLocation &L) {
  if (L.type == CU_MEM_LOCATION_TYPE_HOST || L.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT ||
      (L.type == CU_MEM_LOCATION_TYPE_HOST_NUMA && L.id == 0))
    return CUDA_SUCCESS;
  if (L.type != CU_MEM_LOCATION_TYPE_DEVICE)
    return CUDA_ERROR_INVALID_VALUE;
  return validDevice(L.id) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUmemLocation deviceLocation(CUdevice D) {
  CUmemLocation L;
  L.type = D == CU_DEVICE_CPU ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
  L.id = D == CU_DEVICE_CPU ? 0 : D;
  return L;
}

} // namespace

PTXFORGE_API CUresult cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST && flags != CU_MEM_ATTACH_SINGLE)
    return CUDA_ERROR_INVALID_VALUE;
  // The length is 0 or the whole allocation (CUDA's rule); single-stream attachment needs a stream.
  auto A = DeviceMemory::get().find(dptr);
  if (!A || A->Kind != MemoryKind::Managed || A->Base != dptr || (length && length != A->Size) ||
      (flags == CU_MEM_ATTACH_SINGLE && !S))
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}
PTXFORGE_SAME_ENTRY(cuStreamAttachMemAsync_ptsz, cuStreamAttachMemAsync)

PTXFORGE_API CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                            unsigned int flags, CUstream hStream) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  if (flags || !count)
    return CUDA_ERROR_INVALID_VALUE;
  if (CUresult R = hintLocation(location))
    return R;
  return managedRange(devPtr, count);
}
PTXFORGE_SAME_ENTRY(cuMemPrefetchAsync_v2_ptsz, cuMemPrefetchAsync_v2)

PTXFORGE_API CUresult cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream) {
  return cuMemPrefetchAsync_v2(devPtr, count, deviceLocation(dstDevice), 0, hStream);
}
PTXFORGE_SAME_ENTRY(cuMemPrefetchAsync_ptsz, cuMemPrefetchAsync)

PTXFORGE_API CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY || !count)
    return CUDA_ERROR_INVALID_VALUE;
  // Read-mostly advice ignores the location; the others name one.
  if (advice != CU_MEM_ADVISE_SET_READ_MOSTLY && advice != CU_MEM_ADVISE_UNSET_READ_MOSTLY)
    if (CUresult R = hintLocation(location))
      return R;
  return managedRange(devPtr, count);
}

PTXFORGE_API CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device) {
  return cuMemAdvise_v2(devPtr, count, advice, deviceLocation(device));
}

// ---- memory pools (MemPool.h: a pool keeps no memory of its own, so reserved = used) ----
namespace {

CUresult poolArg(CUmemoryPool H, MemPool *&Out) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Out = MemPool::lookup(H);
  return Out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/// A pool location must name a device (host pools are not implemented).
CUresult poolLocation(const CUmemLocation &L) {
  if (L.type == CU_MEM_LOCATION_TYPE_HOST || L.type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
      L.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
    return CUDA_ERROR_NOT_SUPPORTED;
  return L.type == CU_MEM_LOCATION_TYPE_DEVICE && validDevice(L.id) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

} // namespace

PTXFORGE_API CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev) {
  if (CUresult R = checkDeviceQuery(dev, {pool_out}))
    return R;
  *pool_out = reinterpret_cast<CUmemoryPool>(&MemPool::defaultPool(dev));
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev) {
  if (CUresult R = checkDeviceQuery(dev, {pool}))
    return R;
  *pool = reinterpret_cast<CUmemoryPool>(&MemPool::current(dev));
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) {
  MemPool *P;
  if (CUresult R = poolArg(pool, P))
    return R;
  if (!validDevice(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  if (P->device() != dev)
    return CUDA_ERROR_INVALID_VALUE; // a pool serves the device it lives on
  MemPool::setCurrent(dev, *P);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!pool || !poolProps || poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
    return CUDA_ERROR_INVALID_VALUE;
  if (CUresult R = poolLocation(poolProps->location))
    return R;
  if (poolProps->handleTypes != CU_MEM_HANDLE_TYPE_NONE)
    return CUDA_ERROR_NOT_SUPPORTED; // IPC: nothing to share memory with
  *pool = reinterpret_cast<CUmemoryPool>(MemPool::create(poolProps->location.id));
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  MemPool *P;
  if (CUresult R = poolArg(pool, P))
    return R;
  return toResult(MemPool::destroy(*P));
}

PTXFORGE_API CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value) {
  MemPool *P;
  if (CUresult R = poolArg(pool, P))
    return R;
  if (!value)
    return CUDA_ERROR_INVALID_VALUE;
  MemPool::Policy Pol = P->policy();
  int Flag = *static_cast<int *>(value);
  switch (attr) {
  case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    Pol.FollowEventDependencies = Flag != 0;
    break;
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    Pol.AllowOpportunistic = Flag != 0;
    break;
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
    Pol.AllowInternalDependencies = Flag != 0;
    break;
  case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
    Pol.ReleaseThreshold = *static_cast<cuuint64_t *>(value);
    break;
  case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
  case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
    // Only a reset to zero is allowed; it restarts the high-water mark at the current use.
    if (*static_cast<cuuint64_t *>(value) != 0)
      return CUDA_ERROR_INVALID_VALUE;
    P->resetHigh();
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE; // the current amounts are read-only
  }
  P->setPolicy(Pol);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value) {
  MemPool *P;
  if (CUresult R = poolArg(pool, P))
    return R;
  if (!value)
    return CUDA_ERROR_INVALID_VALUE;
  MemPool::Policy Pol = P->policy();
  MemPool::Usage U = P->used();
  switch (attr) {
  case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    return put<int>(value, Pol.FollowEventDependencies), CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    return put<int>(value, Pol.AllowOpportunistic), CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
    return put<int>(value, Pol.AllowInternalDependencies), CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
    return put<cuuint64_t>(value, Pol.ReleaseThreshold), CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
  case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
    return put<cuuint64_t>(value, U.Current), CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
  case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
    return put<cuuint64_t>(value, U.High), CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

PTXFORGE_API CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t) {
  MemPool *P;
  return poolArg(pool, P); // nothing is reserved beyond what allocations use
}

PTXFORGE_API CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count) {
  MemPool *P;
  if (CUresult R = poolArg(pool, P))
    return R;
  if (count && !map)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t I = 0; I < count; ++I) {
    if (CUresult R = poolLocation(map[I].location))
      return R;
    unsigned F = map[I].flags;
    if (F != CU_MEM_ACCESS_FLAGS_PROT_NONE && F != CU_MEM_ACCESS_FLAGS_PROT_READ &&
        F != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      return CUDA_ERROR_INVALID_VALUE;
    // The pool's own device always has read-write access.
    if (map[I].location.id == P->device() && F != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      return CUDA_ERROR_INVALID_DEVICE;
  }
  for (size_t I = 0; I < count; ++I)
    if (map[I].location.id != P->device())
      P->setAccess(map[I].location.id, map[I].flags);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool, CUmemLocation *location) {
  MemPool *P;
  if (CUresult R = poolArg(memPool, P))
    return R;
  if (!flags || !location)
    return CUDA_ERROR_INVALID_VALUE;
  if (CUresult R = poolLocation(*location))
    return R;
  *flags = static_cast<CUmemAccess_flags>(P->access(location->id));
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  if (!dptr)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] { return toResult(freeAsync(*Ctx, S, dptr)); });
}
PTXFORGE_SAME_ENTRY(cuMemFreeAsync_ptsz, cuMemFreeAsync)

PTXFORGE_API CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!phGraph || flags)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    *phGraph = wrap(new Graph);
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuGraphDestroy(CUgraph hGraph) {
  Graph *G = unwrap(hGraph);
  if (!G || G->parent()) // a conditional node's body lives and dies with its node
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    delete G;
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph) {
  Graph *G = unwrap(originalGraph);
  if (!phGraphClone || !G)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    if (G->hasConditional()) // as NVIDIA's driver refuses it
      return CUDA_ERROR_NOT_SUPPORTED;
    *phGraphClone = wrap(G->clone().release());
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuGraphNodeFindInClone(CUgraphNode *phNode, CUgraphNode hOriginalNode, CUgraph hClonedGraph) {
  Graph *G = unwrap(hClonedGraph);
  if (!phNode || !G || !hOriginalNode)
    return CUDA_ERROR_INVALID_VALUE;
  GraphNode *N = G->cloneOf(reinterpret_cast<GraphNode *>(hOriginalNode));
  if (!N)
    return CUDA_ERROR_INVALID_VALUE;
  *phNode = wrap(N);
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                              size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *nodeParams) {
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, NodeType::Kernel,
                 [&](GraphNode &N) { return kernelParams(nodeParams, true, N.Kernel); });
}
PTXFORGE_API CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                           size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams) {
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, NodeType::Kernel, [&](GraphNode &N) {
    return kernelParams(reinterpret_cast<const CUDA_KERNEL_NODE_PARAMS *>(nodeParams), false, N.Kernel);
  });
}

namespace {
CUresult kernelNodeGet(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *P, bool V2) {
  GraphNode *N = nodeOfType(hNode, NodeType::Kernel);
  if (!N || !P)
    return CUDA_ERROR_INVALID_VALUE;
  const KernelNodeParams &K = N->Kernel;
  // kernelParams points into the node's own argument buffer, one pointer per parameter, valid while the node is.
  thread_local std::vector<void *> Pointers;
  Pointers.clear();
  for (const auto &Param : K.Fn->info().Params)
    Pointers.push_back(const_cast<char *>(K.Params.data()) + Param.Offset);
  P->func = wrap(K.Fn);
  P->gridDimX = K.Config.Grid.X, P->gridDimY = K.Config.Grid.Y, P->gridDimZ = K.Config.Grid.Z;
  P->blockDimX = K.Config.Block.X, P->blockDimY = K.Config.Block.Y, P->blockDimZ = K.Config.Block.Z;
  P->sharedMemBytes = K.Config.DynamicSharedBytes;
  P->kernelParams = Pointers.data();
  P->extra = nullptr;
  if (V2) {
    P->kern = nullptr;
    P->ctx = wrap(&K.Fn->module().context());
  }
  return CUDA_SUCCESS;
}
} // namespace

PTXFORGE_API CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *nodeParams) {
  return boundary([&] { return kernelNodeGet(hNode, nodeParams, true); });
}
PTXFORGE_API CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams) {
  return boundary([&] { return kernelNodeGet(hNode, reinterpret_cast<CUDA_KERNEL_NODE_PARAMS *>(nodeParams), false); });
}
PTXFORGE_API CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS *nodeParams) {
  GraphNode *N = nodeOfType(hNode, NodeType::Kernel);
  if (!N)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] { return kernelParams(nodeParams, true, N->Kernel); });
}
PTXFORGE_API CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams) {
  GraphNode *N = nodeOfType(hNode, NodeType::Kernel);
  if (!N)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary(
      [&] { return kernelParams(reinterpret_cast<const CUDA_KERNEL_NODE_PARAMS *>(nodeParams), false, N->Kernel); });
}

PTXFORGE_API CUresult cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                           size_t numDependencies, const CUDA_MEMCPY3D *copyParams, CUcontext) {
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, NodeType::Memcpy,
                 [&](GraphNode &N) { return memcpyParams(copyParams, N.Copy); });
}
PTXFORGE_API CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D *nodeParams) {
  GraphNode *N = nodeOfType(hNode, NodeType::Memcpy);
  if (!N || !nodeParams)
    return CUDA_ERROR_INVALID_VALUE;
  const CopyRegion &R = N->Copy;
  CUDA_MEMCPY3D C = {};
  C.srcMemoryType = memoryTypeOf(R.SrcSide), C.dstMemoryType = memoryTypeOf(R.DstSide);
  C.srcHost = reinterpret_cast<const void *>(R.Src), C.srcDevice = R.Src;
  C.dstHost = reinterpret_cast<void *>(R.Dst), C.dstDevice = R.Dst;
  C.srcPitch = R.SrcPitch, C.dstPitch = R.DstPitch, C.srcHeight = R.SrcHeight, C.dstHeight = R.DstHeight;
  C.WidthInBytes = R.Width, C.Height = R.Height, C.Depth = R.Depth;
  *nodeParams = C;
  return CUDA_SUCCESS;
}
PTXFORGE_API CUresult cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D *nodeParams) {
  GraphNode *N = nodeOfType(hNode, NodeType::Memcpy);
  if (!N)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] { return memcpyParams(nodeParams, N->Copy); });
}

PTXFORGE_API CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                           size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS *memsetParams_,
                                           CUcontext) {
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, NodeType::Memset,
                 [&](GraphNode &N) { return memsetParams(memsetParams_, N.Memset); });
}
PTXFORGE_API CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS *nodeParams) {
  GraphNode *N = nodeOfType(hNode, NodeType::Memset);
  if (!N || !nodeParams)
    return CUDA_ERROR_INVALID_VALUE;
  const MemsetNodeParams &M = N->Memset;
  *nodeParams = {M.Dst, M.Pitch, M.Value, M.ElementBytes, M.Width, M.Height};
  return CUDA_SUCCESS;
}
PTXFORGE_API CUresult cuGraphMemsetNodeSetParams(CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS *nodeParams) {
  GraphNode *N = nodeOfType(hNode, NodeType::Memset);
  if (!N)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] { return memsetParams(nodeParams, N->Memset); });
}

namespace {
CUresult hostParams(const CUDA_HOST_NODE_PARAMS *P, HostNodeParams &Out) {
  if (!P || !P->fn)
    return CUDA_ERROR_INVALID_VALUE;
  Out = {P->fn, P->userData};
  return CUDA_SUCCESS;
}
} // namespace

PTXFORGE_API CUresult cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                         size_t numDependencies, const CUDA_HOST_NODE_PARAMS *nodeParams) {
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, NodeType::Host,
                 [&](GraphNode &N) { return hostParams(nodeParams, N.Host); });
}
PTXFORGE_API CUresult cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS *nodeParams) {
  GraphNode *N = nodeOfType(hNode, NodeType::Host);
  if (!N || !nodeParams)
    return CUDA_ERROR_INVALID_VALUE;
  *nodeParams = {N->Host.Fn, N->Host.UserData};
  return CUDA_SUCCESS;
}
PTXFORGE_API CUresult cuGraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS *nodeParams) {
  GraphNode *N = nodeOfType(hNode, NodeType::Host);
  return N ? hostParams(nodeParams, N->Host) : CUDA_ERROR_INVALID_VALUE;
}

namespace {
/// A child graph node's graph: a copy of hChild, which must not hold conditional nodes.
CUresult childParams(CUgraph hChild, GraphNode &N) {
  Graph *Child = unwrap(hChild);
  if (!Child || Child == &N.graph())
    return CUDA_ERROR_INVALID_VALUE;
  if (Child->hasConditional())
    return CUDA_ERROR_NOT_SUPPORTED;
  N.Child = Child->clone();
  return CUDA_SUCCESS;
}
} // namespace

PTXFORGE_API CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                               const CUgraphNode *dependencies, size_t numDependencies,
                                               CUgraph childGraph) {
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, NodeType::ChildGraph,
                 [&](GraphNode &N) { return childParams(childGraph, N); });
}
PTXFORGE_API CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *phGraph) {
  GraphNode *N = nodeOfType(hNode, NodeType::ChildGraph);
  if (!N || !phGraph)
    return CUDA_ERROR_INVALID_VALUE;
  *phGraph = wrap(N->Child.get());
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                          size_t numDependencies) {
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, NodeType::Empty,
                 [](GraphNode &) { return CUDA_SUCCESS; });
}

PTXFORGE_API CUresult cuGraphConditionalHandleCreate(CUgraphConditionalHandle *pHandle_out, CUgraph hGraph, CUcontext,
                                                     unsigned int defaultLaunchValue, unsigned int flags) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Graph *G = unwrap(hGraph);
  if (!pHandle_out || !G || (flags & ~CU_GRAPH_COND_ASSIGN_DEFAULT))
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    *pHandle_out = G->createConditional(defaultLaunchValue, flags)->value();
    return CUDA_SUCCESS;
  });
}

namespace {
/// A conditional node (cuGraphAddNode): the handle must be of the node's graph or one it is nested in, and the
/// body count fit the type (as an H100 checks: tests/cudart/graph_conditional.cu). The bodies are handed out
/// through P.phGraph_out.
CUresult conditionalParams(CUDA_CONDITIONAL_NODE_PARAMS &P, GraphNode &N) {
  std::shared_ptr<ConditionalHandle> H = N.graph().findConditional(P.handle);
  bool SizeFits = (P.type == CU_GRAPH_COND_TYPE_IF && (P.size == 1 || P.size == 2)) ||
                  (P.type == CU_GRAPH_COND_TYPE_WHILE && P.size == 1) ||
                  (P.type == CU_GRAPH_COND_TYPE_SWITCH && P.size >= 1 && P.size <= 0x10000);
  if (!H || !SizeFits)
    return CUDA_ERROR_INVALID_VALUE;
  N.Conditional.Handle = std::move(H);
  N.Conditional.Type = static_cast<ConditionalType>(P.type);
  N.graph().makeBodies(N, P.size);
  P.phGraph_out = reinterpret_cast<CUgraph *>(N.Conditional.BodyList.data());
  return CUDA_SUCCESS;
}

static_assert(sizeof(CUDA_MEM_ALLOC_NODE_PARAMS_v2) == sizeof(CUDA_MEM_ALLOC_NODE_PARAMS));

/// CUgraphNodeParams' reserved fields must be zero (NVIDIA's driver checks them: tests/cudart/graph_node_params.cu).
bool reservedZero(const CUgraphNodeParams *P) {
  return P && !P->reserved0[0] && !P->reserved0[1] && !P->reserved0[2] && !P->reserved2;
}
} // namespace

PTXFORGE_API CUresult cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                        const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                        CUgraphNodeParams *nodeParams) {
  if (!reservedZero(nodeParams) || !edgeDataIsZero(dependencyData, numDependencies))
    return CUDA_ERROR_INVALID_VALUE;
  CUgraphNodeParams &P = *nodeParams;
  switch (P.type) {
  case CU_GRAPH_NODE_TYPE_KERNEL:
    return cuGraphAddKernelNode_v2(phGraphNode, hGraph, dependencies, numDependencies, &P.kernel);
  case CU_GRAPH_NODE_TYPE_MEMCPY:
    if (P.memcpy.flags || P.memcpy.reserved)
      return CUDA_ERROR_INVALID_VALUE;
    return cuGraphAddMemcpyNode(phGraphNode, hGraph, dependencies, numDependencies, &P.memcpy.copyParams,
                                P.memcpy.copyCtx);
  case CU_GRAPH_NODE_TYPE_MEMSET: // v2 is v1 and a context
    return cuGraphAddMemsetNode(phGraphNode, hGraph, dependencies, numDependencies,
                                reinterpret_cast<const CUDA_MEMSET_NODE_PARAMS *>(&P.memset), P.memset.ctx);
  case CU_GRAPH_NODE_TYPE_HOST:
    return cuGraphAddHostNode(phGraphNode, hGraph, dependencies, numDependencies, &P.host);
  case CU_GRAPH_NODE_TYPE_GRAPH:
    if (P.graph.ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE)
      return CUDA_ERROR_NOT_SUPPORTED; // moving a graph into its parent: not implemented (README)
    return cuGraphAddChildGraphNode(phGraphNode, hGraph, dependencies, numDependencies, P.graph.graph);
  case CU_GRAPH_NODE_TYPE_EMPTY:
    return cuGraphAddEmptyNode(phGraphNode, hGraph, dependencies, numDependencies);
  case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
    return cuGraphAddEventWaitNode(phGraphNode, hGraph, dependencies, numDependencies, P.eventWait.event);
  case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
    return cuGraphAddEventRecordNode(phGraphNode, hGraph, dependencies, numDependencies, P.eventRecord.event);
  case CU_GRAPH_NODE_TYPE_CONDITIONAL:
    return addNode(phGraphNode, hGraph, dependencies, numDependencies, NodeType::Conditional,
                   [&](GraphNode &N) { return conditionalParams(P.conditional, N); });
  case CU_GRAPH_NODE_TYPE_MEM_ALLOC: // v2 is v1 field for field
    return cuGraphAddMemAllocNode(phGraphNode, hGraph, dependencies, numDependencies,
                                  reinterpret_cast<CUDA_MEM_ALLOC_NODE_PARAMS *>(&P.alloc));
  case CU_GRAPH_NODE_TYPE_MEM_FREE:
    return cuGraphAddMemFreeNode(phGraphNode, hGraph, dependencies, numDependencies, P.free.dptr);
  case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL: // node kinds ptxforge lacks (README)
  case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT:
  case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  return CUDA_ERROR_INVALID_VALUE;
}
PTXFORGE_API CUresult cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                     size_t numDependencies, CUgraphNodeParams *nodeParams) {
  return cuGraphAddNode_v2(phGraphNode, hGraph, dependencies, nullptr, numDependencies, nodeParams);
}

namespace {
CUresult addEventNode(CUgraphNode *Out, CUgraph G, const CUgraphNode *Deps, size_t Count, CUevent hEvent, NodeType T) {
  Event *E = unwrap(hEvent);
  return addNode(Out, G, Deps, Count, T, [&](GraphNode &N) {
    if (!E)
      return CUDA_ERROR_INVALID_VALUE;
    N.Ev = E;
    return CUDA_SUCCESS;
  });
}
CUresult eventOf(CUgraphNode hNode, NodeType T, CUevent *Out) {
  GraphNode *N = nodeOfType(hNode, T);
  if (!N || !Out)
    return CUDA_ERROR_INVALID_VALUE;
  *Out = wrap(N->Ev);
  return CUDA_SUCCESS;
}
CUresult setEventOf(GraphNode *N, NodeType T, CUevent hEvent) {
  Event *E = unwrap(hEvent);
  if (!N || N->type() != T || !E)
    return CUDA_ERROR_INVALID_VALUE;
  N->Ev = E;
  return CUDA_SUCCESS;
}
} // namespace

PTXFORGE_API CUresult cuGraphAddEventRecordNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                                const CUgraphNode *dependencies, size_t numDependencies,
                                                CUevent event) {
  return addEventNode(phGraphNode, hGraph, dependencies, numDependencies, event, NodeType::EventRecord);
}
PTXFORGE_API CUresult cuGraphAddEventWaitNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                              size_t numDependencies, CUevent event) {
  return addEventNode(phGraphNode, hGraph, dependencies, numDependencies, event, NodeType::WaitEvent);
}
PTXFORGE_API CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent *event_out) {
  return eventOf(hNode, NodeType::EventRecord, event_out);
}
PTXFORGE_API CUresult cuGraphEventWaitNodeGetEvent(CUgraphNode hNode, CUevent *event_out) {
  return eventOf(hNode, NodeType::WaitEvent, event_out);
}
PTXFORGE_API CUresult cuGraphEventRecordNodeSetEvent(CUgraphNode hNode, CUevent event) {
  return setEventOf(unwrap(hNode), NodeType::EventRecord, event);
}
PTXFORGE_API CUresult cuGraphEventWaitNodeSetEvent(CUgraphNode hNode, CUevent event) {
  return setEventOf(unwrap(hNode), NodeType::WaitEvent, event);
}

PTXFORGE_API CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                             size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams) {
  Context *Ctx;
  if (CUresult R = current(Ctx))
    return R;
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, NodeType::MemAlloc, [&](GraphNode &N) {
    if (!nodeParams || !nodeParams->bytesize || nodeParams->poolProps.handleTypes != CU_MEM_HANDLE_TYPE_NONE ||
        nodeParams->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        (nodeParams->accessDescCount && !nodeParams->accessDescs))
      return CUDA_ERROR_INVALID_VALUE;
    auto A = GraphAllocation::create(*Ctx, nodeParams->bytesize);
    if (!A)
      return toResult(A.takeError());
    N.Alloc = std::move(*A);
    nodeParams->dptr = N.Alloc->address(); // the address goes back in the caller's struct, as NVIDIA's does
    return CUDA_SUCCESS;
  });
}
PTXFORGE_API CUresult cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *params_out) {
  GraphNode *N = nodeOfType(hNode, NodeType::MemAlloc);
  if (!N || !params_out)
    return CUDA_ERROR_INVALID_VALUE;
  *params_out = {};
  params_out->poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  params_out->poolProps.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  params_out->bytesize = N->Alloc->size();
  params_out->dptr = N->Alloc->address();
  return CUDA_SUCCESS;
}
PTXFORGE_API CUresult cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                            size_t numDependencies, CUdeviceptr dptr) {
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, NodeType::MemFree, [&](GraphNode &N) {
    if (!GraphMemory::isGraphAllocation(dptr))
      return CUDA_ERROR_INVALID_VALUE;
    N.FreeAddress = dptr;
    return CUDA_SUCCESS;
  });
}
PTXFORGE_API CUresult cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr_out) {
  GraphNode *N = nodeOfType(hNode, NodeType::MemFree);
  if (!N || !dptr_out)
    return CUDA_ERROR_INVALID_VALUE;
  *dptr_out = N->FreeAddress;
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuDeviceGraphMemTrim(CUdevice device) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  // Freed graph memory goes back to the device as soon as no graph holds its alloc node: nothing to trim.
  return validDevice(device) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
PTXFORGE_API CUresult cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!validDevice(device))
    return CUDA_ERROR_INVALID_DEVICE;
  if (!value)
    return CUDA_ERROR_INVALID_VALUE;
  bool High = attr == CU_GRAPH_MEM_ATTR_USED_MEM_HIGH || attr == CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH;
  if (attr > CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
    return CUDA_ERROR_INVALID_VALUE;
  put<cuuint64_t>(value, High ? GraphMemory::highBytes() : GraphMemory::committedBytes());
  return CUDA_SUCCESS;
}
PTXFORGE_API CUresult cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!validDevice(device))
    return CUDA_ERROR_INVALID_DEVICE;
  // Only the high watermarks can be set, and only to 0 (a reset).
  if (!value || (attr != CU_GRAPH_MEM_ATTR_USED_MEM_HIGH && attr != CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH))
    return CUDA_ERROR_INVALID_VALUE;
  cuuint64_t V;
  std::memcpy(&V, value, sizeof V);
  if (V)
    return CUDA_ERROR_INVALID_VALUE;
  GraphMemory::resetHigh();
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type) {
  GraphNode *N = unwrap(hNode);
  if (!N || !type)
    return CUDA_ERROR_INVALID_VALUE;
  *type = static_cast<CUgraphNodeType>(N->type());
  return CUDA_SUCCESS;
}

PTXFORGE_API CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes) {
  Graph *G = unwrap(hGraph);
  if (!G)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    std::vector<GraphNode *> All;
    for (const auto &N : G->nodes())
      All.push_back(N.get());
    return listOut(All, nodes, numNodes, nodeHandle);
  });
}
PTXFORGE_API CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode *rootNodes, size_t *numRootNodes) {
  Graph *G = unwrap(hGraph);
  if (!G)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] { return listOut(G->roots(), rootNodes, numRootNodes, nodeHandle); });
}
PTXFORGE_API CUresult cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *edgeData,
                                         size_t *numEdges) {
  Graph *G = unwrap(hGraph);
  if (!G || !numEdges || (!from != !to) || (edgeData && !from))
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    auto Edges = G->edges();
    if (from) {
      for (size_t I = 0; I < *numEdges; ++I) {
        from[I] = I < Edges.size() ? wrap(Edges[I].first) : nullptr;
        to[I] = I < Edges.size() ? wrap(Edges[I].second) : nullptr;
      }
      zeroEdgeData(edgeData, *numEdges);
    }
    *numEdges = Edges.size();
    return CUDA_SUCCESS;
  });
}
PTXFORGE_API CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, size_t *numEdges) {
  return cuGraphGetEdges_v2(hGraph, from, to, nullptr, numEdges);
}
PTXFORGE_API CUresult cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode *dependencies,
                                                    CUgraphEdgeData *edgeData, size_t *numDependencies) {
  GraphNode *N = unwrap(hNode);
  if (!N || (edgeData && !dependencies))
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    if (numDependencies)
      zeroEdgeData(edgeData, *numDependencies);
    return listOut(N->dependencies(), dependencies, numDependencies, nodeHandle);
  });
}
PTXFORGE_API CUresult cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode *dependencies,
                                                 size_t *numDependencies) {
  return cuGraphNodeGetDependencies_v2(hNode, dependencies, nullptr, numDependencies);
}
PTXFORGE_API CUresult cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode, CUgraphNode *dependentNodes,
                                                      CUgraphEdgeData *edgeData, size_t *numDependentNodes) {
  GraphNode *N = unwrap(hNode);
  if (!N || (edgeData && !dependentNodes))
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    if (numDependentNodes)
      zeroEdgeData(edgeData, *numDependentNodes);
    return listOut(N->dependents(), dependentNodes, numDependentNodes, nodeHandle);
  });
}
PTXFORGE_API CUresult cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode *dependentNodes,
                                                   size_t *numDependentNodes) {
  return cuGraphNodeGetDependentNodes_v2(hNode, dependentNodes, nullptr, numDependentNodes);
}

namespace {
/// cuGraphAddDependencies/cuGraphRemoveDependencies: every pair is checked before any is changed.
CUresult changeEdges(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to, const CUgraphEdgeData *Data,
                     size_t Count, bool Add) {
  Graph *G = unwrap(hGraph);
  if (!G || (Count && (!from || !to)))
    return CUDA_ERROR_INVALID_VALUE;
  if (!edgeDataIsZero(Data, Count))
    return CUDA_ERROR_INVALID_VALUE; // only plain edges exist here
  return boundary([&] {
    std::vector<GraphNode *> From, To;
    if (CUresult R = dependencyList(from, Count, From))
      return R;
    if (CUresult R = dependencyList(to, Count, To))
      return R;
    for (size_t I = 0; I < Count; ++I) {
      bool Joined = G->contains(To[I]) && llvm::is_contained(To[I]->dependencies(), From[I]);
      if (!G->contains(From[I]) || !G->contains(To[I]) || From[I] == To[I] || Joined == Add)
        return CUDA_ERROR_INVALID_VALUE;
    }
    for (size_t I = 0; I < Count; ++I)
      if (llvm::Error E = Add ? G->addEdge(From[I], To[I]) : G->removeEdge(From[I], To[I]))
        return toResult(std::move(E));
    return CUDA_SUCCESS;
  });
}
} // namespace

PTXFORGE_API CUresult cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                                const CUgraphEdgeData *edgeData, size_t numDependencies) {
  return changeEdges(hGraph, from, to, edgeData, numDependencies, true);
}
PTXFORGE_API CUresult cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                             size_t numDependencies) {
  return changeEdges(hGraph, from, to, nullptr, numDependencies, true);
}
PTXFORGE_API CUresult cuGraphRemoveDependencies_v2(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                                   const CUgraphEdgeData *edgeData, size_t numDependencies) {
  return changeEdges(hGraph, from, to, edgeData, numDependencies, false);
}
PTXFORGE_API CUresult cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                                size_t numDependencies) {
  return changeEdges(hGraph, from, to, nullptr, numDependencies, false);
}

PTXFORGE_API CUresult cuGraphDestroyNode(CUgraphNode hNode) {
  GraphNode *N = unwrap(hNode);
  if (!N)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    N->graph().destroyNode(N);
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  Graph *G = unwrap(hGraph);
  constexpr unsigned long long Known = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                                       CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD | CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH |
                                       CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
  if (!phGraphExec || !G || (flags & ~Known))
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    auto X = GraphExec::instantiate(*G, flags);
    if (!X)
      return toResult(X.takeError());
    liveExecs().add(X->get());
    *phGraphExec = reinterpret_cast<CUgraphExec>(X->release());
    return CUDA_SUCCESS;
  });
}
PTXFORGE_API CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                            char *logBuffer, size_t bufferSize) {
  if (phErrorNode)
    *phErrorNode = nullptr;
  if (logBuffer && bufferSize)
    logBuffer[0] = 0;
  return cuGraphInstantiateWithFlags(phGraphExec, hGraph, 0);
}
PTXFORGE_API CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                         char *logBuffer, size_t bufferSize) {
  return cuGraphInstantiate_v2(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}
PTXFORGE_API CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                   CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams) {
  if (!instantiateParams)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult R = cuGraphInstantiateWithFlags(phGraphExec, hGraph, instantiateParams->flags);
  instantiateParams->hErrNode_out = nullptr;
  instantiateParams->result_out = R == CUDA_SUCCESS               ? CUDA_GRAPH_INSTANTIATE_SUCCESS
                                  : R == CUDA_ERROR_INVALID_VALUE ? CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE
                                                                  : CUDA_GRAPH_INSTANTIATE_ERROR;
  return R;
}
PTXFORGE_SAME_ENTRY(cuGraphInstantiateWithParams_ptsz, cuGraphInstantiateWithParams)

PTXFORGE_API CUresult cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t *flags) {
  GraphExec *X = unwrap(hGraphExec);
  if (!X || !flags)
    return CUDA_ERROR_INVALID_VALUE;
  *flags = X->flags();
  return CUDA_SUCCESS;
}

namespace {
/// The node of hGraphExec that instantiates hNode (a node of the graph it was made from) if it has type T.
GraphNode *execNode(CUgraphExec hGraphExec, CUgraphNode hNode, NodeType T) {
  GraphExec *X = unwrap(hGraphExec);
  GraphNode *N = X && hNode ? X->nodeFor(reinterpret_cast<GraphNode *>(hNode)) : nullptr;
  return N && N->type() == T ? N : nullptr;
}

/// An exec's kernel node takes P: the function may change, its context may not.
CUresult execKernelParams(const CUDA_KERNEL_NODE_PARAMS *P, GraphNode &N) {
  KernelNodeParams K;
  if (CUresult R = kernelParams(P, true, K))
    return R;
  if (&K.Fn->module().context() != &N.Kernel.Fn->module().context())
    return CUDA_ERROR_INVALID_VALUE;
  N.Kernel = std::move(K);
  return CUDA_SUCCESS;
}
} // namespace

PTXFORGE_API CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                        const CUDA_KERNEL_NODE_PARAMS *nodeParams) {
  GraphNode *N = execNode(hGraphExec, hNode, NodeType::Kernel);
  if (!N)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] { return execKernelParams(nodeParams, *N); });
}
PTXFORGE_API CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                     const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams) {
  if (!nodeParams)
    return CUDA_ERROR_INVALID_VALUE;
  CUDA_KERNEL_NODE_PARAMS V2 = {};
  std::memcpy(&V2, nodeParams, sizeof *nodeParams);
  return cuGraphExecKernelNodeSetParams_v2(hGraphExec, hNode, &V2);
}
PTXFORGE_API CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                     const CUDA_MEMCPY3D *copyParams, CUcontext) {
  GraphNode *N = execNode(hGraphExec, hNode, NodeType::Memcpy);
  if (!N)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] { return memcpyParams(copyParams, N->Copy); });
}
PTXFORGE_API CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                     const CUDA_MEMSET_NODE_PARAMS *memsetParams_, CUcontext) {
  GraphNode *N = execNode(hGraphExec, hNode, NodeType::Memset);
  if (!N)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] { return memsetParams(memsetParams_, N->Memset); });
}
PTXFORGE_API CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                   const CUDA_HOST_NODE_PARAMS *nodeParams) {
  GraphNode *N = execNode(hGraphExec, hNode, NodeType::Host);
  return N ? hostParams(nodeParams, N->Host) : CUDA_ERROR_INVALID_VALUE;
}

PTXFORGE_API CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event) {
  return setEventOf(execNode(hGraphExec, hNode, NodeType::EventRecord), NodeType::EventRecord, event);
}
PTXFORGE_API CUresult cuGraphExecEventWaitNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event) {
  return setEventOf(execNode(hGraphExec, hNode, NodeType::WaitEvent), NodeType::WaitEvent, event);
}

namespace {
/// A child graph node of exec X takes New's parameters when New has its graph's topology.
CUresult execChildParams(GraphExec &X, CUgraph hNew, GraphNode &N) {
  Graph *New = unwrap(hNew);
  if (!New)
    return CUDA_ERROR_INVALID_VALUE;
  return X.updateChild(N, *New).Result == GraphUpdateResult::Success ? CUDA_SUCCESS
                                                                     : CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
}

/// cuGraphNodeSetParams (X null) and cuGraphExecNodeSetParams (N is X's node): P's type must be N's. What an
/// H200 refuses (tests/cudart/graph_node_params.cu): alloc, free and conditional nodes, NOT_SUPPORTED.
CUresult setNodeParams(GraphNode &N, CUgraphNodeParams &P, GraphExec *X) {
  if (!reservedZero(&P) || static_cast<int>(P.type) != static_cast<int>(N.type()))
    return CUDA_ERROR_INVALID_VALUE;
  switch (N.type()) {
  case NodeType::Kernel:
    return X ? execKernelParams(&P.kernel, N) : kernelParams(&P.kernel, true, N.Kernel);
  case NodeType::Memcpy:
    if (P.memcpy.flags || P.memcpy.reserved)
      return CUDA_ERROR_INVALID_VALUE;
    return memcpyParams(&P.memcpy.copyParams, N.Copy);
  case NodeType::Memset: // v2 is v1 and a context
    return memsetParams(reinterpret_cast<const CUDA_MEMSET_NODE_PARAMS *>(&P.memset), N.Memset);
  case NodeType::Host:
    return hostParams(&P.host, N.Host);
  case NodeType::ChildGraph:
    if (P.graph.ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE)
      return CUDA_ERROR_NOT_SUPPORTED;
    return X ? execChildParams(*X, P.graph.graph, N) : childParams(P.graph.graph, N);
  case NodeType::WaitEvent:
    return setEventOf(&N, NodeType::WaitEvent, P.eventWait.event);
  case NodeType::EventRecord:
    return setEventOf(&N, NodeType::EventRecord, P.eventRecord.event);
  case NodeType::Empty:
    return CUDA_SUCCESS;
  case NodeType::MemAlloc:
  case NodeType::MemFree:
  case NodeType::Conditional:
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  return CUDA_ERROR_INVALID_VALUE;
}
} // namespace

PTXFORGE_API CUresult cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams *nodeParams) {
  GraphNode *N = unwrap(hNode);
  if (!N || !nodeParams)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] { return setNodeParams(*N, *nodeParams, nullptr); });
}
PTXFORGE_API CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                               CUgraphNodeParams *nodeParams) {
  GraphExec *X = unwrap(hGraphExec);
  GraphNode *N = X && hNode ? X->nodeFor(reinterpret_cast<GraphNode *>(hNode)) : nullptr;
  if (!N || !nodeParams)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] { return setNodeParams(*N, *nodeParams, X); });
}

PTXFORGE_API CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  // Nothing to upload: the nodes run from host memory. Kernels still compile at their first launch.
  return unwrap(hGraphExec) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
PTXFORGE_SAME_ENTRY(cuGraphUpload_ptsz, cuGraphUpload)

PTXFORGE_API CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  Context *Ctx;
  Stream *S;
  if (CUresult R = streamTarget(hStream, Ctx, S))
    return R;
  GraphExec *X = unwrap(hGraphExec);
  if (!X)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] { return toResult(launchGraph(*Ctx, S, *X)); });
}
PTXFORGE_SAME_ENTRY(cuGraphLaunch_ptsz, cuGraphLaunch)

PTXFORGE_API CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) {
  GraphExec *X = unwrap(hGraphExec);
  if (!X)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    liveExecs().remove(X);
    delete X;
    return CUDA_SUCCESS;
  });
}

PTXFORGE_API CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                                           CUgraphExecUpdateResultInfo *resultInfo) {
  GraphExec *X = unwrap(hGraphExec);
  Graph *G = unwrap(hGraph);
  if (!X || !G || !resultInfo)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    GraphUpdateResult R = X->update(*G);
    resultInfo->result = static_cast<CUgraphExecUpdateResult>(R.Result);
    resultInfo->errorNode = wrap(const_cast<GraphNode *>(R.ErrorNode));
    resultInfo->errorFromNode = wrap(const_cast<GraphNode *>(R.ErrorFromNode));
    return R.Result == GraphUpdateResult::Success ? CUDA_SUCCESS : CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  });
}
PTXFORGE_API CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
                                        CUgraphExecUpdateResult *updateResult_out) {
  if (!hErrorNode_out || !updateResult_out)
    return CUDA_ERROR_INVALID_VALUE;
  CUgraphExecUpdateResultInfo Info = {};
  CUresult R = cuGraphExecUpdate_v2(hGraphExec, hGraph, &Info);
  *hErrorNode_out = Info.errorNode;
  *updateResult_out = Info.result;
  return R;
}

PTXFORGE_API CUresult cuGraphDebugDotPrint(CUgraph hGraph, const char *path, unsigned int) {
  Graph *G = unwrap(hGraph);
  if (!G || !path)
    return CUDA_ERROR_INVALID_VALUE;
  return boundary([&] {
    std::string Text = G->dot();
    FILE *F = std::fopen(path, "w");
    if (!F)
      return CUDA_ERROR_OPERATING_SYSTEM;
    bool Ok = std::fwrite(Text.data(), 1, Text.size(), F) == Text.size();
    Ok &= std::fclose(F) == 0;
    return Ok ? CUDA_SUCCESS : CUDA_ERROR_OPERATING_SYSTEM;
  });
}

// =====================================================================================================

namespace {
CUresult unsupported(const char *Name) {
  if (verbose())
    std::fprintf(stderr, "ptxforge: %s is not supported yet\n", Name);
  return CUDA_ERROR_NOT_SUPPORTED;
}
} // namespace

#define CU_API_UNSUPPORTED(Symbol)                                                                                     \
  PTXFORGE_API CUresult Symbol() { return unsupported(#Symbol); }
#include "CudaApiUnsupported.def"

// =====================================================================================================
// cuGetProcAddress
// =====================================================================================================

PTXFORGE_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

namespace {
const ApiEntry Implemented[] = {
#define CU_API(Name, Symbol, Version) {#Name, #Symbol, Version, reinterpret_cast<void *>(&Symbol)},
#include "CudaApi.def"
};
struct UnsupportedEntry {
  const char *Symbol;
  void *Fn;
};
const UnsupportedEntry Unsupported[] = {
#define CU_API_UNSUPPORTED(Symbol) {#Symbol, reinterpret_cast<void *>(&Symbol)},
#include "CudaApiUnsupported.def"
};

/// An unsupported symbol for Name: the name itself or its newest _vN variant.
void *findUnsupported(llvm::StringRef Name) {
  void *Best = nullptr;
  unsigned BestVersion = 0;
  for (const UnsupportedEntry &U : Unsupported) {
    llvm::StringRef S(U.Symbol);
    unsigned V = 0;
    if (S == Name)
      V = 1;
    else if (S.starts_with(Name) && S.drop_front(Name.size()).consume_front("_v") &&
             !S.drop_front(Name.size() + 2).getAsInteger(10, V))
      ;
    else
      continue;
    if (V > BestVersion)
      Best = U.Fn, BestVersion = V;
  }
  return Best;
}
} // namespace

PTXFORGE_API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                          CUdriverProcAddressQueryResult *symbolStatus) {
  if (!symbol || !pfn || flags > 3)
    return CUDA_ERROR_INVALID_VALUE;
  llvm::StringRef Name(symbol);
  const ApiEntry *Best = nullptr;
  bool Exists = false;
  // CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM asks for the _ptsz/_ptds variant where there is one.
  std::string PerThreadName;
  if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
    for (const ApiEntry &E : Implemented)
      if (llvm::StringRef(E.Name) == (Name + "_ptsz").str() || llvm::StringRef(E.Name) == (Name + "_ptds").str())
        PerThreadName = E.Name;
  if (!PerThreadName.empty())
    Name = PerThreadName;
  for (const ApiEntry &E : Implemented) {
    if (Name != E.Name)
      continue;
    Exists = true;
    if (E.Version <= cudaVersion && (!Best || E.Version > Best->Version))
      Best = &E;
  }
  auto Report = [&](CUdriverProcAddressQueryResult S) {
    if (symbolStatus)
      *symbolStatus = S;
  };
  if (Best) {
    *pfn = Best->Fn;
    Report(CU_GET_PROC_ADDRESS_SUCCESS);
    return CUDA_SUCCESS;
  }
  *pfn = nullptr;
  if (Exists) {
    Report(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    if (verbose())
      std::fprintf(stderr, "ptxforge: cuGetProcAddress: %s is newer than CUDA %d\n", symbol, cudaVersion);
    return CUDA_ERROR_NOT_FOUND;
  }
  if (void *Fn = findUnsupported(Name)) {
    *pfn = Fn; // known to CUDA 13.0 but not implemented: callers get CUDA_ERROR_NOT_SUPPORTED, not a crash
    Report(CU_GET_PROC_ADDRESS_SUCCESS);
    return CUDA_SUCCESS;
  }
  Report(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  if (verbose())
    std::fprintf(stderr, "ptxforge: cuGetProcAddress: no %s\n", symbol);
  return CUDA_ERROR_NOT_FOUND;
}

PTXFORGE_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, nullptr);
}

// ---- tensor maps (driver/lib/TensorMap.cpp): pure encodings, no context needed ----

namespace {
/// The arguments every cuTensorMapEncode* takes but the box (tiled maps add it, im2col maps a column instead).
TiledTensorMapArgs commonMapArgs(CUtensorMapDataType tensorDataType, cuuint32_t tensorRank, void *globalAddress,
                                 const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                 const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
                                 CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                 CUtensorMapFloatOOBfill oobFill) {
  return {static_cast<uint32_t>(tensorDataType),
          tensorRank,
          globalAddress,
          globalDim,
          globalStrides,
          nullptr,
          elementStrides,
          static_cast<uint32_t>(interleave),
          static_cast<uint32_t>(swizzle),
          static_cast<uint32_t>(l2Promotion),
          static_cast<uint32_t>(oobFill)};
}
} // namespace

PTXFORGE_API CUresult cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
                                             cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
                                             const cuuint64_t *globalStrides, const cuuint32_t *boxDim,
                                             const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
                                             CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                             CUtensorMapFloatOOBfill oobFill) {
  TiledTensorMapArgs A = commonMapArgs(tensorDataType, tensorRank, globalAddress, globalDim, globalStrides,
                                       elementStrides, interleave, swizzle, l2Promotion, oobFill);
  A.BoxDim = boxDim;
  return encodeTiledTensorMap(reinterpret_cast<codegen::TensorMap *>(tensorMap), A) ? CUDA_SUCCESS
                                                                                    : CUDA_ERROR_INVALID_VALUE;
}

PTXFORGE_API CUresult cuTensorMapEncodeIm2col(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
                                              cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
                                              const cuuint64_t *globalStrides, const int *pixelBoxLowerCorner,
                                              const int *pixelBoxUpperCorner, cuuint32_t channelsPerPixel,
                                              cuuint32_t pixelsPerColumn, const cuuint32_t *elementStrides,
                                              CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                              CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) {
  Im2colTensorMapArgs A;
  A.Common = commonMapArgs(tensorDataType, tensorRank, globalAddress, globalDim, globalStrides, elementStrides,
                           interleave, swizzle, l2Promotion, oobFill);
  A.PixelBoxLowerCorner = pixelBoxLowerCorner;
  A.PixelBoxUpperCorner = pixelBoxUpperCorner;
  A.ChannelsPerPixel = channelsPerPixel;
  A.PixelsPerColumn = pixelsPerColumn;
  return encodeIm2colTensorMap(reinterpret_cast<codegen::TensorMap *>(tensorMap), A) ? CUDA_SUCCESS
                                                                                     : CUDA_ERROR_INVALID_VALUE;
}

PTXFORGE_API CUresult cuTensorMapEncodeIm2colWide(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
                                                  cuuint32_t tensorRank, void *globalAddress,
                                                  const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                                  int pixelBoxLowerCornerWidth, int pixelBoxUpperCornerWidth,
                                                  cuuint32_t channelsPerPixel, cuuint32_t pixelsPerColumn,
                                                  const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
                                                  CUtensorMapIm2ColWideMode mode, CUtensorMapSwizzle swizzle,
                                                  CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) {
  Im2colWideTensorMapArgs A;
  A.Common = commonMapArgs(tensorDataType, tensorRank, globalAddress, globalDim, globalStrides, elementStrides,
                           interleave, swizzle, l2Promotion, oobFill);
  A.PixelBoxLowerCornerWidth = pixelBoxLowerCornerWidth;
  A.PixelBoxUpperCornerWidth = pixelBoxUpperCornerWidth;
  A.ChannelsPerPixel = channelsPerPixel;
  A.PixelsPerColumn = pixelsPerColumn;
  A.Mode = static_cast<uint32_t>(mode);
  return encodeIm2colWideTensorMap(reinterpret_cast<codegen::TensorMap *>(tensorMap), A) ? CUDA_SUCCESS
                                                                                         : CUDA_ERROR_INVALID_VALUE;
}

PTXFORGE_API CUresult cuTensorMapReplaceAddress(CUtensorMap *tensorMap, void *globalAddress) {
  return replaceTensorMapAddress(reinterpret_cast<codegen::TensorMap *>(tensorMap), globalAddress)
             ? CUDA_SUCCESS
             : CUDA_ERROR_INVALID_VALUE;
}
