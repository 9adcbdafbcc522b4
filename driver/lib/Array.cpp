// CUDA arrays (Array.h): storage, shape checks and the live-handle table.
#include "ptxforge/driver/Array.h"

#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Status.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>

using namespace ptxforge;
using namespace ptxforge::driver;

namespace {

std::mutex &tableLock() {
  static std::mutex M;
  return M;
}

std::set<const void *> &liveArrays() {
  static auto *S = new std::set<const void *>; // never destroyed: handles may be used during exit
  return *S;
}

/// Whether Shape's extents fit the device (the limits cuDeviceGetAttribute reports for sm_90-class devices).
bool withinLimits(const ArrayShape &S) {
  uint64_t W = S.Width, H = S.Height, D = S.Depth;
  if (S.Cubemap) // square faces, six per cubemap
    return W == H && W <= 32768 && D && D % 6 == 0 && (S.Layered ? D / 6 <= 2046 : D == 6);
  if (S.Layered)
    return H ? W <= 32768 && H <= 32768 && D <= 2048 : W <= 32768 && D <= 2048;
  if (D)
    return W <= 16384 && H <= 16384 && D <= 16384;
  if (H)
    return W <= 131072 && H <= 65536;
  return W <= (S.SurfaceLoadStore ? 32768u : 131072u);
}

} // namespace

llvm::Expected<Array *> Array::create(Context &Ctx, const ArrayShape &Shape) {
  if (Shape.Width == 0 || (Shape.Channels != 1 && Shape.Channels != 2 && Shape.Channels != 4))
    return makeError(Status::InvalidValue, "array width 0 or channel count not 1, 2 or 4");
  // A 3D array needs a height; a layered one needs at least one layer.
  if ((!Shape.Layered && Shape.Depth && !Shape.Height) || (Shape.Layered && !Shape.Depth) || !withinLimits(Shape))
    return makeError(Status::InvalidValue, "array extents out of range");
  Array Probe(Ctx, Shape, 0);
  uint64_t Bytes = Probe.rowBytes() * Probe.rows() * Probe.slices();
  auto Base = DeviceMemory::get().allocate(Bytes, MemoryKind::Device, &Ctx);
  if (!Base)
    return Base.takeError();
  Array *A = new Array(Ctx, Shape, *Base);
  std::lock_guard<std::mutex> G(tableLock());
  liveArrays().insert(A);
  return A;
}

Array *Array::lookup(const void *H) {
  std::lock_guard<std::mutex> G(tableLock());
  return liveArrays().count(H) ? const_cast<Array *>(static_cast<const Array *>(H)) : nullptr;
}

llvm::Error Array::destroy(const void *H) {
  Array *A;
  {
    std::lock_guard<std::mutex> G(tableLock());
    if (!liveArrays().count(H) || static_cast<const Array *>(H)->IsLevel)
      return makeError(Status::InvalidHandle, "not a live CUDA array (or a level of a mipmapped array)");
    liveArrays().erase(H);
    A = const_cast<Array *>(static_cast<const Array *>(H));
  }
  return release(A);
}

llvm::Error Array::release(Array *A) {
  A->Owner->waitIdle(); // kernels and copies queued earlier may still read it
  llvm::Error E = DeviceMemory::get().free(A->Base, {MemoryKind::Device});
  delete A;
  return E;
}

// ---- mipmapped arrays ----
namespace {
std::set<const void *> &liveMipmaps() {
  static auto *S = new std::set<const void *>; // never destroyed: handles may be used during exit
  return *S;
}

/// Extent E at level L: halved L times, at least 1; an absent dimension (0) stays absent.
uint64_t levelExtent(uint64_t E, unsigned L) { return E ? std::max<uint64_t>(1, E >> L) : 0; }
} // namespace

llvm::Expected<MipmappedArray *> MipmappedArray::create(Context &Ctx, const ArrayShape &Shape, unsigned Levels) {
  uint64_t Largest = std::max({Shape.Width, Shape.Height, Shape.hasLayers() ? 0 : Shape.Depth});
  unsigned MaxLevels = 1;
  while (MaxLevels < codegen::MaxMipmapLevels && (Largest >> MaxLevels))
    ++MaxLevels;
  Levels = std::clamp(Levels, 1u, MaxLevels);
  auto M = std::make_unique<MipmappedArray>();
  for (unsigned L = 0; L < Levels; ++L) {
    ArrayShape S = Shape;
    S.Width = levelExtent(Shape.Width, L), S.Height = levelExtent(Shape.Height, L);
    if (!Shape.hasLayers())
      S.Depth = levelExtent(Shape.Depth, L);
    auto A = Array::create(Ctx, S);
    if (!A) {
      for (Array *Made : M->Levels) {
        {
          std::lock_guard<std::mutex> G(tableLock());
          liveArrays().erase(Made);
        }
        llvm::consumeError(Array::release(Made));
      }
      return A.takeError();
    }
    (*A)->IsLevel = true;
    M->Levels.push_back(*A);
  }
  std::lock_guard<std::mutex> G(tableLock());
  liveMipmaps().insert(M.get());
  return M.release();
}

MipmappedArray *MipmappedArray::lookup(const void *H) {
  std::lock_guard<std::mutex> G(tableLock());
  return liveMipmaps().count(H) ? const_cast<MipmappedArray *>(static_cast<const MipmappedArray *>(H)) : nullptr;
}

llvm::Error MipmappedArray::destroy(const void *H) {
  MipmappedArray *M;
  {
    std::lock_guard<std::mutex> G(tableLock());
    if (!liveMipmaps().erase(H))
      return makeError(Status::InvalidHandle, "not a live CUDA mipmapped array");
    M = const_cast<MipmappedArray *>(static_cast<const MipmappedArray *>(H));
    for (Array *A : M->Levels)
      liveArrays().erase(A);
  }
  llvm::Error E = llvm::Error::success();
  for (Array *A : M->Levels)
    E = llvm::joinErrors(std::move(E), Array::release(A));
  delete M;
  return E;
}

codegen::TextureDescriptor MipmappedArray::resource() const {
  codegen::TextureDescriptor D = Levels[0]->resource();
  D.Levels = levels();
  for (unsigned L = 0; L < D.Levels; ++L) {
    codegen::TextureDescriptor Level = Levels[L]->resource();
    D.Level[L] = {Level.Data, Level.Width, Level.Height, Level.Depth, Level.RowPitch, Level.SlicePitch};
  }
  return D;
}

codegen::TextureDescriptor Array::resource() const {
  codegen::TextureDescriptor D;
  D.Resource = codegen::TexResource::Array;
  D.Data = reinterpret_cast<char *>(Base);
  D.Format = Shape.Format, D.Channels = Shape.Channels;
  D.Width = Shape.Width, D.Height = rows();
  D.Dims = Shape.Height ? (Shape.Depth && !Shape.hasLayers() ? 3 : 2) : 1;
  D.Depth = Shape.hasLayers() ? 1 : slices();
  D.Layers = Shape.hasLayers() ? slices() : 0;
  D.RowPitch = rowBytes(), D.SlicePitch = rowBytes() * rows();
  D.Level[0] = {D.Data, D.Width, D.Height, D.Depth, D.RowPitch, D.SlicePitch};
  return D;
}
