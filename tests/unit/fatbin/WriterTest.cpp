// The writer: byte-for-byte rewrites of NVIDIA's samples, entries rebuilt from their fields, zstd and LZ4
// payloads, names and options, and host-native entries read back by the reader.
#include "FatbinTestSupport.h"

#include "ptxforge/fatbin/Reader.h"
#include "ptxforge/fatbin/Writer.h"

using namespace ptxforge::fatbin;
using namespace ptxforge::fatbin::test;

namespace {

Container parseOne(const std::vector<uint8_t> &Bytes) {
  Fatbinary F = take(parseFatbinary(Bytes));
  REQUIRE(F.Containers.size() == 1);
  return F.Containers.front();
}

/// Rebuilds E from its decoded fields and decompressed contents, as a producer of new fatbins would.
void addFromFields(FatbinWriter &W, const Entry &E) {
  EntryDesc D;
  D.Arch = E.arch();
  D.TargetFlags =
      E.Header.Flags & ~(DefaultHostFlags | flagBits(EntryFlag::CompressedZstd) | flagBits(EntryFlag::CompressedLz4));
  D.Name = E.Name.str();
  D.Options = E.Options.str();
  D.Compress = E.Header.compression();
  D.Version = CodeVersion{E.Header.MajorVersion, E.Header.MinorVersion};
  if (E.isPtx()) {
    W.addPtx(take(E.ptxText()), D);
    return;
  }
  std::vector<uint8_t> Cubin = take(E.contents());
  W.addElf(Cubin, D);
}

void checkSameEntries(const Container &A, const Container &B) {
  REQUIRE(A.Entries.size() == B.Entries.size());
  for (size_t I = 0; I < A.Entries.size(); ++I) {
    const Entry &X = A.Entries[I], &Y = B.Entries[I];
    CAPTURE(I);
    CHECK(X.kind() == Y.kind());
    CHECK(X.archName() == Y.archName());
    CHECK(X.Header.Flags == Y.Header.Flags);
    CHECK(X.Header.HeaderSize == Y.Header.HeaderSize);
    CHECK(X.Header.MajorVersion == Y.Header.MajorVersion);
    CHECK(X.Header.MinorVersion == Y.Header.MinorVersion);
    CHECK(X.Header.UncompressedSize == Y.Header.UncompressedSize);
    CHECK(X.Name == Y.Name);
    CHECK(X.Options == Y.Options);
    CHECK(take(X.contents()) == take(Y.contents()));
  }
}

} // namespace

TEST_CASE("rewriting the uncompressed sample reproduces NVIDIA's bytes") {
  std::vector<uint8_t> Original = readBytes(samplePath("fb_sm75_sm90_no_compress.fatbin"));
  Container C = parseOne(Original);

  FatbinWriter Copy;
  for (const Entry &E : C.Entries)
    Copy.addCopy(E);
  CHECK(take(Copy.write()) == Original);

  // Built anew from the decoded fields, the headers come out as NVIDIA's tool writes them.
  FatbinWriter Fresh;
  for (const Entry &E : C.Entries)
    addFromFields(Fresh, E);
  std::vector<uint8_t> Rebuilt = take(Fresh.write());
  CHECK(Rebuilt == Original);
  checkSameEntries(parseOne(Rebuilt), C);
}

TEST_CASE("every single-container sample survives a verbatim rewrite and a rebuild") {
  for (const std::string &Name : fatbinSamples()) {
    if (Name == "fb_from_exe.fatbin")
      continue; // two containers; covered below
    CAPTURE(Name);
    std::vector<uint8_t> Original = readBytes(samplePath(Name));
    Container C = parseOne(Original);

    FatbinWriter Copy;
    for (const Entry &E : C.Entries)
      Copy.addCopy(E);
    CHECK(take(Copy.write()) == Original);

    // The 112-byte sm_100f ELF header carries a block the writer does not model; it is only copied.
    if (Name == "fb_fam_sm100f.fatbin")
      continue;
    FatbinWriter Fresh;
    for (const Entry &E : C.Entries)
      addFromFields(Fresh, E);
    checkSameEntries(parseOne(take(Fresh.write())), C);
  }
}

