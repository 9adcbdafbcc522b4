// The tiered JIT through the driver: a lazily compiled kernel without optimized code in the compute cache starts
// on its quick code (no block function) with its optimized code compiling in the background; launches are right
// before and after the optimized code arrives; the cache keeps both, and a later load takes the optimized code
// directly, or the quick code where the optimized compile never finished; unloading a module or ending the
// process cancels the compiles still running instead of waiting for them, and the cache keeps only entries of
// compiles that finished; a forked child does not wait for its parent's compiles at exit.
#include "ComputeCacheKernels.h"
#include "ComputeCacheTestSupport.h"

#include "ptxforge/driver/Module.h"

#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace ptxforge;
using namespace ptxforge::driver;
using namespace ptxforge::testing;

namespace {

bool runsBlockFunction(const Function &F) {
  const KernelCode *K = F.compiledCode();
  return K && K->Code->blockEntry(*K->Kernel) != nullptr;
}

} // namespace

TEST_CASE("a kernel starts on its quick code and moves to its optimized code, which the cache keeps") {
  if (processSettings().Tier != JitTier::Tiered)
    return; // PTXFORGE_JIT_TIER chose one tier for the whole process
  GlobalCacheScope Scope;
  const std::string Ptx = scaleModule("0f40a00000"); // 5.0
  {
    auto Cold = loadLazily(Ptx);
    Function *F = Cold->function("scale");
    REQUIRE(F != nullptr);
    CHECK_FALSE(runsBlockFunction(*F)); // the quick code: thread functions only
    REQUIRE(F->upgrade() != nullptr);
    CHECK(runScale(cacheTestContext(), *Cold, 5.0f).empty()); // waits for the optimized code at the end
    bool Arrived = F->upgrade()->Block.load() != nullptr;
    CHECK(Arrived);
    CHECK_FALSE(F->upgrade()->Compiling.load());
    CHECK(runScale(cacheTestContext(), *Cold, 5.0f).empty()); // now on the optimized code
    CHECK(Scope.cache().stats().Stores == 3); // the shared part, the kernel's quick code and its optimized code
  }
  auto Warm = loadLazily(Ptx);
  Function *F = Warm->function("scale");
  REQUIRE(F != nullptr);
  CHECK(F->fromComputeCache());
  CHECK(runsBlockFunction(*F)); // straight to the optimized code
  CHECK(F->upgrade() == nullptr);
  CHECK(runScale(cacheTestContext(), *Warm, 5.0f).empty());
}

TEST_CASE("unloading a module while its kernel's optimized code compiles cancels the compile") {
  GlobalCacheScope Scope;
  for (const char *Factor : {"0f40c00000", "0f40e00000", "0f41000000"}) { // 6, 7, 8: three modules
    auto M = loadLazily(scaleModule(Factor));
    REQUIRE(M->function("scale") != nullptr);
    // M goes away here, its background compile likely still running: it stops and stores nothing partial.
  }
  // Each module's shared part and quick code, and the optimized kernels whose compiles finished before their unload.
  CHECK(Scope.cache().stats().Stores >= 6);
  CHECK(Scope.cache().stats().Stores <= 9);
  CHECK(Scope.cache().stats().Corrupt == 0);
  for (auto [Literal, Factor] : {std::pair{"0f40c00000", 6.0f}, {"0f40e00000", 7.0f}, {"0f41000000", 8.0f}}) {
    auto M = loadLazily(scaleModule(Literal)); // every entry there is whole
    CHECK(runScale(cacheTestContext(), *M, Factor).empty());
  }
  CHECK(Scope.cache().stats().Corrupt == 0);
}

