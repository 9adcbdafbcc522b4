// Copies and fills between host and device memory, synchronous or queued on a stream. Device-side ranges must
// lie inside one allocation (or module global, or registered host range); host pointers are the caller's.
#pragma once

#include "llvm/Support/Error.h"

#include <cstdint>

namespace ptxforge::driver {

class Context;
class Stream;

/// Which side of a copy is what: Unified means "look it up" (cuMemcpy, CU_MEMORYTYPE_UNIFIED).
enum class Side { Host, Device, Unified };

/// A strided copy: Depth slices of Height rows of Width bytes (1-D copies have Height = Depth = 1).
struct CopyRegion {
  uint64_t Dst = 0, Src = 0;
  Side DstSide = Side::Device, SrcSide = Side::Device;
  uint64_t DstPitch = 0, SrcPitch = 0;   ///< bytes between rows (ignored when Height == 1)
  uint64_t DstHeight = 0, SrcHeight = 0; ///< rows between slices (ignored when Depth == 1)
  uint64_t Width = 0, Height = 1, Depth = 1;
};

/// Copies Region. Async: queued on S (null: the legacy stream); otherwise done before returning, after the
/// legacy stream's earlier work.
[[nodiscard]] llvm::Error copyMemory(Context &Ctx, Stream *S, bool Async, const CopyRegion &Region);

/// The checks copyMemory makes before anything is queued (graph memcpy nodes make them when they are set).
[[nodiscard]] llvm::Error checkCopy(const CopyRegion &Region);
/// The checks fillMemory makes before anything is queued.
[[nodiscard]] llvm::Error checkFill(uint64_t Dst, uint64_t Pitch, unsigned ElementBytes, uint64_t Width,
                                    uint64_t Height);

/// Fills Height rows (Pitch bytes apart) of Width elements of ElementBytes (1, 2 or 4) with Value.
[[nodiscard]] llvm::Error fillMemory(Context &Ctx, Stream *S, bool Async, uint64_t Dst, uint64_t Pitch, uint32_t Value,
                                     unsigned ElementBytes, uint64_t Width, uint64_t Height);

} // namespace ptxforge::driver
