// The reader on every sample in shared/fatbins: header fields against fatbin_dump_output.txt and the
// README, decompressed PTX and ELF payloads, the ELF executable's section and wrappers, and memory images.
#include "FatbinTestSupport.h"

#include "ptxforge/fatbin/MemoryImage.h"
#include "ptxforge/fatbin/Reader.h"
#include "ptxforge/fatbin/Writer.h"

#include "llvm/Object/ObjectFile.h"

#include <cstdio>
#include <map>
#include <sstream>

using namespace ptxforge::fatbin;
using namespace ptxforge::fatbin::test;

namespace {

/// One entry line of fatbin_dump_output.txt.
struct DumpedEntry {
  unsigned long long Offset = 0, PayloadSize = 0, Flags = 0, UncompressedSize = 0;
  std::string Kind;
  unsigned Arch = 0, HeaderSize = 0, Field10 = 0, Field14 = 0, Major = 0, Minor = 0;
};
struct DumpedContainer {
  unsigned long long Offset = 0, PayloadSize = 0;
  unsigned Version = 0, HeaderSize = 0;
  std::vector<DumpedEntry> Entries;
};
struct DumpedFile {
  size_t Size = 0;
  std::vector<DumpedContainer> Containers;
};

/// Parses the output of fatbin_dump.py recorded next to the samples.
std::map<std::string, DumpedFile> parseDump(const std::string &Text) {
  std::map<std::string, DumpedFile> Files;
  DumpedFile *Cur = nullptr;
  std::istringstream In(Text);
  for (std::string Line; std::getline(In, Line);) {
    char Name[256], Kind[8], Compressed[8];
    size_t Size;
    DumpedContainer C;
    DumpedEntry E;
    if (std::sscanf(Line.c_str(), "== fatbins/%255s (%zu bytes)", Name, &Size) == 2) {
      Cur = &Files[Name];
      Cur->Size = Size;
    } else if (Cur && std::sscanf(Line.c_str(), "  container @0x%llx: version=%u header=%u payload=%llu", &C.Offset,
                                  &C.Version, &C.HeaderSize, &C.PayloadSize) == 4) {
      Cur->Containers.push_back(C);
    } else if (Cur && !Cur->Containers.empty() &&
               std::sscanf(Line.c_str(),
                           "    entry @0x%llx: %7s sm_%u hdr=%u payload=%llu field10=%u field14=0x%x ver=%u.%u "
                           "flags=0x%llx uncompressed_size=%llu compressed=%7s",
                           &E.Offset, Kind, &E.Arch, &E.HeaderSize, &E.PayloadSize, &E.Field10, &E.Field14, &E.Major,
                           &E.Minor, &E.Flags, &E.UncompressedSize, Compressed) == 12) {
      E.Kind = Kind;
      Cur->Containers.back().Entries.push_back(E);
    }
  }
  return Files;
}

FatbinaryFile openSample(const std::string &Name) { return take(FatbinaryFile::open(samplePath(Name))); }

/// (kind, arch name, flags) of every entry, for the samples fatbin_dump.py was not run on (README table).
struct EntryFacts {
  EntryKind Kind;
  const char *Arch;
  uint64_t Flags;
};

} // namespace

TEST_CASE("every entry matches fatbin_dump_output.txt") {
  auto Dump = parseDump(readText(samplePath("fatbin_dump_output.txt")));
  REQUIRE(Dump.size() == 8);
  for (auto &Item : Dump) {
    const std::string &Name = Item.first;
    const DumpedFile &Expected = Item.second;
    CAPTURE(Name);
    FatbinaryFile File = openSample(Name);
    CHECK(readBytes(samplePath(Name)).size() == Expected.Size);
    const Fatbinary &F = File.fatbinary();
    REQUIRE(F.Containers.size() == Expected.Containers.size());
    for (size_t CI = 0; CI < F.Containers.size(); ++CI) {
      const Container &C = F.Containers[CI];
      const DumpedContainer &DC = Expected.Containers[CI];
      CHECK(C.Offset == DC.Offset);
      CHECK(C.Header.Version == DC.Version);
      CHECK(C.Header.HeaderSize == DC.HeaderSize);
      CHECK(C.Header.PayloadSize == DC.PayloadSize);
      REQUIRE(C.Entries.size() == DC.Entries.size());
      for (size_t EI = 0; EI < C.Entries.size(); ++EI) {
        const EntryHeader &H = C.Entries[EI].Header;
        const DumpedEntry &DE = DC.Entries[EI];
        CAPTURE(EI);
        CHECK(C.Entries[EI].Offset == DE.Offset);
        CHECK(kindName(H.Kind) == (DE.Kind == "PTX" ? "ptx" : "elf"));
        CHECK(H.Arch == DE.Arch);
        CHECK(H.HeaderSize == DE.HeaderSize);
        CHECK(H.PayloadSize == DE.PayloadSize);
        CHECK(H.CompressedSize == DE.Field10);
        CHECK(H.OptionsOffset == DE.Field14);
        CHECK(H.MajorVersion == DE.Major);
        CHECK(H.MinorVersion == DE.Minor);
        CHECK(H.Flags == DE.Flags);
        CHECK(H.UncompressedSize == DE.UncompressedSize);
        CHECK(C.Entries[EI].isCompressed() == ((DE.Flags & 0xa000) != 0));
      }
    }
  }
}

