// Block barriers and warp collectives. In the thread-fiber execution mode every PTX thread is a fiber, so a
// barrier or collective is a rendezvous in the runtime (codegen/exec/Sync.cpp, WarpCollectives.cpp) that
// yields to the block scheduler until its partners arrive. A region-split block function (BarrierRegions.cpp,
// WarpRendezvous.cpp) replaces the calls to ptxrt_bar_sync, ptxrt_shfl, ptxrt_vote, ptxrt_redux, ptxrt_match and
// ptxrt_warp_sync by cuts between its region loops: each such call is marked here with its cut kind and the
// operands that hold its mode and inputs (Markers.h), and the calls only fibers can serve are marked as such.
#include "../Markers.h"
#include "FamilyLowering.h"

#include <atomic>

using namespace ptxforge::codegen;

bool ptxforge::codegen::detail::synchronizesThreads(const ptx::Instruction &I) {
  switch (I.Op) {
  case Opcode::Bar:
  case Opcode::Barrier:
  case Opcode::Shfl:
  case Opcode::Vote:
  case Opcode::Match:
  case Opcode::Redux:
  case Opcode::Activemask:
  case Opcode::Elect:
  case Opcode::Mbarrier:
  case Opcode::Ldmatrix:
  case Opcode::Stmatrix:
  case Opcode::Movmatrix:
  case Opcode::Mma:
    return true;
  case Opcode::Wmma: // wmma.load and wmma.store: each lane accesses its own fragment's elements
    return I.has(Modifier::Mma);
  case Opcode::Wgmma: // a warp collective when A comes from registers
    return I.has(Modifier::MmaAsync);
  case Opcode::Tcgen05: // warp collectives (ld/st: a lane's registers may come from another lane's row of
                        // Tensor Memory); commit arrives on an mbarrier
    return I.has(Modifier::Alloc) || I.has(Modifier::Dealloc) || I.has(Modifier::Commit) || I.has(Modifier::Ld) ||
           I.has(Modifier::St);
  case Opcode::Cp: // cp.async.mbarrier.arrive / bulk copies completing mbarrier transactions
    return I.has(Modifier::Mbarrier) || I.has(Modifier::Mbarrier_CompleteTx_Bytes);
  default:
    return false;
  }
}

std::vector<const ptx::Operand *> ptxforge::codegen::detail::operandElements(const ptx::Operand &Op) {
  std::vector<const ptx::Operand *> R;
  if (Op.Kind == ptx::OperandKind::Vector)
    for (const ptx::Operand &E : Op.Elements)
      R.push_back(&E);
  else
    R.push_back(&Op);
  return R;
}

llvm::Value *ptxforge::codegen::detail::scratchBuffer(FunctionLowering &L, llvm::Type *Ty, unsigned Count,
                                                      unsigned Slot) {
  return L.scratch(Ty, Count, Slot);
}

