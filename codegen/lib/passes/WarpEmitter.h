// Private to passes/WarpVectorize*.cpp: emits one copy of a thread loop's body for W lanes at once, linearized
// under masks (see WarpVectorize.cpp for the whole transformation).
#pragma once

#include "WarpShapes.h"

#include "llvm/Analysis/PostDominators.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"

#include <optional>

namespace ptxforge::codegen::passes::warp {

/// A body value for W lanes. Uniform: Scalar. Consecutive: Scalar is lane 0's value, Vector every lane's, and
/// NoWrap (when set) the run-time condition under which lane L really is lane 0 + L * stride (an extension of
/// a narrower consecutive value that does not cross its type's range inside the warp). Varying: Vector, or
/// Lanes for values of types a vector cannot hold (structures).
struct WarpValue {
  llvm::Value *Scalar = nullptr;
  llvm::Value *Vector = nullptr;
  llvm::Value *NoWrap = nullptr;
  llvm::SmallVector<llvm::Value *, 0> Lanes;
};

/// What the caller provides for one copy of the body: the mask of lanes on at its entry (known to have a lane
/// on) and the values of the header's phis.
struct BodyEntry {
  llvm::Value *Mask;
  llvm::DenseMap<const llvm::Value *, WarpValue> HeaderValues;
};

class WarpEmitter {
public:
  WarpEmitter(const ThreadLoop &TL, const Shapes &SA, llvm::LoopInfo &LI, llvm::DominatorTree &DT,
              llvm::PostDominatorTree &PDT, unsigned Lanes, llvm::ArrayRef<llvm::BasicBlock *> Order);

  /// Emits the body starting in Into; returns the block where it ends (unterminated). Values of the body are
  /// then available through value().
  llvm::BasicBlock *emit(llvm::BasicBlock *Into, BodyEntry Entry);
  const WarpValue &value(const llvm::Value *V) const { return Map.find(V)->second; }
  unsigned lanes() const { return W; }
  /// V for every lane (a splat where V is uniform).
  llvm::Value *vec(const llvm::Value *V);
  /// The allocas the emitter used for values that cross loop exits; the caller promotes them.
  llvm::ArrayRef<llvm::AllocaInst *> slots() const { return Slots; }

  /// Stream rounds (WarpVectorize.cpp, LoopRewriter::streamWarps). While set, a warp whose lanes all enter L's
  /// full copy with its header phis uniform or consecutive parks there instead: lane 0's value of each header
  /// phi goes to State[phi][Piece], the header's stores of uniform values (the thread's %ctaid in the fault
  /// context) to their slots, its bit to Parked, and its lanes leave L at once (L's exit, the only one, has no
  /// phis, and what follows it touches no memory).
  struct Park {
    const llvm::Loop *L;
    llvm::Value *Piece; ///< i32: the warp's number in its batch
    llvm::ArrayRef<llvm::AllocaInst *> State;
    llvm::ArrayRef<std::pair<llvm::StoreInst *, llvm::AllocaInst *>> Stores;
    llvm::AllocaInst *Parked; ///< i64, a bit per warp of the batch
  };
  void setPark(const Park *P) { ParkAt = P; }
  /// One trip of L's full copy for a parked warp whose header phis hold State (lane 0's values). Where every lane
  /// goes round again, the trip ends in Yield with Next (the header phis' next values); else the warp finishes L
  /// in its general copy and ends in Done. Both are left unterminated.
  struct StreamTrip {
    llvm::BasicBlock *Yield = nullptr, *Done = nullptr;
    llvm::SmallVector<llvm::Value *, 4> Next;
  };
  StreamTrip emitStreamTrip(llvm::BasicBlock *Into, llvm::Loop *L, llvm::ArrayRef<llvm::Value *> State);
  /// The shape L's header phi P has in a parked warp: its own, or the stride its full copy assumes.
  Shape streamShape(const llvm::Loop &L, const llvm::PHINode &P) const;

private:
  using Edge = std::pair<const llvm::BasicBlock *, const llvm::BasicBlock *>;

