// See Passes.h: a gather or scatter whose lanes turn out to address consecutive elements runs as a vector load or
// store instead.
//
// Before:
//   %v = call <4 x float> @llvm.masked.gather(<4 x ptr> %p, <4 x i1> %m, ...)
// After:
//   %first = extractelement <4 x ptr> %p, i64 0
//   br (every lane on in %m points at %first + lane * 4, and lane 0 is on), %vector, %gather
//   vector: %a = call @llvm.masked.load(ptr %first, <4 x i1> %m, ...)
//   gather: %b = call @llvm.masked.gather(<4 x ptr> %p, <4 x i1> %m, ...)
//   %v = phi [ %a, %vector ], [ %b, %gather ]
//
// Each thread copying a vector (ld.v4/st.v4, cp.async of 16 bytes: a tile row loaded a float4 per thread) makes
// G gathers or scatters through one vector of pointers p, at p + 0, p + 4, ..., each lane G elements past its
// neighbour: an interleaved group, which the per-access test never finds contiguous. Such a group is tested once,
// for lane I at p[0] + I * G elements, and then runs as one masked access of G times the lanes (each lane's mask
// bit repeated G times) with shuffles between the lanes' vectors and memory's order. A scatter group that stores
// a gather group's values unchanged (a structure copied) stores the wide load's vector itself (copiedGroup).
#include "Passes.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Operator.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

#include <optional>

using namespace llvm;

