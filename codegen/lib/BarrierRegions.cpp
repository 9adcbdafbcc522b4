// Kernels whose only synchronisation is `bar.sync`/`barrier.sync` on one barrier without a thread count,
// and warp collectives that exchange values through a rendezvous (WarpRendezvous.h), run without fibers: the
// thread function is cut at its barriers and collectives into regions, and the block function runs each
// region as a loop over all threads of the block (PoCL's and CuPBoP's "work-item loops"). A thread's registers
// that are read in a region before that region writes them live in per-thread arrays; all others stay
// scalars that LLVM keeps in registers. Between regions the runtime looks at where every thread stopped: all
// released into the same region and none exited → that region's loop, which LLVM can vectorize across
// threads; otherwise a generic loop in which each released thread resumes where it stopped (threads that
// exited or still wait are skipped; threads waiting at different `bar.sync` instructions of the same barrier
// are released together, as on the GPU).
#include "BarrierRegions.h"
#include "LoopCuts.h"
#include "Markers.h"
#include "MatrixBatches.h"
#include "ProgressPoints.h"
#include "ThreadLoop.h"
#include "WarpRendezvous.h"
#include "passes/Passes.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/CodeExtractor.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include <functional>
#include <map>

using namespace ptxforge;
using namespace ptxforge::codegen;
using namespace ptxforge::codegen::detail;

bool ptxforge::codegen::detail::regionSplittable(const ptx::Module &M, const ptx::Function &Kernel) {
  std::optional<uint64_t> Id;
  bool Collectives = false;
  auto Acceptable = [&](const ptx::Function &F, bool IsKernel) {
    if (!IsKernel && findProgressPoints(F).MaySpin)
      return false; // a callee's spin loop yields on fibers only
    for (const ptx::Instruction &I : F.Instructions) {
      if (I.Op == ptx::Opcode::Exit && !IsKernel)
        return false; // unwinds a thread from inside a call
      if (!synchronizesThreads(I))
        continue;
      if (IsKernel && isRegionCutCollective(I)) {
        Collectives = true;
        continue;
      }
      if (!IsKernel || (I.Op != ptx::Opcode::Bar && I.Op != ptx::Opcode::Barrier))
        return false;
      // bar.red d, a, c is a barrier between its tally's updates (lower/WarpOps.cpp); with a count b it is not.
      bool Red = I.has(ptx::Modifier::Red);
      size_t IdIndex = Red ? 1 : 0;
      if (I.has(ptx::Modifier::Arrive) || I.has(ptx::Modifier::Warp) || I.has(ptx::Modifier::Cluster) ||
          I.Operands.size() > IdIndex + 1 + Red)
        return false;
      uint64_t ThisId = 0;
      if (I.Operands.size() > IdIndex) {
        if (I.Operands[IdIndex].Kind != ptx::OperandKind::Immediate)
          return false;
        ThisId = I.Operands[IdIndex].Bits;
      }
      if (Id && *Id != ThisId)
        return false;
      Id = ThisId;
    }
    return true;
  };
  if (!Acceptable(Kernel, true))
    return false;
  for (const auto &G : M.Functions)
    if (!G->IsEntry && G->HasBody && !Acceptable(*G, false))
      return false;
  ProgressPoints Points = findProgressPoints(Kernel);
  return Id.has_value() || Collectives || Points.LockstepPoints || Points.SpinPoints;
}

unsigned ptxforge::codegen::detail::regionCuts(const ptx::Function &Kernel) {
  ProgressPoints Points = findProgressPoints(Kernel);
  // A batch of products is one cut (MatrixBatches.h).
  return static_cast<unsigned>(
             llvm::count_if(Kernel.Instructions, [](const ptx::Instruction &I) { return synchronizesThreads(I); })) +
         Points.LockstepPoints + Points.SpinPoints - findMatrixBatches(Kernel, Points).Joined;
}

namespace {

/// What one thread's copy of register A holds: its type, or an array of them where the lowering allocated several
/// (a helper's scratch buffer, such as a matrix collective's fragment registers).
llvm::Type *threadType(const llvm::AllocaInst *A) {
  auto *Count = llvm::dyn_cast<llvm::ConstantInt>(A->getArraySize());
  if (!A->isArrayAllocation() || !Count)
    return A->getAllocatedType();
  return llvm::ArrayType::get(A->getAllocatedType(), Count->getZExtValue());
}

/// The thread function's code between barriers.
struct Region {
  llvm::BasicBlock *Entry;
  llvm::SmallSetVector<llvm::BasicBlock *, 16> Blocks;
};

class RegionBuilder {
public:
  RegionBuilder(ModuleLowering &ML, llvm::Function *F, ResumeLoops Resume)
      : ML(ML), F(F), B(ML.Ctx), Resume(Resume) {}

  /// Rewrites F into the block function; an error says which contract (Markers.h) the input broke.
  llvm::Error build();
  /// The resume loops left out, their rounds counted (ResumeLoops::Count).
  unsigned countedResumeLoops() const { return CountedResumeLoops; }

private:
  llvm::Error splitAtCuts();
  void collectRegions();
  void rematerializeRegisters();
  void hoistBlockConstants();
  void privatizeMisalignedBits();
  void markInternalAccesses();
  /// Puts the loads and stores of the thread's own slots (addresses indexed by T64) in the threads' group.
  void markThreadSlots(llvm::Value *T64);
  void findThreadPrivateAllocas();
  /// The registers (Allocas) Reg's blocks use, in Allocas' order.
  std::vector<llvm::AllocaInst *> allocasUsedBy(const Region &Reg) const;
  /// Moves each piece into a function of its own, called where it was (see the definition for why).
  void outlinePieces(llvm::BasicBlock *Done);
  /// Emits one loop over the block's threads. Generic: each thread enters the region its state names;
  /// otherwise every thread enters region R. Returns the loop's entry block; the loop ends at Dispatch.
  /// Uniform: registers the region reads from thread 0's slot (uniformCandidates, LoopCuts.h).
  /// Consecutive: those (32-bit) registers are read as slot 0's value plus the thread's linear id instead
  /// (emitSlotScan's FirstPlusThread).
  llvm::BasicBlock *emitRegionLoop(int R, bool Generic, llvm::ArrayRef<llvm::AllocaInst *> Uniform = {},
                                   bool Consecutive = false);
  /// The threads a region loop covers, {Begin, End} of a one-dimensional block (null: all), computed in blocks
  /// from Entry to Done (none: nothing to compute); IdleMin/IdleMax seed the loop's state min/max.
  struct LiveRange {
    llvm::BasicBlock *Entry = nullptr, *Done = nullptr;
    llvm::Value *Begin = nullptr, *End = nullptr, *IdleMin = nullptr, *IdleMax = nullptr;
    /// The least and greatest state, among the threads the loop enters, that names a resumable loop
    /// (resumableLoops; the generic loop's scan; ~0 and 0 where none does).
    llvm::Value *ResumableMin = nullptr, *ResumableMax = nullptr;
  };
  /// One loop over the threads Live covers, entering the regions Enter lists (ByState: each thread the one its
  /// state names, if listed), passing the cuts Passes accepts. Returns its entry; it ends at Dispatch.
  llvm::BasicBlock *emitThreadsLoop(const LiveRange &Live, llvm::ArrayRef<unsigned> Enter, bool ByState,
                                    llvm::function_ref<bool(unsigned)> Passes, ThreadLoopVectors Vectors,
                                    llvm::ArrayRef<llvm::AllocaInst *> Uniform = {}, bool Consecutive = false);
  /// Beside the generic loop (entered at Generic), the loops that resume the threads standing in one of the
  /// Resumable cut loops, chosen at Live.Done.
  void emitResumeLoops(const LiveRange &Live, llvm::ArrayRef<unsigned> Resumable, llvm::BasicBlock *Generic);
  /// Whether a cut of region K leads back into K (K is a cut loop's body).
  bool cutsBackTo(unsigned K) const;
  /// Whether the generic loop passes cut K: a loop cut the builder made, not a lockstep point.
  bool passableCut(unsigned K) const { return Cuts[K].Kind == RCLoop && Cuts[K].Arg == LCBuilder; }
  /// The generic loop's scan for the threads it can enter.
  LiveRange emitLiveScan(llvm::ArrayRef<unsigned> Resumable);
  /// The cut loops a resume loop can run: a passable cut leads back into each.
  std::vector<unsigned> resumableLoops() const;
  /// The span of live threads kernels with collectives keep.
  LiveRange emitSpanLoad();
  /// The loop's latch stores where each thread stopped (StoppedAt) and folds it into the min/max states, through
  /// accumulators of the loop's own that Flush, the loop's exit, stores into them.
  void recordStops(const ThreadLoop &Loop, llvm::Value *StatePtr, const LiveRange &Live, llvm::BasicBlock *Flush);
  /// Clones region K into the loop's body, its registers mapped (VMap) to the thread's slots, which are
  /// addressed before InsertSlots (null: at the body's end); its exits branch to the latch with their stop,
  /// except the cuts the loop Passes (the generic loop's loop cuts), which go into PassedCuts.
  std::vector<llvm::BasicBlock *> cloneRegion(size_t K, const ThreadLoop &Loop, llvm::Value *T64,
                                              llvm::Instruction *InsertSlots, llvm::function_ref<bool(unsigned)> Passes,
                                              llvm::ValueToValueMapTy &VMap,
                                              std::vector<std::pair<llvm::BasicBlock *, unsigned>> &PassedCuts);
  /// In a region copy, the reads of Uniform registers before the thread writes them take thread 0's value
  /// (Consecutive: plus the thread's linear id), loaded once before the loop.
  void readUniformOnce(const Region &Reg, const ThreadLoop &Loop, llvm::ArrayRef<llvm::BasicBlock *> Copies,
                       llvm::ValueToValueMapTy &VMap, llvm::ArrayRef<llvm::AllocaInst *> Uniform, bool Consecutive);
  /// The copies' reads of the thread's ids take the loop's values.
  void useLoopIds(llvm::ArrayRef<llvm::BasicBlock *> Copies, const ThreadLoop &Loop);
  /// Loop regions whose counters may be the same in every thread, or count up with it, get a version of their
  /// loop that reads them once, behind a scan that picks it (Fast[R] becomes the scan).
  void emitVersionedLoops(std::vector<llvm::BasicBlock *> &Fast);
  /// After each loop: where do the threads stand? All exited → Done; all alive and released into region R →
  /// Fast[R]; anything else → the runtime's answer, or the Generic loop.
  void emitDispatch(llvm::ArrayRef<llvm::BasicBlock *> Fast, llvm::BasicBlock *Generic, llvm::BasicBlock *Done);
  /// Asks the runtime where the threads stand after a loop over the block's N threads, for a kernel whose
  /// cuts are loop cuts and barriers.
  llvm::Value *emitRegionNext(llvm::Value *N);
  /// Fast, with each spin point's region entered through a block that polls the runtime first.
  std::vector<llvm::BasicBlock *> pollingSpinCuts(llvm::ArrayRef<llvm::BasicBlock *> Fast);

