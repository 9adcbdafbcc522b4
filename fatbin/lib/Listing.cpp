// cuobjdump's text formats, matched against the listings recorded on the GPU machine
// (shared/fatbins/expected_listings).
#include "ptxforge/fatbin/Listing.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <algorithm>

using namespace llvm;

namespace ptxforge::fatbin {

std::string listingStem(StringRef Path) { return sys::path::stem(sys::path::filename(Path)).str(); }

/// The word cuobjdump uses in listings ("PTX file") and the extension of extracted files.
static std::pair<StringRef, StringRef> listingWordAndExtension(const Entry &E) {
  switch (E.kind()) {
  case EntryKind::Ptx:
    return {"PTX", "ptx"};
  case EntryKind::Elf:
    return {"ELF", "cubin"};
  case EntryKind::HostNative:
    return {"HOST", "o"};
  }
  return {"", ""};
}

/// The arch cuobjdump 13.0 puts in a cubin's file name: the SM its ELF header names (bits 8-15 of e_flags
/// from CUDA ELF ABI version 8 on, bits 0-7 before), not the entry's arch field, with the entry's `a` but
/// never an `f` (an sm_100f entry lists as "sm_100"). Falls back to the arch field for unreadable payloads.
static std::string cubinArchName(const Entry &E) {
  uint64_t Suffix = E.Header.Flags & flagBits(EntryFlag::ArchSpecific);
  auto Cubin = E.contents();
  if (!Cubin) {
    consumeError(Cubin.takeError());
    return archName(E.arch(), Suffix);
  }
  const std::vector<uint8_t> &B = *Cubin;
  constexpr size_t EFlagsOffset = 0x30; // in a 64-bit ELF header
  if (B.size() < EFlagsOffset + 4 || B[0] != 0x7f || B[1] != 'E' || B[2] != 'L' || B[3] != 'F' ||
      B[4] != ELF::ELFCLASS64)
    return archName(E.arch(), Suffix);
  uint32_t Flags = support::endian::read32le(B.data() + EFlagsOffset);
  unsigned AbiVersion = B[ELF::EI_ABIVERSION];
  unsigned Sm = AbiVersion >= 8 ? (Flags & ELF::EF_CUDA_SM_MASK) >> ELF::EF_CUDA_SM_OFFSET : Flags & ELF::EF_CUDA_SM;
  return archName(Sm ? Sm : E.arch(), Suffix);
}

std::vector<NamedEntry> nameEntries(const Fatbinary &F, StringRef Stem) {
  std::vector<NamedEntry> Named;
  unsigned Ptx = 0, Elf = 0, Host = 0;
  for (const Entry *E : F.entries()) {
    unsigned *Counter = E->isPtx() ? &Ptx : E->isElf() ? &Elf : E->isHostNative() ? &Host : nullptr;
    if (!Counter)
      continue; // kinds cuobjdump does not list
    NamedEntry N;
    N.E = E;
    N.Index = ++*Counter;
    // cuobjdump 13.0 names an entry with an identifier after the identifier's stem, without the index
    // (which still counts).
    std::string Arch = E->isElf() ? cubinArchName(*E) : E->archName();
    if (E->Name.empty())
      N.FileName = (Stem + "." + Twine(N.Index) + "." + Arch).str();
    else
      N.FileName = (sys::path::stem(sys::path::filename(E->Name)) + "." + Arch).str();
    if (E->isHostNative())
      N.FileName += "." + E->Options.str();
    N.FileName += "." + listingWordAndExtension(*E).second.str();
    // Identifiers and options come from the file: keep them from naming another directory on extraction.
    std::replace_if(
        N.FileName.begin(), N.FileName.end(), [](char C) { return C == '/' || C == '\\' || C == 0; }, '_');
    Named.push_back(std::move(N));
  }
  return Named;
}

void printListing(raw_ostream &OS, raw_ostream &Notes, const Fatbinary &F, StringRef Path, ListingKinds Kinds) {
  bool SawPtx = false, SawElf = false, SawHost = false;
  for (const NamedEntry &N : nameEntries(F, listingStem(Path))) {
    bool Wanted = (N.E->isPtx() && Kinds.Ptx) || (N.E->isElf() && Kinds.Elf) || (N.E->isHostNative() && Kinds.Host);
    SawPtx |= N.E->isPtx();
    SawElf |= N.E->isElf();
    SawHost |= N.E->isHostNative();
    if (Wanted)
      OS << listingWordAndExtension(*N.E).first << " file " << format("%4u", N.Index) << ": " << N.FileName << "\n";
  }
  auto Missing = [&](StringRef Word) {
    Notes << "cuobjdump info    : No " << Word << " file found to extract from '" << Path
          << "'. You may try with -all option.\n";
  };
  if (Kinds.Elf && !SawElf)
    Missing("ELF");
  if (Kinds.Ptx && !SawPtx)
    Missing("PTX");
  if (Kinds.Host && !SawHost)
    Missing("HOST");
}

void printEntryHeader(raw_ostream &OS, const Entry &E, HostNativeStyle Style) {
  const bool AsHost = E.isHostNative() && Style == HostNativeStyle::AsPtxforge;
  std::string Title =
      "Fatbin " + (E.isHostNative() && !AsHost ? std::string("<unknown kind>") : kindName(E.kind())) + " code:";
  const EntryHeader &H = E.Header;
  OS << "\n" << Title << "\n" << std::string(Title.size(), '=') << "\n";
  OS << "arch = " << E.archName() << "\n";
  OS << "code version = [" << H.MajorVersion << "," << H.MinorVersion << "]\n";
  OS << "host = " << hostName(H.Flags) << "\n";
  OS << "compile_size = " << (hasFlag(H.Flags, EntryFlag::Is64Bit) ? "64bit" : "32bit") << "\n";
  if (E.isCompressed())
    OS << "compressed\n";
  if (!E.Name.empty())
    OS << "identifier = " << E.Name << "\n";
  if (E.isPtx())
    OS << "ptxasOptions = " << E.Options << "\n";
  else if (AsHost)
    OS << "isa = " << E.Options << "\n";
}

void printHeaders(raw_ostream &OS, const Fatbinary &F, HostNativeStyle Style) {
  for (const Entry *E : F.entries())
    printEntryHeader(OS, *E, Style);
}

} // namespace ptxforge::fatbin
