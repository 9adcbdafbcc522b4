// sass_only: a program built with SASS and no PTX (-gencode arch=compute_80,code=sm_80). ptxforge runs kernels
// from PTX only, so like a GPU the binary has no image for, the first launch fails with
// cudaErrorNoKernelImageForDevice (reported through cudaGetLastError; libcudart says on stderr that PTX is
// missing); the rest of the runtime keeps working.
#include <cstdio>
#include <cuda_runtime.h>

#include "check.h"

__global__ void k(int *p) { p[threadIdx.x] = threadIdx.x; }

int main() {
  setvbuf(stdout, NULL, _IONBF, 0);
  int *d = nullptr;
  CHECK(cudaMalloc(&d, 256) == cudaSuccess, "malloc", "x");
  k<<<1, 32>>>(d);
  cudaError_t e = cudaGetLastError();
  printf("OBSERVED launch without PTX -> %s\n", cudaGetErrorName(e));
  CHECK(e == cudaErrorNoKernelImageForDevice, "no_kernel_image", "%s", cudaGetErrorName(e));
  k<<<1, 32>>>(d);
  e = cudaGetLastError();
  CHECK(e == cudaErrorNoKernelImageForDevice, "no_kernel_image_again", "%s", cudaGetErrorName(e));
  cudaFuncAttributes fa;
  e = cudaFuncGetAttributes(&fa, k);
  CHECK(e == cudaErrorNoKernelImageForDevice, "func_attributes_no_image", "%s", cudaGetErrorName(e));
  cudaGetLastError();
  CHECK(cudaMemset(d, 0, 256) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess, "runtime_still_works", "x");
  CHECK(cudaFree(d) == cudaSuccess, "free", "x");
  if (failures) {
    printf("SUMMARY sass_only: %d failure(s)\n", failures);
    return 1;
  }
  printf("SUMMARY sass_only: all passed\n");
  return 0;
}
