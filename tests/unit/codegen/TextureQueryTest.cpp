// The texture/surface queries and the surface boundary modes the GPU recordings do not cover
// (tests/conformance/texture has width/height): txq/suq of depth, array size, memory layout and the channel
// queries, which answer with the OpenCL constants the PTX ISA names; txq.level and the level count of a
// mipmapped texture; suld/sust with .clamp and .zero off the edge; sured.min on s32. Descriptors are registered
// directly, as the driver registers them.
#include "KernelRunner.h"
#include "TestKernels.h"

#include "ptxforge/codegen/Texture.h"

#include <cstdint>

using namespace ptxforge;

namespace {

codegen::TextureDescriptor array2D(char *Data, uint64_t W, uint64_t H, codegen::TexelFormat F, unsigned Channels) {
  codegen::TextureDescriptor D;
  D.Data = Data, D.Width = W, D.Height = H, D.Dims = 2, D.Format = F, D.Channels = Channels;
  D.RowPitch = W * D.texelBytes(), D.SlicePitch = D.RowPitch * H;
  return D;
}

} // namespace

TEST_CASE("txq and suq answer depth, layers, layout and OpenCL channel constants") {
  auto M = testing::compileKernels("queries.ptx", testing::TextureQueriesPtx);
  alignas(16) uint8_t Storage[4096] = {};
  codegen::TextureDescriptor Tex = array2D(reinterpret_cast<char *>(Storage), 6, 5, codegen::TexelFormat::S16, 2);
  Tex.Layers = 3; // a layered 2D array: depth 1, three layers
  uint64_t T = codegen::registerTextureObject(Tex);
  codegen::TextureDescriptor Surf = array2D(reinterpret_cast<char *>(Storage), 4, 4, codegen::TexelFormat::U8, 4);
  Surf.IsSurface = true;
  uint64_t S = codegen::registerTextureObject(Surf);
  REQUIRE(T);
  REQUIRE(S);
  uint32_t Out[8] = {};
  testing::launchOverN(*M, {Out, reinterpret_cast<void *>(T), reinterpret_cast<void *>(S)}, 1);
  CHECK(Out[0] == 6);
  CHECK(Out[1] == 1);
  CHECK(Out[2] == 3);
  CHECK(Out[3] == 0x10D1); // CL_SNORM_INT16: 16-bit integers read as normalized floats
  CHECK(Out[4] == 0x10B2); // CL_RG
  CHECK(Out[5] == 0x10DA); // CL_UNSIGNED_INT8: surfaces read integers
  CHECK(Out[6] == 0);      // an array, not linear memory
  CHECK(Out[7] == 1);
  CHECK(codegen::releaseTextureObject(T));
  CHECK(codegen::releaseTextureObject(S));
  CHECK(!codegen::releaseTextureObject(S));
  CHECK(codegen::findTextureObject(T) == nullptr);
}

TEST_CASE("surface .clamp and .zero off the edge, sured.min on s32") {
  auto M = testing::compileKernels("boundaries.ptx", testing::SurfaceBoundariesPtx);
  // 8 x 8 u32 texels; x is in bytes, so 40 is texel 10, past the right edge.
  alignas(16) int32_t Texels[64];
  for (int I = 0; I < 64; ++I)
    Texels[I] = I;
  codegen::TextureDescriptor D = array2D(reinterpret_cast<char *>(Texels), 8, 8, codegen::TexelFormat::U32, 1);
  D.IsSurface = true;
  uint64_t S = codegen::registerTextureObject(D);
  uint32_t Out[2] = {1, 1};
  testing::launchOverN(*M, {Out, nullptr, reinterpret_cast<void *>(S)}, 1);
  CHECK(Out[0] == 7);      // clamped to texel (7, 0)
  CHECK(Out[1] == 0);      // zero mode reads zero
  CHECK(Texels[63] == 77); // the clamped store lands on (7, 7); the zero-mode one nowhere
  CHECK(Texels[0] == -5);  // min(0, -5)
  int32_t Sum = 0;
  for (int I = 0; I < 63; ++I)
    Sum += Texels[I];
  CHECK(Sum == 62 * 63 / 2 - 5);
  codegen::releaseTextureObject(S);
}

TEST_CASE("txq.level answers a mipmap level's extent, clamped to the levels") {
  auto M = testing::compileKernels("mipmap_queries.ptx", testing::MipmapQueriesPtx);
  alignas(16) uint8_t Storage[1024] = {};
  codegen::TextureDescriptor Tex = array2D(reinterpret_cast<char *>(Storage), 16, 8, codegen::TexelFormat::F32, 1);
  Tex.Levels = 4; // 16 x 8, 8 x 4, 4 x 2, 2 x 1
  for (unsigned L = 0; L < Tex.Levels; ++L)
    Tex.Level[L] = {Tex.Data, 16u >> L, 8u >> L, 1, (16u >> L) * 4, (16u >> L) * (8u >> L) * 4};
  uint64_t T = codegen::registerTextureObject(Tex);
  REQUIRE(T);
  uint32_t Out[4] = {};
  testing::launchOverN(*M, {Out, reinterpret_cast<void *>(T), nullptr}, 1);
  CHECK(Out[0] == 4);
  CHECK(Out[1] == 2);
  CHECK(Out[2] == 2); // level 9 is the last one, 3
  CHECK(Out[3] == 4);
  codegen::releaseTextureObject(T);
}
