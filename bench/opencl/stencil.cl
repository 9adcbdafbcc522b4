// OpenCL C twin of ../shared/bench/cuda/stencil.cu: work-group (32,8), 5-point step, boundary copied.
__kernel void stencil5(__global const float *restrict in, __global float *restrict out, int nx, int ny,
                       float c0, float c1) {
  int x = get_group_id(0) * get_local_size(0) + get_local_id(0);
  int y = get_group_id(1) * get_local_size(1) + get_local_id(1);
  if (x >= nx || y >= ny) return;
  int i = y * nx + x;
  if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) { out[i] = in[i]; return; }
  out[i] = c0 * in[i] + c1 * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
}