  ModuleLowering &ML;
  llvm::Function *F;
  llvm::IRBuilder<> B;
  ResumeLoops Resume;
  unsigned CountedResumeLoops = 0;
  llvm::BasicBlock *Setup = nullptr, *Dispatch = nullptr;
  llvm::Value *Ctx = nullptr, *NX = nullptr, *NY = nullptr, *NZ = nullptr, *States = nullptr;
  llvm::AllocaInst *MisalignedSeen = nullptr; ///< privatizeMisalignedBits' accumulator
  /// The smallest and largest state a loop left its threads in (reductions of the loops' latches): equal,
  /// they say without a scan that every thread stopped at the same place.
  llvm::AllocaInst *MinState = nullptr, *MaxState = nullptr;
  llvm::PHINode *StoppedAt = nullptr; ///< the current loop's latch: where the thread stopped
  /// Kernels with collectives, one-dimensional blocks: {first, end} of the threads the region loops cover, then
  /// {first, end} of the threads still alive. The dispatcher narrows the live span once warps exited (a
  /// reduction's tail leaves one warp), and the covered span to the threads it released into one region while
  /// all the other live ones wait at the barrier (a scan's warp of warp sums goes through its shuffles alone).
  llvm::AllocaInst *Span = nullptr;
  std::vector<llvm::AllocaInst *> Allocas;
  llvm::DenseMap<llvm::AllocaInst *, unsigned> AllocaIndex;    ///< position in Allocas
  llvm::DenseMap<llvm::AllocaInst *, llvm::Value *> PerThread; ///< alloca -> its per-thread array
  llvm::AllocaInst *Frame = nullptr;                           ///< holds every per-thread array
  llvm::SmallPtrSet<llvm::Value *, 32> FrameSlices;            ///< PerThread's arrays: disjoint slices of Frame
  /// A self-contained part of the block function the dispatcher branches to (a region loop, a warp release, a
  /// version check): its first block and the allocas only it uses. outlinePieces makes each a function.
  struct Piece {
    llvm::BasicBlock *Entry;
    std::vector<llvm::AllocaInst *> Allocas;
    std::string Name;
  };
  std::vector<Piece> Pieces;
  std::vector<llvm::AllocaInst *> PieceAllocas; ///< the current region loop's own registers (cloneRegion)
  llvm::BasicBlock *DispatchSame = nullptr, *DispatchRuntime = nullptr; ///< emitDispatch's blocks
  /// Cut exits: the branch that ends a thread's region at cut K (a barrier or a collective) continues in
  /// region K + 1.
  llvm::DenseMap<llvm::Instruction *, unsigned> BarrierExit;
  std::vector<Region> Regions;
  std::vector<RegionCut> Cuts; ///< per region: what a thread waits at before entering it
  std::optional<WarpRendezvous> Warp;
  bool HasCollectives = false, HasLoopCuts = false;
};

llvm::Error RegionBuilder::splitAtCuts() {
  if (llvm::Error E = checkRegionContract(*F))
    return E;
  // Region 0 starts after the entry block's allocas; one more after each cut edge, in the order of the code,
  // except that the loop cuts' regions come last, numbered as that pass numbered them.
  llvm::BasicBlock &Entry = F->getEntryBlock();
  Regions.push_back({Entry.splitBasicBlock(gatherEntryAllocas(*F), "region0"), {}});
  Cuts.push_back({RCStart, 0});
  Setup = &Entry;
  std::map<unsigned, std::vector<llvm::Instruction *>> LoopStops;
  for (llvm::BasicBlock &BB : *F) {
    llvm::Instruction *Term = BB.getTerminator();
    std::optional<CutEdge> E = cutEdgeOf(Term);
    if (!E)
      continue;
    clearCutEdge(Term);
    if (isLoopCutEdge(*E)) {
      LoopStops[E->Order].push_back(Term);
      continue;
    }
    BarrierExit[Term] = static_cast<unsigned>(Regions.size());
    Regions.push_back({Term->getSuccessor(0), {}});
    Cuts.push_back(E->Cut);
    // A lockstep point (ProgressPoints.h) releases as a loop cut does, through the collectives' dispatcher: its
    // span of live threads lets a reduction's warp tail (warp 0 alone, the others exited) run in region loops.
    bool Lockstep = E->Cut.Kind == RCLoop;
    HasLoopCuts |= Lockstep;
    HasCollectives |= E->Cut.Kind != RCBarrier;
  }
  for (auto &[Order, Stops] : LoopStops) {
    for (llvm::Instruction *Stop : Stops)
      BarrierExit[Stop] = static_cast<unsigned>(Regions.size());
    Regions.push_back({Stops.front()->getSuccessor(0), {}});
    Cuts.push_back({RCLoop, 0});
    HasLoopCuts = true;
  }
  Warp.emplace(ML, *F);
  // Values the lowering computes once and reuses in later blocks go through memory like registers do, so
  // the analysis below sees every value that crosses from one region into another.
  std::vector<llvm::Instruction *> Crossing;
  for (llvm::BasicBlock &BB : *F)
    for (llvm::Instruction &I : BB)
      if (!llvm::isa<llvm::AllocaInst>(I) && I.isUsedOutsideOfBlock(&BB))
        Crossing.push_back(&I);
  for (llvm::Instruction *I : Crossing)
    llvm::DemoteRegToStack(*I, false, Setup->getTerminator()->getIterator());
  return llvm::Error::success();
}

void RegionBuilder::collectRegions() {
  for (Region &R : Regions) {
    std::vector<llvm::BasicBlock *> Work{R.Entry};
    while (!Work.empty()) {
      llvm::BasicBlock *BB = Work.back();
      Work.pop_back();
      if (!R.Blocks.insert(BB))
        continue;
      if (BarrierExit.count(BB->getTerminator()))
        continue;
      for (llvm::BasicBlock *S : llvm::successors(BB))
        Work.push_back(S);
    }
  }
}

/// Registers written by one store, with a value computed only from the thread's ids, the launch shape, kernel
/// parameters and constants (addresses, loop bounds, indices, constants nvcc moves into registers inside a loop:
/// most of what crosses barriers) are recomputed at the start of every later region that reads them instead of
/// living in per-thread arrays: the region loops then see them as functions of the loop's thread id, so accesses
/// through them stay consecutive and the loops can vectorize. The store may be anywhere, even in a loop: every
/// execution of it stores the same value, and a read that no store precedes reads an uninitialized register,
/// whose value PTX leaves open.
class Rematerializer {
public:
  Rematerializer(llvm::Function &F, llvm::Value *Ctx, llvm::ArrayRef<Region> Regions)
      : Ctx(Ctx), Params(F.getArg(1)), Regions(Regions) {}

  /// Registers of Setup (the entry block's allocas) with one store, a plain one.
  void findSingleStores(llvm::BasicBlock &Setup) {
    for (llvm::Instruction &I : Setup) {
      auto *A = llvm::dyn_cast<llvm::AllocaInst>(&I);
      if (!A || A == Ctx)
        continue;
      if (llvm::StoreInst *Only = onlyStore(A)) {
        OnlyStore[A] = Only;
        Order.push_back(A);
      }
    }
  }

  /// Stores each recomputable register's value anew at the start of every later region that reads it (only
  /// those: a copy in every region made the IR grow with registers x regions).
  void run() {
    llvm::DenseMap<llvm::AllocaInst *, unsigned> Position;
    for (unsigned K = 0; K < Order.size(); ++K)
      Position[Order[K]] = K;
    for (size_t R = 1; R < Regions.size(); ++R) {
      std::vector<unsigned> Read;
      for (llvm::BasicBlock *BB : Regions[R].Blocks)
        for (llvm::Instruction &I : *BB)
          if (auto *L = llvm::dyn_cast<llvm::LoadInst>(&I))
            if (auto It = Position.find(llvm::dyn_cast<llvm::AllocaInst>(L->getPointerOperand())); It != Position.end())
              Read.push_back(It->second);
      // In the registers' order, not the map's: the IR must not depend on where the heap put them.
      llvm::sort(Read);
      Read.erase(std::unique(Read.begin(), Read.end()), Read.end());
      llvm::IRBuilder<> IB(Regions[R].Entry, Regions[R].Entry->getFirstInsertionPt());
      for (unsigned K : Read) {
        llvm::AllocaInst *A = Order[K];
        if (!recomputable(A))
          continue;
        llvm::DenseMap<llvm::Value *, llvm::Value *> Done;
        IB.CreateStore(copy(OnlyStore[A]->getValueOperand(), IB, Done), A);
      }
    }
  }

private:
  /// A's one plain store when every other use is a plain load; null otherwise.
  static llvm::StoreInst *onlyStore(llvm::AllocaInst *A) {
    llvm::StoreInst *Only = nullptr;
    for (llvm::User *U : A->users()) {
      auto *S = llvm::dyn_cast<llvm::StoreInst>(U);
      auto *L = llvm::dyn_cast<llvm::LoadInst>(U);
      if (S && S->isSimple() && S->getPointerOperand() == A && !Only)
        Only = S;
      else if (!(L && L->isSimple()))
        return nullptr;
    }
    return Only;
  }