  // Masks and control flow (WarpEmitter.cpp).
  void emitBlock(llvm::BasicBlock *BB);
  llvm::Value *blockMask(llvm::BasicBlock *BB);
  llvm::Value *incomingMask(const llvm::BasicBlock *Pred, const llvm::BasicBlock *BB);
  void beginLoop(llvm::Loop *L);
  void endLoop(llvm::Loop *L);
  /// Phis in the current block for the values Init of the loop header phi P, entered from From.
  WarpValue headerPhis(const llvm::PHINode &P, const WarpValue &Init, llvm::BasicBlock *From);
  static void addIncoming(const WarpValue &Phis, const WarpValue &Vals, llvm::BasicBlock *From);
  llvm::Value *all(llvm::Value *Mask);
  /// Whether every lane goes round L's full copy again (Again: the lanes that do).
  llvm::Value *allAgain(llvm::Loop *L, llvm::Value *Again);
  llvm::Value *fullCopyCondition(llvm::Loop *L, llvm::Value *In,
                                 llvm::ArrayRef<std::pair<llvm::PHINode *, WarpValue>> Init);
  void emitEdgeMasks(llvm::BasicBlock *BB, llvm::Value *M);
  void captureLoopExits(llvm::BasicBlock *BB);
  void emitNoReturnExit(llvm::BasicBlock *From, llvm::BasicBlock *To, llvm::Value *EdgeMask);
  void joinSkipped(llvm::BasicBlock *BB, llvm::BasicBlock *Test, llvm::BasicBlock *BodyEnd);
  llvm::Value *any(llvm::Value *Mask);
  llvm::Value *lastLane(llvm::Value *Mask);
  llvm::Value *firstLane(llvm::Value *Mask);
  llvm::AllocaInst *slot(llvm::Type *T);
  llvm::Loop *outermostExited(const llvm::BasicBlock *From, const llvm::BasicBlock *To) const;

  // Instructions (WarpInstructions.cpp).
  void emitInstruction(llvm::Instruction &I, llvm::Value *M);
  void emitPhi(llvm::PHINode &P);
  void emitLoad(llvm::LoadInst &L, llvm::Value *M);
  void emitStore(llvm::StoreInst &St, llvm::Value *M);
  void emitCall(llvm::CallBase &CB, llvm::Value *M);
  void emitPerLane(llvm::Instruction &I, llvm::Value *M, bool SeesContext) { emitPerLane({&I}, M, SeesContext); }
  /// Span, a stretch of one block, once per lane that is on, in lane order.
  void emitPerLane(llvm::ArrayRef<llvm::Instruction *> Span, llvm::Value *M, bool SeesContext);
  llvm::Value *widen(llvm::Instruction &I);
  /// I on scalars: the uniform operands' values, consecutive ones' lane 0 (so lane 0's result).
  llvm::Value *cloneScalar(llvm::Instruction &I);
  llvm::Value *noWrap(llvm::Instruction &I);
  /// A consecutive access through Ptr (vector load or store of W elements at lane 0's address), or a gather or
  /// scatter where NoWrap fails at run time.
  llvm::Value *consecutiveAccess(llvm::Instruction &I, llvm::Value *M, llvm::Type *ElemTy, unsigned Spread = 1);
  /// A gather (Value null) or scatter through the pointer vector Ptrs under Mask (null: every lane); metadata
  /// from I (its access group too where InGroup).
  llvm::Value *gatherScatter(llvm::Instruction &I, llvm::Type *VecTy, llvm::Value *Ptrs, llvm::Align A,
                             llvm::Value *Mask, llvm::Value *Value, bool InGroup = false);
  llvm::Value *spreadAccess(llvm::Instruction &I, llvm::Value *LaneMask, llvm::Type *T, unsigned Spread);

  llvm::Value *scalar(const llvm::Value *V);
  llvm::Value *lane(const llvm::Value *V, unsigned L);
  llvm::Value *noWrapOf(const llvm::Value *V);
  llvm::Type *vecTy(llvm::Type *T) const;
  static unsigned elementsPerLane(llvm::Type *T);
  llvm::Value *maskFor(llvm::Value *Mask, llvm::Type *T);
  /// Element K of each lane's short vector (extractelement with a constant index).
  llvm::Value *widenShuffle(llvm::Instruction &I);
  llvm::Value *elementPointers(const llvm::Value *Ptr, llvm::Type *T);
  bool widenable(llvm::Type *T) const;
  bool isAllOn(const llvm::Value *Mask) const;

