// OpenCL C twin of ../shared/bench/cuda/sgemm.cu: work-group 16x16, 16x16 local tiles of A and B.
#define TILE 16
__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void sgemm_tiled(__global const float *restrict A, __global const float *restrict B, __global float *restrict C,
                 int M, int N, int K) {
  __local float As[TILE][TILE];
  __local float Bs[TILE][TILE];
  int tx = get_local_id(0), ty = get_local_id(1);
  int row = get_group_id(1) * TILE + ty;
  int col = get_group_id(0) * TILE + tx;
  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    As[ty][tx] = A[row * K + t + tx];
    Bs[ty][tx] = B[(t + ty) * N + col];
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  C[row * N + col] = acc;
}
