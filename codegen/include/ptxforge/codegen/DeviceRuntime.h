// CUDA dynamic parallelism (CDP2, CUDA 12/13): the device runtime functions kernels built with `-rdc=true
// -lcudadevrt` call (`__cudaCDP2GetParameterBufferV2`, `__cudaCDP2LaunchDeviceV2`, device-side streams, events
// and errors). The lowering forwards them to runtime helpers (exec/DeviceRuntime.cpp) as it does vprintf; those
// record what the grid's threads launch in the grid's DeviceRuntime (LaunchConfig::DeviceRuntime), which whoever
// launched the grid (the driver) runs once the grid has ended. CDP2 has no device-side synchronization: a parent
// never waits for its children, so running them after it is one of the orders the GPU may pick, and no worker
// ever waits for a child that no worker is free to run.
#pragma once

#include "ptxforge/codegen/Launch.h"

#include "llvm/ADT/StringRef.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace ptxforge::ptx {
class Function;
}

namespace ptxforge::codegen {

/// The helper a `.extern .func` of the device library (vprintf, __assertfail, the device runtime's functions)
/// is forwarded to, or null when F is none of them or its signature is not the library's.
const char *deviceLibraryHelper(const ptx::Function &F);
/// Whether F is one of the device runtime's functions (dynamic parallelism), which ptxforge provides even where
/// a linked input (libcudadevrt's PTX) defines them.
bool isDeviceRuntimeFunction(const ptx::Function &F);

/// The streams device code names by value (cuda_device_runtime_api.h).
constexpr uint64_t DeviceStreamNull = 0, DeviceStreamTailLaunch = 3, DeviceStreamFireAndForget = 4;

/// The cudaError_t values the device runtime returns.
enum DeviceError : int32_t {
  DeviceSuccess = 0,
  DeviceInvalidValue = 1,
  DeviceMemoryAllocation = 2,
  DeviceInvalidConfiguration = 9,
  DeviceLaunchMaxDepthExceeded = 65,
  DeviceLaunchPendingCountExceeded = 69,
  DeviceInvalidDeviceFunction = 98,
  DeviceInvalidResourceHandle = 400,
  DeviceNotSupported = 801,
};

/// The bytes of a parameter buffer device code fills (aligned for any parameter type).
struct alignas(64) DeviceParamBytes {
  unsigned char Bytes[64];
};

/// A grid launched by device code, or a copy or fill queued into a device-side stream (cudaMemcpyAsync,
/// cudaMemsetAsync), which runs in the stream's order as a launch does.
struct DeviceLaunch {
  enum class Kind { Kernel, Copy, Fill } What = Kind::Kernel;
  uint64_t Dst = 0, Src = 0, Bytes = 0; ///< Copy: Bytes from Src to Dst; Fill: Bytes at Dst
  uint8_t Value = 0;                    ///< Fill: the byte
  std::string Kernel;                   ///< the `.entry` name
  Dim3 Grid, Block;
  uint32_t SharedBytes = 0;
  uint64_t Stream = DeviceStreamNull; ///< DeviceStream* or a stream the grid created
  std::vector<DeviceParamBytes> Params;
  uint64_t ParamBytes = 0; ///< bytes of Params in use
  const char *params() const { return Params.empty() ? nullptr : reinterpret_cast<const char *>(Params.data()); }
};

/// What one grid's threads launch and create. Thread-safe: every worker running the grid's blocks calls it.
/// The launcher subclasses it to say which kernels exist and how the device is configured.
class DeviceRuntime {
public:
  /// Depth: the grid's nesting depth (0: launched by the host). PendingLimit: at most this many launches queued
  /// (cudaLimitDevRuntimePendingLaunchCount).
  DeviceRuntime(unsigned Depth, uint64_t PendingLimit);
  virtual ~DeviceRuntime();

  /// CUDA's maximum nesting depth: a grid at depth MaxDepth - 1 cannot launch.
  static constexpr unsigned MaxDepth = 24;

  /// The parameter bytes of kernel Name, or DeviceInvalidDeviceFunction when device code cannot launch it.
  virtual int32_t kernelParamBytes(llvm::StringRef Name, uint64_t &Bytes) = 0;
  /// Checks L's configuration (a kernel launch's) against the kernel's and the device's limits
  /// (DeviceInvalidConfiguration...).
  virtual int32_t checkLaunch(const DeviceLaunch &L) = 0;
  /// cudaDeviceGetAttribute / cudaDeviceGetLimit of the device the grid runs on.
  virtual int32_t deviceAttribute(int32_t Attribute, int32_t &Value) = 0;
  virtual int32_t deviceLimit(int32_t Limit, uint64_t &Value) = 0;

