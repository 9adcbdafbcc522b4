// Private to codegen/lib: the contract between the lowering and the passes that rework its thread functions
// into block functions, in this order: the warp rendezvous (WarpRendezvous.cpp), the loop cuts (LoopCuts.cpp)
// and the region builder (BarrierRegions.cpp). The lowering marks what those passes must find with IR metadata,
// and each pass marks what it leaves for the next; they read the marks, never function or value names or operand
// positions they would have to know by heart. checkThreadContract and checkRegionContract state everything else
// the passes rely on, so that a break is an error naming the contract, not a kernel that quietly runs on fibers.
#pragma once

#include "ptxforge/codegen/RegionCuts.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace ptxforge::codegen::detail {

/// A runtime call the region builder cuts a thread function at: the rendezvous kind and which call operand
/// holds what (-1: none). Arg: the constant mode or operation; Value, B, C, Mask: what each thread deposits in
/// its per-thread arrays (a collective without a member mask deposits a full one); PredOut: the pointer the call
/// writes its predicate result through; Buffer: the pointer to the thread's matrix fragment registers, which the
/// call reads and writes and the thread deposits (its address: the dispatcher works on them in place).
struct CutOperands {
  RegionCutKind Kind = RCBarrier;
  int Arg = -1, Value = -1, B = -1, C = -1, Mask = -1, PredOut = -1, Buffer = -1;
};

/// Marks CI (a call the lowering just made) as a cut point with these operands.
void markRegionCut(llvm::CallInst *CI, const CutOperands &Ops);
/// The cut CI was marked as, if any.
std::optional<CutOperands> regionCutOf(const llvm::CallInst *CI);

/// Gives L, a load of the thread context's field Field (element Index of an array field), the values a launch lets
/// it hold as `!range`: %tid and %ntid within the block shapes launchKernel accepts (ThreadContext.h), %laneid
/// below 32. Loops over a block's threads then have a known bound (1024 trips), which SCEV needs to prove that a
/// narrow recurrence in them never wraps (and which lets it drop the umax(%ntid, 1) of a trip count). Loads of
/// other fields are left alone. Returns L.
llvm::LoadInst *withLaunchRange(llvm::LoadInst *L, unsigned Field, unsigned Index = 0);

/// Marks a call to a runtime rendezvous only the fiber mode implements (activemask, elect, bar.arrive, bar.red).
void markFiberOnly(llvm::CallInst *CI);
bool isFiberOnly(const llvm::CallInst *CI);

/// Marks the function's accumulator of misaligned address bits (an i32 alloca in the entry block).
void markMisalignedAccumulator(llvm::AllocaInst *A);
/// The function's marked accumulator, or null.
llvm::AllocaInst *misalignedAccumulatorOf(const llvm::Function &F);

/// Marks the `udiv` by %ntid.x that a flat block group's thread loop derives a thread's block from (ThreadLoop.h):
/// the lowering only groups blocks whose %ntid.x is a multiple of every warp width, so the quotient is the same
/// for the lanes of a warp, and the warp vectorizer takes it for uniform.
void markBlockOfThread(llvm::Instruction *Div);
bool isBlockOfThread(const llvm::Instruction &I);

/// Marks a `.shared` atomic the lowering made a plain read-modify-write (Load ... Store): the threads of a block
/// that run one after another need no lock, but the lanes of a warp run together, so the warp vectorizer runs
/// the span from Load to Store lane by lane.
void markSerialReadModifyWrite(llvm::Instruction *Load, llvm::Instruction *Store);
/// The mark shared by a marked pair (the same node on its load and its store), or null.
const llvm::MDNode *serialReadModifyWriteOf(const llvm::Instruction &I);

/// Marks a `.volatile` access of the block's own shared memory (`.shared`, `.shared::cta`; not another block's
/// through `.shared::cluster`) that the lowering made a monotonic atomic: the region builder may make it plain
/// (relaxBlockVolatiles, BarrierRegions.cpp).
void markBlockVolatile(llvm::Instruction *I);
bool isBlockVolatile(const llvm::Instruction &I);

/// A region boundary that a pass before the region builder made: the unconditional branch that ends a thread's
/// region there, its successor the next region's entry. The warp rendezvous marks the branch after each rendezvous
/// call with the call's {kind, arg}; the loop cuts mark every stop of a cut loop {RCLoop, 0} with the number of the
/// region it enters among the loop cuts' regions (Order; stops of one region share it). The builder numbers the
/// rendezvous' regions in the order of the code, then the loop cuts' regions by Order.
struct CutEdge {
  RegionCut Cut;
  unsigned Order = 0;
};
void markCutEdge(llvm::BranchInst *Br, const CutEdge &E);
/// Term's mark, if any (a malformed one reads as none: checkThreadContract rejects it).
std::optional<CutEdge> cutEdgeOf(const llvm::Instruction *Term);
/// Whether a cut edge stands for a loop cut (else a rendezvous: lockstep points are {RCLoop, 1}).
inline bool isLoopCutEdge(const CutEdge &E) { return E.Cut.Kind == RCLoop && E.Cut.Arg == LCBuilder; }
void clearCutEdge(llvm::Instruction *Term);

/// The per-thread slots through which the warp rendezvous passes a collective's inputs and outputs to the
/// runtime's dispatcher: static allocas of the entry block, i64 for WSValue and WSBuffer (an address) and i32 for
/// the others, one at most per slot, each marked with its slot.
enum WarpSlot : unsigned { WSValue, WSOperandB, WSOperandC, WSMask, WSOut, WSPred, WSBuffer, NumWarpSlots };
/// Whether slot S holds 64 bits.
inline bool isWideWarpSlot(WarpSlot S) { return S == WSValue || S == WSBuffer; }
void markWarpSlot(llvm::AllocaInst *A, WarpSlot S);
std::optional<WarpSlot> warpSlotOf(const llvm::Instruction &I);
void clearWarpSlot(llvm::Instruction &I);

/// Whether F carries a cut mark or a cut edge mark, well-formed or not: a function the region passes look at.
bool hasRegionMarks(const llvm::Function &F);
/// The regions F's marks make beside the first and the loop cuts': one after each marked call or rendezvous edge.
unsigned markedCuts(const llvm::Function &F);

/// What the lowering promises of a thread function `void(ThreadContext *, const char *Params)` with at least one
/// cut, which the warp rendezvous and the loop cuts take: no phi nodes (values move between regions through
/// memory); every cut marked, a call with operands in range and a constant mode or a cut edge on an
/// unconditional branch (the stops of one loop cut entering one block); no fiber-only rendezvous; at most one
/// misaligned-bits accumulator, a static i32 alloca of the entry block; warp slots as WarpSlot says. The error
/// names the broken rule and the function.
llvm::Error checkThreadContract(const llvm::Function &Thread);
/// What the region builder needs: the thread contract, with every rendezvous made a cut edge by the warp
/// rendezvous (no marked call is left).
llvm::Error checkRegionContract(const llvm::Function &Thread);

} // namespace ptxforge::codegen::detail
