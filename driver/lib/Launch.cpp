// Kernel launches: checked at the call, run on the stream's worker. codegen turns faults in kernel code on any
// of its worker threads into typed LaunchErrors; a failure becomes the process's sticky error.
// PTXFORGE_LAUNCH_WORKERS (else PTXFORGE_WORKERS) caps the workers of one launch; default: one per core.
#include "ptxforge/driver/Launch.h"
#include "ptxforge/driver/Capture.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Settings.h"

#include "ptxforge/codegen/DeviceRuntime.h"
#include "ptxforge/codegen/FaultGuard.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

using namespace ptxforge;
using namespace ptxforge::driver;

namespace {

unsigned launchWorkers() {
  static const unsigned N = [] {
    if (const char *E = std::getenv("PTXFORGE_LAUNCH_WORKERS")) {
      unsigned V = 0;
      if (!llvm::StringRef(E).trim().getAsInteger(10, V))
        return V; // 0: one per core
    }
    return processSettings().Workers;
  }();
  return N;
}

bool verbose() {
  static const bool V = std::getenv("PTXFORGE_DRIVER_VERBOSE") != nullptr;
  return V;
}

/// The CUresult NVIDIA's driver gives for each way a kernel fails.
Status launchStatus(codegen::LaunchFault F) {
  switch (F) {
  case codegen::LaunchFault::IllegalAddress:
    return Status::IllegalAddress;
  case codegen::LaunchFault::MisalignedAddress:
    return Status::MisalignedAddress;
  case codegen::LaunchFault::IllegalInstruction:
    return Status::IllegalInstruction;
  case codegen::LaunchFault::Assert:
    return Status::Assert;
  case codegen::LaunchFault::Timeout:
    return Status::LaunchTimeout;
  case codegen::LaunchFault::InvalidConfiguration:
    return Status::InvalidValue;
  case codegen::LaunchFault::Trap:
  case codegen::LaunchFault::Deadlock:
    return Status::LaunchFailed;
  }
  return Status::LaunchFailed;
}

/// Where a faulting address lies among the device allocations: inside one, or past or before the nearest.
std::string addressDetail(uint64_t Address) {
  auto Hex = [](uint64_t V) { return "0x" + llvm::utohexstr(V, /*LowerCase=*/true); };
  std::optional<Allocation> A = DeviceMemory::get().nearest(Address);
  std::string Text = "address " + Hex(Address);
  if (!A)
    return Text + " is in no allocation (none is live)";
  std::string Of = "allocation " + Hex(A->Base) + " (" + std::to_string(A->Size) + " bytes)";
  if (A->contains(Address))
    return Text + " is byte " + std::to_string(Address - A->Base) + " of " + Of;
  if (Address >= A->Base + A->Size)
    return Text + " is " + std::to_string(Address - (A->Base + A->Size)) + " bytes past the end of the nearest " + Of;
  return Text + " is " + std::to_string(A->Base - Address) + " bytes before the nearest " + Of;
}

/// A failed kernel as the verbose log prints it: one compiler-style line (the PTX file:line:col first, where
/// known; "ptxforge" otherwise) and the faulting address's place among the allocations.
std::string failureReport(llvm::StringRef Message, const codegen::FaultSite &Site) {
  std::string At = " at " + Site.Location;
  if (!Site.Location.empty() && Message.ends_with(At))
    Message = Message.drop_back(At.size());
  std::string Report = (Site.Location.empty() ? "ptxforge" : Site.Location) + ": error: " + Message.str() + "\n";
  if (Site.HasAddress)
    Report += "  " + addressDetail(Site.Address) + "\n";
  // Optimized code runs a block's threads as one vectorized loop: the launch ran the block again thread by thread.
  using Replay = codegen::FaultSite::ReplayResult;
  if (Site.Replay == Replay::Found)
    Report += "  (the thread was found by running the block again thread by thread: the optimized code runs its "
              "threads together)\n";
  if (Site.Replay == Replay::NotReproduced)
    Report += "  (the optimized code runs the block's threads together, and running the block again thread by "
              "thread did not fault there: the thread is unknown)\n";
  // A fault inside a runtime helper has no PTX line; memcheck mode checks each access before it happens.
  if (Site.HasAddress && (!Site.HasThread || Site.Location.empty()) && !processSettings().Memcheck)
    Report += "  (PTXFORGE_MEMCHECK=1 names the thread and PTX line of an access into device memory)\n";
  return Report;
}

/// The failure of a grid: its status, message and where it happened.
struct GridFailure {
  Status Result = Status::Success;
  std::string Message;
  codegen::FaultSite Site;
};

/// Dynamic parallelism: the device runtime of one grid of a module's kernel (codegen/DeviceRuntime.h). Its
/// children are the module's kernels (nvcc links every translation unit into one module).
class GridRuntime final : public codegen::DeviceRuntime {
public:
  GridRuntime(Function &F, unsigned Depth)
      : DeviceRuntime(Depth, F.module().context().limit(Limit::DevRuntimePendingLaunchCount)), Parent(F) {}