TEST_CASE("entry kinds, archs and flags of the selection and family samples") {
  const uint64_t Zstd = 0x8011, Plain = 0x11, A = 0x100000, F = 0x200000;
  const std::map<std::string, std::vector<EntryFacts>> Facts = {
      {"fb_sel_a_sm75_cp75.fatbin", {{EntryKind::Elf, "sm_75", Plain}, {EntryKind::Ptx, "sm_75", Zstd}}},
      {"fb_sel_b_sm80_cp80_sm90.fatbin",
       {{EntryKind::Elf, "sm_80", Plain}, {EntryKind::Ptx, "sm_80", Zstd}, {EntryKind::Elf, "sm_90", Plain}}},
      {"fb_sel_c_cp75_cp90.fatbin", {{EntryKind::Ptx, "sm_75", Zstd}, {EntryKind::Ptx, "sm_90", Zstd}}},
      {"fb_sel_d_cp100.fatbin", {{EntryKind::Ptx, "sm_100", Zstd}}},
      {"fb_sel_e1_sm90a.fatbin", {{EntryKind::Elf, "sm_90a", Plain | A}}},
      {"fb_sel_e2_cp90a.fatbin", {{EntryKind::Ptx, "sm_90a", Zstd | A}}},
      {"fb_sel_e3_sm90a_cp90a.fatbin", {{EntryKind::Elf, "sm_90a", Plain | A}, {EntryKind::Ptx, "sm_90a", Zstd | A}}},
      {"fb_fam_cp100f.fatbin", {{EntryKind::Ptx, "sm_100f", Zstd | F}}},
      {"fb_fam_sm100f.fatbin", {{EntryKind::Elf, "sm_100f", 0x1200011}}},
  };
  for (auto &Item : Facts) {
    const std::string &Name = Item.first;
    const std::vector<EntryFacts> &Expected = Item.second;
    CAPTURE(Name);
    FatbinaryFile File = openSample(Name);
    REQUIRE(File.fatbinary().Containers.size() == 1);
    auto Entries = File.fatbinary().entries();
    REQUIRE(Entries.size() == Expected.size());
    for (size_t I = 0; I < Entries.size(); ++I) {
      CHECK(Entries[I]->kind() == Expected[I].Kind);
      CHECK(Entries[I]->archName() == Expected[I].Arch);
      CHECK(Entries[I]->Header.Flags == Expected[I].Flags);
      CHECK(Entries[I]->Header.HeaderSize == (Entries[I]->isPtx() ? 80u : Name == "fb_fam_sm100f.fatbin" ? 112u : 64u));
    }
  }
}

TEST_CASE("PTX entries decompress to PTX for their arch") {
  for (const std::string &Name : fatbinSamples()) {
    CAPTURE(Name);
    FatbinaryFile File = openSample(Name);
    for (const Entry *E : File.fatbinary().entries()) {
      if (!E->isPtx())
        continue;
      std::string Text = take(E->ptxText());
      llvm::StringRef T(Text);
      CHECK(T.ltrim().starts_with(".version "));
      CHECK(T.contains(".target " + E->archName()));
      CHECK(T.contains(".entry"));
      CHECK(T.contains("fb_square_plus"));
      CHECK(E->Options.empty());
      CHECK(E->Name.empty());
      // NVIDIA stores the NUL terminator: the declared size is the text plus one.
      if (E->isCompressed())
        CHECK(E->Header.UncompressedSize == Text.size() + 1);
    }
  }
}

