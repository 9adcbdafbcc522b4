// OpenCL C twin of ../shared/bench/cuda/transpose.cu: work-group (32,8), 32x33 local tile, 4 elements per item.
#define TILE 32
#define ROWS 8
__kernel __attribute__((reqd_work_group_size(TILE, ROWS, 1)))
void transpose(__global const float *restrict in, __global float *restrict out, int width, int height) {
  __local float tile[TILE][TILE + 1];
  int lx = get_local_id(0), ly = get_local_id(1);
  int x = get_group_id(0) * TILE + lx;
  int y = get_group_id(1) * TILE + ly;
  for (int j = 0; j < TILE; j += ROWS) tile[ly + j][lx] = in[(y + j) * width + x];
  barrier(CLK_LOCAL_MEM_FENCE);
  x = get_group_id(1) * TILE + lx;
  y = get_group_id(0) * TILE + ly;
  for (int j = 0; j < TILE; j += ROWS) out[(y + j) * height + x] = tile[lx][ly + j];
}
