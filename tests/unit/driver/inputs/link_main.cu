// Kernels calling into link_lib.cu and link_const.cu (extern functions and variables); both modules also
// have an internal `helper` and an internal `counter`, which the link must keep apart.
extern __device__ int add_bias(int x);
extern __device__ float scaled(float x);
extern __device__ int g_bias;
extern __constant__ float c_scale;

static __device__ __noinline__ int helper(int x) { return x * 2; }
static __device__ int counter;

extern "C" __global__ void link_kernel(int *out, float *fout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = add_bias(helper(i)) + g_bias;
    fout[i] = scaled((float)i) + c_scale;
    atomicAdd(&counter, 1);
  }
}

extern "C" __global__ void read_counter(int *out) { out[0] = counter; }
