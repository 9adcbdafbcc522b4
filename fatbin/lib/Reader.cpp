// Reading fatbinaries from files: raw containers, or the fatbinary sections of ELF files through LLVM's
// Object library.
#include "ptxforge/fatbin/Reader.h"
#include "Support.h"
#include "ptxforge/support/InputFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/ObjectFile.h"

using namespace llvm;

namespace ptxforge::fatbin {
using detail::hex;
using detail::makeError;

static ArrayRef<uint8_t> bytesOf(StringRef S) { return arrayRefFromStringRef<uint8_t>(S); }

Expected<Fatbinary> readElfFatbinary(const object::ObjectFile &Obj, const ReadOptions &Opts) {
  std::vector<std::pair<StringRef, StringRef>> Executable, Relocatable; // (name, contents)
  for (const object::SectionRef &Sec : Obj.sections()) {
    Expected<StringRef> Name = Sec.getName();
    if (!Name)
      return Name.takeError();
    if (*Name != ExecutableFatbinSection && *Name != RelocatableFatbinSection)
      continue;
    Expected<StringRef> Contents = Sec.getContents();
    if (!Contents)
      return makeError("cannot read section " + *Name + ": " + toString(Contents.takeError()));
    (*Name == ExecutableFatbinSection ? Executable : Relocatable).emplace_back(*Name, *Contents);
  }
  if (Executable.empty() && Relocatable.empty())
    return makeError("no " + ExecutableFatbinSection + " or " + RelocatableFatbinSection + " section");

  std::vector<std::pair<StringRef, StringRef>> Chosen = Executable;
  if (Executable.empty() || Opts.IncludeRelocatable)
    Chosen.insert(Chosen.end(), Relocatable.begin(), Relocatable.end());
  Fatbinary Result;
  for (auto &[Name, Contents] : Chosen) {
    auto Part = parseFatbinary(bytesOf(Contents));
    if (!Part)
      return makeError("section " + Name + ": " + toString(Part.takeError()));
    for (Container &C : Part->Containers)
      Result.Containers.push_back(std::move(C));
  }
  return Result;
}

Expected<FatbinaryFile> FatbinaryFile::open(StringRef Path, const ReadOptions &Opts) {
  auto Buffer = support::readInputFileBuffer(Path);
  if (!Buffer)
    return Buffer.takeError();
  auto File = fromBuffer(std::move(*Buffer), Opts);
  if (!File)
    return makeError(Path + ": " + toString(File.takeError()));
  return File;
}

Expected<FatbinaryFile> FatbinaryFile::fromBuffer(std::unique_ptr<MemoryBuffer> Buffer, const ReadOptions &Opts) {
  ArrayRef<uint8_t> Bytes = bytesOf(Buffer->getBuffer());
  switch (identifyImage(Bytes)) {
  case ImageFormat::Container: {
    auto F = parseFatbinary(Bytes);
    if (!F)
      return F.takeError();
    return FatbinaryFile(std::move(Buffer), std::move(*F), InputFormat::Fatbin);
  }
  case ImageFormat::Elf: {
    auto Obj = object::ObjectFile::createObjectFile(Buffer->getMemBufferRef());
    if (!Obj)
      return makeError("not a readable ELF file: " + toString(Obj.takeError()));
    // The sections point into Buffer, not into the ObjectFile, so the ObjectFile may go.
    auto F = readElfFatbinary(**Obj, Opts);
    if (!F)
      return F.takeError();
    return FatbinaryFile(std::move(Buffer), std::move(*F), InputFormat::Elf);
  }
  case ImageFormat::Wrapper:
    return makeError("this is a __fatBinC_Wrapper_t (host-side pointers), not a fatbinary; read the ELF file or "
                     "process that holds it");
  case ImageFormat::Unknown:
    break;
  }
  return makeError("not a fatbinary (magic 0xba55ed50) or an ELF file");
}

} // namespace ptxforge::fatbin
