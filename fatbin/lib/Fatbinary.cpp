// The container parser: every size, offset and string in a header is checked against the bytes it came
// from before an Entry points into them, so truncated or lying input gives an Error, never a bad read.
#include "ptxforge/fatbin/Fatbinary.h"
#include "Support.h"
#include "ptxforge/fatbin/Compression.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;
namespace endian = llvm::support::endian;

namespace ptxforge::fatbin {
using detail::decodeEntryHeader;
using detail::hex;
using detail::makeError;

/// Drops the NUL terminator (and any padding NULs) NVIDIA stores after strings.
static StringRef trimNuls(ArrayRef<uint8_t> Bytes) {
  StringRef S(reinterpret_cast<const char *>(Bytes.data()), Bytes.size());
  return S.take_until([](char C) { return C == '\0'; });
}

std::string Entry::archName() const { return fatbin::archName(Header.Arch, Header.Flags); }

Expected<std::vector<uint8_t>> Entry::contents() const {
  Compression Kind = Header.compression();
  if (Kind == Compression::None)
    return std::vector<uint8_t>(Payload.begin(), Payload.end());
  // The compressed size excludes the padding to 8; old producers that leave it 0 mean "the whole payload".
  ArrayRef<uint8_t> Data = Header.CompressedSize ? Payload.take_front(Header.CompressedSize) : Payload;
  auto Out = decompress(Kind, Data, Header.UncompressedSize);
  if (!Out)
    return createStringError(inconvertibleErrorCode(),
                             "entry at offset " + hex(Offset) + " (" + archName() + "): " + toString(Out.takeError()));
  return Out;
}

Expected<std::string> Entry::ptxText() const {
  if (!isPtx())
    return makeError("entry at offset " + hex(Offset) + " is not PTX");
  auto Bytes = contents();
  if (!Bytes)
    return Bytes.takeError();
  return trimNuls(*Bytes).str();
}

std::vector<const Entry *> Fatbinary::entries() const {
  std::vector<const Entry *> All;
  for (const Container &C : Containers)
    for (const Entry &E : C.Entries)
      All.push_back(&E);
  return All;
}

size_t Fatbinary::numEntries() const {
  size_t N = 0;
  for (const Container &C : Containers)
    N += C.Entries.size();
  return N;
}

/// Checks the entry whose header starts Bytes (Bytes ends where the container's payload ends).
static Expected<Entry> parseEntry(ArrayRef<uint8_t> Bytes, uint64_t Offset) {
  auto Fail = [&](const Twine &Why) { return makeError("entry at offset " + hex(Offset) + ": " + Why); };
  if (Bytes.size() < MinEntryHeaderSize)
    return Fail("truncated header: " + Twine(Bytes.size()) + " bytes left in the container, need " +
                Twine(MinEntryHeaderSize));
  Entry E;
  E.Offset = Offset;
  E.Header = decodeEntryHeader(Bytes.data());
  const EntryHeader &H = E.Header;
  if (H.HeaderSize < MinEntryHeaderSize)
    return Fail("header size " + Twine(H.HeaderSize) + " is below the minimum of " + Twine(MinEntryHeaderSize));
  if (H.HeaderSize > Bytes.size())
    return Fail("header size " + Twine(H.HeaderSize) + " runs past the container (" + Twine(Bytes.size()) +
                " bytes left)");
  if (H.PayloadSize > Bytes.size() - H.HeaderSize)
    return Fail("payload size " + Twine(H.PayloadSize) + " runs past the container (" +
                Twine(Bytes.size() - H.HeaderSize) + " bytes left)");
  if (hasFlag(H.Flags, EntryFlag::CompressedLz4) && hasFlag(H.Flags, EntryFlag::CompressedZstd))
    return Fail("flags " + hex(H.Flags) + " claim both LZ4 and zstd compression");
  if (H.CompressedSize > H.PayloadSize)
    return Fail("compressed size " + Twine(H.CompressedSize) + " exceeds the payload size " + Twine(H.PayloadSize));
  if (H.compression() != Compression::None && H.UncompressedSize > MaxUncompressedSize)
    return Fail("declared uncompressed size " + Twine(H.UncompressedSize) + " exceeds the limit of " +
                Twine(MaxUncompressedSize) + " bytes");

  uint64_t Extent = H.HeaderSize + H.PayloadSize;
  E.RawHeader = Bytes.take_front(H.HeaderSize);
  E.Payload = Bytes.slice(H.HeaderSize, H.PayloadSize);
  ArrayRef<uint8_t> Whole = Bytes.take_front(Extent);
  if (H.NameSize != 0) {
    if (uint64_t(H.NameOffset) + H.NameSize > Extent)
      return Fail("name (offset " + Twine(H.NameOffset) + ", size " + Twine(H.NameSize) + ") lies outside the entry");
    E.Name = trimNuls(Whole.slice(H.NameOffset, H.NameSize));
  }
  if (H.OptionsOffset != 0) {
    if (uint64_t(H.OptionsOffset) + OptionsDescriptorSize > H.HeaderSize)
      return Fail("options descriptor at " + Twine(H.OptionsOffset) + " lies outside the " + Twine(H.HeaderSize) +
                  "-byte header");
    uint32_t OptOffset = endian::read32le(Bytes.data() + H.OptionsOffset);
    uint32_t OptSize = endian::read32le(Bytes.data() + H.OptionsOffset + 4);
    if (uint64_t(OptOffset) + OptSize > H.HeaderSize)
      return Fail("options (offset " + Twine(OptOffset) + ", size " + Twine(OptSize) + ") lie outside the " +
                  Twine(H.HeaderSize) + "-byte header");
    E.Options = trimNuls(Whole.slice(OptOffset, OptSize));
  }
  return E;
}

Expected<ContainerHeader> decodeContainerHeader(ArrayRef<uint8_t> Bytes) {
  if (Bytes.size() < ContainerHeaderSize)
    return makeError("truncated container header: " + Twine(Bytes.size()) + " bytes, need " +
                     Twine(ContainerHeaderSize));
  ContainerHeader H;
  H.Magic = endian::read32le(Bytes.data());
  H.Version = endian::read16le(Bytes.data() + 4);
  H.HeaderSize = endian::read16le(Bytes.data() + 6);
  H.PayloadSize = endian::read64le(Bytes.data() + 8);
  if (H.Magic != ContainerMagic)
    return makeError("bad container magic " + hex(H.Magic) + " (expected " + hex(ContainerMagic) + ")");
  if (H.Version != ContainerVersion)
    return makeError("unsupported container version " + Twine(H.Version));
  if (H.HeaderSize < ContainerHeaderSize)
    return makeError("container header size " + Twine(H.HeaderSize) + " is below the minimum of " +
                     Twine(ContainerHeaderSize));
  return H;
}

Expected<uint64_t> containerSize(ArrayRef<uint8_t> Bytes) {
  auto H = decodeContainerHeader(Bytes);
  if (!H)
    return H.takeError();
  if (H->HeaderSize > Bytes.size())
    return makeError("container header size " + Twine(H->HeaderSize) + " runs past the input (" + Twine(Bytes.size()) +
                     " bytes)");
  if (H->PayloadSize > Bytes.size() - H->HeaderSize)
    return makeError("container declares " + Twine(H->PayloadSize) + " payload bytes but only " +
                     Twine(Bytes.size() - H->HeaderSize) + " follow its header");
  return H->HeaderSize + H->PayloadSize;
}

Expected<Container> parseContainer(ArrayRef<uint8_t> Bytes, uint64_t BaseOffset) {
  auto Size = containerSize(Bytes);
  if (!Size)
    return makeError("container at offset " + hex(BaseOffset) + ": " + toString(Size.takeError()));
  Container C;
  C.Offset = BaseOffset;
  C.Bytes = Bytes.take_front(*Size);
  C.Header = cantFail(decodeContainerHeader(Bytes)); // containerSize() checked it
  // Each entry advances by at least MinEntryHeaderSize bytes, so this loop ends.
  for (uint64_t Pos = C.Header.HeaderSize; Pos < *Size;) {
    auto E = parseEntry(C.Bytes.slice(Pos), BaseOffset + Pos);
    if (!E)
      return makeError("container at offset " + hex(BaseOffset) + ": " + toString(E.takeError()));
    Pos += E->Header.HeaderSize + E->Header.PayloadSize;
    C.Entries.push_back(std::move(*E));
  }
  return C;
}

Expected<Fatbinary> parseFatbinary(ArrayRef<uint8_t> Bytes) {
  if (Bytes.empty())
    return makeError("empty fatbinary");
  Fatbinary F;
  for (uint64_t Off = 0; Off < Bytes.size();) {
    ArrayRef<uint8_t> Rest = Bytes.drop_front(Off);
    // Only look for trailing padding where no container starts, so this stays linear in the input.
    if (!F.Containers.empty() && identifyImage(Rest) != ImageFormat::Container &&
        std::all_of(Rest.begin(), Rest.end(), [](uint8_t B) { return B == 0; }))
      break;
    auto C = parseContainer(Rest, Off);
    if (!C)
      return C.takeError();
    Off = alignTo(Off + C->Bytes.size(), FatbinAlignment);
    F.Containers.push_back(std::move(*C));
  }
  return F;
}

ImageFormat identifyImage(ArrayRef<uint8_t> FirstBytes) {
  if (FirstBytes.size() < 4)
    return ImageFormat::Unknown;
  uint32_t Magic = endian::read32le(FirstBytes.data());
  if (Magic == ContainerMagic)
    return ImageFormat::Container;
  if (Magic == WrapperMagic)
    return ImageFormat::Wrapper;
  if (FirstBytes[0] == 0x7f && FirstBytes[1] == 'E' && FirstBytes[2] == 'L' && FirstBytes[3] == 'F')
    return ImageFormat::Elf;
  return ImageFormat::Unknown;
}

} // namespace ptxforge::fatbin
