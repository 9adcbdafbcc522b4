// OpenCL C twin of ../shared/bench/cuda/histogram.cu: work-group 256 (must be 256), grid-stride, local
// histogram with local atomics, then one global atomic per bin. hist must be zeroed before the launch.
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void histogram256(__global const uchar *restrict data, __global uint *restrict hist, int n) {
  __local uint lh[256];
  uint tid = get_local_id(0);
  lh[tid] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = get_group_id(0) * 256 + tid; i < n; i += 256 * get_num_groups(0))
    atomic_inc(&lh[data[i]]);
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_add(&hist[tid], lh[tid]);
}
