// Thread-block clusters: the cluster special registers, mapa, getctarank, barrier.cluster, cvta and isspacep
// with .shared::cluster, the decoding of shared::cluster addresses for every instruction that takes one (ld, st,
// atom, red, mbarrier, cp.async.bulk: FunctionLowering::address), and multimem, which on one device is the plain
// memory operation. The encoding of shared::cluster addresses and the runtime are in codegen/exec/Cluster.h.
#include "../../exec/Cluster.h"
#include "FamilyLowering.h"

namespace {

using codegen::exec::ClusterOffsetMask;
using codegen::exec::ClusterRankShift;

/// %cluster_nctaid.{x,y,z}: the cluster's shape, at least 1 (contexts made outside a launch have zeros).
llvm::Value *clusterDim(FunctionLowering &L, unsigned C) {
  auto &B = L.b();
  llvm::Value *P = B.CreateInBoundsGEP(L.module().ThreadCtxTy, L.threadCtx(),
                                       {B.getInt32(0), B.getInt32(codegen::TCClusterDim), B.getInt32(C)});
  return B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, B.CreateLoad(B.getInt32Ty(), P), B.getInt32(1));
}

/// %cluster_ctarank: the block's rank in its cluster, x fastest.
llvm::Value *clusterRank(FunctionLowering &L) {
  auto &B = L.b();
  llvm::Value *Dx = clusterDim(L, 0), *Dy = clusterDim(L, 1);
  llvm::Value *X = B.CreateURem(L.ctxField(codegen::TCCtaid, 0), Dx);
  llvm::Value *Y = B.CreateURem(L.ctxField(codegen::TCCtaid, 1), Dy);
  llvm::Value *Z = B.CreateURem(L.ctxField(codegen::TCCtaid, 2), clusterDim(L, 2));
  return B.CreateAdd(X, B.CreateMul(Dx, B.CreateAdd(Y, B.CreateMul(Dy, Z))));
}

/// The shared::cluster address of rank Rank for the byte a shared::cta or shared::cluster address names.
llvm::Value *encode(FunctionLowering &L, llvm::Value *Addr32, llvm::Value *Rank) {
  auto &B = L.b();
  llvm::Value *Window = B.CreateShl(B.CreateAnd(B.CreateAdd(Rank, B.getInt32(1)), B.getInt32(0xff)), ClusterRankShift);
  return B.CreateOr(Window, B.CreateAnd(Addr32, B.getInt32(ClusterOffsetMask)));
}

/// mapa{.shared::cluster}.type d, a, rank.
bool lowerMapa(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType T = I.type();
  llvm::Value *Rank = L.read(I.Operands[2], ScalarType::U32);
  llvm::Value *R;
  if (I.has(Modifier::Shared_Cluster))
    R = B.CreateZExt(encode(L, L.read(I.Operands[1], ScalarType::U32), Rank), B.getInt64Ty());
  else
    R = L.callHelper("ptxrt_cluster_mapa", B.getInt64Ty(),
                     {L.threadCtx(), B.CreateZExtOrTrunc(L.read(I.Operands[1], T), B.getInt64Ty()), Rank});
  L.write(I.Operands[0], T, B.CreateZExtOrTrunc(R, L.bitsType(T)));
  return true;
}

/// getctarank{.shared::cluster}.type d, a: the rank whose shared memory the address names (d is 32 bits).
bool lowerGetctarank(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  llvm::Value *R;
  if (I.has(Modifier::Shared_Cluster)) {
    llvm::Value *Window = B.CreateLShr(L.read(I.Operands[1], ScalarType::U32), ClusterRankShift);
    R = B.CreateSelect(B.CreateICmpEQ(Window, B.getInt32(0)), clusterRank(L), B.CreateSub(Window, B.getInt32(1)));
  } else {
    llvm::Value *A = B.CreateZExtOrTrunc(L.read(I.Operands[1], I.type()), B.getInt64Ty());
    R = L.callHelper("ptxrt_cluster_rank_of", B.getInt32Ty(), {L.threadCtx(), A});
  }
  L.write(I.Operands[0], ScalarType::U32, R);
  return true;
}