  bool recomputable(llvm::AllocaInst *A) {
    auto It = Known.find(A);
    if (It != Known.end())
      return It->second == 1;
    auto S = OnlyStore.find(A);
    if (S == OnlyStore.end())
      return false;
    Known[A] = -1; // a register whose value reads itself is not recomputable
    bool R = pure(S->second->getValueOperand(), 0);
    Known[A] = R;
    return R;
  }

  /// Whether a load reads only block-invariant context fields, recomputable registers or kernel parameters.
  bool pureLoad(llvm::LoadInst *L, unsigned Depth) {
    llvm::Value *P = L->getPointerOperand();
    if (auto *A = llvm::dyn_cast<llvm::AllocaInst>(P); A && A != Ctx)
      return recomputable(A);
    if (auto *G = llvm::dyn_cast<llvm::GetElementPtrInst>(P);
        G && G->getPointerOperand() == Ctx && G->hasAllConstantIndices()) {
      auto Field = llvm::cast<llvm::ConstantInt>(G->getOperand(2))->getZExtValue();
      return Field != TCDeferChecks && Field != TCMisalignedBits && Field != TCBlock;
    }
    // Parameters: the lowering forms their addresses from the parameter buffer's pointer, maybe through
    // an integer round trip.
    llvm::Value *Base = P;
    if (auto *IP = llvm::dyn_cast<llvm::IntToPtrInst>(Base))
      if (auto *PI = llvm::dyn_cast<llvm::PtrToIntInst>(IP->getOperand(0)))
        Base = PI->getOperand(0);
    return llvm::getUnderlyingObject(Base) == Params && L->isSimple() && pure(P, Depth + 1);
  }

  /// Whether V can be computed again, without a fault the thread's path never had, at any region's start.
  bool pure(llvm::Value *V, unsigned Depth) {
    if (llvm::isa<llvm::Constant>(V) || V == Params)
      return true;
    auto *I = llvm::dyn_cast<llvm::Instruction>(V);
    if (!I || Depth > 48)
      return false;
    if (auto *L = llvm::dyn_cast<llvm::LoadInst>(I))
      return pureLoad(L, Depth);
    if (auto *CI = llvm::dyn_cast<llvm::CallInst>(I)) {
      auto *II = llvm::dyn_cast<llvm::IntrinsicInst>(CI);
      if (!II || !II->doesNotAccessMemory())
        return false;
    } else if (!llvm::isa<llvm::BinaryOperator>(I) && !llvm::isa<llvm::CastInst>(I) && !llvm::isa<llvm::CmpInst>(I) &&
               !llvm::isa<llvm::SelectInst>(I) && !llvm::isa<llvm::GetElementPtrInst>(I)) {
      return false;
    }
    if (I->getOpcode() == llvm::Instruction::UDiv || I->getOpcode() == llvm::Instruction::SDiv ||
        I->getOpcode() == llvm::Instruction::URem || I->getOpcode() == llvm::Instruction::SRem)
      return false; // recomputing must not add a fault the thread's path never had
    for (llvm::Value *Op : I->operands())
      if (!llvm::isa<llvm::BasicBlock>(Op) && !pure(Op, Depth + 1))
        return false;
    return true;
  }

  /// A copy of V's computation at IB, the registers it reads replaced by their own recomputed values.
  llvm::Value *copy(llvm::Value *V, llvm::IRBuilder<> &IB, llvm::DenseMap<llvm::Value *, llvm::Value *> &Done) {
    auto *I = llvm::dyn_cast<llvm::Instruction>(V);
    if (!I || llvm::isa<llvm::AllocaInst>(I)) // the context, the parameter buffer: the same everywhere
      return V;
    if (auto It = Done.find(I); It != Done.end())
      return It->second;
    llvm::Value *R;
    auto *L = llvm::dyn_cast<llvm::LoadInst>(I);
    auto *A = L ? llvm::dyn_cast<llvm::AllocaInst>(L->getPointerOperand()) : nullptr;
    if (A && A != Ctx) {
      R = copy(OnlyStore[A]->getValueOperand(), IB, Done);
    } else {
      llvm::Instruction *C = I->clone();
      for (unsigned K = 0; K < C->getNumOperands(); ++K)
        C->setOperand(K, copy(C->getOperand(K), IB, Done));
      IB.Insert(C);
      R = C;
    }
    Done[I] = R;
    return R;
  }