namespace {

/// Gathers and scatters of at least this many lanes are worth the test (below it a gather is a few loads).
constexpr unsigned MinLanes = 4;

/// A gather or scatter this pass rewrites: masked.gather(ptrs, mask, passthru) or masked.scatter(value, ptrs,
/// mask), N lanes of Size-byte elements; the alignment is each element's.
struct Access {
  IntrinsicInst *II;
  bool Gather;
  Value *Ptrs, *Mask;
  Align A;
  unsigned N;
  uint64_t Size;
};

std::optional<Access> accessOf(Instruction &I, const DataLayout &DL) {
  auto *II = dyn_cast<IntrinsicInst>(&I);
  if (!II || (II->getIntrinsicID() != Intrinsic::masked_gather && II->getIntrinsicID() != Intrinsic::masked_scatter))
    return std::nullopt;
  bool Gather = II->getIntrinsicID() == Intrinsic::masked_gather;
  unsigned PtrsArg = Gather ? 0 : 1;
  auto *PtrsTy = dyn_cast<FixedVectorType>(II->getArgOperand(PtrsArg)->getType());
  Type *Elt = (Gather ? II->getType() : II->getArgOperand(0)->getType())->getScalarType();
  // Elements of whole bytes only: a vector of i1 packs bits, where the gather reads a byte per lane.
  if (!PtrsTy || PtrsTy->getNumElements() < MinLanes || DL.getTypeSizeInBits(Elt) % 8 ||
      DL.getTypeStoreSize(Elt) != DL.getTypeAllocSize(Elt))
    return std::nullopt;
  return Access{II,
                Gather,
                II->getArgOperand(PtrsArg),
                II->getArgOperand(Gather ? 1 : 2),
                II->getParamAlign(PtrsArg).valueOrOne(),
                PtrsTy->getNumElements(),
                DL.getTypeAllocSize(Elt)};
}

/// G accesses of one kind through one pointer vector Base at Offset + K * Size (K = 0 .. G-1, Members[K]), with
/// one mask, one element type, in one block with no other memory access between them.
struct Group {
  SmallVector<Access, 8> Members; ///< by K
  Value *Base;
  int64_t Offset;
};

/// Ptrs as Base + a constant byte offset (a GEP of constant indices off a vector of pointers, or Ptrs itself).
std::pair<Value *, int64_t> splitOffset(Value *Ptrs, const DataLayout &DL) {
  if (auto *G = dyn_cast<GEPOperator>(Ptrs)) {
    APInt Off(DL.getIndexTypeSizeInBits(G->getType()), 0);
    if (G->getPointerOperand()->getType()->isVectorTy() && G->accumulateConstantOffset(DL, Off) &&
        Off.getSignificantBits() <= 32)
      return {G->getPointerOperand(), Off.getSExtValue()};
  }
  return {Ptrs, 0};
}

/// Whether I, between a group's first and last member, keeps the group from running as one access there.
bool blocksGroup(const Instruction &I, bool Gather) {
  return Gather ? I.mayWriteToMemory() : I.mayReadOrWriteMemory();
}

/// The interleaved groups of F (2, 4 or 8 members): consecutive runs, within a block, of accesses through
/// one base at offsets Size apart.
std::vector<Group> findGroups(Function &F, const DataLayout &DL) {
  std::vector<Group> Groups;
  for (BasicBlock &BB : F) {
    std::optional<Group> Cur;
    auto close = [&] {
      unsigned G = Cur ? Cur->Members.size() : 0;
      if (G == 2 || G == 4 || G == 8)
        Groups.push_back(std::move(*Cur));
      Cur.reset();
    };
    for (Instruction &I : BB) {
      std::optional<Access> Op = accessOf(I, DL);
      if (!Op) {
        if (Cur && blocksGroup(I, Cur->Members[0].Gather))
          close();
        continue;
      }
      auto [Base, Off] = splitOffset(Op->Ptrs, DL);
      bool Extends = Cur && (!Op->Gather || isa<Constant>(Op->II->getArgOperand(2))) &&
                     Op->Gather == Cur->Members[0].Gather && Op->Mask == Cur->Members[0].Mask &&
                     Base == Cur->Base && Op->II->getType() == Cur->Members[0].II->getType() &&
                     (Op->Gather || Op->II->getArgOperand(0)->getType() ==
                                        Cur->Members[0].II->getArgOperand(0)->getType()) &&
                     Off == Cur->Offset + int64_t(Cur->Members.size() * Op->Size);
      if (!Extends) {
        close();
        if (!Op->Gather || isa<Constant>(Op->II->getArgOperand(2)))
          Cur = Group{{*Op}, Base, Off};
      } else {
        Cur->Members.push_back(*Op);
      }
    }
    close();
  }
  return Groups;
}

/// A gather group rewritten: its members' results (phis of the wide load's lanes and the fallback's gathers),
/// the wide load and the blocks around it. A scatter group that stores exactly these results under the same mask
/// (a structure copied: cp.async, ld.v4 then st.v4) stores the wide load's vector as it is, not de-interleaved
/// into the members and interleaved back (eight lane shuffles per 16-byte copy, most of a pipelined tile copy's
/// time in cuda-samples' globalToShmemAsyncCopy).
struct LoadedGroup {
  SmallVector<PHINode *, 8> Results;
  Value *Mask;
  Instruction *Wide;
  SmallVector<Instruction *, 8> Slow;
  PHINode *Whole = nullptr; ///< the group's elements in memory's order on either path, made when first asked for
};

/// Lane I's G values together, from the members' vectors of N lanes each (G a power of two).
Value *interleaveLanes(IRBuilder<> &B, ArrayRef<Value *> Members, unsigned N) {
  unsigned G = Members.size();
  SmallVector<Value *, 8> Parts(Members.begin(), Members.end());
  for (unsigned Len = N; Parts.size() > 1; Len *= 2) {
    SmallVector<Value *, 8> Joined;
    SmallVector<int, 64> Both;
    for (unsigned I = 0; I < 2 * Len; ++I)
      Both.push_back(static_cast<int>(I));
    for (size_t J = 0; J < Parts.size(); J += 2)
      Joined.push_back(B.CreateShuffleVector(Parts[J], Parts[J + 1], Both));
    Parts = std::move(Joined);
  }
  SmallVector<int, 64> Gathered(N * G);
  for (unsigned I = 0; I < N; ++I)
    for (unsigned K = 0; K < G; ++K)
      Gathered[I * G + K] = static_cast<int>(K * N + I);
  return B.CreateShuffleVector(Parts[0], Gathered);
}

/// The interleaved vector a scatter group of Values under Mask would store, where Values are a loaded group's
/// results in order under the same mask: the wide load itself on its path, the fallback's gathers interleaved on
/// the other.
Value *copiedGroup(ArrayRef<Value *> Values, Value *Mask, std::vector<LoadedGroup> &Loaded, unsigned N) {
  for (LoadedGroup &LG : Loaded) {
    if (LG.Mask != Mask || LG.Results.size() != Values.size())
      continue;
    bool Same = true;
    for (size_t K = 0; K < Values.size(); ++K)
      Same &= Values[K] == LG.Results[K];
    if (!Same)
      continue;
    if (!LG.Whole) {
      BasicBlock *Join = LG.Results[0]->getParent(), *SlowEnd = LG.Slow.back()->getParent();
      IRBuilder<> B(SlowEnd->getTerminator());
      Value *FromSlow = interleaveLanes(B, SmallVector<Value *, 8>(LG.Slow.begin(), LG.Slow.end()), N);
      B.SetInsertPoint(Join, Join->getFirstNonPHIIt());
      LG.Whole = B.CreatePHI(LG.Wide->getType(), 2, "group");
      LG.Whole->addIncoming(LG.Wide, LG.Wide->getParent());
      LG.Whole->addIncoming(FromSlow, SlowEnd);
    }
    return LG.Whole;
  }
  return nullptr;
}

/// Rewrites a group behind the test that lane I's base is lane 0's plus I * G elements (the lanes that are on;
/// lane 0 must be). Returns the gathers and scatters of its fallback path, which need no test of their own.
SmallVector<Instruction *, 8> rewriteGroup(Group &Gr, const DataLayout &DL, MDNode *Likely,
                                           std::vector<LoadedGroup> &Loaded) {
  Access &Lead = Gr.Members[0];
  unsigned G = Gr.Members.size(), N = Lead.N;
  uint64_t Size = Lead.Size;
  bool Gather = Lead.Gather;
  // Gathers run as one at the first member (nothing between writes memory), scatters at the last (nothing
  // between touches memory, and every member's value is defined by then).
  Instruction *At = Gather ? Lead.II : Gr.Members.back().II;
  IRBuilder<> B(At);
  Type *IntPtr = DL.getIntPtrType(Gr.Base->getType()->getScalarType());
  Value *First = B.CreateExtractElement(Gr.Base, uint64_t(0));
  SmallVector<Constant *, 16> Offsets;
  for (unsigned I = 0; I < N; ++I)
    Offsets.push_back(ConstantInt::get(IntPtr, I * G * Size));
  Value *Expected = B.CreateAdd(B.CreateVectorSplat(N, B.CreatePtrToInt(First, IntPtr)), ConstantVector::get(Offsets));
  Value *Same = B.CreateFreeze(B.CreateICmpEQ(B.CreatePtrToInt(Gr.Base, Expected->getType()), Expected));
  Value *Mask = Lead.Mask;
  Value *Interleaved = B.CreateAnd(B.CreateAndReduce(B.CreateOr(Same, B.CreateNot(Mask))),
                                   B.CreateExtractElement(Mask, uint64_t(0)));
  Instruction *Then = nullptr, *Else = nullptr;
  SplitBlockAndInsertIfThenElse(Interleaved, At, &Then, &Else, Likely);
  // The wide access: lane I's G elements at First + Offset + I * G * Size, each under lane I's mask bit.
  B.SetInsertPoint(Then);
  Value *Start = B.CreateGEP(B.getInt8Ty(), First, B.getInt64(Gr.Offset));
  SmallVector<int, 64> Repeat;
  for (unsigned I = 0; I < N * G; ++I)
    Repeat.push_back(static_cast<int>(I / G));
  Value *WideMask = B.CreateShuffleVector(Mask, Repeat);
  Align A = Lead.A;
  for (Access &M : Gr.Members)
    A = std::min(A, M.A);
  SmallVector<Value *, 8> Fast(G);
  Instruction *WideLoad = nullptr;
  if (Gather) {
    auto *VecTy = cast<FixedVectorType>(Lead.II->getType());
    auto *WideTy = FixedVectorType::get(VecTy->getElementType(), N * G);
    CallInst *Wide = B.CreateMaskedLoad(WideTy, Start, A, WideMask);
    Wide->copyMetadata(*Lead.II);
    WideLoad = Wide;
    for (unsigned K = 0; K < G; ++K) {
      SmallVector<int, 16> Lanes;
      for (unsigned I = 0; I < N; ++I)
        Lanes.push_back(static_cast<int>(I * G + K));
      // Off lanes take the gather's pass-through, as the gather would give them.
      Fast[K] = B.CreateSelect(Mask, B.CreateShuffleVector(Wide, Lanes), Gr.Members[K].II->getArgOperand(2));
    }
  } else {
    SmallVector<Value *, 8> Values;
    for (Access &M : Gr.Members)
      Values.push_back(M.II->getArgOperand(0));
    Value *Whole = copiedGroup(Values, Mask, Loaded, N);
    if (!Whole)
      Whole = interleaveLanes(B, Values, N);
    Instruction *Wide = B.CreateMaskedStore(Whole, Start, A, WideMask);
    Wide->copyMetadata(*Lead.II);
  }
  // The fallback: the members as they were, in order. Scatters move there (their operands are defined before
  // the last); the later gathers' pointers may be defined after the first, so the gathers are made anew there.
  SmallVector<Instruction *, 8> Slow;
  if (!Gather) {
    for (Access &M : Gr.Members) {
      M.II->moveBefore(Else->getIterator());
      Slow.push_back(M.II);
    }
    return Slow;
  }
  B.SetInsertPoint(Else);
  LoadedGroup LG{{}, Mask, WideLoad, {}, nullptr};
  for (unsigned K = 0; K < G; ++K) {
    IntrinsicInst *II = Gr.Members[K].II;
    Value *Ptrs = B.CreateGEP(B.getInt8Ty(), Gr.Base, B.getInt64(Gr.Offset + int64_t(K * Size)));
    CallInst *Copy = B.CreateMaskedGather(II->getType(), Ptrs, Gr.Members[K].A, Mask, II->getArgOperand(2));
    Copy->copyMetadata(*II);
    Slow.push_back(Copy);
    B.SetInsertPoint(Then->getParent()->getSingleSuccessor()->getFirstNonPHIIt());
    PHINode *Result = B.CreatePHI(II->getType(), 2);
    II->replaceAllUsesWith(Result);
    Result->addIncoming(Fast[K], Then->getParent());
    Result->addIncoming(Copy, Else->getParent());
    II->eraseFromParent();
    LG.Results.push_back(Result);
    B.SetInsertPoint(Else);
  }
  LG.Slow = Slow;
  Loaded.push_back(std::move(LG));
  return Slow;
}

} // namespace