/// barrier.cluster.arrive{.release|.relaxed}{.aligned} / barrier.cluster.wait{.acquire}{.aligned}. A wait is the
/// block's barrier first (every thread of the block has arrived then: arrive precedes wait in each thread), then
/// the wait for the other blocks, which run on workers of their own (exec/ClusterHelpers.cpp).
bool lowerClusterBarrier(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  if (I.has(Modifier::Arrive)) {
    L.callHelper("ptxrt_cluster_arrive", B.getVoidTy(), {L.threadCtx()});
    return true;
  }
  if (!I.has(Modifier::Wait))
    return L.unsupported(I, "barrier.cluster without .arrive or .wait");
  L.callHelper("ptxrt_bar_sync", B.getVoidTy(), {L.threadCtx(), B.getInt32(0), B.getInt32(0)});
  L.callHelper("ptxrt_cluster_wait", B.getVoidTy(), {L.threadCtx()});
  return true;
}

/// cvta.shared::cluster / cvta.to.shared::cluster.
bool lowerClusterCvta(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType T = I.type();
  llvm::Value *X = L.read(I.Operands[1], T);
  llvm::Value *R;
  if (I.has(Modifier::To))
    R = L.callHelper("ptxrt_cluster_to_shared", B.getInt32Ty(),
                     {L.threadCtx(), B.CreateZExtOrTrunc(X, B.getInt64Ty())});
  else
    R = B.CreatePtrToInt(clusterSharedPointer(L, B.CreateZExtOrTrunc(X, B.getInt64Ty())), B.getInt64Ty());
  L.write(I.Operands[0], T, B.CreateZExtOrTrunc(R, X->getType()));
  return true;
}

/// multimem.ld_reduce / multimem.st / multimem.red: on one device a multimem address names one copy of the
/// memory, so each is the plain load, store or reduction of that memory (a reduction over one value is it).
bool lowerMultimem(FunctionLowering &L, const ptx::Instruction &I) {
  ptx::Instruction Plain = I;
  Plain.Op = I.has(Modifier::LdReduce) ? Opcode::Ld : I.has(Modifier::St) ? Opcode::St : Opcode::Red;
  if (!I.has(Modifier::LdReduce) && !I.has(Modifier::St) && !I.has(Modifier::Red))
    return L.unsupported(I, "multimem without .ld_reduce, .st or .red");
  ScalarType T = I.type(I.typeCount() ? I.typeCount() - 1 : 0);
  if (T == ScalarType::E4M3 || T == ScalarType::E5M2 || T == ScalarType::E4M3x2 || T == ScalarType::E5M2x2)
    return L.unsupported(I, "fp8 multimem");
  llvm::erase_if(Plain.Qualifiers, [](const ptx::Qualifier &Q) {
    return Q.K == ptx::Qualifier::Kind::Modifier &&
           (Q.Value == static_cast<uint16_t>(Modifier::LdReduce) || Q.Value == static_cast<uint16_t>(Modifier::St) ||
            Q.Value == static_cast<uint16_t>(Modifier::Red));
  });
  return Plain.Op == Opcode::Red ? lowerAtomic(L, Plain) : lowerMemory(L, Plain);
}

} // namespace

llvm::Value *ptxforge::codegen::detail::clusterSharedPointer(FunctionLowering &L, llvm::Value *Address) {
  auto &B = L.b();
  llvm::Value *A = B.CreateTrunc(Address, B.getInt32Ty());
  llvm::Value *Table =
      B.CreateLoad(B.getPtrTy(), B.CreateStructGEP(L.module().ThreadCtxTy, L.threadCtx(), codegen::TCClusterShared),
                   "cluster.windows");
  llvm::Value *Window = B.CreateZExt(B.CreateLShr(A, ClusterRankShift), B.getInt64Ty());
  llvm::Value *Base = B.CreateLoad(B.getPtrTy(), B.CreateInBoundsGEP(B.getPtrTy(), Table, Window), "cluster.window");
  llvm::Value *Offset = B.CreateZExt(B.CreateAnd(A, B.getInt32(ClusterOffsetMask)), B.getInt64Ty());
  return B.CreateGEP(B.getInt8Ty(), Base, Offset);
}

bool ptxforge::codegen::detail::distributedShared(ModuleLowering &ML) {
  if (!ML.DistributedShared) {
    ML.DistributedShared = false;
    for (const auto &F : ML.M.Functions)
      for (const ptx::Instruction &I : F->Instructions)
        if (I.Op == Opcode::Mapa || I.has(Modifier::Shared_Cluster))
          ML.DistributedShared = true;
  }
  return *ML.DistributedShared;
}

