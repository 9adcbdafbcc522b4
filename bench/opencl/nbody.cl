// OpenCL C twin of ../shared/bench/cuda/nbody.cu: work-group 256 (must be 256), bodies staged through local
// memory in tiles of 256; pos.w = mass.
#define BLOCK 256
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void nbody_step(__global const float4 *restrict pos, __global const float4 *restrict vel,
                __global float4 *restrict newPos, __global float4 *restrict newVel, int n, float dt, float eps2) {
  __local float4 sh[BLOCK];
  int lid = get_local_id(0);
  int i = get_group_id(0) * BLOCK + lid;
  float4 p = pos[i];
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int tile = 0; tile < n; tile += BLOCK) {
    sh[lid] = pos[tile + lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = 0; j < BLOCK; ++j) {
      float4 q = sh[j];
      float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
      float d2 = dx * dx + dy * dy + dz * dz + eps2;
      float inv = rsqrt(d2);
      float s = q.w * inv * inv * inv;
      ax += dx * s; ay += dy * s; az += dz * s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float4 v = vel[i];
  v.x += ax * dt; v.y += ay * dt; v.z += az * dt;
  p.x += v.x * dt; p.y += v.y * dt; p.z += v.z * dt;
  newPos[i] = p;
  newVel[i] = v;
}
