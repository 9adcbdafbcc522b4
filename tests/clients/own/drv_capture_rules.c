/* Which calls a stream capture refuses, as NVIDIA's driver answers them (the expected output was recorded on an
 * H100, driver 580): synchronous copies and fills during a global-mode capture of a non-blocking stream run; of a
 * blocking stream they are _IMPLICIT (the legacy stream would wait for it); allocating and freeing device or
 * page-locked host memory is _UNSUPPORTED (potentially unsafe) unless the thread's mode is relaxed. Each such
 * refusal invalidates the capture. Prints every call's result. */
#include <cuda.h>
#include <stdio.h>
static void show(const char *what, CUresult r) {
  const char *n;
  cuGetErrorName(r, &n);
  printf("%s: %s\n", what, n);
}
int main(void) {
  CUdevice d;
  CUcontext ctx;
  cuInit(0);
  cuDeviceGet(&d, 0);
  cuCtxCreate(&ctx, NULL, 0, d);
  CUstream nb, bl;
  cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&bl, CU_STREAM_DEFAULT);
  CUdeviceptr x;
  cuMemAlloc(&x, 4096);
  static int h[1024];
  CUgraph g;
  CUdeviceptr y = 0; /* cuMemFree(0) too is refused during a capture: the capture check comes first */
  const char *names[] = {"nonblocking", "blocking"};
  CUstream ss[] = {nb, bl};
  for (int i = 0; i < 2; ++i) {
    char buf[128];
#define PROBE(label, call)                                                                                             \
  do {                                                                                                                 \
    show((sprintf(buf, "%s global %s", names[i], label), buf),                                                         \
         cuStreamBeginCapture(ss[i], CU_STREAM_CAPTURE_MODE_GLOBAL));                                                  \
    show(buf, call);                                                                                                   \
    show((sprintf(buf, "%s global %s end", names[i], label), buf), cuStreamEndCapture(ss[i], &g));                     \
  } while (0)
    PROBE("memcpyDtoH", cuMemcpyDtoH(h, x, 4096));
    PROBE("memcpyHtoD", cuMemcpyHtoD(x, h, 4096));
    PROBE("memcpyDtoD", cuMemcpyDtoD(x, x + 2048, 1024));
    PROBE("memsetD32", cuMemsetD32(x, 1, 1024));
    PROBE("memAlloc", cuMemAlloc(&y, 4096));
    PROBE("memFree", cuMemFree(y));
    PROBE("memAllocHost", cuMemAllocHost((void **)&y, 4096));
  }
  /* A thread in relaxed mode may allocate while its own capture (global mode) runs. */
  CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
  cuThreadExchangeStreamCaptureMode(&m);
  show("relaxed-thread begin", cuStreamBeginCapture(nb, CU_STREAM_CAPTURE_MODE_GLOBAL));
  show("relaxed-thread memAlloc", cuMemAlloc(&y, 4096));
  show("relaxed-thread end", cuStreamEndCapture(nb, &g));
  return 0;
}