  llvm::Value *Ctx;
  llvm::Argument *Params;
  llvm::ArrayRef<Region> Regions;
  llvm::DenseMap<llvm::AllocaInst *, llvm::StoreInst *> OnlyStore;
  std::vector<llvm::AllocaInst *> Order;         ///< OnlyStore's keys in the entry block's order
  llvm::DenseMap<llvm::AllocaInst *, int> Known; // 1 recomputable, 0 not, -1 being decided
};

void RegionBuilder::rematerializeRegisters() {
  Rematerializer Remat(*F, Ctx, Regions);
  Remat.findSingleStores(*Setup);
  Remat.run();
}

/// The context escapes to the runtime calls at the loops' ends, so LLVM must assume a store through any
/// pointer may change it, and reloads its fields in every iteration of a loop that stores (the shared window's
/// base before each shared access, say), which also keeps such loops from vectorizing. The fields that stay the
/// same for the whole block are read once, from the caller's context.
void RegionBuilder::hoistBlockConstants() {
  auto Constant = [](uint64_t Field) {
    switch (Field) {
    case TCNtid:
    case TCCtaid:
    case TCNctaid:
    case TCNWarpId:
    case TCDynamicSmemSize:
    case TCShared:
    case TCBlock:
    case TCSmId:
    case TCNSmId:
    case TCTotalSmemSize:
    case TCGridWorkspace:
    case TCClusterDim:
    case TCClusterFlags:
    case TCClusterShared:
    case TCCluster:
      return true;
    default:
      return false;
    }
  };
  std::map<std::vector<uint64_t>, llvm::Value *> Loaded;
  llvm::IRBuilder<> IB(Setup->getTerminator());
  for (llvm::BasicBlock &BB : *F)
    for (llvm::Instruction &I : llvm::make_early_inc_range(BB)) {
      auto *L = llvm::dyn_cast<llvm::LoadInst>(&I);
      auto *G = L ? llvm::dyn_cast<llvm::GetElementPtrInst>(L->getPointerOperand()) : nullptr;
      if (!G || &BB == Setup || G->getPointerOperand() != Ctx || G->getSourceElementType() != ML.ThreadCtxTy ||
          !G->hasAllConstantIndices() || !L->isSimple() || G->getNumIndices() < 2 ||
          !Constant(llvm::cast<llvm::ConstantInt>(G->getOperand(2))->getZExtValue()))
        continue;
      std::vector<uint64_t> Key{reinterpret_cast<uintptr_t>(L->getType())};
      for (llvm::Value *Idx : G->indices())
        Key.push_back(llvm::cast<llvm::ConstantInt>(Idx)->getZExtValue());
      llvm::Value *&Once = Loaded[Key];
      if (!Once) {
        // From the caller's context, not the copy: the copy was just written by a memcpy, whose pieces do not
        // forward to narrower loads (a stall per block), and the block-range loop's stores of %ctaid forward.
        llvm::Instruction *GC = G->clone();
        GC->setOperand(0, F->getArg(0));
        IB.Insert(GC);
        Once = IB.CreateLoad(L->getType(), GC, L->getName() + ".block");
      }
      L->replaceAllUsesWith(Once);
      L->eraseFromParent();
    }
}

/// The misaligned-address bits go to a private accumulator instead of the (escaping) context, so they become
/// an OR reduction the loops can vectorize; dispatch moves them into the context for the check.
void RegionBuilder::privatizeMisalignedBits() {
  llvm::IRBuilder<> IB(Setup->getTerminator());
  MisalignedSeen = IB.CreateAlloca(IB.getInt32Ty(), nullptr, "misaligned.seen");
  MisalignedSeen->moveBefore(Setup->begin());
  IB.CreateStore(IB.getInt32(0), MisalignedSeen);
  for (llvm::BasicBlock &BB : *F)
    for (llvm::Instruction &I : llvm::make_early_inc_range(BB)) {
      auto *G = llvm::dyn_cast<llvm::GetElementPtrInst>(&I);
      if (!G || G->getPointerOperand() != Ctx || G->getSourceElementType() != ML.ThreadCtxTy ||
          !G->hasAllConstantIndices() || G->getNumIndices() != 2 ||
          llvm::cast<llvm::ConstantInt>(G->getOperand(2))->getZExtValue() != TCMisalignedBits)
        continue;
      G->replaceAllUsesWith(MisalignedSeen);
      G->eraseFromParent();
    }
}

/// The per-thread arrays, the thread states and the context are ptxforge's memory, which no PTX access
/// reaches (passes::MemoryClass).
void RegionBuilder::markInternalAccesses() {
  llvm::SmallPtrSet<const llvm::Value *, 32> Ours{Ctx, States, MisalignedSeen, Frame};
  for (auto &[A, Arr] : PerThread)
    Ours.insert(Arr);
  for (llvm::Instruction &I : llvm::instructions(*F)) {
    llvm::Value *P = nullptr;
    if (auto *L = llvm::dyn_cast<llvm::LoadInst>(&I))
      P = L->getPointerOperand();
    else if (auto *S = llvm::dyn_cast<llvm::StoreInst>(&I))
      P = S->getPointerOperand();
    if (P && Ours.count(llvm::getUnderlyingObject(P)))
      passes::markAccess(&I, passes::MemoryClass::Internal);
  }
}

/// A register must survive a barrier when some region reads it before writing it: a forward "written on
/// every path from the region's entry" analysis per region. Allocas used other than by plain loads and
/// stores (arrays, out-parameters) are kept per thread whenever they are used at all.
void RegionBuilder::findThreadPrivateAllocas() {
  for (llvm::Instruction &I : *Setup)
    if (auto *A = llvm::dyn_cast<llvm::AllocaInst>(&I); A && A != Ctx && A != MisalignedSeen)
      Allocas.push_back(A);
  llvm::DenseMap<llvm::AllocaInst *, unsigned> &Index = AllocaIndex;
  for (unsigned K = 0; K < Allocas.size(); ++K)
    Index[Allocas[K]] = K;
  llvm::BitVector Private(Allocas.size());
  for (llvm::AllocaInst *A : Warp->registers())
    Private.set(Index[A]);
  for (unsigned K = 0; K < Allocas.size(); ++K)
    for (llvm::User *U : Allocas[K]->users()) {
      auto *L = llvm::dyn_cast<llvm::LoadInst>(U);
      auto *S = llvm::dyn_cast<llvm::StoreInst>(U);
      if (!(L && L->isSimple()) && !(S && S->isSimple() && S->getPointerOperand() == Allocas[K]))
        Private.set(K);
    }
  auto AllocaOf = [&](llvm::Value *P) -> int {
    auto *A = llvm::dyn_cast<llvm::AllocaInst>(P);
    auto It = A ? Index.find(A) : Index.end();
    return It == Index.end() ? -1 : static_cast<int>(It->second);
  };
  for (size_t R = 1; R < Regions.size(); ++R) {
    Region &Reg = Regions[R];
    llvm::DenseMap<llvm::BasicBlock *, llvm::BitVector> Out;
    llvm::BitVector All(Allocas.size(), true);
    for (llvm::BasicBlock *BB : Reg.Blocks)
      Out[BB] = All;
    auto In = [&](llvm::BasicBlock *BB) {
      if (BB == Reg.Entry)
        return llvm::BitVector(Allocas.size());
      llvm::BitVector V = All;
      for (llvm::BasicBlock *P : llvm::predecessors(BB))
        if (Reg.Blocks.count(P) && !BarrierExit.count(P->getTerminator()))
          V &= Out[P];
      return V;
    };
    // Must-written sets to a fixed point, then the reads they do not cover.
    for (bool Changed = true; Changed;) {
      Changed = false;
      for (llvm::BasicBlock *BB : Reg.Blocks) {
        llvm::BitVector V = In(BB);
        for (llvm::Instruction &I : *BB)
          if (auto *S = llvm::dyn_cast<llvm::StoreInst>(&I))
            if (int K = AllocaOf(S->getPointerOperand()); K >= 0)
              V.set(K);
        if (V != Out[BB]) {
          Out[BB] = V;
          Changed = true;
        }
      }
    }
    for (llvm::BasicBlock *BB : Reg.Blocks) {
      llvm::BitVector V = In(BB);
      for (llvm::Instruction &I : *BB) {
        if (auto *S = llvm::dyn_cast<llvm::StoreInst>(&I)) {
          if (int K = AllocaOf(S->getPointerOperand()); K >= 0)
            V.set(K);
        } else if (auto *L = llvm::dyn_cast<llvm::LoadInst>(&I)) {
          if (int K = AllocaOf(L->getPointerOperand()); K >= 0 && !V.test(K))
            Private.set(K);
        }
      }
    }
  }
  // Arrays: one element per thread of the block, each a slice of one frame. As allocas of their own, every
  // piece's extraction (outlinePieces) walked the uses of every array, each region's uses among them, so that
  // compile time grew with the square of the cuts; the frame has one use per array.
  B.SetInsertPoint(Setup->getTerminator());
  llvm::Value *N = B.CreateMul(B.CreateMul(NX, NY), NZ);
  const llvm::DataLayout &DL = F->getDataLayout();
  uint64_t SliceAlign = 64;
  for (unsigned K = 0; K < Allocas.size(); ++K)
    SliceAlign = std::max<uint64_t>(SliceAlign, Allocas[K]->getAlign().value());
  llvm::Value *N64 = B.CreateZExt(N, B.getInt64Ty()), *Size = B.getInt64(0);
  std::vector<std::pair<llvm::AllocaInst *, llvm::Value *>> Slices;
  for (unsigned K = 0; K < Allocas.size(); ++K)
    if (Private.test(K) && !Allocas[K]->use_empty()) {
      Slices.push_back({Allocas[K], Size});
      llvm::Value *Bytes = B.CreateMul(N64, B.getInt64(DL.getTypeAllocSize(threadType(Allocas[K]))));
      Size = B.CreateAdd(Size, B.CreateAnd(B.CreateAdd(Bytes, B.getInt64(SliceAlign - 1)), ~(SliceAlign - 1)));
    }
  Frame = B.CreateAlloca(B.getInt8Ty(), Size, "threads.frame");
  Frame->setAlignment(llvm::Align(SliceAlign));
  for (auto &[A, Offset] : Slices) {
    PerThread[A] = B.CreateGEP(B.getInt8Ty(), Frame, Offset, A->getName() + ".threads");
    FrameSlices.insert(PerThread[A]);
  }
  States = B.CreateAlloca(B.getInt32Ty(), N, "thread.state");
}

std::vector<llvm::AllocaInst *> RegionBuilder::allocasUsedBy(const Region &Reg) const {
  std::vector<unsigned> Used;
  for (llvm::BasicBlock *BB : Reg.Blocks)
    for (llvm::Instruction &I : *BB)
      for (llvm::Value *Op : I.operands())
        if (auto *A = llvm::dyn_cast<llvm::AllocaInst>(Op))
          if (auto It = AllocaIndex.find(A); It != AllocaIndex.end())
            Used.push_back(It->second);
  llvm::sort(Used);
  Used.erase(std::unique(Used.begin(), Used.end()), Used.end());
  std::vector<llvm::AllocaInst *> Result;
  for (unsigned K : Used)
    Result.push_back(Allocas[K]);
  return Result;
}

/// Every region loop ends at the dispatcher, which branches to the next: all of a kernel's loops sit in one
/// loop of the block function. After each change to an inner loop LLVM's loop passes forget what they know
/// about the outermost loop around it (LoopUnroll: forgetTopmostLoop), and the register allocator splits live
/// ranges that span the whole function, so the optimizer's time grew with the square of the cuts (bar.sync
/// x400: 15 s, 10 of them in LoopUnroll; shfl.sync x200: 13 s, most in register allocation and CodeGenPrepare).
/// As functions of their own, called by the dispatcher, the pieces are optimized one by one, each in time
/// linear in its size. A piece's arguments are the block function's values it reads: its allocas (distinct
/// objects, reached through nothing else while it runs: noalias) and the block function's arguments (with their
/// attributes). A piece the extractor refuses stays inline (correct, only slower to compile).
void RegionBuilder::outlinePieces(llvm::BasicBlock *Done) {
  llvm::SmallPtrSet<llvm::BasicBlock *, 32> Live;
  for (llvm::BasicBlock &BB : *F)
    Live.insert(&BB);
  llvm::SmallPtrSet<llvm::BasicBlock *, 32> Outside{Setup, Dispatch, DispatchSame, DispatchRuntime, Done};
  for (const Piece &P : Pieces)
    Outside.insert(P.Entry);
  llvm::CodeExtractorAnalysisCache Cache(*F);
  for (Piece &P : Pieces) {
    if (!Live.count(P.Entry))
      continue; // never dispatched to: removed as unreachable
    std::vector<llvm::BasicBlock *> Blocks{P.Entry};
    llvm::SmallPtrSet<llvm::BasicBlock *, 32> Seen{P.Entry};
    for (size_t K = 0; K < Blocks.size(); ++K)
      for (llvm::BasicBlock *S : llvm::successors(Blocks[K]))
        if (!Outside.count(S) && Seen.insert(S).second)
          Blocks.push_back(S);
    // The piece's own registers go with its blocks (the extractor passes the others by pointer).
    for (llvm::AllocaInst *A : P.Allocas)
      A->moveBefore(P.Entry->getFirstInsertionPt());
    llvm::CodeExtractor CE(Blocks, nullptr, false, nullptr, nullptr, nullptr, false, /*AllowAlloca=*/true, nullptr,
                           P.Name);
    llvm::Function *Out = CE.isEligible() ? CE.extractCodeRegion(Cache) : nullptr;
    llvm::BasicBlock::iterator Home = Out ? Out->getEntryBlock().getFirstInsertionPt() : Setup->getFirstInsertionPt();
    for (llvm::AllocaInst *A : P.Allocas) // static allocas of the entry block, which SROA promotes
      A->moveBefore(Home);
    if (!Out)
      continue;
    // Not __ptx_block_*: the block functions' names say that argument 0 is the context.
    Out->setName("__ptx_piece_" + F->getName().drop_front(strlen("__ptx_block_")) + "." + P.Name);
    Out->addFnAttr(llvm::Attribute::NoInline);
    for (llvm::User *U : Out->users()) {
      auto *Call = llvm::dyn_cast<llvm::CallInst>(U);
      if (!Call)
        continue;
      Call->getParent()->setName("run." + P.Name);
      Outside.insert(Call->getParent()); // entered instead of the piece's first block, which moved
      for (unsigned K = 0; K < Call->arg_size(); ++K) {
        llvm::Value *V = Call->getArgOperand(K);
        if (auto *Arg = llvm::dyn_cast<llvm::Argument>(V))
          Out->addParamAttrs(K, llvm::AttrBuilder(ML.Ctx, F->getAttributes().getParamAttrs(Arg->getArgNo())));
        else if (llvm::isa<llvm::AllocaInst>(V) || FrameSlices.count(V))
          Out->addParamAttr(K, llvm::Attribute::NoAlias);
        // %ntid's range (withLaunchRange) bounds the piece's loops over threads, as it bounds the block
        // function's.
        else if (auto *L = llvm::dyn_cast<llvm::LoadInst>(V))
          if (const llvm::MDNode *Range = L->getMetadata(llvm::LLVMContext::MD_range))
            Out->addParamAttr(K, llvm::Attribute::get(ML.Ctx, llvm::Attribute::Range,
                                                      llvm::getConstantRangeFromMetadata(*Range)));
        // A scalar of the block function's own (the misaligned-address accumulator, the dispatch's min and
        // max) may be written anywhere in the piece, and is aligned: so LICM keeps it in a register across the
        // region loop even where only some threads write it (the accumulator after a global store past a
        // loop's exit test, in a region that runs the loop's back edge), and the loop stays vectorizable.
        if (auto *A = llvm::dyn_cast<llvm::AllocaInst>(V))
          if (std::optional<llvm::TypeSize> Size = A->getAllocationSize(F->getDataLayout());
              Size && !Size->isScalable()) {
            Out->addDereferenceableParamAttr(K, Size->getFixedValue());
            Out->addParamAttr(K, llvm::Attribute::getWithAlignment(ML.Ctx, A->getAlign()));
            Out->addParamAttr(K, llvm::Attribute::Writable);
          }
        if (V == Ctx) // where passes::StreamingStoresPass finds the launch's shape
          Out->addFnAttr(passes::ContextArgumentAttr, llvm::utostr(K));
      }
    }
  }
}

std::vector<unsigned> RegionBuilder::resumableLoops() const {
  std::vector<unsigned> Out;
  for (size_t K = 1; K < Regions.size(); ++K)
    if (passableCut(static_cast<unsigned>(K)) && cutsBackTo(static_cast<unsigned>(K)))
      Out.push_back(static_cast<unsigned>(K));
  return Out;
}

RegionBuilder::LiveRange RegionBuilder::emitLiveScan(llvm::ArrayRef<unsigned> Resumable) {
  // The generic loop holds a copy of every region and runs only threads whose states diverged (a warp's tail of
  // shuffles, exits): vectorized, it was most of a region kernel's compile time for little run time. Often one
  // warp of the block runs (a reduction's shuffle tail, after the other warps exited), so in a one-dimensional
  // block a scan first finds the span of threads the loop can enter, and the loop covers only that span. The
  // threads it skips keep their states; their least and greatest states seed the loop's min/max (a superset of
  // the states only makes "all alike" rarer).
  llvm::LLVMContext &C = ML.Ctx;
  llvm::Type *I32 = B.getInt32Ty();
  LiveRange Live;
  Live.Entry = llvm::BasicBlock::Create(C, "generic.scan", F);
  llvm::BasicBlock *Body = llvm::BasicBlock::Create(C, "generic.scan.body", F);
  Live.Done = llvm::BasicBlock::Create(C, "generic.scan.done", F);
  llvm::IRBuilder<> SB(Live.Entry);
  llvm::Value *OneD = SB.CreateAnd(SB.CreateICmpEQ(NY, SB.getInt32(1)), SB.CreateICmpEQ(NZ, SB.getInt32(1)));
  SB.CreateCondBr(OneD, Body, Live.Done);
  // In Done: the scan's results, or (blocks of more dimensions) the whole block and neutral min/max.
  SB.SetInsertPoint(Live.Done);
  auto result = [&](llvm::Value *Unscanned, const char *Name) {
    llvm::PHINode *P = SB.CreatePHI(I32, 2, Name);
    P->addIncoming(Unscanned, Live.Entry);
    return P;
  };
  llvm::PHINode *XBegin = result(SB.getInt32(0), "x.begin"), *XEnd = result(NX, "x.end");
  llvm::PHINode *IdleMin = result(SB.getInt32(~0u), "idle.min"), *IdleMax = result(SB.getInt32(0), "idle.max");
  // Unscanned (blocks of more dimensions): a range no resume loop takes.
  llvm::PHINode *ResMin = result(SB.getInt32(0), "resumable.min"), *ResMax = result(SB.getInt32(~0u), "resumable.max");
  Live.Begin = XBegin, Live.End = XEnd, Live.IdleMin = IdleMin, Live.IdleMax = IdleMax;
  Live.ResumableMin = ResMin, Live.ResumableMax = ResMax;
  SB.SetInsertPoint(Body);
  auto phi = [&](llvm::Value *Init, const char *Name) {
    llvm::PHINode *P = SB.CreatePHI(I32, 2, Name);
    P->addIncoming(Init, Live.Entry);
    return P;
  };
  llvm::PHINode *T = phi(SB.getInt32(0), "t"), *Lo = phi(NX, "run.lo"), *Hi = phi(SB.getInt32(0), "run.hi");
  llvm::PHINode *IMin = phi(SB.getInt32(~0u), "scan.min"), *IMax = phi(SB.getInt32(0), "scan.max");
  llvm::PHINode *RMin = phi(SB.getInt32(~0u), "scan.resumable.min"), *RMax = phi(SB.getInt32(0), "scan.resumable.max");
  llvm::Value *S = SB.CreateLoad(I32, SB.CreateGEP(I32, States, SB.CreateZExt(T, SB.getInt64Ty())));
  // What the loop's switch enters: regions 1 .. Regions.size() - 1 (0: exited; RegionBlocked: held back).
  llvm::Value *Run =
      SB.CreateICmpULT(SB.CreateSub(S, SB.getInt32(1)), SB.getInt32(static_cast<uint32_t>(Regions.size() - 1)));
  llvm::Value *NextT = SB.CreateAdd(T, SB.getInt32(1));
  auto fold = [&](llvm::PHINode *P, llvm::Intrinsic::ID Op, llvm::Value *If, llvm::Value *IfSo, llvm::Value *Else) {
    llvm::Value *V = SB.CreateBinaryIntrinsic(Op, P, SB.CreateSelect(If, IfSo, Else));
    P->addIncoming(V, Body);
    return V;
  };
  llvm::Value *LoV = fold(Lo, llvm::Intrinsic::umin, Run, T, NX);
  llvm::Value *HiV = fold(Hi, llvm::Intrinsic::umax, Run, NextT, SB.getInt32(0));
  IdleMin->addIncoming(fold(IMin, llvm::Intrinsic::umin, Run, SB.getInt32(~0u), S), Body);
  IdleMax->addIncoming(fold(IMax, llvm::Intrinsic::umax, Run, SB.getInt32(0), S), Body);
  // Whether the thread stands in a resumable loop: a constant table by state (a runnable state is a region's
  // number; any other reads entry 0, which says no).
  llvm::Value *InResumable = SB.getFalse();
  if (!Resumable.empty()) {
    std::vector<uint8_t> Is(Regions.size(), 0);
    for (unsigned H : Resumable)
      Is[H] = 1;
    auto *Table = new llvm::GlobalVariable(ML.Mod, llvm::ArrayType::get(SB.getInt8Ty(), Is.size()), true,
                                           llvm::GlobalValue::PrivateLinkage,
                                           llvm::ConstantDataArray::get(ML.Ctx, Is), F->getName() + ".resumable");
    llvm::Value *Index = SB.CreateZExt(SB.CreateSelect(Run, S, SB.getInt32(0)), SB.getInt64Ty());
    InResumable = SB.CreateICmpNE(SB.CreateLoad(SB.getInt8Ty(), SB.CreateGEP(SB.getInt8Ty(), Table, Index)),
                                  SB.getInt8(0));
  }
  ResMin->addIncoming(fold(RMin, llvm::Intrinsic::umin, InResumable, S, SB.getInt32(~0u)), Body);
  ResMax->addIncoming(fold(RMax, llvm::Intrinsic::umax, InResumable, S, SB.getInt32(0)), Body);
  // An empty span (no thread to run) keeps the whole row.
  llvm::Value *Some = SB.CreateICmpULT(LoV, HiV);
  XBegin->addIncoming(SB.CreateSelect(Some, LoV, SB.getInt32(0)), Body);
  XEnd->addIncoming(SB.CreateSelect(Some, HiV, NX), Body);
  T->addIncoming(NextT, Body);
  SB.CreateCondBr(SB.CreateICmpULT(NextT, NX), Body, Live.Done);
  return Live;
}

RegionBuilder::LiveRange RegionBuilder::emitSpanLoad() {
  LiveRange Live;
  Live.Entry = Live.Done = llvm::BasicBlock::Create(ML.Ctx, "span", F);
  llvm::IRBuilder<> SB(Live.Entry);
  Live.Begin = SB.CreateLoad(SB.getInt32Ty(), Span, "span.begin");
  Live.End = SB.CreateLoad(SB.getInt32Ty(), SB.CreateConstInBoundsGEP1_32(SB.getInt32Ty(), Span, 1), "span.end");
  return Live;
}

void RegionBuilder::recordStops(const ThreadLoop &Loop, llvm::Value *StatePtr, const LiveRange &Live,
                                llvm::BasicBlock *Flush) {
  // The latch records where the thread stopped: 0 = exited, K = waiting to enter region K; a thread the loop
  // passes by keeps its state. The min/max accumulate in allocas private to the loop's piece, which become
  // registers: stored into the block function's states on every trip, they would be a value carried from
  // thread to thread through memory, which keeps WarpVectorize (and LLVM's loop vectorizer) off the loop.
  llvm::Type *I32 = B.getInt32Ty();
  auto own = [&](const char *Name) {
    auto *A = new llvm::AllocaInst(I32, 0, nullptr, llvm::Align(4), Name, Setup->getTerminator()->getIterator());
    PieceAllocas.push_back(A);
    return A;
  };
  llvm::AllocaInst *Min = own("loop.state.min"), *Max = own("loop.state.max");
  B.SetInsertPoint(Loop.Latch, Loop.Latch->begin());
  StoppedAt = B.CreatePHI(I32, 4, "stopped.at");
  B.CreateStore(StoppedAt, StatePtr);
  B.CreateStore(B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, B.CreateLoad(I32, Min), StoppedAt), Min);
  B.CreateStore(B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, B.CreateLoad(I32, Max), StoppedAt), Max);
  llvm::IRBuilder<> EB(Loop.Entry->getTerminator());
  EB.CreateStore(Live.IdleMin ? Live.IdleMin : EB.getInt32(~0u), Min);
  EB.CreateStore(Live.IdleMax ? Live.IdleMax : EB.getInt32(0), Max);
  llvm::IRBuilder<> FB(Flush);
  FB.CreateStore(FB.CreateLoad(I32, Min), MinState);
  FB.CreateStore(FB.CreateLoad(I32, Max), MaxState);
  FB.CreateBr(Dispatch);
}

