// Module load benchmark (issue 4): cold versus warm (compute-cached) load + first launch through the driver
// core, for each kernel of ../shared/bench/cuda and for cub_big.ptx (load, then the first launch of one kernel).
// Goals: warm <= 2 ms per small module; the lazy load of cub_big.ptx (parse + verify, CUDA_MODULE_LOADING=LAZY)
// <= 150 ms. Each measurement uses its own empty cache directory (cold) and then that directory (warm).
// Modules load as cuModuleLoad does: lazily, so the time splits into load, first use (compile or cache hit)
// and the first launch (one block, small sizes; every pointer parameter gets a zeroed buffer).
//   bench_load [--quick] [--reps N] [--only NAME] [--no-cub]
#include "ptxforge/driver/ComputeCache.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Launch.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Module.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

using namespace ptxforge;
using namespace ptxforge::driver;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point T) { return std::chrono::duration<double, std::milli>(Clock::now() - T).count(); }

/// CPU time of every thread of the process, in ms: on a busy machine it shows what the work itself costs.
double processCpuMs() {
  struct timespec T;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &T);
  return T.tv_sec * 1e3 + T.tv_nsec / 1e6;
}

struct Workload {
  std::string Name, Path;
  std::string Entry;                 ///< the kernel to launch (a substring of its name)
  codegen::Dim3 Block = {256, 1, 1}; ///< what the kernel's code assumes (../shared/bench/README.md)
};

struct Timing {
  double Load = 0, FirstUse = 0, Launch = 0;
  double LoadCpu = 0; ///< CPU time of the load (all threads)
  bool FromCache = false;
  std::string Refused; ///< why the driver refused the launch (checked before anything ran), else empty
  double total() const { return Load + FirstUse + Launch; }
};

[[noreturn]] void die(const std::string &What) {
  std::fprintf(stderr, "bench_load: %s\n", What.c_str());
  std::exit(1);
}

/// Every 8-byte parameter a zeroed buffer, every 4-byte one 16 (sizes, counts, or a tiny float), others zero.
std::vector<char> defaultParams(Context &Ctx, const Function &F, std::vector<uint64_t> &Buffers) {
  std::vector<char> Params(F.info().ParamBytes);
  for (const codegen::ParamInfo &P : F.info().Params) {
    if (P.Size == 8) {
      auto B = DeviceMemory::get().allocate(1 << 20, MemoryKind::Device, &Ctx);
      if (!B)
        die(llvm::toString(B.takeError()));
      std::memset(reinterpret_cast<void *>(*B), 0, 1 << 20);
      Buffers.push_back(*B);
      std::memcpy(Params.data() + P.Offset, &*B, 8);
    } else if (P.Size == 4) {
      uint32_t Sixteen = 16;
      std::memcpy(Params.data() + P.Offset, &Sixteen, 4);
    }
  }
  return Params;
}

/// Loads W as cuModuleLoad would, gets its kernel (the first use: compile or take from the cache) and
/// launches one block, waiting for it.
Timing loadAndLaunch(Context &Ctx, const Workload &W) {
  Timing T;
  ModuleSource Source;
  Source.K = ModuleSource::Kind::File;
  Source.Path = W.Path;
  JitLogs Logs;
  auto Start = Clock::now();
  double Cpu = processCpuMs();
  auto M = Module::load(Ctx, Source, JitOptions(), Logs);
  T.Load = msSince(Start);
  T.LoadCpu = processCpuMs() - Cpu;
  if (!M)
    die(W.Name + ": " + llvm::toString(M.takeError()) + "\n" + Logs.Error);
  Start = Clock::now();
  if (llvm::Error E = (*M)->materialize())
    die(W.Name + ": " + llvm::toString(std::move(E)) + "\n" + (*M)->materializeLog());
  Function *F = nullptr;
  for (const auto &Candidate : (*M)->functions())
    if (Candidate->name().contains(W.Entry)) {
      F = Candidate.get();
      break;
    }
  if (!F)
    die(W.Name + ": no kernel matching '" + W.Entry + "'");
  T.FirstUse = msSince(Start);
  T.FromCache = (*M)->fromComputeCache();

  std::vector<uint64_t> Buffers;
  std::vector<char> Params = defaultParams(Ctx, *F, Buffers);
  codegen::LaunchConfig Config;
  Config.Grid = {1, 1, 1};
  Config.Block = W.Block;
  Start = Clock::now();
  if (llvm::Error E = launch(Ctx, nullptr, *F, Config, std::move(Params)))
    T.Refused = llvm::toString(std::move(E));
  Ctx.waitIdle();
  T.Launch = msSince(Start);
  if (Driver::get().stickyError() != Status::Success)
    die(W.Name + ": the launch failed: " + Driver::get().stickyMessage());
  for (uint64_t B : Buffers)
    llvm::consumeError(DeviceMemory::get().free(B, {MemoryKind::Device}));
  return T;
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V.empty() ? 0 : V[V.size() / 2];
}

