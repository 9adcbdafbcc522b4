// OpenCL C twin of ../shared/bench/cuda/saxpy.cu: work-group 256, in place y = a*x + y.
__kernel void saxpy(__global const float *restrict x, __global float *restrict y, float a, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
