// cuTensorMapEncode*'s argument rules, from the CUDA driver API reference: rank 1..5
// (3..5 for im2col and for interleaved layouts); the global address 16-byte aligned (32 with 32-byte
// interleave); every global dimension in 1..2^32; every global stride a multiple of 16 (32) below 2^40; box
// dimensions in 1..256 with the inner one a multiple of 16 bytes (interleaved too: an H200's driver refused an
// 8-byte inner box with the 16-byte interleave, though the reference says it only of others); element strides in 1..8;
// a swizzle span at least the inner box dimension's bytes (non-interleaved); the NaN out-of-bound fill only for
// floating-point types. The tiled rules were checked against an H100's driver (13.0) with one argument broken at a
// time; it accepted a map address 32 bytes off a 64-byte boundary, a null global address and the 32-byte
// interleave with the 64-byte swizzle, so those pass here too (tests/unit/driver/TensorMapTest.cpp lists the
// probes). The im2col rules (corner ranges, channels, pixels per column) are the documentation's, unprobed, and so
// are the wide im2col map's (sm_100: no GPU here has one).
#include "ptxforge/driver/TensorMap.h"

#include <cstdint>
#include <cstring>

using namespace ptxforge;
using codegen::TensorMap;

namespace {

constexpr uint64_t MaxStride = 1ull << 40;

bool isFloatType(uint32_t T) {
  using namespace codegen;
  return T == TMF16 || T == TMF32 || T == TMF64 || T == TMBF16 || T == TMF32Ftz || T == TMTF32 || T == TMTF32Ftz;
}

unsigned swizzleSpan(uint32_t Swizzle) { return Swizzle == 0 ? 0 : 16u << Swizzle; }

/// The checks and fields tiled and im2col maps share; MinRank 3 for im2col.
bool encodeCommon(TensorMap &M, const driver::TiledTensorMapArgs &A, unsigned MinRank) {
  unsigned Elem = codegen::tensorMapElementBytes(A.DataType);
  if (!Elem || A.Interleave > 2 || A.Swizzle > 3 || A.L2Promotion > 4 || A.OobFill > 1)
    return false;
  if (A.Interleave != 0)
    MinRank = 3;
  if (A.Rank < MinRank || A.Rank > 5 || !A.GlobalDim || (A.Rank > 1 && !A.GlobalStrides) || !A.ElementStrides)
    return false;
  uint64_t Align = A.Interleave == 2 ? 32 : 16;
  if (reinterpret_cast<uintptr_t>(A.GlobalAddress) % Align) // a null address is accepted, as on the GPU
    return false;
  if (A.OobFill == 1 && !isFloatType(A.DataType))
    return false;
  memset(&M, 0, sizeof(M));
  M.GlobalAddress = reinterpret_cast<uintptr_t>(A.GlobalAddress);
  for (unsigned I = 0; I < A.Rank; ++I) {
    if (A.GlobalDim[I] == 0 || A.GlobalDim[I] > (1ull << 32) || A.ElementStrides[I] == 0 || A.ElementStrides[I] > 8)
      return false;
    M.GlobalDim[I] = static_cast<uint32_t>(A.GlobalDim[I] - 1) + 1; // 2^32 wraps to 0, read back as 2^32
    M.ElementStride[I] = static_cast<uint8_t>(A.ElementStrides[I]);
    if (I + 1 < A.Rank) {
      uint64_t S = A.GlobalStrides[I];
      if (S % Align || S >= MaxStride)
        return false;
      M.GlobalStride[I] = S;
    }
  }
  M.Rank = static_cast<uint8_t>(A.Rank);
  M.DataType = static_cast<uint8_t>(A.DataType);
  M.Interleave = static_cast<uint8_t>(A.Interleave);
  M.Swizzle = static_cast<uint8_t>(A.Swizzle);
  M.L2Promotion = static_cast<uint8_t>(A.L2Promotion);
  M.OobFill = static_cast<uint8_t>(A.OobFill);
  M.Magic = TensorMap::MagicValue;
  return true;
}

/// The column of an im2col map: Pixels pixels of Channels channels, a row of at most the swizzle span.
bool setColumn(TensorMap &M, const driver::TiledTensorMapArgs &A, uint32_t Channels, uint32_t Pixels) {
  unsigned Elem = codegen::tensorMapElementBytes(A.DataType);
  if (Channels == 0 || Channels > 256 || Pixels == 0 || Pixels > 1024)
    return false;
  uint64_t InnerBytes = uint64_t(Channels) * Elem;
  if (A.Interleave == 0 && (InnerBytes % 16 || (A.Swizzle && InnerBytes > swizzleSpan(A.Swizzle))))
    return false;
  M.BoxDim[0] = static_cast<uint16_t>(Channels);
  M.BoxDim[1] = static_cast<uint16_t>(Pixels);
  return true;
}

/// NVIDIA's driver writes a map at any address (an H100's driver accepted one 32 bytes off a 64-byte boundary),
/// though a kernel then needs it 64-byte aligned.
bool mapAligned(const TensorMap *Map) { return Map != nullptr; }

} // namespace