  int32_t kernelParamBytes(llvm::StringRef Name, uint64_t &Bytes) override {
    llvm::Expected<Function *> Child = Parent.module().findFunction(Name);
    if (!Child) {
      llvm::consumeError(Child.takeError());
      return codegen::DeviceInvalidDeviceFunction;
    }
    Bytes = (*Child)->info().ParamBytes;
    return codegen::DeviceSuccess;
  }

  int32_t checkLaunch(const codegen::DeviceLaunch &L) override {
    llvm::Expected<Function *> Child = Parent.module().findFunction(L.Kernel);
    if (!Child) {
      llvm::consumeError(Child.takeError());
      return codegen::DeviceInvalidDeviceFunction;
    }
    codegen::LaunchConfig C;
    C.Grid = L.Grid, C.Block = L.Block, C.DynamicSharedBytes = L.SharedBytes;
    if (llvm::Error E = (*Child)->checkLaunch(C)) {
      llvm::consumeError(std::move(E));
      return codegen::DeviceInvalidConfiguration;
    }
    return codegen::DeviceSuccess;
  }

  int32_t deviceAttribute(int32_t Attribute, int32_t &Value) override {
    std::optional<int> V = DeviceAttributeQuery ? DeviceAttributeQuery(Attribute) : std::nullopt;
    if (!V)
      return codegen::DeviceInvalidValue;
    Value = *V;
    return codegen::DeviceSuccess;
  }

  int32_t deviceLimit(int32_t Which, uint64_t &Value) override {
    // cudaLimit's values are the driver's CUlimit values, in the order of Limit.
    if (Which < 0 || Which >= static_cast<int32_t>(Limit::Count))
      return codegen::DeviceInvalidValue;
    Value = Parent.module().context().limit(static_cast<Limit>(Which));
    return codegen::DeviceSuccess;
  }

private:
  Function &Parent;
};

GridFailure failureOf(llvm::Error E) {
  GridFailure F;
  F.Result = Status::LaunchFailed;
  llvm::handleAllErrors(
      std::move(E),
      [&](const codegen::LaunchError &LE) {
        F.Message = LE.message();
        F.Result = launchStatus(LE.kind());
        F.Site = LE.site();
      },
      [&](const llvm::ErrorInfoBase &EI) { F.Message = EI.message(); });
  return F;
}

GridFailure runGrid(Function &F, const KernelCode &Code, codegen::LaunchConfig C, const char *Params, unsigned Depth);

/// A device-side cudaMemcpyAsync/cudaMemsetAsync, in its place among the launches; a bad address fails it as it
/// would fail a kernel.
GridFailure runCopy(const codegen::DeviceLaunch &L) {
  std::optional<codegen::Fault> F = codegen::runWithFaultGuard([&] {
    if (L.What == codegen::DeviceLaunch::Kind::Copy)
      std::memmove(reinterpret_cast<void *>(L.Dst), reinterpret_cast<const void *>(L.Src), L.Bytes);
    else
      std::memset(reinterpret_cast<void *>(L.Dst), L.Value, L.Bytes);
  });
  if (!F)
    return {};
  codegen::FaultSite Site;
  Site.HasAddress = true;
  Site.Address = F->Address;
  return {Status::IllegalAddress,
          std::string("device-side ") +
              (L.What == codegen::DeviceLaunch::Kind::Copy ? "cudaMemcpyAsync" : "cudaMemsetAsync") + " faulted",
          Site};
}

/// Runs the grids a grid launched, after it: each (with what it launches in turn) before the next, the tail
/// launches last. One grid at a time keeps every order CUDA promises (launches of one block into one stream in
/// order, a parent complete only with its children, a tail launch after all of its parent's other work) and
/// lets each grid use every worker.
GridFailure runChildren(Function &Parent, GridRuntime &R, const codegen::LaunchConfig &ParentConfig) {
  std::vector<codegen::DeviceLaunch> Launches = R.takeLaunches();
  std::stable_partition(Launches.begin(), Launches.end(),
                        [](const codegen::DeviceLaunch &L) { return L.Stream != codegen::DeviceStreamTailLaunch; });
  for (const codegen::DeviceLaunch &L : Launches) {
    if (L.What != codegen::DeviceLaunch::Kind::Kernel) {
      if (GridFailure G = runCopy(L); G.Result != Status::Success)
        return G;
      continue;
    }
    Function *Child = Parent.module().function(L.Kernel);
    if (!Child)
      return {Status::LaunchFailed, "device-side launch of unknown kernel '" + L.Kernel + "'", {}};
    llvm::Expected<KernelCode> KC = Child->code();
    if (!KC)
      return failureOf(KC.takeError());
    codegen::LaunchConfig C = ParentConfig;
    C.Grid = L.Grid, C.Block = L.Block, C.DynamicSharedBytes = L.SharedBytes;
    C.Workers = launchWorkers(); // a cooperative parent's one worker per block is not its children's
    C.Upgrade = Child->upgrade();
    C.CoResidentBlocks = Child->activeBlocksPerMultiprocessor(static_cast<int>(L.Block.count()), L.SharedBytes) *
                         uint64_t(deviceProperties().MultiprocessorCount);
    GridFailure G = runGrid(*Child, *KC, C, L.params(), R.depth() + 1);
    if (G.Result != Status::Success)
      return G;
  }
  return {};
}

/// Runs a grid and then the grids it launched (dynamic parallelism), recursively.
GridFailure runGrid(Function &F, const KernelCode &Code, codegen::LaunchConfig C, const char *Params, unsigned Depth) {
  GridRuntime R(F, Depth);
  C.Runtime = &R;
  if (llvm::Error E = codegen::launchKernel(*Code.Code, *Code.Kernel, C, Params))
    return failureOf(std::move(E));
  C.GridWorkspace = nullptr; // children are never cooperative
  return runChildren(F, R, C);
}

} // namespace