namespace {

/// Writes the two halves of a `d|p` destination: the value to d, the predicate to p.
void writeWithPred(FunctionLowering &L, const ptx::Operand &Dst, ScalarType T, llvm::Value *V, llvm::Value *P) {
  ptx::Operand D = Dst;
  if (Dst.Kind == ptx::OperandKind::RegPair) {
    D.Kind = ptx::OperandKind::Register;
    ptx::Operand Q = Dst;
    Q.Kind = ptx::OperandKind::Register;
    Q.Reg = Dst.Reg2;
    L.write(Q, ScalarType::Pred, P);
  }
  L.write(D, T, V);
}

llvm::Value *activemask(FunctionLowering &L) {
  static std::atomic<uint32_t> NextSite{1};
  llvm::Value *R = L.callHelper("ptxrt_activemask", L.b().getInt32Ty(), {L.threadCtx(), L.b().getInt32(NextSite++)});
  markFiberOnly(llvm::cast<llvm::CallInst>(R));
  return R;
}

/// The member mask operand; the pre-sm_70 forms without `.sync` take the lanes that arrive together.
llvm::Value *memberMask(FunctionLowering &L, const ptx::Instruction &I, size_t Index) {
  if (Index < I.Operands.size())
    return L.read(I.Operands[Index], ScalarType::U32);
  if (!I.has(Modifier::Sync) && (I.Op == Opcode::Shfl || I.Op == Opcode::Vote))
    return activemask(L);
  return L.b().getInt32(0xffffffffu);
}

/// bar.sync / bar.arrive on barrier Id: the region builder cuts at a bar.sync (RCBarrier).
void emitBlockBarrier(FunctionLowering &L, const ptx::Instruction &I, llvm::Value *Id, llvm::Value *Count,
                      bool Arrive) {
  auto &B = L.b();
  // Memcheck mode (synccheck, racecheck): the barrier's arrival and release are reported around it.
  llvm::Value *Where = nullptr;
  if (L.module().Memcheck && !Arrive) {
    Where = B.CreateGlobalString(L.fn().Name.str() + " in " + L.module().where(I.Loc), "ptx.mc.loc");
    L.callHelper("ptxrt_mc_barrier", B.getVoidTy(), {L.threadCtx(), Where, B.getInt32(0)});
  }
  auto *C = llvm::cast<llvm::CallInst>(
      L.callHelper(Arrive ? "ptxrt_bar_arrive" : "ptxrt_bar_sync", B.getVoidTy(), {L.threadCtx(), Id, Count}));
  if (Arrive)
    markFiberOnly(C);
  else
    markRegionCut(C, {RCBarrier});
  if (Where)
    L.callHelper("ptxrt_mc_barrier", B.getVoidTy(), {L.threadCtx(), Where, B.getInt32(1)});
}

/// bar.red.popc.u32 d, a{, b}, {!}c / bar.red.{and,or}.pred p, a{, b}, {!}c. In a kernel body, on a constant
/// barrier of the whole block, it is a tally around an ordinary barrier (BlockState::Tallies), which region-split
/// kernels cut at like any bar.sync; each thread counts its reductions there to name the tally. Elsewhere it is
/// the fiber mode's rendezvous.
bool lowerBarrierReduction(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  if (Ops.size() < 3)
    return L.unsupported(I, "operands");
  llvm::Value *Id = L.read(Ops[1], ScalarType::U32);
  llvm::Value *Pred = B.CreateZExt(L.read(Ops.back(), ScalarType::Pred), B.getInt32Ty());
  unsigned Op = I.has(Modifier::Popc) ? 0 : I.has(Modifier::And) ? 1 : 2;
  llvm::Value *R;
  if (L.fn().IsEntry && Ops.size() == 3 && Ops[1].Kind == ptx::OperandKind::Immediate && Ops[1].Bits < 16) {
    llvm::AllocaInst *SeqSlot = L.reductionSequence(static_cast<unsigned>(Ops[1].Bits));
    llvm::Value *Seq = B.CreateLoad(B.getInt32Ty(), SeqSlot);
    L.callHelper("ptxrt_bar_red_arrive", B.getVoidTy(), {L.threadCtx(), Id, Seq, Pred});
    emitBlockBarrier(L, I, Id, B.getInt32(0), /*Arrive=*/false);
    R = L.callHelper("ptxrt_bar_red_result", B.getInt32Ty(), {L.threadCtx(), Id, Seq, B.getInt32(Op)});
    B.CreateStore(B.CreateAdd(Seq, B.getInt32(1)), SeqSlot);
  } else {
    llvm::Value *Count = Ops.size() > 3 ? L.read(Ops[2], ScalarType::U32) : B.getInt32(0);
    R = L.callHelper("ptxrt_bar_red", B.getInt32Ty(), {L.threadCtx(), Id, Count, B.getInt32(Op), Pred});
    markFiberOnly(llvm::cast<llvm::CallInst>(R));
  }
  if (Op == 0)
    L.write(Ops[0], ScalarType::U32, R);
  else
    L.write(Ops[0], ScalarType::Pred, B.CreateICmpNE(R, B.getInt32(0)));
  return true;
}

bool lowerBarrier(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  if (I.has(Modifier::Warp)) { // bar.warp.sync membermask
    llvm::Value *C = L.callHelper("ptxrt_warp_sync", B.getVoidTy(), {L.threadCtx(), memberMask(L, I, 0)});
    markRegionCut(llvm::cast<llvm::CallInst>(C), {RCWarpSync, -1, -1, -1, -1, /*Mask=*/1});
    return true;
  }
  if (I.has(Modifier::Cluster))
    return L.unsupported(I, "cluster barriers");
  if (I.has(Modifier::Red))
    return lowerBarrierReduction(L, I);
  llvm::Value *Id = Ops.empty() ? B.getInt32(0) : L.read(Ops[0], ScalarType::U32);
  llvm::Value *Count = Ops.size() > 1 ? L.read(Ops[1], ScalarType::U32) : B.getInt32(0);
  emitBlockBarrier(L, I, Id, Count, I.has(Modifier::Arrive));
  return true;
}

/// Calls a runtime rendezvous the region builder may cut at, marked with the operands Cut names (Markers.h).
llvm::CallInst *callCut(FunctionLowering &L, const char *Name, llvm::ArrayRef<llvm::Value *> Args,
                        const CutOperands &Cut) {
  auto *CI = llvm::cast<llvm::CallInst>(L.callHelper(Name, L.b().getInt32Ty(), Args));
  markRegionCut(CI, Cut);
  return CI;
}

/// The predicate a helper wrote through PredOut.
llvm::Value *predicateOut(FunctionLowering &L, llvm::Value *PredOut) {
  auto &B = L.b();
  return B.CreateICmpNE(B.CreateLoad(B.getInt32Ty(), PredOut), B.getInt32(0));
}

bool lowerShfl(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  // shfl.sync.mode.b32 d{|p}, a, b, c, membermask
  if (Ops.size() < 4)
    return L.unsupported(I, "operands");
  unsigned Mode = I.has(Modifier::Up) ? 0 : I.has(Modifier::Down) ? 1 : I.has(Modifier::Bfly) ? 2 : 3;
  llvm::Value *PredOut = scratchBuffer(L, B.getInt32Ty());
  llvm::Value *R =
      callCut(L, "ptxrt_shfl",
              {L.threadCtx(), B.getInt32(Mode), L.read(Ops[1], ScalarType::B32), L.read(Ops[2], ScalarType::U32),
               L.read(Ops[3], ScalarType::U32), memberMask(L, I, 4), PredOut},
              {RCShfl, /*Arg=*/1, /*Value=*/2, /*B=*/3, /*C=*/4, /*Mask=*/5, /*PredOut=*/6});
  writeWithPred(L, Ops[0], ScalarType::B32, R, predicateOut(L, PredOut));
  return true;
}

bool lowerVote(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  // vote.sync.{all,any,uni}.pred d, {!}a, membermask / vote.sync.ballot.b32 d, {!}a, membermask
  if (Ops.size() < 2)
    return L.unsupported(I, "operands");
  unsigned Mode = I.has(Modifier::All) ? 0 : I.has(Modifier::Any) ? 1 : I.has(Modifier::Uni) ? 2 : 3;
  llvm::Value *Pred = B.CreateZExt(L.read(Ops[1], ScalarType::Pred), B.getInt32Ty());
  llvm::Value *R = callCut(L, "ptxrt_vote", {L.threadCtx(), B.getInt32(Mode), Pred, memberMask(L, I, 2)},
                           {RCVote, /*Arg=*/1, /*Value=*/2, -1, -1, /*Mask=*/3});
  if (Mode == 3)
    L.write(Ops[0], ScalarType::B32, R);
  else
    L.write(Ops[0], ScalarType::Pred, B.CreateICmpNE(R, B.getInt32(0)));
  return true;
}

bool lowerMatch(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  // match.any.sync.b32/b64 d, a, membermask / match.all.sync.b32/b64 d{|p}, a, membermask
  if (Ops.size() < 3)
    return L.unsupported(I, "operands");
  ScalarType T = I.type();
  llvm::Value *V = B.CreateZExt(L.read(Ops[1], T), B.getInt64Ty());
  bool All = I.has(Modifier::All);
  llvm::Value *PredOut = scratchBuffer(L, B.getInt32Ty());
  // match.all is match.any's cut with a mode of 1 (callCutOf, WarpRendezvous.h, tells them apart).
  llvm::Value *R = callCut(L, "ptxrt_match", {L.threadCtx(), B.getInt32(All), V, memberMask(L, I, 2), PredOut},
                           {RCMatchAny, /*Arg=*/1, /*Value=*/2, -1, -1, /*Mask=*/3, /*PredOut=*/4});
  writeWithPred(L, Ops[0], ScalarType::B32, R, predicateOut(L, PredOut));
  return true;
}

/// redux.sync.min/max{.abs}{.NaN}.f32 as the integer min.s32/max.s32 reduction (one rendezvous kind for both,
/// so the region builder's warp-local release serves it unchanged) of an order-preserving key: the sign-
/// magnitude bits made two's complement, so -0 orders below +0 as min/max.f32 order them. A NaN becomes the
/// key that loses the reduction (NaN inputs are ignored) or, with .NaN, the one that wins; either sentinel
/// left at the end, i.e. all inputs NaN or one with .NaN, gives the canonical NaN. .abs clears the sign first.
bool lowerReduxF32(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  bool Max = I.has(Modifier::Max);
  if (!Max && !I.has(Modifier::Min))
    return L.unsupported(I, "floating-point redux operation");
  llvm::Value *Bits = L.read(Ops[1], ScalarType::B32);
  if (I.has(Modifier::Abs))
    Bits = B.CreateAnd(Bits, B.getInt32(0x7fffffff));
  auto flip = [&](llvm::Value *V) { return B.CreateXor(V, B.CreateAnd(B.CreateAShr(V, 31), B.getInt32(0x7fffffff))); };
  llvm::Value *IsNaN = B.CreateICmpUGT(B.CreateAnd(Bits, B.getInt32(0x7fffffff)), B.getInt32(0x7f800000));
  bool NaNWins = I.has(Modifier::NaN);
  // min: INT_MAX loses, INT_MIN wins; max the other way round.
  uint32_t Sentinel = (Max != NaNWins) ? 0x80000000u : 0x7fffffffu;
  llvm::Value *Key = B.CreateSelect(IsNaN, B.getInt32(Sentinel), flip(Bits));
  llvm::Value *R = callCut(L, "ptxrt_redux", {L.threadCtx(), B.getInt32(Max ? 4 : 3), Key, memberMask(L, I, 2)},
                           {RCRedux, /*Arg=*/1, /*Value=*/2, -1, -1, /*Mask=*/3});
  llvm::Value *NaNResult =
      B.CreateOr(B.CreateICmpEQ(R, B.getInt32(0x7fffffff)), B.CreateICmpEQ(R, B.getInt32(0x80000000u)));
  L.write(Ops[0], ScalarType::B32, B.CreateSelect(NaNResult, B.getInt32(0x7fffffff), flip(R)));
  return true;
}

bool lowerRedux(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  // redux.sync.op.type d, a, membermask
  if (Ops.size() < 3)
    return L.unsupported(I, "operands");
  ScalarType T = I.type();
  if (T == ScalarType::F32)
    return lowerReduxF32(L, I);
  if (ptx::isFloat(T))
    return L.unsupported(I, "floating-point redux");
  bool Signed = ptx::kindOf(T) == ptx::TypeKind::Signed;
  unsigned Op;
  if (I.has(Modifier::Add))
    Op = 0;
  else if (I.has(Modifier::Min))
    Op = Signed ? 3 : 1;
  else if (I.has(Modifier::Max))
    Op = Signed ? 4 : 2;
  else if (I.has(Modifier::And))
    Op = 5;
  else if (I.has(Modifier::Or))
    Op = 6;
  else
    Op = 7;
  llvm::Value *R =
      callCut(L, "ptxrt_redux", {L.threadCtx(), B.getInt32(Op), L.read(Ops[1], ScalarType::B32), memberMask(L, I, 2)},
              {RCRedux, /*Arg=*/1, /*Value=*/2, -1, -1, /*Mask=*/3});
  L.write(Ops[0], T, R);
  return true;
}

bool lowerElect(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  // elect.sync d|p, membermask
  if (Ops.size() < 2)
    return L.unsupported(I, "operands");
  llvm::Value *PredOut = scratchBuffer(L, B.getInt32Ty());
  llvm::Value *R = L.callHelper("ptxrt_elect", B.getInt32Ty(), {L.threadCtx(), memberMask(L, I, 1), PredOut});
  markFiberOnly(llvm::cast<llvm::CallInst>(R));
  llvm::Value *P = predicateOut(L, PredOut);
  if (Ops[0].Kind == ptx::OperandKind::RegPair || Ops[0].Kind == ptx::OperandKind::Register)
    writeWithPred(L, Ops[0], ScalarType::B32, R, P);
  else if (Ops[0].Kind == ptx::OperandKind::Sink && Ops.size() > 2)
    L.write(Ops[1], ScalarType::Pred, P);
  return true;
}

} // namespace

bool ptxforge::codegen::detail::lowerWarp(FunctionLowering &L, const ptx::Instruction &I) {
  switch (I.Op) {
  case Opcode::Bar:
  case Opcode::Barrier:
    return lowerBarrier(L, I);
  case Opcode::Shfl:
    return lowerShfl(L, I);
  case Opcode::Vote:
    return lowerVote(L, I);
  case Opcode::Match:
    return lowerMatch(L, I);
  case Opcode::Redux:
    return lowerRedux(L, I);
  case Opcode::Activemask:
    L.write(I.Operands[0], ScalarType::B32, activemask(L));
    return true;
  case Opcode::Elect:
    return lowerElect(L, I);
  default:
    return false;
  }
}
