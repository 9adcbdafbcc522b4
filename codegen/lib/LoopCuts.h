// Private to codegen/lib: loop cuts of region-split block functions (BarrierRegions.cpp). A region loop runs
// its threads one after the other, so an inner loop of the thread's code (nbody's loop over a tile, reduce's
// grid-stride loop) would be a scalar chain inside the loop over threads, which LLVM does not vectorize. A
// barrier-free innermost loop is therefore cut at its entry, back and exit edges: one region is one iteration,
// and each pass of the region loop runs that iteration for every thread, vectorized across threads.
// This is a valid schedule: without a barrier inside the loop CUDA orders nothing between the threads'
// iterations. A loop cut is a rendezvous that is always complete, so the dispatcher (exec/RegionRendezvous.cpp)
// only has to run threads stopped at loop cuts before it releases a barrier or a collective.
#pragma once

#include "ptxforge/codegen/RegionCuts.h"

#include "llvm/Support/Error.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include <vector>

namespace ptxforge::codegen::detail {

/// The loop cuts as a pass of their own (ptxforge-loop-cuts): in F, a thread function keeping the thread contract
/// (Markers.h), cuts the innermost loops worth cutting (no cut, call or atomic/volatile access inside, small
/// body) at their entry, back and exit edges, each edge into a block stopping in a new block whose branch is
/// marked as that loop cut's cut edge. Three regions a loop: as many loops as CutBudget leaves room for beside
/// F's marked cuts, the first in preorder. The misaligned-address accumulator does not restart at a loop cut
/// (nothing checks it there): the region builder keeps it in a per-thread array, ORed into without a store to
/// the shared context that would keep the region loop from vectorizing. Returns whether F changed; an error,
/// with F unchanged, when F breaks the contract.
llvm::Expected<bool> cutLoops(llvm::Function &F, unsigned CutBudget);

/// Emits the `{kind, arg}` table of the regions' cuts that the runtime's dispatchers read.
llvm::GlobalVariable *emitCutTable(llvm::Module &M, llvm::Function &F, llvm::ArrayRef<RegionCut> Cuts);

/// A pass of a cut loop's region runs the same iteration in every thread, and the loop's counter is often the
/// same in all of them (nbody's j over a shared tile); read per thread it makes every access through it a
/// gather. These are the per-thread registers (PerThread: register -> its array) that the region's blocks
/// (Blocks, the first its entry; EndsRegion: whether a terminator is a cut) only load and store, and whose
/// loads in the region's straight entry (straightEntry) feed addresses: a version of the region loop reads them
/// from thread 0's slot, once per pass, where those blocks read them before writing them (later blocks read
/// the thread's own slot, to which LLVM forwards the thread's own stores); it runs when a scan finds them
/// equal in all threads (emitSlotScan).
std::vector<llvm::AllocaInst *> uniformCandidates(llvm::ArrayRef<llvm::BasicBlock *> Blocks,
                                                  llvm::function_ref<bool(const llvm::Instruction *)> EndsRegion,
                                                  const llvm::DenseMap<llvm::AllocaInst *, llvm::Value *> &PerThread);

/// What emitSlotScan looks for in every slot T of per-thread arrays.
enum class SlotPattern {
  Same,           ///< slot 0's value (a counter every thread shares)
  FirstPlusThread ///< slot 0's value plus T, without signed wrap (32-bit grid-stride indices): read as first + T
                  ///< (nsw, so sign-extended indices stay affine for SCEV), accesses through it are consecutive
};

/// Emits a scan over N threads' slots of per-thread arrays ({element type, array}) at B, which it leaves at the
/// scan's end; the result is true when every array holds Pattern.
llvm::Value *emitSlotScan(llvm::IRBuilder<> &B, llvm::ArrayRef<std::pair<llvm::Type *, llvm::Value *>> Arrays,
                          llvm::Value *N, SlotPattern Pattern);

/// Whether a value stored to register A (an alloca of the thread function) may come from the thread's ids, read
/// through the context Ctx, via other registers and arithmetic. Memo holds the answers so far (a register fed
/// only by itself, a counter, does not).
bool dependsOnThreadId(llvm::AllocaInst *A, llvm::Value *Ctx, llvm::DenseMap<llvm::AllocaInst *, bool> &Memo);

/// Copies Blocks into F (names + Suffix), mapping each block and value through VMap (which may hold mappings
/// already, such as registers redirected to per-thread slots), with the copies' references among themselves
/// remapped. Returns the copies in Blocks' order.
std::vector<llvm::BasicBlock *> cloneBlocks(llvm::ArrayRef<llvm::BasicBlock *> Blocks, llvm::ValueToValueMapTy &VMap,
                                            const llvm::Twine &Suffix, llvm::Function *F);

/// The blocks a pass of a region surely runs first, in order: Entry and the blocks after it while each ends in
/// an unconditional branch to a block (of the region: In) that only it enters.
std::vector<llvm::BasicBlock *> straightEntry(llvm::BasicBlock *Entry,
                                              llvm::function_ref<bool(const llvm::BasicBlock *)> In);
} // namespace ptxforge::codegen::detail
