// mipmap_surface: mipmapped arrays and the instructions that read them, and formatted surface stores. A 2D
// float mipmapped array whose every level holds its own index samples, through tex2DLod (tex.level), the blend
// weight between levels for a sweep of LODs (linear mipmap filtering), the level point mipmap filtering picks,
// the LOD tex2DGrad (tex.grad) derives from gradients, the bias and clamps, and a level image blended
// trilinearly; 1D and 3D mipmapped arrays through tex1DLod/tex3DLod; the mipmapped array calls and their error
// codes. Formatted stores (sust.p, inline PTX: CUDA C has no intrinsic for them) convert f32 or integer data to
// each channel format, and sured.p reduces at a sample (not byte) coordinate. The VAL lines are what an H200
// (driver 580.159) returned, bits in hex.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

#include "check.h"
#define ERR(call, want, name)                                                                                          \
  do {                                                                                                                 \
    cudaError_t e_ = (call);                                                                                           \
    CHECK(e_ == (want), name, "%s", cudaGetErrorName(e_));                                                             \
  } while (0)

static unsigned bits(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  return u;
}

static void printValues(const char *name, const float *v, int n) {
  for (int i = 0; i < n; i += 8) {
    printf("VAL %s %d:", name, i);
    for (int k = i; k < n && k < i + 8; ++k)
      printf(" %08x", bits(v[k]));
    printf("\n");
  }
}

__global__ void sampleLod(cudaTextureObject_t t, const float *lod, float *out, int n, float x, float y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = tex2DLod<float>(t, x, y, lod[i]);
}

// Gradient i: dx = (g[i], g[i] * skew.x), dy = (g[i] * skew.y, g[i] * ratio).
__global__ void sampleGrad(cudaTextureObject_t t, const float *g, float *out, int n, float2 skew, float ratio) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] =
        tex2DGrad<float>(t, 0.5f, 0.5f, make_float2(g[i], g[i] * skew.x), make_float2(g[i] * skew.y, g[i] * ratio));
}

__global__ void sampleImage(cudaTextureObject_t t, float *out, int n, float lod) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = tex2DLod<float>(t, (i % 16 + 0.3f) / 16.0f, (i / 16 + 0.6f) / 16.0f, lod);
}

__global__ void sample1d3d(cudaTextureObject_t t1, cudaTextureObject_t t3, const float *lod, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = tex1DLod<float>(t1, 0.5f, lod[i]);
    out[n + i] = tex3DLod<float>(t3, 0.5f, 0.5f, 0.5f, lod[i]);
  }
}

constexpr int Levels = 6, Size = 32; // 32, 16, 8, 4, 2, 1

static cudaTextureObject_t makeTexture(cudaMipmappedArray_t m, cudaTextureFilterMode mipFilter, float bias,
                                       float minClamp, float maxClamp,
                                       cudaTextureFilterMode filter = cudaFilterModeLinear) {
  cudaResourceDesc rd = {};
  rd.resType = cudaResourceTypeMipmappedArray;
  rd.res.mipmap.mipmap = m;
  cudaTextureDesc td = {};
  td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
  td.filterMode = filter;
  td.readMode = cudaReadModeElementType;
  td.normalizedCoords = 1;
  td.mipmapFilterMode = mipFilter;
  td.mipmapLevelBias = bias;
  td.minMipmapLevelClamp = minClamp;
  td.maxMipmapLevelClamp = maxClamp;
  cudaTextureObject_t t = 0;
  CK(cudaCreateTextureObject(&t, &rd, &td, nullptr), "cudaCreateTextureObject_mipmap");
  return t;
}

// Fills level l of m with f(l, x, y) (2D) through cudaGetMipmappedArrayLevel.
template <typename F> static void fillLevels(cudaMipmappedArray_t m, int levels, int size, F f) {
  for (int l = 0; l < levels; ++l) {
    cudaArray_t a;
    CK(cudaGetMipmappedArrayLevel(&a, m, l), "cudaGetMipmappedArrayLevel");
    cudaChannelFormatDesc d;
    cudaExtent e;
    unsigned flags;
    CK(cudaArrayGetInfo(&d, &e, &flags, a), "cudaArrayGetInfo_level");
    int w = size >> l ? size >> l : 1;
    CHECK((int)e.width == w && (int)e.height == w, "level_extent", "level %d: %zu x %zu", l, e.width, e.height);
    std::vector<float> h(w * w);
    for (int y = 0; y < w; ++y)
      for (int x = 0; x < w; ++x)
        h[y * w + x] = f(l, x, y);
    CK(cudaMemcpy2DToArray(a, 0, 0, h.data(), w * 4, w * 4, w, cudaMemcpyHostToDevice), "cudaMemcpy2DToArray_level");
  }
}

