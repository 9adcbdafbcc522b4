// A kernel of a loaded module (driver::Function): its host code (compiled at its first use when the module
// was loaded lazily), the attributes cuFuncGetAttribute/SetAttribute read and change, occupancy by the GPU
// generation's rules, and the checks and parameter packing of a launch.
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Module.h"
#include "ptxforge/driver/Settings.h"
#include "ptxforge/driver/Status.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

using namespace ptxforge;
using namespace ptxforge::driver;

namespace {
/// The properties of the device whose context loaded M: a kernel's limits are its device's.
const DeviceProperties &deviceOf(const Module &M) { return deviceProperties(M.context().device()); }
} // namespace

Function::Function(Module &Parent, const codegen::KernelInfo &Info, KernelCode Code)
    : Parent(Parent), Info(Info), Code(Code), Ready(Code.Code != nullptr),
      FromCache(Code.Code && Parent.fromComputeCache()) {
  const DeviceProperties &P = deviceOf(Parent);
  uint64_t Static = Info.StaticSharedBytes;
  MaxDynamicShared = Static >= P.SharedMemoryPerBlock ? 0 : static_cast<unsigned>(P.SharedMemoryPerBlock - Static);
  std::copy(Info.ReqClusterDim, Info.ReqClusterDim + 3, RequiredCluster);
}

llvm::Expected<KernelCode> Function::code() {
  if (Ready.load(std::memory_order_acquire))
    return Code;
  auto Start = std::chrono::steady_clock::now();
  auto C = Parent.compileFunction(*this);
  // The JIT's cost per kernel, for programs whose libraries bring many (PTXFORGE_DRIVER_VERBOSE).
  if (C && processSettings().Verbose)
    std::fprintf(stderr, "ptxforge: JIT: %s ready in %.0f ms%s\n", Info.Name.c_str(),
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start).count(),
                 upgrade()   ? (FromCache ? " (quick code from the compute cache; optimized code compiling)"
                                          : " (quick code; optimized code compiling)")
                 : FromCache ? " (compute cache)"
                             : "");
  return C;
}

unsigned Function::maxThreadsPerBlock() const {
  auto Product = [](const uint32_t D[3]) {
    uint64_t N = 1;
    for (int I = 0; I < 3; ++I)
      N *= D[I] ? D[I] : 1;
    return N;
  };
  uint64_t Limit = deviceOf(Parent).MaxThreadsPerBlock;
  if (Info.ReqNtid[0])
    Limit = std::min(Limit, Product(Info.ReqNtid));
  else if (Info.MaxNtid[0])
    Limit = std::min(Limit, Product(Info.MaxNtid));
  return static_cast<unsigned>(Limit);
}

llvm::Error Function::setMaxDynamicSharedBytes(int Bytes) {
  const DeviceProperties &P = deviceOf(Parent);
  if (Bytes < 0 || uint64_t(Bytes) + Info.StaticSharedBytes > P.SharedMemoryPerBlockOptin)
    return makeError(Status::InvalidValue, "more shared memory than the device offers per block");
  MaxDynamicShared = static_cast<unsigned>(Bytes);
  return llvm::Error::success();
}

llvm::Error Function::setPreferredCarveout(int Percent) {
  if (Percent < -1 || Percent > 100)
    return makeError(Status::InvalidValue, "carveout is a percentage (or -1)");
  Carveout = Percent;
  return llvm::Error::success();
}

unsigned Function::constBytes() const { return Parent.constBytes(); }
unsigned Function::localBytes() const { return Parent.localBytes(Info.Name); }
unsigned Function::numRegisters() const {
  // ptxas fits a kernel's registers to its launch bound (.maxntid/.reqntid, else the device's block limit), so a
  // block of maxThreadsPerBlock() threads always gets its registers; the count from the PTX is an estimate
  // (CUB's kernels declare thousands) that would otherwise make the occupancy of launchable blocks 0.
  const DeviceProperties &P = deviceOf(Parent);
  unsigned Bound = (maxThreadsPerBlock() + P.WarpSize - 1) / P.WarpSize * P.WarpSize;
  return std::max(1u, std::min(Parent.registerCount(Info.Name), P.RegistersPerMultiprocessor / Bound));
}

int Function::activeBlocksPerMultiprocessor(int BlockSize, uint64_t DynamicShared) const {
  const DeviceProperties &P = deviceOf(Parent);
  if (BlockSize <= 0 || unsigned(BlockSize) > maxThreadsPerBlock())
    return 0;
  unsigned Warps = (unsigned(BlockSize) + P.WarpSize - 1) / P.WarpSize;
  unsigned ByThreads = P.MaxThreadsPerMultiprocessor / (Warps * P.WarpSize);
  unsigned ByRegisters = P.RegistersPerMultiprocessor / std::max(1u, numRegisters() * Warps * P.WarpSize);
  uint64_t Shared = staticSharedBytes() + DynamicShared;
  unsigned ByShared = P.MaxBlocksPerMultiprocessor;
  if (Shared)
    ByShared = static_cast<unsigned>(P.SharedMemoryPerMultiprocessor / (Shared + P.ReservedSharedMemoryPerBlock));
  return static_cast<int>(std::min({P.MaxBlocksPerMultiprocessor, ByThreads, ByRegisters, ByShared}));
}

