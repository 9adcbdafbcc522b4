// cuTensorMapEncodeTiled's argument checks (driver/lib/TensorMap.cpp) against what an H100's driver (CUDA 13.0)
// answered for the same arguments, one broken at a time from a valid 2D f16 map over 64 x 64 elements.
#include "ptxforge/driver/TensorMap.h"

#include <doctest/doctest.h>

#include <cstring>
#include <vector>

using namespace ptxforge;

namespace {

struct Probe {
  const char *Name;
  bool NvidiaAccepts;
  uint32_t DataType = 6, Rank = 2;
  uint64_t AddressOffset = 0;
  std::vector<uint64_t> Dims = {64, 64}, Strides = {128};
  std::vector<uint32_t> Box = {32, 8}, ElemStrides = {1, 1};
  uint32_t Interleave = 0, Swizzle = 0, L2 = 0, Oob = 0;
  uint64_t MapOffset = 0;
  bool NullAddress = false;
};

bool encode(const Probe &P, codegen::TensorMap *Map) {
  alignas(64) static char Global[1 << 16];
  driver::TiledTensorMapArgs A;
  A.DataType = P.DataType, A.Rank = P.Rank;
  A.GlobalAddress = P.NullAddress ? nullptr : Global + P.AddressOffset;
  A.GlobalDim = P.Dims.data(), A.GlobalStrides = P.Strides.data(), A.BoxDim = P.Box.data();
  A.ElementStrides = P.ElemStrides.data();
  A.Interleave = P.Interleave, A.Swizzle = P.Swizzle, A.L2Promotion = P.L2, A.OobFill = P.Oob;
  return driver::encodeTiledTensorMap(Map, A);
}

Probe rank3(const char *Name, bool Accepts, uint32_t Interleave, uint32_t Swizzle) {
  Probe P{Name, Accepts};
  P.Rank = 3, P.Dims = {64, 64, 2}, P.Strides = {128, 8192}, P.Box = {32, 8, 1}, P.ElemStrides = {1, 1, 1};
  P.Interleave = Interleave, P.Swizzle = Swizzle;
  return P;
}

} // namespace