std::vector<llvm::BasicBlock *>
RegionBuilder::cloneRegion(size_t K, const ThreadLoop &Loop, llvm::Value *T64, llvm::Instruction *InsertSlots,
                           llvm::function_ref<bool(unsigned)> Passes, llvm::ValueToValueMapTy &VMap,
                           std::vector<std::pair<llvm::BasicBlock *, unsigned>> &PassedCuts) {
  const Region &Reg = Regions[K];
  llvm::IRBuilder<> SB(Loop.Body);
  if (InsertSlots)
    SB.SetInsertPoint(InsertSlots);
  // Only the registers the region uses, so that the IR grows with the kernel, not with regions x registers: a
  // per-thread one is the thread's slot; any other (written before it is read, so private to this pass of the
  // region) gets an alloca of this copy's own, which makes each region loop self-contained (outlinePieces).
  for (llvm::AllocaInst *A : allocasUsedBy(Reg)) {
    if (llvm::Value *Arr = PerThread.lookup(A)) {
      VMap[A] = SB.CreateGEP(threadType(A), Arr, T64, A->getName() + ".mine");
    } else {
      auto *Own = new llvm::AllocaInst(A->getAllocatedType(), A->getAddressSpace(), A->getArraySize(), A->getAlign(),
                                       A->getName(), Setup->getTerminator()->getIterator());
      PieceAllocas.push_back(Own);
      VMap[A] = Own;
    }
  }
  std::vector<llvm::BasicBlock *> Copies = cloneBlocks(Reg.Blocks.getArrayRef(), VMap, ".r" + llvm::Twine(K), F);
  // Region exits: a barrier (the thread waits to enter the next region) or the thread's end.
  for (size_t J = 0; J < Copies.size(); ++J) {
    llvm::Instruction *Term = Reg.Blocks[J]->getTerminator();
    llvm::Instruction *CopyTerm = Copies[J]->getTerminator();
    unsigned Stop;
    if (auto It = BarrierExit.find(Term); It != BarrierExit.end())
      Stop = It->second;
    else if (llvm::isa<llvm::ReturnInst>(Term))
      Stop = 0;
    else
      continue;
    // The generic loop passes the loop cuts the builder made (they only serve the region loops' vectorization),
    // not lockstep points: a warp's stores before one must be seen by its loads after it, diverged or not.
    if (Passes(Stop)) {
      PassedCuts.push_back({Copies[J], Stop});
      continue;
    }
    llvm::BranchInst::Create(Loop.Latch, CopyTerm->getIterator());
    CopyTerm->eraseFromParent();
    StoppedAt->addIncoming(B.getInt32(Stop), Copies[J]);
  }
  return Copies;
}

