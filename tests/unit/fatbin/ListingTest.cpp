// Listings against the cuobjdump output recorded on the GPU machine (shared/fatbins/expected_listings):
// `-lptx -lelf`, `-all -lptx -lelf` and the default dump's entry headers, for every recorded sample.
#include "FatbinTestSupport.h"

#include "ptxforge/fatbin/Listing.h"
#include "ptxforge/fatbin/Reader.h"
#include "ptxforge/fatbin/Writer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <sstream>

using namespace ptxforge::fatbin;
using namespace ptxforge::fatbin::test;

namespace {

/// The sections of an expected listing, keyed by their "### ..." title with the file name dropped.
std::map<std::string, std::string> splitSections(const std::string &Text) {
  std::map<std::string, std::string> Sections;
  std::string *Body = nullptr;
  std::istringstream In(Text);
  for (std::string Line; std::getline(In, Line);) {
    if (llvm::StringRef(Line).starts_with("### ")) {
      llvm::StringRef Title = llvm::StringRef(Line).drop_front(4).rsplit(' ').first;
      Body = &Sections[Title.str()];
      continue;
    }
    if (Body)
      *Body += Line + "\n";
  }
  return Sections;
}

std::string listing(const std::string &Name, bool All) {
  ReadOptions Opts;
  Opts.IncludeRelocatable = All;
  FatbinaryFile File = take(FatbinaryFile::open(samplePath(Name), Opts));
  std::string Out, Notes;
  llvm::raw_string_ostream OS(Out), NotesOS(Notes);
  ListingKinds Kinds;
  Kinds.Ptx = Kinds.Elf = true;
  // cuobjdump was run from the directory above shared/ and quotes the path as given.
  printListing(OS, NotesOS, File.fatbinary(), "shared/fatbins/" + Name, Kinds);
  return Out + Notes;
}

std::string headers(const std::string &Name) {
  FatbinaryFile File = take(FatbinaryFile::open(samplePath(Name)));
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  printHeaders(OS, File.fatbinary());
  return Out;
}

} // namespace

TEST_CASE("listings match cuobjdump's for every recorded sample") {
  std::vector<std::string> Names = fatbinSamples();
  Names.push_back(ExeSample);
  unsigned Compared = 0;
  for (const std::string &Name : Names) {
    std::string Expected = samplePath("expected_listings/" + Name + ".txt");
    if (!llvm::sys::fs::exists(Expected))
      continue; // the family samples have no recorded listing
    CAPTURE(Name);
    auto Sections = splitSections(readText(Expected));
    REQUIRE(Sections.size() == 3);
    CHECK(listing(Name, false) == Sections["cuobjdump -lptx -lelf"]);
    CHECK(listing(Name, true) == Sections["cuobjdump -all -lptx -lelf"]);
    CHECK(headers(Name) == Sections["cuobjdump (default dump, headers)"]);
    ++Compared;
  }
  CHECK(Compared == 16);
}

TEST_CASE("names of family, host-native and many entries") {
  FatbinaryFile Fam = take(FatbinaryFile::open(samplePath("fb_fam_cp100f.fatbin")));
  auto Named = nameEntries(Fam.fatbinary(), listingStem("/x/y/fb_fam_cp100f.fatbin"));
  REQUIRE(Named.size() == 1);
  CHECK(Named[0].FileName == "fb_fam_cp100f.1.sm_100f.ptx");

  FatbinWriter W;
  EntryDesc P;
  for (unsigned I = 0; I < 11; ++I) {
    P.Arch = 75 + I;
    W.addPtx(".version 9.0\n", P);
  }
  W.addHostNative({1, 2}, 90, "x86-64-v3");
  P.Name = "kernel.cu";
  P.Options = "-O3";
  P.Compress = Compression::Zstd;
  W.addPtx(".version 8.7\n", P);
  std::vector<uint8_t> Bytes = take(W.write());
  Fatbinary F = take(parseFatbinary(Bytes));

  std::string Out, Notes;
  llvm::raw_string_ostream OS(Out), NotesOS(Notes);
  ListingKinds Kinds;
  Kinds.Ptx = Kinds.Host = true;
  printListing(OS, NotesOS, F, "k.fatbin", Kinds);
  CHECK(llvm::StringRef(Out).starts_with("PTX file    1: k.1.sm_75.ptx\n"));
  CHECK(llvm::StringRef(Out).contains("PTX file   10: k.10.sm_84.ptx\n"));
  CHECK(llvm::StringRef(Out).contains("HOST file    1: k.1.sm_90.x86-64-v3.o\n"));
  CHECK(llvm::StringRef(Out).ends_with("PTX file   12: k.12.sm_85.ptx\n"));
  CHECK(Notes.empty());

  std::string Head;
  llvm::raw_string_ostream HeadOS(Head);
  printEntryHeader(HeadOS, F.Containers[0].Entries[11]);
  CHECK(Head == "\nFatbin host code:\n=================\narch = sm_90\ncode version = [1,0]\nhost = linux\n"
                "compile_size = 64bit\nisa = x86-64-v3\n");
  Head.clear();
  printEntryHeader(HeadOS, F.Containers[0].Entries[12]);
  CHECK(Head == "\nFatbin ptx code:\n================\narch = sm_85\ncode version = [8,7]\nhost = linux\n"
                "compile_size = 64bit\ncompressed\nidentifier = kernel.cu\nptxasOptions = -O3\n");

  Kinds.Ptx = false;
  Kinds.Elf = true;
  Kinds.Host = false;
  Out.clear();
  Notes.clear();
  printListing(OS, NotesOS, F, "k.fatbin", Kinds);
  CHECK(Out.empty());
  CHECK(Notes == "cuobjdump info    : No ELF file found to extract from 'k.fatbin'. You may try with -all option.\n");
}
