// Several devices (PTXFORGE_DEVICE_CC=9.0,8.0, set by CTest for this program): each has its own compute
// capability, attributes, UUID, PCI bus number and primary context; modules load for their context's device;
// every device can access every other's memory, peer access is recorded per context pair with NVIDIA's error
// codes, and peer copies work between contexts of different devices.
#include <cuda.h>

#include "TestKernels.h"

#include <doctest/doctest.h>

#include <cstring>
#include <string>

namespace {

void init() { REQUIRE(cuInit(0) == CUDA_SUCCESS); }

CUcontext primary(CUdevice D) {
  CUcontext C = nullptr;
  REQUIRE(cuDevicePrimaryCtxRetain(&C, D) == CUDA_SUCCESS);
  return C;
}

} // namespace

TEST_CASE("PTXFORGE_DEVICE_CC lists two devices, each with its own properties") {
  init();
  int N = 0;
  REQUIRE(cuDeviceGetCount(&N) == CUDA_SUCCESS);
  REQUIRE(N == 2);
  int Major[2], Minor[2];
  for (int D = 0; D < 2; ++D)
    CHECK(cuDeviceComputeCapability(&Major[D], &Minor[D], D) == CUDA_SUCCESS);
  CHECK(Major[0] == 9);
  CHECK(Major[1] == 8);
  int Smem1 = 0;
  CHECK(cuDeviceGetAttribute(&Smem1, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 1) == CUDA_SUCCESS);
  CHECK(Smem1 == 163 * 1024); // the A100's, not the H100's 227 KB
  CUuuid U0, U1;
  CHECK(cuDeviceGetUuid(&U0, 0) == CUDA_SUCCESS);
  CHECK(cuDeviceGetUuid(&U1, 1) == CUDA_SUCCESS);
  CHECK(std::memcmp(U0.bytes, U1.bytes, 16) != 0);
  char Bus[32];
  CHECK(cuDeviceGetPCIBusId(Bus, sizeof Bus, 1) == CUDA_SUCCESS);
  CUdevice ByBus = -1;
  CHECK(cuDeviceGetByPCIBusId(&ByBus, Bus) == CUDA_SUCCESS);
  CHECK(ByBus == 1);
  int Dummy;
  CHECK(cuDeviceGetAttribute(&Dummy, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 2) == CUDA_ERROR_INVALID_DEVICE);
}

TEST_CASE("each device has its own primary context; modules load for their context's device") {
  init();
  CUcontext C0 = primary(0), C1 = primary(1);
  CHECK(C0 != C1);
  CUdevice D = -1;
  REQUIRE(cuCtxSetCurrent(C1) == CUDA_SUCCESS);
  CHECK(cuCtxGetDevice(&D) == CUDA_SUCCESS);
  CHECK(D == 1);
  // A kernel on device 1 (compute capability 8.0) runs there, writing memory device 0 allocated.
  REQUIRE(cuCtxSetCurrent(C0) == CUDA_SUCCESS);
  CUdeviceptr Out = 0;
  REQUIRE(cuMemAlloc(&Out, 4) == CUDA_SUCCESS);
  REQUIRE(cuCtxSetCurrent(C1) == CUDA_SUCCESS);
  CUmodule M = nullptr;
  REQUIRE(cuModuleLoadData(&M, ptxforge::testing::ApiKernelsPtx.c_str()) == CUDA_SUCCESS);
  CUfunction F = nullptr;
  REQUIRE(cuModuleGetFunction(&F, M, "store") == CUDA_SUCCESS);
  unsigned V = 1234;
  void *Args[] = {&Out, &V};
  REQUIRE(cuLaunchKernel(F, 1, 1, 1, 1, 1, 1, 0, nullptr, Args, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
  unsigned Back = 0;
  CHECK(cuMemcpyDtoH(&Back, Out, 4) == CUDA_SUCCESS);
  CHECK(Back == 1234);
  CHECK(cuModuleUnload(M) == CUDA_SUCCESS);
  REQUIRE(cuCtxSetCurrent(C0) == CUDA_SUCCESS);
  CHECK(cuMemFree(Out) == CUDA_SUCCESS);
}

TEST_CASE("peer access between the devices, peer attributes and peer copies") {
  init();
  CUcontext C0 = primary(0), C1 = primary(1);
  int Can = -1;
  CHECK(cuDeviceCanAccessPeer(&Can, 0, 1) == CUDA_SUCCESS);
  CHECK(Can == 1);
  CHECK(cuDeviceCanAccessPeer(&Can, 1, 1) == CUDA_SUCCESS);
  CHECK(Can == 0);
  int V = -1;
  CHECK(cuDeviceGetP2PAttribute(&V, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1) == CUDA_SUCCESS);
  CHECK(V == 1);
  CHECK(cuDeviceGetP2PAttribute(&V, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 1, 1) == CUDA_ERROR_INVALID_DEVICE);

  REQUIRE(cuCtxSetCurrent(C0) == CUDA_SUCCESS);
  CHECK(cuCtxDisablePeerAccess(C1) == CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
  CHECK(cuCtxEnablePeerAccess(C1, 1) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuCtxEnablePeerAccess(C0, 0) == CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
  CHECK(cuCtxEnablePeerAccess(C1, 0) == CUDA_SUCCESS);
  CHECK(cuCtxEnablePeerAccess(C1, 0) == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);

  CUdeviceptr A = 0, B = 0;
  REQUIRE(cuMemAlloc(&A, 64) == CUDA_SUCCESS);
  REQUIRE(cuCtxSetCurrent(C1) == CUDA_SUCCESS);
  REQUIRE(cuMemAlloc(&B, 64) == CUDA_SUCCESS);
  CHECK(cuMemsetD8(B, 0x5a, 64) == CUDA_SUCCESS);
  CHECK(cuMemcpyPeer(A, C0, B, C1, 64) == CUDA_SUCCESS);
  CHECK(cuMemsetD8(B, 0x11, 32) == CUDA_SUCCESS);
  CHECK(cuMemcpyPeerAsync(A, C0, B, C1, 16, nullptr) == CUDA_SUCCESS);
  CHECK(cuCtxSynchronize() == CUDA_SUCCESS);
  unsigned char Host[64];
  CHECK(cuMemcpyDtoH(Host, A, 64) == CUDA_SUCCESS);
  CHECK(Host[0] == 0x11);
  CHECK(Host[16] == 0x5a);
  CHECK(cuMemcpyPeer(A, reinterpret_cast<CUcontext>(&Host), B, C1, 64) == CUDA_ERROR_INVALID_CONTEXT);

  REQUIRE(cuCtxSetCurrent(C0) == CUDA_SUCCESS);
  CHECK(cuCtxDisablePeerAccess(C1) == CUDA_SUCCESS);
  CHECK(cuCtxDisablePeerAccess(C1) == CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
  CHECK(cuMemFree(A) == CUDA_SUCCESS);
  CHECK(cuMemFree(B) == CUDA_SUCCESS);
}
