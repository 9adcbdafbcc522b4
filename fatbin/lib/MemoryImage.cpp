// Following `__fatBinC_Wrapper_t` pointers through a MemoryImage: bounds-checked for ELF files, trusted for
// this process's own registration calls.
#include "ptxforge/fatbin/MemoryImage.h"
#include "Support.h"
#include "ptxforge/fatbin/Reader.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
namespace endian = llvm::support::endian;

namespace ptxforge::fatbin {
using detail::hex;
using detail::makeError;

MemoryImage::~MemoryImage() = default;

Expected<uint64_t> MemoryImage::readPointer(uint64_t Address) const {
  auto Bytes = read(Address, 8);
  if (!Bytes)
    return Bytes.takeError();
  return endian::read64le(Bytes->data());
}

Expected<std::unique_ptr<ElfMemoryImage>> ElfMemoryImage::create(const object::ObjectFile &Obj) {
  // Going through ELFFile rather than the generic ObjectFile API keeps every malformed-file case an Error
  // (the generic relocation accessors abort on bad tables).
  const auto *Elf = dyn_cast<object::ELF64LEObjectFile>(&Obj);
  if (!Elf)
    return makeError("only 64-bit little-endian ELF files are supported");
  const auto &EF = Elf->getELFFile();
  auto Sections = EF.sections();
  if (!Sections)
    return Sections.takeError();

  auto Image = std::unique_ptr<ElfMemoryImage>(new ElfMemoryImage());
  uint32_t RelativeType = EF.getHeader().e_machine == ELF::EM_AARCH64 ? uint32_t(ELF::R_AARCH64_RELATIVE)
                                                                      : uint32_t(ELF::R_X86_64_RELATIVE);
  for (const auto &Shdr : *Sections) {
    if (Shdr.sh_type == ELF::SHT_RELA) {
      auto Relas = EF.relas(Shdr);
      if (!Relas)
        return Relas.takeError();
      for (const auto &R : *Relas)
        if (R.getType(/*IsMips64EL=*/false) == RelativeType)
          Image->RelativeRelocations[R.r_offset] = static_cast<uint64_t>(R.r_addend);
      continue;
    }
    if (!(Shdr.sh_flags & ELF::SHF_ALLOC) || Shdr.sh_size == 0)
      continue;
    Region R{Shdr.sh_addr, Shdr.sh_size, {}};
    if (R.Address + R.Size < R.Address)
      return makeError("section at " + hex(R.Address) + " wraps around the address space");
    if (Shdr.sh_type != ELF::SHT_NOBITS) {
      auto Contents = EF.getSectionContents(Shdr);
      if (!Contents)
        return Contents.takeError();
      R.Data = *Contents;
      R.Size = R.Data.size();
    }
    Image->Regions.push_back(R);
  }
  return Image;
}

Expected<ArrayRef<uint8_t>> ElfMemoryImage::read(uint64_t Address, uint64_t Size) const {
  if (Address + Size < Address)
    return makeError("read of " + Twine(Size) + " bytes at " + hex(Address) + " wraps around");
  // Sections with data win over .bss-like ones that may overlap them (.tbss).
  for (bool WantData : {true, false}) {
    for (const Region &R : Regions) {
      if (R.Data.empty() == WantData || Address < R.Address || Address + Size > R.Address + R.Size)
        continue;
      if (WantData)
        return R.Data.slice(Address - R.Address, Size);
      // Zero-initialised memory: only small reads (pointer arrays) make sense there.
      static const uint8_t Zeros[4096] = {};
      if (Size > sizeof(Zeros))
        return makeError("read of " + Twine(Size) + " bytes of zero-initialised memory at " + hex(Address));
      return ArrayRef<uint8_t>(Zeros, Size);
    }
  }
  return makeError("address range " + hex(Address) + "+" + Twine(Size) + " is not in a loaded section");
}

Expected<uint64_t> ElfMemoryImage::readPointer(uint64_t Address) const {
  auto Bytes = read(Address, 8);
  if (!Bytes)
    return Bytes.takeError();
  auto It = RelativeRelocations.find(Address);
  if (It != RelativeRelocations.end())
    return It->second;
  return endian::read64le(Bytes->data());
}

Expected<ArrayRef<uint8_t>> ProcessMemoryImage::read(uint64_t Address, uint64_t Size) const {
  if (Address == 0)
    return makeError("null pointer");
  if (Size > MaxUncompressedSize)
    return makeError("refusing to read " + Twine(Size) + " bytes of process memory");
  if (Address + Size < Address || Address + Size > uint64_t(UINTPTR_MAX))
    return makeError("address range " + hex(Address) + "+" + Twine(Size) + " wraps around");
  return ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(static_cast<uintptr_t>(Address)), Size);
}

