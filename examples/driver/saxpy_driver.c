/* The quick start's last step: an ordinary CUDA driver-API program, written against cuda.h and linked to
 * libcuda.so.1, here ptxforge's. It loads a module (a fatbin written by `ptxforge compile`, or PTX), runs
 * y = a*x + y over N elements, checks every element against the same computation on the host, and prints the
 * kernel time measured with CUDA events.
 *
 *   saxpy_driver MODULE [N] [-v]      (-v prints the loader's JIT log: which fatbin entry it used)
 *
 * Exit status: 0 when the result is right, 1 on a wrong result or any CUDA error. */
#include <cuda.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(CUresult R, const char *What) {
  if (R == CUDA_SUCCESS)
    return 0;
  const char *Name = NULL, *Text = NULL;
  cuGetErrorName(R, &Name);
  cuGetErrorString(R, &Text);
  fprintf(stderr, "saxpy_driver: %s failed: %s (%s)\n", What, Name ? Name : "?", Text ? Text : "?");
  return 1;
}

#define CHECK(call)                                                                                                    \
  do {                                                                                                                 \
    if (check((call), #call))                                                                                          \
      return 1;                                                                                                        \
  } while (0)

static char *readFile(const char *Path) {
  FILE *F = fopen(Path, "rb");
  if (!F) {
    perror(Path);
    return NULL;
  }
  fseek(F, 0, SEEK_END);
  long Size = ftell(F);
  fseek(F, 0, SEEK_SET);
  char *Data = Size >= 0 ? malloc((size_t)Size + 1) : NULL;
  if (!Data || fread(Data, 1, (size_t)Size, F) != (size_t)Size) {
    fprintf(stderr, "saxpy_driver: cannot read %s\n", Path);
    fclose(F);
    free(Data);
    return NULL;
  }
  Data[Size] = 0; /* PTX text must end in a NUL; a fatbin ignores it */
  fclose(F);
  return Data;
}

int main(int argc, char **argv) {
  const char *Path = NULL;
  unsigned N = 1u << 20;
  int Verbose = 0;
  for (int I = 1; I < argc; ++I) {
    if (!strcmp(argv[I], "-v"))
      Verbose = 1;
    else if (!Path)
      Path = argv[I];
    else
      N = (unsigned)strtoul(argv[I], NULL, 10);
  }
  if (!Path || N == 0) {
    fprintf(stderr, "usage: saxpy_driver MODULE [N] [-v]\n");
    return 1;
  }
  char *Image = readFile(Path);
  if (!Image)
    return 1;

  CUdevice Dev;
  CUcontext Ctx;
  char DevName[128];
  int Major = 0, Minor = 0;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&Dev, 0));
  CHECK(cuDeviceGetName(DevName, sizeof DevName, Dev));
  CHECK(cuDeviceGetAttribute(&Major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, Dev));
  CHECK(cuDeviceGetAttribute(&Minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, Dev));
  CHECK(cuDevicePrimaryCtxRetain(&Ctx, Dev));
  CHECK(cuCtxSetCurrent(Ctx));
  printf("device: %s (compute capability %d.%d)\n", DevName, Major, Minor);

  /* The JIT options every CUDA program may pass; ptxforge's loader says in the info log what it loaded. */
  char InfoLog[4096] = "", ErrorLog[4096] = "";
  CUjit_option Opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
  void *Values[] = {InfoLog, (void *)(size_t)sizeof InfoLog, ErrorLog, (void *)(size_t)sizeof ErrorLog, (void *)1};
  CUmodule Module;
  CUresult Loaded = cuModuleLoadDataEx(&Module, Image, 5, Opts, Values);
  if (Loaded != CUDA_SUCCESS && ErrorLog[0])
    fprintf(stderr, "%s%s", ErrorLog, ErrorLog[strlen(ErrorLog) - 1] == '\n' ? "" : "\n");
  if (check(Loaded, "cuModuleLoadDataEx"))
    return 1;
  CUfunction Saxpy;
  CHECK(cuModuleGetFunction(&Saxpy, Module, "saxpy"));
  if (Verbose && InfoLog[0])
    printf("%s", InfoLog);

  size_t Bytes = (size_t)N * sizeof(float);
  float *X = malloc(Bytes), *Y = malloc(Bytes), *Want = malloc(Bytes);
  if (!X || !Y || !Want)
    return 1;
  float A = 2.5f;
  for (unsigned I = 0; I < N; ++I) {
    X[I] = (float)(I % 1000) * 0.25f;
    Y[I] = (float)(I % 7) - 3.0f;
    Want[I] = fmaf(A, X[I], Y[I]); /* fma.rn.f32, as the kernel computes it */
  }
  CUdeviceptr DX, DY;
  CHECK(cuMemAlloc(&DX, Bytes));
  CHECK(cuMemAlloc(&DY, Bytes));
  CHECK(cuMemcpyHtoD(DX, X, Bytes));
  CHECK(cuMemcpyHtoD(DY, Y, Bytes));

  CUevent Start, Stop;
  CHECK(cuEventCreate(&Start, CU_EVENT_DEFAULT));
  CHECK(cuEventCreate(&Stop, CU_EVENT_DEFAULT));
  void *Args[] = {&DX, &DY, &A, &N};
  unsigned Block = 256, Grid = (N + Block - 1) / Block;
  CHECK(cuEventRecord(Start, NULL));
  CHECK(cuLaunchKernel(Saxpy, Grid, 1, 1, Block, 1, 1, 0, NULL, Args, NULL));
  CHECK(cuEventRecord(Stop, NULL));
  CHECK(cuEventSynchronize(Stop));
  float Ms = 0;
  CHECK(cuEventElapsedTime(&Ms, Start, Stop));
  CHECK(cuMemcpyDtoH(Y, DY, Bytes));

  unsigned Bad = 0;
  for (unsigned I = 0; I < N; ++I)
    if (Y[I] != Want[I] && Bad++ < 5)
      fprintf(stderr, "saxpy_driver: y[%u] = %.9g, expected %.9g\n", I, Y[I], Want[I]);
  printf("saxpy over %u elements (%u blocks of %u threads): %.3f ms, %.2f GB/s\n", N, Grid, Block, Ms,
         Ms > 0 ? 3.0 * (double)Bytes / (Ms * 1e6) : 0.0);
  printf("result check: %s\n", Bad ? "FAILED" : "y = a*x + y matches the host computation for every element");

  cuEventDestroy(Start);
  cuEventDestroy(Stop);
  cuMemFree(DX);
  cuMemFree(DY);
  cuModuleUnload(Module);
  cuDevicePrimaryCtxRelease(Dev);
  free(X);
  free(Y);
  free(Want);
  free(Image);
  return Bad ? 1 : 0;
}
