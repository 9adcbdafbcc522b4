// The device runtime of dynamic parallelism (DeviceRuntime.h): the `ptxrt_cdp_*` helpers the device library's
// functions forward to, and the per-grid state they keep (parameter buffers, queued launches, device-side
// streams and events, the grid's last error). Each helper takes the thread's context, a pointer to the return
// value and one pointer per parameter, as the lowering passes `.param`s.
#include "Runtime.h"

#include "ptxforge/codegen/DeviceRuntime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

/// A parameter buffer handed out and not launched yet.
struct DeviceRuntime::Pending {
  DeviceLaunch Launch;
  bool HasKernel = false; ///< V2: kernel and configuration given with the buffer
};

DeviceRuntime::DeviceRuntime(unsigned Depth, uint64_t PendingLimit) : Depth(Depth), PendingLimit(PendingLimit) {}
DeviceRuntime::~DeviceRuntime() = default;

std::string DeviceRuntime::kernelName(uint64_t KernelAddress) {
  // A kernel's address points at its descriptor; anything else is not a kernel (a wild pointer faults here as it
  // would on the GPU: the launch fails with an illegal address).
  uint64_t Magic = 0;
  if (!KernelAddress)
    return {};
  std::memcpy(&Magic, reinterpret_cast<const void *>(KernelAddress), sizeof Magic);
  if (Magic != DeviceEntryMagic)
    return {};
  return reinterpret_cast<const char *>(KernelAddress + sizeof Magic);
}

int32_t DeviceRuntime::fail(int32_t E) {
  if (E != DeviceSuccess)
    LastError.store(E, std::memory_order_relaxed);
  return E;
}

int32_t DeviceRuntime::lastError(bool Clear) {
  return Clear ? LastError.exchange(DeviceSuccess, std::memory_order_relaxed)
               : LastError.load(std::memory_order_relaxed);
}

void *DeviceRuntime::parameterBuffer(uint64_t KernelAddress, Dim3 Grid, Dim3 Block, uint32_t SharedBytes) {
  auto P = std::make_unique<Pending>();
  P->Launch.Kernel = kernelName(KernelAddress);
  if (P->Launch.Kernel.empty() || kernelParamBytes(P->Launch.Kernel, P->Launch.ParamBytes) != DeviceSuccess) {
    fail(DeviceInvalidDeviceFunction);
    return nullptr;
  }
  P->Launch.Grid = Grid, P->Launch.Block = Block, P->Launch.SharedBytes = SharedBytes;
  P->HasKernel = true;
  // At least one slot: a kernel without parameters still gets a distinct, non-null buffer.
  P->Launch.Params.resize((P->Launch.ParamBytes + sizeof(DeviceParamBytes) - 1) / sizeof(DeviceParamBytes) + 1);
  void *Buffer = P->Launch.Params.data();
  std::scoped_lock L(Lock);
  Buffers.emplace(Buffer, std::move(P));
  return Buffer;
}

void *DeviceRuntime::parameterBuffer(uint64_t Alignment, uint64_t Size) {
  // Buffers are aligned to 64 bytes, more than any parameter type needs.
  if (Alignment > sizeof(DeviceParamBytes) || (Alignment & (Alignment - 1)) || Size > (uint64_t(1) << 32)) {
    fail(DeviceInvalidValue);
    return nullptr;
  }
  auto P = std::make_unique<Pending>();
  P->Launch.ParamBytes = Size;
  P->Launch.Params.resize(Size / sizeof(DeviceParamBytes) + 1);
  void *Buffer = P->Launch.Params.data();
  std::scoped_lock L(Lock);
  Buffers.emplace(Buffer, std::move(P));
  return Buffer;
}

bool DeviceRuntime::validStream(uint64_t Stream) const {
  return Stream == DeviceStreamNull || Stream == DeviceStreamTailLaunch || Stream == DeviceStreamFireAndForget ||
         Streams.count(Stream);
}