TEST_CASE("compressed and uncompressed samples hold the same code") {
  FatbinaryFile Plain = openSample("fb_sm75_sm90_no_compress.fatbin");
  for (const char *Name :
       {"fb_sm75_sm90_default.fatbin", "fb_sm75_sm90_compress_all.fatbin", "fb_sm75_sm90_compress_mode_size.fatbin"}) {
    CAPTURE(Name);
    FatbinaryFile Other = openSample(Name);
    auto A = Plain.fatbinary().entries(), B = Other.fatbinary().entries();
    REQUIRE(A.size() == B.size());
    for (size_t I = 0; I < A.size(); ++I) {
      CHECK(A[I]->kind() == B[I]->kind());
      CHECK(A[I]->arch() == B[I]->arch());
      if (A[I]->isPtx()) {
        CHECK(take(A[I]->ptxText()) == take(B[I]->ptxText()));
        continue;
      }
      std::vector<uint8_t> Cubin = take(B[I]->contents());
      REQUIRE(Cubin.size() >= 4);
      CHECK(Cubin[0] == 0x7f);
      CHECK(Cubin[1] == 'E');
      CHECK(take(A[I]->contents()) == Cubin);
    }
  }
}

TEST_CASE("the family-specific ELF entry keeps its 112-byte header") {
  FatbinaryFile File = openSample("fb_fam_sm100f.fatbin");
  const Entry &E = *File.fatbinary().entries().front();
  CHECK(E.RawHeader.size() == 112);
  CHECK(E.Header.OptionsOffset == 0x40);
  CHECK(E.Header.isFamilySpecific());
  CHECK_FALSE(E.Header.isArchSpecific());
  std::vector<uint8_t> Cubin = take(E.contents());
  CHECK(Cubin.size() == E.Header.PayloadSize);
  CHECK(Cubin[0] == 0x7f);
}

TEST_CASE("the ELF executable's .nv_fatbin section equals fb_from_exe.fatbin") {
  FatbinaryFile Exe = openSample(ExeSample);
  FatbinaryFile Section = openSample("fb_from_exe.fatbin");
  CHECK(Exe.format() == InputFormat::Elf);
  CHECK(Section.format() == InputFormat::Fatbin);
  REQUIRE(Exe.fatbinary().Containers.size() == 2);
  REQUIRE(Section.fatbinary().Containers.size() == 2);
  for (size_t I = 0; I < 2; ++I) {
    CHECK(Exe.fatbinary().Containers[I].Bytes == Section.fatbinary().Containers[I].Bytes);
    CHECK(Exe.fatbinary().Containers[I].Offset == Section.fatbinary().Containers[I].Offset);
  }
  CHECK(Exe.fatbinary().Containers[0].Bytes.size() == 3152);
  CHECK(Exe.fatbinary().Containers[1].Offset == 3152);
  CHECK(Exe.fatbinary().Containers[1].Bytes.size() == 9392);
  // Container 0 is the dummy link module: SASS for both archs and no PTX.
  for (const Entry &E : Exe.fatbinary().Containers[0].Entries)
    CHECK(E.isElf());
  // Container 1 equals the standalone default fatbinary.
  FatbinaryFile Default = openSample("fb_sm75_sm90_default.fatbin");
  CHECK(Exe.fatbinary().Containers[1].Bytes == Default.fatbinary().Containers[0].Bytes);
}

TEST_CASE("wrappers in .nvFatBinSegment are followed through the ELF image") {
  std::vector<uint8_t> Bytes = readBytes(samplePath(ExeSample));
  auto Buffer = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(reinterpret_cast<const char *>(Bytes.data()), Bytes.size()), ExeSample, false);
  auto Obj = take(llvm::object::ObjectFile::createObjectFile(Buffer->getMemBufferRef()));
  auto Image = take(ElfMemoryImage::create(*Obj));
  std::vector<WrapperContents> Wrappers = take(readElfWrappers(*Obj, *Image));
  REQUIRE(Wrappers.size() == 2);
  // nvlink's wrapper for the dummy link module is version 2 with an empty prelinked array in .bss.
  CHECK(Wrappers[0].Header.Version == 2);
  CHECK(Wrappers[0].Header.Data == 0x2020);
  CHECK(Wrappers[0].Header.FilenameOrFatbins == 0x70f0);
  CHECK(Wrappers[0].Prelinked.empty());
  CHECK(Wrappers[0].Main.Bytes.size() == 3152);
  CHECK(Wrappers[1].Header.Version == 1);
  CHECK(Wrappers[1].Header.Data == 0x2c70);
  CHECK(Wrappers[1].Main.Bytes.size() == 9392);
  FatbinaryFile Section = openSample("fb_from_exe.fatbin");
  CHECK(Wrappers[0].Main.Bytes == Section.fatbinary().Containers[0].Bytes);
  CHECK(Wrappers[1].Main.Bytes == Section.fatbinary().Containers[1].Bytes);

  // Addresses outside every loaded section are errors, not reads.
  CHECK(errorOf(readWrapper(*Image, 0x10)).find("not in a loaded section") != std::string::npos);
  CHECK(errorOf(readContainerAt(*Image, ~uint64_t(0) - 4)).find("wraps around") != std::string::npos);
}

