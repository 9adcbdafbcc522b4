// What CUDA programs rely on from the GPU's scheduling, beyond the programming guide's barriers: forward progress
// of threads that spin on each other inside a block (independent thread scheduling, sm_70+) and of blocks that
// spin on each other when the grid fits the occupancy the device reports; and the lockstep of a converged warp in
// legacy warp-synchronous code (shared-memory reductions and scans without __syncwarp), which every NVIDIA GPU
// gives straight-line code although Volta's model does not promise it. Outputs recorded on an H100.
#include <cstdio>
#include <vector>

static int Failures = 0;
static void check(bool Ok, const char *Name) {
  std::printf("%s %s\n", Ok ? "PASS" : "FAIL", Name);
  Failures += !Ok;
}

// Thread t waits for thread t+1's value, so the last thread must run first: a chain through the whole block.
__global__ void chainInBlock(int *Out) {
  __shared__ volatile int Value[256];
  unsigned T = threadIdx.x;
  Value[T] = 0;
  __syncthreads();
  if (T == blockDim.x - 1) {
    Value[T] = 1;
  } else {
    int Next;
    do {
      Next = Value[T + 1];
    } while (Next == 0);
    Value[T] = Next + 1;
  }
  __syncthreads();
  if (T == 0)
    Out[blockIdx.x] = Value[0];
}

// Neighbours in lockstep rounds: each thread waits until both neighbours finished the previous round, then
// averages their values (round R writes the buffer round R-2 wrote, which the neighbours have read once they
// finished round R-1). Each thread's progress depends on threads before and after it; no barrier at all.
__global__ void neighbourRounds(volatile int *Step, volatile float *Data, int Rounds, float *Out) {
  int T = threadIdx.x, N = blockDim.x;
  for (int R = 1; R <= Rounds; ++R) {
    bool Again;
    do {
      Again = (T > 0 && Step[T - 1] < R - 1) || (T + 1 < N && Step[T + 1] < R - 1);
    } while (Again);
    float Left = T > 0 ? Data[(R - 1) % 2 * N + T - 1] : 0.0f;
    float Right = T + 1 < N ? Data[(R - 1) % 2 * N + T + 1] : 0.0f;
    Data[R % 2 * N + T] = 0.5f * (Left + Right) + 1.0f;
    __threadfence_block();
    Step[T] = R; // a neighbour enters round R+1, which overwrites what this round read, only after this
  }
  Out[T] = Data[Rounds % 2 * N + T];
}

// Block b waits for block b+1's running total: the last block must finish first.
__global__ void chainAcrossBlocks(volatile int *Flag, volatile long long *Total) {
  unsigned B = blockIdx.x;
  if (threadIdx.x == 0) {
    long long Mine = B + 1;
    if (B + 1 < gridDim.x) {
      while (Flag[B + 1] == 0)
        ;
      __threadfence();
      Mine += Total[B + 1];
    }
    Total[B] = Mine;
    __threadfence();
    Flag[B] = 1;
  }
}

// A hand-made grid barrier (an arrival counter and a spin), used twice: every block's first phase must be
// visible to every block's second.
__device__ void gridBarrier(unsigned *Count, unsigned Target) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(Count, 1);
    while (atomicAdd(Count, 0) < Target)
      ;
  }
  __syncthreads();
}

__global__ void handMadeGridBarrier(unsigned *Count, int *Slots, int *Out) {
  unsigned B = blockIdx.x, G = gridDim.x;
  if (threadIdx.x == 0)
    Slots[B] = B * 3 + 1;
  gridBarrier(Count, G);
  if (threadIdx.x == 0)
    Out[B] = Slots[(B + 1) % G];
  gridBarrier(Count, 2 * G);
  if (threadIdx.x == 0)
    Slots[B] = Out[(B + G - 1) % G] * 2;
}

