// Where fatbinaries come from: raw .fatbin files, the `.nv_fatbin` sections of ELF executables, shared
// libraries and objects, and (MemoryImage.h) the wrappers nvcc's host code registers at run time.
#pragma once

#include "ptxforge/fatbin/Fatbinary.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>

namespace llvm::object {
class ObjectFile;
} // namespace llvm::object

namespace ptxforge::fatbin {

/// Name of the ELF section holding the fatbinary of an executable or shared library.
constexpr llvm::StringLiteral ExecutableFatbinSection = ".nv_fatbin";
/// Name of the ELF section holding relocatable device code (`nvcc -rdc`), linked by nvlink later.
constexpr llvm::StringLiteral RelocatableFatbinSection = "__nv_relfatbin";
/// Name of the ELF section holding the `__fatBinC_Wrapper_t` structs that point at the containers.
constexpr llvm::StringLiteral WrapperSection = ".nvFatBinSegment";

enum class InputFormat { Fatbin, Elf };

struct ReadOptions {
  /// Read `__nv_relfatbin` sections too (cuobjdump -all). Without it they are read only when an ELF file
  /// has no `.nv_fatbin` section, which is cuobjdump's default.
  bool IncludeRelocatable = false;
};

/// Reads the fatbinary sections of an ELF file; the result points into Obj's buffer.
/// Fails when the file has no fatbinary section or a section does not parse.
[[nodiscard]] llvm::Expected<Fatbinary> readElfFatbinary(const llvm::object::ObjectFile &Obj,
                                                         const ReadOptions &Opts = {});

/// A fatbinary together with the bytes it points into.
class FatbinaryFile {
public:
  /// Reads a raw fatbinary or an ELF file, told apart by their magic numbers.
  [[nodiscard]] static llvm::Expected<FatbinaryFile> open(llvm::StringRef Path, const ReadOptions &Opts = {});
  [[nodiscard]] static llvm::Expected<FatbinaryFile> fromBuffer(std::unique_ptr<llvm::MemoryBuffer> Buffer,
                                                                const ReadOptions &Opts = {});

  const Fatbinary &fatbinary() const { return Contents; }
  InputFormat format() const { return Format; }
  llvm::StringRef name() const { return Buffer->getBufferIdentifier(); }

private:
  FatbinaryFile(std::unique_ptr<llvm::MemoryBuffer> Buffer, Fatbinary Contents, InputFormat Format)
      : Buffer(std::move(Buffer)), Contents(std::move(Contents)), Format(Format) {}

  std::unique_ptr<llvm::MemoryBuffer> Buffer;
  Fatbinary Contents;
  InputFormat Format;
};

} // namespace ptxforge::fatbin
