// Stage 4 of the pipeline: a verified ptx::Module -> an LLVM module. Each PTX thread is a call of a scalar
// "thread function". A kernel also gets a block function that runs its block's threads in loops LLVM can
// vectorize: barrier-free kernels a plain loop, kernels synchronised by whole-block `bar.sync` and the warp
// collectives WarpRendezvous.h handles, in their own body, a region-split one (cut at each barrier, no fibers).
// Only the rest (named or counted barriers, collectives or `exit` in callees, ...) and the tiered JIT's quick code
// run without one: a synchronising kernel then runs one fiber per thread in codegen/exec. KernelInfo carries what
// launching needs (parameter layout, shared memory, the block function).
#pragma once

#include "ptxforge/ptx/Verifier.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace ptxforge::codegen {

struct ParamInfo {
  std::string Name;
  uint64_t Offset = 0, Size = 0, Align = 1;
};

struct KernelInfo {
  std::string Name;   ///< the `.entry` name
  std::string Symbol; ///< the LLVM thread function: void(ThreadContext *, const char *params)
  std::vector<ParamInfo> Params;
  uint64_t ParamBytes = 0;
  uint64_t StaticSharedBytes = 0; ///< dynamic shared memory starts here (aligned to 16)
  /// Synchronises its threads (barriers or warp collectives, in its body or a callee). Where no block function
  /// runs a block (BlockSymbol empty: quick code, or a kernel the region split cannot take) its threads then run
  /// as fibers; a region-split block function runs them without.
  bool Synchronizes = false;
  /// `void(ThreadContext *Template, const char *params, u64 First, u64 Count)` (BlockRangeFunction): runs
  /// blocks First .. First+Count-1, every thread of a block in JIT'd loops (the thread function inlined, so
  /// LLVM can vectorize across threads). Empty without block functions (LoweringOptions), and when the kernel
  /// synchronises in a way the region split cannot cut at or a callee may `exit` (which unwinds to a per-thread
  /// point).
  std::string BlockSymbol;
  bool ExitInCallee = false;
  /// Has a loop that may wait for other threads or blocks (a spin point, codegen/lib/ProgressPoints.h): its
  /// threads run as fibers, and a grid that fits the device's occupancy runs all its blocks at once.
  bool MaySpin = false;
  /// The kernel's barriers and collectives when they alone kept it from a region-split block function (more
  /// than LoweringOptions::RegionCutBudget, at most HotRegionCutLimit), else 0. Its threads run as fibers; the
  /// driver's hot tier compiles the split once the kernel has run long enough on fibers to pay for it.
  uint32_t DeferredRegionCuts = 0;
  /// The resume loops its region split left out (LoweringOptions::Resume): the generic loop counts, through
  /// LaunchConfig::Profile, each round in which one would have run, and the driver's hot tier compiles
  /// them once that happens in a kernel that has run long enough to pay for their compile. 0: none left out.
  uint32_t DeferredResumeLoops = 0;
  uint32_t ReqNtid[3] = {0, 0, 0}, MaxNtid[3] = {0, 0, 0};
  /// Thread-block clusters: `.reqnctapercluster` (0: none; a launch without cluster dimensions uses it),
  /// `.maxclusterrank` (0: none) and `.explicitcluster` (launches must give cluster dimensions).
  uint32_t ReqClusterDim[3] = {0, 0, 0}, MaxClusterRank = 0;
  bool ExplicitCluster = false;
};

struct GlobalInfo {
  std::string Name, Symbol;
  uint64_t Size = 0;
};

struct LoweredModule {
  std::unique_ptr<llvm::LLVMContext> Context;
  std::unique_ptr<llvm::Module> Module;
  std::vector<KernelInfo> Kernels;
  std::vector<GlobalInfo> Globals; ///< `.global`/`.const` variables (cuModuleGetGlobal)
};

/// A stop request for a compile nobody waits for any more (the driver's background compiles at unload and
/// exit), set by another thread: the compile stops at its next function or pass and fails (compileCancelled).
struct CancelToken {
  std::atomic<bool> Requested{false};
  /// Set before Requested when the process is ending: the compile then leaves its IR unfreed (freeing a big
  /// module's IR takes longer than the rest of exit).
  std::atomic<bool> Abandon{false};
};