  const ThreadLoop &TL;
  /// The shapes the code being emitted follows: Base's, or an innermost loop's refined ones in its full copy.
  const Shapes *SA;
  const Shapes *Base;
  llvm::LoopInfo &LI;
  llvm::DominatorTree &DT;
  llvm::PostDominatorTree &PDT;
  unsigned W;
  llvm::ArrayRef<llvm::BasicBlock *> Order;
  llvm::Function &F;
  llvm::IRBuilder<> B;

  llvm::Value *EntryMask = nullptr;
  llvm::DenseMap<const llvm::Value *, WarpValue> Map;
  /// Starts emitting a body at Into under Mask with the header's values Header: the per-body state cleared.
  void begin(llvm::BasicBlock *Into, llvm::Value *Mask, llvm::DenseMap<const llvm::Value *, WarpValue> Header);
  llvm::DenseMap<const llvm::BasicBlock *, llvm::Value *> Masks;
  llvm::DenseMap<Edge, llvm::Value *> EdgeMasks;
  /// Inner loops' exit edges: the lanes that took the edge in any iteration, and (per phi of the exit block)
  /// the value each lane brought along when it did.
  llvm::DenseMap<Edge, llvm::AllocaInst *> ExitMaskSlots;
  llvm::DenseMap<std::pair<const llvm::PHINode *, const llvm::BasicBlock *>, llvm::AllocaInst *> ExitValueSlots;
  /// An inner loop being emitted. An innermost loop is emitted twice: first a copy whose header runs with every
  /// lane on (plain vector accesses, no mask phi, no skip tests in the header), left for the general copy once a
  /// lane leaves, then the general copy, entered directly when a lane is off at the loop's entry.
  struct LoopState {
    llvm::BasicBlock *Head = nullptr, *Pre = nullptr;
    llvm::Value *Mask = nullptr;                ///< the header's mask: the general copy's phi, all-on in the full copy
    llvm::SmallVector<llvm::PHINode *, 4> Phis; ///< the original header's phis (Map holds their vector-code phis)
    bool InFullCopy = false;
    llvm::BasicBlock *General = nullptr, *After = nullptr; ///< the general copy's header; the block after both
    llvm::PHINode *GeneralMask = nullptr;
    llvm::SmallVector<WarpValue, 4> GeneralPhis; ///< per Phis entry, its phis in General
    /// The full copy's shapes where header phis that vary in Base are consecutive at run time (a grid-stride
    /// index after a remainder loop whose trip counts differ between lanes), with those phis' strides.
    std::unique_ptr<Shapes> Refined;
    llvm::SmallVector<std::pair<const llvm::PHINode *, Shape>, 2> Assumed;
    /// Consecutive phis whose vector is derived from the scalar (rematerialize): the phi, its vector phi, the
    /// derived vector.
    llvm::SmallVector<std::tuple<const llvm::PHINode *, llvm::PHINode *, llvm::Value *>, 4> Remat;
  };
  void rematerialize(LoopState &LS);
  llvm::Value *consecutiveVector(llvm::Value *Scalar, int64_t Stride);
  llvm::DenseMap<const llvm::Loop *, LoopState> Loops;
  llvm::SmallVector<llvm::AllocaInst *, 8> Slots;
  /// Set by endLoop after a full copy: the position in Order to emit from again (the loop's header).
  std::optional<size_t> Rewind;
  const Park *ParkAt = nullptr;
  /// While emitStreamTrip runs: its loop, the parked warp's state and the trip being built.
  const llvm::Loop *StreamL = nullptr;
  llvm::ArrayRef<llvm::Value *> StreamState;
  StreamTrip *Trip = nullptr;
  bool StreamFinished = false;
  void park(llvm::Loop *L, llvm::ArrayRef<std::pair<llvm::PHINode *, WarpValue>> Init, llvm::Value *Enter);
  void yieldTrip(LoopState &LS, llvm::Value *Full, llvm::ArrayRef<WarpValue> Next, llvm::BasicBlock *Partial);
};

} // namespace ptxforge::codegen::passes::warp
