// Private to passes/WarpVectorize*.cpp: what the warp vectorizer knows about a thread loop before it rewrites
// it (which loop, its inductions and reductions) and the shape of every value of its body across the W lanes.
#pragma once

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Instructions.h"

#include <cstdint>
#include <memory>
#include <string>

namespace ptxforge::codegen::passes::warp {

/// How a value varies across the lanes of a warp: the same in every lane (uniform: one scalar), lane 0's value
/// plus the lane number times a constant (consecutive: a scalar base; addresses of this shape become vector
/// loads), or anything (varying: a vector). None is the analysis' starting point, below all three.
enum class Kind : uint8_t { None, Uniform, Consecutive, Varying };

struct Shape {
  Kind K = Kind::None;
  int64_t Stride = 0; ///< Consecutive: lane L is lane 0 + L * Stride (bytes for pointers)
  static Shape none() { return {}; }
  static Shape uniform() { return {Kind::Uniform, 0}; }
  static Shape varying() { return {Kind::Varying, 0}; }
  static Shape consecutive(int64_t S) { return S == 0 ? uniform() : Shape{Kind::Consecutive, S}; }
  bool operator==(const Shape &O) const { return K == O.K && Stride == O.Stride; }
  bool operator!=(const Shape &O) const { return !(*this == O); }
  bool isUniform() const { return K == Kind::Uniform; }
  bool isConsecutive() const { return K == Kind::Consecutive; }
  bool isVarying() const { return K == Kind::Varying; }
};

/// The least shape both A and B fit.
Shape join(Shape A, Shape B);

/// A reduction over the loop's threads carried in a header phi: each lane keeps its own, and the lanes are
/// combined when the loop ends. Only idempotent operations (so every lane can start from the initial value).
enum class ReductionOp : uint8_t { Or, And, UMin, UMax, SMin, SMax };

/// A thread loop in the form the vectorizer rewrites: `x` from Start while x < End, one thread per iteration.
struct ThreadLoop {
  llvm::Loop *L = nullptr;
  llvm::BasicBlock *Preheader = nullptr, *Header = nullptr, *Latch = nullptr, *Exit = nullptr;
  llvm::PHINode *IV = nullptr;
  llvm::Value *Start = nullptr, *End = nullptr; ///< threads Start..End-1 (End defined outside the loop)
  /// Header phis stepping by a constant each thread (the IV among them).
  llvm::SmallVector<std::pair<llvm::PHINode *, int64_t>, 2> Inductions;
  llvm::SmallVector<std::pair<llvm::PHINode *, ReductionOp>, 2> Reductions;
  /// The values of each reduction's chain in the body (the phi, its updates, the phis merging them).
  llvm::DenseMap<const llvm::Value *, llvm::PHINode *> ReductionChain;
  /// Successors of body blocks outside the loop other than Exit: blocks ending in `unreachable` (traps).
  llvm::SmallPtrSet<llvm::BasicBlock *, 2> NoReturnExits;
  /// Stores of a per-thread value to one address for every thread (the thread's ids into its context): a call
  /// run lane by lane sees its lane's value there.
  llvm::SmallVector<llvm::StoreInst *, 4> LaneStores;
};

/// Finds the thread loop's parts; an error string says why the loop is not in a form the vectorizer takes.
std::string matchThreadLoop(llvm::Loop &L, ThreadLoop &TL);

/// The shapes of the body's values (everything defined outside the loop is uniform).
class Shapes {
public:
  Shapes(const ThreadLoop &TL, const llvm::LoopInfo &LI, const llvm::DataLayout &DL) : TL(TL), LI(LI), DL(DL) {}
  /// Runs the analysis to its fixpoint; an error string names what the vectorizer cannot handle.
  std::string run();
  Shape of(const llvm::Value *V) const;
  /// The store a load reads a lane's own value back from (TL.LaneStores), if any.
  llvm::StoreInst *laneStoreRead(const llvm::LoadInst &L) const;
  bool inBody(const llvm::Value *V) const;
  /// These shapes with the given header phis of the innermost loop L taken to be consecutive: L's values
  /// recomputed, the rest kept. Null unless each assumed phi's back-edge value keeps its assumed shape (a run-time
  /// check of the phis' values on entering L then makes the assumption true for every trip).
  std::unique_ptr<Shapes> assuming(const llvm::Loop &L,
                                   llvm::ArrayRef<std::pair<const llvm::PHINode *, Shape>> Assumed) const;
  /// The one stride of the consecutive values that reach V through phis and selects of the body (the shape V
  /// would have if its lanes had not diverged), or 0.
  int64_t strideBehind(const llvm::Value *V) const;

private:
  void fixpoint(llvm::ArrayRef<llvm::Instruction *> Order);
  Shape transfer(const llvm::Instruction &I) const;
  Shape transferGEP(const llvm::GetElementPtrInst &G) const;
  Shape transferBinary(const llvm::BinaryOperator &BO) const;
  Shape transferPhi(const llvm::PHINode &P) const;
  std::string privateMemory() const;
  /// Consecutive shapes whose lanes' spread (Stride * (Lanes - 1)) fits comfortably in 62 bits.
  Shape bounded(Shape S) const;

  const ThreadLoop &TL;
  const llvm::LoopInfo &LI;
  const llvm::DataLayout &DL;
  llvm::DenseMap<const llvm::Value *, Shape> S;
};

} // namespace ptxforge::codegen::passes::warp