namespace {
/// A wrapper as nvcc lays it out in the host program.
struct alignas(8) HostWrapper {
  uint32_t Magic;
  uint32_t Version;
  const void *Data;
  const void *FilenameOrFatbins;
};
static_assert(sizeof(HostWrapper) == WrapperSize);
} // namespace

TEST_CASE("wrappers in this process's memory, versions 1 and 2") {
  std::vector<uint8_t> A = readBytes(samplePath("fb_sm75_sm90_default.fatbin"));
  std::vector<uint8_t> B = readBytes(samplePath("fb_sel_c_cp75_cp90.fatbin"));
  std::vector<uint8_t> C = readBytes(samplePath("fb_ptx_only_compute75.fatbin"));
  ProcessMemoryImage Self;
  auto Address = [](const void *P) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(P)); };

  HostWrapper V1{WrapperMagic, 1, A.data(), nullptr};
  WrapperContents W1 = take(readWrapper(Self, Address(&V1)));
  CHECK(W1.Main.Entries.size() == 4);
  CHECK(W1.Prelinked.empty());

  const void *Prelinked[] = {B.data(), C.data(), nullptr};
  HostWrapper V2{WrapperMagic, 2, A.data(), Prelinked};
  WrapperContents W2 = take(readWrapper(Self, Address(&V2)));
  REQUIRE(W2.Prelinked.size() == 2);
  CHECK(W2.Prelinked[0].Entries.size() == 2);
  CHECK(W2.Prelinked[1].Entries.size() == 1);

  const void *Looping[] = {B.data(), B.data(), nullptr};
  HostWrapper Loop{WrapperMagic, 2, A.data(), Looping};
  CHECK(errorOf(readWrapper(Self, Address(&Loop))).find("twice") != std::string::npos);

  HostWrapper NullData{WrapperMagic, 1, nullptr, nullptr};
  CHECK(errorOf(readWrapper(Self, Address(&NullData))).find("null data pointer") != std::string::npos);
  HostWrapper BadVersion{WrapperMagic, 7, A.data(), nullptr};
  CHECK(errorOf(readWrapper(Self, Address(&BadVersion))).find("unsupported version 7") != std::string::npos);
  HostWrapper BadMagic{0x12345678, 1, A.data(), nullptr};
  CHECK(errorOf(readWrapper(Self, Address(&BadMagic))).find("bad magic") != std::string::npos);
  CHECK(errorOf(readWrapper(Self, 0)).find("null pointer") != std::string::npos);
}

TEST_CASE("identifyImage and the wrapper handed in as a file") {
  CHECK(identifyImage(readBytes(samplePath("fb_sel_d_cp100.fatbin"))) == ImageFormat::Container);
  CHECK(identifyImage(readBytes(samplePath(ExeSample))) == ImageFormat::Elf);
  const uint8_t WrapperBytes[] = {0xb1, 0x43, 0x62, 0x46, 1, 0, 0, 0};
  CHECK(identifyImage(WrapperBytes) == ImageFormat::Wrapper);
  const uint8_t Ptx[] = {'.', 'v', 'e', 'r'};
  CHECK(identifyImage(Ptx) == ImageFormat::Unknown);
  CHECK(identifyImage({}) == ImageFormat::Unknown);

  auto Buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char *>(WrapperBytes), sizeof(WrapperBytes)), "wrapper");
  CHECK(errorOf(FatbinaryFile::fromBuffer(std::move(Buffer))).find("__fatBinC_Wrapper_t") != std::string::npos);
  CHECK(errorOf(FatbinaryFile::open(samplePath("does-not-exist.fatbin"))).find("does-not-exist") != std::string::npos);
  CHECK(errorOf(FatbinaryFile::open(samplePath("README.md"))).find("not a fatbinary") != std::string::npos);
}

TEST_CASE("ptxIsaVersion reads the .version directive") {
  auto V = ptxIsaVersion("//\n// Generated\n\n.version 8.7\n.target sm_90\n");
  REQUIRE(V);
  CHECK(V->Major == 8);
  CHECK(V->Minor == 7);
  CHECK_FALSE(ptxIsaVersion(".target sm_90\n"));
  CHECK_FALSE(ptxIsaVersion(".version x.y\n"));
}
