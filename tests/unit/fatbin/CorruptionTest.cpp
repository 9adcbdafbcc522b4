// Hostile input: every sample truncated at many offsets, header bytes flipped, random mutations, sizes
// and offsets that lie, decompression bombs, and a corrupted ELF wrapper. Each must end in an Error (or a
// consistent result), never a crash or an unbounded allocation.
#include "FatbinTestSupport.h"

#include "ptxforge/fatbin/Compression.h"
#include "ptxforge/fatbin/Listing.h"
#include "ptxforge/fatbin/MemoryImage.h"
#include "ptxforge/fatbin/Reader.h"
#include "ptxforge/fatbin/Selection.h"

#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/raw_ostream.h"

#include <random>
#include <zstd.h>

using namespace ptxforge::fatbin;
using namespace ptxforge::fatbin::test;
namespace endian = llvm::support::endian;

namespace {

/// Reads Bytes the way a loader would, touching everything a successful read exposes. Returns whether the
/// read succeeded; errors are expected and dropped.
bool exercise(const std::vector<uint8_t> &Bytes) {
  // A fresh allocation of exactly Bytes.size(), so a read past the end is a real overrun.
  auto Buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char *>(Bytes.data()), Bytes.size()), "mutated");
  auto File = FatbinaryFile::fromBuffer(std::move(Buffer));
  if (!File) {
    CHECK(!llvm::toString(File.takeError()).empty());
    return false;
  }
  for (const Entry *E : File->fatbinary().entries()) {
    auto Contents = E->contents();
    if (!Contents)
      llvm::consumeError(Contents.takeError());
    else if (E->isCompressed())
      CHECK(Contents->size() == E->Header.UncompressedSize);
  }
  SelectionRequest R;
  R.ComputeCapability = 90;
  for (const Container &C : File->fatbinary().Containers)
    (void)selectEntry(C.Entries, R);
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  printHeaders(OS, File->fatbinary());
  printListing(OS, OS, File->fatbinary(), "mutated", {true, true, true});
  return true;
}

std::vector<std::string> allSamples() {
  std::vector<std::string> Names = fatbinSamples();
  Names.push_back(ExeSample);
  return Names;
}

/// The offset of the first entry header of the first container of a raw sample.
constexpr size_t FirstEntry = 16;

std::string parseError(const std::vector<uint8_t> &Bytes) { return errorOf(parseFatbinary(Bytes)); }

} // namespace

TEST_CASE("every sample truncated at many offsets gives an error") {
  for (const std::string &Name : allSamples()) {
    CAPTURE(Name);
    const std::vector<uint8_t> Whole = readBytes(samplePath(Name));
    REQUIRE(exercise(Whole));
    size_t Step = Whole.size() > 12000 ? 7 : 1;
    for (size_t Len = 0; Len < Whole.size(); Len += Step) {
      CAPTURE(Len);
      std::vector<uint8_t> Cut(Whole.begin(), Whole.begin() + Len);
      bool Ok = exercise(Cut);
      // A raw sample only parses when the cut falls exactly after a container (fb_from_exe.fatbin's first).
      if (Ok && Name != ExeSample)
        CHECK((Name == "fb_from_exe.fatbin" && Len == 3152));
    }
  }
}

TEST_CASE("flipping any header byte never crashes") {
  for (const std::string &Name : fatbinSamples()) {
    CAPTURE(Name);
    const std::vector<uint8_t> Whole = readBytes(samplePath(Name));
    Fatbinary F = take(parseFatbinary(Whole));
    std::vector<size_t> HeaderBytes;
    for (const Container &C : F.Containers) {
      for (size_t I = 0; I < 16; ++I)
        HeaderBytes.push_back(C.Offset + I);
      for (const Entry &E : C.Entries)
        for (size_t I = 0; I < E.RawHeader.size(); ++I)
          HeaderBytes.push_back(E.Offset + I);
    }
    for (size_t Pos : HeaderBytes) {
      for (uint8_t Value : {uint8_t(0x00), uint8_t(0xff), uint8_t(Whole[Pos] ^ 0x80), uint8_t(Whole[Pos] + 1)}) {
        std::vector<uint8_t> Mutated = Whole;
        Mutated[Pos] = Value;
        exercise(Mutated);
      }
    }
  }
}

