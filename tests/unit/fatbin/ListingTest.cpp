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
  CHECK(llvm::StringRef(Out).ends_with("PTX file   12: kernel.sm_85.ptx\n")); // named after its identifier
  CHECK(Notes.empty());

  std::string Head;
  llvm::raw_string_ostream HeadOS(Head);
  printEntryHeader(HeadOS, F.Containers[0].Entries[11]);
  CHECK(Head == "\nFatbin <unknown kind> code:\n===========================\narch = sm_90\ncode version = [1,0]\n"
                "host = linux\ncompile_size = 64bit\n");
  Head.clear();
  printEntryHeader(HeadOS, F.Containers[0].Entries[11], HostNativeStyle::AsPtxforge);
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

namespace {
std::string listText(const Fatbinary &F, const std::string &Path, ListingKinds Kinds) {
  std::string Out, Notes;
  llvm::raw_string_ostream OS(Out), NotesOS(Notes);
  printListing(OS, NotesOS, F, Path, Kinds);
  return Out + Notes;
}
std::string headerText(const Fatbinary &F) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  printHeaders(OS, F);
  return Out;
}
const ListingKinds PtxAndElf = {true, true, false};
} // namespace

// Recorded with cuobjdump 13.0 (CUDA 13.0.88) on the device machine, for the family samples (which have no
// expected_listings file) and for fatbinaries this writer produced.
TEST_CASE("cuobjdump 13.0 on the family samples") {
  FatbinaryFile Ptx = take(FatbinaryFile::open(samplePath("fb_fam_cp100f.fatbin")));
  CHECK(listText(Ptx.fatbinary(), "d/fb_fam_cp100f.fatbin", PtxAndElf) ==
        "PTX file    1: fb_fam_cp100f.1.sm_100f.ptx\n"
        "cuobjdump info    : No ELF file found to extract from 'd/fb_fam_cp100f.fatbin'. You may try with -all "
        "option.\n");
  CHECK(headerText(Ptx.fatbinary()) == "\nFatbin ptx code:\n================\narch = sm_100f\ncode version = [9,0]\n"
                                       "host = linux\ncompile_size = 64bit\ncompressed\nptxasOptions = \n");
  // The cubin's name carries the SM of its ELF header, without the `f` its entry header has.
  FatbinaryFile Elf = take(FatbinaryFile::open(samplePath("fb_fam_sm100f.fatbin")));
  CHECK(listText(Elf.fatbinary(), "d/fb_fam_sm100f.fatbin", PtxAndElf) ==
        "ELF file    1: fb_fam_sm100f.1.sm_100.cubin\n"
        "cuobjdump info    : No PTX file found to extract from 'd/fb_fam_sm100f.fatbin'. You may try with -all "
        "option.\n");
  CHECK(headerText(Elf.fatbinary()) == "\nFatbin elf code:\n================\narch = sm_100f\ncode version = "
                                       "[1,8]\nhost = linux\ncompile_size = 64bit\n");
}

TEST_CASE("cuobjdump 13.0 on identifiers, options and cubins under another arch") {
  FatbinaryFile Default = take(FatbinaryFile::open(samplePath("fb_sm75_sm90_default.fatbin")));
  auto E = Default.fatbinary().entries();

  FatbinWriter W1;
  EntryDesc D75;
  D75.Arch = 75;
  W1.addPtx(take(E[1]->ptxText()), D75);
  W1.addHostNative({'P', 'F'}, 90, "x86-64-v3");
  EntryDesc D90;
  D90.Arch = 90;
  D90.Compress = Compression::Zstd;
  D90.Name = "fb_kernel.cu";
  D90.Options = " --generate-line-info";
  W1.addPtx(take(E[3]->ptxText()), D90);
  std::vector<uint8_t> G1 = take(W1.write());
  Fatbinary F1 = take(parseFatbinary(G1));
  CHECK(listText(F1, "d/g1_ptx_host_named.fatbin", PtxAndElf) ==
        "PTX file    1: g1_ptx_host_named.1.sm_75.ptx\n"
        "PTX file    2: fb_kernel.sm_90.ptx\n"
        "cuobjdump info    : No ELF file found to extract from 'd/g1_ptx_host_named.fatbin'. You may try with -all "
        "option.\n");
  std::string Head;
  llvm::raw_string_ostream HeadOS(Head);
  printEntryHeader(HeadOS, F1.Containers[0].Entries[2]);
  CHECK(Head == "\nFatbin ptx code:\n================\narch = sm_90\ncode version = [9,0]\nhost = linux\n"
                "compile_size = 64bit\ncompressed\nidentifier = fb_kernel.cu\nptxasOptions =  --generate-line-info\n");

  // An sm_90 cubin stored under arch 75 lists as sm_90: cuobjdump reads the cubin's own header.
  FatbinWriter W5;
  W5.addCopy(*E[0]);
  EntryDesc Lto;
  Lto.Arch = 75;
  Lto.Name = "lto";
  W5.addElf(take(E[2]->contents()), Lto);
  EntryDesc Packed;
  Packed.Arch = 90;
  Packed.Compress = Compression::Zstd;
  W5.addElf(take(E[2]->contents()), Packed);
  std::vector<uint8_t> G5 = take(W5.write());
  Fatbinary F5 = take(parseFatbinary(G5));
  CHECK(listText(F5, "d/g5_elf_named.fatbin", PtxAndElf) ==
        "ELF file    1: g5_elf_named.1.sm_75.cubin\n"
        "ELF file    2: lto.sm_90.cubin\n"
        "ELF file    3: g5_elf_named.3.sm_90.cubin\n"
        "cuobjdump info    : No PTX file found to extract from 'd/g5_elf_named.fatbin'. You may try with -all "
        "option.\n");
  CHECK(headerText(F5) ==
        "\nFatbin elf code:\n================\narch = sm_75\ncode version = [1,8]\nhost = linux\ncompile_size = 64bit\n"
        "\nFatbin elf code:\n================\narch = sm_75\ncode version = [1,8]\nhost = linux\ncompile_size = 64bit\n"
        "identifier = lto\n"
        "\nFatbin elf code:\n================\narch = sm_90\ncode version = [1,8]\nhost = linux\ncompile_size = 64bit\n"
        "compressed\n");
}

TEST_CASE("kinds cuobjdump does not know") {
  std::vector<uint8_t> Bytes = readBytes(samplePath("fb_sel_d_cp100.fatbin"));
  Bytes[16] = 8; // the entry's kind field
  Fatbinary F = take(parseFatbinary(Bytes));
  std::string Text = headerText(F);
  CHECK(
      llvm::StringRef(Text).starts_with("\nFatbin <unknown kind> code:\n===========================\narch = sm_100\n"));
  CHECK(listText(F, "x.fatbin", {true, false, false}) ==
        "cuobjdump info    : No PTX file found to extract from 'x.fatbin'. You may try with -all option.\n");
}

TEST_CASE("names taken from the file cannot leave the extraction directory") {
  FatbinWriter W;
  EntryDesc D;
  D.Arch = 75;
  D.Name = "../../etc/passwd";
  W.addPtx(".version 9.0\n", D);
  W.addHostNative({1}, 90, "../../x86-64/evil");
  std::vector<uint8_t> Bytes = take(W.write());
  Fatbinary F = take(parseFatbinary(Bytes));
  auto Named = nameEntries(F, "k");
  REQUIRE(Named.size() == 2);
  CHECK(Named[0].FileName == "passwd.sm_75.ptx");
  CHECK(Named[1].FileName == "k.1.sm_90..._.._x86-64_evil.o");
}