std::optional<int> (*ptxforge::driver::DeviceAttributeQuery)(int) = nullptr;

llvm::Error ptxforge::driver::launch(Context &Ctx, Stream *S, Function &F, const codegen::LaunchConfig &Config,
                                     std::vector<char> Params, LaunchKind Kind) {
  if (auto E = Driver::get().checkSticky())
    return E;
  if (auto E = F.checkLaunch(Config))
    return E;
  uint64_t Blocks = Config.Grid.count();
  uint64_t PerSm = F.activeBlocksPerMultiprocessor(static_cast<int>(Config.Block.count()), Config.DynamicSharedBytes);
  uint64_t Resident = PerSm * deviceProperties(Ctx.device()).MultiprocessorCount;
  if (Kind == LaunchKind::Cooperative) {
    if (Blocks > Resident)
      return makeError(Status::CooperativeLaunchTooLarge, "a cooperative grid of " + llvm::Twine(Blocks) +
                                                              " blocks; the device holds " + llvm::Twine(Resident) +
                                                              " of them at once");
  }
  auto Target = captureTarget(Ctx, S);
  if (!Target)
    return Target.takeError();
  if (*Target) // compiled at the graph's first launch
    return captureNode(*S, NodeType::Kernel, [&](GraphNode &N) {
      N.Kernel = {&F, Config, std::move(Params), Kind};
      return llvm::Error::success();
    });
  auto KC = F.code(); // a lazily loaded module compiles the kernel at its first launch
  if (!KC)
    return KC.takeError();
  const codegen::CompiledModule *Code = KC->Code;
  const codegen::KernelInfo *K = KC->Kernel;
  codegen::LaunchConfig C = Config;
  if (!C.Cluster.X && F.clusterShape(C).X) { // the kernel's required cluster shape
    C.Cluster = F.clusterShape(C);
    C.ExplicitCluster = true;
  }
  C.Workers = Kind == LaunchKind::Cooperative ? static_cast<unsigned>(Blocks) : launchWorkers();
  C.PinWorkers = processSettings().PinWorkers;
  C.TimeoutSeconds = processSettings().LaunchTimeoutSeconds;
  C.Upgrade = F.upgrade();
  C.Profile = F.profile();
  C.CoResidentBlocks = Resident; // blocks of a kernel that may spin wait for each other only within these
  bool Cooperative = Kind == LaunchKind::Cooperative;
  Function *Fn = &F;
  Ctx.submit(S, [Fn, Code, K, C, Cooperative, Params = std::move(Params)]() mutable {
    Driver &D = Driver::get();
    if (D.stickyError() != Status::Success)
      return; // a faulted device runs nothing more
    // Memcheck mode: the allocations as they are when the kernel runs (after the copies and frees before it).
    std::shared_ptr<const DeviceMemory::MemcheckView> Checked;
    if (processSettings().Memcheck) {
      Checked = DeviceMemory::get().memcheckView();
      C.Memcheck = &Checked->Memory;
      C.MemcheckFindings = &memcheckFindings();
    }
    llvm::scope_exit PrintFindings([&] {
      if (Checked)
        printMemcheckFindings();
    });
    // grid.sync() counts arrivals in a zeroed workspace the driver hands each cooperative launch.
    alignas(8) uint64_t GridWorkspace[2] = {0, 0};
    if (Cooperative)
      C.GridWorkspace = GridWorkspace;
    auto Start = std::chrono::steady_clock::now();
    GridFailure G = runGrid(*Fn, {Code, K}, C, Params.empty() ? nullptr : Params.data(), 0);
    bool OnFibers = !Code->blockEntry(*K) && !(C.Upgrade && C.Upgrade->Block.load(std::memory_order_acquire));
    Fn->noteRun(std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count(), OnFibers);
    if (G.Result == Status::Success)
      return;
    if (verbose())
      std::fputs(failureReport(G.Message, G.Site).c_str(), stderr);
    D.setStickyError(G.Result, G.Message);
  });
  return llvm::Error::success();
}
