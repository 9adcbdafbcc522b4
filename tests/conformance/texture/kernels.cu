// Texture and surface kernels of the GPU-recorded cases in this folder (make_cases.py compiles each to its
// case's kernel.ptx with `nvcc -ptx -arch=sm_75 -O3`). Coordinates come from input buffers so that one launch
// probes many positions; every kernel writes one result per thread.
#include <cuda_runtime.h>

extern "C" __global__ void k_linear_2d(cudaTextureObject_t t, const float2 *xy, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = tex2D<float>(t, xy[i].x, xy[i].y);
}

// Eight textures over one array: {wrap, clamp, mirror, border} x {point, linear}, normalized coordinates.
extern "C" __global__ void k_address_modes(cudaTextureObject_t w0, cudaTextureObject_t c0, cudaTextureObject_t m0,
                                           cudaTextureObject_t b0, cudaTextureObject_t w1, cudaTextureObject_t c1,
                                           cudaTextureObject_t m1, cudaTextureObject_t b1, const float2 *xy, float *out,
                                           int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float x = xy[i].x, y = xy[i].y;
  cudaTextureObject_t T[8] = {w0, c0, m0, b0, w1, c1, m1, b1};
  for (int k = 0; k < 8; ++k)
    out[k * n + i] = tex2D<float>(T[k], x, y);
}

// uchar4 read as normalized float (linear filter) and as its element type (point filter).
extern "C" __global__ void k_read_modes(cudaTextureObject_t tn, cudaTextureObject_t te, const float2 *xy, float4 *outn,
                                        uint4 *oute, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  outn[i] = tex2D<float4>(tn, xy[i].x, xy[i].y);
  uchar4 v = tex2D<uchar4>(te, xy[i].x, xy[i].y);
  oute[i] = make_uint4(v.x, v.y, v.z, v.w);
}

// Linear memory: integer fetches of short2 (element type and normalized float), in and out of range.
extern "C" __global__ void k_fetch_linear(cudaTextureObject_t te, cudaTextureObject_t tn, int2 *oute, float2 *outn,
                                          int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  int x = i - 4;
  short2 v = tex1Dfetch<short2>(te, x);
  oute[i] = make_int2(v.x, v.y);
  outn[i] = tex1Dfetch<float2>(tn, x);
}

// 1D array (mirror, normalized, linear), 3D array (wrap, normalized, linear), 2D layered (clamp, linear).
extern "C" __global__ void k_dims(cudaTextureObject_t t1, cudaTextureObject_t t3, cudaTextureObject_t tl,
                                  const float4 *xyz, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float4 c = xyz[i];
  out[i] = tex1D<float>(t1, c.x);
  out[n + i] = tex3D<float>(t3, c.x, c.y, c.z);
  out[2 * n + i] = tex2DLayered<float>(tl, c.x * 6.0f, c.y * 5.0f, i % 3);
}

// tld4 (gather) of components r and g.
extern "C" __global__ void k_gather(cudaTextureObject_t t, const float2 *xy, float4 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  out[i] = tex2Dgather<float4>(t, xy[i].x, xy[i].y, 0);
  out[n + i] = tex2Dgather<float4>(t, xy[i].x, xy[i].y, 1);
}

// The texture and surface queries, one kernel each (CUDA C++ has no intrinsics for them).
extern "C" __global__ void k_txq_size(cudaTextureObject_t t, int *q) {
  int w, h;
  asm("txq.width.b32 %0, [%1];" : "=r"(w) : "l"(t));
  asm("txq.height.b32 %0, [%1];" : "=r"(h) : "l"(t));
  q[0] = w, q[1] = h;
}

extern "C" __global__ void k_txq_sampler(cudaTextureObject_t t, int *q) {
  int f, o;
  asm("txq.normalized_coords.b32 %0, [%1];" : "=r"(f) : "l"(t));
  asm("txq.filter_mode.b32 %0, [%1];" : "=r"(o) : "l"(t));
  q[2] = f, q[3] = o;
}

extern "C" __global__ void k_suq(cudaSurfaceObject_t s, int *q) {
  int w, h;
  asm("suq.width.b32 %0, [%1];" : "=r"(w) : "l"(s));
  asm("suq.height.b32 %0, [%1];" : "=r"(h) : "l"(s));
  q[4] = w, q[5] = h;
}

// Absent channels and border colours with element reads.
extern "C" __global__ void k_channels(cudaTextureObject_t tf, cudaTextureObject_t tu, cudaTextureObject_t tb,
                                      const float2 *xy, float4 *outf, uint4 *outu, uint4 *outb, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  outf[i] = tex2D<float4>(tf, xy[i].x, xy[i].y);
  outu[i] = tex2D<uint4>(tu, xy[i].x, xy[i].y);
  outb[i] = tex2D<uint4>(tb, xy[i].x, xy[i].y);
}

// Surfaces: each thread writes a float4 and a pattern of bytes, then reads a neighbour out of range with the
// zero and clamp boundary modes (reads of what this launch writes are not ordered, so they read `src`).
extern "C" __global__ void k_surface(cudaSurfaceObject_t dst, cudaSurfaceObject_t bytes, cudaSurfaceObject_t src,
                                     float *readz, float *readc, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  surf2Dwrite(make_float4(x, y, x * 0.5f + y, -1.0f), dst, x * 16, y);
  surf2Dwrite((unsigned char)(x * 16 + y), bytes, x, y);
  int i = y * w + x;
  readz[i] = surf2Dread<float>(src, (x - 2) * 4, y + 1, cudaBoundaryModeZero);
  readc[i] = surf2Dread<float>(src, (x + 3) * 4, y - 1, cudaBoundaryModeClamp);
}

// sured: atomic add and max into a 1D u32 surface.
extern "C" __global__ void k_sured(cudaSurfaceObject_t s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  unsigned v = i + 1;
  int x = (i % 8) * 4;
  asm volatile("sured.b.add.1d.u32.trap [%0, {%1}], %2;" ::"l"(s), "r"(x), "r"(v) : "memory");
  int x2 = (8 + i % 4) * 4;
  asm volatile("sured.b.max.1d.u32.trap [%0, {%1}], %2;" ::"l"(s), "r"(x2), "r"(v * 7 % 13) : "memory");
}

// istypep (no intrinsic either) on a texture object's handle, a surface object's, and other 64-bit values:
// bit 0 of out[i] is .texref, bit 1 .samplerref, bit 2 .surfref.
extern "C" __global__ void k_istypep(cudaTextureObject_t t, cudaSurfaceObject_t s, const unsigned long long *other,
                                     int *out, int n) {
  int i = threadIdx.x;
  if (i >= n)
    return;
  unsigned long long h = i == 0 ? t : i == 1 ? s : other[i - 2];
  int r;
  asm("{\n\t.reg .pred p, q, s;\n\tistypep.texref p, %1;\n\tistypep.samplerref q, %1;\n\tistypep.surfref s, %1;\n\t"
      "selp.b32 %0, 1, 0, p;\n\t@q or.b32 %0, %0, 2;\n\t@s or.b32 %0, %0, 4;\n\t}"
      : "=r"(r)
      : "l"(h));
  out[i] = r;
}