namespace {

/// Each of a block's 128 threads takes its right neighbour's value Rounds times, through shared memory: two
/// barriers a round, so that a region budget of 1 leaves it on fibers.
const char *RotatePtx = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry rotate(.param .u64 out, .param .u32 rounds)
{
  .reg .pred %p<2>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b32 buf[128];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mad.lo.u32 %r3, %r2, 128, %r1;
  mov.u32 %r10, %r3;
  ld.param.u32 %r9, [rounds];
  mov.u32 %r8, 0;
  mov.u32 %r4, buf;
  shl.b32 %r5, %r1, 2;
  add.u32 %r5, %r4, %r5;
  add.u32 %r6, %r1, 1;
  and.b32 %r6, %r6, 127;
  shl.b32 %r6, %r6, 2;
  add.u32 %r6, %r4, %r6;
LOOP:
  st.shared.u32 [%r5], %r3;
  bar.sync 0;
  ld.shared.u32 %r3, [%r6];
  bar.sync 0;
  add.u32 %r8, %r8, 1;
  setp.lt.u32 %p1, %r8, %r9;
  @%p1 bra LOOP;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r10, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
)";

std::unique_ptr<Module> loadRotate(unsigned HotRegionCutLimit = 2048) {
  EnvScope Env({"CUDA_MODULE_LOADING"});
  JitOptions Options;
  Options.Codegen = processSettings().Compile;
  Options.Codegen->Lowering.RegionCutBudget = 1;
  Options.Codegen->Lowering.HotRegionCutLimit = HotRegionCutLimit;
  JitLogs Logs;
  ModuleSource Source;
  Source.Image = RotatePtx;
  auto M = Module::load(cacheTestContext(), Source, Options, Logs);
  REQUIRE_MESSAGE(static_cast<bool>(M), Logs.Error);
  return std::move(*M);
}

/// Launches F over Blocks blocks of 128 threads, its first parameter a fresh device buffer of a word per thread
/// and Rest the addresses of the others; Host receives the buffer. What went wrong, or empty.
std::string launchBlocks(Function &F, uint32_t Blocks, std::vector<void *> Rest, std::vector<uint32_t> &Host) {
  const uint32_t N = Blocks * 128;
  auto Out = DeviceMemory::get().allocate(N * 4, MemoryKind::Device, &cacheTestContext());
  if (!Out)
    return llvm::toString(Out.takeError());
  uint64_t OutPtr = *Out;
  Rest.insert(Rest.begin(), &OutPtr);
  auto Params = F.packParams(Rest.data());
  if (!Params)
    return llvm::toString(Params.takeError());
  codegen::LaunchConfig Config;
  Config.Grid = {Blocks, 1, 1};
  Config.Block = {128, 1, 1};
  if (llvm::Error E = launch(cacheTestContext(), nullptr, F, Config, std::move(*Params)))
    return llvm::toString(std::move(E));
  Host.assign(N, 0);
  CopyRegion C;
  C.Dst = reinterpret_cast<uint64_t>(Host.data()), C.DstSide = Side::Host;
  C.Src = OutPtr, C.SrcSide = Side::Device, C.Width = N * 4;
  if (llvm::Error E = copyMemory(cacheTestContext(), nullptr, false, C))
    return llvm::toString(std::move(E));
  llvm::consumeError(DeviceMemory::get().free(OutPtr, {MemoryKind::Device}));
  return "";
}

/// Launches rotate over 32 blocks; what went wrong, or empty.
std::string runRotate(Function &F) {
  constexpr uint32_t Blocks = 32, N = Blocks * 128, Rounds = 100;
  uint32_t R = Rounds;
  std::vector<uint32_t> Host;
  if (std::string Why = launchBlocks(F, Blocks, {&R}, Host); !Why.empty())
    return Why;
  for (uint32_t I = 0; I < N; ++I)
    if (uint32_t Want = I / 128 * 128 + (I % 128 + Rounds) % 128; Host[I] != Want)
      return "out[" + std::to_string(I) + "] = " + std::to_string(Host[I]) + ", not " + std::to_string(Want);
  return "";
}

bool hotCodeArrived(const Function &F) { return F.upgrade() && F.upgrade()->Block.load() != nullptr; }

} // namespace

TEST_CASE("a kernel past the region budget moves to its region split once it has run on fibers long enough") {
  if (processSettings().Tier != JitTier::Tiered || processSettings().Compile.Lowering.HotRegionCutLimit < 2)
    return;
  GlobalCacheScope Scope;
  {
    auto Off = loadRotate(/*HotRegionCutLimit=*/0); // no hot tier: its two cuts keep it on fibers for good
    Function *F = Off->function("rotate");
    REQUIRE(F != nullptr);
    for (int I = 0; I < 5; ++I) {
      CHECK(runRotate(*F).empty());
      Off->waitForBackgroundCompiles();
    }
    CHECK_FALSE(hotCodeArrived(*F));
  }
  {
    auto M = loadRotate();
    Function *F = M->function("rotate");
    REQUIRE(F != nullptr);
    // Its runs on fibers add up to the split's expected compile time (2 cuts: 80 ms) within a few launches.
    for (int I = 0; I < 400 && !hotCodeArrived(*F); ++I) {
      CHECK(runRotate(*F).empty());
      M->waitForBackgroundCompiles();
    }
    CHECK(hotCodeArrived(*F));
    CHECK(runRotate(*F).empty()); // on the region split now
  }
  auto Warm = loadRotate();
  Function *F = Warm->function("rotate");
  REQUIRE(F != nullptr);
  CHECK(hotCodeArrived(*F)); // the cache keeps the hot code: the first launch starts on it
  CHECK(runRotate(*F).empty());
  CHECK(Scope.cache().stats().Corrupt == 0);
}

