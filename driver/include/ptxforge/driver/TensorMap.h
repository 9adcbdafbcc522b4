// Tensor maps (cuTensorMapEncodeTiled / Im2col / Im2colWide / ReplaceAddress): the arguments are checked as NVIDIA's
// driver checks them (its documented rules; anything else is CUDA_ERROR_INVALID_VALUE) and the 128-byte map is filled
// in ptxforge's layout (codegen/TensorMap.h), which the tensor-copy helpers of JIT'd code read.
#pragma once

#include "ptxforge/codegen/TensorMap.h"

#include <cstdint>

namespace ptxforge::driver {

/// cuTensorMapEncodeTiled's arguments, as the API takes them (enums as their integer values).
struct TiledTensorMapArgs {
  uint32_t DataType = 0, Rank = 0;
  const void *GlobalAddress = nullptr;
  const uint64_t *GlobalDim = nullptr, *GlobalStrides = nullptr; ///< Rank and Rank-1 entries
  const uint32_t *BoxDim = nullptr, *ElementStrides = nullptr;   ///< Rank entries each
  uint32_t Interleave = 0, Swizzle = 0, L2Promotion = 0, OobFill = 0;
};

/// cuTensorMapEncodeIm2col's arguments beyond the tiled ones (BoxDim unused).
struct Im2colTensorMapArgs {
  TiledTensorMapArgs Common;
  const int *PixelBoxLowerCorner = nullptr, *PixelBoxUpperCorner = nullptr; ///< Rank-2 entries each
  uint32_t ChannelsPerPixel = 0, PixelsPerColumn = 0;
};

/// cuTensorMapEncodeIm2colWide's arguments beyond the tiled ones (BoxDim unused).
struct Im2colWideTensorMapArgs {
  TiledTensorMapArgs Common;
  int PixelBoxLowerCornerWidth = 0, PixelBoxUpperCornerWidth = 0;
  uint32_t ChannelsPerPixel = 0, PixelsPerColumn = 0;
  uint32_t Mode = 0; ///< CUtensorMapIm2ColWideMode
};

/// Fills Map from A; false (Map untouched) where NVIDIA's driver answers CUDA_ERROR_INVALID_VALUE.
bool encodeTiledTensorMap(codegen::TensorMap *Map, const TiledTensorMapArgs &A);
bool encodeIm2colTensorMap(codegen::TensorMap *Map, const Im2colTensorMapArgs &A);
bool encodeIm2colWideTensorMap(codegen::TensorMap *Map, const Im2colWideTensorMapArgs &A);
/// cuTensorMapReplaceAddress: false for a map this driver did not encode or a misaligned address.
bool replaceTensorMapAddress(codegen::TensorMap *Map, const void *GlobalAddress);

} // namespace ptxforge::driver
