// Entry selection: every row of the README's table (observed on a 9.0 GPU) with the PTX-only adaptation,
// the `a` and `f` target rules, host-native preference and the JIT switches.
#include "FatbinTestSupport.h"

#include "ptxforge/fatbin/HostIsa.h"
#include "ptxforge/fatbin/Reader.h"
#include "ptxforge/fatbin/Selection.h"
#include "ptxforge/fatbin/Writer.h"

#include <cstdlib>
#include <map>

using namespace ptxforge::fatbin;
using namespace ptxforge::fatbin::test;

namespace {

enum class Policy { Default, ForcePtxJit, DisablePtxJit };

SelectionRequest request(unsigned CC, Policy P, std::vector<std::string> Isa = {}) {
  SelectionRequest R;
  R.ComputeCapability = CC;
  R.HostIsaLevels = std::move(Isa);
  R.Jit.ForcePtxJit = P == Policy::ForcePtxJit;
  R.Jit.DisablePtxJit = P == Policy::DisablePtxJit;
  return R;
}

/// The expected outcome: a status and, when selected, the chosen entry's kind and arch name.
struct Outcome {
  SelectionStatus Status;
  const char *Arch = nullptr;
  EntryKind Kind = EntryKind::Ptx;
};
const Outcome JitDisabled{SelectionStatus::JitDisabled};
const Outcome NoBinary{SelectionStatus::NoBinaryForGpu};
const Outcome PtxMissing{SelectionStatus::PtxMissing};
Outcome ptx(const char *Arch) { return {SelectionStatus::Selected, Arch, EntryKind::Ptx}; }
Outcome host(const char *Isa) { return {SelectionStatus::Selected, Isa, EntryKind::HostNative}; }

void checkOutcome(const Selection &S, const Outcome &Want) {
  CAPTURE(S.Message);
  CHECK(S.Status == Want.Status);
  CHECK(!S.Message.empty());
  if (Want.Status != SelectionStatus::Selected) {
    CHECK(S.Chosen == nullptr);
    return;
  }
  REQUIRE(S.Chosen != nullptr);
  CHECK(S.Chosen->kind() == Want.Kind);
  CHECK((Want.Kind == EntryKind::HostNative ? S.Chosen->Options.str() : S.Chosen->archName()) == Want.Arch);
}

Selection selectFromSample(const std::string &Name, const SelectionRequest &R) {
  static std::map<std::string, FatbinaryFile> Cache;
  auto It = Cache.find(Name);
  if (It == Cache.end())
    It = Cache.emplace(Name, take(FatbinaryFile::open(samplePath(Name)))).first;
  return selectEntry(It->second.fatbinary().Containers.front().Entries, R);
}

} // namespace

TEST_CASE("the README's selection table on a 9.0 device, PTX-only") {
  // Where NVIDIA's driver runs SASS, ptxforge runs the best PTX; where it would JIT, so does ptxforge.
  struct Row {
    const char *File;
    Outcome Default, Force, Disable;
  };
  const Row Rows[] = {
      // SASS sm_75 + PTX compute_75: JIT compute_75 / JIT compute_75 / JIT disabled.
      {"fb_sel_a_sm75_cp75.fatbin", ptx("sm_75"), ptx("sm_75"), JitDisabled},
      // SASS sm_80 + PTX compute_80 + SASS sm_90: NVIDIA runs SASS sm_90 (default, disable); PTX 80 here,
      // and with JIT disabled nothing ptxforge can run is left.
      {"fb_sel_b_sm80_cp80_sm90.fatbin", ptx("sm_80"), ptx("sm_80"), JitDisabled},
      // PTX compute_75 + compute_90: the highest PTX not above the device.
      {"fb_sel_c_cp75_cp90.fatbin", ptx("sm_90"), ptx("sm_90"), JitDisabled},
      // PTX compute_100 only: newer than the device.
      {"fb_sel_d_cp100.fatbin", NoBinary, NoBinary, NoBinary},
      // SASS sm_90a only: NVIDIA runs it except under force-JIT; without PTX ptxforge has nothing.
      {"fb_sel_e1_sm90a.fatbin", PtxMissing, PtxMissing, PtxMissing},
      // PTX compute_90a only: JIT on exactly 9.0.
      {"fb_sel_e2_cp90a.fatbin", ptx("sm_90a"), ptx("sm_90a"), JitDisabled},
      // SASS sm_90a + PTX compute_90a: NVIDIA runs SASS (default, disable), JIT under force.
      {"fb_sel_e3_sm90a_cp90a.fatbin", ptx("sm_90a"), ptx("sm_90a"), JitDisabled},
  };
  for (const Row &R : Rows) {
    CAPTURE(R.File);
    checkOutcome(selectFromSample(R.File, request(90, Policy::Default)), R.Default);
    checkOutcome(selectFromSample(R.File, request(90, Policy::ForcePtxJit)), R.Force);
    checkOutcome(selectFromSample(R.File, request(90, Policy::DisablePtxJit)), R.Disable);
  }
}