int32_t DeviceRuntime::enqueue(DeviceLaunch L) {
  bool Grid = L.What == DeviceLaunch::Kind::Kernel;
  if (Grid && Depth + 1 >= MaxDepth)
    return fail(DeviceLaunchMaxDepthExceeded);
  if (int32_t E = Grid ? checkLaunch(L) : DeviceSuccess)
    return fail(E);
  std::scoped_lock G(Lock);
  if (!validStream(L.Stream))
    return fail(DeviceInvalidResourceHandle);
  if (Launches.size() >= PendingLimit)
    return fail(DeviceLaunchPendingCountExceeded);
  Launches.push_back(std::move(L));
  return DeviceSuccess;
}

int32_t DeviceRuntime::launch(void *Buffer, uint64_t Stream) {
  std::unique_ptr<Pending> P;
  {
    std::scoped_lock L(Lock);
    auto I = Buffers.find(Buffer);
    if (I == Buffers.end() || !I->second->HasKernel)
      return fail(DeviceInvalidValue);
    P = std::move(I->second);
    Buffers.erase(I);
  }
  P->Launch.Stream = Stream;
  return enqueue(std::move(P->Launch));
}

int32_t DeviceRuntime::launch(uint64_t KernelAddress, void *Buffer, Dim3 Grid, Dim3 Block, uint32_t SharedBytes,
                              uint64_t Stream) {
  std::string Name = kernelName(KernelAddress);
  uint64_t Bytes = 0;
  if (Name.empty() || kernelParamBytes(Name, Bytes) != DeviceSuccess)
    return fail(DeviceInvalidDeviceFunction);
  std::unique_ptr<Pending> P;
  {
    std::scoped_lock L(Lock);
    auto I = Buffers.find(Buffer);
    if (I == Buffers.end() || I->second->HasKernel || I->second->Launch.ParamBytes < Bytes)
      return fail(DeviceInvalidValue);
    P = std::move(I->second);
    Buffers.erase(I);
  }
  DeviceLaunch &D = P->Launch;
  D.Kernel = std::move(Name);
  D.ParamBytes = Bytes;
  D.Grid = Grid, D.Block = Block, D.SharedBytes = SharedBytes, D.Stream = Stream;
  return enqueue(std::move(D));
}

int32_t DeviceRuntime::copy(uint64_t Dst, uint64_t Src, uint64_t Bytes, int32_t Kind, uint64_t Stream) {
  // Device code copies device memory only: cudaMemcpyDeviceToDevice or cudaMemcpyDefault.
  if (Kind != 3 && Kind != 4)
    return fail(DeviceInvalidValue);
  DeviceLaunch L;
  L.What = DeviceLaunch::Kind::Copy;
  L.Dst = Dst, L.Src = Src, L.Bytes = Bytes, L.Stream = Stream;
  return enqueue(std::move(L));
}

int32_t DeviceRuntime::fill(uint64_t Dst, uint8_t Value, uint64_t Bytes, uint64_t Stream) {
  DeviceLaunch L;
  L.What = DeviceLaunch::Kind::Fill;
  L.Dst = Dst, L.Value = Value, L.Bytes = Bytes, L.Stream = Stream;
  return enqueue(std::move(L));
}

namespace {

/// The device heap's allocations (address -> bytes) and their total.
struct DeviceHeap {
  std::mutex Lock;
  std::map<uint64_t, uint64_t> Blocks;
  uint64_t Used = 0;
};

DeviceHeap &deviceHeap() {
  static auto *H = new DeviceHeap; // never destroyed: grids may run while the process exits
  return *H;
}

} // namespace

int32_t DeviceRuntime::allocate(uint64_t Bytes, uint64_t &Address) {
  Address = 0;
  uint64_t Limit = 0;
  if (deviceLimit(/*cudaLimitMallocHeapSize=*/2, Limit) != DeviceSuccess)
    return fail(DeviceMemoryAllocation);
  // Aligned as cudaMalloc's (256 bytes); host memory, which kernels address as device memory.
  uint64_t Rounded = (std::max<uint64_t>(Bytes, 1) + 255) / 256 * 256;
  DeviceHeap &H = deviceHeap();
  std::scoped_lock L(H.Lock);
  if (Rounded < Bytes || H.Used + Rounded > Limit)
    return fail(DeviceMemoryAllocation);
  void *P = std::aligned_alloc(256, Rounded);
  if (!P)
    return fail(DeviceMemoryAllocation);
  Address = reinterpret_cast<uint64_t>(P);
  H.Blocks.emplace(Address, Rounded);
  H.Used += Rounded;
  return DeviceSuccess;
}

