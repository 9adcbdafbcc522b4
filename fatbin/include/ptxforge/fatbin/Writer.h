// Building fatbinary containers with the header layout NVIDIA's fatbinary tool writes: PTX entries
// (plain or zstd-compressed), opaque ELF entries, ptxforge's host-native entries, and verbatim copies.
#pragma once

#include "ptxforge/fatbin/Fatbinary.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ptxforge::fatbin {

/// A code version as stored in an entry: ELF 1.8, PTX 9.0 (the PTX ISA version).
struct CodeVersion {
  uint16_t Major = 0;
  uint16_t Minor = 0;
};

/// What describes a new entry besides its contents.
struct EntryDesc {
  uint32_t Arch = 0;
  /// Target bits only (EntryFlag::ArchSpecific, FamilySpecific, Debug); the writer adds the 64-bit/Linux
  /// host bits and the compression bit.
  uint64_t TargetFlags = 0;
  std::string Name;    ///< identifier; none when empty
  std::string Options; ///< ptxas options for PTX; the ISA level for host-native entries
  Compression Compress = Compression::None;
  /// Defaults: the PTX text's `.version` (9.0 if it has none), 1.8 for ELF, 1.0 for host-native entries.
  std::optional<CodeVersion> Version;
};

/// The `.version X.Y` a PTX text declares, if any.
std::optional<CodeVersion> ptxIsaVersion(llvm::StringRef PtxText);

/// Collects entries and writes them as one container.
class FatbinWriter {
public:
  /// Adds PTX text; the NUL terminator NVIDIA stores is appended here.
  void addPtx(llvm::StringRef Text, EntryDesc Desc);
  /// Adds an NVIDIA cubin, kept as opaque bytes.
  void addElf(llvm::ArrayRef<uint8_t> Cubin, EntryDesc Desc);
  /// Adds ptxforge host object code compiled for compute capability Arch and host ISA level IsaLevel
  /// (e.g. "x86-64-v3"), stored in the entry's options string.
  void addHostNative(llvm::ArrayRef<uint8_t> Object, uint32_t Arch, llvm::StringRef IsaLevel,
                     Compression Compress = Compression::None);
  /// Copies an entry read elsewhere byte for byte (header and stored payload, compressed or not), so
  /// entries this writer does not understand survive a rewrite.
  void addCopy(const Entry &E);

  size_t numEntries() const { return Pending.size(); }

  /// Serializes the container (16-byte header, then every entry in the order added).
  [[nodiscard]] llvm::Expected<std::vector<uint8_t>> write() const;

private:
  struct PendingEntry {
    EntryKind Kind;
    EntryDesc Desc;
    bool HasOptionsBlock; ///< NVIDIA writes an options block for PTX even when the options are empty
    std::vector<uint8_t> Contents;
    std::vector<uint8_t> CopiedBytes; ///< header + payload of addCopy() entries; empty otherwise
  };
  [[nodiscard]] llvm::Error appendEntry(const PendingEntry &P, std::vector<uint8_t> &Out) const;

  std::vector<PendingEntry> Pending;
};

} // namespace ptxforge::fatbin
