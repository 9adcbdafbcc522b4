/* ptxforge::cuda: a CUDA driver API program against the installed libcuda.so.1 and ptxforge's cuda.h. */
#include <cuda.h>

#include <stdio.h>

int main(void) {
  int count = 0;
  char name[128];
  CUdevice dev;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&count) != CUDA_SUCCESS || count != 1 ||
      cuDeviceGet(&dev, 0) != CUDA_SUCCESS || cuDeviceGetName(name, sizeof name, dev) != CUDA_SUCCESS)
    return 1;
  printf("CUDA consumer: %d device: %s\n", count, name);
  return 0;
}