int32_t DeviceRuntime::release(uint64_t Address) {
  if (!Address)
    return DeviceSuccess;
  DeviceHeap &H = deviceHeap();
  std::scoped_lock L(H.Lock);
  auto I = H.Blocks.find(Address);
  if (I == H.Blocks.end())
    return fail(DeviceInvalidValue);
  H.Used -= I->second;
  H.Blocks.erase(I);
  std::free(reinterpret_cast<void *>(Address));
  return DeviceSuccess;
}

int32_t DeviceRuntime::createHandle(std::set<uint64_t> &Set, uint64_t &Handle) {
  std::scoped_lock L(Lock);
  Handle = NextHandle++;
  Set.insert(Handle);
  return DeviceSuccess;
}

int32_t DeviceRuntime::destroyHandle(std::set<uint64_t> &Set, uint64_t Handle) {
  std::scoped_lock L(Lock);
  return Set.erase(Handle) ? DeviceSuccess : fail(DeviceInvalidResourceHandle);
}

int32_t DeviceRuntime::streamCreate(uint64_t &Stream) { return createHandle(Streams, Stream); }

// The stream's launches still run (in order) after it is destroyed, as CUDA promises.
int32_t DeviceRuntime::streamDestroy(uint64_t Stream) { return destroyHandle(Streams, Stream); }

int32_t DeviceRuntime::eventCreate(uint64_t &Event) { return createHandle(Events, Event); }

int32_t DeviceRuntime::eventDestroy(uint64_t Event) { return destroyHandle(Events, Event); }

int32_t DeviceRuntime::eventUse(uint64_t Event, uint64_t Stream) {
  std::scoped_lock L(Lock);
  if (!Events.count(Event) || !validStream(Stream))
    return fail(DeviceInvalidResourceHandle);
  return DeviceSuccess;
}

std::vector<DeviceLaunch> DeviceRuntime::takeLaunches() {
  std::scoped_lock L(Lock);
  Buffers.clear(); // buffers never launched
  return std::move(Launches);
}