void RegionBuilder::readUniformOnce(const Region &Reg, const ThreadLoop &Loop,
                                    llvm::ArrayRef<llvm::BasicBlock *> Copies, llvm::ValueToValueMapTy &VMap,
                                    llvm::ArrayRef<llvm::AllocaInst *> Uniform, bool Consecutive) {
  if (Uniform.empty())
    return;
  // Only the blocks every pass starts with: a later block may run after the thread's own write elsewhere.
  llvm::SmallPtrSet<const llvm::BasicBlock *, 16> InCopy(Copies.begin(), Copies.end());
  std::vector<llvm::BasicBlock *> FirstBlocks = straightEntry(
      llvm::cast<llvm::BasicBlock>(VMap[Reg.Entry]), [&](const llvm::BasicBlock *BB) { return InCopy.count(BB) != 0; });
  for (llvm::AllocaInst *A : Uniform) {
    llvm::Value *Mine = VMap[A];
    llvm::Value *Once = new llvm::LoadInst(A->getAllocatedType(), PerThread[A], A->getName() + ".uniform",
                                           Loop.Entry->getTerminator()->getIterator());
    bool Stored = false; // after the thread's own write a read is its own again
    for (llvm::BasicBlock *Copy : FirstBlocks) {
      for (llvm::Instruction &I : llvm::make_early_inc_range(*Copy)) {
        if (auto *S = llvm::dyn_cast<llvm::StoreInst>(&I); S && S->getPointerOperand() == Mine)
          Stored = true;
        if (auto *L = llvm::dyn_cast<llvm::LoadInst>(&I); L && L->getPointerOperand() == Mine && !Stored) {
          // emitSlotScan checked that first + T does not wrap.
          L->replaceAllUsesWith(Consecutive ? llvm::IRBuilder<>(L).CreateAdd(Once, Loop.Linear, "", false, true)
                                            : Once);
          L->eraseFromParent();
        }
      }
    }
  }
}

void RegionBuilder::useLoopIds(llvm::ArrayRef<llvm::BasicBlock *> Copies, const ThreadLoop &Loop) {
  // The region's own reads of the thread's ids use the loop's values; the context keeps them only when the
  // region calls something that may read them (printf orders its output by thread).
  bool MayReadIds = false;
  for (llvm::BasicBlock *Copy : Copies)
    for (llvm::Instruction &I : llvm::make_early_inc_range(*Copy)) {
      if (auto *CI = llvm::dyn_cast<llvm::CallInst>(&I))
        MayReadIds |= !llvm::isa<llvm::IntrinsicInst>(CI);
      auto *L = llvm::dyn_cast<llvm::LoadInst>(&I);
      auto *G = L ? llvm::dyn_cast<llvm::GetElementPtrInst>(L->getPointerOperand()) : nullptr;
      if (!G || G->getPointerOperand() != Ctx || G->getSourceElementType() != ML.ThreadCtxTy ||
          !G->hasAllConstantIndices())
        continue;
      unsigned Field = static_cast<unsigned>(llvm::cast<llvm::ConstantInt>(G->getOperand(2))->getZExtValue());
      unsigned Index = G->getNumIndices() > 2
                           ? static_cast<unsigned>(llvm::cast<llvm::ConstantInt>(G->getOperand(3))->getZExtValue())
                           : 0;
      if (auto It = Loop.Ids.find({Field, Index}); It != Loop.Ids.end() && It->second->getType() == L->getType()) {
        L->replaceAllUsesWith(It->second);
        L->eraseFromParent();
      }
    }
  if (!MayReadIds)
    for (llvm::StoreInst *S : Loop.IdStores)
      S->eraseFromParent();
}

llvm::BasicBlock *RegionBuilder::emitRegionLoop(int R, bool Generic, llvm::ArrayRef<llvm::AllocaInst *> Uniform,
                                                bool Consecutive) {
  // The generic loop covers the live threads a scan finds; the others the span of live threads (kernels with
  // collectives: threads outside it have exited for good) or the whole block.
  PieceAllocas.clear();
  std::vector<unsigned> Resumable = Generic && Resume != ResumeLoops::Omit ? resumableLoops() : std::vector<unsigned>{};
  LiveRange Live = Generic ? emitLiveScan(Resumable) : Span ? emitSpanLoad() : LiveRange{};
  llvm::BasicBlock *Loop = nullptr;
  if (!Generic) {
    Loop = emitThreadsLoop(Live, {static_cast<unsigned>(R)}, /*ByState=*/false, [](unsigned) { return false; },
                           ThreadLoopVectors::Any, Uniform, Consecutive);
  } else {
    // The generic loop runs threads whose states diverged: a thread there passes its loop cuts without stopping,
    // running its loops to the end as a scalar, instead of costing a dispatcher round per iteration.
    std::vector<unsigned> Every;
    for (size_t K = 1; K < Regions.size(); ++K)
      Every.push_back(static_cast<unsigned>(K));
    Loop = emitThreadsLoop(
        Live, Every, /*ByState=*/true, [&](unsigned Stop) { return passableCut(Stop); }, ThreadLoopVectors::None);
    emitResumeLoops(Live, Resumable, Loop);
  }
  if (Live.Done && !Live.Done->getTerminator())
    llvm::BranchInst::Create(Loop, Live.Done);
  llvm::BasicBlock *Entry = Live.Entry ? Live.Entry : Loop;
  std::string Name = Generic ? "generic" : "region" + std::to_string(R);
  if (!Uniform.empty())
    Name += Consecutive ? ".consecutive" : ".uniform";
  Pieces.push_back({Entry, std::move(PieceAllocas), std::move(Name)});
  PieceAllocas.clear();
  return Entry;
}

void RegionBuilder::emitResumeLoops(const LiveRange &Live, llvm::ArrayRef<unsigned> Resumable,
                                    llvm::BasicBlock *Generic) {
  // The generic loop's threads are often threads of one cut loop that others have left (a bisection's threads
  // count on for intervals not yet converged; the others wait at the barrier or at the loop's exit). There, a
  // loop over threads entering that region alone, with the loop's back edge passed, runs each such thread's loop
  // to its end at once, the warp vectorizer making the threads lanes that leave the loop under a mask; the
  // others keep their states, and the dispatcher, seeing them again, sends them on. The scalar generic loop
  // would run the loops one thread after another (eigenvalues: 93% of its time there). Left out
  // (ResumeLoops::Count), such a round is counted instead, and the generic loop runs it.
  if (Resumable.empty())
    return;
  llvm::IRBuilder<> DB(Live.Done);
  llvm::Value *One = DB.CreateSelect(DB.CreateICmpEQ(Live.ResumableMin, Live.ResumableMax), Live.ResumableMin,
                                     DB.getInt32(0));
  llvm::SwitchInst *Which = DB.CreateSwitch(One, Generic);
  llvm::BasicBlock *Count = nullptr;
  for (unsigned H : Resumable) {
    if (Resume == ResumeLoops::Emit) {
      Which->addCase(B.getInt32(H), emitThreadsLoop(Live, {H}, /*ByState=*/true,
                                                    [H](unsigned Stop) { return Stop == H; },
                                                    ThreadLoopVectors::WarpOnly));
      continue;
    }
    if (!Count) {
      Count = llvm::BasicBlock::Create(ML.Ctx, "resumable.round", F);
      llvm::IRBuilder<> CB(Count);
      CB.CreateCall(ML.Mod.getOrInsertFunction("ptxrt_resumable_round", CB.getVoidTy()));
      CB.CreateBr(Generic);
    }
    Which->addCase(B.getInt32(H), Count);
    ++CountedResumeLoops;
  }
}

bool RegionBuilder::cutsBackTo(unsigned K) const {
  for (llvm::BasicBlock *BB : Regions[K].Blocks)
    if (auto It = BarrierExit.find(BB->getTerminator()); It != BarrierExit.end() && It->second == K)
      return true;
  return false;
}

