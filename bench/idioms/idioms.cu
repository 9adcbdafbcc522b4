// bench_idioms' kernels: ordinary CUDA as a CUDA programmer writes it (textbook and cuda-samples shapes), not
// tuned for ptxforge. idioms.ptx beside it is `nvcc -arch=compute_80 -ptx -O3` of this file (regenerate with
// bench/idioms/regenerate-ptx.sh, or the bench_idioms_ptx target where nvcc is found); the product builds without
// nvcc. Each kernel has a native C++ twin in native/IdiomsNative.cpp; bench/IdiomsBench.cpp gives sizes and
// launch shapes.
#include "MandelbrotIteration.h"

#include <cooperative_groups.h>
#include <stdint.h>

namespace cg = cooperative_groups;

// ---------------------------------------------------------------------------------------------------------------
// Grid-stride copies over 1- to 16-byte elements (alignedTypes' loop).
struct __align__(8) u8x8 { uint32_t a, b; };
struct rgb32 { uint32_t r, g, b; }; // 12 bytes, 4-byte aligned
struct __align__(16) u32x4 { uint32_t a, b, c, d; };

template <class T> __device__ void gridStrideCopy(T *out, const T *in, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
    out[i] = in[i];
}
extern "C" __global__ void copy_1(uint8_t *o, const uint8_t *i, size_t n) { gridStrideCopy(o, i, n); }
extern "C" __global__ void copy_2(uint16_t *o, const uint16_t *i, size_t n) { gridStrideCopy(o, i, n); }
extern "C" __global__ void copy_4(uint32_t *o, const uint32_t *i, size_t n) { gridStrideCopy(o, i, n); }
extern "C" __global__ void copy_8(u8x8 *o, const u8x8 *i, size_t n) { gridStrideCopy(o, i, n); }
extern "C" __global__ void copy_12(rgb32 *o, const rgb32 *i, size_t n) { gridStrideCopy(o, i, n); }
extern "C" __global__ void copy_16(u32x4 *o, const u32x4 *i, size_t n) { gridStrideCopy(o, i, n); }

// A grid-stride map: y = a * x + b over floats.
extern "C" __global__ void map_affine(float *y, const float *x, float a, float b, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
    y[i] = a * x[i] + b;
}

// ---------------------------------------------------------------------------------------------------------------
// CSR sparse matrix-vector product, y = A x.
extern "C" __global__ void spmv_csr_scalar(const int *rowPtr, const int *cols, const float *vals, const float *x,
                                           float *y, int rows) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float sum = 0.0f;
    for (int j = rowPtr[row]; j < rowPtr[row + 1]; ++j)
      sum += vals[j] * x[cols[j]];
    y[row] = sum;
  }
}

// One warp per row; lanes stride the row, then a shuffle tree.
extern "C" __global__ void spmv_csr_vector(const int *rowPtr, const int *cols, const float *vals, const float *x,
                                           float *y, int rows) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (warp < rows) {
    float sum = 0.0f;
    for (int j = rowPtr[warp] + lane; j < rowPtr[warp + 1]; j += 32)
      sum += vals[j] * x[cols[j]];
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_down_sync(0xffffffff, sum, offset);
    if (lane == 0)
      y[warp] = sum;
  }
}

