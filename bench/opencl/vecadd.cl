// OpenCL C twin of ../shared/bench/cuda/vecadd.cu: work-group 256, one work-item per element.
__kernel void vecadd(__global const float *restrict a, __global const float *restrict b,
                     __global float *restrict c, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