llvm::BasicBlock *RegionBuilder::emitThreadsLoop(const LiveRange &Live, llvm::ArrayRef<unsigned> Enter, bool ByState,
                                                 llvm::function_ref<bool(unsigned)> Passes, ThreadLoopVectors Vectors,
                                                 llvm::ArrayRef<llvm::AllocaInst *> Uniform, bool Consecutive) {
  llvm::BasicBlock *Flush = llvm::BasicBlock::Create(ML.Ctx, "stops.flush", F);
  ThreadLoop Loop = emitThreadLoop(ML, F, Ctx, NX, NY, NZ, Flush, Vectors, Live.Begin, Live.End);
  B.SetInsertPoint(Loop.Body);
  llvm::Value *T64 = B.CreateZExt(Loop.Linear, B.getInt64Ty());
  llvm::Value *StatePtr = B.CreateGEP(B.getInt32Ty(), States, T64);
  recordStops(Loop, StatePtr, Live, Flush);

  // One copy of each region this loop can enter, its registers redirected to this thread's slots. ByState: the
  // thread enters the region its state names, or the loop passes the idle thread by.
  B.SetInsertPoint(Loop.Body);
  llvm::SwitchInst *Which = nullptr;
  if (ByState) {
    llvm::Value *State = B.CreateLoad(B.getInt32Ty(), StatePtr);
    llvm::BasicBlock *Skip = llvm::BasicBlock::Create(ML.Ctx, "thread.idle", F);
    Which = B.CreateSwitch(State, Skip, static_cast<unsigned>(Enter.size()));
    B.SetInsertPoint(Skip);
    StoppedAt->addIncoming(State, Skip);
    B.CreateBr(Loop.Latch);
  }
  std::vector<llvm::BasicBlock *> AllCopies;
  std::vector<std::pair<llvm::BasicBlock *, unsigned>> PassedCuts;
  std::map<unsigned, llvm::BasicBlock *> Starts;
  B.SetInsertPoint(Loop.Body, Loop.Body->end());
  for (unsigned K : Enter) {
    llvm::ValueToValueMapTy VMap;
    std::vector<llvm::BasicBlock *> Copies = cloneRegion(K, Loop, T64, Which, Passes, VMap, PassedCuts);
    AllCopies.insert(AllCopies.end(), Copies.begin(), Copies.end());
    readUniformOnce(Regions[K], Loop, Copies, VMap, Uniform, Consecutive);
    llvm::BasicBlock *Start = llvm::cast<llvm::BasicBlock>(VMap[Regions[K].Entry]);
    Starts[K] = Start;
    if (Which)
      Which->addCase(B.getInt32(K), Start);
    else
      llvm::BranchInst::Create(Start, Loop.Body);
  }
  for (auto &[Copy, Stop] : PassedCuts) {
    Copy->getTerminator()->eraseFromParent();
    llvm::BranchInst::Create(Starts[Stop], Copy);
  }
  useLoopIds(AllCopies, Loop);
  markThreadSlots(T64);
  return Loop.Entry;
}

void RegionBuilder::markThreadSlots(llvm::Value *T64) {
  // Every address indexed by the thread (its state, its register slots) is the thread's own: its plain loads
  // and stores join the threads' access group, so they keep no region loop from being a parallel loop.
  for (llvm::User *U : T64->users())
    if (auto *G = llvm::dyn_cast<llvm::GetElementPtrInst>(U); G && G->getNumIndices() == 1)
      for (llvm::User *A : G->users()) {
        auto *I = llvm::dyn_cast<llvm::Instruction>(A);
        if (I && llvm::getLoadStorePointerOperand(I) == G && !I->isAtomic() && !I->isVolatile())
          passes::markThreadParallel(I);
      }
}

llvm::Value *RegionBuilder::emitRegionNext(llvm::Value *N) {
  // It marks the threads it holds back (RegionBlocked) in the states and keeps no pointer.
  llvm::FunctionCallee Next = ML.Mod.getOrInsertFunction("ptxrt_region_next_loops", B.getInt32Ty(), B.getPtrTy(),
                                                         B.getPtrTy(), B.getInt32Ty(), B.getPtrTy());
  if (auto *Fn = llvm::dyn_cast<llvm::Function>(Next.getCallee())) {
    Fn->setOnlyAccessesArgMemory();
    Fn->setDoesNotThrow();
    for (unsigned A : {0u, 1u, 3u})
      Fn->addParamAttr(A, llvm::Attribute::getWithCaptureInfo(ML.Ctx, llvm::CaptureInfo::none()));
  }
  return B.CreateCall(Next, {Ctx, States, N, emitCutTable(ML.Mod, *F, Cuts)});
}

void RegionBuilder::emitVersionedLoops(std::vector<llvm::BasicBlock *> &Fast) {
  // A loop region whose counters may be the same in every thread: a scan picks the version that reads them once.
  llvm::DenseMap<llvm::AllocaInst *, bool> FromThreadId; // dependsOnThreadId's answers so far
  for (size_t R = 1; R < Regions.size(); ++R) {
    // Loop cuts, and barriers: a barrier in a loop leaves the loop's counters (a scan's offset, a sort's stage)
    // the same in every thread as well. Lockstep points and collectives are entered by parts of the block.
    if (!(Cuts[R].Kind == RCLoop && Cuts[R].Arg == LCBuilder) && Cuts[R].Kind != RCBarrier)
      continue;
    std::vector<llvm::AllocaInst *> Uniform = uniformCandidates(
        Regions[R].Blocks.getArrayRef(),
        [&](const llvm::Instruction *Term) { return BarrierExit.count(const_cast<llvm::Instruction *>(Term)) != 0; },
        PerThread);
    if (Uniform.empty())
      continue;
    // Which version can pay off is told by where a register's values come from: a counter that starts from
    // constants is the same in every thread (nbody's j), one computed from the thread's id differs (reduce's
    // grid-stride i), and might count up with it. Only the likely version is made: each copies the region.
    std::vector<llvm::AllocaInst *> Same, Indices;
    for (llvm::AllocaInst *A : Uniform) {
      if (!dependsOnThreadId(A, Ctx, FromThreadId))
        Same.push_back(A);
      else if (A->getAllocatedType()->isIntegerTy(32))
        Indices.push_back(A);
    }
    auto slots = [&](llvm::ArrayRef<llvm::AllocaInst *> As) {
      std::vector<std::pair<llvm::Type *, llvm::Value *>> Slots;
      for (llvm::AllocaInst *A : As)
        Slots.push_back({A->getAllocatedType(), PerThread[A]});
      return Slots;
    };
    llvm::BasicBlock *Otherwise = Fast[R];
    // 32-bit registers that count up with the thread (first + T): a version reads them so, and the accesses
    // through them are consecutive instead of gathers.
    if (!Indices.empty()) {
      llvm::BasicBlock *Linear = emitRegionLoop(static_cast<int>(R), false, Indices, true);
      llvm::BasicBlock *LinearCheck = llvm::BasicBlock::Create(ML.Ctx, "consecutive.check", F);
      llvm::IRBuilder<> CB(LinearCheck);
      CB.CreateCondBr(
          emitSlotScan(CB, slots(Indices), CB.CreateMul(CB.CreateMul(NX, NY), NZ), SlotPattern::FirstPlusThread),
          Linear, Otherwise);
      Otherwise = LinearCheck;
      Pieces.push_back({LinearCheck, {}, "region" + std::to_string(R) + ".consecutive.check"});
    }
    if (!Same.empty()) {
      llvm::BasicBlock *Once = emitRegionLoop(static_cast<int>(R), false, Same);
      llvm::BasicBlock *Check = llvm::BasicBlock::Create(ML.Ctx, "uniform.check", F);
      llvm::IRBuilder<> UB(Check);
      UB.CreateCondBr(emitSlotScan(UB, slots(Same), UB.CreateMul(UB.CreateMul(NX, NY), NZ), SlotPattern::Same), Once,
                      Otherwise);
      Otherwise = Check;
      Pieces.push_back({Check, {}, "region" + std::to_string(R) + ".uniform.check"});
    }
    Fast[R] = Otherwise;
  }
}

void RegionBuilder::emitDispatch(llvm::ArrayRef<llvm::BasicBlock *> Fast, llvm::BasicBlock *Generic,
                                 llvm::BasicBlock *Done) {
  B.SetInsertPoint(Dispatch);
  B.CreateStore(B.CreateLoad(B.getInt32Ty(), MisalignedSeen), B.CreateStructGEP(ML.ThreadCtxTy, Ctx, TCMisalignedBits));
  endDeferredChecks(B, ML, Ctx);
  // Every thread stopped at one barrier or loop cut, or all exited: the loops' min/max of the states say so, and
  // that region's loop follows without a runtime round (after a pass of a cut loop this is the common case).
  llvm::Type *I32 = B.getInt32Ty();
  llvm::Value *First = B.CreateLoad(I32, MinState);
  llvm::Value *Same = B.CreateICmpEQ(First, B.CreateLoad(I32, MaxState));
  std::vector<llvm::BasicBlock *> Enter = pollingSpinCuts(Fast);
  llvm::BasicBlock *Known = DispatchSame = llvm::BasicBlock::Create(ML.Ctx, "dispatch.same", F);
  llvm::BasicBlock *Ask = DispatchRuntime = llvm::BasicBlock::Create(ML.Ctx, "dispatch.runtime", F);
  B.CreateCondBr(Same, Known, Ask);
  B.SetInsertPoint(Known);
  llvm::Value *Rows = HasCollectives ? B.CreateMul(NY, NZ) : nullptr;
  llvm::SwitchInst *AtOne = B.CreateSwitch(First, Ask);
  // Covering part of the live threads, the others waiting at the barrier: the covered threads' collectives and
  // loop cuts go on among them, but their barrier (or end) is the runtime's to release.
  auto unlessWaiting = [&](llvm::BasicBlock *Target) {
    if (!Span)
      return Target;
    llvm::BasicBlock *Check = llvm::BasicBlock::Create(ML.Ctx, "dispatch.waiting", F);
    llvm::IRBuilder<> CB(Check);
    auto word = [&](unsigned K) { return CB.CreateLoad(I32, CB.CreateConstInBoundsGEP1_32(I32, Span, K)); };
    llvm::Value *Whole = CB.CreateAnd(CB.CreateICmpEQ(word(0), word(2)), CB.CreateICmpEQ(word(1), word(3)));
    CB.CreateCondBr(Whole, Target, Ask);
    return Check;
  };
  AtOne->addCase(B.getInt32(0), unlessWaiting(Done));
  for (size_t R = 1; R < Regions.size(); ++R) {
    llvm::BasicBlock *Next = nullptr;
    if (Cuts[R].Kind == RCLoop)
      Next = Enter[R];
    else if (Cuts[R].Kind == RCBarrier)
      Next = unlessWaiting(Fast[R]);
    else if (HasCollectives) { // warps whose lanes all wait at one shuffle need no runtime round
      Next = Warp->emitWarpRelease(Cuts[R], Span, Rows, PerThread, Fast[R], Ask);
      if (Next)
        Pieces.push_back({Next, {}, "warp" + std::to_string(R)});
    }
    if (Next)
      AtOne->addCase(B.getInt32(static_cast<uint32_t>(R)), Next);
  }
  B.SetInsertPoint(Ask);
  // Otherwise: with only barriers, the generic loop runs each thread where it stopped; with collectives or loop
  // cuts the runtime says who goes on.
  if (!HasCollectives && !HasLoopCuts) {
    B.CreateBr(Generic);
  } else {
    llvm::Value *N = B.CreateMul(B.CreateMul(NX, NY), NZ);
    llvm::Value *Next =
        HasCollectives ? Warp->emitRelease(B, Ctx, States, N, Span, Cuts, PerThread) : emitRegionNext(N);
    llvm::SwitchInst *SW = B.CreateSwitch(Next, Generic, static_cast<unsigned>(Regions.size()));
    SW->addCase(B.getInt32(0), Done);
    for (size_t R = 1; R < Regions.size(); ++R)
      SW->addCase(B.getInt32(static_cast<uint32_t>(R)), Enter[R]);
  }
}