/// Whether Cancel (LoweringOptions::Cancel, CompileOptions::Cancel) asks the compile to stop.
inline bool cancelRequested(const CancelToken *Cancel) {
  return Cancel && Cancel->Requested.load(std::memory_order_acquire);
}
/// The error of a compile stopped by its CancelToken.
llvm::Error compileCancelled();

/// A cancelled compile's end: LM's IR is freed, or with Cancel->Abandon left unfreed. Returns compileCancelled().
llvm::Error dropCancelled(LoweredModule &LM, const CancelToken *Cancel);

/// What a region split does with its resume loops (codegen/lib/BarrierRegions.cpp, emitResumeLoops: a warp-
/// vectorized loop per cut loop for the threads that stand in it while the others wait at a barrier): emits them;
/// leaves them out, its generic loop counting each round in which one would have run (ptxrt_resumable_round into
/// LaunchConfig::Profile, which the driver's hot tier reads); or leaves them out silently. Most cut loops never
/// see their threads diverge, and each resume loop costs about a third of a second of optimized compile (cub_big:
/// 143 of them, +40%): so by default only the hot tier's kernels get them.
enum class ResumeLoops : uint8_t { Emit, Count, Omit };

/// How to lower. The defaults are what a JIT compile wants; nothing here depends on the environment (the driver
/// and the CLI read it, see README.md's table of variables).
struct LoweringOptions {
  std::string ModuleName = "ptx";
  /// Whether kernels get block functions (the vectorized loops over a block's threads, region-split barrier
  /// code): without them a launch calls the thread function once per thread, which compiles several times
  /// faster and runs several times slower.
  bool BlockFunctions = true;
  /// Whether region-split block functions also cut their innermost loops (LoopCuts.h); off only to measure
  /// what the cuts bring, or to rule them out.
  bool LoopCuts = true;
  /// Memcheck mode (PTXFORGE_MEMCHECK at the edges): every global, shared and generic load and store first calls
  /// ptxrt_mc_access (codegen/exec/Memcheck.cpp) with its address, size and PTX location, and barriers report
  /// their arrivals, so that accesses the page guard cannot see (inside a page, uninitialized, racing) are found
  /// and reported as compute-sanitizer does. Off: the generated code is unchanged. Part of the compute cache's key.
  bool Memcheck = false;
  /// The compile-time budget of region splitting: a region-split block function holds a loop per region (and
  /// per version of a loop region) and a generic loop with a copy of each, so its optimization costs about
  /// 10 ms per region (a loaded 2-core AVX-512 host; the kernel's size aside). A kernel with more barriers and
  /// collectives than this runs on fibers, whose thread function compiles in time linear in its size (bar.sync
  /// x2000: 0.6 s instead of ~25 s); loop cuts (3 regions each) are made only while the total stays within it.
  /// An optimization remark (ptxforge-regions) says so. Part of the compute cache's key.
  unsigned RegionCutBudget = 128;
  /// The hot tier (a JIT's answer to the budget above): the kernels named here are region-split up to
  /// HotRegionCutLimit cuts, for a caller that has seen them run on fibers long enough to pay for the compile
  /// (KernelInfo::DeferredRegionCuts). The limit bounds the compile's time and memory. Where it names any, only
  /// the kernels named get block functions: the caller takes their parts alone. Part of the compute cache's key.
  std::vector<std::string> HotKernels;
  unsigned HotRegionCutLimit = 2048;
  /// What the resume loops of kernels outside HotKernels become; the hot tier's kernels get them emitted unless
  /// Omit. Part of the compute cache's key.
  ResumeLoops Resume = ResumeLoops::Count;
  /// A kernel the region builder should split but cannot (the lowering broke the builder's contract, a bug)
  /// fails the lowering instead of running on fibers with an optimization remark. Tests set it.
  bool RegionSplitFailureIsError = false;
  /// See CancelToken: once requested, lowering stops before the next function and fails (compileCancelled).
  const CancelToken *Cancel = nullptr;
};

/// Lowers every function of M. Unsupported instructions are errors naming the instruction and its location.
llvm::Expected<LoweredModule> lowerToLLVM(const ptx::VerifiedModule &M, const ptx::SourceBuffer *Source,
                                          const LoweringOptions &Options = {});

} // namespace ptxforge::codegen