namespace {

struct ExitRun {
  bool Exited = false;
  int Status = 0;
  double SecondsAfterLastCall = 0;
  std::string Out, Err;
};

/// Runs tiered_exit_worker (TieredExitWorker.cpp) on PTX with the cache in CacheDir; the time from its last
/// call to the end of the process, as the parent sees it.
ExitRun runExitWorker(const std::string &CacheDir, const std::string &OutDir, const char *Mode) {
  std::string OutPath = OutDir + "/" + Mode + ".out", ErrPath = OutDir + "/" + Mode + ".err";
  posix_spawn_file_actions_t Actions;
  posix_spawn_file_actions_init(&Actions);
  posix_spawn_file_actions_addopen(&Actions, 1, OutPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&Actions, 2, ErrPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::string Worker = PTXFORGE_TIERED_EXIT_WORKER, Ptx = PTXFORGE_CUB_BIG_PTX, Kernels = "4", M = Mode;
  std::string Dir = CacheDir;
  char *Argv[] = {Worker.data(), Dir.data(), Ptx.data(), Kernels.data(), M.data(), nullptr};
  pid_t Pid = 0;
  ExitRun R;
  REQUIRE(posix_spawn(&Pid, Worker.c_str(), &Actions, nullptr, Argv, environ) == 0);
  posix_spawn_file_actions_destroy(&Actions);
  for (int I = 0; I < 12000 && !R.Exited; ++I) { // up to 120 s (the old behaviour: tens of seconds)
    R.Exited = ::waitpid(Pid, &R.Status, WNOHANG) == Pid;
    if (!R.Exited)
      ::usleep(1000);
  }
  timespec Now;
  ::clock_gettime(CLOCK_MONOTONIC, &Now);
  if (!R.Exited)
    ::kill(Pid, SIGKILL), ::waitpid(Pid, &R.Status, 0);
  R.Out = readFile(OutPath);
  R.Err = readFile(ErrPath);
  long long LastCall = 0;
  if (const char *At = std::strstr(R.Out.c_str(), "last_call_ns=")) {
    LastCall = std::atoll(At + std::strlen("last_call_ns="));
    long long End = static_cast<long long>(Now.tv_sec) * 1000000000LL + Now.tv_nsec;
    R.SecondsAfterLastCall = (End - LastCall) / 1e9;
  }
  REQUIRE_MESSAGE(LastCall != 0, R.Out << R.Err);
  return R;
}

} // namespace

TEST_CASE("a process exits within a second of its last call although its optimized compiles take seconds") {
  if (processSettings().Tier != JitTier::Tiered)
    return; // no background compiles
  TempDir Dir;
  std::string Cache = Dir.path() + "/cache"; // empty: every kernel of cub_big starts on its quick code
  for (std::string Mode : {"unload", "exit", "atexit"}) {
    ExitRun R = runExitWorker(Cache, Dir.path(), Mode.c_str());
    INFO(Mode << ": " << R.Out << R.Err);
    CHECK(R.Exited);
    CHECK((WIFEXITED(R.Status) && WEXITSTATUS(R.Status) == 0));
    MESSAGE(Mode << ": exited " << R.SecondsAfterLastCall << " s after its last call; " << R.Out);
    CHECK(R.SecondsAfterLastCall < 1.0);
  }
  // The cache holds whole entries only (the shared part, any compile that finished), never a partial one.
  for (const std::string &Name : listNames(Cache))
    CHECK_MESSAGE(Name.rfind(".tmp-", 0) != 0, Name);
  // A rerun compiles nothing before its kernels run: each takes its optimized code, or its quick code where every
  // optimized compile was cancelled at exit (a short program would otherwise pay the quick compile every run).
  ExitRun Warm = runExitWorker(Cache, Dir.path(), "exit");
  INFO(Warm.Out << Warm.Err);
  CHECK((WIFEXITED(Warm.Status) && WEXITSTATUS(Warm.Status) == 0));
  CHECK(Warm.Out.find("corrupt=0") != std::string::npos);
  CHECK(Warm.Out.find("compiled=0") != std::string::npos);
}

TEST_CASE("a child of fork() exits at once although the parent's background compile still runs") {
  GlobalCacheScope Scope;
  auto M = loadLazily(scaleModule("0f41100000")); // 9.0
  REQUIRE(M->function("scale") != nullptr);
  pid_t Child = ::fork();
  if (Child == 0)
    std::exit(0); // the exit handler must not wait for the parent's job, which has no thread here
  REQUIRE(Child > 0);
  int Status = 0;
  bool Exited = false;
  for (int I = 0; I < 2000 && !Exited; ++I) { // up to 20 s
    Exited = ::waitpid(Child, &Status, WNOHANG) == Child;
    if (!Exited)
      ::usleep(10000);
  }
  if (!Exited)
    ::kill(Child, SIGKILL), ::waitpid(Child, &Status, 0);
  CHECK(Exited);
  CHECK((WIFEXITED(Status) && WEXITSTATUS(Status) == 0));
}

namespace {

/// Each thread t of a 128-thread block loops rounds * (1 + (t & mask)) times over the block's shared values
/// between two barriers: with mask 0 the threads loop together, with mask 3 a quarter of them at a time is left
/// looping while the others wait at the second barrier (what the generic loop's resume loops are for).
const char *DivergePtx = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry diverge(.param .u64 out, .param .u32 rounds, .param .u32 mask)
{
  .reg .pred %p<3>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b32 buf[128];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mad.lo.u32 %r3, %r2, 128, %r1;
  mad.lo.u32 %r4, %r1, 7, 1;
  mov.u32 %r5, buf;
  shl.b32 %r6, %r1, 2;
  add.u32 %r6, %r5, %r6;
  st.shared.u32 [%r6], %r4;
  bar.sync 0;
  ld.param.u32 %r7, [rounds];
  ld.param.u32 %r13, [mask];
  and.b32 %r8, %r1, %r13;
  add.u32 %r8, %r8, 1;
  mul.lo.u32 %r8, %r8, %r7;
  mov.u32 %r9, 0;
  mov.u32 %r10, 0;
LOOP:
  add.u32 %r11, %r10, %r1;
  and.b32 %r11, %r11, 127;
  shl.b32 %r11, %r11, 2;
  add.u32 %r11, %r5, %r11;
  ld.shared.u32 %r12, [%r11];
  mad.lo.u32 %r9, %r9, 3, %r12;
  add.u32 %r10, %r10, 1;
  setp.lt.u32 %p2, %r10, %r8;
  @%p2 bra LOOP;
  bar.sync 0;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r3, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r9;
  ret;
}
)";

/// Launches diverge over 16 blocks; what went wrong, or empty.
std::string runDiverge(Function &F, uint32_t Rounds, uint32_t Mask) {
  constexpr uint32_t Blocks = 16;
  std::vector<uint32_t> Host;
  if (std::string Why = launchBlocks(F, Blocks, {&Rounds, &Mask}, Host); !Why.empty())
    return Why;
  for (uint32_t T = 0; T < 128; ++T) {
    uint32_t Want = 0;
    for (uint32_t I = 0, Trips = Rounds * (1 + (T & Mask)); I < Trips; ++I)
      Want = Want * 3 + ((I + T) % 128) * 7 + 1;
    for (uint32_t B = 0; B < Blocks; ++B)
      if (Host[B * 128 + T] != Want)
        return "out[" + std::to_string(B * 128 + T) + "] = " + std::to_string(Host[B * 128 + T]) + ", not " +
               std::to_string(Want);
  }
  return "";
}

} // namespace

