// Private to codegen/lib: the loop over a block's threads that block functions are made of (Lowering.cpp's
// block loop for barrier-free kernels, BarrierRegions.cpp's region loops).
#pragma once

#include "FunctionLowering.h"

#include <map>
#include <utility>
#include <vector>

namespace ptxforge::codegen::detail {

/// `for z < NZ, for y < NY, for x < NX` over the threads of a block, with the linear id carried along; with
/// Groups, `for z, for y, for g < Groups, for x`: the same rows of Groups blocks side by side (see emitBlockLoop);
/// flat groups run each such row as one loop, `for x' < Groups * NX`, the thread's block g = x' / NX (marked:
/// Markers.h, markBlockOfThread) and %tid.x = x' - g * NX, so that the warp vectorizer sees the row's threads of
/// all the group's blocks as one run of consecutive threads.
struct ThreadLoop {
  llvm::BasicBlock *Entry; ///< branch here to run the loop
  llvm::BasicBlock *Body;  ///< one thread, its ids already stored into the context; must end by branching to Latch
  llvm::BasicBlock *Latch; ///< advances to the next thread, or leaves for the exit block after the last
  llvm::Value *Linear;     ///< the thread's linear id (i32)
  /// The ids by ThreadContext (field, index): %tid.x/y/z, %laneid, %warpid and the linear id.
  std::map<std::pair<unsigned, unsigned>, llvm::Value *> Ids;
  std::vector<llvm::StoreInst *> IdStores; ///< the stores of Ids into the context, in Body
  // With Groups only:
  llvm::Value *Group = nullptr; ///< g (i32); in a flat group, computed in Body from x'
  // Not in flat groups:
  llvm::BasicBlock *GroupBody = nullptr;  ///< entered once per (y, g), unterminated: must branch to Body
  llvm::BasicBlock *GroupEnd = nullptr;   ///< after the row's last thread, unterminated: must branch to GroupLatch
  llvm::BasicBlock *GroupLatch = nullptr; ///< advances g, or y after the last group
};

/// The `llvm.loop` property that marks the innermost loop over threads (optimizeModule sets its vector width).
inline constexpr const char *ThreadLoopMarker = "ptxforge.thread.loop";

/// A loop's `llvm.loop` ID (distinct, self-referencing) with Properties ({name} or {name, value} nodes).
llvm::MDNode *loopId(llvm::LLVMContext &C, llvm::ArrayRef<llvm::Metadata *> Properties);
/// The property {Name, i32 Value} (llvm.loop.vectorize.width and the like).
llvm::MDNode *loopProperty(llvm::LLVMContext &C, llvm::StringRef Name, uint32_t Value);

/// Which vectorizers may take a loop over threads.
enum class ThreadLoopVectors {
  None,     ///< neither: the loop stays scalar
  Any,      ///< LLVM's loop vectorizer (straight-line and if-convertible bodies) and WarpVectorizePass (bodies with
            ///< loops of their own)
  WarpOnly, ///< WarpVectorizePass alone: a loop resuming threads in a cut loop (BarrierRegions.cpp), which runs
            ///< their loops to the end
};

/// Emits the loop into F (Ctx: the ThreadContext the ids are stored into; NX/NY/NZ: %ntid); after the last
/// thread control continues at Exit. Vectors: which vectorizers may take it.
/// XBegin/XEnd (when given, defined before the loop) bound each row's %tid.x instead of 0 and NX. Groups (i32,
/// at least 1, defined before the loop) adds the loop over groups between y and x, or with FlatGroups widens the
/// loop over x to the groups' rows.
ThreadLoop emitThreadLoop(ModuleLowering &ML, llvm::Function *F, llvm::Value *Ctx, llvm::Value *NX, llvm::Value *NY,
                          llvm::Value *NZ, llvm::BasicBlock *Exit, ThreadLoopVectors Vectors = ThreadLoopVectors::Any,
                          llvm::Value *XBegin = nullptr,
                          llvm::Value *XEnd = nullptr, llvm::Value *Groups = nullptr, bool FlatGroups = false);

} // namespace ptxforge::codegen::detail