PreservedAnalyses ptxforge::codegen::passes::ContiguousGathersPass::run(Function &F, FunctionAnalysisManager &) {
  const DataLayout &DL = F.getDataLayout();
  MDNode *Likely = MDBuilder(F.getContext()).createLikelyBranchWeights();
  SmallPtrSet<Instruction *, 16> Tested; // the groups' fallbacks
  std::vector<Group> Groups = findGroups(F, DL);
  std::vector<LoadedGroup> Loaded;
  for (Group &Gr : Groups)
    for (Instruction *I : rewriteGroup(Gr, DL, Likely, Loaded))
      Tested.insert(I);
  SmallVector<Access, 16> Ops;
  for (Instruction &I : instructions(F))
    if (std::optional<Access> Op = accessOf(I, DL); Op && !Tested.count(&I))
      Ops.push_back(*Op);
  for (Access &Op : Ops) {
    // Read again: an earlier rewrite may have replaced an operand (a mask that was another gather's result).
    Op = *accessOf(*Op.II, DL);
    IntrinsicInst *II = Op.II;
    bool Gather = Op.Gather;
    Value *Ptrs = Op.Ptrs, *Mask = Op.Mask;
    Align A = Op.A;
    unsigned N = Op.N;
    uint64_t Size = Op.Size;
    IRBuilder<> B(II);
    Type *IntPtr = DL.getIntPtrType(Ptrs->getType()->getScalarType());
    // Lane 0 names the base; it must be on (an off lane's pointer may be anything). Every other lane that is on
    // must point Size bytes past its left neighbour's slot: lane I at base + I * Size.
    Value *First = B.CreateExtractElement(Ptrs, uint64_t(0));
    Value *Expected = B.CreateAdd(B.CreateVectorSplat(N, B.CreatePtrToInt(First, IntPtr)), [&] {
      SmallVector<Constant *, 16> Offsets;
      for (unsigned I = 0; I < N; ++I)
        Offsets.push_back(ConstantInt::get(IntPtr, I * Size));
      return ConstantVector::get(Offsets);
    }());
    Value *Same = B.CreateFreeze(B.CreateICmpEQ(B.CreatePtrToInt(Ptrs, Expected->getType()), Expected));
    // An unconditional thread loop's gather has a constant all-true mask: no lane to leave out, a plain access.
    auto *ConstMask = dyn_cast<Constant>(Mask);
    bool AllOn = ConstMask && ConstMask->isAllOnesValue();
    Value *Contiguous = AllOn ? B.CreateAndReduce(Same)
                              : B.CreateAnd(B.CreateAndReduce(B.CreateOr(Same, B.CreateNot(Mask))),
                                            B.CreateExtractElement(Mask, uint64_t(0)));
    Instruction *Then = nullptr, *Else = nullptr;
    SplitBlockAndInsertIfThenElse(Contiguous, II, &Then, &Else, Likely);
    B.SetInsertPoint(Then);
    // The same lanes touch the same bytes as the gather/scatter would, so faults and results are the same.
    Instruction *Vector;
    if (AllOn)
      Vector = Gather ? static_cast<Instruction *>(B.CreateAlignedLoad(II->getType(), First, A))
                      : B.CreateAlignedStore(II->getArgOperand(0), First, A);
    else
      Vector = Gather ? B.CreateMaskedLoad(II->getType(), First, A, Mask, II->getArgOperand(2))
                      : B.CreateMaskedStore(II->getArgOperand(0), First, A, Mask);
    Vector->copyMetadata(*II);
    II->moveBefore(Else->getIterator());
    if (Gather) {
      B.SetInsertPoint(Then->getParent()->getSingleSuccessor()->getFirstNonPHIIt());
      PHINode *Result = B.CreatePHI(II->getType(), 2);
      II->replaceAllUsesWith(Result);
      Result->addIncoming(Vector, Vector->getParent());
      Result->addIncoming(II, II->getParent());
    }
  }
  return Ops.empty() && Groups.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
}
