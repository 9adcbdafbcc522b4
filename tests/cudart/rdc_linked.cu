// rdc_linked: a program of two translation units built with separate compilation (-rdc=true), as CMake's
// CUDA_SEPARABLE_COMPILATION builds it; rdc_linked_lib.cu is the other unit. Its kernel calls a __device__
// function of the other unit, which reads a __constant__ defined here; both units update a __device__ counter
// defined there; each has a static __device__ variable of the same name; a kernel of the other unit is
// launched from here, and counts its launches in a __managed__ variable of that unit this one reads and writes.
// libcudart must link the units' relocatable PTX (nvcc -dlink links SASS only).
#include <cstdio>
#include <cuda_runtime.h>

#include "check.h"

extern __device__ int lib_transform(int x); // rdc_linked_lib.cu: x * c_factor + own_offset (= 1000)
extern __device__ int g_hits;               // rdc_linked_lib.cu
__global__ void lib_fill(int *out, int n);  // rdc_linked_lib.cu: out[i] = -i, counts hits and m_launches
extern __managed__ int m_launches;          // rdc_linked_lib.cu

__constant__ int c_factor = 3;        // used by lib_transform
static __device__ int own_offset = 5; // lib has its own own_offset (1000)

__global__ void main_kernel(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = lib_transform(i) + own_offset;
    atomicAdd(&g_hits, 1);
  }
}

int main() {
  setvbuf(stdout, NULL, _IONBF, 0);
  const int n = 1000;
  int *d = nullptr;
  CHECK(cudaMalloc(&d, n * sizeof(int)) == cudaSuccess, "malloc", "x");
  main_kernel<<<(n + 127) / 128, 128>>>(d, n);
  cudaError_t e = cudaGetLastError();
  CHECK(e == cudaSuccess, "launch_main_kernel", "%s", cudaGetErrorName(e));
  static int h[n];
  e = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  CHECK(e == cudaSuccess, "copy_back", "%s", cudaGetErrorName(e));
  int bad = -1;
  for (int i = 0; i < n && bad < 0; ++i)
    if (h[i] != i * 3 + 1000 + 5)
      bad = i;
  CHECK(bad < 0, "cross_unit_call", "out[%d] = %d, expected %d", bad, bad < 0 ? 0 : h[bad], bad * 3 + 1005);

  m_launches = 40;
  lib_fill<<<(n + 255) / 256, 256>>>(d, n);
  e = cudaDeviceSynchronize();
  CHECK(e == cudaSuccess, "launch_other_unit_kernel", "%s", cudaGetErrorName(e));
  CHECK(m_launches == 41, "managed_variable_of_other_unit", "%d", m_launches);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  CHECK(h[0] == 0 && h[999] == -999, "other_unit_kernel_result", "%d %d", h[0], h[999]);

  int hits = 0;
  e = cudaMemcpyFromSymbol(&hits, g_hits, sizeof hits);
  CHECK(e == cudaSuccess && hits == 2 * n, "shared_device_variable", "%s, %d hits", cudaGetErrorName(e), hits);
  int factor = 7;
  CHECK(cudaMemcpyToSymbol(c_factor, &factor, sizeof factor) == cudaSuccess, "set_constant", "x");
  main_kernel<<<1, 2>>>(d, 2);
  cudaMemcpy(h, d, 2 * sizeof(int), cudaMemcpyDeviceToHost);
  CHECK(h[1] == 7 + 1005, "constant_update_seen_by_other_unit", "%d", h[1]);
  CHECK(cudaFree(d) == cudaSuccess, "free", "x");
  if (failures) {
    printf("SUMMARY rdc_linked: %d failure(s)\n", failures);
    return 1;
  }
  printf("SUMMARY rdc_linked: all passed\n");
  return 0;
}
