// `ptxforge run`: conformance cases (`--case DIR`, `--cases ROOT`) or an ad-hoc launch of a kernel of a PTX file
// (`run FILE.ptx --entry K --grid X,Y,Z --block X,Y,Z --arg ...`).
#include "CaseRunner.h"
#include "Commands.h"
#include "FrontendCommands.h"

#include "ptxforge/codegen/CompiledObject.h"
#include "ptxforge/codegen/Launch.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Settings.h"
#include "ptxforge/fatbin/HostIsa.h"
#include "ptxforge/fatbin/Reader.h"
#include "ptxforge/fatbin/Selection.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>

using namespace ptxforge;
using namespace ptxforge::tools;
namespace fs = std::filesystem;

namespace {

struct RunOptions {
  std::string Case, Cases, ExpectedFailures, File, Entry;
  std::vector<std::string> Filters, Args;
  std::vector<unsigned> Grid{1, 1, 1}, Block{1, 1, 1};
  std::vector<unsigned> Cluster; ///< empty: the kernel's .reqnctapercluster, else none
  unsigned Shared = 0;
  bool Json = false, Verbose = false;
  bool Cooperative = false; ///< as cuLaunchCooperativeKernel: every block at once, with a grid.sync workspace
};

/// The emulated device's compute capability (PTXFORGE_DEVICE_CC, as libcuda.so.1 reads it); nullopt after printing
/// why the variable is wrong.
std::optional<unsigned> deviceSm() {
  auto CC = driver::deviceComputeCapabilityFromEnvironment();
  if (CC)
    return *CC;
  llvm::errs() << "ptxforge run: error: " << llvm::toString(CC.takeError()) << "\n";
  return std::nullopt;
}

int runCases(const RunOptions &O) {
  std::vector<std::string> Dirs;
  if (!O.Case.empty()) {
    Dirs.push_back(O.Case);
  } else {
    std::error_code EC;
    for (auto It = fs::recursive_directory_iterator(O.Cases, EC); !EC && It != fs::recursive_directory_iterator();
         It.increment(EC))
      if (It->is_regular_file() && It->path().filename() == "case.json")
        Dirs.push_back(It->path().parent_path().string());
    std::sort(Dirs.begin(), Dirs.end());
    if (Dirs.empty()) {
      llvm::errs() << "ptxforge run: error: no case.json below '" << O.Cases << "'\n";
      return ExitInputError;
    }
  }
  std::set<std::string> Expected;
  if (!O.ExpectedFailures.empty()) {
    std::string List = readFile(O.ExpectedFailures);
    llvm::SmallVector<llvm::StringRef, 64> Lines;
    llvm::StringRef(List).split(Lines, '\n');
    for (llvm::StringRef Line : Lines)
      if (!Line.empty() && Line[0] != '#')
        Expected.insert(Line.take_until([](char C) { return C == ' ' || C == '\t'; }).str());
  }
  std::optional<unsigned> DeviceSm = deviceSm();
  if (!DeviceSm)
    return ExitUsage;
  unsigned Sm = *DeviceSm, Passed = 0, Failed = 0, Skipped = 0, Listed = 0;
  nlohmann::json Results = nlohmann::json::array();
  for (const std::string &Dir : Dirs) {
    std::vector<CaseFile> Files = listCaseFiles(Dir);
    if (Files.empty()) {
      ++Failed;
      std::cout << "FAIL " << Dir << ": unreadable case.json\n";
      continue;
    }
    for (const CaseFile &F : Files) {
      if (!O.Filters.empty() && std::none_of(O.Filters.begin(), O.Filters.end(),
                                             [&](const std::string &S) { return F.Name.find(S) != std::string::npos; }))
        continue;
      if (F.MinSm > Sm) {
        ++Skipped;
        continue;
      }
      double Ms = 0;
      std::string Error = runCaseFile(Dir, F.Ptx, &Ms);
      bool IsListed = Expected.count(F.Name) != 0;
      if (Error.empty()) {
        ++Passed;
        if (O.Verbose || IsListed)
          std::cout << "PASS " << F.Name << " (" << static_cast<int>(Ms) << " ms incl. JIT)"
                    << (IsListed ? "  (listed as an expected failure: remove it)" : "") << "\n";
      } else {
        ++Failed;
        Listed += IsListed;
        if (!O.Json)
          std::cout << (IsListed ? "XFAIL " : "FAIL ") << F.Name << ": " << (O.Verbose ? Error : Error.substr(0, 300))
                    << "\n";
      }
      Results.push_back(
          {{"name", F.Name}, {"passed", Error.empty()}, {"error", Error}, {"ms", Ms}, {"expected_failure", IsListed}});
      std::cout.flush();
    }
  }
  if (O.Json) {
    nlohmann::json J{{"passed", Passed}, {"failed", Failed}, {"skipped", Skipped}, {"cases", Results}};
    std::cout << J.dump(2) << "\n";
  } else {
    if (Listed)
      std::cout << Listed << " of the failures are listed in " << O.ExpectedFailures << "\n";
    std::cout << Passed << " passed, " << Failed << " failed";
    if (Skipped)
      std::cout << ", " << Skipped << " skipped";
    std::cout << "\n";
  }
  return Failed == Listed ? ExitOk : ExitInputError;
}

/// `--arg` forms: TYPE:VALUE (u8..u64, s8..s64, b8..b64, f32, f64) or buffer:BYTES[,zero|fill=N|file=PATH][,out=PATH].
struct AdHocBuffer {
  std::vector<char> Storage;
  char *Data = nullptr;
  size_t Size = 0;
  std::string Out;
  /// Memcheck mode's initcheck shadow: set for a buffer given contents (zero, fill=, file=), clear otherwise.
  std::vector<uint8_t> Initialized;
};

bool parseArg(const std::string &A, std::vector<char> &Raw, std::vector<std::unique_ptr<AdHocBuffer>> &Buffers,
              std::string &Err) {
  size_t Colon = A.find(':');
  if (Colon == std::string::npos) {
    Err = "expected TYPE:VALUE or buffer:BYTES[,...] in '" + A + "'";
    return false;
  }
  std::string T = A.substr(0, Colon), V = A.substr(Colon + 1);
  uint64_t Bits = 0;
  unsigned Size = 8;
  if (T == "buffer") {
    auto B = std::make_unique<AdHocBuffer>();
    std::stringstream SS(V);
    std::string Part;
    std::getline(SS, Part, ',');
    B->Size = std::stoull(Part);
    B->Storage.assign(B->Size + 512, 0);
    B->Data = reinterpret_cast<char *>((reinterpret_cast<uintptr_t>(B->Storage.data()) + 255) & ~uintptr_t(255));
    B->Initialized.assign(B->Size, 0);
    while (std::getline(SS, Part, ',')) {
      if (Part.rfind("out=", 0) != 0) // zero, fill=, file= give it contents
        std::fill(B->Initialized.begin(), B->Initialized.end(), uint8_t(1));
      if (Part.rfind("fill=", 0) == 0)
        memset(B->Data, std::stoi(Part.substr(5), nullptr, 0), B->Size);
      else if (Part.rfind("file=", 0) == 0) {
        std::string D = readFile(Part.substr(5));
        memcpy(B->Data, D.data(), std::min(D.size(), B->Size));
      } else if (Part.rfind("out=", 0) == 0)
        B->Out = Part.substr(4);
      else if (Part != "zero") {
        Err = "unknown buffer option '" + Part + "'";
        return false;
      }
    }
    Bits = reinterpret_cast<uint64_t>(B->Data);
    Buffers.push_back(std::move(B));
  } else if (T == "f32") {
    float F = std::stof(V);
    uint32_t U;
    memcpy(&U, &F, 4);
    Bits = U, Size = 4;
  } else if (T == "f64") {
    double D = std::stod(V);
    memcpy(&Bits, &D, 8);
  } else if (T.size() >= 2 && (T[0] == 'u' || T[0] == 's' || T[0] == 'b')) {
    Size = std::atoi(T.c_str() + 1) / 8;
    if (Size != 1 && Size != 2 && Size != 4 && Size != 8) {
      Err = "unknown type '" + T + "'";
      return false;
    }
    Bits = T[0] == 's' ? static_cast<uint64_t>(std::stoll(V, nullptr, 0)) : std::stoull(V, nullptr, 0);
  } else {
    Err = "unknown type '" + T + "'";
    return false;
  }
  for (unsigned I = 0; I < Size; ++I)
    Raw.push_back(static_cast<char>(Bits >> (8 * I)));
  return true;
}

/// The code `run` launches and, for PTX, the parsed module (kept for its lifetime).
struct Runnable {
  std::unique_ptr<ptx::FrontendResult> Ptx;
  std::unique_ptr<codegen::CompiledModule> Code;
};

/// The PTX (or, where the loader rules pick one, the host-native entry) of a fatbin or executable.
std::optional<Runnable> loadFatbinEntry(const std::string &Path) {
  auto fail = [&](const std::string &Why) -> std::optional<Runnable> {
    llvm::errs() << "ptxforge run: error: " << Path << ": " << Why << "\n";
    return std::nullopt;
  };
  auto F = fatbin::FatbinaryFile::open(Path);
  if (!F)
    return fail(llvm::toString(F.takeError()));
  // The driver's rules: exact-CC host code for the best ISA level this CPU runs, else PTX to JIT-compile
  // (CUDA_FORCE_PTX_JIT / CUDA_DISABLE_PTX_JIT, as driver::processSettings read them).
  std::optional<unsigned> DeviceSm = deviceSm();
  if (!DeviceSm)
    return std::nullopt;
  fatbin::SelectionRequest Req;
  Req.ComputeCapability = *DeviceSm;
  Req.HostIsaLevels = fatbin::hostIsaLevels();
  Req.Jit = driver::processSettings().Jit;
  fatbin::Selection S = fatbin::selectEntry(F->fatbinary().entries(), Req);
  if (!S.ok())
    return fail(S.Message);
  const fatbin::Entry &E = *S.Chosen;
  std::string Arch = E.archName();
  if (E.isHostNative()) {
    auto Bytes = E.contents();
    if (!Bytes)
      return fail(llvm::toString(Bytes.takeError()));
    auto Object = codegen::CompiledObject::deserialize(llvm::toStringRef(*Bytes));
    if (!Object)
      return fail("the host-native entry is corrupt: " + llvm::toString(Object.takeError()));
    auto Code = codegen::CompiledModule::load(*Object, nullptr, driver::processSettings().Compile.Perf);
    if (!Code)
      return fail("the host code cannot be loaded: " + llvm::toString(Code.takeError()));
    std::cout << Path << ": running the " << Arch << " host-native entry (" << S.Message << ")\n";
    return Runnable{nullptr, std::move(*Code)};
  }
  if (!E.isPtx())
    return fail("the selected entry is neither PTX nor host-native code");
  auto Text = E.ptxText();
  if (!Text)
    return fail(llvm::toString(Text.takeError()));
  std::cout << Path << ": running the " << Arch << " PTX entry (" << S.Message << ")\n";
  return Runnable{loadPtx(std::make_unique<ptx::SourceBuffer>(Path + ":" + Arch + ".ptx", std::move(*Text))), {}};
}

/// The code to run: the PTX file compiled, or a fatbin's (or an executable's) entry. Nullopt after printing why.
std::optional<Runnable> loadRunnable(const std::string &Path) {
  std::string Head = readFile(Path).substr(0, 4);
  bool Fatbin = Head.size() == 4 && static_cast<unsigned char>(Head[0]) == 0x50 &&
                static_cast<unsigned char>(Head[1]) == 0xED && static_cast<unsigned char>(Head[2]) == 0x55 &&
                static_cast<unsigned char>(Head[3]) == 0xBA;
  bool Elf = Head == "\x7f"
                     "ELF";
  std::optional<Runnable> R;
  if (Fatbin || Elf)
    R = loadFatbinEntry(Path);
  else
    R = Runnable{loadPtx(Path), {}};
  if (!R || R->Code)
    return R;
  if (!R->Ptx || !R->Ptx->ok())
    return std::nullopt;
  auto CM = codegen::compilePTX(*R->Ptx->Verified, R->Ptx->Source.get(), driver::processSettings().Compile);
  if (!CM) {
    llvm::errs() << "ptxforge run: error: " << llvm::toString(CM.takeError()) << "\n";
    return std::nullopt;
  }
  R->Code = std::move(*CM);
  return R;
}

int runAdHoc(const RunOptions &O) {
  std::optional<Runnable> R = loadRunnable(O.File);
  if (!R)
    return ExitInputError;
  const codegen::CompiledModule &CM = *R->Code;
  const codegen::KernelInfo *K = O.Entry.empty() && CM.kernels().size() == 1 ? &CM.kernels()[0] : CM.kernel(O.Entry);
  if (!K) {
    llvm::errs() << "ptxforge run: error: no kernel '" << O.Entry << "' in " << O.File << "\n";
    return ExitUsage;
  }
  if (O.Args.size() != K->Params.size()) {
    llvm::errs() << "ptxforge run: error: kernel '" << K->Name << "' takes " << K->Params.size() << " parameters, "
                 << O.Args.size() << " --arg given\n";
    return ExitUsage;
  }
  std::vector<std::unique_ptr<AdHocBuffer>> Buffers;
  std::vector<char> Params(std::max<uint64_t>(K->ParamBytes, 1), 0);
  for (size_t I = 0; I < O.Args.size(); ++I) {
    std::vector<char> Raw;
    std::string Err;
    if (!parseArg(O.Args[I], Raw, Buffers, Err)) {
      llvm::errs() << "ptxforge run: error: " << Err << "\n";
      return ExitUsage;
    }
    memcpy(Params.data() + K->Params[I].Offset, Raw.data(), std::min<size_t>(Raw.size(), K->Params[I].Size));
  }
  codegen::LaunchConfig C = driver::processSettings().launchConfig({});
  C.Grid = {O.Grid[0], O.Grid[1], O.Grid[2]};
  C.Block = {O.Block[0], O.Block[1], O.Block[2]};
  C.DynamicSharedBytes = O.Shared;
  if (!O.Cluster.empty()) {
    C.Cluster = {O.Cluster[0], O.Cluster[1], O.Cluster[2]};
    C.ExplicitCluster = true;
  }
  // grid.sync() counts arrivals in a zeroed workspace, as the driver hands each cooperative launch one.
  alignas(8) uint64_t GridWorkspace[2] = {0, 0};
  if (O.Cooperative)
    C.GridWorkspace = GridWorkspace;
  std::vector<codegen::MemcheckAllocation> Known;
  for (const auto &B : Buffers)
    Known.push_back({reinterpret_cast<uint64_t>(B->Data), B->Size, B->Initialized.data()});
  codegen::MemcheckMemory Checked = memcheckMemory(std::move(Known));
  if (C.MemcheckFindings)
    C.Memcheck = &Checked;
  auto T0 = std::chrono::steady_clock::now();
  llvm::Error E = codegen::launchKernel(CM, *K, C, Params.data());
  if (C.MemcheckFindings)
    driver::printMemcheckFindings();
  if (E) {
    llvm::errs() << "ptxforge run: error: " << llvm::toString(std::move(E)) << "\n";
    return ExitInputError;
  }
  double Ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - T0).count();
  for (const auto &B : Buffers)
    if (!B->Out.empty())
      std::ofstream(B->Out, std::ios::binary).write(B->Data, B->Size);
  std::cout << K->Name << ": " << C.Grid.count() << " block(s) of " << C.Block.count() << " thread(s) in " << Ms
            << " ms\n";
  return ExitOk;
}

} // namespace

