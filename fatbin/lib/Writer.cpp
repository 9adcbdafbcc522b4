// Serializing entries with NVIDIA's header layout: 64 fixed bytes, then for PTX an options descriptor at
// 0x40 pointing at a NUL-terminated options string, the header padded to 8; payloads padded to 8.
#include "ptxforge/fatbin/Writer.h"
#include "Support.h"
#include "ptxforge/fatbin/Compression.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"

using namespace llvm;
namespace endian = llvm::support::endian;

namespace ptxforge::fatbin {
using detail::hex;
using detail::makeError;

std::optional<CodeVersion> ptxIsaVersion(StringRef PtxText) {
  // The directive comes first in every PTX file after comments; scanning lines keeps this independent of
  // the PTX front end.
  for (StringRef Line : llvm::split(PtxText, '\n')) {
    Line = Line.trim();
    if (!Line.consume_front(".version"))
      continue;
    auto [MajorText, MinorText] = Line.trim().split('.');
    unsigned Major, Minor;
    if (MajorText.getAsInteger(10, Major) || MinorText.trim().getAsInteger(10, Minor) || Major > 0xffff ||
        Minor > 0xffff)
      return std::nullopt;
    return CodeVersion{uint16_t(Major), uint16_t(Minor)};
  }
  return std::nullopt;
}

void FatbinWriter::addPtx(StringRef Text, EntryDesc Desc) {
  if (!Desc.Version)
    Desc.Version = ptxIsaVersion(Text).value_or(CodeVersion{9, 0});
  std::vector<uint8_t> Contents(Text.bytes_begin(), Text.bytes_end());
  Contents.push_back(0);
  Pending.push_back({EntryKind::Ptx, std::move(Desc), true, std::move(Contents), {}});
}

void FatbinWriter::addElf(ArrayRef<uint8_t> Cubin, EntryDesc Desc) {
  if (!Desc.Version)
    Desc.Version = CodeVersion{1, 8};
  bool HasOptions = !Desc.Options.empty();
  Pending.push_back(
      {EntryKind::Elf, std::move(Desc), HasOptions, std::vector<uint8_t>(Cubin.begin(), Cubin.end()), {}});
}

void FatbinWriter::addHostNative(ArrayRef<uint8_t> Object, uint32_t Arch, StringRef IsaLevel, Compression Compress) {
  EntryDesc Desc;
  Desc.Arch = Arch;
  Desc.Options = IsaLevel.str();
  Desc.Compress = Compress;
  Desc.Version = CodeVersion{1, 0};
  Pending.push_back(
      {EntryKind::HostNative, std::move(Desc), true, std::vector<uint8_t>(Object.begin(), Object.end()), {}});
}

void FatbinWriter::addCopy(const Entry &E) {
  PendingEntry P{E.kind(), {}, false, {}, {}};
  P.CopiedBytes.assign(E.RawHeader.begin(), E.RawHeader.end());
  P.CopiedBytes.insert(P.CopiedBytes.end(), E.Payload.begin(), E.Payload.end());
  Pending.push_back(std::move(P));
}

/// Appends S and a NUL terminator to Header, returning the offset where S starts.
static uint32_t placeString(std::vector<uint8_t> &Header, StringRef S) {
  uint32_t Offset = static_cast<uint32_t>(Header.size());
  Header.insert(Header.end(), S.bytes_begin(), S.bytes_end());
  Header.push_back(0);
  return Offset;
}

Error FatbinWriter::appendEntry(const PendingEntry &P, std::vector<uint8_t> &Out) const {
  if (!P.CopiedBytes.empty()) {
    Out.insert(Out.end(), P.CopiedBytes.begin(), P.CopiedBytes.end());
    return Error::success();
  }
  const EntryDesc &D = P.Desc;
  EntryHeader H;
  H.Kind = P.Kind;
  H.Arch = D.Arch;
  H.MajorVersion = D.Version->Major;
  H.MinorVersion = D.Version->Minor;
  H.Flags = DefaultHostFlags | D.TargetFlags;

  std::vector<uint8_t> Payload;
  if (D.Compress == Compression::None) {
    Payload = P.Contents;
  } else {
    auto Packed = compress(D.Compress, P.Contents);
    if (!Packed)
      return Packed.takeError();
    if (Packed->size() > UINT32_MAX)
      return makeError("compressed payload does not fit the 32-bit size field");
    Payload = std::move(*Packed);
    H.CompressedSize = static_cast<uint32_t>(Payload.size());
    H.UncompressedSize = P.Contents.size();
    H.Flags |= flagBits(D.Compress == Compression::Zstd ? EntryFlag::CompressedZstd : EntryFlag::CompressedLz4);
  }
  Payload.resize(alignTo(Payload.size(), FatbinAlignment), 0);
  H.PayloadSize = Payload.size();

  // Variable part of the header: options block (descriptor, then the string), then the name.
  std::vector<uint8_t> Header(MinEntryHeaderSize, 0);
  if (P.HasOptionsBlock) {
    H.OptionsOffset = MinEntryHeaderSize;
    Header.resize(MinEntryHeaderSize + OptionsDescriptorSize, 0);
    uint32_t At = placeString(Header, D.Options);
    endian::write32le(&Header[H.OptionsOffset], At);
    endian::write32le(&Header[H.OptionsOffset + 4], static_cast<uint32_t>(D.Options.size()));
  }
  if (!D.Name.empty()) {
    Header.resize(alignTo(Header.size(), FatbinAlignment), 0);
    H.NameOffset = placeString(Header, D.Name);
    H.NameSize = static_cast<uint32_t>(D.Name.size());
  }
  Header.resize(alignTo(Header.size(), FatbinAlignment), 0);
  H.HeaderSize = static_cast<uint32_t>(Header.size());

  detail::encodeEntryHeader(H, Header.data());

  Out.insert(Out.end(), Header.begin(), Header.end());
  Out.insert(Out.end(), Payload.begin(), Payload.end());
  return Error::success();
}

Expected<std::vector<uint8_t>> FatbinWriter::write() const {
  std::vector<uint8_t> Out(ContainerHeaderSize, 0);
  for (const PendingEntry &P : Pending)
    if (Error E = appendEntry(P, Out))
      return E;
  uint8_t *B = Out.data();
  endian::write32le(B + 0, ContainerMagic);
  endian::write16le(B + 4, ContainerVersion);
  endian::write16le(B + 6, ContainerHeaderSize);
  endian::write64le(B + 8, Out.size() - ContainerHeaderSize);
  return Out;
}

} // namespace ptxforge::fatbin
