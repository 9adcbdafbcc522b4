// The texture/surface queries and the surface boundary modes the GPU recordings do not cover
// (tests/conformance/texture has width/height): txq/suq of depth, array size, memory layout and the channel
// queries, which answer with the OpenCL constants the PTX ISA names; suld/sust with .clamp and .zero off the
// edge; sured.min on s32. Descriptors are registered directly, as the driver registers them.
#include "KernelRunner.h"

#include "ptxforge/codegen/Texture.h"

#include <cstdint>

using namespace ptxforge;

namespace {

const char *Queries = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p_out, .param .u64 p_tex, .param .u64 p_surf, .param .u32 p_n)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_out];
  ld.param.u64 %rd2, [p_tex];
  ld.param.u64 %rd3, [p_surf];
  txq.width.b32 %r1, [%rd2];
  txq.depth.b32 %r2, [%rd2];
  txq.array_size.b32 %r3, [%rd2];
  txq.channel_data_type.b32 %r4, [%rd2];
  txq.channel_order.b32 %r5, [%rd2];
  suq.channel_data_type.b32 %r6, [%rd3];
  suq.memory_layout.b32 %r7, [%rd3];
  suq.depth.b32 %r8, [%rd3];
  st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
  st.global.v4.u32 [%rd1+16], {%r5, %r6, %r7, %r8};
  ret;
}
)";

const char *Boundaries = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p_out, .param .u64 p_surf, .param .u64 p_unused, .param .u32 p_n)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_out];
  ld.param.u64 %rd2, [p_surf];
  mov.u32 %r1, 40;
  mov.u32 %r2, -1;
  mov.u32 %r3, 9;
  suld.b.2d.b32.clamp {%r4}, [%rd2, {%r1, %r2}];
  suld.b.2d.b32.zero {%r5}, [%rd2, {%r1, %r2}];
  mov.u32 %r6, 77;
  sust.b.2d.b32.zero [%rd2, {%r1, %r3}], {%r6};
  sust.b.2d.b32.clamp [%rd2, {%r1, %r3}], {%r6};
  mov.u32 %r7, 0;
  mov.u32 %r8, -5;
  sured.b.min.2d.s32.trap [%rd2, {%r7, %r7}], %r8;
  st.global.v2.u32 [%rd1], {%r4, %r5};
  ret;
}
)";

codegen::TextureDescriptor array2D(char *Data, uint64_t W, uint64_t H, codegen::TexelFormat F, unsigned Channels) {
  codegen::TextureDescriptor D;
  D.Data = Data, D.Width = W, D.Height = H, D.Dims = 2, D.Format = F, D.Channels = Channels;
  D.RowPitch = W * D.texelBytes(), D.SlicePitch = D.RowPitch * H;
  return D;
}

} // namespace

TEST_CASE("txq and suq answer depth, layers, layout and OpenCL channel constants") {
  auto M = testing::compileKernels("queries.ptx", Queries);
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
  auto M = testing::compileKernels("boundaries.ptx", Boundaries);
  // 8 x 8 u32 texels; x is in bytes, so 40 is texel 10, past the right edge.
  alignas(16) int32_t Texels[64];
  for (int I = 0; I < 64; ++I)
    Texels[I] = I;
  codegen::TextureDescriptor D = array2D(reinterpret_cast<char *>(Texels), 8, 8, codegen::TexelFormat::U32, 1);
  D.IsSurface = true;
  uint64_t S = codegen::registerTextureObject(D);
  uint32_t Out[2] = {1, 1};
  testing::launchOverN(*M, {Out, reinterpret_cast<void *>(S), nullptr}, 1);
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