std::vector<Workload> workloads(bool Cub, const std::string &Only) {
  std::string Dir = PTXFORGE_SHARED_DIR "/bench";
  struct Small {
    const char *File, *Entry;
    codegen::Dim3 Block;
  } Smalls[] = {
      {"vecadd", "vecadd", {256, 1, 1}},      {"saxpy", "saxpy", {256, 1, 1}},
      {"reduce", "reduce_sum", {256, 1, 1}},  {"sgemm", "sgemm_tiled", {16, 16, 1}},
      {"transpose", "transpose", {32, 8, 1}}, {"histogram", "histogram256", {256, 1, 1}},
      {"nbody", "nbody_step", {256, 1, 1}},   {"blackscholes", "black_scholes", {256, 1, 1}},
      {"stencil", "stencil5", {32, 8, 1}},
  };
  std::vector<Workload> Out;
  for (const Small &S : Smalls)
    if (Only.empty() || Only == S.File)
      Out.push_back({S.File, Dir + "/cuda/" + S.File + ".ptx", S.Entry, S.Block});
  if (Cub && (Only.empty() || Only == "cub_big"))
    Out.push_back({"cub_big", Dir + "/cub_big.ptx", "DeviceReduceSingleTileKernel", {256, 1, 1}});
  return Out;
}

double loadAverage() {
  double L[1] = {0};
  return getloadavg(L, 1) == 1 ? L[0] : -1;
}

} // namespace

int main(int argc, char **argv) {
  bool Quick = false, Cub = true;
  int Reps = 5;
  std::string Only;
  for (int I = 1; I < argc; ++I) {
    std::string A = argv[I];
    if (A == "--quick")
      Quick = true;
    else if (A == "--no-cub")
      Cub = false;
    else if (A == "--reps" && I + 1 < argc)
      Reps = std::max(1, std::atoi(argv[++I]));
    else if (A == "--only" && I + 1 < argc)
      Only = argv[++I];
    else {
      std::fprintf(stderr, "usage: bench_load [--quick] [--reps N] [--only NAME] [--no-cub]\n");
      return 2;
    }
  }
  if (Quick)
    Reps = 1;
  ::unsetenv("CUDA_MODULE_LOADING"); // measure the default (lazy) loading
  if (llvm::Error E = Driver::get().initialize())
    die(llvm::toString(std::move(E)));
  auto Ctx = Driver::get().createContext(0, 0);
  if (!Ctx)
    die(llvm::toString(Ctx.takeError()));

  llvm::SmallString<128> Root;
  if (llvm::sys::fs::createUniqueDirectory("ptxforge-bench-load", Root))
    die("cannot create a temporary directory");
  ComputeCacheConfig Saved = ComputeCache::global().config();

  std::printf("bench_load: load average %.2f on %ld cores (timings on a shared machine vary)\n", loadAverage(),
              sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("%-13s %9s %9s %9s %9s | %9s %9s %9s %9s | %8s %8s\n", "module", "cold.load", "cold.use", "cold.run",
              "cold", "warm.load", "warm.use", "warm.run", "warm", "cold/warm", "warm/goal");
  bool AllCached = true;
  double CubLazyLoad = -1, CubLazyLoadCpu = -1;
  for (const Workload &W : workloads(Cub, Only)) {
    ComputeCacheConfig C;
    C.Directory = std::string(Root) + "/" + W.Name;
    ComputeCache::global().reconfigure(C);
    Timing Cold = loadAndLaunch(**Ctx, W);
    if (!Cold.Refused.empty())
      std::printf("%-13s the launch was refused (%s): timing load and first use only\n", W.Name.c_str(),
                  Cold.Refused.c_str());
    std::vector<double> Load, LoadCpu, Use, Run, Total;
    for (int R = 0; R < Reps; ++R) {
      Timing Warm = loadAndLaunch(**Ctx, W);
      AllCached &= Warm.FromCache;
      Load.push_back(Warm.Load);
      LoadCpu.push_back(Warm.LoadCpu);
      Use.push_back(Warm.FirstUse);
      Run.push_back(Warm.Launch);
      Total.push_back(Warm.total());
    }
    double WarmTotal = median(Total);
    bool Big = W.Name == "cub_big";
    if (Big) {
      CubLazyLoad = median(Load);
      CubLazyLoadCpu = median(LoadCpu);
    }
    char Goal[16] = "-";
    if (!Big)
      std::snprintf(Goal, sizeof Goal, "%.2fx", WarmTotal / 2.0);
    std::printf("%-13s %9.2f %9.2f %9.2f %9.2f | %9.2f %9.2f %9.2f %9.2f | %8.1fx %8s\n", W.Name.c_str(), Cold.Load,
                Cold.FirstUse, Cold.Launch, Cold.total(), median(Load), median(Use), median(Run), WarmTotal,
                Cold.total() / WarmTotal, Goal);
  }
  if (CubLazyLoad >= 0)
    std::printf("cub_big.ptx lazy load (parse + verify): %.1f ms = %.2fx the 150 ms goal (CPU time %.1f ms)\n",
                CubLazyLoad, CubLazyLoad / 150.0, CubLazyLoadCpu);
  std::printf("times in ms (medians of %d warm runs); warm/goal: warm load + first launch / 2 ms\n", Reps);
  ComputeCache::global().reconfigure(Saved);
  llvm::sys::fs::remove_directories(Root);
  if (!AllCached)
    die("a warm load did not come from the compute cache");
  return 0;
}