// Per-thread dot product: thread i walks row i of a row-major matrix.
extern "C" __global__ void row_dot(const float *A, const float *x, float *y, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float sum = 0.0f;
    for (int k = 0; k < cols; ++k)
      sum += A[(size_t)row * cols + k] * x[k];
    y[row] = sum;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Block scans: each block scans its own blockDim.x-element (Hillis-Steele, warp shuffle) or 2*blockDim.x-element
// (Blelloch) segment.
extern "C" __global__ void scan_hillis_steele(const int *in, int *out, int n) {
  extern __shared__ int temp[]; // 2 * blockDim.x: double buffer
  int tid = threadIdx.x;
  int gid = blockIdx.x * blockDim.x + tid;
  int pout = 0, pin = 1;
  temp[tid] = gid < n ? in[gid] : 0;
  __syncthreads();
  for (int offset = 1; offset < blockDim.x; offset *= 2) {
    pout = 1 - pout;
    pin = 1 - pout;
    if (tid >= offset)
      temp[pout * blockDim.x + tid] = temp[pin * blockDim.x + tid] + temp[pin * blockDim.x + tid - offset];
    else
      temp[pout * blockDim.x + tid] = temp[pin * blockDim.x + tid];
    __syncthreads();
  }
  if (gid < n)
    out[gid] = temp[pout * blockDim.x + tid]; // inclusive
}

extern "C" __global__ void scan_blelloch(const int *in, int *out, int n) {
  extern __shared__ int temp[]; // 2 * blockDim.x
  int tid = threadIdx.x;
  int m = 2 * blockDim.x;
  int base = blockIdx.x * m;
  temp[2 * tid] = base + 2 * tid < n ? in[base + 2 * tid] : 0;
  temp[2 * tid + 1] = base + 2 * tid + 1 < n ? in[base + 2 * tid + 1] : 0;
  int offset = 1;
  for (int d = m >> 1; d > 0; d >>= 1) { // up-sweep
    __syncthreads();
    if (tid < d) {
      int ai = offset * (2 * tid + 1) - 1;
      int bi = offset * (2 * tid + 2) - 1;
      temp[bi] += temp[ai];
    }
    offset *= 2;
  }
  if (tid == 0)
    temp[m - 1] = 0;
  for (int d = 1; d < m; d *= 2) { // down-sweep
    offset >>= 1;
    __syncthreads();
    if (tid < d) {
      int ai = offset * (2 * tid + 1) - 1;
      int bi = offset * (2 * tid + 2) - 1;
      int t = temp[ai];
      temp[ai] = temp[bi];
      temp[bi] += t;
    }
  }
  __syncthreads();
  if (base + 2 * tid < n)
    out[base + 2 * tid] = temp[2 * tid]; // exclusive
  if (base + 2 * tid + 1 < n)
    out[base + 2 * tid + 1] = temp[2 * tid + 1];
}

extern "C" __global__ void scan_warp_shfl(const int *in, int *out, int n) {
  __shared__ int warpSums[32];
  int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  int gid = blockIdx.x * blockDim.x + tid;
  int v = gid < n ? in[gid] : 0;
  for (int offset = 1; offset < 32; offset *= 2) {
    int t = __shfl_up_sync(0xffffffff, v, offset);
    if (lane >= offset)
      v += t;
  }
  if (lane == 31)
    warpSums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    int s = lane < blockDim.x / 32 ? warpSums[lane] : 0;
    for (int offset = 1; offset < 32; offset *= 2) {
      int t = __shfl_up_sync(0xffffffff, s, offset);
      if (lane >= offset)
        s += t;
    }
    warpSums[lane] = s;
  }
  __syncthreads();
  if (warp > 0)
    v += warpSums[warp - 1];
  if (gid < n)
    out[gid] = v; // inclusive
}

// ---------------------------------------------------------------------------------------------------------------
// Sorting: bitonic sort of 2*blockDim.x keys per block in shared memory (cuda-samples' bitonicSortShared shape),
// and one pass of a block radix sort: each block stably sorts its blockDim.x keys by 4 bits at `shift` through
// four 1-bit splits, and writes its 16-bin digit histogram.
extern "C" __global__ void bitonic_sort_shared(unsigned *keys) {
  extern __shared__ unsigned s[];
  unsigned size = 2 * blockDim.x;
  unsigned *k = keys + blockIdx.x * size;
  s[threadIdx.x] = k[threadIdx.x];
  s[threadIdx.x + blockDim.x] = k[threadIdx.x + blockDim.x];
  for (unsigned stage = 2; stage <= size; stage <<= 1) {
    for (unsigned stride = stage / 2; stride > 0; stride >>= 1) {
      __syncthreads();
      unsigned pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
      bool ascending = ((pos & stage) == 0);
      unsigned a = s[pos], b = s[pos + stride];
      if ((a > b) == ascending) {
        s[pos] = b;
        s[pos + stride] = a;
      }
    }
  }
  __syncthreads();
  k[threadIdx.x] = s[threadIdx.x];
  k[threadIdx.x + blockDim.x] = s[threadIdx.x + blockDim.x];
}