static void mipmaps() {
  cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
  cudaMipmappedArray_t m;
  CK(cudaMallocMipmappedArray(&m, &fd, make_cudaExtent(Size, Size, 0), Levels), "cudaMallocMipmappedArray");
  fillLevels(m, Levels, Size, [](int l, int, int) { return (float)l; });
  cudaArray_t a;
  ERR(cudaGetMipmappedArrayLevel(&a, m, Levels), cudaErrorInvalidValue, "cudaGetMipmappedArrayLevel_out_of_range");
  cudaGetLastError();

  // LOD sweep: -0.5 .. 6.5 in steps of 1/32, then fine steps around level 0 and 1.
  std::vector<float> lods;
  for (int i = 0; i < 224; ++i)
    lods.push_back(-0.5f + i / 32.0f);
  for (int i = 0; i < 32; ++i)
    lods.push_back(i / 1024.0f);
  for (int i = 0; i < 32; ++i)
    lods.push_back(1.0f + (i - 16) / 2048.0f);
  int n = (int)lods.size();
  float *dl, *dout;
  cudaMalloc(&dl, n * 4);
  cudaMalloc(&dout, 2 * n * 4);
  cudaMemcpy(dl, lods.data(), n * 4, cudaMemcpyHostToDevice);
  std::vector<float> out(2 * n);

  struct {
    const char *name;
    cudaTextureFilterMode mip;
    float bias, lo, hi;
  } cases[] = {{"lod_linear", cudaFilterModeLinear, 0, 0, 5},
               {"lod_point", cudaFilterModePoint, 0, 0, 5},
               {"lod_bias_clamp", cudaFilterModeLinear, 0.5f, 1.0f, 3.25f},
               {"lod_maxclamp_0", cudaFilterModeLinear, 0, 0, 0}};
  for (auto &c : cases) {
    cudaTextureObject_t t = makeTexture(m, c.mip, c.bias, c.lo, c.hi);
    sampleLod<<<(n + 127) / 128, 128>>>(t, dl, dout, n, 0.5f, 0.5f);
    CK(cudaMemcpy(out.data(), dout, n * 4, cudaMemcpyDeviceToHost), c.name);
    printValues(c.name, out.data(), n);
    cudaDestroyTextureObject(t);
  }

  // Gradients: |g| * 32 texels per pixel from 1/32 to 64 along x and y alike, then anisotropic and skewed.
  std::vector<float> gs;
  for (int i = 0; i < 128; ++i)
    gs.push_back(exp2f(-6.0f + i / 16.0f) / Size);
  int ng = (int)gs.size();
  cudaMemcpy(dl, gs.data(), ng * 4, cudaMemcpyHostToDevice);
  // Gradients along the axes: the LOD is log2 of the longer one in texels. The GPU's log2 is approximate (its
  // LOD is within 1/256 of the exact one, either side), so this checks that bound rather than the values.
  // Gradients with two non-zero components get an LOD of the GPU's own (not modeled; driver/README.md).
  const float ratios[] = {1, 2, 0.5f, 5};
  const char *gradNames[] = {"grad_iso", "grad_ratio2", "grad_ratio_half", "grad_ratio5"};
  cudaTextureObject_t t = makeTexture(m, cudaFilterModeLinear, 0, 0, 5);
  for (int c = 0; c < 4; ++c) {
    sampleGrad<<<(ng + 127) / 128, 128>>>(t, dl, dout, ng, make_float2(0, 0), ratios[c]);
    CK(cudaMemcpy(out.data(), dout, ng * 4, cudaMemcpyDeviceToHost), gradNames[c]);
    double worst = 0;
    for (int i = 0; i < ng; ++i) {
      double len = std::max(fabsf(gs[i] * Size), fabsf(gs[i] * ratios[c] * Size));
      double lod = std::min(std::max(log2(len), 0.0), 5.0);
      worst = std::max(worst, fabs(out[i] - lod));
    }
    CHECK(worst <= 1.01 / 256, gradNames[c], "LOD off by %g levels", worst);
  }
  cudaDestroyTextureObject(t);

  // Each level an image of small integers: bilinear within two levels, blended between them.
  fillLevels(m, Levels, Size, [](int l, int x, int y) { return (float)((x * 3 + y * 5 + l * 7) % 16); });
  t = makeTexture(m, cudaFilterModeLinear, 0, 0, 5);
  const float imageLods[] = {0.0f, 0.3f, 1.0f, 1.7f};
  for (float lod : imageLods) {
    sampleImage<<<2, 128>>>(t, dout, 256, lod);
    char name[32];
    snprintf(name, sizeof name, "image_lod_%g", lod);
    CK(cudaMemcpy(out.data(), dout, 256 * 4, cudaMemcpyDeviceToHost), name);
    printValues(name, out.data(), 256);
  }
  cudaDestroyTextureObject(t);
  t = makeTexture(m, cudaFilterModeLinear, 0, 0, 5, cudaFilterModePoint);
  sampleImage<<<2, 128>>>(t, dout, 256, 1.25f);
  CK(cudaMemcpy(out.data(), dout, 256 * 4, cudaMemcpyDeviceToHost), "image_point_lod_1.25");
  printValues("image_point_lod_1.25", out.data(), 256);
  cudaDestroyTextureObject(t);
  CK(cudaFreeMipmappedArray(m), "cudaFreeMipmappedArray");

  // 1D (64 .. 1: 7 levels) and 3D (8^3 .. 1: 4 levels), every level its index.
  cudaMipmappedArray_t m1, m3;
  CK(cudaMallocMipmappedArray(&m1, &fd, make_cudaExtent(64, 0, 0), 7), "cudaMallocMipmappedArray_1d");
  CK(cudaMallocMipmappedArray(&m3, &fd, make_cudaExtent(8, 8, 8), 4), "cudaMallocMipmappedArray_3d");
  for (int l = 0; l < 7; ++l) {
    cudaArray_t a1;
    cudaGetMipmappedArrayLevel(&a1, m1, l);
    std::vector<float> h(64 >> l, (float)l);
    CK(cudaMemcpy2DToArray(a1, 0, 0, h.data(), h.size() * 4, h.size() * 4, 1, cudaMemcpyHostToDevice), "level_1d_copy");
  }
  for (int l = 0; l < 4; ++l) {
    cudaArray_t a3;
    cudaGetMipmappedArrayLevel(&a3, m3, l);
    int w = 8 >> l;
    std::vector<float> h(w * w * w, (float)l);
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(h.data(), w * 4, w, w);
    p.dstArray = a3;
    p.extent = make_cudaExtent(w, w, w);
    p.kind = cudaMemcpyHostToDevice;
    CK(cudaMemcpy3D(&p), "level_3d_copy");
  }
  cudaTextureObject_t t1 = makeTexture(m1, cudaFilterModeLinear, 0, 0, 6);
  cudaTextureObject_t t3 = makeTexture(m3, cudaFilterModeLinear, 0, 0, 3);
  int n13 = 64;
  std::vector<float> l13(n13);
  for (int i = 0; i < n13; ++i)
    l13[i] = -0.25f + i / 8.0f;
  cudaMemcpy(dl, l13.data(), n13 * 4, cudaMemcpyHostToDevice);
  sample1d3d<<<1, 64>>>(t1, t3, dl, dout, n13);
  CK(cudaMemcpy(out.data(), dout, 2 * n13 * 4, cudaMemcpyDeviceToHost), "lod_1d_3d");
  printValues("lod_1d", out.data(), n13);
  printValues("lod_3d", out.data() + n13, n13);
  cudaDestroyTextureObject(t1);
  cudaDestroyTextureObject(t3);
  CK(cudaFreeMipmappedArray(m1), "cudaFreeMipmappedArray_1d");
  CK(cudaFreeMipmappedArray(m3), "cudaFreeMipmappedArray_3d");

  // More levels than the extent has, and none: NVIDIA's runtime takes both.
  cudaMipmappedArray_t bad;
  CK(cudaMallocMipmappedArray(&bad, &fd, make_cudaExtent(32, 32, 0), 7), "cudaMallocMipmappedArray_too_many_levels");
  cudaFreeMipmappedArray(bad);
  cudaMipmappedArray_t zero = nullptr;
  cudaError_t e = cudaMallocMipmappedArray(&zero, &fd, make_cudaExtent(32, 32, 0), 0);
  printf("VAL cudaMallocMipmappedArray_0_levels %s\n", cudaGetErrorName(e));
  if (e == cudaSuccess) {
    cudaArray_t l0;
    printf("VAL level_0_of_0_levels %s\n", cudaGetErrorName(cudaGetMipmappedArrayLevel(&l0, zero, 0)));
    cudaFreeMipmappedArray(zero);
  }
  cudaGetLastError();
  cudaFree(dl);
  cudaFree(dout);
}