TEST_CASE("cuTensorMapEncodeTiled accepts and rejects what NVIDIA's driver does") {
  std::vector<Probe> Probes = {{"valid", true},
                               {"map 32 bytes off 64", true},
                               {"address + 8", false},
                               {"address + 16", true},
                               {"null address", true}};
  Probes[1].MapOffset = 32;
  Probes[2].AddressOffset = 8;
  Probes[3].AddressOffset = 16;
  Probes[4].NullAddress = true;
  auto add = [&](const char *Name, bool Accepts, auto Change) {
    Probe P{Name, Accepts};
    Change(P);
    Probes.push_back(P);
  };
  add("stride 120", false, [](Probe &P) { P.Strides = {120}; });
  add("stride 2^40", false, [](Probe &P) { P.Strides = {1ull << 40}; });
  add("stride shorter than a row", true, [](Probe &P) { P.Strides = {64}; });
  add("box 257", false, [](Probe &P) { P.Box = {32, 257}; });
  add("box 0", false, [](Probe &P) { P.Box = {32, 0}; });
  add("inner box 8 bytes", false, [](Probe &P) { P.Box = {4, 8}; });
  add("inner box 60 bytes", false, [](Probe &P) { P.Box = {30, 8}, P.ElemStrides = {2, 1}; });
  add("element stride 9", false, [](Probe &P) { P.ElemStrides = {1, 9}; });
  add("element stride 0", false, [](Probe &P) { P.ElemStrides = {0, 1}; });
  add("rank 0", false, [](Probe &P) { P.Rank = 0; });
  add("rank 6", false, [](Probe &P) {
    P.Rank = 6, P.Dims = {64, 64, 1, 1, 1, 1}, P.Strides = {128, 8192, 8192, 8192, 8192};
    P.Box = {32, 8, 1, 1, 1, 1}, P.ElemStrides = {1, 1, 1, 1, 1, 1};
  });
  add("dimension 0", false, [](Probe &P) { P.Dims = {0, 64}; });
  add("dimension 2^32", true, [](Probe &P) { P.Dims = {1ull << 32, 64}, P.Strides = {1ull << 33}; });
  add("dimension 2^32 + 1", false, [](Probe &P) { P.Dims = {(1ull << 32) + 1, 64}, P.Strides = {1ull << 34}; });
  add("32B swizzle, 64-byte inner box", false, [](Probe &P) { P.Swizzle = 1; });
  add("64B swizzle, 64-byte inner box", true, [](Probe &P) { P.Swizzle = 2; });
  add("128B swizzle, 256-byte inner box", false, [](Probe &P) { P.Box = {128, 8}, P.Swizzle = 3; });
  add("32B interleave at rank 2", false, [](Probe &P) { P.Interleave = 2; });
  add("16B interleave at rank 2", false, [](Probe &P) { P.Interleave = 1; });
  Probes.push_back(rank3("32B interleave, 32B swizzle", true, 2, 1));
  Probes.push_back(rank3("32B interleave, 64B swizzle", true, 2, 2));
  Probes.push_back(rank3("16B interleave, 16-byte inner box", true, 1, 0));
  Probes.back().Box = {8, 8, 1}; // f16: 16 bytes
  // An H200's driver (13.0) refused an interleaved map whose inner box is 8 bytes (tma/interleave_*'s probe).
  Probes.push_back(rank3("16B interleave, 8-byte inner box", false, 1, 0));
  Probes.back().Box = {4, 8, 1};
  add("NaN fill on u16", false, [](Probe &P) { P.DataType = 1, P.Oob = 1; });
  add("NaN fill on f16", true, [](Probe &P) { P.Oob = 1; });
  add("data type 13", false, [](Probe &P) { P.DataType = 13; });
  add("L2 promotion 5", false, [](Probe &P) { P.L2 = 5; });
  add("swizzle 4", false, [](Probe &P) { P.Swizzle = 4; });
  add("fill 2", false, [](Probe &P) { P.Oob = 2; });
  alignas(64) char Storage[256];
  for (const Probe &P : Probes) {
    INFO(P.Name);
    auto *Map = reinterpret_cast<codegen::TensorMap *>(Storage + P.MapOffset);
    CHECK(encode(P, Map) == P.NvidiaAccepts);
  }
}

TEST_CASE("an encoded tiled map holds the arguments, and ReplaceAddress moves it") {
  alignas(64) codegen::TensorMap Map;
  Probe P{"3D", true};
  P.Rank = 3, P.Dims = {100, 40, 3}, P.Strides = {208, 208 * 40}, P.Box = {64, 16, 2}, P.ElemStrides = {1, 2, 1};
  P.Swizzle = 3;
  REQUIRE(encode(P, &Map));
  CHECK(Map.Rank == 3);
  CHECK(Map.GlobalDim[0] == 100);
  CHECK(Map.GlobalStride[1] == 208 * 40);
  CHECK(Map.BoxDim[0] == 64);
  CHECK(Map.ElementStride[1] == 2);
  CHECK(Map.Swizzle == 3);
  CHECK(Map.Mode == static_cast<uint8_t>(codegen::TensorMapMode::Tiled));
  alignas(16) static char Other[64];
  CHECK(driver::replaceTensorMapAddress(&Map, Other));
  CHECK(Map.GlobalAddress == reinterpret_cast<uintptr_t>(Other));
  CHECK_FALSE(driver::replaceTensorMapAddress(&Map, Other + 4));
  codegen::TensorMap Garbage;
  memset(&Garbage, 0, sizeof(Garbage));
  CHECK_FALSE(driver::replaceTensorMapAddress(&Garbage, Other));
}

