// Private to codegen/lib: ptxforge's own LLVM passes, each in its own file, named in Passes.def (the registry a
// textual pipeline and ptxforge-opt find them by) and run by optimizeModule.
#pragma once

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace llvm {
class Instruction;
class LoadInst;
class Module;
class PassBuilder;
class PassInstrumentationCallbacks;
} // namespace llvm

namespace ptxforge::codegen {
enum class ResumeLoops : uint8_t; // Lowering.h
} // namespace ptxforge::codegen

namespace ptxforge::codegen::passes {

// Each pass is a new-PM pass over a function or a module (UNIT); one whose Passes.def line takes parameters holds
// the setting they parse to. The declarations differ in nothing else, so these two macros write them, and each
// pass's documentation stands above its line.
#define PTXFORGE_PASS(CLASS, UNIT)                                                                                     \
  struct CLASS : llvm::PassInfoMixin<CLASS> {                                                                          \
    llvm::PreservedAnalyses run(llvm::UNIT &IR, llvm::UNIT##AnalysisManager &AM);                                      \
  };
#define PTXFORGE_PASS_WITH_SETTING(CLASS, UNIT, TYPE, SETTING)                                                         \
  struct CLASS : llvm::PassInfoMixin<CLASS> {                                                                          \
    explicit CLASS(TYPE SETTING) : SETTING(SETTING) {}                                                                 \
    llvm::PreservedAnalyses run(llvm::UNIT &IR, llvm::UNIT##AnalysisManager &AM);                                      \
    TYPE SETTING;                                                                                                      \
  };

/// The LLVM address space of every memory access through an address PTX computes (a register, an absolute
/// address). Address 0 is an address like any other to PTX (an access there faults: CUDA_ERROR_ILLEGAL_ADDRESS),
/// but in address space 0 LLVM takes an access through null for undefined behaviour and deletes the path that
/// makes it (`ld [0]` ran on and dropped later stores; a select of null read through the other pointer). In
/// any other address space null is a valid pointer (NullPointerIsDefined), so only these accesses lose that
/// assumption; ptxforge's own memory (contexts, per-thread arrays, stack, the shared window) stays in 0, where
/// the `null_pointer_is_valid` attribute cost region kernels their register allocation (sgemm 125 -> 208 ms).
/// x86 lowers 1 like 0 (256-258 would be segment registers, 270-272 32-bit pointers).
constexpr unsigned PtxAddressSpace = 1;

/// PTX computes addresses as 64-bit integers, so lowered code reaches memory through `inttoptr`, which hides
/// from SCEV and alias analysis where an access points: loops over threads do not vectorize and loads are
/// not hoisted. This pass loads 64-bit kernel parameters as pointers (a pointer stays an integer for every
/// integer use through ptrtoint) and rewrites `inttoptr(V)`, where V is a pointer's integer plus an offset
/// (through add/sub/or-disjoint/phi/select), as `getelementptr i8, P, V - ptrtoint(P)`: the same address,
/// now based on P. Parameters are pointers in PtxAddressSpace (they may be null); a PTX address based on
/// ptxforge's own object (a local array, a global, the shared window) moves to that object's address space 0.
PTXFORGE_PASS(PointerProvenancePass, Function)

/// Whole-function vectorization of each thread loop (WarpVectorize.cpp): W threads per trip as W-lane vectors,
/// their branches and loops linearized under masks, so that threads with loops of their own vectorize too.
/// Lanes: the vector width for 32-bit values (0: the pass does nothing). Runs before LLVM's loop vectorizer and
/// takes the thread loops with inner loops, which that one cannot vectorize.
PTXFORGE_PASS_WITH_SETTING(WarpVectorizePass, Function, unsigned, Lanes)

/// Thread loops vectorize with the thread's guard (`if (i < n)`) as a mask, so every vector load and store is
/// masked, and masked stores cost several times a plain one (Zen 4: vecadd ran at a third of the memory
/// bandwidth). Almost every vector iteration has all lanes on, or (the other side of a divergent branch) none.
/// This pass versions each block's stretch of masked accesses once (a copy with plain accesses when all of
/// their masks are all true), and gives every access left masked a plain path for its all-true mask and none
/// for an all-false one. Runs last, after the vectorizers.
PTXFORGE_PASS(UnmaskFullVectorsPass, Function)

/// LLVM 22's loop vectorizer may take an address built on a narrow recurrence (`t & 3`: an i2 one) for a
/// consecutive one under a check that the recurrence does not wrap, then drop that check because a wider
/// recurrence's check seems to imply it (llvm/llvm-project#191382, fixed in LLVM 23): the vector loads lanes
/// 4..15 of `s[2t - (t & 3)]` from the wrong addresses (bitonic sort's compare-exchange steps). Before the loop
/// vectorizer, this pass finds the recurrences whose checks LLVM would drop, with LLVM's own implication test,
/// and freezes the values that bring them in, which SCEV cannot see through: such an access becomes a gather.
/// Where no value can be frozen the loop is left unvectorized.
PTXFORGE_PASS(HideNarrowRecurrencesPass, Function)

/// On some targets (AVX2 hosts) the loop vectorizer builds a thread loop's vector of thread ids lane by lane:
/// scalar id + 0, id + 1, ..., each inserted into the vector, a dozen instructions per vector where one add
/// would do. This pass rewrites such a vector, built from lanes that are lane 0's value plus the lane number,
/// as splat(lane 0) + <0, 1, 2, ...>. Runs after the vectorizers.
PTXFORGE_PASS(LaneSequencesPass, Function)

/// Values live across a barrier or loop cut sit in per-thread arrays, so a thread loop that reads memory
/// through such a register (sgemm's tile pointers, stepped once per tile) vectorizes to a gather, even where the
/// threads' pointers are consecutive, as they mostly are. This pass tests each gather or scatter of 4+ lanes at
/// run time: when lane 0 is on and every active lane I points I elements past lane 0, a masked vector load or
/// store does it instead. Runs after the vectorizers, before UnmaskFullVectorsPass (which then drops the mask of
/// full vectors).
PTXFORGE_PASS(ContiguousGathersPass, Function)

/// A gather through a stepped per-thread pointer (p += S each trip of the kernel's loop, kept in a per-thread
/// array: sgemm's tile pointers) reads lines the hardware prefetchers do not foresee (B's tile rows are N floats
/// apart), and the thread loop's bookkeeping leaves room in the out-of-order window for only a few such loads
/// in flight. This pass prefetches what the same lanes will read on the next trip, lane 0's and the last lane's
/// p + S: the block loads it a whole tile later. Runs before ContiguousGathersPass.
PTXFORGE_PASS(PrefetchSteppedPointersPass, Function)

/// Alias scopes from what the lowering knows about each memory access, so LLVM can vectorize loops over
/// threads without runtime overlap checks (which are impossible, and block vectorization, when addresses come
/// from per-thread arrays or 32-bit shared offsets):
/// - `ld.global.nc` and `ld.const` read memory that stays read-only for the whole launch (the PTX ISA leaves a
///   kernel that writes what it reads with .nc undefined): no write of the kernel aliases them.
/// - `.shared` and `.global` accesses touch disjoint memory (the block's shared window is not device memory).
/// - ptxforge's own memory (per-thread register arrays, thread states, the context copy) is never PTX memory.
/// The lowering marks accesses (markAccess, markReadOnlyLoad); addMemoryScopes, run once the module is
/// lowered, turns the marks into `!alias.scope` / `!noalias` lists. Unmarked accesses may alias anything.
enum class MemoryClass : uint32_t { Shared, Global, OtherPtx, Internal }; // addMemoryScopes indexes by it
void markAccess(llvm::Instruction *I, MemoryClass C);
void markReadOnlyLoad(llvm::LoadInst *L);
void addMemoryScopes(llvm::Module &M);
/// addMemoryScopes as a pass (`ptxforge-memory-scopes`), for running it on IR alone.
PTXFORGE_PASS(MemoryScopesPass, Module)
/// Whether addMemoryScopes put I in the `.global` scope.
bool isGlobalAccess(const llvm::Instruction &I);
/// Whether addMemoryScopes put I in the scope of ptxforge's own memory (MemoryClass::Internal: the threads'
/// register slots, the block function's bookkeeping), which no PTX access reaches.
bool isInternalAccess(const llvm::Instruction &I);

/// Loops over threads are parallel loops for LLVM (`llvm.loop.parallel_accesses`): no thread's plain `.global`
/// or `.shared` access depends on another's in the same stretch between barriers unless the program races, and
/// a racing warp on the GPU gives no order either (its lanes load together, then store together, as a vector
/// does). So the vectorizer needs no overlap checks between the threads' accesses. Only plain (not volatile,
/// not atomic) accesses to those spaces join the group (threadAccessGroup); a loop with any other memory
/// access (local memory, which the threads of a loop share as one stack slot, generic addresses, emulated
/// shared atomics, ptxforge's per-thread arrays indexed other than by the loop's own thread) is not parallel and
/// keeps LLVM's checks. A region loop's accesses to the thread's own slots join the group (BarrierRegions.cpp).
llvm::MDNode *threadAccessGroup(llvm::Module &M);
void markThreadParallel(llvm::Instruction *I);

/// Stores to memory the launch will not read back soon cost a read of the line first (the cache fetches a line
/// before a write), a third of a streaming kernel's traffic (vecadd: two reads, one write). On x86 this pass gives
/// each plain full-vector `.global` store of a block function a streaming (non-temporal) path, taken when the
/// vector is aligned and the launch writes at least half the last-level cache through it (%ntid * %nctaid times
/// the lane's bytes), with an sfence before the function returns. Functions with atomics, fences, volatile
/// accesses or calls that may have them keep plain stores. A C++ vecadd on 2 MiB pages: 7.7 -> 5.6 ms. Runs
/// last (after UnmaskFullVectorsPass made the plain stores). ThresholdBytes: CompileOptions::StreamingStoreBytes
/// (0: the pass does nothing).
/// Block functions (`__ptx_block_K`) get the thread context as argument 0; the parts of a region-split block
/// function that run as functions of their own (BarrierRegions.cpp: outlinePieces) name theirs with this
/// attribute (its argument number).
inline constexpr const char *ContextArgumentAttr = "ptxforge-context-arg";
PTXFORGE_PASS_WITH_SETTING(StreamingStoresPass, Function, uint64_t, ThresholdBytes)

/// The thread loops' vector width (optimizeModule, before LLVM's pipeline): the lowering marks each innermost
/// loop over threads (ThreadLoop.h: ThreadLoopMarker); this pass adds `llvm.loop.vectorize.width` Lanes and
/// `llvm.loop.interleave.count` 1 to the marked loops' `llvm.loop` (Lanes 0: the pass does nothing).
PTXFORGE_PASS_WITH_SETTING(WidenThreadLoopsPass, Function, unsigned, Lanes)

/// x86's fast instruction selector (the quick tier's, CompileOptions::FastCodeGen) hands what it cannot select to
/// SelectionDAG, one call at a time, or for anything else the whole block above it: on cuDNN's kernels that was
/// most of code generation. This pass rewrites those instructions into forms it selects, with the same results
/// bit for bit: scalar llvm.fma and llvm.roundeven as calls of the C library's fma(f) and roundeven(f), integer
/// min/max as a compare and select, fabs/copysign as bit operations, minnum/maxnum as the compares and selects
/// x86's lowering makes, a float select on a compare of another type as an integer select, and half/bfloat
/// loads and conversions on their bits. Runs last, and on unoptimized (optnone) functions too, since code
/// generation is what it is for. cuDNN's softmax kernels: 9,448 fallbacks -> 35, selection 1.5 -> 0.3 CPU s, the
/// quick tier's whole compile 6-12% (median of 14 alternating runs 11.2 -> 9.9 s; its -O1 pipeline, InstCombine
/// first, is most of the rest); CUB's within the noise.
struct FastISelFormsPass : llvm::PassInfoMixin<FastISelFormsPass> {
  llvm::PreservedAnalyses run(llvm::Function &F, llvm::FunctionAnalysisManager &AM);
  static bool isRequired() { return true; }
};

/// Functions over Budget instructions (CompileOptions::FunctionSizeBudget; 0: no limit) are left unoptimized
/// (optnone, noinline), with a missed-optimization remark, so that no input makes the optimizer run without bound.
/// So are replay-only functions (isReplayOnly), without a remark.
PTXFORGE_PASS_WITH_SETTING(LimitOptimizationPass, Module, unsigned, Budget)

/// The thread function of a kernel that the lowering gave a block function: every launch runs the block function
/// (with its own copy of the thread's code), and the thread function runs only when a launch has faulted, to
/// replay the faulting block thread by thread and name the thread (exec/Launch.cpp: locateByReplay). Its speed
/// does not matter, so it is compiled without optimization (LimitOptimizationPass), by the code generator's fast
/// path for optnone functions: optimized, it was a fifth of a module's code and of its compile time.
inline constexpr const char *ReplayOnlyAttr = "ptxforge-replay-only";
inline void markReplayOnly(llvm::Function &F) { F.addFnAttr(ReplayOnlyAttr); }
inline bool isReplayOnly(const llvm::Function &F) { return F.hasFnAttribute(ReplayOnlyAttr); }

/// The warp rendezvous (WarpRendezvous.h) over a thread function with marked cuts (Markers.h): each rendezvous
/// call becomes a cut edge, a collective's with its inputs deposited in the warp slots. In a compile it runs on the
/// block function's copy (emitRegionBlockFunction), never on the thread function that fibers run; alone, it is
/// for ptxforge-opt.
PTXFORGE_PASS(WarpRendezvousPass, Function)

/// The loop cuts (LoopCuts.h) over a thread function with marked cuts, within a budget of CutBudget regions
/// (LoweringOptions::RegionCutBudget, `cut-budget=N`). Like the warp rendezvous, it runs on the block function's
/// copy in a compile.
PTXFORGE_PASS_WITH_SETTING(LoopCutsPass, Function, unsigned, CutBudget)

/// The block functions of region kernels as a pass over lowered IR: each thread function `__ptx_kernel_K` with
/// marked cuts (Markers.h) and no block function yet gets `__ptx_block_K`, a copy put through the warp
/// rendezvous, the loop cuts (unless `no-loop-cuts`) and the region builder (BarrierRegions.h). The lowering
/// does the same itself, kernel by kernel, where the PTX says a kernel qualifies (regionSplittable); this pass is
/// how it is run and tested alone. A thread function whose copy a pass refuses keeps running on fibers, with the
/// lowering's missed-optimization remark.
struct RegionBlocksOptions {
  bool LoopCuts;      ///< LoweringOptions::LoopCuts (`loop-cuts`, `no-loop-cuts`)
  unsigned CutBudget; ///< LoweringOptions::RegionCutBudget (`cut-budget=N`)
  /// The resume loops (BarrierRegions.h): `resume-loops` (emitted, the hot tier's code), `count-resumable` (left
  /// out and counted, the default tier's code), `no-resume-loops`.
  ResumeLoops Resume;
};
PTXFORGE_PASS_WITH_SETTING(RegionBlocksPass, Module, RegionBlocksOptions, Options)

/// A kernel the region builder could not split runs on fibers, correct but slow: an optimization remark
/// (`-pass-remarks-missed=ptxforge-regions`) says so and why.
void reportRegionSplitFailure(llvm::Function &Thread, llvm::Error E);
/// Runs Rewrite (one of the region passes' rewrites, which says whether F changed) on F when F carries their
/// marks, reporting a broken contract as reportRegionSplitFailure does.
llvm::PreservedAnalyses rewriteMarkedFunction(llvm::Function &F, llvm::function_ref<llvm::Expected<bool>()> Rewrite);
/// Why a kernel with Cuts barriers and collectives is not split: over LoweringOptions::RegionCutBudget.
llvm::Error overRegionBudget(unsigned Cuts, unsigned Budget);

/// Makes every pass of Passes.def known to PB by its name, so a textual pipeline can name it; with PIC, also
/// to LLVM's instrumentation (-print-after=ptxforge-unmask-full-vectors and the like).
void registerPasses(llvm::PassBuilder &PB, llvm::PassInstrumentationCallbacks *PIC);

#undef PTXFORGE_PASS
#undef PTXFORGE_PASS_WITH_SETTING

} // namespace ptxforge::codegen::passes