const char *ptxforge::codegen::deviceErrorText(int32_t E, bool Name) {
  struct Text {
    int32_t Code;
    const char *Name, *String;
  };
  // The errors the device runtime returns, in CUDA 13's words.
  static constexpr Text Texts[] = {
      {DeviceSuccess, "cudaSuccess", "no error"},
      {DeviceInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
      {DeviceMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
      {DeviceInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
      {DeviceLaunchMaxDepthExceeded, "cudaErrorLaunchMaxDepthExceeded",
       "launch would exceed maximum depth of nested launches"},
      {DeviceLaunchPendingCountExceeded, "cudaErrorLaunchPendingCountExceeded",
       "launch failed because launch would exceed cudaLimitDevRuntimePendingLaunchCount"},
      {DeviceInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
      {DeviceInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
      {DeviceNotSupported, "cudaErrorNotSupported", "operation not supported"},
  };
  for (const Text &T : Texts)
    if (T.Code == E)
      return Name ? T.Name : T.String;
  return Name ? "cudaErrorUnknown" : "unrecognized error code";
}

namespace {

thread_local DeviceRuntime *Current = nullptr;

Dim3 dim3At(const uint32_t *P) { return {P[0], P[1], P[2]}; }

/// Where device code asked for a result (a generic address in a parameter).
template <class T> void store(const uint64_t *Where, T Value) {
  if (Where && *Where)
    std::memcpy(reinterpret_cast<void *>(*Where), &Value, sizeof Value);
}

} // namespace

DeviceRuntimeScope::DeviceRuntimeScope(DeviceRuntime *R) : Saved(Current) { Current = R; }
DeviceRuntimeScope::~DeviceRuntimeScope() { Current = Saved; }

extern "C" {

// Without a device runtime (a launch that did not give one: the CLI, the embedding API) device-side launches
// fail with cudaErrorNotSupported.

static void ptxrt_cdp_parameter_buffer_v2(ThreadContext *, uint64_t *Ret, const uint64_t *Func, const uint32_t *Grid,
                                          const uint32_t *Block, const uint32_t *Shared) {
  void *P = Current ? Current->parameterBuffer(*Func, dim3At(Grid), dim3At(Block), *Shared) : nullptr;
  *Ret = reinterpret_cast<uint64_t>(P);
}

static void ptxrt_cdp_parameter_buffer(ThreadContext *, uint64_t *Ret, const uint64_t *Alignment,
                                       const uint64_t *Size) {
  *Ret = reinterpret_cast<uint64_t>(Current ? Current->parameterBuffer(*Alignment, *Size) : nullptr);
}

static void ptxrt_cdp_launch_v2(ThreadContext *, int32_t *Ret, const uint64_t *Buffer, const uint64_t *Stream) {
  *Ret = Current ? Current->launch(reinterpret_cast<void *>(*Buffer), *Stream) : DeviceNotSupported;
}

static void ptxrt_cdp_launch(ThreadContext *, int32_t *Ret, const uint64_t *Func, const uint64_t *Buffer,
                             const uint32_t *Grid, const uint32_t *Block, const uint32_t *Shared,
                             const uint64_t *Stream) {
  *Ret = Current
             ? Current->launch(*Func, reinterpret_cast<void *>(*Buffer), dim3At(Grid), dim3At(Block), *Shared, *Stream)
             : DeviceNotSupported;
}

static void ptxrt_cdp_memcpy_async(ThreadContext *, int32_t *Ret, const uint64_t *Dst, const uint64_t *Src,
                                   const uint64_t *Bytes, const uint32_t *Kind, const uint64_t *Stream) {
  *Ret = Current ? Current->copy(*Dst, *Src, *Bytes, static_cast<int32_t>(*Kind), *Stream) : DeviceNotSupported;
}

static void ptxrt_cdp_memset_async(ThreadContext *, int32_t *Ret, const uint64_t *Dst, const uint32_t *Value,
                                   const uint64_t *Bytes, const uint64_t *Stream) {
  *Ret = Current ? Current->fill(*Dst, static_cast<uint8_t>(*Value), *Bytes, *Stream) : DeviceNotSupported;
}

static void ptxrt_cdp_get_error_name(ThreadContext *, uint64_t *Ret, const uint32_t *Error) {
  *Ret = reinterpret_cast<uint64_t>(deviceErrorText(static_cast<int32_t>(*Error), /*Name=*/true));
}

static void ptxrt_cdp_get_error_string(ThreadContext *, uint64_t *Ret, const uint32_t *Error) {
  *Ret = reinterpret_cast<uint64_t>(deviceErrorText(static_cast<int32_t>(*Error), /*Name=*/false));
}

static void ptxrt_cdp_malloc(ThreadContext *, int32_t *Ret, const uint64_t *Where, const uint64_t *Bytes) {
  uint64_t P = 0;
  *Ret = Current ? Current->allocate(*Bytes, P) : DeviceNotSupported;
  store(Where, P);
}

static void ptxrt_cdp_free(ThreadContext *, int32_t *Ret, const uint64_t *Address) {
  *Ret = Current ? Current->release(*Address) : DeviceNotSupported;
}

static void ptxrt_cdp_stream_create(ThreadContext *, int32_t *Ret, const uint64_t *Stream, const uint32_t *) {
  uint64_t S = 0;
  *Ret = Current ? Current->streamCreate(S) : DeviceNotSupported;
  store(Stream, S);
}

static void ptxrt_cdp_stream_destroy(ThreadContext *, int32_t *Ret, const uint64_t *Stream) {
  *Ret = Current ? Current->streamDestroy(*Stream) : DeviceNotSupported;
}

static void ptxrt_cdp_event_create(ThreadContext *, int32_t *Ret, const uint64_t *Event, const uint32_t *) {
  uint64_t E = 0;
  *Ret = Current ? Current->eventCreate(E) : DeviceNotSupported;
  store(Event, E);
}

static void ptxrt_cdp_event_destroy(ThreadContext *, int32_t *Ret, const uint64_t *Event) {
  *Ret = Current ? Current->eventDestroy(*Event) : DeviceNotSupported;
}

static void ptxrt_cdp_event_record(ThreadContext *, int32_t *Ret, const uint64_t *Event, const uint64_t *Stream) {
  *Ret = Current ? Current->eventUse(*Event, *Stream) : DeviceNotSupported;
}

static void ptxrt_cdp_event_record_flags(ThreadContext *, int32_t *Ret, const uint64_t *Event, const uint64_t *Stream,
                                         const uint32_t *) {
  *Ret = Current ? Current->eventUse(*Event, *Stream) : DeviceNotSupported;
}

static void ptxrt_cdp_stream_wait_event(ThreadContext *, int32_t *Ret, const uint64_t *Stream, const uint64_t *Event,
                                        const uint32_t *) {
  *Ret = Current ? Current->eventUse(*Event, *Stream) : DeviceNotSupported;
}

static void ptxrt_cdp_get_last_error(ThreadContext *, int32_t *Ret) {
  *Ret = Current ? Current->lastError(/*Clear=*/true) : DeviceSuccess;
}

static void ptxrt_cdp_peek_at_last_error(ThreadContext *, int32_t *Ret) {
  *Ret = Current ? Current->lastError(/*Clear=*/false) : DeviceSuccess;
}

static void ptxrt_cdp_get_device(ThreadContext *, int32_t *Ret, const uint64_t *Device) {
  store<int32_t>(Device, 0); // one device
  *Ret = DeviceSuccess;
}

static void ptxrt_cdp_get_device_count(ThreadContext *, int32_t *Ret, const uint64_t *Count) {
  store<int32_t>(Count, 1);
  *Ret = DeviceSuccess;
}

static void ptxrt_cdp_runtime_get_version(ThreadContext *, int32_t *Ret, const uint64_t *Version) {
  store<int32_t>(Version, 13000); // CUDART_VERSION of CUDA 13.0
  *Ret = DeviceSuccess;
}

static void ptxrt_cdp_device_get_attribute(ThreadContext *, int32_t *Ret, const uint64_t *Value,
                                           const uint32_t *Attribute, const uint32_t *Device) {
  int32_t V = 0;
  if (!Current)
    *Ret = DeviceNotSupported;
  else if (*Device != 0)
    *Ret = Current->fail(DeviceInvalidValue); // cudaErrorInvalidDevice is 101 on the host; the device says 1
  else
    *Ret = Current->fail(Current->deviceAttribute(static_cast<int32_t>(*Attribute), V));
  if (*Ret == DeviceSuccess)
    store(Value, V);
}

static void ptxrt_cdp_device_get_limit(ThreadContext *, int32_t *Ret, const uint64_t *Value, const uint32_t *Limit) {
  uint64_t V = 0;
  *Ret = Current ? Current->fail(Current->deviceLimit(static_cast<int32_t>(*Limit), V)) : DeviceNotSupported;
  if (*Ret == DeviceSuccess)
    store(Value, V);
}
}

namespace {
struct ConditionalCells {
  std::mutex Lock;
  std::map<uint64_t, uint32_t> Values;
  uint64_t Next = 1;
};
ConditionalCells &conditionalCells() {
  static ConditionalCells &C = *new ConditionalCells; // kernels may run during exit
  return C;
}
} // namespace

uint64_t ptxforge::codegen::createGraphConditional() {
  ConditionalCells &C = conditionalCells();
  std::scoped_lock L(C.Lock);
  uint64_t H = C.Next++;
  C.Values[H] = 0;
  return H;
}

void ptxforge::codegen::releaseGraphConditional(uint64_t Handle) {
  ConditionalCells &C = conditionalCells();
  std::scoped_lock L(C.Lock);
  C.Values.erase(Handle);
}

bool ptxforge::codegen::setGraphConditional(uint64_t Handle, uint32_t Value) {
  ConditionalCells &C = conditionalCells();
  std::scoped_lock L(C.Lock);
  auto It = C.Values.find(Handle);
  if (It == C.Values.end())
    return false;
  It->second = Value;
  return true;
}

uint32_t ptxforge::codegen::graphConditional(uint64_t Handle) {
  ConditionalCells &C = conditionalCells();
  std::scoped_lock L(C.Lock);
  auto It = C.Values.find(Handle);
  return It == C.Values.end() ? 0 : It->second;
}

/// cudaGraphSetConditional(handle, value): no result.
static void ptxrt_cdp_graph_set_conditional(ThreadContext *, const uint64_t *Handle, const uint32_t *Value) {
  setGraphConditional(*Handle, *Value);
}

void ptxforge::codegen::exec::registerDeviceRuntime(HelperTable &T) {
  T.push_back({"ptxrt_cdp_graph_set_conditional", reinterpret_cast<void *>(&ptxrt_cdp_graph_set_conditional)});
  T.push_back({"ptxrt_cdp_parameter_buffer_v2", reinterpret_cast<void *>(&ptxrt_cdp_parameter_buffer_v2)});
  T.push_back({"ptxrt_cdp_parameter_buffer", reinterpret_cast<void *>(&ptxrt_cdp_parameter_buffer)});
  T.push_back({"ptxrt_cdp_launch_v2", reinterpret_cast<void *>(&ptxrt_cdp_launch_v2)});
  T.push_back({"ptxrt_cdp_launch", reinterpret_cast<void *>(&ptxrt_cdp_launch)});
  T.push_back({"ptxrt_cdp_malloc", reinterpret_cast<void *>(&ptxrt_cdp_malloc)});
  T.push_back({"ptxrt_cdp_free", reinterpret_cast<void *>(&ptxrt_cdp_free)});
  T.push_back({"ptxrt_cdp_memcpy_async", reinterpret_cast<void *>(&ptxrt_cdp_memcpy_async)});
  T.push_back({"ptxrt_cdp_memset_async", reinterpret_cast<void *>(&ptxrt_cdp_memset_async)});
  T.push_back({"ptxrt_cdp_get_error_name", reinterpret_cast<void *>(&ptxrt_cdp_get_error_name)});
  T.push_back({"ptxrt_cdp_get_error_string", reinterpret_cast<void *>(&ptxrt_cdp_get_error_string)});
  T.push_back({"ptxrt_cdp_stream_create", reinterpret_cast<void *>(&ptxrt_cdp_stream_create)});
  T.push_back({"ptxrt_cdp_stream_destroy", reinterpret_cast<void *>(&ptxrt_cdp_stream_destroy)});
  T.push_back({"ptxrt_cdp_event_create", reinterpret_cast<void *>(&ptxrt_cdp_event_create)});
  T.push_back({"ptxrt_cdp_event_destroy", reinterpret_cast<void *>(&ptxrt_cdp_event_destroy)});
  T.push_back({"ptxrt_cdp_event_record", reinterpret_cast<void *>(&ptxrt_cdp_event_record)});
  T.push_back({"ptxrt_cdp_event_record_flags", reinterpret_cast<void *>(&ptxrt_cdp_event_record_flags)});
  T.push_back({"ptxrt_cdp_stream_wait_event", reinterpret_cast<void *>(&ptxrt_cdp_stream_wait_event)});
  T.push_back({"ptxrt_cdp_get_last_error", reinterpret_cast<void *>(&ptxrt_cdp_get_last_error)});
  T.push_back({"ptxrt_cdp_peek_at_last_error", reinterpret_cast<void *>(&ptxrt_cdp_peek_at_last_error)});
  T.push_back({"ptxrt_cdp_get_device", reinterpret_cast<void *>(&ptxrt_cdp_get_device)});
  T.push_back({"ptxrt_cdp_get_device_count", reinterpret_cast<void *>(&ptxrt_cdp_get_device_count)});
  T.push_back({"ptxrt_cdp_runtime_get_version", reinterpret_cast<void *>(&ptxrt_cdp_runtime_get_version)});
  T.push_back({"ptxrt_cdp_device_get_attribute", reinterpret_cast<void *>(&ptxrt_cdp_device_get_attribute)});
  T.push_back({"ptxrt_cdp_device_get_limit", reinterpret_cast<void *>(&ptxrt_cdp_device_get_limit)});
}
