// OpenCL C twin of ../shared/bench/cuda/reduce.cu: work-group 256 (must be 256), grid-stride partial sums, a
// local-memory tree. OpenCL 1.2 has no warp shuffle, so the last 32 -> 1 steps (CUDA's __shfl_down_sync) are
// the same additions in the same order done through local memory with barriers.
#define BLOCK 256
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void reduce_sum(__global const float *restrict in, __global float *restrict out, int n) {
  __local float sdata[BLOCK];
  unsigned tid = get_local_id(0);
  float s = 0.0f;
  for (int i = get_group_id(0) * BLOCK + tid; i < n; i += BLOCK * get_num_groups(0)) s += in[i];
  sdata[tid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (unsigned k = BLOCK / 2; k > 32; k >>= 1) {
    if (tid < k) sdata[tid] += sdata[tid + k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (tid < 32) sdata[tid] = sdata[tid] + sdata[tid + 32];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (unsigned off = 16; off > 0; off >>= 1) {
    float v = tid < off ? sdata[tid] + sdata[tid + off] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tid < off) sdata[tid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (tid == 0) out[get_group_id(0)] = sdata[0];
}
