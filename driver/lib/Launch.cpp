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

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdio>
#include <cstdlib>
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

} // namespace

llvm::Error ptxforge::driver::launch(Context &Ctx, Stream *S, Function &F, const codegen::LaunchConfig &Config,
                                     std::vector<char> Params, LaunchKind Kind) {
  if (auto E = Driver::get().checkSticky())
    return E;
  if (auto E = F.checkLaunch(Config))
    return E;
  uint64_t Blocks = Config.Grid.count();
  uint64_t PerSm = F.activeBlocksPerMultiprocessor(static_cast<int>(Config.Block.count()), Config.DynamicSharedBytes);
  uint64_t Resident = PerSm * deviceProperties().MultiprocessorCount;
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
  C.CoResidentBlocks = Resident; // blocks of a kernel that may spin wait for each other only within these
  bool Cooperative = Kind == LaunchKind::Cooperative;
  Ctx.submit(S, [Code, K, C, Cooperative, Params = std::move(Params)]() mutable {
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
    Status Result = Status::Success;
    std::string Message;
    codegen::FaultSite Site;
    if (llvm::Error E = codegen::launchKernel(*Code, *K, C, Params.empty() ? nullptr : Params.data())) {
      Result = Status::LaunchFailed;
      llvm::handleAllErrors(
          std::move(E),
          [&](const codegen::LaunchError &LE) {
            Message = LE.message();
            Result = launchStatus(LE.kind());
            Site = LE.site();
          },
          [&](const llvm::ErrorInfoBase &EI) { Message = EI.message(); });
    }
    if (Result == Status::Success)
      return;
    if (verbose())
      std::fputs(failureReport(Message, Site).c_str(), stderr);
    D.setStickyError(Result, Message);
  });
  return llvm::Error::success();
}
