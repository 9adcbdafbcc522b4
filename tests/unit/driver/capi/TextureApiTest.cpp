// libcuda.so.1's CUDA array, texture object and surface object entry points: argument checks and their error
// codes, descriptor round trips, array copies at the edges, and what a kernel sees for a handle that names no
// object (a sticky CUDA_ERROR_ILLEGAL_ADDRESS, as on the GPU, instead of a crash). The GPU-recorded sampling
// cases are tests/conformance/texture.
#include <cuda.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>

namespace {

void context() {
  static CUcontext C = [] {
    REQUIRE(cuInit(0) == CUDA_SUCCESS);
    CUdevice D;
    REQUIRE(cuDeviceGet(&D, 0) == CUDA_SUCCESS);
    CUcontext Ctx = nullptr;
    REQUIRE(cuDevicePrimaryCtxRetain(&Ctx, D) == CUDA_SUCCESS);
    return Ctx;
  }();
  REQUIRE(cuCtxSetCurrent(C) == CUDA_SUCCESS);
}

CUDA_ARRAY3D_DESCRIPTOR shape(size_t W, size_t H, size_t D, unsigned Flags = 0, CUarray_format F = CU_AD_FORMAT_FLOAT,
                              unsigned Channels = 1) {
  CUDA_ARRAY3D_DESCRIPTOR S = {};
  S.Width = W, S.Height = H, S.Depth = D, S.Format = F, S.NumChannels = Channels, S.Flags = Flags;
  return S;
}

CUDA_RESOURCE_DESC arrayResource(CUarray A) {
  CUDA_RESOURCE_DESC R = {};
  R.resType = CU_RESOURCE_TYPE_ARRAY;
  R.res.array.hArray = A;
  return R;
}

} // namespace

TEST_CASE("cuArray3DCreate checks its descriptor") {
  context();
  CUarray A = nullptr;
  CUDA_ARRAY3D_DESCRIPTOR S = shape(4, 4, 0);
  CHECK(cuArray3DCreate(nullptr, &S) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuArray3DCreate(&A, nullptr) == CUDA_ERROR_INVALID_VALUE);
  S = shape(0, 4, 0);
  CHECK(cuArray3DCreate(&A, &S) == CUDA_ERROR_INVALID_VALUE); // no width
  S = shape(4, 0, 4);
  CHECK(cuArray3DCreate(&A, &S) == CUDA_ERROR_INVALID_VALUE); // depth without height
  S = shape(4, 4, 0, 0, CU_AD_FORMAT_FLOAT, 3);
  CHECK(cuArray3DCreate(&A, &S) == CUDA_ERROR_INVALID_VALUE); // three channels
  S = shape(4, 4, 0, 0, static_cast<CUarray_format>(0x33));
  CHECK(cuArray3DCreate(&A, &S) == CUDA_ERROR_INVALID_VALUE); // no such format
  S = shape(200000, 0, 0);
  CHECK(cuArray3DCreate(&A, &S) == CUDA_ERROR_INVALID_VALUE); // past the 1D limit
  S = shape(4, 4, 0, CUDA_ARRAY3D_LAYERED);
  CHECK(cuArray3DCreate(&A, &S) == CUDA_ERROR_INVALID_VALUE); // layered with no layers
  S = shape(4, 2, 6, CUDA_ARRAY3D_CUBEMAP);
  CHECK(cuArray3DCreate(&A, &S) == CUDA_ERROR_INVALID_VALUE); // faces not square
  S = shape(4, 4, 5, CUDA_ARRAY3D_CUBEMAP);
  CHECK(cuArray3DCreate(&A, &S) == CUDA_ERROR_INVALID_VALUE); // not six faces
  S = shape(4, 4, 12, CUDA_ARRAY3D_CUBEMAP);
  CHECK(cuArray3DCreate(&A, &S) == CUDA_ERROR_INVALID_VALUE); // two cubemaps need CUDA_ARRAY3D_LAYERED
  S = shape(4, 4, 0, 0x40);                                   // CUDA_ARRAY3D_SPARSE
  CHECK(cuArray3DCreate(&A, &S) == CUDA_ERROR_NOT_SUPPORTED);
}