// ---- formatted surface stores ----
__global__ void storeFormatted(cudaSurfaceObject_t s, const unsigned *data) {
  int x = threadIdx.x;
  const unsigned *v = data + 4 * x;
  asm volatile("sust.p.2d.v4.b32.trap [%0, {%1, %2}], {%3, %4, %5, %6};" ::"l"(s), "r"(x), "r"(0), "r"(v[0]), "r"(v[1]),
               "r"(v[2]), "r"(v[3])
               : "memory");
}

__global__ void reduceFormatted(cudaSurfaceObject_t s, int v) {
  int x = threadIdx.x;
  asm volatile("sured.p.min.2d.b32.trap [%0, {%1, %2}], %3;" ::"l"(s), "r"(x), "r"(0), "r"(v - x * 3) : "memory");
}

static void surfaces() {
  struct Format {
    const char *name;
    int bits, channels;
    cudaChannelFormatKind kind;
  } formats[] = {{"u8", 8, 1, cudaChannelFormatKindUnsigned},   {"u8x4", 8, 4, cudaChannelFormatKindUnsigned},
                 {"s8", 8, 1, cudaChannelFormatKindSigned},     {"u16x2", 16, 2, cudaChannelFormatKindUnsigned},
                 {"s16", 16, 1, cudaChannelFormatKindSigned},   {"u32", 32, 1, cudaChannelFormatKindUnsigned},
                 {"s32x2", 32, 2, cudaChannelFormatKindSigned}, {"f16x4", 16, 4, cudaChannelFormatKindFloat},
                 {"f32x4", 32, 4, cudaChannelFormatKindFloat}};
  const float fvals[] = {0.0f, 0.2f, 0.5f, 1.0f, 1.7f, -0.3f, 0.5f / 255, 0.99f, 65504.0f, 1e6f, -1.0f, 0.333333f};
  const int ivals[] = {0, 1, 127, 128, 255, 256, -1, -129, 70000, 0x7fffffff, -40000, 32768};
  constexpr int W = 8;
  unsigned fdata[4 * W], idata[4 * W];
  for (int i = 0; i < 4 * W; ++i) {
    fdata[i] = bits(fvals[(i * 5) % 12]);
    idata[i] = (unsigned)ivals[(i * 5) % 12];
  }
  unsigned *ddata;
  cudaMalloc(&ddata, sizeof fdata);
  for (auto &f : formats) {
    cudaChannelFormatDesc d = cudaCreateChannelDesc(f.bits, f.channels >= 2 ? f.bits : 0, f.channels >= 4 ? f.bits : 0,
                                                    f.channels >= 4 ? f.bits : 0, f.kind);
    for (int pass = 0; pass < 2; ++pass) {
      cudaArray_t a;
      CK(cudaMallocArray(&a, &d, W, 1, cudaArraySurfaceLoadStore), "cudaMallocArray_surface");
      int bytes = W * f.bits / 8 * f.channels;
      std::vector<unsigned char> h(bytes, 0xab);
      cudaMemcpy2DToArray(a, 0, 0, h.data(), bytes, bytes, 1, cudaMemcpyHostToDevice);
      cudaResourceDesc rd = {};
      rd.resType = cudaResourceTypeArray;
      rd.res.array.array = a;
      cudaSurfaceObject_t s;
      CK(cudaCreateSurfaceObject(&s, &rd), "cudaCreateSurfaceObject");
      cudaMemcpy(ddata, pass == 1 ? idata : fdata, sizeof fdata, cudaMemcpyHostToDevice);
      storeFormatted<<<1, W>>>(s, ddata);
      CK(cudaDeviceSynchronize(), "sust_p");
      cudaMemcpy2DFromArray(h.data(), bytes, a, 0, 0, bytes, 1, cudaMemcpyDeviceToHost);
      printf("VAL sust_p_%s_%s:", pass == 0 ? "f32" : "int", f.name);
      for (int b = 0; b < bytes; ++b)
        printf("%s%02x", b % (f.bits / 8 * f.channels) ? "" : " ", h[b]);
      printf("\n");
      cudaDestroySurfaceObject(s);
      cudaFreeArray(a);
    }
  }
  // sured.p.min on signed and unsigned 32-bit surfaces: the comparison follows the format.
  for (auto kind : {cudaChannelFormatKindSigned, cudaChannelFormatKindUnsigned}) {
    cudaChannelFormatDesc d = cudaCreateChannelDesc(32, 0, 0, 0, kind);
    cudaArray_t a;
    cudaMallocArray(&a, &d, W, 1, cudaArraySurfaceLoadStore);
    int init[W] = {5, 5, 5, 5, 5, 5, 5, 5};
    cudaMemcpy2DToArray(a, 0, 0, init, sizeof init, sizeof init, 1, cudaMemcpyHostToDevice);
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = a;
    cudaSurfaceObject_t s;
    cudaCreateSurfaceObject(&s, &rd);
    reduceFormatted<<<1, W>>>(s, 9);
    CK(cudaDeviceSynchronize(), "sured_p");
    cudaMemcpy2DFromArray(init, sizeof init, a, 0, 0, sizeof init, 1, cudaMemcpyDeviceToHost);
    printf("VAL sured_p_min_%s:", kind == cudaChannelFormatKindSigned ? "s32" : "u32");
    for (int v : init)
      printf(" %d", v);
    printf("\n");
    cudaDestroySurfaceObject(s);
    cudaFreeArray(a);
  }
  cudaFree(ddata);
}

int main() {
  mipmaps();
  surfaces();
  printf("%d failures\n", failures);
  return failures != 0;
}
