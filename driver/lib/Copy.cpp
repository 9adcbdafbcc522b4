// Copies and fills. The device side of each is checked against the live ranges before anything is queued;
// the work itself runs under the fault guard, so a bad host pointer becomes an error instead of a crash
// (synchronous calls return it; queued work makes it the sticky error, as a faulting DMA would).
#include "ptxforge/driver/Copy.h"
#include "ptxforge/codegen/FaultGuard.h"
#include "ptxforge/driver/Capture.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Settings.h"

#include <cstring>

using namespace ptxforge::driver;

namespace {

uint64_t extent(uint64_t Pitch, uint64_t SliceRows, const CopyRegion &R) {
  if (R.Height == 1 && R.Depth == 1)
    return R.Width;
  uint64_t Rows = (R.Depth - 1) * SliceRows + (R.Height - 1);
  return Rows * Pitch + R.Width;
}

llvm::Error checkSide(uint64_t Address, Side S, uint64_t Bytes, const char *What) {
  if (!Address)
    return makeError(Status::InvalidValue, llvm::Twine("null ") + What + " pointer");
  if (S == Side::Host)
    return llvm::Error::success();
  auto A = DeviceMemory::get().find(Address);
  if (S == Side::Device && !A)
    return makeError(Status::InvalidValue, llvm::Twine(What) + " is not device memory");
  if (A && !A->contains(Address, Bytes))
    return makeError(Status::InvalidValue, llvm::Twine(What) + " range runs past its allocation");
  return llvm::Error::success();
}

void copyNow(const CopyRegion &R) {
  auto *Dst = reinterpret_cast<char *>(R.Dst);
  auto *Src = reinterpret_cast<const char *>(R.Src);
  bool Memcheck = processSettings().Memcheck; // initcheck: what a copy writes is initialized
  if (R.Height == 1 && R.Depth == 1) {
    std::memmove(Dst, Src, R.Width);
    if (Memcheck)
      DeviceMemory::get().markInitialized(R.Dst, R.Width);
    return;
  }
  for (uint64_t Z = 0; Z < R.Depth; ++Z)
    for (uint64_t Y = 0; Y < R.Height; ++Y) {
      uint64_t Row = (Z * R.DstHeight + Y) * R.DstPitch;
      std::memmove(Dst + Row, Src + (Z * R.SrcHeight + Y) * R.SrcPitch, R.Width);
      if (Memcheck)
        DeviceMemory::get().markInitialized(R.Dst + Row, R.Width);
    }
}

/// Runs Work on S (or the legacy stream): queued when Async, else waited for. Returns the synchronous result.
llvm::Error runOnStream(Context &Ctx, Stream *S, bool Async, llvm::unique_function<void()> Work, const char *What) {
  if (Async) {
    Ctx.submit(S, [Work = std::move(Work), What]() mutable {
      Driver &D = Driver::get();
      if (D.stickyError() != Status::Success)
        return;
      if (ptxforge::codegen::runWithFaultGuard([&] { Work(); }))
        D.setStickyError(Status::IllegalAddress, std::string("fault during an asynchronous ") + What);
    });
    return llvm::Error::success();
  }
  bool Faulted = false;
  Ctx.submitAndWait(S, [&] {
    if (Driver::get().stickyError() == Status::Success)
      Faulted = ptxforge::codegen::runWithFaultGuard([&] { Work(); }).has_value();
  });
  if (auto E = Driver::get().checkSticky())
    return E;
  if (Faulted)
    return makeError(Status::InvalidValue, llvm::Twine("a host pointer of the ") + What + " is not accessible");
  return llvm::Error::success();
}

} // namespace

llvm::Error ptxforge::driver::checkCopy(const CopyRegion &R) {
  if (R.Height > 1 || R.Depth > 1) {
    if (R.SrcPitch < R.Width || R.DstPitch < R.Width)
      return makeError(Status::InvalidValue, "a pitch is smaller than the copied width");
    if (R.Depth > 1 && (R.SrcHeight < R.Height || R.DstHeight < R.Height))
      return makeError(Status::InvalidValue, "a slice height is smaller than the copied height");
  }
  if (!R.Width || !R.Height || !R.Depth)
    return llvm::Error::success();
  if (auto E = checkSide(R.Src, R.SrcSide, extent(R.SrcPitch, R.SrcHeight, R), "source"))
    return E;
  return checkSide(R.Dst, R.DstSide, extent(R.DstPitch, R.DstHeight, R), "destination");
}