TEST_CASE("cubemap arrays: six faces, or six per cubemap when layered") {
  context();
  for (unsigned Flags : {unsigned(CUDA_ARRAY3D_CUBEMAP), unsigned(CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED)}) {
    CUarray A = nullptr;
    CUDA_ARRAY3D_DESCRIPTOR S = shape(4, 4, Flags & CUDA_ARRAY3D_LAYERED ? 12 : 6, Flags);
    REQUIRE(cuArray3DCreate(&A, &S) == CUDA_SUCCESS);
    CUDA_ARRAY3D_DESCRIPTOR Got = {};
    CHECK(cuArray3DGetDescriptor(&Got, A) == CUDA_SUCCESS);
    CHECK(std::memcmp(&Got, &S, sizeof S) == 0);
    CUDA_RESOURCE_DESC Res = arrayResource(A);
    CUDA_TEXTURE_DESC Tex = {};
    Tex.flags = CU_TRSF_NORMALIZED_COORDINATES;
    CUtexObject T = 0;
    CHECK(cuTexObjectCreate(&T, &Res, &Tex, nullptr) == CUDA_SUCCESS);
    CHECK(cuTexObjectDestroy(T) == CUDA_SUCCESS);
    CHECK(cuArrayDestroy(A) == CUDA_SUCCESS);
  }
}

