// Spellings of the fatbinary header fields the way cuobjdump prints them.
#include "ptxforge/fatbin/Format.h"

namespace ptxforge::fatbin {

Compression EntryHeader::compression() const {
  // Zstd first: the newer codec wins if a producer ever set both bits (the parser rejects that anyway).
  if (hasFlag(Flags, EntryFlag::CompressedZstd))
    return Compression::Zstd;
  if (hasFlag(Flags, EntryFlag::CompressedLz4))
    return Compression::Lz4;
  return Compression::None;
}

std::string archName(uint32_t Arch, uint64_t Flags) {
  std::string Name = "sm_" + std::to_string(Arch);
  if (hasFlag(Flags, EntryFlag::ArchSpecific))
    Name += 'a';
  else if (hasFlag(Flags, EntryFlag::FamilySpecific))
    Name += 'f';
  return Name;
}

std::string kindName(EntryKind Kind) {
  switch (Kind) {
  case EntryKind::Ptx:
    return "ptx";
  case EntryKind::Elf:
    return "elf";
  case EntryKind::HostNative:
    return "host";
  }
  return "<unknown kind>"; // cuobjdump's words for kinds it does not know
}

llvm::StringRef hostName(uint64_t Flags) {
  if (hasFlag(Flags, EntryFlag::HostLinux))
    return "linux";
  if (hasFlag(Flags, EntryFlag::HostMac))
    return "mac";
  if (hasFlag(Flags, EntryFlag::HostWindows))
    return "windows";
  return "unknown";
}

} // namespace ptxforge::fatbin