// The classic reduction: barriers down to one warp, then warp-synchronous steps through volatile shared memory.
__global__ void warpSyncReduceVolatile(const float *In, float *Out) {
  __shared__ float S[256];
  unsigned T = threadIdx.x;
  S[T] = In[blockIdx.x * blockDim.x + T];
  __syncthreads();
  for (unsigned Half = blockDim.x / 2; Half > 32; Half >>= 1) {
    if (T < Half)
      S[T] += S[T + Half];
    __syncthreads();
  }
  if (T < 32) {
    volatile float *V = S;
    V[T] += V[T + 32];
    V[T] += V[T + 16];
    V[T] += V[T + 8];
    V[T] += V[T + 4];
    V[T] += V[T + 2];
    V[T] += V[T + 1];
  }
  if (T == 0)
    Out[blockIdx.x] = S[0];
}

// A warp-synchronous inclusive scan (Hillis-Steele) of each warp's 32 values through volatile shared memory:
// every lane reads its lower neighbour's value before any lane writes the step's result.
__global__ void warpSyncScanVolatile(const int *In, int *Out) {
  __shared__ int S[256];
  unsigned T = threadIdx.x, Lane = T % 32;
  volatile int *V = S;
  V[T] = In[blockIdx.x * blockDim.x + T];
  if (Lane >= 1)
    V[T] = V[T - 1] + V[T];
  if (Lane >= 2)
    V[T] = V[T - 2] + V[T];
  if (Lane >= 4)
    V[T] = V[T - 4] + V[T];
  if (Lane >= 8)
    V[T] = V[T - 8] + V[T];
  if (Lane >= 16)
    V[T] = V[T - 16] + V[T];
  Out[blockIdx.x * blockDim.x + T] = V[T];
}

// Plain (not volatile) shared memory: lanes 1-16 write, lane 0 reads their values at once, with no __syncwarp.
__global__ void warpSyncPlainRead(const float *In, float *Out) {
  __shared__ float S[64];
  unsigned T = threadIdx.x;
  S[T] = In[blockIdx.x * blockDim.x + T] * 3.0f + 1.0f;
  if (T % 32 == 0) {
    float Sum = 0.0f;
    for (int K = 1; K <= 16; ++K)
      Sum += S[T + K] * K;
    Out[blockIdx.x * 2 + T / 32] = Sum;
  }
}