TEST_CASE("arrays: descriptors, destroy, copies inside the array only") {
  context();
  CUarray A = nullptr;
  CUDA_ARRAY3D_DESCRIPTOR S =
      shape(5, 3, 2, CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST, CU_AD_FORMAT_SIGNED_INT16, 2);
  REQUIRE(cuArray3DCreate(&A, &S) == CUDA_SUCCESS);
  CUDA_ARRAY3D_DESCRIPTOR Got = {};
  CHECK(cuArray3DGetDescriptor(&Got, A) == CUDA_SUCCESS);
  CHECK(std::memcmp(&Got, &S, sizeof S) == 0);
  CUDA_ARRAY_DESCRIPTOR Got2D = {};
  CHECK(cuArrayGetDescriptor(&Got2D, A) == CUDA_SUCCESS);
  CHECK(Got2D.Width == 5);
  CHECK(Got2D.Height == 3);
  CHECK(cuArray3DGetDescriptor(nullptr, A) == CUDA_ERROR_INVALID_VALUE);

  // Rows of 5 x 4 bytes: a copy one byte wider than a row, or into a third layer, is refused.
  unsigned char Host[5 * 4 * 3 * 2] = {};
  for (unsigned I = 0; I < sizeof Host; ++I)
    Host[I] = static_cast<unsigned char>(I);
  CUDA_MEMCPY3D C = {};
  C.srcMemoryType = CU_MEMORYTYPE_HOST, C.srcHost = Host, C.srcPitch = 20, C.srcHeight = 3;
  C.dstMemoryType = CU_MEMORYTYPE_ARRAY, C.dstArray = A;
  C.WidthInBytes = 20, C.Height = 3, C.Depth = 2;
  CHECK(cuMemcpy3D(&C) == CUDA_SUCCESS);
  C.WidthInBytes = 21;
  CHECK(cuMemcpy3D(&C) == CUDA_ERROR_INVALID_VALUE);
  C.WidthInBytes = 20, C.dstZ = 1;
  CHECK(cuMemcpy3D(&C) == CUDA_ERROR_INVALID_VALUE);
  // Back out with a 2D copy of the second layer's last row, from byte 4.
  unsigned char Row[16] = {};
  CUDA_MEMCPY2D R = {};
  R.srcMemoryType = CU_MEMORYTYPE_ARRAY, R.srcArray = A, R.srcXInBytes = 4, R.srcY = 2;
  R.dstMemoryType = CU_MEMORYTYPE_HOST, R.dstHost = Row, R.dstPitch = 16;
  R.WidthInBytes = 16, R.Height = 1;
  CHECK(cuMemcpy2D(&R) == CUDA_SUCCESS);
  CHECK(Row[0] == 44); // layer 0, row 2, byte 4
  R.srcArray = reinterpret_cast<CUarray>(Row);
  CHECK(cuMemcpy2D(&R) == CUDA_ERROR_INVALID_VALUE); // not an array

  CHECK(cuArrayDestroy(A) == CUDA_SUCCESS);
  CHECK(cuArrayDestroy(A) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuArray3DGetDescriptor(&Got, A) == CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("texture and surface objects check their descriptions") {
  context();
  CUarray Plain = nullptr, Int = nullptr;
  CUDA_ARRAY3D_DESCRIPTOR S = shape(8, 8, 0);
  REQUIRE(cuArray3DCreate(&Plain, &S) == CUDA_SUCCESS);
  S = shape(8, 8, 0, 0, CU_AD_FORMAT_UNSIGNED_INT32);
  REQUIRE(cuArray3DCreate(&Int, &S) == CUDA_SUCCESS);
  CUDA_RESOURCE_DESC Res = arrayResource(Plain);
  CUDA_TEXTURE_DESC Tex = {};
  Tex.filterMode = CU_TR_FILTER_MODE_LINEAR;
  Tex.flags = CU_TRSF_NORMALIZED_COORDINATES;
  CUtexObject T = 0;
  CHECK(cuTexObjectCreate(nullptr, &Res, &Tex, nullptr) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuTexObjectCreate(&T, nullptr, &Tex, nullptr) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuTexObjectCreate(&T, &Res, nullptr, nullptr) == CUDA_ERROR_INVALID_VALUE);
  Res.flags = 1;
  CHECK(cuTexObjectCreate(&T, &Res, &Tex, nullptr) == CUDA_ERROR_INVALID_VALUE);
  Res = arrayResource(Int);
  CHECK(cuTexObjectCreate(&T, &Res, &Tex, nullptr) == CUDA_ERROR_INVALID_VALUE); // 32-bit integers cannot filter
  Res = arrayResource(reinterpret_cast<CUarray>(&Tex));
  CHECK(cuTexObjectCreate(&T, &Res, &Tex, nullptr) == CUDA_ERROR_INVALID_HANDLE);
  Tex.addressMode[1] = static_cast<CUaddress_mode>(7);
  Res = arrayResource(Plain);
  CHECK(cuTexObjectCreate(&T, &Res, &Tex, nullptr) == CUDA_ERROR_INVALID_VALUE);
  Tex.addressMode[1] = CU_TR_ADDRESS_MODE_MIRROR;
  Tex.borderColor[2] = 0.25f;
  REQUIRE(cuTexObjectCreate(&T, &Res, &Tex, nullptr) == CUDA_SUCCESS);
  CHECK(T != 0);
  CUDA_RESOURCE_DESC ResBack;
  CUDA_TEXTURE_DESC TexBack;
  CHECK(cuTexObjectGetResourceDesc(&ResBack, T) == CUDA_SUCCESS);
  CHECK(ResBack.res.array.hArray == Plain);
  CHECK(cuTexObjectGetTextureDesc(&TexBack, T) == CUDA_SUCCESS);
  CHECK(std::memcmp(&TexBack, &Tex, sizeof Tex) == 0);

  // Linear memory: aligned to 512 bytes, inside an allocation, fetched by index only.
  CUdeviceptr P;
  REQUIRE(cuMemAlloc(&P, 4096) == CUDA_SUCCESS);
  CUDA_RESOURCE_DESC Lin = {};
  Lin.resType = CU_RESOURCE_TYPE_LINEAR;
  Lin.res.linear.devPtr = P + 4, Lin.res.linear.format = CU_AD_FORMAT_FLOAT, Lin.res.linear.numChannels = 1;
  Lin.res.linear.sizeInBytes = 1024;
  CUDA_TEXTURE_DESC Fetch = {};
  CUtexObject L = 0;
  CHECK(cuTexObjectCreate(&L, &Lin, &Fetch, nullptr) == CUDA_ERROR_INVALID_VALUE); // misaligned
  Lin.res.linear.devPtr = P, Lin.res.linear.sizeInBytes = 8192;
  CHECK(cuTexObjectCreate(&L, &Lin, &Fetch, nullptr) == CUDA_ERROR_INVALID_VALUE); // past the allocation
  Lin.res.linear.sizeInBytes = 4096;
  CHECK(cuTexObjectCreate(&L, &Lin, &Tex, nullptr) == CUDA_ERROR_INVALID_VALUE); // filtering linear memory
  CHECK(cuTexObjectCreate(&L, &Lin, &Fetch, nullptr) == CUDA_SUCCESS);

  // Surfaces need CUDA_ARRAY3D_SURFACE_LDST and an array.
  CUsurfObject Surf = 0;
  CHECK(cuSurfObjectCreate(&Surf, &Res) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuSurfObjectCreate(&Surf, &Lin) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuSurfObjectDestroy(T) == CUDA_ERROR_INVALID_VALUE); // a texture is no surface

  CHECK(cuTexObjectDestroy(T) == CUDA_SUCCESS);
  CHECK(cuTexObjectDestroy(T) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuTexObjectGetResourceDesc(&ResBack, T) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuTexObjectDestroy(L) == CUDA_SUCCESS);
  CHECK(cuMemFree(P) == CUDA_SUCCESS);
  CHECK(cuArrayDestroy(Plain) == CUDA_SUCCESS);
  CHECK(cuArrayDestroy(Int) == CUDA_SUCCESS);
}

TEST_CASE("cuArrayCreate makes 1D and 2D arrays; surface objects round trip their resource") {
  context();
  CUDA_ARRAY_DESCRIPTOR D = {};
  D.Width = 16, D.Height = 0, D.Format = CU_AD_FORMAT_HALF, D.NumChannels = 4;
  CUarray A = nullptr;
  CHECK(cuArrayCreate(nullptr, &D) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(cuArrayCreate(&A, &D) == CUDA_SUCCESS);
  CUDA_ARRAY3D_DESCRIPTOR Got = {};
  CHECK(cuArray3DGetDescriptor(&Got, A) == CUDA_SUCCESS);
  CHECK(Got.Width == 16);
  CHECK(Got.Height == 0);
  CHECK(Got.Depth == 0);
  CHECK(Got.Flags == 0);
  CHECK(cuArrayDestroy(A) == CUDA_SUCCESS);

  CUDA_ARRAY3D_DESCRIPTOR S = shape(8, 4, 0, CUDA_ARRAY3D_SURFACE_LDST, CU_AD_FORMAT_UNSIGNED_INT8, 4);
  REQUIRE(cuArray3DCreate(&A, &S) == CUDA_SUCCESS);
  CUDA_RESOURCE_DESC Res = arrayResource(A);
  CUsurfObject Surf = 0;
  CHECK(cuSurfObjectCreate(nullptr, &Res) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(cuSurfObjectCreate(&Surf, &Res) == CUDA_SUCCESS);
  CUDA_RESOURCE_DESC Back = {};
  CHECK(cuSurfObjectGetResourceDesc(&Back, Surf) == CUDA_SUCCESS);
  CHECK(Back.resType == CU_RESOURCE_TYPE_ARRAY);
  CHECK(Back.res.array.hArray == A);
  CHECK(cuTexObjectGetResourceDesc(&Back, Surf) == CUDA_ERROR_INVALID_VALUE); // a surface is no texture
  CHECK(cuSurfObjectDestroy(Surf) == CUDA_SUCCESS);
  CHECK(cuSurfObjectGetResourceDesc(&Back, Surf) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuArrayDestroy(A) == CUDA_SUCCESS);
}

TEST_CASE("mipmapped arrays: levels halve, the level count is clamped, levels live and die with the array") {
  context();
  CUmipmappedArray M = nullptr;
  CUDA_ARRAY3D_DESCRIPTOR S = shape(32, 8, 0, CUDA_ARRAY3D_SURFACE_LDST);
  CHECK(cuMipmappedArrayCreate(nullptr, &S, 3) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMipmappedArrayCreate(&M, nullptr, 3) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(cuMipmappedArrayCreate(&M, &S, 9) == CUDA_SUCCESS); // 32 x 8 has 6 levels: 32, 16, 8, 4, 2, 1
  CUarray Levels[6] = {};
  for (unsigned L = 0; L < 6; ++L) {
    REQUIRE(cuMipmappedArrayGetLevel(&Levels[L], M, L) == CUDA_SUCCESS);
    CUDA_ARRAY3D_DESCRIPTOR D;
    REQUIRE(cuArray3DGetDescriptor(&D, Levels[L]) == CUDA_SUCCESS);
    CHECK(D.Width == std::max<size_t>(1, 32u >> L));
    CHECK(D.Height == std::max<size_t>(1, 8u >> L));
    CHECK(D.Flags == CUDA_ARRAY3D_SURFACE_LDST);
  }
  CUarray Past = nullptr;
  CHECK(cuMipmappedArrayGetLevel(&Past, M, 6) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMipmappedArrayGetLevel(nullptr, M, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuArrayDestroy(Levels[1]) == CUDA_ERROR_INVALID_HANDLE); // only with its mipmapped array

  // A texture over every level; surfaces are over one level.
  CUDA_RESOURCE_DESC R = {};
  R.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
  R.res.mipmap.hMipmappedArray = M;
  CUDA_TEXTURE_DESC T = {};
  T.filterMode = CU_TR_FILTER_MODE_LINEAR, T.mipmapFilterMode = CU_TR_FILTER_MODE_LINEAR;
  T.maxMipmapLevelClamp = 5, T.flags = CU_TRSF_NORMALIZED_COORDINATES;
  CUtexObject Tex = 0;
  REQUIRE(cuTexObjectCreate(&Tex, &R, &T, nullptr) == CUDA_SUCCESS);
  CUDA_TEXTURE_DESC Back;
  REQUIRE(cuTexObjectGetTextureDesc(&Back, Tex) == CUDA_SUCCESS);
  CHECK(Back.maxMipmapLevelClamp == 5);
  CHECK(cuTexObjectDestroy(Tex) == CUDA_SUCCESS);
  CUsurfObject Surf = 0;
  CHECK(cuSurfObjectCreate(&Surf, &R) == CUDA_ERROR_INVALID_VALUE);
  CUDA_RESOURCE_DESC Level = arrayResource(Levels[2]);
  REQUIRE(cuSurfObjectCreate(&Surf, &Level) == CUDA_SUCCESS);
  CHECK(cuSurfObjectDestroy(Surf) == CUDA_SUCCESS);

  CHECK(cuMipmappedArrayDestroy(M) == CUDA_SUCCESS);
  CHECK(cuMipmappedArrayDestroy(M) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuMipmappedArrayGetLevel(&Past, M, 0) == CUDA_ERROR_INVALID_HANDLE);
  CUDA_ARRAY3D_DESCRIPTOR D;
  CHECK(cuArray3DGetDescriptor(&D, Levels[0]) == CUDA_ERROR_INVALID_HANDLE); // gone with it
  CHECK(cuTexObjectCreate(&Tex, &R, &T, nullptr) == CUDA_ERROR_INVALID_HANDLE);

  // No levels asked for: one level (NVIDIA's driver accepts 0 as well).
  S = shape(4, 0, 0);
  REQUIRE(cuMipmappedArrayCreate(&M, &S, 0) == CUDA_SUCCESS);
  CHECK(cuMipmappedArrayGetLevel(&Past, M, 0) == CUDA_SUCCESS);
  CHECK(cuMipmappedArrayGetLevel(&Past, M, 1) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMipmappedArrayDestroy(M) == CUDA_SUCCESS);
}