extern "C" __global__ void radix_sort_pass(const unsigned *in, unsigned *out, unsigned *digitCounts, int shift) {
  extern __shared__ unsigned sm[]; // keys[blockDim.x], flags[blockDim.x]
  unsigned *keys = sm, *scan = sm + blockDim.x;
  int tid = threadIdx.x, n = blockDim.x;
  keys[tid] = in[blockIdx.x * n + tid];
  __syncthreads();
  for (int bit = shift; bit < shift + 4; ++bit) {
    unsigned key = keys[tid];
    unsigned isZero = ((key >> bit) & 1) == 0;
    scan[tid] = isZero;
    __syncthreads();
    for (int offset = 1; offset < n; offset *= 2) { // inclusive Hillis-Steele in place
      unsigned t = tid >= offset ? scan[tid - offset] : 0;
      __syncthreads();
      scan[tid] += t;
      __syncthreads();
    }
    unsigned zeros = scan[n - 1];
    unsigned dest = isZero ? scan[tid] - 1 : zeros + tid - scan[tid];
    __syncthreads();
    keys[dest] = key;
    __syncthreads();
  }
  out[blockIdx.x * n + tid] = keys[tid];
  if (tid < 16)
    scan[tid] = 0;
  __syncthreads();
  atomicAdd(&scan[(keys[tid] >> shift) & 15], 1u);
  __syncthreads();
  if (tid < 16)
    digitCounts[blockIdx.x * 16 + tid] = scan[tid];
}

// ---------------------------------------------------------------------------------------------------------------
// Atomics: a histogram straight into global memory, and a float maximum per bin through an atomicCAS loop.
extern "C" __global__ void histogram_global(const uint8_t *data, unsigned *hist, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
    atomicAdd(&hist[data[i]], 1u);
}

__device__ float atomicMaxFloat(float *address, float val) {
  int *addr = (int *)address;
  int old = *addr, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= val)
      break;
    old = atomicCAS(addr, assumed, __float_as_int(val));
  } while (assumed != old);
  return __int_as_float(old);
}

extern "C" __global__ void atomic_cas_max(const float *vals, const unsigned *bins, float *binMax, int nbins,
                                          size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
    atomicMaxFloat(&binMax[bins[i] % nbins], vals[i]);
}

// ---------------------------------------------------------------------------------------------------------------
// Mandelbrot: iterations per pixel, divergent.
extern "C" __global__ void mandelbrot(int *iters, int width, int height, float x0, float y0, float dx, float dy,
                                      int maxIter) {
  int px = blockIdx.x * blockDim.x + threadIdx.x;
  int py = blockIdx.y * blockDim.y + threadIdx.y;
  if (px >= width || py >= height)
    return;
  iters[py * width + px] = mandelbrotIterations(x0 + px * dx, y0 + py * dy, maxIter);
}

// ---------------------------------------------------------------------------------------------------------------
// Stencils: a 3D 7-point stencil (one thread per point, boundary copied) and a 2D convolution with a
// (TILE + 2R)^2 shared tile.
extern "C" __global__ void stencil3d_7pt(const float *in, float *out, int nx, int ny, int nz, float c0, float c1) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z;
  if (x >= nx || y >= ny || z >= nz)
    return;
  size_t i = ((size_t)z * ny + y) * nx + x;
  if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
    out[i] = in[i];
    return;
  }
  size_t sy = nx, sz = (size_t)nx * ny;
  out[i] = c0 * in[i] + c1 * (in[i - 1] + in[i + 1] + in[i - sy] + in[i + sy] + in[i - sz] + in[i + sz]);
}

