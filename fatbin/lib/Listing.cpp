// cuobjdump's text formats, matched against the listings recorded on the GPU machine
// (shared/fatbins/expected_listings).
#include "ptxforge/fatbin/Listing.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

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
    N.FileName = (Stem + "." + Twine(N.Index) + "." + E->archName()).str();
    if (E->isHostNative())
      N.FileName += "." + E->Options.str();
    N.FileName += "." + listingWordAndExtension(*E).second.str();
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

void printEntryHeader(raw_ostream &OS, const Entry &E) {
  std::string Title = "Fatbin " + kindName(E.kind()) + " code:";
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
  else if (E.isHostNative())
    OS << "isa = " << E.Options << "\n";
}

void printHeaders(raw_ostream &OS, const Fatbinary &F) {
  for (const Entry *E : F.entries())
    printEntryHeader(OS, *E);
}

} // namespace ptxforge::fatbin
