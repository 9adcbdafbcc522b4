// Asynchronous copies and mbarriers: cp.async(.ca/.cg, commit/wait groups, .mbarrier.arrive), cp.async.bulk
// (global<->shared with mbarrier transaction counts and bulk groups) and every mbarrier operation. Copies run
// at once (a legal schedule of an asynchronous copy), so the group operations need no code; mbarrier state
// lives in its 64-bit object and is handled by the helpers in exec/AsyncHelpers.cpp. Tensor copies and bulk
// reductions are lower/BulkCopyOps.cpp's.
#include "../passes/Passes.h"
#include "FamilyLowering.h"

namespace {

StateSpace spaceOfModifier(uint16_t M) {
  switch (static_cast<Modifier>(M)) {
  case Modifier::Shared:
  case Modifier::Shared_Cta:
  case Modifier::Shared_Cluster:
    return StateSpace::Shared;
  case Modifier::Global:
    return StateSpace::Global;
  default:
    return StateSpace::Generic;
  }
}

/// The state spaces named by I's qualifiers, in order (for cp: destination first, then source).
std::vector<StateSpace> spaces(const ptx::Instruction &I) {
  std::vector<StateSpace> R;
  for (const ptx::Qualifier &Q : I.Qualifiers)
    if (Q.K == ptx::Qualifier::Kind::Modifier && spaceOfModifier(Q.Value) != StateSpace::Generic)
      R.push_back(spaceOfModifier(Q.Value));
  return R;
}

StateSpace mbarSpace(const ptx::Instruction &I) {
  return I.has(Modifier::Shared) || I.has(Modifier::Shared_Cta) || I.has(Modifier::Shared_Cluster)
             ? StateSpace::Shared
             : StateSpace::Generic;
}

bool isPredOperand(FunctionLowering &L, const ptx::Operand &Op) {
  return Op.Kind == ptx::OperandKind::Register && Op.Reg < L.fn().Registers.size() &&
         L.fn().Registers[Op.Reg].Type == ScalarType::Pred;
}

/// ORs the bits of an Op address (P) that a Size-byte access forbids into the misalignment accumulator: the
/// register's, where [reg + k*Size] shares its check with the thread's other accesses through reg.
void accumulateAddressMisalignment(FunctionLowering &L, const ptx::Operand &Op, llvm::Value *P, unsigned Size) {
  if (Op.Reg != ptx::NoReg && Op.offset() % Size == 0)
    accumulateMisalignmentBits(L, L.b().CreateAnd(L.addressRegister(Op), L.b().getInt64(Size - 1)));
  else
    accumulateMisalignment(L, P, Size);
}

/// cp.async.ca/cg's copy of CpSize (4, 8 or 16) bytes, SrcSize of them read and the rest zeroed, inline: loads
/// and stores of 32-bit words, as ld/st would be, and where src-size may be smaller (a runtime value,
/// ignore-src) a masked load of the bytes below it instead, which reads nothing past them. A helper call in the
/// copy loop of a pipelined tile loop kept that loop uncut and its region cyclic, so every access through the
/// tile counter became a gather (cuda::memcpy_async's matrix products ran 4x slower than with plain loads).
/// Memcheck keeps the helper: its accesses are not the instrumented kind.
void lowerSmallCopy(FunctionLowering &L, const ptx::Instruction &I, llvm::Value *Dst, llvm::Value *Src,
                    llvm::Value *CpSize, llvm::Value *SrcSize) {
  auto &B = L.b();
  auto *Size = llvm::dyn_cast<llvm::ConstantInt>(CpSize);
  unsigned Bytes = Size ? static_cast<unsigned>(Size->getZExtValue()) : 0;
  if (L.module().Memcheck || (Bytes != 4 && Bytes != 8 && Bytes != 16)) {
    L.callHelper("ptxrt_cp_async", B.getVoidTy(), {Dst, Src, CpSize, SrcSize});
    return;
  }
  accumulateAddressMisalignment(L, I.Operands[0], Dst, Bytes);
  accumulateAddressMisalignment(L, I.Operands[1], Src, Bytes);
  auto mark = [](llvm::Instruction *A, codegen::passes::MemoryClass C) {
    codegen::passes::markThreadParallel(A);
    codegen::passes::markAccess(A, C);
  };
  // The loads first, then the stores, as ld.v4 and st.v4 would: vectorized across threads, each run is one
  // interleaved group (passes/ContiguousGathers.cpp).
  auto emitWords = [&] {
    std::vector<llvm::Value *> Words;
    for (unsigned K = 0; K < Bytes / 4; ++K) {
      auto *Ld = B.CreateAlignedLoad(B.getInt32Ty(), K ? B.CreateConstGEP1_64(B.getInt8Ty(), Src, K * 4) : Src,
                                     llvm::Align(1));
      mark(Ld, codegen::passes::MemoryClass::Global);
      Words.push_back(Ld);
    }
    for (unsigned K = 0; K < Bytes / 4; ++K)
      mark(B.CreateAlignedStore(Words[K], K ? B.CreateConstGEP1_64(B.getInt8Ty(), Dst, K * 4) : Dst, llvm::Align(1)),
           codegen::passes::MemoryClass::Shared);
  };
  auto *Known = llvm::dyn_cast<llvm::ConstantInt>(SrcSize);
  if (SrcSize == CpSize || (Known && Known->getZExtValue() >= Bytes)) {
    emitWords();
    return;
  }
  llvm::LLVMContext &C = L.module().Ctx;
  llvm::Function *F = B.GetInsertBlock()->getParent();
  auto *Full = llvm::BasicBlock::Create(C, "cp.async.full", F);
  auto *Partial = llvm::BasicBlock::Create(C, "cp.async.partial", F);
  auto *Done = llvm::BasicBlock::Create(C, "cp.async.done", F);
  B.CreateCondBr(B.CreateICmpUGE(SrcSize, CpSize), Full, Partial);
  B.SetInsertPoint(Full);
  emitWords();
  B.CreateBr(Done);
  B.SetInsertPoint(Partial);
  auto *VecTy = llvm::FixedVectorType::get(B.getInt8Ty(), Bytes);
  std::vector<llvm::Constant *> Lanes;
  for (unsigned K = 0; K < Bytes; ++K)
    Lanes.push_back(B.getInt32(K));
  llvm::Value *Mask = B.CreateICmpULT(llvm::ConstantVector::get(Lanes), B.CreateVectorSplat(Bytes, SrcSize));
  llvm::CallInst *Ld = B.CreateMaskedLoad(VecTy, Src, llvm::Align(1), Mask, llvm::Constant::getNullValue(VecTy));
  codegen::passes::markAccess(Ld, codegen::passes::MemoryClass::Global);
  mark(B.CreateAlignedStore(Ld, Dst, llvm::Align(1)), codegen::passes::MemoryClass::Shared);
  B.CreateBr(Done);
  B.SetInsertPoint(Done);
}

bool lowerCp(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  if (!I.has(Modifier::Async))
    return L.unsupported(I);
  // Group bookkeeping and prefetches: every copy has completed already, in the issuing thread's program order,
  // and other threads see them only after a barrier, itself a cut or a call. No code: a fence here was an
  // atomic instruction in every pipelined loop, which kept the loop cuts off it (LoopCuts.cpp, worthCutting).
  if (I.has(Modifier::CommitGroup) || I.has(Modifier::WaitGroup) || I.has(Modifier::WaitAll) ||
      I.has(Modifier::Prefetch))
    return true;
  if (I.has(Modifier::Reduce) || I.has(Modifier::Tensor))
    return lowerBulkCopy(L, I);
  if (I.has(Modifier::Mbarrier) && I.has(Modifier::Arrive)) {
    // cp.async.mbarrier.arrive{.noinc}{.shared}.b64 [addr]: the copies are done, so the plain form (which
    // raises the pending count by the arrival it then makes) changes nothing.
    if (!I.has(Modifier::Noinc))
      return true;
    L.callHelper("ptxrt_mbar_cp_arrive", B.getVoidTy(),
                 {L.threadCtx(), L.address(Ops[0], mbarSpace(I)), B.getInt32(I.has(Modifier::Noinc))});
    return true;
  }
  std::vector<StateSpace> Sp = spaces(I);
  StateSpace DstS = Sp.size() > 0 ? Sp[0] : StateSpace::Generic, SrcS = Sp.size() > 1 ? Sp[1] : StateSpace::Generic;
  if (Ops.size() < 3)
    return L.unsupported(I, "operands");
  llvm::Value *Dst = L.address(Ops[0], DstS), *Src = L.address(Ops[1], SrcS);
  if (I.has(Modifier::Bulk)) {
    // cp.async.bulk.dst.src{.mbarrier::complete_tx::bytes | .bulk_group} [dst], [src], size{, [mbar]}{, policy}
    llvm::Value *Size = L.read(Ops[2], ScalarType::U32);
    llvm::Value *Mbar = llvm::ConstantPointerNull::get(B.getPtrTy());
    if (I.has(Modifier::Mbarrier_CompleteTx_Bytes) && Ops.size() > 3)
      Mbar = L.address(Ops[3], StateSpace::Shared);
    if (I.has(Modifier::Multicast_Cluster)) { // ..., [mbar], ctaMask{, policy}
      if (Ops.size() < 5 || !I.has(Modifier::Mbarrier_CompleteTx_Bytes))
        return L.unsupported(I, "multicast operands");
      L.callHelper(
          "ptxrt_cp_bulk_multicast", B.getVoidTy(),
          {L.threadCtx(), Dst, Src, Size, Mbar, B.CreateZExt(L.read(Ops[4], ScalarType::B16), B.getInt32Ty())});
      return true;
    }
    L.callHelper("ptxrt_cp_bulk", B.getVoidTy(), {L.threadCtx(), Dst, Src, Size, Mbar});
    return true;
  }
  // cp.async.ca/cg.shared.global [dst], [src], cp-size{, src-size | ignore-src}{, cache-policy}
  size_t N = Ops.size();
  if (I.has(Modifier::L2_CacheHint) && N > 3)
    --N; // the last operand is the cache policy
  llvm::Value *CpSize = L.read(Ops[2], ScalarType::U32);
  llvm::Value *SrcSize = CpSize;
  if (N > 3) {
    if (isPredOperand(L, Ops[3]))
      SrcSize = B.CreateSelect(L.read(Ops[3], ScalarType::Pred), B.getInt32(0), CpSize);
    else
      SrcSize = L.read(Ops[3], ScalarType::U32);
  }
  lowerSmallCopy(L, I, Dst, Src, CpSize, SrcSize);
  return true;
}

bool lowerMbarrier(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  StateSpace S = mbarSpace(I);
  if (I.has(Modifier::Init)) {
    L.callHelper("ptxrt_mbar_init", B.getVoidTy(), {L.address(Ops[0], S), L.read(Ops[1], ScalarType::U32)});
    return true;
  }
  if (I.has(Modifier::Inval)) {
    L.callHelper("ptxrt_mbar_inval", B.getVoidTy(), {L.address(Ops[0], S)});
    return true;
  }
  if (I.has(Modifier::PendingCount)) {
    llvm::Value *R = L.callHelper("ptxrt_mbar_pending_count", B.getInt32Ty(), {L.read(Ops[1], ScalarType::B64)});
    L.write(Ops[0], ScalarType::U32, R);
    return true;
  }
  if (I.has(Modifier::TestWait) || I.has(Modifier::TryWait)) {
    // {test,try}_wait{.parity} p, [addr], state|parity{, suspendTimeHint}
    bool Parity = I.has(Modifier::Parity);
    llvm::Value *State =
        Parity ? B.CreateZExt(L.read(Ops[2], ScalarType::U32), B.getInt64Ty()) : L.read(Ops[2], ScalarType::B64);
    unsigned Flags = (Parity ? 1 : 0) | (I.has(Modifier::TryWait) ? 2 : 0);
    llvm::Value *R = L.callHelper("ptxrt_mbar_wait", B.getInt32Ty(),
                                  {L.threadCtx(), L.address(Ops[1], S), State, B.getInt32(Flags)});
    L.write(Ops[0], ScalarType::Pred, B.CreateICmpNE(R, B.getInt32(0)));
    return true;
  }
  bool Arrive = I.has(Modifier::Arrive), Drop = I.has(Modifier::ArriveDrop);
  if (Arrive || Drop) {
    // arrive{.expect_tx}|arrive_drop{.expect_tx} state|_, [addr]{, count | txCount}
    bool Tx = I.has(Modifier::ExpectTx);
    llvm::Value *Count = B.getInt32(1), *TxCount = B.getInt32(0);
    if (Ops.size() > 2) {
      if (Tx)
        TxCount = L.read(Ops[2], ScalarType::U32);
      else
        Count = L.read(Ops[2], ScalarType::U32);
    }
    llvm::Value *Token = L.callHelper("ptxrt_mbar_arrive", B.getInt64Ty(),
                                      {L.threadCtx(), L.address(Ops[1], S), Count, B.getInt32(Drop), TxCount});
    L.write(Ops[0], ScalarType::B64, Token);
    return true;
  }
  if (I.has(Modifier::ExpectTx)) {
    L.callHelper("ptxrt_mbar_expect_tx", B.getVoidTy(), {L.address(Ops[0], S), L.read(Ops[1], ScalarType::U32)});
    return true;
  }
  if (I.has(Modifier::CompleteTx)) {
    L.callHelper("ptxrt_mbar_complete_tx", B.getVoidTy(),
                 {L.threadCtx(), L.address(Ops[0], S), L.read(Ops[1], ScalarType::U32)});
    return true;
  }
  return L.unsupported(I);
}

} // namespace

bool ptxforge::codegen::detail::lowerAsync(FunctionLowering &L, const ptx::Instruction &I) {
  switch (I.Op) {
  case Opcode::Cp:
    return lowerCp(L, I);
  case Opcode::Mbarrier:
    return lowerMbarrier(L, I);
  case Opcode::Tensormap:
    return lowerTensormap(L, I);
  default:
    return false;
  }
}
