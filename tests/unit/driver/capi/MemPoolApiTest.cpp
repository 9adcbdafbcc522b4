// libcuda.so.1's memory pools and managed memory hints: the default and current pool of a device, pools of
// one's own with their attributes and access, allocations from a pool counted in its usage until freed (and
// named by the pointer's MEMPOOL_HANDLE attribute), and the argument checks of cuStreamAttachMemAsync,
// cuMemPrefetchAsync and cuMemAdvise, which move nothing since device memory is the host's.
#include <cuda.h>

#include <doctest/doctest.h>

#include <dlfcn.h>

namespace {

void context() {
  static CUcontext C = [] {
    REQUIRE(cuInit(0) == CUDA_SUCCESS);
    CUcontext Ctx = nullptr;
    REQUIRE(cuDevicePrimaryCtxRetain(&Ctx, 0) == CUDA_SUCCESS);
    return Ctx;
  }();
  REQUIRE(cuCtxSetCurrent(C) == CUDA_SUCCESS);
}

cuuint64_t attribute(CUmemoryPool P, CUmemPool_attribute A) {
  cuuint64_t V = ~0ull;
  CHECK(cuMemPoolGetAttribute(P, A, &V) == CUDA_SUCCESS);
  return V;
}

CUmemPoolProps deviceProps(int Device) {
  CUmemPoolProps Props = {};
  Props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  Props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  Props.location.id = Device;
  return Props;
}

template <class F> F symbol(const char *Name) { return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, Name)); }

} // namespace

