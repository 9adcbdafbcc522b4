// Following the pointers of nvcc's `__fatBinC_Wrapper_t` (magic 0x466243B1): a MemoryImage says which
// addresses may be read, so the same reader works on a live process and, bounds-checked, on an ELF file.
#pragma once

#include "ptxforge/fatbin/Fatbinary.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace llvm::object {
class ObjectFile;
} // namespace llvm::object

namespace ptxforge::fatbin {

/// An address space the wrapper reader may follow pointers into.
class MemoryImage {
public:
  virtual ~MemoryImage();
  /// Size bytes at Address, or an Error unless all of them are readable.
  [[nodiscard]] virtual llvm::Expected<llvm::ArrayRef<uint8_t>> read(uint64_t Address, uint64_t Size) const = 0;
  /// The 64-bit little-endian pointer stored at Address.
  [[nodiscard]] virtual llvm::Expected<uint64_t> readPointer(uint64_t Address) const;
};

/// The loadable sections of an ELF file at their link-time addresses. Every read is bounds-checked against
/// the section data, so following the wrapper's pointers through it is safe for any input file.
class ElfMemoryImage final : public MemoryImage {
public:
  /// Obj must outlive the image. Fails for non-ELF objects.
  [[nodiscard]] static llvm::Expected<std::unique_ptr<ElfMemoryImage>> create(const llvm::object::ObjectFile &Obj);

  llvm::Expected<llvm::ArrayRef<uint8_t>> read(uint64_t Address, uint64_t Size) const override;
  /// In position-independent files a pointer's value is an R_X86_64_RELATIVE addend; the bytes in place
  /// are used only when no such relocation covers the address (GNU ld writes both, lld only the former).
  llvm::Expected<uint64_t> readPointer(uint64_t Address) const override;

private:
  struct Region {
    uint64_t Address;
    uint64_t Size;
    llvm::ArrayRef<uint8_t> Data; ///< empty for SHT_NOBITS (.bss): reads as zeros
  };
  std::vector<Region> Regions;
  llvm::DenseMap<uint64_t, uint64_t> RelativeRelocations; ///< address -> addend
};

/// This process's own memory. Reading it cannot be checked, so use it only for the pointers the CUDA
/// runtime's registration calls (`__cudaRegisterFatBinary`) or cuModuleLoadData hand over, which the
/// compiler-generated code guarantees point into the program image. Reads of a null address or of more
/// than MaxUncompressedSize bytes still fail.
class ProcessMemoryImage final : public MemoryImage {
public:
  llvm::Expected<llvm::ArrayRef<uint8_t>> read(uint64_t Address, uint64_t Size) const override;
};

/// The host-side struct nvcc emits for each translation unit (24 bytes on 64-bit hosts).
struct Wrapper {
  uint32_t Magic = WrapperMagic;
  uint32_t Version = 1;           ///< 1: plain; 2: FilenameOrFatbins lists prelinked fatbinaries
  uint64_t Data = 0;              ///< address of the container
  uint64_t FilenameOrFatbins = 0; ///< v1: offline file name or 0; v2: NULL-terminated array of containers
};
constexpr uint64_t WrapperSize = 24;

/// A wrapper and the containers it reaches.
struct WrapperContents {
  uint64_t Address = 0;
  Wrapper Header;
  Container Main;
  std::vector<Container> Prelinked; ///< v2 only
};

/// Longest prelinked-fatbinary array the reader follows before it calls the array unterminated.
constexpr unsigned MaxPrelinkedFatbins = 4096;

/// Reads the container whose header is at Address (its size comes from the header).
[[nodiscard]] llvm::Expected<Container> readContainerAt(const MemoryImage &Image, uint64_t Address);
/// Reads the wrapper at Address and every container it points to.
[[nodiscard]] llvm::Expected<WrapperContents> readWrapper(const MemoryImage &Image, uint64_t Address);
/// Reads every wrapper in an ELF file's `.nvFatBinSegment` section, in section order.
[[nodiscard]] llvm::Expected<std::vector<WrapperContents>> readElfWrappers(const llvm::object::ObjectFile &Obj,
                                                                           const ElfMemoryImage &Image);

} // namespace ptxforge::fatbin