llvm::Error ptxforge::driver::copyMemory(Context &Ctx, Stream *S, bool Async, const CopyRegion &R) {
  if (auto E = Driver::get().checkSticky())
    return E;
  // A synchronous copy or fill is no "potentially unsafe" call (an H100 runs one during a global-mode capture):
  // on the legacy stream it is refused only where it would wait for a capturing blocking stream (_IMPLICIT).
  auto Target = captureTarget(Ctx, S);
  if (!Target)
    return Target.takeError();
  if (auto E = checkCopy(R))
    return E;
  if (*Target)
    return captureNode(*S, NodeType::Memcpy, [&](GraphNode &N) {
      N.Copy = R;
      return llvm::Error::success();
    });
  if (!R.Width || !R.Height || !R.Depth)
    return llvm::Error::success();
  return runOnStream(
      Ctx, S, Async, [R] { copyNow(R); }, "copy");
}

llvm::Error ptxforge::driver::checkFill(uint64_t Dst, uint64_t Pitch, unsigned ElementBytes, uint64_t Width,
                                        uint64_t Height) {
  if (ElementBytes != 1 && ElementBytes != 2 && ElementBytes != 4)
    return makeError(Status::InvalidValue, "a fill element is 1, 2 or 4 bytes");
  uint64_t RowBytes = Width * ElementBytes;
  if (Height > 1 && Pitch < RowBytes)
    return makeError(Status::InvalidValue, "the pitch is smaller than the row");
  if (Dst % ElementBytes || (Height > 1 && Pitch % ElementBytes))
    return makeError(Status::InvalidValue, "misaligned fill");
  if (!Width || !Height)
    return llvm::Error::success();
  return checkSide(Dst, Side::Device, (Height - 1) * Pitch + RowBytes, "destination");
}

llvm::Error ptxforge::driver::fillMemory(Context &Ctx, Stream *S, bool Async, uint64_t Dst, uint64_t Pitch,
                                         uint32_t Value, unsigned ElementBytes, uint64_t Width, uint64_t Height) {
  if (auto E = Driver::get().checkSticky())
    return E;
  // A synchronous copy or fill is no "potentially unsafe" call (an H100 runs one during a global-mode capture):
  // on the legacy stream it is refused only where it would wait for a capturing blocking stream (_IMPLICIT).
  auto Target = captureTarget(Ctx, S);
  if (!Target)
    return Target.takeError();
  if (auto E = checkFill(Dst, Pitch, ElementBytes, Width, Height))
    return E;
  uint64_t RowBytes = Width * ElementBytes;
  if (*Target)
    return captureNode(*S, NodeType::Memset, [&](GraphNode &N) {
      N.Memset = {Dst, Pitch, Value, ElementBytes, Width, Height};
      return llvm::Error::success();
    });
  if (!Width || !Height)
    return llvm::Error::success();
  return runOnStream(
      Ctx, S, Async,
      [=] {
        for (uint64_t Y = 0; Y < Height; ++Y) {
          char *Row = reinterpret_cast<char *>(Dst + Y * Pitch);
          if (ElementBytes == 1) {
            std::memset(Row, int(Value & 0xff), Width);
          } else if (ElementBytes == 2) {
            auto *P = reinterpret_cast<uint16_t *>(Row);
            for (uint64_t I = 0; I < Width; ++I)
              P[I] = uint16_t(Value);
          } else {
            auto *P = reinterpret_cast<uint32_t *>(Row);
            for (uint64_t I = 0; I < Width; ++I)
              P[I] = Value;
          }
          if (processSettings().Memcheck)
            DeviceMemory::get().markInitialized(Dst + Y * Pitch, RowBytes);
        }
      },
      "fill");
}