#define CONV_TILE 16
#define CONV_R 2
extern "C" __global__ void conv2d_tiled(const float *in, float *out, const float *filter, int width, int height) {
  __shared__ float tile[CONV_TILE + 2 * CONV_R][CONV_TILE + 2 * CONV_R];
  int tx = threadIdx.x, ty = threadIdx.y;
  int ox = blockIdx.x * CONV_TILE, oy = blockIdx.y * CONV_TILE;
  for (int y = ty; y < CONV_TILE + 2 * CONV_R; y += CONV_TILE)
    for (int x = tx; x < CONV_TILE + 2 * CONV_R; x += CONV_TILE) {
      int gx = min(max(ox + x - CONV_R, 0), width - 1);
      int gy = min(max(oy + y - CONV_R, 0), height - 1);
      tile[y][x] = in[gy * width + gx];
    }
  __syncthreads();
  int x = ox + tx, y = oy + ty;
  if (x < width && y < height) {
    float sum = 0.0f;
    for (int fy = 0; fy < 2 * CONV_R + 1; ++fy)
      for (int fx = 0; fx < 2 * CONV_R + 1; ++fx)
        sum += filter[fy * (2 * CONV_R + 1) + fx] * tile[ty + fy][tx + fx];
    out[y * width + x] = sum;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// fp64 n-body: all pairs, tiles of blockDim.x bodies in shared memory; pos.w is the mass.
struct __align__(32) body { double x, y, z, w; };
extern "C" __global__ void nbody_fp64(const body *pos, const body *vel, body *newPos, body *newVel,
                                      int n, double dt, double eps2) {
  extern __shared__ body sh[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  body p = pos[i];
  double ax = 0.0, ay = 0.0, az = 0.0;
  for (int tile = 0; tile < n; tile += blockDim.x) {
    sh[threadIdx.x] = pos[tile + threadIdx.x];
    __syncthreads();
    for (int j = 0; j < blockDim.x; ++j) {
      body q = sh[j];
      double rx = q.x - p.x, ry = q.y - p.y, rz = q.z - p.z;
      double d2 = rx * rx + ry * ry + rz * rz + eps2;
      double inv = 1.0 / sqrt(d2);
      double s = q.w * inv * inv * inv;
      ax += rx * s;
      ay += ry * s;
      az += rz * s;
    }
    __syncthreads();
  }
  body v = vel[i];
  v.x += ax * dt;
  v.y += ay * dt;
  v.z += az * dt;
  p.x += v.x * dt;
  p.y += v.y * dt;
  p.z += v.z * dt;
  newPos[i] = p;
  newVel[i] = v;
}

// ---------------------------------------------------------------------------------------------------------------
// Stream compaction: keep the elements above a threshold; a warp counts its survivors with a ballot, its lane 0
// reserves room with one atomicAdd, each survivor writes at its rank (the order across warps is not fixed).
extern "C" __global__ void compact_ballot(const int *in, int *out, unsigned *count, int threshold, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  int v = i < n ? in[i] : 0;
  bool keep = i < n && v > threshold;
  unsigned mask = __ballot_sync(0xffffffff, keep);
  unsigned base = 0;
  if (lane == 0 && mask)
    base = atomicAdd(count, __popc(mask));
  base = __shfl_sync(0xffffffff, base, 0);
  if (keep)
    out[base + __popc(mask & ((1u << lane) - 1))] = v;
}

// ---------------------------------------------------------------------------------------------------------------
// A cooperative-groups reduction: grid-stride partial sums, a block tree into partial[blockIdx.x], grid.sync(),
// then block 0 sums the partials. Launched cooperatively with as many blocks as are resident at once.
/// The sum of the block's v, through s (blockDim.x floats, a power of two): a tree, valid in thread 0.
__device__ float blockTreeSum(float *s, float v) {
  s[threadIdx.x] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  return s[0];
}

extern "C" __global__ void grid_sync_reduce(const float *in, float *partial, float *out, size_t n) {
  cg::grid_group grid = cg::this_grid();
  __shared__ float s[256];
  float sum = 0.0f;
  for (size_t i = grid.thread_rank(); i < n; i += grid.size())
    sum += in[i];
  float blockSum = blockTreeSum(s, sum);
  if (threadIdx.x == 0)
    partial[blockIdx.x] = blockSum;
  grid.sync();
  if (blockIdx.x == 0) {
    float t = 0.0f;
    for (int b = threadIdx.x; b < gridDim.x; b += blockDim.x)
      t += partial[b];
    float total = blockTreeSum(s, t);
    if (threadIdx.x == 0)
      *out = total;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Tiled transpose through a padded 32 x 33 shared tile, 32 x 8 threads per tile.
extern "C" __global__ void transpose_padded(const float *in, float *out, int width, int height) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x;
  int y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < width && y + j < height)
      tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < height && y + j < width)
      out[(size_t)(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
