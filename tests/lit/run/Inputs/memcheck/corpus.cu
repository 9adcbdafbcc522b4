// The memcheck seeded-bug corpus: one bug per kernel. corpus.ptx is this file compiled by
// `nvcc -arch=sm_80 -ptx -lineinfo corpus.cu`; main() runs one case under compute-sanitizer on a GPU
// (memcheck-gpu.txt records what NVIDIA's tool printed for each).
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

// Off-by-one store: n+1 threads store into an n-int (1000-byte) buffer; the last one writes byte 1000.
extern "C" __global__ void store_past_end(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n)
    a[i] = i;
}

// Off-by-one load: out[i] = in[i + 1] for i < n reads the int right after the 1000-byte input.
extern "C" __global__ void load_past_end(int *out, const int *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i + 1];
}

// Off-by-one at the front: in[i - 1] for i = 0 reads the 4 bytes before the allocation.
extern "C" __global__ void load_before_start(int *out, const int *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i - 1];
}

// Reads a buffer nothing wrote (initcheck).
extern "C" __global__ void uninitialized_read(int *out, const int *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] + 1;
}

// Missing __syncthreads: each thread reads its neighbour's shared slot right after writing its own (racecheck).
extern "C" __global__ void shared_race(int *out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = t;
  out[t] = s[(t + 1) % 64];
}

// A barrier only the first 16 threads of each warp reach (synccheck: divergent barrier).
extern "C" __global__ void divergent_barrier(int *out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = t;
  if ((t & 31) < 16)
    __syncthreads();
  out[t] = s[63 - t];
}

// Stores into a buffer the host freed before the launch.
extern "C" __global__ void use_after_free(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    a[i] = i;
}

// Shared-memory off-by-one: thread 63 stores one int past a 64-int shared array.
extern "C" __global__ void shared_past_end(int *out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t + 1] = t;
  __syncthreads();
  out[t] = s[t];
}

#define CHECK(x)                                                                                                     \
  do {                                                                                                               \
    cudaError_t e_ = (x);                                                                                            \
    if (e_ != cudaSuccess) {                                                                                         \
      printf("%s: %s (%s)\n", #x, cudaGetErrorName(e_), cudaGetErrorString(e_));                                     \
      return 1;                                                                                                      \
    }                                                                                                                \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  const char *K = argv[1];
  const int N = 250; // 1000 bytes of ints
  int Host[N];
  for (int I = 0; I < N; ++I)
    Host[I] = I;
  int *A, *B;
  CHECK(cudaMalloc(&A, N * 4));
  CHECK(cudaMalloc(&B, N * 4));
  CHECK(cudaMemcpy(B, Host, N * 4, cudaMemcpyHostToDevice));
  if (!strcmp(K, "store_past_end"))
    store_past_end<<<1, 256>>>(A, N);
  else if (!strcmp(K, "load_past_end"))
    load_past_end<<<1, 256>>>(A, B, N);
  else if (!strcmp(K, "load_before_start"))
    load_before_start<<<1, 256>>>(A, B, N);
  else if (!strcmp(K, "uninitialized_read")) {
    int *C;
    CHECK(cudaMalloc(&C, N * 4));
    uninitialized_read<<<1, 256>>>(A, C, N);
  } else if (!strcmp(K, "shared_race"))
    shared_race<<<1, 64>>>(A);
  else if (!strcmp(K, "divergent_barrier"))
    divergent_barrier<<<1, 64>>>(A);
  else if (!strcmp(K, "use_after_free")) {
    CHECK(cudaFree(B));
    use_after_free<<<1, 256>>>(B, N);
  } else if (!strcmp(K, "shared_past_end"))
    shared_past_end<<<1, 64>>>(A);
  else
    return 2;
  printf("launch: %s\n", cudaGetErrorName(cudaGetLastError()));
  printf("synchronize: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  printf("next call: %s\n", cudaGetErrorName(cudaMemcpy(Host, A, 4, cudaMemcpyDeviceToHost)));
  return 0;
}