  /// A parameter buffer for a launch of the kernel whose descriptor (what PTX's `mov.u64 %rd, kernel` gives)
  /// is at KernelAddress (cudaGetParameterBufferV2), or for a launch to come (cudaGetParameterBuffer: no
  /// kernel yet, Size bytes). Null on failure, with the error recorded.
  void *parameterBuffer(uint64_t KernelAddress, Dim3 Grid, Dim3 Block, uint32_t SharedBytes);
  void *parameterBuffer(uint64_t Alignment, uint64_t Size);
  /// Queues the launch of Buffer's kernel (V2), or of the kernel at KernelAddress with this configuration (V1).
  int32_t launch(void *Buffer, uint64_t Stream);
  int32_t launch(uint64_t KernelAddress, void *Buffer, Dim3 Grid, Dim3 Block, uint32_t SharedBytes, uint64_t Stream);
  /// Queues a copy (cudaMemcpyAsync: Kind is a cudaMemcpyKind) or a fill (cudaMemsetAsync) into Stream.
  int32_t copy(uint64_t Dst, uint64_t Src, uint64_t Bytes, int32_t Kind, uint64_t Stream);
  int32_t fill(uint64_t Dst, uint8_t Value, uint64_t Bytes, uint64_t Stream);
  /// Device-side cudaMalloc/cudaFree: the device heap, as large as cudaLimitMallocHeapSize (deviceLimit) says,
  /// shared by every grid of the process (memory one grid allocates another may free).
  int32_t allocate(uint64_t Bytes, uint64_t &Address);
  int32_t release(uint64_t Address);
  int32_t streamCreate(uint64_t &Stream);
  int32_t streamDestroy(uint64_t Stream);
  int32_t eventCreate(uint64_t &Event);
  int32_t eventDestroy(uint64_t Event);
  /// cudaEventRecord / cudaStreamWaitEvent: the grids run one after another in launch order, which keeps
  /// every order events could ask for; checks the handles.
  int32_t eventUse(uint64_t Event, uint64_t Stream);
  /// Records E as the grid's last error (unless success) and returns it.
  int32_t fail(int32_t E);
  /// cudaGetLastError (Clear) / cudaPeekAtLastError. The error is the grid's, not each thread's.
  int32_t lastError(bool Clear);

  unsigned depth() const { return Depth; }
  /// The launches queued so far, in launch order, taken out (the grid has ended).
  std::vector<DeviceLaunch> takeLaunches();

private:
  /// A new stream or event handle in Set.
  int32_t createHandle(std::set<uint64_t> &Set, uint64_t &Handle);
  /// Forgets Handle from Set; an unknown one is the device runtime's invalid-handle error.
  int32_t destroyHandle(std::set<uint64_t> &Set, uint64_t Handle);
  struct Pending;
  bool validStream(uint64_t Stream) const;
  int32_t enqueue(DeviceLaunch L);
  static std::string kernelName(uint64_t KernelAddress);

  const unsigned Depth;
  const uint64_t PendingLimit;
  std::mutex Lock;
  std::map<const void *, std::unique_ptr<Pending>> Buffers; ///< handed out, not launched yet
  std::vector<DeviceLaunch> Launches;
  std::set<uint64_t> Streams, Events;
  uint64_t NextHandle = 0x1000;
  std::atomic<int32_t> LastError{DeviceSuccess};
};

/// cudaGetErrorName (Name) or cudaGetErrorString of a device runtime error, as device code gets them.
const char *deviceErrorText(int32_t E, bool Name);

/// The condition values of conditional graph nodes (CUDA 12.4+): the driver makes a cell per
/// cudaGraphConditionalHandle, kernels set it with the device runtime's cudaGraphSetConditional (a handle naming no
/// live cell is ignored: undefined on the GPU), and the driver reads it when the conditional node runs. A cell
/// starts at 0. Thread-safe.
uint64_t createGraphConditional();
void releaseGraphConditional(uint64_t Handle);
/// False when Handle names no live cell.
bool setGraphConditional(uint64_t Handle, uint32_t Value);
uint32_t graphConditional(uint64_t Handle);

/// The magic of an `.entry`'s descriptor: PTX takes a kernel's address as the address of a constant
/// {DeviceEntryMagic, the kernel's name, NUL} the lowering emits once per kernel.
constexpr uint64_t DeviceEntryMagic = 0x7972746e45787470ULL; // "ptxEntry"

} // namespace ptxforge::codegen
