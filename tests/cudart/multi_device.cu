// multi_device: two devices (CTest sets PTXFORGE_DEVICE_CC=13.0,9.0), used as simpleP2P and simpleMultiGPU use
// them: each device's properties, cudaSetDevice switching primary contexts, peer access both ways with the
// runtime's error codes, a kernel on one device reading the other's memory, cudaMemcpyPeer(Async) and the
// peer attributes.
#include <cstdio>
#include <cuda_runtime.h>

#include "check.h"

__global__ void twice(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 2 * in[i];
}

int main() {
  setvbuf(stdout, NULL, _IONBF, 0);
  int n = 0;
  CK(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
  CHECK(n == 2, "two_devices", "%d", n);
  if (n != 2)
    return 1;
  cudaDeviceProp p0, p1;
  CK(cudaGetDeviceProperties(&p0, 0), "properties_0");
  CK(cudaGetDeviceProperties(&p1, 1), "properties_1");
  CHECK(p0.major == 13 && p1.major == 9 && p1.unifiedAddressing, "compute_capabilities", "%d %d", p0.major, p1.major);
  CHECK(p0.pciBusID != p1.pciBusID, "distinct_pci_bus", "%d %d", p0.pciBusID, p1.pciBusID);
  int can01 = 0, can11 = 1;
  CK(cudaDeviceCanAccessPeer(&can01, 0, 1), "cudaDeviceCanAccessPeer");
  CK(cudaDeviceCanAccessPeer(&can11, 1, 1), "cudaDeviceCanAccessPeer_self");
  CHECK(can01 == 1 && can11 == 0, "peer_capability", "%d %d", can01, can11);
  int rank = -1;
  CK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrAccessSupported, 0, 1), "cudaDeviceGetP2PAttribute");
  CHECK(rank == 1, "p2p_access_supported", "%d", rank);

  CK(cudaSetDevice(0), "set_device_0");
  CK(cudaDeviceEnablePeerAccess(1, 0), "cudaDeviceEnablePeerAccess_0_1");
  cudaError_t again = cudaDeviceEnablePeerAccess(1, 0);
  CHECK(again == cudaErrorPeerAccessAlreadyEnabled, "enable_twice", "%s", cudaGetErrorName(again));
  cudaGetLastError();
  CK(cudaSetDevice(1), "set_device_1");
  CK(cudaDeviceEnablePeerAccess(0, 0), "cudaDeviceEnablePeerAccess_1_0");
  int dev = -1;
  CK(cudaGetDevice(&dev), "cudaGetDevice");
  CHECK(dev == 1, "current_device", "%d", dev);

  const int N = 1000;
  int host[N], back[N];
  for (int i = 0; i < N; ++i)
    host[i] = i;
  int *g0 = nullptr, *g1 = nullptr;
  CK(cudaSetDevice(0), "set_device_0_again");
  CK(cudaMalloc(&g0, N * sizeof(int)), "malloc_device_0");
  CK(cudaMemcpy(g0, host, sizeof host, cudaMemcpyHostToDevice), "fill_device_0");
  CK(cudaSetDevice(1), "set_device_1_again");
  CK(cudaMalloc(&g1, N * sizeof(int)), "malloc_device_1");
  twice<<<(N + 255) / 256, 256>>>(g0, g1, N); // device 1 reads device 0's memory
  CK(cudaDeviceSynchronize(), "kernel_on_device_1");
  CK(cudaMemcpyPeer(g0, 0, g1, 1, sizeof host), "cudaMemcpyPeer");
  CK(cudaMemcpyPeerAsync(g0, 0, g1, 1, 16, 0), "cudaMemcpyPeerAsync");
  CK(cudaDeviceSynchronize(), "peer_copies_done");
  CK(cudaMemcpy(back, g0, sizeof back, cudaMemcpyDeviceToHost), "read_device_0");
  CHECK(back[0] == 0 && back[999] == 1998, "peer_results", "%d %d", back[0], back[999]);

  CK(cudaDeviceDisablePeerAccess(0), "cudaDeviceDisablePeerAccess_1_0");
  cudaError_t gone = cudaDeviceDisablePeerAccess(0);
  CHECK(gone == cudaErrorPeerAccessNotEnabled, "disable_twice", "%s", cudaGetErrorName(gone));
  cudaGetLastError();
  CK(cudaFree(g1), "free_device_1");
  CK(cudaSetDevice(0), "set_device_0_last");
  CK(cudaDeviceDisablePeerAccess(1), "cudaDeviceDisablePeerAccess_0_1");
  CK(cudaFree(g0), "free_device_0");
  printf("%s\n", failures ? "FAILED" : "ALL PASSED");
  return failures != 0;
}