void ptxforge::tools::addRunCommand(CLI::App &App, Runner &Run) {
  auto *Cmd = App.add_subcommand("run", "Run conformance cases (--case/--cases) or launch a kernel of a PTX file");
  auto O = std::make_shared<RunOptions>();
  Cmd->add_option("--case", O->Case, "run one case directory (case.json format of ../shared/conformance)");
  Cmd->add_option("--cases", O->Cases, "run every case below ROOT; alt_ptx files count as cases of their own");
  Cmd->add_option("--expected-failures", O->ExpectedFailures,
                  "cases (one name per line, '#' comments) known to fail: reported as XFAIL, exit 0 if only they fail");
  Cmd->add_option("--filter", O->Filters, "only cases whose name contains one of these");
  Cmd->add_flag("--json", O->Json, "print results as JSON");
  Cmd->add_flag("-v,--verbose", O->Verbose, "print passing cases and full mismatch lists");
  Cmd->add_option("file", O->File, "PTX file for an ad-hoc launch");
  Cmd->add_option("--entry", O->Entry, "kernel to launch (default: the only one)");
  Cmd->add_option("--grid", O->Grid, "grid dimensions X,Y,Z")->delimiter(',')->expected(1, 3);
  Cmd->add_option("--block", O->Block, "block dimensions X,Y,Z")->delimiter(',')->expected(1, 3);
  Cmd->add_option("--shared", O->Shared, "dynamic shared memory bytes");
  Cmd->add_option("--cluster", O->Cluster, "thread-block cluster dimensions X,Y,Z (as cuLaunchKernelEx's attribute)")
      ->delimiter(',')
      ->expected(1, 3);
  Cmd->add_flag("--cooperative", O->Cooperative,
                "launch as cuLaunchCooperativeKernel does: all blocks at once, so they may wait for each other");
  Cmd->add_option("--arg", O->Args,
                  "kernel argument in order: TYPE:VALUE (u32:7, f32:1.5, ...) or "
                  "buffer:BYTES[,zero|fill=N|file=PATH][,out=PATH]");
  addMemcheckFlag(*Cmd);
  Cmd->callback([&Run, O] {
    Run = [O] {
      O->Grid.resize(3, 1);
      O->Block.resize(3, 1);
      if (!O->Cluster.empty())
        O->Cluster.resize(3, 1);
      if (!O->Case.empty() || !O->Cases.empty())
        return runCases(*O);
      if (O->File.empty()) {
        llvm::errs() << "ptxforge run: error: give --case DIR, --cases ROOT or a PTX file\n";
        return int(ExitUsage);
      }
      return runAdHoc(*O);
    };
  });
}