TEST_CASE("random mutations anywhere never crash") {
  std::mt19937 Rng(12345);
  for (const std::string &Name : allSamples()) {
    CAPTURE(Name);
    const std::vector<uint8_t> Whole = readBytes(samplePath(Name));
    for (int Round = 0; Round < 300; ++Round) {
      std::vector<uint8_t> Mutated = Whole;
      int Flips = 1 + int(Rng() % 8);
      for (int I = 0; I < Flips; ++I)
        Mutated[Rng() % Mutated.size()] = uint8_t(Rng());
      exercise(Mutated);
    }
  }
}

TEST_CASE("lying container and entry fields are reported") {
  const std::vector<uint8_t> Whole = readBytes(samplePath("fb_sel_e2_cp90a.fatbin")); // one zstd PTX entry
  auto With = [&](size_t Offset, auto Write) {
    std::vector<uint8_t> Copy = Whole;
    Write(Copy.data() + Offset);
    return Copy;
  };
  auto U16 = [](uint16_t V) { return [V](uint8_t *P) { endian::write16le(P, V); }; };
  auto U32 = [](uint32_t V) { return [V](uint8_t *P) { endian::write32le(P, V); }; };
  auto U64 = [](uint64_t V) { return [V](uint8_t *P) { endian::write64le(P, V); }; };
  auto Has = [](const std::string &Msg, const char *Part) {
    CAPTURE(Msg);
    CHECK(Msg.find(Part) != std::string::npos);
  };

  Has(parseError(With(0, U32(0x12345678))), "bad container magic");
  Has(parseError(With(4, U16(2))), "unsupported container version 2");
  Has(parseError(With(6, U16(8))), "container header size 8 is below");
  Has(parseError(With(6, U16(0xffff))), "runs past the input");
  Has(parseError(With(8, U64(~uint64_t(0)))), "payload bytes but only");
  Has(parseError(With(8, U64(8))), "truncated header");
  for (uint32_t Small : {0u, 8u, 63u})
    Has(parseError(With(FirstEntry + 4, U32(Small))), "below the minimum of 64");
  Has(parseError(With(FirstEntry + 4, U32(0x7fffffff))), "runs past the container");
  Has(parseError(With(FirstEntry + 8, U64(uint64_t(1) << 62))), "payload size");
  Has(parseError(With(FirstEntry + 0x10, U32(100000))), "exceeds the payload size");
  Has(parseError(With(FirstEntry + 0x14, U32(0x4c))), "options descriptor");
  Has(parseError(With(FirstEntry + 0x40, U32(0x1000))), "options (offset");
  Has(parseError(With(FirstEntry + 0x20, U64((uint64_t(16) << 32) | 0xfffffff0))), "name (offset");
  Has(parseError(With(FirstEntry + 0x28, U64(0x1a011))), "both LZ4 and zstd");
  Has(parseError(With(FirstEntry + 0x38, U64(uint64_t(2) << 30))), "exceeds the limit");

  // Sizes that parse but lie about the payload fail when it is decompressed.
  auto ContentsError = [](const std::vector<uint8_t> &Bytes) {
    Fatbinary F = take(parseFatbinary(Bytes));
    return errorOf(F.Containers.front().Entries.front().contents());
  };
  Has(ContentsError(With(FirstEntry + 0x38, U64(897))), "declares 898 bytes but the entry header declares 897");
  Has(ContentsError(With(FirstEntry + 0x10, U32(100))), "truncated zstd payload");
  Has(ContentsError(With(FirstEntry + 0x28, U64(0x102011))), "LZ4");
  Has(ContentsError(With(FirstEntry + 0x50, U32(0))), "not a zstd frame");

  // Padding after the last container is fine, anything else after it is not.
  std::vector<uint8_t> Padded = Whole;
  Padded.resize(Padded.size() + 24, 0);
  CHECK(take(parseFatbinary(Padded)).Containers.size() == 1);
  Padded.back() = 1;
  Has(parseError(Padded), "bad container magic");
  Has(parseError({}), "empty fatbinary");
}

