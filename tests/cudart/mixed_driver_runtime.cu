// mixed_driver_runtime: the driver and runtime APIs in one process (Programming Guide, "Interoperability
// between Runtime and Driver APIs"): a context created and made current with the driver API is the one
// runtime calls use; memory from either API works with the other; without a current context the runtime
// uses the device's primary context, which cuDevicePrimaryCtxRetain returns too.
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>

#include "check.h"

__global__ void fill(int *p, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = v + i;
}

int main() {
  setvbuf(stdout, NULL, _IONBF, 0);
  CHECK(cuInit(0) == CUDA_SUCCESS, "cuInit", "x");
  CUdevice dev;
  cuDeviceGet(&dev, 0);
  CUcontext ctx = nullptr;
  CUctxCreateParams params = {};
  CHECK(cuCtxCreate(&ctx, &params, 0, dev) == CUDA_SUCCESS, "cuCtxCreate", "x");

  // runtime allocation and launch go to the driver's current context
  int *d = nullptr;
  cudaError_t e = cudaMalloc(&d, 256 * sizeof(int));
  CHECK(e == cudaSuccess, "cudaMalloc_in_driver_context", "%s", cudaGetErrorName(e));
  CUcontext owner = nullptr;
  CUresult r = cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, (CUdeviceptr)d);
  CHECK(r == CUDA_SUCCESS && owner == ctx, "runtime_memory_owned_by_driver_context", "r=%d", (int)r);
  fill<<<2, 128>>>(d, 100, 256);
  CHECK(cudaGetLastError() == cudaSuccess, "runtime_launch", "x");
  CHECK(cuCtxSynchronize() == CUDA_SUCCESS, "cuCtxSynchronize_waits_for_runtime_launch", "x");
  int h[256] = {};
  CHECK(cuMemcpyDtoH(h, (CUdeviceptr)d, sizeof h) == CUDA_SUCCESS && h[255] == 355, "driver_copy_of_runtime_result",
        "%d", h[255]);

  // driver allocation used by a runtime kernel and freed by the runtime
  CUdeviceptr dd = 0;
  CHECK(cuMemAlloc(&dd, 64 * sizeof(int)) == CUDA_SUCCESS, "cuMemAlloc", "x");
  fill<<<1, 64>>>((int *)dd, 7, 64);
  e = cudaMemcpy(h, (void *)dd, 64 * sizeof(int), cudaMemcpyDeviceToHost);
  CHECK(e == cudaSuccess && h[63] == 70, "runtime_copy_of_driver_memory", "%s %d", cudaGetErrorName(e), h[63]);
  CHECK(cudaFree((void *)dd) == cudaSuccess, "cudaFree_of_cuMemAlloc", "x");
  CHECK(cudaFree(d) == cudaSuccess, "cudaFree", "x");

  // destroying the context leaves none current: the runtime then uses the primary context
  CHECK(cuCtxDestroy(ctx) == CUDA_SUCCESS, "cuCtxDestroy", "x");
  CUcontext cur = (CUcontext)1;
  cuCtxGetCurrent(&cur);
  CHECK(cur == nullptr, "no_current_context", "%p", (void *)cur);
  CHECK(cudaMalloc(&d, 16) == cudaSuccess, "cudaMalloc_primary", "x");
  cuCtxGetCurrent(&cur);
  CUcontext primary = nullptr;
  CHECK(cuDevicePrimaryCtxRetain(&primary, dev) == CUDA_SUCCESS, "cuDevicePrimaryCtxRetain", "x");
  CHECK(cur != nullptr && cur == primary, "runtime_made_primary_current", "%p %p", (void *)cur, (void *)primary);
  cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, (CUdeviceptr)d);
  CHECK(owner == primary, "runtime_memory_in_primary_context", "x");
  fill<<<1, 4>>>(d, 1, 4);
  CHECK(cudaDeviceSynchronize() == cudaSuccess, "launch_in_primary", "x");
  cuDevicePrimaryCtxRelease(dev);
  cudaFree(d);
  if (failures) {
    printf("SUMMARY mixed_driver_runtime: %d failure(s)\n", failures);
    return 1;
  }
  printf("SUMMARY mixed_driver_runtime: all passed\n");
  return 0;
}
