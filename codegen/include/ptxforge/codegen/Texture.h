// The contract between the driver and the texture/surface helpers of JIT'd code (codegen/exec/TextureHelpers.cpp).
// A texture or surface object handle is an index into a process-wide table of descriptors: the driver fills a
// TextureDescriptor from the CUDA API's resource/texture descriptions and registers it; the `tex`, `tld4`,
// `txq`, `suld`, `sust`, `sured` and `suq` instructions pass their 64-bit handle operand to a helper, which looks
// the descriptor up. Codegen knows nothing of the CUDA API: only this layout.
#pragma once

#include <cstdint>

namespace ptxforge::codegen {

/// One channel's storage.
enum class TexelFormat : uint8_t { U8, U16, U32, S8, S16, S32, F16, F32 };

unsigned texelFormatBytes(TexelFormat F);

enum class TexAddressMode : uint8_t { Wrap, Clamp, Mirror, Border };
enum class TexFilterMode : uint8_t { Point, Linear };

/// What backs the texels: a CUDA array (1D/2D/3D, layered), linear memory (integer fetches only) or pitched
/// 2D memory.
enum class TexResource : uint8_t { Array, Linear, Pitch2D };

/// Mipmapped arrays: at most 1 + log2 of the largest extent CUDA allows (2^16 texels, hence 17 levels).
constexpr unsigned MaxMipmapLevels = 17;

/// Where one level of a mipmapped array lies (level 0 is the descriptor's own resource fields).
struct TextureLevel {
  char *Data = nullptr;
  uint64_t Width = 1, Height = 1, Depth = 1;
  uint64_t RowPitch = 0, SlicePitch = 0;
};

struct TextureDescriptor {
  // ---- the resource ----
  TexResource Resource = TexResource::Array;
  char *Data = nullptr;                      ///< texel (0,0,0) of layer 0
  uint64_t Width = 1, Height = 1, Depth = 1; ///< texels; 1 for absent dimensions
  uint64_t Layers = 0;                       ///< layered arrays: the layer count (0: not layered)
  uint64_t RowPitch = 0;                     ///< bytes from one row to the next
  uint64_t SlicePitch = 0;                   ///< bytes from one slice (or layer) to the next
  unsigned Dims = 1;                         ///< 1, 2 or 3 (a layered 2D array has Dims 2)
  TexelFormat Format = TexelFormat::F32;
  unsigned Channels = 1; ///< 1, 2 or 4
  // ---- the sampler (textures only) ----
  TexAddressMode Address[3] = {TexAddressMode::Clamp, TexAddressMode::Clamp, TexAddressMode::Clamp};
  TexFilterMode Filter = TexFilterMode::Point;
  bool NormalizedCoords = false;
  /// Integer formats: return the stored integers (CU_TRSF_READ_AS_INTEGER) instead of normalized floats.
  bool ReadAsInteger = false;
  float BorderColor[4] = {0, 0, 0, 0};
  bool IsSurface = false;
  // ---- mipmaps (a texture over a mipmapped array; a single level otherwise) ----
  unsigned Levels = 1;
  TextureLevel Level[MaxMipmapLevels]; ///< [0] repeats the resource fields above
  TexFilterMode MipmapFilter = TexFilterMode::Point;
  float MipmapLevelBias = 0, MinMipmapLevel = 0, MaxMipmapLevel = 0;

  unsigned texelBytes() const { return texelFormatBytes(Format) * Channels; }
};

/// Registers a copy of D; returns its handle (never 0), or 0 when the table is full.
uint64_t registerTextureObject(const TextureDescriptor &D);
/// Removes handle H; false when H names no live object.
bool releaseTextureObject(uint64_t H);
/// The descriptor of H, or null. Valid until H is released.
const TextureDescriptor *findTextureObject(uint64_t H);

} // namespace ptxforge::codegen
