// The driver's module loader (driver::selectPtx) on fatbinaries with host-native entries, for the compute
// capabilities the issue names: host code for exactly the device's CC and the best ISA level this CPU runs
// first, else the best PTX, JIT-compiled; CUDA_FORCE_PTX_JIT=1 skips host code. Expectations follow from the ISA
// levels this CPU reports, so the table holds on any x86-64 machine.
#include "HostNativeTestSupport.h"

#include "ptxforge/driver/Module.h"
#include "ptxforge/driver/Status.h"
#include "ptxforge/fatbin/HostIsa.h"
#include "ptxforge/fatbin/Writer.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cstdlib>

using namespace ptxforge;
using namespace ptxforge::fatbin;
using namespace ptxforge::fatbin::test;

namespace {

bool hostRuns(const std::string &Level) {
  static const std::vector<std::string> Levels = hostIsaLevels();
  return std::find(Levels.begin(), Levels.end(), Level) != Levels.end();
}

/// What the loader reports choosing: "host sm_86 x86-64-v4", "ptx sm_75", or "error <status>".
std::string loaded(const std::vector<uint8_t> &Fatbin, unsigned CC) {
  driver::ModuleSource Source;
  Source.K = driver::ModuleSource::Kind::Image;
  Source.Image = Fatbin.data();
  driver::JitLogs Logs;
  auto S = driver::selectPtx(Source, CC, Logs);
  if (!S)
    return "error " + std::to_string(static_cast<int>(driver::takeStatus(S.takeError())));
  llvm::StringRef Name(S->Name);
  REQUIRE(Name.consume_front("fatbinary:"));
  if (!S->Object.empty()) {
    CHECK(S->Text.empty());
    auto [Arch, Rest] = Name.split('.');
    return "host " + Arch.str() + " " + Rest.drop_back(2).str(); // "x86-64-v4.o"
  }
  CHECK_FALSE(S->Text.empty());
  return "ptx " + Name.drop_back(4).str(); // "sm_75.ptx"
}

struct ForcePtxJit {
  ForcePtxJit() { ::setenv("CUDA_FORCE_PTX_JIT", "1", 1); }
  ~ForcePtxJit() { ::unsetenv("CUDA_FORCE_PTX_JIT"); }
};

} // namespace

TEST_CASE("the loader picks the entry the rules demand for CC 7.5, 8.0, 8.6, 9.0, 10.0 and 12.0") {
  // What `-gencode arch=compute_75,code=[sm_75,compute_75] -gencode arch=compute_86,code=sm_86
  // -gencode arch=compute_90,code=[sm_90,compute_90] -gencode arch=compute_100,code=[sm_100,compute_100]` with
  // several --host-native levels gives, plus an sm_100 entry for a level no CPU has.
  std::string Object = saxpyObject("x86-64").serialize();
  llvm::ArrayRef<uint8_t> Code = llvm::arrayRefFromStringRef(Object);
  FatbinWriter W;
  auto addPtx = [&](uint32_t Arch) {
    EntryDesc D;
    D.Arch = Arch;
    D.Compress = Compression::Zstd;
    W.addPtx(".version 9.0\n.target sm_" + std::to_string(Arch) + "\n", D);
  };
  W.addHostNative(Code, 75, "x86-64-v2", Compression::Zstd);
  addPtx(75);
  W.addHostNative(Code, 86, "x86-64-v3");
  W.addHostNative(Code, 86, "x86-64-v4");
  W.addHostNative(Code, 90, "x86-64");
  W.addHostNative(Code, 90, "x86-64-v4");
  addPtx(90);
  W.addHostNative(Code, 100, "x86-64-v9");
  addPtx(100);
  std::vector<uint8_t> Fatbin = take(W.write());

  const std::string V4 = hostRuns("x86-64-v4") ? "x86-64-v4" : "";
  const std::string V3 = hostRuns("x86-64-v3") ? "x86-64-v3" : "";
  struct Row {
    unsigned CC;
    std::string Default, Forced;
  };
  const Row Rows[] = {
      {75, hostRuns("x86-64-v2") ? "host sm_75 x86-64-v2" : "ptx sm_75", "ptx sm_75"},
      {80, "ptx sm_75", "ptx sm_75"}, // no host code for 8.0: the best PTX below it
      {86,
       !V4.empty()   ? "host sm_86 " + V4
       : !V3.empty() ? "host sm_86 " + V3
                     : "ptx sm_75",
       "ptx sm_75"},
      {90, "host sm_90 " + (V4.empty() ? std::string("x86-64") : V4), "ptx sm_90"},
      {100, "ptx sm_100", "ptx sm_100"}, // its host code needs an ISA level this CPU lacks
      {120, "ptx sm_100", "ptx sm_100"}, // host code is for one CC only; PTX runs on later ones
  };
  for (const Row &R : Rows) {
    CAPTURE(R.CC);
    CHECK(loaded(Fatbin, R.CC) == R.Default);
    ForcePtxJit Force;
    CHECK(loaded(Fatbin, R.CC) == R.Forced);
  }
}

TEST_CASE("a host-native-only fatbin loads only on its CC, and runs with the PTX JIT disabled") {
  std::string Object = saxpyObject("x86-64").serialize();
  FatbinWriter W;
  W.addHostNative(llvm::arrayRefFromStringRef(Object), 90, "x86-64", Compression::Zstd);
  std::vector<uint8_t> Fatbin = take(W.write());
  CHECK(loaded(Fatbin, 90) == "host sm_90 x86-64");
  ::setenv("CUDA_DISABLE_PTX_JIT", "1", 1);
  CHECK(loaded(Fatbin, 90) == "host sm_90 x86-64");
  ::unsetenv("CUDA_DISABLE_PTX_JIT");
  const std::string NoBinary = "error " + std::to_string(static_cast<int>(driver::Status::NoBinaryForGpu));
  CHECK(loaded(Fatbin, 89) == NoBinary);
  ForcePtxJit Force; // host code skipped, no PTX left
  CHECK(loaded(Fatbin, 90) == NoBinary);
}

TEST_CASE("host code another ptxforge version made gives way to the PTX beside it, like a cubin the GPU cannot run") {
  std::string Object = saxpyObject("x86-64").serialize();
  CHECK_FALSE(codegen::CompiledObject::isOtherVersion(Object));
  // The header: 8 bytes of magic, then the u32 format version (little endian).
  Object[8] = static_cast<char>(codegen::CompiledObject::FormatVersion - 1);
  CHECK(codegen::CompiledObject::isOtherVersion(Object));
  CHECK_FALSE(codegen::CompiledObject::isOtherVersion("not an object at all, and long enough for a header"));
  auto fatbin = [&](bool WithPtx) {
    FatbinWriter W;
    W.addHostNative(llvm::arrayRefFromStringRef(Object), 90, "x86-64", Compression::Zstd);
    if (WithPtx) {
      EntryDesc D;
      D.Arch = 90;
      W.addPtx(".version 9.0\n.target sm_90\n", D);
    }
    return take(W.write());
  };
  CHECK(loaded(fatbin(true), 90) == "ptx sm_90");
  // Without PTX the entry is chosen as before, and loading it reports the version (Module::load: invalid image).
  CHECK(loaded(fatbin(false), 90) == "host sm_90 x86-64");
  CHECK(errorText(codegen::CompiledObject::deserialize(Object).takeError()).find("format version") !=
        std::string::npos);
}
