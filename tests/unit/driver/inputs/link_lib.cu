// Defines add_bias and g_bias for link_main.cu; its own internal helper and counter.
__device__ int g_bias = 7;
static __device__ int counter = 1000;
static __device__ __noinline__ int helper(int x) { return x + 100 + counter; }
__device__ int add_bias(int x) { return helper(x) + g_bias; }
