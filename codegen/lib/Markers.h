// Private to codegen/lib: the contract between the lowering and the passes that rework its thread functions
// (the region builder, BarrierRegions.cpp; the warp rendezvous, WarpRendezvous.cpp). The lowering marks what
// those passes must find with IR metadata; they read the marks, never function or value names or operand
// positions they would have to know by heart. checkRegionContract states everything else the region builder
// relies on, so that a break is an error naming the contract, not a kernel that quietly runs on fibers.
#pragma once

#include "ptxforge/codegen/RegionCuts.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace ptxforge::codegen::detail {

/// A runtime call the region builder cuts a thread function at: the rendezvous kind and which call operand
/// holds what (-1: none). Arg: the constant mode or operation; Value, B, C, Mask: what each thread deposits in
/// its per-thread arrays; PredOut: the pointer the call writes its predicate result through.
struct CutOperands {
  RegionCutKind Kind = RCBarrier;
  int Arg = -1, Value = -1, B = -1, C = -1, Mask = -1, PredOut = -1;
};

/// Marks CI (a call the lowering just made) as a cut point with these operands.
void markRegionCut(llvm::CallInst *CI, const CutOperands &Ops);
/// The cut CI was marked as, if any.
std::optional<CutOperands> regionCutOf(const llvm::CallInst *CI);

/// Marks a call to a runtime rendezvous only the fiber mode implements (activemask, elect, bar.arrive, bar.red).
void markFiberOnly(llvm::CallInst *CI);
bool isFiberOnly(const llvm::CallInst *CI);

/// Marks the function's accumulator of misaligned address bits (an i32 alloca in the entry block).
void markMisalignedAccumulator(llvm::AllocaInst *A);
/// The function's marked accumulator, or null.
llvm::AllocaInst *misalignedAccumulatorOf(const llvm::Function &F);

/// Marks a `.shared` atomic the lowering made a plain read-modify-write (Load ... Store): the threads of a block
/// that run one after another need no lock, but the lanes of a warp run together, so the warp vectorizer runs
/// the span from Load to Store lane by lane.
void markSerialReadModifyWrite(llvm::Instruction *Load, llvm::Instruction *Store);
/// The mark shared by a marked pair (the same node on its load and its store), or null.
const llvm::MDNode *serialReadModifyWriteOf(const llvm::Instruction &I);

/// What the region builder needs of a thread function `void(ThreadContext *, const char *Params)` with at
/// least one cut: no phi nodes (it moves values between regions through memory); every cut marked, with
/// operands in range and a constant mode; no fiber-only rendezvous; at most one misaligned-bits
/// accumulator, a static i32 alloca of the entry block. The error names the broken rule and the function.
llvm::Error checkRegionContract(const llvm::Function &Thread);

} // namespace ptxforge::codegen::detail
