// The contract between the driver and the tensor-copy helpers of JIT'd code (codegen/exec/TensorMapHelpers.cpp):
// the layout of the opaque 128-byte CUtensorMap. cuTensorMapEncodeTiled/Im2col (driver/lib/TensorMap.cpp) fill
// it on the host; `cp.async.bulk.tensor`, `cp.reduce.async.bulk.tensor` and `tensormap.replace` read and write
// it in device memory or in a kernel parameter. NVIDIA's own layout is undocumented; a map encoded by one
// driver is meaningless to the other, which is fine since programs only hand maps around opaquely.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ptxforge::codegen {

/// CUtensorMapDataType values (cuda.h), the element types a map can describe.
enum TensorMapDataType : uint8_t {
  TMU8,
  TMU16,
  TMU32,
  TMS32,
  TMU64,
  TMS64,
  TMF16,
  TMF32,
  TMF64,
  TMBF16,
  TMF32Ftz,
  TMTF32,
  TMTF32Ftz,
  TMNumDataTypes
};

/// Bytes of one element of T (0 for an invalid type).
inline unsigned tensorMapElementBytes(uint32_t T) {
  static constexpr uint8_t Bytes[TMNumDataTypes] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  return T < TMNumDataTypes ? Bytes[T] : 0;
}

/// Im2colWide: cuTensorMapEncodeIm2colWide's map, read by the .im2col::w and .im2col::w::128 loads.
enum class TensorMapMode : uint8_t { Tiled, Im2col, Im2colWide };

/// The 128-byte map (64-byte aligned, as CUtensorMap). Dimension 0 is the innermost (contiguous) one.
struct TensorMap {
  static constexpr uint32_t MagicValue = 0x544d4150; ///< "PAMT": a map this driver encoded
  uint64_t GlobalAddress;
  uint32_t GlobalDim[5];
  uint32_t Reserved0;
  uint64_t GlobalStride[4]; ///< bytes from one index of dimension i+1 to the next (dimension 0: the element size)
  uint16_t BoxDim[5];       ///< tiled: the box; im2col (wide too): [0] channels per pixel, [1] pixels per column
  uint8_t ElementStride[5]; ///< 1..8
  uint8_t Rank;             ///< 1..5
  uint8_t DataType;         ///< TensorMapDataType
  uint8_t Interleave;       ///< CUtensorMapInterleave: 0 none, 1 16B, 2 32B
  uint8_t Swizzle;          ///< CUtensorMapSwizzle: 0 none, 1 32B, 2 64B, 3 128B
  uint8_t L2Promotion;
  uint8_t OobFill;  ///< CUtensorMapFloatOOBfill: 0 zeros, 1 NaN (a float map's out-of-bound elements)
  uint8_t Mode;     ///< TensorMapMode
  uint8_t WideMode; ///< Im2colWide: CUtensorMapIm2ColWideMode (0 W, 1 W128)
  uint8_t Reserved1;
  int16_t PixelBoxLower[3]; ///< im2col: the bounding box's corners, dimensions 1..rank-2 (wide: [0], W)
  int16_t PixelBoxUpper[3];
  uint8_t Reserved2[20];
  uint32_t Magic;
  uint32_t Reserved3;
};
static_assert(sizeof(TensorMap) == 128, "a CUtensorMap is 128 bytes");
static_assert(offsetof(TensorMap, Magic) == 120, "layout");

/// Where a swizzle of SpanBytes (32, 64 or 128; 0 for none) moves the shared-memory address Offset: the 16-byte
/// chunk index within the span (address bits 4..) is XOR-ed with the 128-byte row index (bits 7..) modulo the
/// span's chunk count, as the GPU does for tensor copies and wgmma descriptors alike (tests/conformance/cases
/// tma/ and wgmma/). It is its own inverse.
inline uint32_t swizzleSharedOffset(uint32_t Offset, unsigned SpanBytes) {
  if (SpanBytes < 32)
    return Offset;
  uint32_t Mask = SpanBytes / 16 - 1;
  return Offset ^ (((Offset >> 7) & Mask) << 4);
}

} // namespace ptxforge::codegen
