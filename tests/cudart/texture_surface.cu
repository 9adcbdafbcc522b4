// texture_surface: CUDA arrays, texture objects and surface objects through the runtime API, the way image
// programs use them: a 2D float image in an array sampled through a texture (point and bilinear, normalized
// coordinates, wrap), a surface kernel writing an array read back with cudaMemcpy2DFromArray, a 3D array
// filled with cudaMemcpy3D and fetched with tex3D, cubemaps (plain and layered) along each face's direction,
// tex1Dfetch from linear memory, cudaMemcpyToArray/FromArray
// across rows, stream-ordered and array-to-array copies, the descriptor queries, and the error codes for bad
// arguments.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#include "check.h"
#define ERR(call, want, name)                                                                                          \
  do {                                                                                                                 \
    cudaError_t e_ = (call);                                                                                           \
    CHECK(e_ == (want), name, "%s", cudaGetErrorName(e_));                                                             \
  } while (0)

constexpr int W = 16, H = 8;

// Samples the image at every texel centre shifted by (dx, dy) texels, in normalized coordinates.
__global__ void sample(cudaTextureObject_t t, float *out, float dx, float dy) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < W && y < H)
    out[y * W + x] = tex2D<float>(t, (x + 0.5f + dx) / W, (y + 0.5f + dy) / H);
}

// Writes a pattern through a surface: x is in bytes.
__global__ void paint(cudaSurfaceObject_t s, int frame) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < W && y < H)
    surf2Dwrite(make_uchar4(x, y, frame, x ^ y), s, x * sizeof(uchar4), y);
}

__global__ void fetch3d(cudaTextureObject_t t, float *out, int n) {
  int i = threadIdx.x;
  if (i < n)
    out[i] = tex3D<float>(t, i % 4 + 0.5f, i / 4 % 3 + 0.5f, i / 12 + 0.5f);
}

// Looks up each face's centre texel (1, 1) of a 2 x 2 cubemap (and of the second cubemap of a layered one) along
// the direction the programming guide's face table gives for it.
__global__ void cube_centres(cudaTextureObject_t t, cudaTextureObject_t layered, float *out) {
  const float q = 0.5f; // texel 1 of 2 spans face coordinates 0.5..1; its centre is at 0.75 = (q + 1) / 2
  const float dir[6][3] = {{1, -q, -q}, {-1, -q, q}, {q, 1, q}, {q, -1, -q}, {q, -q, 1}, {-q, -q, -1}};
  int f = threadIdx.x;
  if (f < 6) {
    out[f] = texCubemap<float>(t, dir[f][0], dir[f][1], dir[f][2]);
    out[6 + f] = texCubemapLayered<float>(layered, dir[f][0], dir[f][1], dir[f][2], 1);
  }
}

__global__ void fetch1d(cudaTextureObject_t t, int *out, int n) {
  int i = threadIdx.x;
  if (i < n)
    out[i] = tex1Dfetch<int>(t, i - 2);
}

static float image(int x, int y) { return (float)(x * 3 + y * 50); }

static void texture2d() {
  float host[H][W];
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      host[y][x] = image(x, y);
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  CHECK(desc.x == 32 && desc.y == 0 && desc.f == cudaChannelFormatKindFloat, "cudaCreateChannelDesc", "%d %d", desc.x,
        desc.f);
  cudaArray_t arr = nullptr;
  CK(cudaMallocArray(&arr, &desc, W, H), "cudaMallocArray");
  CK(cudaMemcpy2DToArray(arr, 0, 0, host, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice),
     "cudaMemcpy2DToArray");
  cudaChannelFormatDesc got;
  CK(cudaGetChannelDesc(&got, arr), "cudaGetChannelDesc");
  CHECK(got.x == 32 && got.f == cudaChannelFormatKindFloat, "cudaGetChannelDesc_value", "%d", got.x);

  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = arr;
  cudaTextureDesc td = {};
  td.addressMode[0] = td.addressMode[1] = cudaAddressModeWrap;
  td.filterMode = cudaFilterModePoint;
  td.readMode = cudaReadModeElementType;
  td.normalizedCoords = 1;
  cudaTextureObject_t point = 0, linear = 0;
  CK(cudaCreateTextureObject(&point, &res, &td, nullptr), "cudaCreateTextureObject_point");
  td.filterMode = cudaFilterModeLinear;
  CK(cudaCreateTextureObject(&linear, &res, &td, nullptr), "cudaCreateTextureObject_linear");

  float *d_out, out[H][W];
  cudaMalloc(&d_out, sizeof out);
  dim3 block(8, 8), grid(W / 8, H / 8);
  // Shifted by two whole texels: wrap brings the right and bottom edges round.
  sample<<<grid, block>>>(point, d_out, 2, 1);
  cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      bad += out[y][x] != image((x + 2) % W, (y + 1) % H);
  CHECK(bad == 0, "tex2D_point_wrap", "%d wrong", bad);
  // Half a texel right: the mean of two neighbours (weights 1/2 are exact).
  sample<<<grid, block>>>(linear, d_out, 0.5f, 0);
  cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
  bad = 0;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      bad += out[y][x] != 0.5f * (image(x, y) + image((x + 1) % W, y));
  CHECK(bad == 0, "tex2D_linear_wrap", "%d wrong", bad);

  cudaResourceDesc back;
  CK(cudaGetTextureObjectResourceDesc(&back, linear), "cudaGetTextureObjectResourceDesc");
  CHECK(back.resType == cudaResourceTypeArray && back.res.array.array == arr, "resource_desc_value", "%d",
        back.resType);
  cudaTextureDesc tback;
  CK(cudaGetTextureObjectTextureDesc(&tback, linear), "cudaGetTextureObjectTextureDesc");
  CHECK(tback.filterMode == cudaFilterModeLinear && tback.normalizedCoords &&
            tback.addressMode[0] == cudaAddressModeWrap,
        "texture_desc_value", "%d %d", tback.filterMode, tback.normalizedCoords);

  CK(cudaDestroyTextureObject(point), "cudaDestroyTextureObject");
  cudaDestroyTextureObject(linear);
  cudaFree(d_out);
  CK(cudaFreeArray(arr), "cudaFreeArray");
}