TEST_CASE("the default pool: current until another is set, attributes, usage of its allocations") {
  context();
  CUmemoryPool Default = nullptr, Current = nullptr;
  CHECK(cuDeviceGetDefaultMemPool(nullptr, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuDeviceGetDefaultMemPool(&Default, 7) == CUDA_ERROR_INVALID_DEVICE);
  REQUIRE(cuDeviceGetDefaultMemPool(&Default, 0) == CUDA_SUCCESS);
  REQUIRE(cuDeviceGetMemPool(&Current, 0) == CUDA_SUCCESS);
  CHECK(Current == Default);
  CHECK(cuMemPoolDestroy(Default) == CUDA_ERROR_INVALID_VALUE);

  cuuint64_t Threshold = ~0ull;
  CHECK(cuMemPoolSetAttribute(Default, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &Threshold) == CUDA_SUCCESS);
  CHECK(attribute(Default, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == ~0ull);
  int Off = 0;
  CHECK(cuMemPoolSetAttribute(Default, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &Off) == CUDA_SUCCESS);
  int Flag = -1;
  CHECK(cuMemPoolGetAttribute(Default, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &Flag) == CUDA_SUCCESS);
  CHECK(Flag == 0);
  cuuint64_t Used = 1;
  CHECK(cuMemPoolSetAttribute(Default, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &Used) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemPoolSetAttribute(Default, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &Used) == CUDA_ERROR_INVALID_VALUE);

  cuuint64_t Before = attribute(Default, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
  CUdeviceptr P = 0;
  REQUIRE(cuMemAllocAsync(&P, 1000, nullptr) == CUDA_SUCCESS);
  CHECK(attribute(Default, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == Before + 1000);
  CHECK(attribute(Default, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == Before + 1000);
  CUmemoryPool Owner = nullptr;
  CHECK(cuPointerGetAttribute(&Owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, P) == CUDA_SUCCESS);
  CHECK(Owner == Default);
  REQUIRE(cuMemFreeAsync(P, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(attribute(Default, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == Before);
  CHECK(attribute(Default, CU_MEMPOOL_ATTR_USED_MEM_HIGH) >= Before + 1000);
  cuuint64_t Zero = 0;
  CHECK(cuMemPoolSetAttribute(Default, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &Zero) == CUDA_SUCCESS);
  CHECK(attribute(Default, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == Before);
  CHECK(cuMemPoolTrimTo(Default, 0) == CUDA_SUCCESS);
}

TEST_CASE("pools of one's own: creation checks, allocations from them, the current pool, access, destruction") {
  context();
  CUmemoryPool Pool = nullptr;
  CUmemPoolProps Props = deviceProps(0);
  CHECK(cuMemPoolCreate(&Pool, nullptr) == CUDA_ERROR_INVALID_VALUE);
  Props.allocType = CU_MEM_ALLOCATION_TYPE_INVALID;
  CHECK(cuMemPoolCreate(&Pool, &Props) == CUDA_ERROR_INVALID_VALUE);
  Props = deviceProps(5);
  CHECK(cuMemPoolCreate(&Pool, &Props) == CUDA_ERROR_INVALID_VALUE);
  Props = deviceProps(0);
  Props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CHECK(cuMemPoolCreate(&Pool, &Props) == CUDA_ERROR_NOT_SUPPORTED);
  Props = deviceProps(0);
  REQUIRE(cuMemPoolCreate(&Pool, &Props) == CUDA_SUCCESS);

  CUstream S;
  REQUIRE(cuStreamCreate(&S, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  CUdeviceptr P = 0;
  CHECK(cuMemAllocFromPoolAsync(&P, 64, nullptr, S) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemAllocFromPoolAsync(&P, 0, Pool, S) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(cuMemAllocFromPoolAsync(&P, 4096, Pool, S) == CUDA_SUCCESS);
  CHECK(cuMemsetD8Async(P, 7, 4096, S) == CUDA_SUCCESS);
  CHECK(attribute(Pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 4096);
  CHECK(cuMemFreeAsync(P, S) == CUDA_SUCCESS);
  CHECK(cuStreamSynchronize(S) == CUDA_SUCCESS);
  CHECK(attribute(Pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 0);
  CHECK(attribute(Pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 4096);

  // cuMemAllocAsync takes the device's current pool.
  REQUIRE(cuDeviceSetMemPool(0, Pool) == CUDA_SUCCESS);
  CUmemoryPool Current = nullptr;
  CHECK(cuDeviceGetMemPool(&Current, 0) == CUDA_SUCCESS);
  CHECK(Current == Pool);
  REQUIRE(cuMemAllocAsync(&P, 100, S) == CUDA_SUCCESS);
  CHECK(attribute(Pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 100);

  // The owning device always has read-write access; it cannot be taken away.
  CUmemLocation Here = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemAccess_flags Flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  CHECK(cuMemPoolGetAccess(&Flags, Pool, &Here) == CUDA_SUCCESS);
  CHECK(Flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CUmemAccessDesc Desc = {Here, CU_MEM_ACCESS_FLAGS_PROT_NONE};
  CHECK(cuMemPoolSetAccess(Pool, &Desc, 1) == CUDA_ERROR_INVALID_DEVICE);
  Desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CHECK(cuMemPoolSetAccess(Pool, &Desc, 1) == CUDA_SUCCESS);
  Desc.location.id = 9;
  CHECK(cuMemPoolSetAccess(Pool, &Desc, 1) == CUDA_ERROR_INVALID_VALUE);

  // Destroying the current pool makes the default one current again; its memory stays usable until freed.
  CHECK(cuMemPoolDestroy(Pool) == CUDA_SUCCESS);
  CHECK(cuMemPoolDestroy(Pool) == CUDA_ERROR_INVALID_VALUE);
  CUmemoryPool Default = nullptr;
  CHECK(cuDeviceGetMemPool(&Current, 0) == CUDA_SUCCESS);
  CHECK(cuDeviceGetDefaultMemPool(&Default, 0) == CUDA_SUCCESS);
  CHECK(Current == Default);
  CHECK(cuMemsetD8Async(P, 1, 100, S) == CUDA_SUCCESS);
  CHECK(cuMemFreeAsync(P, S) == CUDA_SUCCESS);
  CHECK(cuStreamSynchronize(S) == CUDA_SUCCESS);
  CHECK(cuStreamDestroy(S) == CUDA_SUCCESS);
}

TEST_CASE("managed memory hints check their arguments") {
  context();
  CUdeviceptr M = 0, D = 0;
  REQUIRE(cuMemAllocManaged(&M, 4096, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
  REQUIRE(cuMemAlloc(&D, 4096) == CUDA_SUCCESS);
  CUstream S;
  REQUIRE(cuStreamCreate(&S, 0) == CUDA_SUCCESS);

  CHECK(cuStreamAttachMemAsync(S, M, 0, CU_MEM_ATTACH_SINGLE) == CUDA_SUCCESS);
  CHECK(cuStreamAttachMemAsync(S, M, 4096, CU_MEM_ATTACH_HOST) == CUDA_SUCCESS);
  CHECK(cuStreamAttachMemAsync(S, M, 100, CU_MEM_ATTACH_GLOBAL) == CUDA_ERROR_INVALID_VALUE); // not all of it
  CHECK(cuStreamAttachMemAsync(S, M, 0, 8) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuStreamAttachMemAsync(S, D, 0, CU_MEM_ATTACH_GLOBAL) == CUDA_ERROR_INVALID_VALUE); // not managed
  CHECK(cuStreamAttachMemAsync(nullptr, M, 0, CU_MEM_ATTACH_SINGLE) == CUDA_ERROR_INVALID_VALUE);

  CUmemLocation Dev = {CU_MEM_LOCATION_TYPE_DEVICE, 0}, Host = {CU_MEM_LOCATION_TYPE_HOST, 0};
  CUmemLocation Bad = {CU_MEM_LOCATION_TYPE_DEVICE, 3};
  CHECK(cuMemPrefetchAsync_v2(M, 4096, Dev, 0, S) == CUDA_SUCCESS);
  CHECK(cuMemPrefetchAsync_v2(M + 100, 200, Host, 0, S) == CUDA_SUCCESS);
  CHECK(cuMemPrefetchAsync_v2(M, 4097, Dev, 0, S) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemPrefetchAsync_v2(D, 4096, Dev, 0, S) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemPrefetchAsync_v2(M, 4096, Bad, 0, S) == CUDA_ERROR_INVALID_DEVICE);
  using Prefetch1 = CUresult (*)(CUdeviceptr, size_t, CUdevice, CUstream);
  auto PrefetchV1 = symbol<Prefetch1>("cuMemPrefetchAsync");
  bool HasV1 = PrefetchV1 != nullptr;
  REQUIRE(HasV1);
  CHECK(PrefetchV1(M, 4096, CU_DEVICE_CPU, S) == CUDA_SUCCESS);
  CHECK(PrefetchV1(M, 4096, 0, S) == CUDA_SUCCESS);

  CHECK(cuMemAdvise_v2(M, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, Bad) == CUDA_SUCCESS); // location unused
  CHECK(cuMemAdvise_v2(M, 4096, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, Dev) == CUDA_SUCCESS);
  CHECK(cuMemAdvise_v2(M, 4096, CU_MEM_ADVISE_SET_ACCESSED_BY, Bad) == CUDA_ERROR_INVALID_DEVICE);
  CHECK(cuMemAdvise_v2(M, 4096, static_cast<CUmem_advise>(9), Dev) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemAdvise_v2(D, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, Dev) == CUDA_ERROR_INVALID_VALUE);
  using Advise1 = CUresult (*)(CUdeviceptr, size_t, CUmem_advise, CUdevice);
  auto AdviseV1 = symbol<Advise1>("cuMemAdvise");
  HasV1 = AdviseV1 != nullptr;
  REQUIRE(HasV1);
  CHECK(AdviseV1(M, 4096, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CU_DEVICE_CPU) == CUDA_SUCCESS);

  CHECK(cuStreamSynchronize(S) == CUDA_SUCCESS);
  CHECK(cuStreamDestroy(S) == CUDA_SUCCESS);
  CHECK(cuMemFree(M) == CUDA_SUCCESS);
  CHECK(cuMemFree(D) == CUDA_SUCCESS);
}