TEST_CASE("the two containers of fb_from_exe.fatbin rewrite one by one") {
  std::vector<uint8_t> Original = readBytes(samplePath("fb_from_exe.fatbin"));
  Fatbinary F = take(parseFatbinary(Original));
  std::vector<uint8_t> Joined;
  for (const Container &C : F.Containers) {
    FatbinWriter W;
    for (const Entry &E : C.Entries)
      W.addCopy(E);
    std::vector<uint8_t> Bytes = take(W.write());
    CHECK(llvm::ArrayRef<uint8_t>(Bytes) == C.Bytes);
    Joined.insert(Joined.end(), Bytes.begin(), Bytes.end());
  }
  CHECK(Joined == Original);
}

TEST_CASE("new entries: zstd and LZ4 PTX, names, options, ELF, host-native code") {
  const std::string Ptx = ".version 8.5\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n";
  const std::vector<uint8_t> Cubin = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0x41, 9, 9, 9};
  const std::vector<uint8_t> HostObject = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0x3e, 0, 1, 2, 3};

  FatbinWriter W;
  EntryDesc Plain;
  Plain.Arch = 80;
  W.addPtx(Ptx, Plain);
  EntryDesc Zstd = Plain;
  Zstd.Compress = Compression::Zstd;
  Zstd.Options = " --generate-line-info";
  W.addPtx(Ptx, Zstd);
  EntryDesc Lz4 = Plain;
  Lz4.Compress = Compression::Lz4;
  Lz4.Name = "kernel.cu";
  Lz4.TargetFlags = flagBits(EntryFlag::ArchSpecific);
  W.addPtx(Ptx, Lz4);
  EntryDesc Elf;
  Elf.Arch = 90;
  Elf.Name = "lto";
  W.addElf(Cubin, Elf);
  W.addHostNative(HostObject, 80, "x86-64-v3");
  W.addHostNative(HostObject, 80, "x86-64", Compression::Zstd);
  CHECK(W.numEntries() == 6);

  std::vector<uint8_t> Bytes = take(W.write()); // the parsed entries point into it
  Container C = parseOne(Bytes);
  REQUIRE(C.Entries.size() == 6);
  const Entry &P0 = C.Entries[0], &P1 = C.Entries[1], &P2 = C.Entries[2], &E = C.Entries[3];
  const Entry &H0 = C.Entries[4], &H1 = C.Entries[5];

  CHECK(P0.isPtx());
  CHECK(P0.Header.HeaderSize == 80);
  CHECK(P0.Header.Flags == 0x11);
  CHECK(P0.Header.MajorVersion == 8);
  CHECK(P0.Header.MinorVersion == 5);
  CHECK(take(P0.ptxText()) == Ptx);
  CHECK(P0.Header.PayloadSize % 8 == 0);

  CHECK(P1.Header.Flags == 0x8011);
  CHECK(P1.Header.UncompressedSize == Ptx.size() + 1);
  CHECK(P1.Header.CompressedSize <= P1.Header.PayloadSize);
  CHECK(P1.Options == " --generate-line-info");
  CHECK(take(P1.ptxText()) == Ptx);

  CHECK(P2.Header.Flags == (0x2011 | 0x100000));
  CHECK(P2.archName() == "sm_80a");
  CHECK(P2.Name == "kernel.cu");
  CHECK(take(P2.ptxText()) == Ptx);

  CHECK(E.isElf());
  CHECK(E.Header.OptionsOffset == 0);
  CHECK(E.Header.MajorVersion == 1);
  CHECK(E.Header.MinorVersion == 8);
  CHECK(E.Name == "lto");
  std::vector<uint8_t> Stored = take(E.contents());
  CHECK(std::equal(Cubin.begin(), Cubin.end(), Stored.begin()));

  CHECK(H0.isHostNative());
  CHECK(static_cast<uint16_t>(H0.kind()) == 0x4650);
  CHECK(H0.arch() == 80);
  CHECK(H0.Options == "x86-64-v3");
  CHECK(kindName(H0.kind()) == "host");
  CHECK(H1.Options == "x86-64");
  CHECK(H1.isCompressed());
  std::vector<uint8_t> Unpacked = take(H1.contents());
  CHECK(Unpacked == HostObject);
}

TEST_CASE("an empty writer gives an empty container the reader accepts") {
  FatbinWriter W;
  std::vector<uint8_t> Bytes = take(W.write());
  CHECK(Bytes.size() == 16);
  CHECK(parseOne(Bytes).Entries.empty());
}