static void surface2d() {
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<uchar4>();
  cudaArray_t arr;
  CK(cudaMallocArray(&arr, &desc, W, H, cudaArraySurfaceLoadStore), "cudaMallocArray_surface");
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = arr;
  cudaSurfaceObject_t s = 0;
  CK(cudaCreateSurfaceObject(&s, &res), "cudaCreateSurfaceObject");
  paint<<<dim3(W / 8, H / 8), dim3(8, 8)>>>(s, 7);
  CK(cudaGetLastError(), "surf2Dwrite_launch");
  unsigned char out[H][W][4];
  CK(cudaMemcpy2DFromArray(out, W * 4, arr, 0, 0, W * 4, H, cudaMemcpyDeviceToHost), "cudaMemcpy2DFromArray");
  int bad = 0;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      bad += out[y][x][0] != x || out[y][x][1] != y || out[y][x][2] != 7 || out[y][x][3] != (x ^ y);
  CHECK(bad == 0, "surf2Dwrite_values", "%d wrong", bad);
  cudaResourceDesc back;
  CK(cudaGetSurfaceObjectResourceDesc(&back, s), "cudaGetSurfaceObjectResourceDesc");
  CK(cudaDestroySurfaceObject(s), "cudaDestroySurfaceObject");

  // Row-crossing linear copies: 20 bytes from byte 60 of row 1 run into row 2 (texels 0-3); texel 4 keeps
  // what paint wrote.
  unsigned char in[20], again[20];
  for (int i = 0; i < 20; ++i)
    in[i] = (unsigned char)(200 + i);
  CK(cudaMemcpyToArray(arr, 60, 1, in, sizeof in, cudaMemcpyHostToDevice), "cudaMemcpyToArray");
  CK(cudaMemcpyFromArray(again, arr, 60, 1, sizeof again, cudaMemcpyDeviceToHost), "cudaMemcpyFromArray");
  CHECK(memcmp(in, again, sizeof in) == 0, "cudaMemcpyToArray_roundtrip", "differs");
  CK(cudaMemcpy2DFromArray(out, W * 4, arr, 0, 0, W * 4, H, cudaMemcpyDeviceToHost), "cudaMemcpy2DFromArray_again");
  CHECK(out[2][3][3] == 219 && out[2][4][0] == 4 && out[1][15][0] == 200, "cudaMemcpyToArray_rows", "%d %d %d",
        out[2][3][3], out[2][4][0], out[1][15][0]);
  cudaFreeArray(arr);
}