TEST_CASE("cuTensorMapEncodeIm2col checks its pixel box and channels") {
  alignas(64) codegen::TensorMap Map;
  alignas(64) static char Global[1 << 16];
  uint64_t Dims[4] = {64, 16, 16, 2}, Strides[3] = {128, 2048, 32768};
  uint32_t ElemStrides[4] = {1, 1, 1, 1};
  int Lower[2] = {-1, -1}, Upper[2] = {1, 1};
  driver::Im2colTensorMapArgs A;
  A.Common.DataType = 6, A.Common.Rank = 4, A.Common.GlobalAddress = Global;
  A.Common.GlobalDim = Dims, A.Common.GlobalStrides = Strides, A.Common.ElementStrides = ElemStrides;
  A.PixelBoxLowerCorner = Lower, A.PixelBoxUpperCorner = Upper, A.ChannelsPerPixel = 64, A.PixelsPerColumn = 32;
  CHECK(driver::encodeIm2colTensorMap(&Map, A));
  CHECK(Map.Mode == static_cast<uint8_t>(codegen::TensorMapMode::Im2col));
  Lower[0] = -200; // 8 bits for a 4D tensor's corners
  CHECK_FALSE(driver::encodeIm2colTensorMap(&Map, A));
  Lower[0] = -1, A.ChannelsPerPixel = 4; // 8 bytes: not a multiple of 16
  CHECK_FALSE(driver::encodeIm2colTensorMap(&Map, A));
  A.ChannelsPerPixel = 64, A.Common.Rank = 2;
  CHECK_FALSE(driver::encodeIm2colTensorMap(&Map, A));
}

TEST_CASE("cuTensorMapEncodeIm2colWide checks its W corners, swizzle and mode") {
  alignas(64) codegen::TensorMap Map;
  alignas(64) static char Global[1 << 16];
  uint64_t Dims[4] = {32, 16, 16, 2}, Strides[3] = {64, 1024, 16384};
  uint32_t ElemStrides[4] = {1, 2, 1, 1};
  driver::Im2colWideTensorMapArgs A;
  A.Common.DataType = 6, A.Common.Rank = 4, A.Common.GlobalAddress = Global, A.Common.Swizzle = 2;
  A.Common.GlobalDim = Dims, A.Common.GlobalStrides = Strides, A.Common.ElementStrides = ElemStrides;
  A.PixelBoxLowerCornerWidth = -1, A.PixelBoxUpperCornerWidth = -1, A.ChannelsPerPixel = 32, A.PixelsPerColumn = 64;
  CHECK(driver::encodeIm2colWideTensorMap(&Map, A));
  CHECK(Map.Mode == static_cast<uint8_t>(codegen::TensorMapMode::Im2colWide));
  CHECK((Map.PixelBoxLower[0] == -1 && Map.BoxDim[1] == 64 && Map.WideMode == 0));
  A.Mode = 1, A.PixelsPerColumn = 5000; // W128: the pixels per column are ignored
  CHECK(driver::encodeIm2colWideTensorMap(&Map, A));
  CHECK((Map.BoxDim[1] == 128 && Map.WideMode == 1));
  A.Mode = 2;
  CHECK_FALSE(driver::encodeIm2colWideTensorMap(&Map, A));
  A.Mode = 0, A.PixelsPerColumn = 64, A.PixelBoxLowerCornerWidth = -40000; // 16 bits
  CHECK_FALSE(driver::encodeIm2colWideTensorMap(&Map, A));
  A.PixelBoxLowerCornerWidth = 20; // past W - 1 + upper corner: an empty box
  CHECK_FALSE(driver::encodeIm2colWideTensorMap(&Map, A));
  A.PixelBoxLowerCornerWidth = -1, A.Common.Swizzle = 0; // the wide modes need a 64- or 128-byte swizzle
  CHECK_FALSE(driver::encodeIm2colWideTensorMap(&Map, A));
  A.Common.Swizzle = 2, A.ChannelsPerPixel = 64; // 128 bytes: wider than the 64-byte swizzle
  CHECK_FALSE(driver::encodeIm2colWideTensorMap(&Map, A));
}