Function::BlockSuggestion Function::suggestBlockSize(llvm::function_ref<uint64_t(int)> DynamicShared, int Limit) const {
  int Max = static_cast<int>(maxThreadsPerBlock());
  if (Limit > 0)
    Max = std::min(Max, Limit);
  BlockSuggestion Best;
  int BestThreads = -1, BestBlocks = 0;
  for (int B = Max; B > 0; B -= (B % 32 ? B % 32 : 32)) {
    int Blocks = activeBlocksPerMultiprocessor(B, DynamicShared(B));
    if (Blocks * B > BestThreads) {
      Best.BlockSize = B;
      BestThreads = Blocks * B;
      BestBlocks = Blocks;
    }
  }
  Best.MinGridSize = BestBlocks * static_cast<int>(deviceOf(Parent).MultiprocessorCount);
  return Best;
}

llvm::Error Function::setNonPortableClusterSizeAllowed(int Value) {
  NonPortableClusters = Value != 0; // an H100 takes any value and reads back 0 or 1
  return llvm::Error::success();
}

llvm::Error Function::setClusterSchedulingPolicy(int Policy) {
  if (Policy < 0 || Policy > 2)
    return makeError(Status::InvalidValue, "the cluster scheduling policy is 0, 1 or 2");
  ClusterPolicy = Policy;
  return llvm::Error::success();
}

llvm::Error Function::setRequiredClusterDim(unsigned Dim, int Value) {
  if (Info.ReqClusterDim[0] || Dim > 2 || Value < 0)
    return makeError(Status::InvalidValue, "the kernel's .reqnctapercluster fixes its cluster shape");
  RequiredCluster[Dim] = static_cast<uint32_t>(Value);
  return llvm::Error::success();
}

unsigned Function::maxClusterSize() const {
  unsigned Limit = NonPortableClusters ? 16 : 8;
  return Info.MaxClusterRank ? std::min(Limit, Info.MaxClusterRank) : Limit;
}

codegen::Dim3 Function::clusterShape(const codegen::LaunchConfig &C) const {
  if (C.Cluster.X)
    return C.Cluster;
  return {RequiredCluster[0], RequiredCluster[1], RequiredCluster[2]};
}

/// What NVIDIA's driver refuses with CUDA_ERROR_INVALID_CLUSTER_SIZE: a cluster larger than the kernel allows,
/// a shape other than its required one (.reqnctapercluster or the REQUIRED_CLUSTER_* attributes), no shape for
/// an .explicitcluster kernel, and (WholeGrid) a grid that is not a whole number of clusters.
llvm::Error Function::checkClusterShape(const codegen::LaunchConfig &C, bool WholeGrid) const {
  codegen::Dim3 D = clusterShape(C);
  if (!D.X && !D.Y && !D.Z) {
    if (Info.ExplicitCluster)
      return makeError(Status::InvalidClusterSize, "the kernel is .explicitcluster: the launch needs a cluster shape");
    return llvm::Error::success();
  }
  if (!D.count())
    return makeError(Status::InvalidClusterSize, "a cluster dimension is 0");
  if (D.count() > maxClusterSize())
    return makeError(Status::InvalidClusterSize, "a cluster of " + llvm::Twine(D.count()) +
                                                     " blocks; the kernel allows " + llvm::Twine(maxClusterSize()));
  if (RequiredCluster[0] && (D.X != RequiredCluster[0] || D.Y != RequiredCluster[1] || D.Z != RequiredCluster[2]))
    return makeError(Status::InvalidClusterSize, "the cluster is not the kernel's required cluster shape");
  if (WholeGrid && (C.Grid.X % D.X || C.Grid.Y % D.Y || C.Grid.Z % D.Z))
    return makeError(Status::InvalidClusterSize, "the grid is not a whole number of clusters");
  return llvm::Error::success();
}

llvm::Expected<int> Function::maxActiveClusters(const codegen::LaunchConfig &C) const {
  if (llvm::Error E = checkClusterShape(C, /*WholeGrid=*/false))
    return E;
  codegen::Dim3 D = clusterShape(C);
  int PerSm = activeBlocksPerMultiprocessor(static_cast<int>(C.Block.count()), C.DynamicSharedBytes);
  if (!D.X || PerSm <= 0) // no cluster shape at all: no clusters (as an H100 answers)
    return 0;
  // ptxforge runs a cluster's blocks on workers of their own, so any cluster the kernel allows fits at least
  // once, whatever the host's core count (the modelled multiprocessors).
  uint64_t Blocks = uint64_t(PerSm) * deviceProperties().MultiprocessorCount;
  return static_cast<int>(std::max<uint64_t>(1, Blocks / D.count()));
}

