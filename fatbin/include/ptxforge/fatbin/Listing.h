// cuobjdump-style text about a fatbinary: the per-entry header dump of `cuobjdump FILE`, the
// `-lptx`/`-lelf` listings and the file names `-xptx`/`-xelf` extract to.
#pragma once

#include "ptxforge/fatbin/Fatbinary.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace ptxforge::fatbin {

/// The stem cuobjdump names extracted files after: the file name without directory and last extension
/// ("dir/fb_main_exe.bin" -> "fb_main_exe").
std::string listingStem(llvm::StringRef Path);

/// An entry and the file name cuobjdump gives it: "<stem>.<n>.<arch>.ptx" for PTX, ".cubin" for ELF,
/// ".o" for host-native entries (with the ISA level before the extension); n counts each kind from 1
/// across all containers. Entries with an identifier are named "<identifier stem>.<arch>.<ext>" instead.
struct NamedEntry {
  const Entry *E = nullptr;
  std::string FileName;
  unsigned Index = 0;
};
std::vector<NamedEntry> nameEntries(const Fatbinary &F, llvm::StringRef Stem);

/// Which kinds a listing covers.
struct ListingKinds {
  bool Ptx = false;
  bool Elf = false;
  bool Host = false;
};

/// Writes "PTX file    1: name" / "ELF file    1: name" lines in entry order to OS, and for each
/// requested kind with no entries cuobjdump's "No ... file found" info line to Notes. Path is the input
/// as the user spelled it (cuobjdump quotes it in the info line).
void printListing(llvm::raw_ostream &OS, llvm::raw_ostream &Notes, const Fatbinary &F, llvm::StringRef Path,
                  ListingKinds Kinds);

/// How header blocks show ptxforge's host-native entries: as cuobjdump shows them (a kind it does not know:
/// "Fatbin <unknown kind> code:" and the common fields), or as ptxforge's own ("Fatbin host code:" and the ISA
/// level).
enum class HostNativeStyle { AsCuobjdump, AsPtxforge };

/// Writes the header block cuobjdump prints before an entry's code: a blank line, "Fatbin ptx code:",
/// a rule, then arch, code version, host, compile_size, "compressed", identifier and options lines.
void printEntryHeader(llvm::raw_ostream &OS, const Entry &E, HostNativeStyle Style = HostNativeStyle::AsCuobjdump);

/// The default dump: every entry's header block, in order.
void printHeaders(llvm::raw_ostream &OS, const Fatbinary &F, HostNativeStyle Style = HostNativeStyle::AsCuobjdump);

} // namespace ptxforge::fatbin
