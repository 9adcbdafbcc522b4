// The second translation unit of rdc_linked.cu (built with it, -rdc=true).
extern __constant__ int c_factor; // rdc_linked.cu
__device__ int g_hits = 0;
__managed__ int m_launches = 0;
static __device__ int own_offset = 1000; // rdc_linked.cu has its own own_offset (5)

__device__ int lib_transform(int x) { return x * c_factor + own_offset; }

__global__ void lib_fill(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = -i;
    atomicAdd(&g_hits, 1);
    if (i == 0)
      atomicAdd(&m_launches, 1);
  }
}