llvm::Value *ptxforge::codegen::detail::readClusterSpecial(FunctionLowering &L, const ptx::Operand &Op) {
  auto &B = L.b();
  unsigned C = Op.Component ? Op.Component - 1 : 0;
  switch (Op.Sreg) {
  case ptx::SpecialReg::ClusterNctaid:
    return clusterDim(L, C);
  case ptx::SpecialReg::ClusterCtaid:
    return B.CreateURem(L.ctxField(codegen::TCCtaid, C), clusterDim(L, C));
  case ptx::SpecialReg::Clusterid:
    return B.CreateUDiv(L.ctxField(codegen::TCCtaid, C), clusterDim(L, C));
  case ptx::SpecialReg::Nclusterid:
    return B.CreateUDiv(L.ctxField(codegen::TCNctaid, C), clusterDim(L, C));
  case ptx::SpecialReg::ClusterCtarank:
    return clusterRank(L);
  case ptx::SpecialReg::ClusterNctarank:
    return B.CreateMul(B.CreateMul(clusterDim(L, 0), clusterDim(L, 1)), clusterDim(L, 2));
  case ptx::SpecialReg::IsExplicitCluster:
    return B.CreateAnd(L.ctxField(codegen::TCClusterFlags), B.getInt32(1));
  default:
    return nullptr;
  }
}

namespace {

/// clusterlaunchcontrol: try_cancel hands the response's and the mbarrier's shared addresses to the runtime
/// (exec/ClusterHelpers.cpp ptxrt_clc_try_cancel); query_cancel decodes a response held in a .b128 register:
/// bit 0 whether a block was cancelled, bits 32-127 its %ctaid.x, y and z.
bool lowerClusterLaunchControl(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  if (Ops.size() != 2)
    return L.unsupported(I, "clusterlaunchcontrol operands");
  if (I.has(Modifier::TryCancel)) {
    L.callHelper("ptxrt_clc_try_cancel", B.getVoidTy(),
                 {L.threadCtx(), L.address(Ops[0], StateSpace::Shared), L.address(Ops[1], StateSpace::Shared),
                  B.getInt32(I.has(Modifier::Multicast_Cluster_All))});
    return true;
  }
  if (!I.has(Modifier::QueryCancel))
    return L.unsupported(I, "clusterlaunchcontrol form");
  llvm::Value *Resp = L.read(Ops[1], ScalarType::B128);
  auto word = [&](unsigned K) { return B.CreateTrunc(B.CreateLShr(Resp, 32 * K), B.getInt32Ty()); };
  if (I.has(Modifier::IsCanceled)) {
    L.write(Ops[0], ScalarType::Pred, B.CreateICmpNE(B.CreateAnd(word(0), 1), B.getInt32(0)));
    return true;
  }
  static constexpr std::pair<Modifier, unsigned> Single[] = {
      {Modifier::GetFirstCtaid_X, 1}, {Modifier::GetFirstCtaid_Y, 2}, {Modifier::GetFirstCtaid_Z, 3}};
  for (auto [M, K] : Single)
    if (I.has(M)) {
      L.write(Ops[0], ScalarType::B32, word(K));
      return true;
    }
  auto Es = operandElements(Ops[0]);
  if (!I.has(Modifier::GetFirstCtaid) || Es.size() != 4)
    return L.unsupported(I, "clusterlaunchcontrol.query_cancel form");
  for (unsigned K = 0; K < 4; ++K)
    if (Es[K]->Kind != ptx::OperandKind::Sink)
      L.write(*Es[K], ScalarType::B32, K < 3 ? word(K + 1) : B.getInt32(0));
  return true;
}

} // namespace

bool ptxforge::codegen::detail::lowerCluster(FunctionLowering &L, const ptx::Instruction &I) {
  switch (I.Op) {
  case Opcode::Clusterlaunchcontrol:
    return lowerClusterLaunchControl(L, I);
  case Opcode::Mapa:
    return lowerMapa(L, I);
  case Opcode::Getctarank:
    return lowerGetctarank(L, I);
  case Opcode::Multimem:
    return lowerMultimem(L, I);
  case Opcode::Barrier:
    return I.has(Modifier::Cluster) && lowerClusterBarrier(L, I);
  case Opcode::Cvta:
    return I.has(Modifier::Shared_Cluster) && lowerClusterCvta(L, I);
  case Opcode::Isspacep:
    if (!I.has(Modifier::Shared_Cluster))
      return false;
    {
      auto &B = L.b();
      llvm::Value *R = L.callHelper("ptxrt_cluster_is_shared", B.getInt32Ty(),
                                    {L.threadCtx(), L.read(I.Operands[1], ScalarType::U64)});
      L.write(I.Operands[0], ScalarType::Pred, B.CreateICmpNE(R, B.getInt32(0)));
      return true;
    }
  default:
    return false;
  }
}