TEST_CASE("the other samples on other devices") {
  struct Row {
    const char *File;
    unsigned CC;
    Outcome Want;
  };
  const Row Rows[] = {
      {"fb_sel_e2_cp90a.fatbin", 100, NoBinary}, // `a` runs on exactly its CC
      {"fb_sel_e2_cp90a.fatbin", 89, NoBinary},
      {"fb_sel_d_cp100.fatbin", 100, ptx("sm_100")},
      {"fb_sel_d_cp100.fatbin", 120, ptx("sm_100")},
      {"fb_fam_cp100f.fatbin", 100, ptx("sm_100f")}, // `f` runs within its family
      {"fb_fam_cp100f.fatbin", 103, ptx("sm_100f")},
      {"fb_fam_cp100f.fatbin", 90, NoBinary},
      {"fb_fam_cp100f.fatbin", 110, NoBinary},
      {"fb_fam_cp100f.fatbin", 120, NoBinary},
      {"fb_fam_sm100f.fatbin", 100, PtxMissing},
      {"fb_sass_only_sm90.fatbin", 90, PtxMissing},
      {"fb_sm75_sm90_default.fatbin", 75, ptx("sm_75")},
      {"fb_sm75_sm90_default.fatbin", 86, ptx("sm_75")},
      {"fb_sm75_sm90_default.fatbin", 120, ptx("sm_90")},
      {"fb_sm75_sm90_no_compress.fatbin", 90, ptx("sm_90")},
      {"fb_ptx_only_compute75.fatbin", 70, NoBinary},
  };
  for (const Row &R : Rows) {
    CAPTURE(R.File);
    CAPTURE(R.CC);
    checkOutcome(selectFromSample(R.File, request(R.CC, Policy::Default)), R.Want);
  }
}

TEST_CASE("isCompatible: plain, `a` and `f` targets") {
  const uint64_t A = flagBits(EntryFlag::ArchSpecific), F = flagBits(EntryFlag::FamilySpecific);
  struct Row {
    uint32_t Arch;
    uint64_t Flags;
    unsigned CC;
    bool Runs;
  };
  const Row Rows[] = {
      {75, 0, 75, true},    {75, 0, 90, true},    {90, 0, 86, false},   {100, 0, 120, true},  {90, A, 90, true},
      {90, A, 100, false},  {90, A, 89, false},   {100, A, 103, false}, {100, F, 100, true},  {100, F, 103, true},
      {100, F, 110, false}, {100, F, 120, false}, {100, F, 90, false},  {103, F, 100, false}, {103, F, 103, true},
      {120, F, 121, true},  {110, F, 110, true},  {120, F, 130, false},
  };
  for (const Row &R : Rows) {
    CAPTURE(R.Arch);
    CAPTURE(R.Flags);
    CAPTURE(R.CC);
    CHECK(isCompatible(R.Arch, R.Flags, R.CC) == R.Runs);
  }
}

