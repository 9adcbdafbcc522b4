// The on-disk layout of NVIDIA fatbinaries as observed in CUDA 13.0 output (shared/fatbins/README.md):
// magic numbers, entry kinds, flag bits, header sizes and the decoded form of each header.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace ptxforge::fatbin {

/// Magic of a fatbinary container ("fatBinaryHeader"), little endian.
constexpr uint32_t ContainerMagic = 0xBA55ED50;
/// Magic of nvcc's host-side `__fatBinC_Wrapper_t` that points at a container.
constexpr uint32_t WrapperMagic = 0x466243B1;
constexpr uint16_t ContainerVersion = 1;
constexpr uint16_t ContainerHeaderSize = 16;
/// Every entry header NVIDIA writes starts with these 64 bytes; PTX entries add an options block.
constexpr uint32_t MinEntryHeaderSize = 64;
/// The value NVIDIA's tools put in every entry's second field.
constexpr uint16_t EntryFormatVersion = 0x0101;
/// Containers inside an ELF `.nv_fatbin` section start on 8-byte boundaries; payloads are padded to 8.
constexpr uint64_t FatbinAlignment = 8;
/// Largest uncompressed payload the reader will produce: a real kernel image is a few MiB at most, so a
/// larger declared size means corrupt or hostile input (a decompression bomb), not a module.
constexpr uint64_t MaxUncompressedSize = uint64_t(1) << 30;

/// The kind field of an entry. Values other than these are kept as read and listed as unknown.
enum class EntryKind : uint16_t {
  Ptx = 1, ///< PTX text (NUL-terminated), possibly compressed
  Elf = 2, ///< an NVIDIA cubin (SASS); ptxforge lists it but never runs it
  /// ptxforge's own host object code, compiled from an entry's PTX for one compute capability and one
  /// host ISA level (stored as the entry's options string, e.g. "x86-64-v3"). NVIDIA's kinds are small
  /// numbers (1 PTX, 2 ELF, a few more for old cubins and NVVM IR), and the driver and cuobjdump walk
  /// entries by their header size and skip kinds they do not know, so a high value that reads "PF" in a
  /// hex dump cannot collide with a future NVIDIA kind and keeps the container loadable by NVIDIA's driver.
  HostNative = 0x4650,
};

/// Bits of an entry's 64-bit flags field. Unknown bits are preserved on read and write.
enum class EntryFlag : uint64_t {
  Is64Bit = 0x1,             ///< "compile_size = 64bit"
  Debug = 0x2,               ///< built with device debug information
  HostLinux = 0x10,          ///< "host = linux"
  HostMac = 0x20,            ///< "host = mac"
  HostWindows = 0x40,        ///< "host = windows"
  CompressedLz4 = 0x2000,    ///< payload is one LZ4 block (older toolkits)
  CompressedZstd = 0x8000,   ///< payload is a Zstandard frame (how CUDA 13 stores PTX by default)
  ArchSpecific = 0x100000,   ///< an `a` target (sm_90a, compute_90a): runs on exactly that CC
  FamilySpecific = 0x200000, ///< an `f` target (sm_100f): runs within the family (same major, CC >= arch)
};

constexpr bool hasFlag(uint64_t Flags, EntryFlag F) { return (Flags & static_cast<uint64_t>(F)) != 0; }
constexpr uint64_t flagBits(EntryFlag F) { return static_cast<uint64_t>(F); }

/// The flags NVIDIA's tools set on every entry built for a 64-bit Linux host.
constexpr uint64_t DefaultHostFlags = flagBits(EntryFlag::Is64Bit) | flagBits(EntryFlag::HostLinux);

enum class Compression : uint8_t { None, Lz4, Zstd };

/// The 16-byte container header.
struct ContainerHeader {
  uint32_t Magic = ContainerMagic;
  uint16_t Version = ContainerVersion;
  uint16_t HeaderSize = ContainerHeaderSize;
  uint64_t PayloadSize = 0; ///< bytes of entries after the header
};

/// The fixed 64-byte part of an entry header, field by field (offsets in the comments).
struct EntryHeader {
  EntryKind Kind = EntryKind::Ptx;             // 0x00
  uint16_t FormatVersion = EntryFormatVersion; // 0x02
  uint32_t HeaderSize = MinEntryHeaderSize;    // 0x04: bytes from the entry start to its payload
  uint64_t PayloadSize = 0;                    // 0x08: stored bytes, padded to 8
  uint32_t CompressedSize = 0;                 // 0x10: 0 unless compressed
  uint32_t OptionsOffset = 0;                  // 0x14: offset of the {offset, size} options descriptor
  uint16_t MinorVersion = 0;                   // 0x18: code version, ELF 1.8, PTX 9.0
  uint16_t MajorVersion = 0;                   // 0x1a
  uint32_t Arch = 0;                           // 0x1c: 75, 90, 100 (the a/f suffix is a flag)
  uint32_t NameOffset = 0;                     // 0x20: identifier, from the entry start
  uint32_t NameSize = 0;                       // 0x24
  uint64_t Flags = DefaultHostFlags;           // 0x28
  uint64_t Reserved = 0;                       // 0x30: always 0 in the samples; kept as read
  uint64_t UncompressedSize = 0;               // 0x38: 0 unless compressed

  Compression compression() const;
  bool isArchSpecific() const { return hasFlag(Flags, EntryFlag::ArchSpecific); }
  bool isFamilySpecific() const { return hasFlag(Flags, EntryFlag::FamilySpecific); }
};

/// Size of the options descriptor (u32 offset, u32 size) an entry's OptionsOffset points to.
constexpr uint32_t OptionsDescriptorSize = 8;

/// "sm_75", "sm_90a", "sm_100f": cuobjdump's spelling of an entry's arch, for PTX and ELF alike.
std::string archName(uint32_t Arch, uint64_t Flags);
/// The word cuobjdump prints in "Fatbin X code:": "ptx", "elf", "<unknown kind>"; "host" for ptxforge's
/// host-native entries (cuobjdump itself prints "<unknown kind>" for those).
std::string kindName(EntryKind Kind);
/// "linux", "mac", "windows" or "unknown" from the host flag bits.
llvm::StringRef hostName(uint64_t Flags);

} // namespace ptxforge::fatbin
