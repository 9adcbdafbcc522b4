// Zstandard and LZ4 (de)compression of entry payloads, with the output bounded by the declared size and by
// a hard limit, so corrupt or hostile payloads end in an Error.
#include "ptxforge/fatbin/Compression.h"
#include "Support.h"

#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <memory>

using namespace llvm;

namespace ptxforge::fatbin {
using detail::hex;
using detail::makeError;

namespace {
struct DStreamDeleter {
  void operator()(ZSTD_DStream *S) const { ZSTD_freeDStream(S); }
};
} // namespace

/// Streams the frame(s) into a buffer that grows with the output, stopping one byte past DeclaredSize.
static Expected<std::vector<uint8_t>> decompressZstd(ArrayRef<uint8_t> Data, uint64_t DeclaredSize) {
  unsigned long long FrameSize = ZSTD_getFrameContentSize(Data.data(), Data.size());
  if (FrameSize == ZSTD_CONTENTSIZE_ERROR)
    return makeError("payload is not a zstd frame");
  if (FrameSize != ZSTD_CONTENTSIZE_UNKNOWN && FrameSize != DeclaredSize)
    return makeError("zstd frame declares " + Twine(FrameSize) + " bytes but the entry header declares " +
                     Twine(DeclaredSize));

  std::unique_ptr<ZSTD_DStream, DStreamDeleter> Stream(ZSTD_createDStream());
  if (!Stream)
    return makeError("out of memory creating a zstd stream");
  // Start small and grow with the real output, one byte past DeclaredSize at most to detect overruns.
  std::vector<uint8_t> Out(std::min<uint64_t>(DeclaredSize + 1, 64 * 1024));
  ZSTD_inBuffer In{Data.data(), Data.size(), 0};
  ZSTD_outBuffer OutBuf{Out.data(), Out.size(), 0};
  for (;;) {
    if (OutBuf.pos == OutBuf.size) {
      if (Out.size() > DeclaredSize)
        return makeError("zstd payload expands beyond its declared " + Twine(DeclaredSize) + " bytes");
      Out.resize(std::min<uint64_t>(DeclaredSize + 1, uint64_t(Out.size()) * 2));
      OutBuf.dst = Out.data();
      OutBuf.size = Out.size();
    }
    size_t InBefore = In.pos, OutBefore = OutBuf.pos;
    size_t Ret = ZSTD_decompressStream(Stream.get(), &OutBuf, &In);
    if (ZSTD_isError(Ret))
      return makeError(Twine("corrupt zstd payload: ") + ZSTD_getErrorName(Ret));
    if (Ret == 0) {
      // A frame ended: what follows is NVIDIA's zero padding to 8 bytes, or another frame.
      if (std::all_of(Data.begin() + In.pos, Data.end(), [](uint8_t B) { return B == 0; }))
        break;
      continue;
    }
    // With room left in the output, the decoder has used all it could: it wants input that is not there.
    if (In.pos == In.size && OutBuf.pos < OutBuf.size)
      return makeError("truncated zstd payload");
    if (In.pos == InBefore && OutBuf.pos == OutBefore && OutBuf.pos < OutBuf.size)
      return makeError("zstd payload makes no progress");
  }
  if (OutBuf.pos != DeclaredSize)
    return makeError("zstd payload expands to " + Twine(uint64_t(OutBuf.pos)) +
                     " bytes but the entry header declares " + Twine(DeclaredSize));
  Out.resize(OutBuf.pos);
  return Out;
}

static Expected<std::vector<uint8_t>> decompressLz4(ArrayRef<uint8_t> Data, uint64_t DeclaredSize) {
  if (Data.size() > uint64_t(INT32_MAX) || DeclaredSize > uint64_t(INT32_MAX))
    return makeError("LZ4 payload too large");
  // One LZ4 block expands at most ~255 times, so allocate no more than the input can possibly produce.
  uint64_t Bound = uint64_t(Data.size()) * 255 + 16;
  std::vector<uint8_t> Out(std::min(DeclaredSize, Bound));
  int N = LZ4_decompress_safe(reinterpret_cast<const char *>(Data.data()), reinterpret_cast<char *>(Out.data()),
                              static_cast<int>(Data.size()), static_cast<int>(Out.size()));
  if (N < 0)
    return makeError("corrupt LZ4 payload (or it expands beyond its declared " + Twine(DeclaredSize) + " bytes)");
  if (uint64_t(N) != DeclaredSize)
    return makeError("LZ4 payload expands to " + Twine(N) + " bytes but the entry header declares " +
                     Twine(DeclaredSize));
  return Out;
}

Expected<std::vector<uint8_t>> decompress(Compression Kind, ArrayRef<uint8_t> Data, uint64_t DeclaredSize,
                                          uint64_t Limit) {
  if (DeclaredSize > Limit)
    return makeError("declared uncompressed size " + Twine(DeclaredSize) + " exceeds the limit of " + Twine(Limit) +
                     " bytes");
  switch (Kind) {
  case Compression::None:
    return std::vector<uint8_t>(Data.begin(), Data.end());
  case Compression::Zstd:
    return decompressZstd(Data, DeclaredSize);
  case Compression::Lz4:
    return decompressLz4(Data, DeclaredSize);
  }
  return makeError("unknown compression");
}

Expected<std::vector<uint8_t>> compress(Compression Kind, ArrayRef<uint8_t> Data, int Level) {
  switch (Kind) {
  case Compression::None:
    return makeError("compress() needs a compression kind");
  case Compression::Zstd: {
    std::vector<uint8_t> Out(ZSTD_compressBound(Data.size()));
    size_t N =
        ZSTD_compress(Out.data(), Out.size(), Data.data(), Data.size(), Level == 0 ? ZSTD_CLEVEL_DEFAULT : Level);
    if (ZSTD_isError(N))
      return makeError(Twine("zstd compression failed: ") + ZSTD_getErrorName(N));
    Out.resize(N);
    return Out;
  }
  case Compression::Lz4: {
    if (Data.size() > uint64_t(LZ4_MAX_INPUT_SIZE))
      return makeError("input too large for one LZ4 block");
    std::vector<uint8_t> Out(LZ4_compressBound(static_cast<int>(Data.size())));
    int N = LZ4_compress_default(reinterpret_cast<const char *>(Data.data()), reinterpret_cast<char *>(Out.data()),
                                 static_cast<int>(Data.size()), static_cast<int>(Out.size()));
    if (N <= 0 && !Data.empty())
      return makeError("LZ4 compression failed");
    Out.resize(N < 0 ? 0 : N);
    return Out;
  }
  }
  return makeError("unknown compression");
}

} // namespace ptxforge::fatbin
