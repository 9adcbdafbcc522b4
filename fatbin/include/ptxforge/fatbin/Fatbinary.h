// The in-memory view of a fatbinary: containers holding entries, each a view into bytes the caller keeps
// alive, and the parser that checks every size and offset before it makes one.
#pragma once

#include "ptxforge/fatbin/Format.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ptxforge::fatbin {

/// One entry of a container: its decoded header plus views of its raw header, payload, name and options.
class Entry {
public:
  EntryHeader Header;
  /// The whole header as stored (HeaderSize bytes), options block and unknown extensions included, so a
  /// writer can copy an entry it does not fully understand.
  llvm::ArrayRef<uint8_t> RawHeader;
  /// The stored payload (PayloadSize bytes, compressed or not, padding included).
  llvm::ArrayRef<uint8_t> Payload;
  /// The identifier ("identifier = ..." in cuobjdump); empty when the entry has none.
  llvm::StringRef Name;
  /// The options string: ptxas options for PTX, the host ISA level for host-native entries.
  llvm::StringRef Options;
  /// Offset of the entry header from the start of the bytes that were parsed (for diagnostics).
  uint64_t Offset = 0;

  EntryKind kind() const { return Header.Kind; }
  uint32_t arch() const { return Header.Arch; }
  bool isPtx() const { return Header.Kind == EntryKind::Ptx; }
  bool isElf() const { return Header.Kind == EntryKind::Elf; }
  bool isHostNative() const { return Header.Kind == EntryKind::HostNative; }
  bool isCompressed() const { return Header.compression() != Compression::None; }
  /// "sm_90a" and the like.
  std::string archName() const;

  /// The payload after decompression (a copy when stored plain), or an error for corrupt compressed data.
  [[nodiscard]] llvm::Expected<std::vector<uint8_t>> contents() const;
  /// For PTX entries: the text up to its NUL terminator.
  [[nodiscard]] llvm::Expected<std::string> ptxText() const;
};

/// One fatbinary container (magic 0xBA55ED50) and its entries in file order.
struct Container {
  ContainerHeader Header;
  /// The container's bytes, header included.
  llvm::ArrayRef<uint8_t> Bytes;
  uint64_t Offset = 0;
  std::vector<Entry> Entries;
};

/// One or more containers read from a contiguous byte range (a .fatbin file or an ELF `.nv_fatbin`
/// section, where containers follow each other on 8-byte boundaries).
struct Fatbinary {
  std::vector<Container> Containers;

  /// Every entry of every container, in order.
  std::vector<const Entry *> entries() const;
  size_t numEntries() const;
};

/// Parses exactly one container at the start of Bytes; bytes after it are ignored.
/// Every field is checked against Bytes before use, so any input gives a Container or an Error.
[[nodiscard]] llvm::Expected<Container> parseContainer(llvm::ArrayRef<uint8_t> Bytes, uint64_t BaseOffset = 0);

/// Parses containers back to back (each starting on an 8-byte boundary) until Bytes ends; zero bytes after
/// the last container are padding. Fails on an empty input or on anything that is not a container.
[[nodiscard]] llvm::Expected<Fatbinary> parseFatbinary(llvm::ArrayRef<uint8_t> Bytes);

/// Decodes and checks the 16-byte container header at the start of Bytes (magic, version, header size);
/// the payload is not looked at, so this works on a header read alone.
[[nodiscard]] llvm::Expected<ContainerHeader> decodeContainerHeader(llvm::ArrayRef<uint8_t> Bytes);

/// The total size of the container whose header starts Bytes (header + payload), checked against Bytes.
[[nodiscard]] llvm::Expected<uint64_t> containerSize(llvm::ArrayRef<uint8_t> Bytes);

/// What an in-memory image handed to a loader looks like, from its first bytes.
enum class ImageFormat { Container, Wrapper, Elf, Unknown };
ImageFormat identifyImage(llvm::ArrayRef<uint8_t> FirstBytes);

} // namespace ptxforge::fatbin
