// rdc_unresolved: a -rdc=true program whose kernel calls a __device__ function no translation unit defines.
// A PTX-only build links (nvlink cannot see into PTX); the JIT link of its PTX at the first launch fails. The
// launch (and every later use of the program's kernels) returns cudaErrorInvalidPtx, the unresolved name
// goes to stderr, and the rest of the runtime keeps working.
#include <cstdio>
#include <cuda_runtime.h>

#include "check.h"

extern __device__ int defined_nowhere(int x);

__global__ void calls_missing(int *p) { p[threadIdx.x] = defined_nowhere(threadIdx.x); }
__global__ void self_contained(int *p) { p[threadIdx.x] = threadIdx.x; }

int main() {
  setvbuf(stdout, NULL, _IONBF, 0);
  int *d = nullptr;
  CHECK(cudaMalloc(&d, 256) == cudaSuccess, "malloc", "x");
  calls_missing<<<1, 32>>>(d);
  cudaError_t e = cudaGetLastError();
  printf("OBSERVED launch of an unlinkable program -> %s\n", cudaGetErrorName(e));
  CHECK(e == cudaErrorInvalidPtx, "unresolved_extern", "%s", cudaGetErrorName(e));
  // The whole module failed to link: its other kernels too, without a second link.
  self_contained<<<1, 32>>>(d);
  e = cudaGetLastError();
  CHECK(e == cudaErrorInvalidPtx, "same_module_kernel", "%s", cudaGetErrorName(e));
  CHECK(cudaMemset(d, 0, 256) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess, "runtime_still_works", "x");
  CHECK(cudaFree(d) == cudaSuccess, "free", "x");
  if (failures) {
    printf("SUMMARY rdc_unresolved: %d failure(s)\n", failures);
    return 1;
  }
  printf("SUMMARY rdc_unresolved: all passed\n");
  return 0;
}
