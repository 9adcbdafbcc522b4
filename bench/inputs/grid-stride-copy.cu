// Grid-stride copy loops over 1- to 32-byte elements (bench_micro gridstride), nvcc -ptx -arch=compute_80 of this
// file makes grid-stride-copy.ptx. Each kernel is the most common CUDA idiom on its own: a thread copies
// element i, then i + the whole grid, while i < n.
// grid-stride copies over element types of 1..32 bytes
struct __align__(4) c4 { unsigned char r, g, b, a; };
struct __align__(8) f2 { float x, y; };
struct __align__(16) f4 { float x, y, z, w; };
struct f3 { float x, y, z; };
template <class T> __device__ void copy(T *out, const T *in, int n) {
  int stride = blockDim.x * gridDim.x;
  for (int i = blockDim.x * blockIdx.x + threadIdx.x; i < n; i += stride) out[i] = in[i];
}
extern "C" __global__ void copy_u8(unsigned char *o, const unsigned char *i, int n) { copy(o, i, n); }
extern "C" __global__ void copy_u32(unsigned *o, const unsigned *i, int n) { copy(o, i, n); }
extern "C" __global__ void copy_c4(c4 *o, const c4 *i, int n) { copy(o, i, n); }
extern "C" __global__ void copy_f2(f2 *o, const f2 *i, int n) { copy(o, i, n); }
extern "C" __global__ void copy_f3(f3 *o, const f3 *i, int n) { copy(o, i, n); }
extern "C" __global__ void copy_f4(f4 *o, const f4 *i, int n) { copy(o, i, n); }
struct c4m { unsigned char r, g, b, a; };
struct f2m { float x, y; };
struct f4m { float x, y, z, w; };
extern "C" __global__ void copy_u16(unsigned short *o, const unsigned short *i, int n) { copy(o, i, n); }
extern "C" __global__ void copy_c4m(c4m *o, const c4m *i, int n) { copy(o, i, n); }
extern "C" __global__ void copy_f2m(f2m *o, const f2m *i, int n) { copy(o, i, n); }
extern "C" __global__ void copy_f4m(f4m *o, const f4m *i, int n) { copy(o, i, n); }
struct __align__(16) f8 { f4 a, b; }; // two vector loads a thread (cuda-samples' alignedTypes: RGBA32_2)
extern "C" __global__ void copy_f8(f8 *o, const f8 *i, int n) { copy(o, i, n); }
