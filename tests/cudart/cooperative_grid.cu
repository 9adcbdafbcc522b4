// Cooperative launches through libcudart: cooperative_groups' grid.sync() across every block of a grid sized
// by the occupancy API, through cudaLaunchCooperativeKernel and through cudaLaunchKernelEx's cooperative
// attribute; a grid larger than the device holds at once is refused.
#include <cooperative_groups.h>
#include <cstdio>
#include <vector>

namespace cg = cooperative_groups;

static int Failures = 0;
static void check(bool Ok, const char *Name) {
  std::printf("%s %s\n", Ok ? "PASS" : "FAIL", Name);
  Failures += !Ok;
}

// Two phases separated by a grid-wide barrier: every block writes its partial sum, then block 0 adds them all.
__global__ void twoPhaseSum(const int *In, int *Partial, int *Out, int N) {
  cg::grid_group Grid = cg::this_grid();
  __shared__ int Block;
  if (threadIdx.x == 0)
    Block = 0;
  __syncthreads();
  for (int I = Grid.thread_rank(); I < N; I += Grid.size())
    atomicAdd(&Block, In[I]);
  __syncthreads();
  if (threadIdx.x == 0)
    Partial[blockIdx.x] = Block;
  Grid.sync();
  if (Grid.thread_rank() == 0) {
    int Sum = 0;
    for (unsigned B = 0; B < gridDim.x; ++B)
      Sum += Partial[B];
    *Out = Sum;
  }
}

int main() {
  int Sms = 0, PerSm = 0;
  cudaDeviceGetAttribute(&Sms, cudaDevAttrMultiProcessorCount, 0);
  int Coop = 0;
  cudaDeviceGetAttribute(&Coop, cudaDevAttrCooperativeLaunch, 0);
  check(Coop == 1, "cooperative_launch_attribute");
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&PerSm, twoPhaseSum, 128, 0) == cudaSuccess && PerSm > 0,
        "occupancy");
  int Blocks = Sms * PerSm;
  if (Blocks > 64)
    Blocks = 64;
  const int N = 100000;
  std::vector<int> Host(N);
  for (int I = 0; I < N; ++I)
    Host[I] = I % 7;
  long Expected = 0;
  for (int V : Host)
    Expected += V;
  int *In, *Partial, *Out;
  cudaMalloc(&In, N * sizeof(int));
  cudaMalloc(&Partial, (Blocks + 1) * sizeof(int));
  cudaMalloc(&Out, sizeof(int));
  cudaMemcpy(In, Host.data(), N * sizeof(int), cudaMemcpyHostToDevice);
  int NArg = N;
  void *Args[] = {&In, &Partial, &Out, &NArg};

  cudaMemset(Out, 0, sizeof(int));
  cudaError_t E = cudaLaunchCooperativeKernel((const void *)twoPhaseSum, Blocks, 128, Args, 0, 0);
  int Sum = -1;
  cudaMemcpy(&Sum, Out, sizeof(int), cudaMemcpyDeviceToHost);
  check(E == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess && Sum == Expected, "grid_sync_sum");

  cudaMemset(Out, 0, sizeof(int));
  cudaLaunchConfig_t Config = {};
  Config.gridDim = dim3(Blocks);
  Config.blockDim = dim3(128);
  cudaLaunchAttribute Attr[1];
  Attr[0].id = cudaLaunchAttributeCooperative;
  Attr[0].val.cooperative = 1;
  Config.attrs = Attr;
  Config.numAttrs = 1;
  E = cudaLaunchKernelEx(&Config, twoPhaseSum, (const int *)In, Partial, Out, N);
  Sum = -1;
  cudaMemcpy(&Sum, Out, sizeof(int), cudaMemcpyDeviceToHost);
  check(E == cudaSuccess && Sum == Expected, "grid_sync_launch_ex");

  E = cudaLaunchCooperativeKernel((const void *)twoPhaseSum, Sms * PerSm + 1, 128, Args, 0, 0);
  check(E == cudaErrorCooperativeLaunchTooLarge, "too_large_refused");
  cudaGetLastError();
  check(cudaDeviceSynchronize() == cudaSuccess, "still_usable");
  cudaFree(In);
  cudaFree(Partial);
  cudaFree(Out);
  if (Failures)
    std::printf("SUMMARY cooperative_grid: %d failed\n", Failures);
  else
    std::printf("SUMMARY cooperative_grid: all passed\n");
  return Failures != 0;
}
