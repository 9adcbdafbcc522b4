// CUDA arrays: texel storage in device memory (one allocation, rows packed at the texel size), with the shape
// and format the texture and surface objects over it read. Handles (CUarray) are Array pointers, looked up in
// a table of live arrays, so a destroyed or made-up handle is refused instead of followed.
#pragma once

#include "ptxforge/codegen/Texture.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace ptxforge::driver {

class Context;

struct ArrayShape {
  codegen::TexelFormat Format = codegen::TexelFormat::F32;
  unsigned Channels = 1;
  uint64_t Width = 0, Height = 0, Depth = 0; ///< as CUDA gives them: 0 for absent dimensions
  bool Layered = false, SurfaceLoadStore = false, TextureGather = false;
  /// Six square faces per cubemap, stored as layers (Depth is 6, or 6 x the cubemaps of a layered one).
  bool Cubemap = false;
  /// Whether Depth counts layers (layered arrays and cubemaps) rather than slices.
  bool hasLayers() const { return Layered || Cubemap; }
};

class Array {
public:
  /// Checks Shape against the device's limits (InvalidValue) and allocates zeroed storage in Ctx.
  [[nodiscard]] static llvm::Expected<Array *> create(Context &Ctx, const ArrayShape &Shape);
  /// The live array whose handle is H, or null.
  static Array *lookup(const void *H);
  /// Frees the storage (after the context's queued work) and the handle; InvalidHandle for no live array.
  [[nodiscard]] static llvm::Error destroy(const void *H);

  const ArrayShape &shape() const { return Shape; }
  uint64_t base() const { return Base; }
  uint64_t rowBytes() const { return Shape.Width * codegen::texelFormatBytes(Shape.Format) * Shape.Channels; }
  uint64_t rows() const { return Shape.Height ? Shape.Height : 1; }
  /// Slices of a 3D array, or layers of a layered one.
  uint64_t slices() const { return Shape.Depth ? Shape.Depth : 1; }
  /// The resource part of a texture or surface descriptor over this array (sampler fields left default).
  codegen::TextureDescriptor resource() const;
  Context &owner() const { return *Owner; }

private:
  friend class MipmappedArray;
  Array(Context &C, const ArrayShape &S, uint64_t B) : Owner(&C), Shape(S), Base(B) {}
  /// Frees A's storage and the object (its handle already gone from the table).
  static llvm::Error release(Array *A);
  Context *Owner;
  ArrayShape Shape;
  uint64_t Base;
  bool IsLevel = false; ///< a level of a mipmapped array: destroyed with it only
};

/// A mipmapped array (cuMipmappedArrayCreate): one Array per level, each level half the previous one along every
/// dimension but the layers (at least 1 texel). The levels are arrays in their own right (copies, surfaces,
/// cuMipmappedArrayGetLevel), destroyed with the mipmapped array only.
class MipmappedArray {
public:
  /// Levels is clamped to 1 .. 1 + log2 of the largest extent, as NVIDIA's driver takes any count.
  [[nodiscard]] static llvm::Expected<MipmappedArray *> create(Context &Ctx, const ArrayShape &Shape, unsigned Levels);
  static MipmappedArray *lookup(const void *H);
  [[nodiscard]] static llvm::Error destroy(const void *H);

  unsigned levels() const { return static_cast<unsigned>(Levels.size()); }
  Array *level(unsigned L) const { return L < Levels.size() ? Levels[L] : nullptr; }
  /// A texture descriptor's resource part over every level.
  codegen::TextureDescriptor resource() const;

private:
  std::vector<Array *> Levels;
};

} // namespace ptxforge::driver