TEST_CASE("a region kernel whose threads part ways at a cut loop gets its resume loops from the hot tier") {
  const Settings &S = processSettings();
  if (S.Tier == JitTier::Quick || S.Compile.Lowering.Resume != codegen::ResumeLoops::Count)
    return; // no block functions, or the resume loops' placement fixed for the whole process
  GlobalCacheScope Scope;
  constexpr uint32_t Rounds = 3000;
  auto Launches = [&](Module &M, uint32_t Mask, double Seconds) {
    Function *F = M.function("diverge");
    REQUIRE(F != nullptr);
    auto Start = std::chrono::steady_clock::now();
    while (!F->onHotCode() && std::chrono::steady_clock::now() - Start < std::chrono::duration<double>(Seconds)) {
      CHECK(runDiverge(*F, Rounds, Mask).empty());
      M.waitForBackgroundCompiles();
    }
    return F;
  };
  {
    // Threads that loop together never need a resume loop, however long the kernel runs: its code counts no
    // round, so no hot compile.
    auto M = loadLazily(DivergePtx);
    CHECK_FALSE(Launches(*M, 0, 1.5)->onHotCode());
  }
  {
    // Parted threads: the rounds are counted, and after about the loop's compile time (0.35 s) the hot code is in.
    auto M = loadLazily(DivergePtx);
    Function *F = Launches(*M, 3, 60);
    CHECK(F->onHotCode());
    CHECK(runDiverge(*F, Rounds, 3).empty()); // on the resume loops now
    CHECK(runDiverge(*F, Rounds, 0).empty());
  }
  auto Warm = loadLazily(DivergePtx);
  Function *F = Warm->function("diverge");
  REQUIRE(F != nullptr);
  CHECK(runDiverge(*F, Rounds, 3).empty());
  CHECK(F->onHotCode()); // the cache keeps the hot code: it is in once the optimized code is
  CHECK(Scope.cache().stats().Corrupt == 0);
}