TEST_CASE("decompression bombs and lying sizes stay bounded") {
  // 64 MiB of zeros compress to a few KiB; declared as 1000 bytes, the output stops right after 1000.
  std::vector<uint8_t> Zeros(64 << 20, 0);
  std::vector<uint8_t> Bomb = take(compress(Compression::Zstd, Zeros, 1));
  CHECK(Bomb.size() < 64 * 1024);
  CHECK(errorOf(decompress(Compression::Zstd, Bomb, 1000)).find("declares") != std::string::npos);

  // A frame without a content size (streamed) is caught by the output cap instead.
  std::vector<uint8_t> Streamed(ZSTD_compressBound(Zeros.size()));
  {
    ZSTD_CCtx *Ctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(Ctx, ZSTD_c_contentSizeFlag, 0);
    ZSTD_inBuffer In{Zeros.data(), Zeros.size(), 0};
    ZSTD_outBuffer Out{Streamed.data(), Streamed.size(), 0};
    size_t Left;
    do
      Left = ZSTD_compressStream2(Ctx, &Out, &In, ZSTD_e_end);
    while (Left != 0 && !ZSTD_isError(Left));
    REQUIRE_FALSE(ZSTD_isError(Left));
    Streamed.resize(Out.pos);
    ZSTD_freeCCtx(Ctx);
  }
  REQUIRE(ZSTD_getFrameContentSize(Streamed.data(), Streamed.size()) == ZSTD_CONTENTSIZE_UNKNOWN);
  CHECK(errorOf(decompress(Compression::Zstd, Streamed, 4096)).find("beyond its declared 4096") != std::string::npos);
  CHECK(take(decompress(Compression::Zstd, Streamed, Zeros.size())).size() == Zeros.size());
  CHECK(errorOf(decompress(Compression::Zstd, Streamed, uint64_t(4) << 30)).find("exceeds the limit") !=
        std::string::npos);
  CHECK(errorOf(decompress(Compression::Zstd, Streamed, Zeros.size(), 1 << 20)).find("exceeds the limit") !=
        std::string::npos);

  // LZ4: too small a declared size, too large a declared size, garbage.
  std::vector<uint8_t> Small(5000, 'x');
  std::vector<uint8_t> Packed = take(compress(Compression::Lz4, Small));
  CHECK(take(decompress(Compression::Lz4, Packed, Small.size())) == Small);
  CHECK(errorOf(decompress(Compression::Lz4, Packed, 4999)).find("corrupt LZ4") != std::string::npos);
  CHECK(errorOf(decompress(Compression::Lz4, Packed, 5001)).find("expands to 5000") != std::string::npos);
  CHECK(errorOf(decompress(Compression::Lz4, Packed, uint64_t(1) << 29)).find("expands to 5000") != std::string::npos);
  const uint8_t Garbage[] = {0xff, 0xff, 0xff, 0xff, 0xff};
  CHECK(errorOf(decompress(Compression::Lz4, Garbage, 100)).find("corrupt LZ4") != std::string::npos);
  CHECK(errorOf(decompress(Compression::Zstd, Garbage, 100)).find("not a zstd frame") != std::string::npos);
}

TEST_CASE("a corrupted wrapper relocation in the executable is an error") {
  std::vector<uint8_t> Bytes = readBytes(samplePath(ExeSample));
  // .rela.dyn at file offset 0x950; its fifth entry relocates the first wrapper's data pointer (0x70b8).
  const size_t Rela = 0x950 + 4 * 24;
  REQUIRE(endian::read64le(Bytes.data() + Rela) == 0x70b8);
  endian::write64le(Bytes.data() + Rela + 16, 0xdeadbeef);
  auto Buffer = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(reinterpret_cast<const char *>(Bytes.data()), Bytes.size()), "exe", false);
  auto Obj = take(llvm::object::ObjectFile::createObjectFile(Buffer->getMemBufferRef()));
  auto Image = take(ElfMemoryImage::create(*Obj));
  std::string Msg = errorOf(readElfWrappers(*Obj, *Image));
  CAPTURE(Msg);
  CHECK(Msg.find("0xdeadbeef") != std::string::npos);
  CHECK(Msg.find("not in a loaded section") != std::string::npos);
}
