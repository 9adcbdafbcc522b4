// The device runtime's bookkeeping (codegen/DeviceRuntime.h) without a kernel: parameter buffers, the queue and
// its limits, streams, events and the grid's last error, as device-side calls see them.
#include "ptxforge/codegen/DeviceRuntime.h"

#include <doctest/doctest.h>

#include <cstring>

using namespace ptxforge::codegen;

namespace {

/// One kernel "k" with 24 bytes of parameters, blocks of up to 1024 threads.
class FakeRuntime final : public DeviceRuntime {
public:
  FakeRuntime(unsigned Depth, uint64_t Pending) : DeviceRuntime(Depth, Pending) {}
  int32_t kernelParamBytes(llvm::StringRef Name, uint64_t &Bytes) override {
    Bytes = 24;
    return Name == "k" ? DeviceSuccess : DeviceInvalidDeviceFunction;
  }
  int32_t checkLaunch(const DeviceLaunch &L) override {
    return L.Block.count() <= 1024 ? DeviceSuccess : DeviceInvalidConfiguration;
  }
  int32_t deviceAttribute(int32_t, int32_t &Value) override {
    Value = 0;
    return DeviceSuccess;
  }
  int32_t deviceLimit(int32_t, uint64_t &Value) override {
    Value = 1 << 20;
    return DeviceSuccess;
  }
};

/// What PTX's address of kernel k points at.
struct Descriptor {
  uint64_t Magic = DeviceEntryMagic;
  char Name[16] = "k";
  uint64_t address() const { return reinterpret_cast<uint64_t>(this); }
};

} // namespace

TEST_CASE("device runtime: parameter buffers are aligned, launches queue in order up to the pending limit") {
  FakeRuntime R(0, 2);
  Descriptor K;
  void *A = R.parameterBuffer(K.address(), {1, 1, 1}, {32, 1, 1}, 0);
  REQUIRE(A);
  CHECK(reinterpret_cast<uintptr_t>(A) % 64 == 0);
  std::memset(A, 7, 24);
  CHECK(R.launch(A, DeviceStreamNull) == DeviceSuccess);
  CHECK(R.launch(A, DeviceStreamNull) == DeviceInvalidValue); // launched already
  void *B = R.parameterBuffer(8, 24);                         // cudaGetParameterBuffer: the kernel comes later
  REQUIRE(B);
  CHECK(R.launch(K.address(), B, {2, 1, 1}, {64, 1, 1}, 16, DeviceStreamTailLaunch) == DeviceSuccess);
  void *C = R.parameterBuffer(K.address(), {1, 1, 1}, {1, 1, 1}, 0);
  CHECK(R.launch(C, DeviceStreamFireAndForget) == DeviceLaunchPendingCountExceeded);
  CHECK(R.lastError(/*Clear=*/true) == DeviceLaunchPendingCountExceeded);
  CHECK(R.lastError(/*Clear=*/true) == DeviceSuccess);
  CHECK(R.parameterBuffer(128, 8) == nullptr); // more alignment than any parameter needs
  CHECK(R.lastError(false) == DeviceInvalidValue);

  std::vector<DeviceLaunch> Queued = R.takeLaunches();
  REQUIRE(Queued.size() == 2);
  CHECK(Queued[0].Kernel == "k");
  CHECK(Queued[0].Block.X == 32);
  CHECK(Queued[0].params()[23] == 7);
  CHECK(Queued[1].Stream == DeviceStreamTailLaunch);
  CHECK(Queued[1].Grid.X == 2);
  CHECK(Queued[1].SharedBytes == 16);
}

TEST_CASE("device runtime: what is not a kernel, a stream or an event is refused with CUDA's codes") {
  FakeRuntime R(0, 100);
  Descriptor Other;
  std::strcpy(Other.Name, "nokernel");
  CHECK(R.parameterBuffer(Other.address(), {1, 1, 1}, {1, 1, 1}, 0) == nullptr);
  CHECK(R.lastError(true) == DeviceInvalidDeviceFunction);
  uint64_t NotADescriptor[2] = {0, 0};
  CHECK(R.parameterBuffer(reinterpret_cast<uint64_t>(NotADescriptor), {1, 1, 1}, {1, 1, 1}, 0) == nullptr);

  Descriptor K;
  void *Big = R.parameterBuffer(K.address(), {1, 1, 1}, {2048, 1, 1}, 0);
  REQUIRE(Big);
  CHECK(R.launch(Big, DeviceStreamNull) == DeviceInvalidConfiguration);
  void *Buffer = R.parameterBuffer(K.address(), {1, 1, 1}, {1, 1, 1}, 0);
  CHECK(R.launch(Buffer, 0x1234) == DeviceInvalidResourceHandle);

  uint64_t S = 0, E = 0;
  CHECK(R.streamCreate(S) == DeviceSuccess);
  CHECK(R.eventCreate(E) == DeviceSuccess);
  CHECK(R.eventUse(E, S) == DeviceSuccess);
  CHECK(R.eventUse(S, S) == DeviceInvalidResourceHandle); // a stream is no event
  CHECK(R.streamDestroy(S) == DeviceSuccess);
  CHECK(R.streamDestroy(S) == DeviceInvalidResourceHandle);
  CHECK(R.eventDestroy(E) == DeviceSuccess);
  CHECK(R.copy(0, 0, 0, /*cudaMemcpyHostToDevice=*/1, DeviceStreamNull) == DeviceInvalidValue);

  uint64_t P = 0;
  CHECK(R.allocate(1 << 21, P) == DeviceMemoryAllocation); // past the 1 MiB heap
  CHECK(P == 0);
  CHECK(R.allocate(100, P) == DeviceSuccess);
  CHECK(P % 256 == 0);
  CHECK(R.release(P) == DeviceSuccess);
  CHECK(R.release(P) == DeviceInvalidValue);
}

TEST_CASE("device runtime: a grid at CUDA's depth limit cannot launch") {
  FakeRuntime Deep(DeviceRuntime::MaxDepth - 1, 100);
  Descriptor K;
  void *A = Deep.parameterBuffer(K.address(), {1, 1, 1}, {1, 1, 1}, 0);
  REQUIRE(A);
  CHECK(Deep.launch(A, DeviceStreamNull) == DeviceLaunchMaxDepthExceeded);
  CHECK(std::string(deviceErrorText(DeviceLaunchMaxDepthExceeded, true)) == "cudaErrorLaunchMaxDepthExceeded");
  CHECK(std::string(deviceErrorText(12345, false)) == "unrecognized error code");
}
