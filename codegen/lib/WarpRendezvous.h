// Private to codegen/lib: warp collectives as cut points of region-split block functions (BarrierRegions.cpp).
// At a collective cut a thread deposits its inputs (value, shuffle operands, member mask) into per-thread
// arrays and stops; the runtime's dispatcher (exec/RegionRendezvous.cpp) releases a warp's lanes once their
// rendezvous is complete, writing their outputs into two more per-thread arrays that the next region reads.
// Two halves: cutAtRendezvous, a pass of its own (ptxforge-warp-rendezvous), turns each rendezvous into a cut edge,
// a collective's with the deposit before it and the reads after it (marked as Markers.h says); the region builder
// finds those marks and emits the release (class WarpRendezvous).
#pragma once

#include "FunctionLowering.h"
#include "Markers.h"
#include "ptxforge/codegen/RegionCuts.h"

#include <optional>

namespace ptxforge::codegen::detail {

/// Whether I is a warp collective a kernel body may be cut at (shfl/vote .sync, redux.sync, match.sync,
/// bar.warp.sync, ldmatrix, stmatrix, movmatrix, mma.sync and wmma.mma); the others (activemask, elect, the
/// pre-.sync forms, mma.sp) need fibers.
bool isRegionCutCollective(const ptx::Instruction &I);

/// The matrix forms whose helpers meet on fibers only (lower/MatrixOps.cpp): sm_100's b8 ldmatrix/stmatrix
/// shapes and sm_120a's mma kinds (.kind::f8f6f4, the block-scaled kinds). A kernel using one is not cut.
bool isFiberOnlyMatrixForm(const ptx::Instruction &I);

/// The cut a call stands for, as the lowering marked it (Markers.h): a barrier, a collective, a lockstep point,
/// or nothing (an ordinary call). CI's function must keep the thread contract (checkThreadContract).
std::optional<RegionCut> callCutOf(const llvm::CallInst *CI);

/// Moves the entry block's static allocas to its top, in their order (the lowering interleaves them with its
/// prologue), and returns where the code after them begins.
llvm::BasicBlock::iterator gatherEntryAllocas(llvm::Function &F);

/// The cuts at rendezvous as a pass of their own (ptxforge-warp-rendezvous): in F, a thread function keeping the
/// thread contract (Markers.h), the block is split after each marked rendezvous call (a block barrier, a lockstep
/// point, a warp collective), the call removed and the branch there marked as the rendezvous' cut edge. A
/// collective first deposits its inputs into the warp slots, and its results are read from them after the edge.
/// ThreadCtxTy: the module's ThreadContext type. Returns whether F changed; an error, with F unchanged, when F
/// breaks the contract.
llvm::Expected<bool> cutAtRendezvous(llvm::Function &F, llvm::StructType *ThreadCtxTy);

/// The release half: emitted by the region builder after its loops over the threads.
class WarpRendezvous {
public:
  /// Finds F's warp slots by their marks (Markers.h), taking the marks off.
  WarpRendezvous(ModuleLowering &ML, llvm::Function &F);

  /// The slots' registers: they must live per thread even where no IR reads them (the runtime does).
  const std::vector<llvm::AllocaInst *> &registers() const { return Registers; }
  /// Calls the dispatcher after a loop over the block's N threads; PerThread maps registers to their arrays.
  /// Span: {first, end} of the threads the region loops cover, then of the live threads, which the dispatcher
  /// reads and narrows (one-dimensional blocks; ptxrt_region_release says when).
  llvm::Value *emitRelease(llvm::IRBuilder<> &B, llvm::Value *Ctx, llvm::Value *States, llvm::Value *N,
                           llvm::Value *Span, llvm::ArrayRef<RegionCut> Cuts,
                           const llvm::DenseMap<llvm::AllocaInst *, llvm::Value *> &PerThread);

  /// When every covered thread stopped at Cut (a shuffle, a vote, an integer reduction or bar.warp.sync): a block
  /// that computes each warp's outputs in place, a loop over the covered threads (see emitRelease; Rows:
  /// %ntid.y * %ntid.z) or over its warps as 32-lane vectors, then continues at Released, or at Otherwise when
  /// the span holds a partial warp or a member mask is not full (the dispatcher's cases). Null for other cuts.
  llvm::BasicBlock *emitWarpRelease(const RegionCut &Cut, llvm::Value *Span, llvm::Value *Rows,
                                    const llvm::DenseMap<llvm::AllocaInst *, llvm::Value *> &PerThread,
                                    llvm::BasicBlock *Released, llvm::BasicBlock *Otherwise);

private:
  using Slot = WarpSlot;
  /// The per-thread arrays of the slots (null: none).
  struct WarpArrays {
    llvm::Value *Value, *B, *C, *Mask, *Out, *Pred;
  };
  /// emitWarpRelease's loop bodies, for thread T (a shuffle) or the warp from thread T (a vote or reduction);
  /// they return Masks AND-ed with the member masks they read.
  llvm::Value *emitShuffle(llvm::IRBuilder<> &B, const RegionCut &Cut, const WarpArrays &A, llvm::Value *T,
                           llvm::Value *Masks);
  llvm::Value *emitWarpReduction(llvm::IRBuilder<> &B, const RegionCut &Cut, const WarpArrays &A, llvm::Value *T,
                                 llvm::Value *Masks);
  /// Slot S's per-thread array (PerThread maps registers to their arrays); null when the kernel has none.
  llvm::Value *arrayOf(Slot S, const llvm::DenseMap<llvm::AllocaInst *, llvm::Value *> &PerThread) const;

  ModuleLowering &ML;
  llvm::AllocaInst *Slots[NumWarpSlots] = {};
  std::vector<llvm::AllocaInst *> Registers;
};

} // namespace ptxforge::codegen::detail