Expected<Container> readContainerAt(const MemoryImage &Image, uint64_t Address) {
  auto Fail = [&](Error E) { return makeError("container at " + hex(Address) + ": " + toString(std::move(E))); };
  auto Head = Image.read(Address, ContainerHeaderSize);
  if (!Head)
    return Fail(Head.takeError());
  auto H = decodeContainerHeader(*Head);
  if (!H)
    return Fail(H.takeError());
  uint64_t Total = uint64_t(H->HeaderSize) + H->PayloadSize;
  if (H->PayloadSize > MaxUncompressedSize)
    return Fail(makeError("declared size " + Twine(H->PayloadSize) + " exceeds the limit of " +
                          Twine(MaxUncompressedSize) + " bytes"));
  auto All = Image.read(Address, Total);
  if (!All)
    return Fail(All.takeError());
  return parseContainer(*All, Address);
}

Expected<WrapperContents> readWrapper(const MemoryImage &Image, uint64_t Address) {
  auto Fail = [&](const Twine &Why) { return makeError("wrapper at " + hex(Address) + ": " + Why); };
  auto Head = Image.read(Address, 8);
  if (!Head)
    return Fail(toString(Head.takeError()));
  WrapperContents W;
  W.Address = Address;
  W.Header.Magic = endian::read32le(Head->data());
  W.Header.Version = endian::read32le(Head->data() + 4);
  if (W.Header.Magic != WrapperMagic)
    return Fail("bad magic " + hex(W.Header.Magic) + " (expected " + hex(WrapperMagic) + ")");
  if (W.Header.Version != 1 && W.Header.Version != 2)
    return Fail("unsupported version " + Twine(W.Header.Version));
  for (auto [Field, Offset] : {std::pair(&W.Header.Data, 8), std::pair(&W.Header.FilenameOrFatbins, 16)}) {
    auto Ptr = Image.readPointer(Address + Offset);
    if (!Ptr)
      return Fail(toString(Ptr.takeError()));
    *Field = *Ptr;
  }
  if (W.Header.Data == 0)
    return Fail("null data pointer");
  auto Main = readContainerAt(Image, W.Header.Data);
  if (!Main)
    return Fail(toString(Main.takeError()));
  W.Main = std::move(*Main);
  if (W.Header.Version != 2 || W.Header.FilenameOrFatbins == 0)
    return W;

  // Version 2: a NULL-terminated array of containers; a repeated pointer would mean a cycle in a list that
  // should be a plain array, so it is rejected rather than followed.
  DenseSet<uint64_t> Seen;
  for (unsigned I = 0;; ++I) {
    if (I == MaxPrelinkedFatbins)
      return Fail("prelinked fatbinary array has no NULL terminator in " + Twine(MaxPrelinkedFatbins) + " entries");
    uint64_t Slot = W.Header.FilenameOrFatbins + uint64_t(I) * 8;
    if (Slot < W.Header.FilenameOrFatbins)
      return Fail("prelinked fatbinary array wraps around the address space");
    auto Ptr = Image.readPointer(Slot);
    if (!Ptr)
      return Fail("prelinked fatbinary " + Twine(I) + ": " + toString(Ptr.takeError()));
    if (*Ptr == 0)
      break;
    if (!Seen.insert(*Ptr).second)
      return Fail("prelinked fatbinary array lists " + hex(*Ptr) + " twice");
    auto C = readContainerAt(Image, *Ptr);
    if (!C)
      return Fail("prelinked fatbinary " + Twine(I) + ": " + toString(C.takeError()));
    W.Prelinked.push_back(std::move(*C));
  }
  return W;
}

Expected<std::vector<WrapperContents>> readElfWrappers(const object::ObjectFile &Obj, const ElfMemoryImage &Image) {
  std::vector<WrapperContents> Result;
  for (const object::SectionRef &Sec : Obj.sections()) {
    Expected<StringRef> Name = Sec.getName();
    if (!Name)
      return Name.takeError();
    if (*Name != WrapperSection)
      continue;
    if (Sec.getSize() % WrapperSize != 0)
      return makeError(WrapperSection + " size " + Twine(Sec.getSize()) + " is not a multiple of " +
                       Twine(WrapperSize));
    for (uint64_t Off = 0; Off < Sec.getSize(); Off += WrapperSize) {
      auto W = readWrapper(Image, Sec.getAddress() + Off);
      if (!W)
        return W.takeError();
      Result.push_back(std::move(*W));
    }
  }
  return Result;
}

} // namespace ptxforge::fatbin