static void texture3d_and_linear() {
  const int X = 4, Y = 3, Z = 2, N = X * Y * Z;
  float host[N], out[N];
  for (int i = 0; i < N; ++i)
    host[i] = i * 1.5f;
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t arr;
  CK(cudaMalloc3DArray(&arr, &desc, make_cudaExtent(X, Y, Z)), "cudaMalloc3DArray");
  cudaMemcpy3DParms p = {};
  p.srcPtr = make_cudaPitchedPtr(host, X * sizeof(float), X, Y);
  p.dstArray = arr;
  p.extent = make_cudaExtent(X, Y, Z);
  p.kind = cudaMemcpyHostToDevice;
  CK(cudaMemcpy3D(&p), "cudaMemcpy3D");
  cudaExtent ext;
  unsigned flags;
  CK(cudaArrayGetInfo(&desc, &ext, &flags, arr), "cudaArrayGetInfo");
  CHECK(ext.width == X && ext.height == Y && ext.depth == Z, "cudaArrayGetInfo_extent", "%zu %zu %zu", ext.width,
        ext.height, ext.depth);
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = arr;
  cudaTextureDesc td = {};
  td.readMode = cudaReadModeElementType;
  cudaTextureObject_t t;
  CK(cudaCreateTextureObject(&t, &res, &td, nullptr), "cudaCreateTextureObject_3d");
  float *d_out;
  cudaMalloc(&d_out, sizeof out);
  fetch3d<<<1, N>>>(t, d_out, N);
  cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
  CHECK(memcmp(out, host, sizeof out) == 0, "tex3D_values", "out[5]=%g", out[5]);
  cudaDestroyTextureObject(t);
  cudaFreeArray(arr);
  cudaFree(d_out);

  int lin[8] = {10, 11, 12, 13, 14, 15, 16, 17}, got[12];
  int *d_lin, *d_got;
  cudaMalloc(&d_lin, sizeof lin);
  cudaMalloc(&d_got, sizeof got);
  cudaMemcpy(d_lin, lin, sizeof lin, cudaMemcpyHostToDevice);
  res = {};
  res.resType = cudaResourceTypeLinear;
  res.res.linear.devPtr = d_lin;
  res.res.linear.desc = cudaCreateChannelDesc<int>();
  res.res.linear.sizeInBytes = sizeof lin;
  CK(cudaCreateTextureObject(&t, &res, &td, nullptr), "cudaCreateTextureObject_linear_memory");
  fetch1d<<<1, 12>>>(t, d_got, 12);
  cudaMemcpy(got, d_got, sizeof got, cudaMemcpyDeviceToHost);
  // Indices -2..9: outside the 8 elements the fetch reads 0.
  CHECK(got[0] == 0 && got[1] == 0 && got[2] == 10 && got[9] == 17 && got[10] == 0, "tex1Dfetch_values",
        "%d %d %d %d %d", got[0], got[1], got[2], got[9], got[10]);
  cudaDestroyTextureObject(t);
  cudaFree(d_lin);
  cudaFree(d_got);
}

// A cubemap and a layered cubemap (two cubemaps) of 2 x 2 faces, texel (x, y) of face f (layer l) holding
// l * 100 + f * 10 + y * 2 + x; point sampling along each face's direction reads its centre texel (1, 1).
static void cubemaps() {
  float host[12][2][2], out[12];
  for (int l = 0; l < 12; ++l)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 2; ++x)
        host[l][y][x] = l / 6 * 100 + l % 6 * 10 + y * 2 + x;
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t cube, layered;
  CK(cudaMalloc3DArray(&cube, &desc, make_cudaExtent(2, 2, 6), cudaArrayCubemap), "cudaMalloc3DArray_cubemap");
  CK(cudaMalloc3DArray(&layered, &desc, make_cudaExtent(2, 2, 12), cudaArrayCubemap | cudaArrayLayered),
     "cudaMalloc3DArray_cubemap_layered");
  cudaTextureObject_t t[2];
  cudaArray_t arrays[2] = {cube, layered};
  for (int k = 0; k < 2; ++k) {
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(host, 2 * sizeof(float), 2, 2);
    p.dstArray = arrays[k];
    p.extent = make_cudaExtent(2, 2, k ? 12 : 6);
    p.kind = cudaMemcpyHostToDevice;
    CK(cudaMemcpy3D(&p), "cudaMemcpy3D_cubemap");
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arrays[k];
    cudaTextureDesc td = {};
    td.normalizedCoords = 1;
    td.readMode = cudaReadModeElementType;
    CK(cudaCreateTextureObject(&t[k], &res, &td, nullptr), "cudaCreateTextureObject_cubemap");
  }
  float *d_out;
  cudaMalloc(&d_out, sizeof out);
  cube_centres<<<1, 6>>>(t[0], t[1], d_out);
  cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
  bool ok = true;
  for (int f = 0; f < 6; ++f)
    ok = ok && out[f] == f * 10 + 3 && out[6 + f] == 100 + f * 10 + 3;
  CHECK(ok, "texCubemap_faces", "%g %g %g %g %g %g / %g", out[0], out[1], out[2], out[3], out[4], out[5], out[6]);
  cudaDestroyTextureObject(t[0]);
  cudaDestroyTextureObject(t[1]);
  cudaFreeArray(cube);
  cudaFreeArray(layered);
  cudaFree(d_out);
}