std::vector<llvm::BasicBlock *> RegionBuilder::pollingSpinCuts(llvm::ArrayRef<llvm::BasicBlock *> Fast) {
  // A spin point's loop may wait for another block, which may have failed: nothing in the region loops calls the
  // runtime, so the dispatcher does on each pass, through the spin point's helper (it ends the block once the
  // launch failed, exec/LaunchStop.h). Spin regions hold the spin loop's polling accesses, and the call is one
  // per pass over the threads.
  std::vector<llvm::BasicBlock *> Enter(Fast.begin(), Fast.end());
  llvm::FunctionCallee Poll =
      ML.Mod.getOrInsertFunction("ptxrt_spin_point", B.getVoidTy(), B.getPtrTy(), B.getInt32Ty());
  for (size_t R = 1; R < Regions.size(); ++R) {
    if (Cuts[R].Kind != RCLoop || Cuts[R].Arg != LCSpin)
      continue;
    Enter[R] = llvm::BasicBlock::Create(ML.Ctx, "spin.poll", F);
    llvm::IRBuilder<> PB(Enter[R]);
    PB.CreateCall(Poll, {Ctx, PB.getInt32(0)});
    PB.CreateBr(Fast[R]);
  }
  return Enter;
}

llvm::Error RegionBuilder::build() {
  // The template context becomes a private copy whose thread ids the loops set.
  llvm::Argument *Tmpl = F->getArg(0);
  if (llvm::Error E = splitAtCuts())
    return E;
  collectRegions();
  // The misaligned-address accumulator is flushed into the context at every barrier and collective (see
  // foldDeferredChecks), so each region after one starts it afresh instead of keeping it per thread.
  if (llvm::AllocaInst *A = misalignedAccumulatorOf(*F))
    for (size_t R = 1; R < Regions.size(); ++R)
      if (Cuts[R].Kind != RCLoop)
        llvm::IRBuilder<>(Regions[R].Entry, Regions[R].Entry->getFirstInsertionPt())
            .CreateStore(llvm::ConstantInt::get(A->getAllocatedType(), 0), A);
  B.SetInsertPoint(Setup->getTerminator());
  llvm::AllocaInst *CtxAlloca = B.CreateAlloca(ML.ThreadCtxTy, nullptr, "ctx");
  Ctx = CtxAlloca;
  Tmpl->replaceAllUsesWith(Ctx);
  uint64_t Size = ML.Mod.getDataLayout().getTypeAllocSize(ML.ThreadCtxTy);
  B.CreateMemCpy(Ctx, llvm::MaybeAlign(8), Tmpl, llvm::MaybeAlign(8), Size);
  privatizeMisalignedBits();
  beginDeferredChecks(B, ML, Ctx);
  auto ntid = [&](unsigned D) {
    return detail::withLaunchRange(
        B.CreateLoad(B.getInt32Ty(),
                     B.CreateInBoundsGEP(ML.ThreadCtxTy, Ctx, {B.getInt32(0), B.getInt32(TCNtid), B.getInt32(D)})),
        TCNtid, D);
  };
  NX = ntid(0), NY = ntid(1), NZ = ntid(2);
  rematerializeRegisters();
  hoistBlockConstants();
  findThreadPrivateAllocas();

  // After each loop: where do the threads stand? 0: all exited; K: all alive and released into region K (the
  // fast loop); ~0: anything else (the generic loop).
  {
    llvm::IRBuilder<> IB(&*Setup->getFirstInsertionPt());
    MinState = IB.CreateAlloca(IB.getInt32Ty(), nullptr, "state.min");
    MaxState = IB.CreateAlloca(IB.getInt32Ty(), nullptr, "state.max");
  }
  if (HasCollectives) {
    llvm::IRBuilder<> IB(Setup->getTerminator());
    Span = IB.CreateAlloca(IB.getInt32Ty(), IB.getInt32(4), "live.span");
    for (unsigned K = 0; K < 4; ++K)
      IB.CreateStore(K % 2 ? NX : IB.getInt32(0), K ? IB.CreateConstInBoundsGEP1_32(IB.getInt32Ty(), Span, K) : Span);
  }
  Dispatch = llvm::BasicBlock::Create(ML.Ctx, "dispatch", F);
  llvm::BasicBlock *Done = llvm::BasicBlock::Create(ML.Ctx, "done", F);
  std::vector<llvm::BasicBlock *> Fast;
  for (size_t R = 0; R < Regions.size(); ++R)
    Fast.push_back(emitRegionLoop(static_cast<int>(R), false));
  llvm::BasicBlock *Generic = emitRegionLoop(-1, true);
  emitVersionedLoops(Fast);
  emitDispatch(Fast, Generic, Done);
  B.SetInsertPoint(Done);
  B.CreateRetVoid();
  // Every thread starts in region 0; the original blocks are now unreachable.
  Setup->getTerminator()->eraseFromParent();
  llvm::BranchInst::Create(Fast[0], Setup);
  llvm::EliminateUnreachableBlocks(*F);
  markInternalAccesses();
  outlinePieces(Done);
  return llvm::Error::success();
}

} // namespace

llvm::Expected<unsigned> ptxforge::codegen::detail::buildRegions(ModuleLowering &ML, llvm::Function &F,
                                                                ResumeLoops Resume) {
  RegionBuilder Builder(ML, &F, Resume);
  if (llvm::Error E = Builder.build())
    return E;
  return Builder.countedResumeLoops();
}

namespace {

/// `.volatile` accesses of the block's own shared memory are monotonic atomics in the thread function, which keep
/// LLVM from merging or hoisting them (spin loops, warp-synchronous code on fibers) but also keep every region
/// loop that touches them scalar. In the block function they order nothing LLVM could break: the window is the
/// block's alone (markBlockVolatile), a kernel whose loops wait on memory runs on fibers (ProgressPoints.h), and a
/// warp's lanes see each other's stores where the lanes of a GPU warp would, at the lockstep points the region
/// loops stop at (a step's loads before its stores, as a vector runs them). So they become plain thread-parallel
/// accesses (cuda-samples' scan: `volatile uint *s_Data` between barriers).
void relaxBlockVolatiles(llvm::Function &F) {
  for (llvm::Instruction &I : llvm::instructions(F)) {
    if (!isBlockVolatile(I))
      continue;
    if (auto *L = llvm::dyn_cast<llvm::LoadInst>(&I); L && L->getOrdering() == llvm::AtomicOrdering::Monotonic)
      L->setAtomic(llvm::AtomicOrdering::NotAtomic);
    else if (auto *S = llvm::dyn_cast<llvm::StoreInst>(&I); S && S->getOrdering() == llvm::AtomicOrdering::Monotonic)
      S->setAtomic(llvm::AtomicOrdering::NotAtomic);
    else
      continue;
    passes::markThreadParallel(&I);
  }
}

} // namespace

llvm::Expected<ptxforge::codegen::detail::RegionSplit>
ptxforge::codegen::detail::emitRegionBlockFunction(ModuleLowering &ML, llvm::Function *Thread, ResumeLoops Resume) {
  llvm::ValueToValueMapTy VMap;
  llvm::Function *F = llvm::CloneFunction(Thread, VMap);
  F->setName("__ptx_block_" + Thread->getName().drop_front(strlen("__ptx_kernel_")));
  F->removeFnAttr(llvm::Attribute::AlwaysInline);
  // Misaligned accesses fault where a thread's memory effects become observable; the end of each region's loop
  // is that point here, so the deferrable checks become ORs into the context, no branch in the loop bodies.
  foldDeferredChecks(ML, F);
  relaxBlockVolatiles(*F);
  // The passes, in order, each reading what the one before marked (Markers.h).
  llvm::Error E = cutAtRendezvous(*F, ML.ThreadCtxTy).takeError();
  if (!E && ML.LoopCuts)
    E = cutLoops(*F, ML.RegionCutBudget).takeError();
  unsigned Counted = 0;
  if (!E) {
    llvm::Expected<unsigned> Built = buildRegions(ML, *F, Resume);
    if (Built)
      Counted = *Built;
    else
      E = Built.takeError();
  }
  std::string Invalid;
  llvm::raw_string_ostream OS(Invalid);
  if (!E && llvm::verifyFunction(*F, &OS))
    E = llvm::createStringError(std::errc::invalid_argument, "region builder made invalid IR for %s: %s",
                                Thread->getName().str().c_str(), Invalid.substr(0, 1000).c_str());
  if (E) {
    F->eraseFromParent();
    return E;
  }
  return RegionSplit{F, Counted};
}