int main() {
  int Sms = 0;
  cudaDeviceGetAttribute(&Sms, cudaDevAttrMultiProcessorCount, 0);

  { // spin inside a block
    int *Out;
    cudaMalloc(&Out, 4 * sizeof(int));
    chainInBlock<<<4, 256>>>(Out);
    int Host[4] = {};
    check(cudaMemcpy(Host, Out, sizeof Host, cudaMemcpyDeviceToHost) == cudaSuccess, "chain_in_block_ran");
    std::printf("chain_in_block %d %d %d %d\n", Host[0], Host[1], Host[2], Host[3]);
    cudaFree(Out);
  }
  { // neighbours waiting on each other, round after round
    const int N = 128, Rounds = 50;
    int *Step;
    float *Data, *Out;
    cudaMalloc(&Step, N * sizeof(int));
    cudaMalloc(&Data, 2 * N * sizeof(float));
    cudaMalloc(&Out, N * sizeof(float));
    cudaMemset(Step, 0, N * sizeof(int));
    std::vector<float> Init(2 * N);
    for (int I = 0; I < N; ++I)
      Init[I] = float(I % 7);
    cudaMemcpy(Data, Init.data(), 2 * N * sizeof(float), cudaMemcpyHostToDevice);
    neighbourRounds<<<1, N>>>(Step, Data, Rounds, Out);
    std::vector<float> Host(N);
    check(cudaMemcpy(Host.data(), Out, N * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess,
          "neighbour_rounds_ran");
    double Sum = 0;
    for (float V : Host)
      Sum += V;
    std::printf("neighbour_rounds %.6f %.6f %.6f\n", Host[0], Host[N / 2], Sum);
    cudaFree(Step), cudaFree(Data), cudaFree(Out);
  }
  { // blocks waiting on each other in a grid the device holds at once
    int PerSm = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&PerSm, chainAcrossBlocks, 256, 0);
    int Blocks = PerSm * Sms;
    int *Flag;
    long long *Total;
    cudaMalloc(&Flag, Blocks * sizeof(int));
    cudaMalloc(&Total, Blocks * sizeof(long long));
    cudaMemset(Flag, 0, Blocks * sizeof(int));
    chainAcrossBlocks<<<Blocks, 256>>>(Flag, Total);
    long long First = 0;
    check(cudaMemcpy(&First, Total, sizeof First, cudaMemcpyDeviceToHost) == cudaSuccess, "chain_across_blocks_ran");
    check(First == (long long)Blocks * (Blocks + 1) / 2, "chain_across_blocks_total");
    cudaFree(Flag), cudaFree(Total);
  }
  { // a hand-made grid barrier
    int PerSm = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&PerSm, handMadeGridBarrier, 128, 0);
    int Blocks = PerSm * Sms;
    unsigned *Count;
    int *Slots, *Out;
    cudaMalloc(&Count, sizeof(unsigned));
    cudaMalloc(&Slots, Blocks * sizeof(int));
    cudaMalloc(&Out, Blocks * sizeof(int));
    cudaMemset(Count, 0, sizeof(unsigned));
    handMadeGridBarrier<<<Blocks, 128>>>(Count, Slots, Out);
    std::vector<int> HostSlots(Blocks), HostOut(Blocks);
    bool Ran = cudaMemcpy(HostSlots.data(), Slots, Blocks * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess &&
               cudaMemcpy(HostOut.data(), Out, Blocks * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess;
    check(Ran, "grid_barrier_ran");
    bool Ok = true;
    for (int B = 0; B < Blocks; ++B)
      Ok &= HostOut[B] == ((B + 1) % Blocks) * 3 + 1 && HostSlots[B] == HostOut[(B + Blocks - 1) % Blocks] * 2;
    check(Ok, "grid_barrier_values");
    cudaFree(Count), cudaFree(Slots), cudaFree(Out);
  }
  { // warp-synchronous shared memory
    const int Blocks = 8, N = Blocks * 256;
    std::vector<float> In(N);
    std::vector<int> InInt(N);
    for (int I = 0; I < N; ++I) {
      In[I] = float((I * 37) % 101) + 0.25f * (I % 4);
      InInt[I] = (I * 13) % 29 - 7;
    }
    float *DIn, *DOut;
    int *DInInt, *DOutInt;
    cudaMalloc(&DIn, N * sizeof(float));
    cudaMalloc(&DOut, N * sizeof(float));
    cudaMalloc(&DInInt, N * sizeof(int));
    cudaMalloc(&DOutInt, N * sizeof(int));
    cudaMemcpy(DIn, In.data(), N * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(DInInt, InInt.data(), N * sizeof(int), cudaMemcpyHostToDevice);

    warpSyncReduceVolatile<<<Blocks, 256>>>(DIn, DOut);
    std::vector<float> Sums(Blocks);
    cudaMemcpy(Sums.data(), DOut, Blocks * sizeof(float), cudaMemcpyDeviceToHost);
    std::printf("reduce_volatile");
    for (float S : Sums)
      std::printf(" %.2f", S);
    std::printf("\n");

    warpSyncScanVolatile<<<Blocks, 256>>>(DInInt, DOutInt);
    std::vector<int> Scan(N);
    cudaMemcpy(Scan.data(), DOutInt, N * sizeof(int), cudaMemcpyDeviceToHost);
    bool ScanOk = true;
    for (int W = 0; W < N / 32; ++W)
      for (int L = 0, Run = 0; L < 32; ++L) {
        Run += InInt[W * 32 + L];
        ScanOk &= Scan[W * 32 + L] == Run;
      }
    check(ScanOk, "scan_volatile");
    std::printf("scan_volatile %d %d %d\n", Scan[31], Scan[63], Scan[N - 1]);

    warpSyncPlainRead<<<Blocks, 64>>>(DIn, DOut);
    std::vector<float> Reads(2 * Blocks);
    cudaMemcpy(Reads.data(), DOut, 2 * Blocks * sizeof(float), cudaMemcpyDeviceToHost);
    std::printf("plain_read");
    for (float S : Reads)
      std::printf(" %.2f", S);
    std::printf("\n");
    cudaFree(DIn), cudaFree(DOut), cudaFree(DInInt), cudaFree(DOutInt);
  }
  check(cudaDeviceSynchronize() == cudaSuccess, "no_error");
  std::printf("SUMMARY execution_guarantees: %s\n", Failures ? "FAILED" : "all passed");
  return Failures != 0;
}