// The stream-ordered and array-to-array copies: a 2D array filled asynchronously, copied into a second array,
// read back asynchronously; a 3D copy out of the second array on the same stream.
static void async_and_array_to_array() {
  const int w = 6, h = 4;
  int host[h][w], back[h][w] = {}, back3d[h][w] = {};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      host[y][x] = y * 100 + x;
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<int>();
  cudaArray_t a, b;
  CK(cudaMallocArray(&a, &desc, w, h), "array_a");
  CK(cudaMallocArray(&b, &desc, w, h), "array_b");
  cudaStream_t s;
  cudaStreamCreate(&s);
  CK(cudaMemcpy2DToArrayAsync(a, 0, 0, host, w * 4, w * 4, h, cudaMemcpyHostToDevice, s), "cudaMemcpy2DToArrayAsync");
  cudaStreamSynchronize(s);
  // b's rows 1..3 from a's rows 0..2, shifted right one element.
  CK(cudaMemcpy2DArrayToArray(b, 4, 1, a, 0, 0, (w - 1) * 4, h - 1, cudaMemcpyDeviceToDevice),
     "cudaMemcpy2DArrayToArray");
  CK(cudaMemcpy2DFromArrayAsync(back, w * 4, b, 0, 0, w * 4, h, cudaMemcpyDeviceToHost, s),
     "cudaMemcpy2DFromArrayAsync");
  cudaMemcpy3DParms p = {};
  p.srcArray = b;
  p.dstPtr = make_cudaPitchedPtr(back3d, w * 4, w, h);
  p.extent = make_cudaExtent(w, h, 1);
  p.kind = cudaMemcpyDeviceToHost;
  CK(cudaMemcpy3DAsync(&p, s), "cudaMemcpy3DAsync");
  CK(cudaStreamSynchronize(s), "async_copies_done");
  CHECK(back[1][1] == 0 && back[3][5] == 204 && back[2][3] == 102, "array_to_array_values", "%d %d %d", back[1][1],
        back[3][5], back[2][3]);
  CHECK(memcmp(back, back3d, sizeof back) == 0, "cudaMemcpy3DAsync_values", "differs");
  int row[3] = {7, 8, 9}, got[3] = {};
  CK(cudaMemcpyToArrayAsync(a, 8, 3, row, sizeof row, cudaMemcpyHostToDevice, s), "cudaMemcpyToArrayAsync");
  CK(cudaMemcpyFromArrayAsync(got, a, 8, 3, sizeof got, cudaMemcpyDeviceToHost, s), "cudaMemcpyFromArrayAsync");
  cudaStreamSynchronize(s);
  CHECK(got[0] == 7 && got[2] == 9, "linear_array_async_values", "%d %d", got[0], got[2]);
  cudaStreamDestroy(s);
  cudaFreeArray(a);
  cudaFreeArray(b);
}

static void bad_arguments() {
  cudaChannelFormatDesc three = cudaCreateChannelDesc(32, 32, 32, 0, cudaChannelFormatKindFloat);
  cudaArray_t arr = nullptr;
  ERR(cudaMallocArray(&arr, &three, 4, 4), cudaErrorInvalidChannelDescriptor, "bad_three_channels");
  cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
  ERR(cudaMallocArray(nullptr, &f, 4, 4), cudaErrorInvalidValue, "bad_null_array_pointer");
  ERR(cudaMallocArray(&arr, &f, 0, 4), cudaErrorInvalidValue, "bad_zero_width");
  CK(cudaMallocArray(&arr, &f, 4, 4), "plain_array");
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = arr;
  cudaSurfaceObject_t s;
  ERR(cudaCreateSurfaceObject(&s, &res), cudaErrorInvalidValue, "bad_surface_without_flag");
  cudaTextureObject_t t;
  ERR(cudaCreateTextureObject(&t, nullptr, nullptr, nullptr), cudaErrorInvalidValue, "bad_null_descriptors");
  float host[4 * 5] = {};
  ERR(cudaMemcpy2DToArray(arr, 0, 0, host, 16, 16, 5, cudaMemcpyHostToDevice), cudaErrorInvalidValue,
      "bad_copy_past_last_row");
  cudaGetLastError();
  CK(cudaFreeArray(arr), "free_plain_array");
}

int main() {
  setvbuf(stdout, NULL, _IONBF, 0);
  texture2d();
  surface2d();
  texture3d_and_linear();
  cubemaps();
  async_and_array_to_array();
  bad_arguments();
  printf("%s\n", failures ? "FAILED" : "ALL PASSED");
  return failures != 0;
}