TEST_CASE("host-native entries win for their exact CC and a supported ISA level") {
  const std::vector<uint8_t> Object = {1, 2, 3, 4};
  FatbinWriter W;
  EntryDesc P;
  P.Arch = 75;
  W.addPtx(".version 9.0\n.target sm_75\n", P);
  W.addHostNative(Object, 90, "x86-64-v2");
  W.addHostNative(Object, 90, "x86-64-v3");
  W.addHostNative(Object, 80, "x86-64-v4");
  std::vector<uint8_t> Bytes = take(W.write());
  Fatbinary F = take(parseFatbinary(Bytes));
  llvm::ArrayRef<Entry> Entries = F.Containers.front().Entries;

  const std::vector<std::string> V4 = {"x86-64-v4", "x86-64-v3", "x86-64-v2", "x86-64"};
  const std::vector<std::string> V2 = {"x86-64-v2", "x86-64"};
  const std::vector<std::string> V1 = {"x86-64"};
  checkOutcome(selectEntry(Entries, request(90, Policy::Default, V4)), host("x86-64-v3"));
  checkOutcome(selectEntry(Entries, request(90, Policy::Default, V2)), host("x86-64-v2"));
  checkOutcome(selectEntry(Entries, request(90, Policy::Default, V1)), ptx("sm_75"));
  checkOutcome(selectEntry(Entries, request(90, Policy::Default)), ptx("sm_75"));
  // Precompiled code still runs with the JIT disabled, and is ignored when the JIT is forced.
  checkOutcome(selectEntry(Entries, request(90, Policy::DisablePtxJit, V4)), host("x86-64-v3"));
  checkOutcome(selectEntry(Entries, request(90, Policy::ForcePtxJit, V4)), ptx("sm_75"));
  checkOutcome(selectEntry(Entries, request(80, Policy::Default, V4)), host("x86-64-v4"));
  checkOutcome(selectEntry(Entries, request(80, Policy::Default, V2)), ptx("sm_75"));
  // Host code is for exactly one CC: 8.6 falls back to PTX.
  checkOutcome(selectEntry(Entries, request(86, Policy::Default, V4)), ptx("sm_75"));
  checkOutcome(selectEntry(Entries, request(86, Policy::DisablePtxJit, V4)), JitDisabled);

  // Host code alone, for another CC: nothing to run, and it is not SASS.
  FatbinWriter HostOnly;
  HostOnly.addHostNative(Object, 90, "x86-64");
  std::vector<uint8_t> HostBytes = take(HostOnly.write());
  Fatbinary H = take(parseFatbinary(HostBytes));
  checkOutcome(selectEntry(H.Containers.front().Entries, request(80, Policy::Default, V1)), NoBinary);
}

TEST_CASE("same-arch PTX: the `a` variant first on its own CC, the plain one elsewhere") {
  FatbinWriter W;
  EntryDesc Plain, Specific, Family;
  Plain.Arch = Specific.Arch = Family.Arch = 90;
  Specific.TargetFlags = flagBits(EntryFlag::ArchSpecific);
  Family.TargetFlags = flagBits(EntryFlag::FamilySpecific);
  W.addPtx(".version 9.0\n", Plain);
  W.addPtx(".version 9.0\n", Specific);
  W.addPtx(".version 9.0\n", Family);
  std::vector<uint8_t> Bytes = take(W.write());
  Fatbinary F = take(parseFatbinary(Bytes));
  llvm::ArrayRef<Entry> Entries = F.Containers.front().Entries;
  checkOutcome(selectEntry(Entries, request(90, Policy::Default)), ptx("sm_90a"));
  checkOutcome(selectEntry(Entries, request(100, Policy::Default)), ptx("sm_90"));
  checkOutcome(selectEntry(llvm::ArrayRef<Entry>(), request(90, Policy::Default)), NoBinary);
}

TEST_CASE("host ISA levels from CPU features") {
  llvm::StringMap<bool> Features;
  CHECK(isaLevelsFromFeatures(Features) == std::vector<std::string>{"x86-64"});
  for (const char *F : {"cx16", "sahf", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3"})
    Features[F] = true;
  CHECK(isaLevelsFromFeatures(Features) == std::vector<std::string>{"x86-64-v2", "x86-64"});
  for (const char *F : {"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave"})
    Features[F] = true;
  CHECK(isaLevelsFromFeatures(Features).front() == "x86-64-v3");
  Features["avx512f"] = true; // one AVX-512 feature is not v4
  CHECK(isaLevelsFromFeatures(Features).front() == "x86-64-v3");
  Features["sse4.2"] = false; // a gap below stops at the gap
  CHECK(isaLevelsFromFeatures(Features) == std::vector<std::string>{"x86-64"});
#if defined(__x86_64__)
  std::vector<std::string> Host = hostIsaLevels();
  REQUIRE_FALSE(Host.empty());
  CHECK(Host.back() == "x86-64");
#endif
}