bool driver::encodeTiledTensorMap(TensorMap *Map, const TiledTensorMapArgs &A) {
  TensorMap M;
  if (!mapAligned(Map) || !A.BoxDim || !encodeCommon(M, A, 1))
    return false;
  unsigned Elem = codegen::tensorMapElementBytes(A.DataType);
  for (unsigned I = 0; I < A.Rank; ++I) {
    if (A.BoxDim[I] == 0 || A.BoxDim[I] > 256)
      return false;
    M.BoxDim[I] = static_cast<uint16_t>(A.BoxDim[I]);
  }
  uint64_t InnerBytes = uint64_t(A.BoxDim[0]) * Elem;
  if (InnerBytes % 16 || (A.Interleave == 0 && A.Swizzle && InnerBytes > swizzleSpan(A.Swizzle)))
    return false;
  M.Mode = static_cast<uint8_t>(codegen::TensorMapMode::Tiled);
  memcpy(Map, &M, sizeof(M));
  return true;
}

bool driver::encodeIm2colTensorMap(TensorMap *Map, const Im2colTensorMapArgs &A) {
  TensorMap M;
  if (!mapAligned(Map) || !encodeCommon(M, A.Common, 3) || !A.PixelBoxLowerCorner || !A.PixelBoxUpperCorner)
    return false;
  unsigned Spatial = A.Common.Rank - 2;
  // The corners' range shrinks with the spatial dimensions: 16 bits for 3D tensors, 8 for 4D, 5 for 5D.
  int Bits = Spatial == 1 ? 16 : Spatial == 2 ? 8 : 5, Lo = -(1 << (Bits - 1)), Hi = (1 << (Bits - 1)) - 1;
  for (unsigned I = 0; I < Spatial; ++I) {
    int L = A.PixelBoxLowerCorner[I], U = A.PixelBoxUpperCorner[I];
    if (L < Lo || L > Hi || U < Lo || U > Hi)
      return false;
    M.PixelBoxLower[I] = static_cast<int16_t>(L);
    M.PixelBoxUpper[I] = static_cast<int16_t>(U);
  }
  if (!setColumn(M, A.Common, A.ChannelsPerPixel, A.PixelsPerColumn))
    return false;
  M.Mode = static_cast<uint8_t>(codegen::TensorMapMode::Im2col);
  memcpy(Map, &M, sizeof(M));
  return true;
}

bool driver::encodeIm2colWideTensorMap(TensorMap *Map, const Im2colWideTensorMapArgs &A) {
  TensorMap M;
  // The wide modes take the 64- and 128-byte swizzles only (128B_ATOM_32B, also allowed, is no swizzle here).
  if (!mapAligned(Map) || !encodeCommon(M, A.Common, 3) || A.Mode > 1 || A.Common.Swizzle < 2)
    return false;
  int L = A.PixelBoxLowerCornerWidth, U = A.PixelBoxUpperCornerWidth;
  if (L < INT16_MIN || L > INT16_MAX || U < INT16_MIN || U > INT16_MAX ||
      int64_t(A.Common.GlobalDim[1]) - 1 + U < L) // the box must hold a position
    return false;
  // W128 ignores the pixels per column: it always loads 128.
  if (!setColumn(M, A.Common, A.ChannelsPerPixel, A.Mode == 1 ? 128 : A.PixelsPerColumn))
    return false;
  M.PixelBoxLower[0] = static_cast<int16_t>(L);
  M.PixelBoxUpper[0] = static_cast<int16_t>(U);
  M.Mode = static_cast<uint8_t>(codegen::TensorMapMode::Im2colWide);
  M.WideMode = static_cast<uint8_t>(A.Mode);
  memcpy(Map, &M, sizeof(M));
  return true;
}

bool driver::replaceTensorMapAddress(TensorMap *Map, const void *GlobalAddress) {
  TensorMap M;
  if (!mapAligned(Map))
    return false;
  memcpy(&M, Map, sizeof(M));
  if (M.Magic != TensorMap::MagicValue)
    return false;
  uint64_t Align = M.Interleave == 2 ? 32 : 16;
  if (reinterpret_cast<uintptr_t>(GlobalAddress) % Align)
    return false;
  uint64_t A = reinterpret_cast<uintptr_t>(GlobalAddress);
  memcpy(reinterpret_cast<char *>(Map) + offsetof(TensorMap, GlobalAddress), &A, 8);
  return true;
}