llvm::Expected<int> Function::maxPotentialClusterSize(const codegen::LaunchConfig &C) const {
  if (llvm::Error E = checkClusterShape(C, /*WholeGrid=*/false))
    return E;
  if (activeBlocksPerMultiprocessor(static_cast<int>(C.Block.count()), C.DynamicSharedBytes) <= 0)
    return 0;
  return NonPortableClusters ? 16 : 8; // an H100's answer, whatever the required shape or .maxclusterrank
}

llvm::Error Function::checkLaunch(const codegen::LaunchConfig &C) const {
  const DeviceProperties &P = deviceOf(Parent);
  const codegen::Dim3 &B = C.Block, &G = C.Grid;
  if (!B.X || !B.Y || !B.Z || B.X > P.MaxBlockDim[0] || B.Y > P.MaxBlockDim[1] || B.Z > P.MaxBlockDim[2])
    return makeError(Status::InvalidValue, "block dimensions out of range");
  if (B.count() > maxThreadsPerBlock())
    return makeError(Status::InvalidValue, "too many threads per block");
  if (Info.ReqNtid[0] &&
      (B.X != Info.ReqNtid[0] || B.Y != std::max(1u, Info.ReqNtid[1]) || B.Z != std::max(1u, Info.ReqNtid[2])))
    return makeError(Status::InvalidValue, "the block does not match the kernel's .reqntid");
  if (!G.X || !G.Y || !G.Z || G.X > P.MaxGridDim[0] || G.Y > P.MaxGridDim[1] || G.Z > P.MaxGridDim[2])
    return makeError(Status::InvalidValue, "grid dimensions out of range");
  if (C.DynamicSharedBytes > MaxDynamicShared ||
      Info.StaticSharedBytes + C.DynamicSharedBytes > P.SharedMemoryPerBlockOptin)
    return makeError(Status::InvalidValue, "more dynamic shared memory than the kernel allows");
  return checkClusterShape(C, /*WholeGrid=*/true);
}

llvm::Expected<std::vector<char>> Function::packParams(void *const *KernelParams) const {
  std::vector<char> Buffer(Info.ParamBytes);
  if (Info.Params.empty())
    return Buffer;
  if (!KernelParams)
    return makeError(Status::InvalidValue, "the kernel has parameters but none were passed");
  for (size_t I = 0; I < Info.Params.size(); ++I) {
    const codegen::ParamInfo &P = Info.Params[I];
    if (!KernelParams[I])
      return makeError(Status::InvalidValue, "kernelParams[" + llvm::Twine(I) + "] is null");
    std::memcpy(Buffer.data() + P.Offset, KernelParams[I], P.Size);
  }
  return Buffer;
}

llvm::Expected<std::vector<char>> Function::packParams(const void *Data, size_t Size) const {
  std::vector<char> Buffer(Info.ParamBytes);
  if (!Info.ParamBytes)
    return Buffer;
  if (!Data || Size < Info.ParamBytes)
    return makeError(Status::InvalidValue, "the parameter buffer is smaller than the kernel's parameters");
  std::memcpy(Buffer.data(), Data, Info.ParamBytes);
  return Buffer;
}

void Function::noteRun(double Seconds, bool OnFibers) {
  // Time on the quick code is what the optimized compile saves (BackgroundJobs::credit).
  if (OptimizeJob && !Upgrade.Block.load(std::memory_order_acquire))
    BackgroundJobs::get().credit(OptimizeJob, Seconds);
  // The hot compile's cost, measured (CPU, a loaded 2-core host): CUB's onesweep region split (237 cuts) took
  // 9.3 s; cub_big's 143 resume loops added 55 s to its optimized compile.
  constexpr double CompileSecondsPerCut = 0.04, CompileSecondsPerResumeLoop = 0.35;
  if (HotStarted.load(std::memory_order_relaxed))
    return;
  double Expected = 0;
  if (uint32_t Cuts = DeferredCuts.load(std::memory_order_acquire); Cuts && OnFibers)
    Expected = Cuts * CompileSecondsPerCut;
  else if (uint32_t Loops = DeferredResumeLoops.load(std::memory_order_acquire);
           Loops && !OnFibers && Profile.ResumableRounds.load(std::memory_order_relaxed))
    Expected = Loops * CompileSecondsPerResumeLoop;
  if (!Expected)
    return;
  auto Micros = static_cast<uint64_t>(Seconds * 1e6);
  if (double(HotMicroseconds.fetch_add(Micros, std::memory_order_relaxed) + Micros) < Expected * 1e6)
    return;
  if (!HotStarted.exchange(true, std::memory_order_acq_rel))
    Parent.startHotCompile(*this);
}
