// The Tensor Memory Accelerator's instructions: cp.async.bulk.tensor.{1..5}d (tile, tile::gather4, im2col,
// im2col::w and im2col::w::128 mode, global -> shared with mbarrier::complete_tx::bytes, to one block or multicast to
// a cluster's blocks; tile mode shared -> global with bulk_group), cp.reduce.async.bulk.tensor and the non-tensor
// cp.reduce.async.bulk. The copy runs at once in exec/TensorMapHelpers.cpp; a load then completes the box's bytes on
// its mbarrier, as the GPU does when the data has landed. lower/AsyncOps.cpp hands these forms over (lowerCp), and
// tensormap.replace / tensormap.cp_fenceproxy, which edit and publish maps in memory.
#include "FamilyLowering.h"

namespace {

unsigned tensorDims(const ptx::Instruction &I) {
  static constexpr Modifier Dims[] = {Modifier::G1d, Modifier::G2d, Modifier::G3d, Modifier::G4d, Modifier::G5d};
  for (unsigned K = 0; K < 5; ++K)
    if (I.has(Dims[K]))
      return K + 1;
  return 0;
}

/// The helpers' BulkOp for a reduction's operation (0 when none is named).
uint32_t reduceOp(const ptx::Instruction &I) {
  static constexpr std::pair<Modifier, uint32_t> Ops[] = {{Modifier::Add, 2}, {Modifier::Min, 3}, {Modifier::Max, 4},
                                                          {Modifier::And, 5}, {Modifier::Or, 6},  {Modifier::Xor, 7},
                                                          {Modifier::Inc, 8}, {Modifier::Dec, 9}};
  for (auto [M, Code] : Ops)
    if (I.has(M))
      return Code;
  return 0;
}

/// A `[tensorMap, {c0, ...}]` operand: the map's address (generic: a parameter, constant or global) and the
/// coordinates stored into an 8 x i32 scratch buffer (entries 5-7 left for im2col offsets); null when the operand
/// has another shape.
std::pair<llvm::Value *, llvm::Value *> mapAndCoords(FunctionLowering &L, const ptx::Operand &Op, unsigned Dims) {
  auto &B = L.b();
  if (Op.Kind != ptx::OperandKind::Address || Op.Elements.size() != 1)
    return {nullptr, nullptr};
  auto Cs = operandElements(Op.Elements[0]);
  if (Cs.size() != Dims)
    return {nullptr, nullptr};
  ptx::Operand Base = Op;
  Base.Elements = {};
  llvm::Value *Buf = scratchBuffer(L, B.getInt32Ty(), 8, 0);
  for (unsigned K = 0; K < Dims; ++K)
    B.CreateStore(L.read(*Cs[K], ScalarType::B32), B.CreateConstGEP1_32(B.getInt32Ty(), Buf, K));
  return {L.address(Base, StateSpace::Generic), Buf};
}

/// The helper's Mode of a load: 0 tile, 1 im2col, 2 tile::gather4, 3 im2col::w, 4 im2col::w::128.
uint32_t loadMode(const ptx::Instruction &I) {
  return I.has(Modifier::Im2col)         ? 1
         : I.has(Modifier::Tile_Gather4) ? 2
         : I.has(Modifier::Im2col_W)     ? 3
         : I.has(Modifier::Im2col_W_128) ? 4
                                         : 0;
}

/// A load: [dstMem], [tensorMap, coords], [mbar]{, im2colInfo}{, ctaMask}{, policy}, in tile, im2col, tile::gather4
/// or a wide im2col mode (loadMode). im2colInfo is the im2col offsets, or {wHalo, wOffset} in the wide modes; it
/// goes to entries 5.. of the coordinates' buffer. The copy lands in the executing block or, with
/// .multicast::cluster, in every block of ctaMask, completing on each one's mbarrier (exec/TensorMapHelpers.cpp
/// ptxrt_tensor_load).
bool lowerTensorLoad(FunctionLowering &L, const ptx::Instruction &I, unsigned Dims) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  uint32_t Mode = loadMode(I);
  bool Im2col = Mode == 1 || Mode >= 3, Multicast = I.has(Modifier::Multicast_Cluster);
  if (I.has(Modifier::Im2colNoOffs) || (Im2col && Dims < 3) || (Mode == 2 && Dims != 2))
    return L.unsupported(I, "tensor load mode");
  unsigned Next = 3 + Im2col;
  if (Ops.size() < Next + Multicast)
    return L.unsupported(I, "operands");
  // tile::gather4 names a column and four rows of a 2D tensor: {col, row0, row1, row2, row3}.
  auto [Map, Coords] = mapAndCoords(L, Ops[1], Mode == 2 ? 5 : Dims);
  if (!Map)
    return L.unsupported(I, "tensor coordinates");
  if (Im2col) {
    auto Info = operandElements(Ops[3]);
    if (Info.size() != (Mode == 1 ? Dims - 2 : 2))
      return L.unsupported(I, "im2col offsets");
    for (unsigned K = 0; K < Info.size(); ++K)
      B.CreateStore(B.CreateZExt(L.read(*Info[K], ScalarType::B16), B.getInt32Ty()),
                    B.CreateConstGEP1_32(B.getInt32Ty(), Coords, 5 + K));
  }
  llvm::Value *Mask = Multicast ? B.CreateZExt(L.read(Ops[Next], ScalarType::B16), B.getInt32Ty()) : B.getInt32(0);
  L.callHelper("ptxrt_tensor_load", B.getVoidTy(),
               {L.threadCtx(), Map, L.address(Ops[0], StateSpace::Shared), L.address(Ops[2], StateSpace::Shared),
                Coords, B.getInt32(Dims), B.getInt32(Mode), Mask});
  return true;
}

bool lowerTensorCopy(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  unsigned Dims = tensorDims(I);
  if (!Dims)
    return L.unsupported(I, "tensor dimensions");
  if (I.has(Modifier::Mbarrier_CompleteTx_Bytes) || (Ops.size() >= 2 && Ops[0].Elements.empty()))
    return lowerTensorLoad(L, I, Dims);
  if (I.has(Modifier::Im2col) || I.has(Modifier::Multicast_Cluster))
    return L.unsupported(I, "im2col or multicast store");
  uint32_t Op = I.has(Modifier::Reduce) ? reduceOp(I) : 1;
  if (I.has(Modifier::Reduce) && !Op)
    return L.unsupported(I, "reduction operation");
  if (Ops.size() < 2)
    return L.unsupported(I, "operands");
  // store/reduce: [tensorMap, coords], [srcMem]
  auto [Map, Coords] = mapAndCoords(L, Ops[0], Dims);
  if (!Map)
    return L.unsupported(I, "tensor coordinates");
  L.callHelper("ptxrt_tensor_tile", B.getInt32Ty(),
               {L.threadCtx(), Map, L.address(Ops[1], StateSpace::Shared), Coords, B.getInt32(Dims), B.getInt32(Op)});
  return true;
}

/// The helpers' RedKind of a reduction's type.
uint32_t reduceKind(ScalarType T) {
  switch (T) {
  case ScalarType::S32:
  case ScalarType::S64:
    return 1;
  case ScalarType::F16:
    return 2;
  case ScalarType::BF16:
    return 3;
  case ScalarType::F32:
    return 4;
  case ScalarType::F64:
    return 5;
  default:
    return 0;
  }
}

bool lowerBulkReduce(FunctionLowering &L, const ptx::Instruction &I) {
  // cp.reduce.async.bulk.dst.src.completion.op.type [dstMem], [srcMem], size{, [mbar]}{, policy}
  auto &B = L.b();
  auto &Ops = I.Operands;
  uint32_t Op = reduceOp(I);
  bool Half = I.type() == ScalarType::F16 || I.type() == ScalarType::BF16;
  if (!Op || Ops.size() < 3 || (I.has(Modifier::Noftz) && !Half))
    return L.unsupported(I, "reduction operation or type");
  bool ToShared = I.has(Modifier::Mbarrier_CompleteTx_Bytes);
  llvm::Value *Dst = L.address(Ops[0], ToShared ? StateSpace::Shared : StateSpace::Global);
  llvm::Value *Src = L.address(Ops[1], StateSpace::Shared);
  llvm::Value *Size = L.read(Ops[2], ScalarType::U32);
  L.callHelper(
      "ptxrt_bulk_reduce", B.getVoidTy(),
      {Dst, Src, Size, B.getInt32(ptx::bitWidth(I.type()) / 8), B.getInt32(reduceKind(I.type())), B.getInt32(Op)});
  if (ToShared && Ops.size() > 3)
    L.callHelper("ptxrt_mbar_complete_tx", B.getVoidTy(), {L.threadCtx(), L.address(Ops[3], StateSpace::Shared), Size});
  return true;
}

} // namespace

bool ptxforge::codegen::detail::lowerBulkCopy(FunctionLowering &L, const ptx::Instruction &I) {
  if (I.has(Modifier::Tensor))
    return lowerTensorCopy(L, I);
  return lowerBulkReduce(L, I);
}

namespace {

/// tensormap.replace's fields, the helper's numbering (exec/TensorMapHelpers.cpp ptxrt_tensormap_replace).
uint32_t replacedField(const ptx::Instruction &I) {
  static constexpr Modifier Fields[] = {Modifier::GlobalAddress, Modifier::Rank,
                                        Modifier::BoxDim,        Modifier::GlobalDim,
                                        Modifier::GlobalStride,  Modifier::ElementStride,
                                        Modifier::Elemtype,      Modifier::InterleaveLayout,
                                        Modifier::SwizzleMode,   Modifier::SwizzleAtomicity,
                                        Modifier::FillMode};
  for (uint32_t K = 0; K < std::size(Fields); ++K)
    if (I.has(Fields[K]))
      return K + 1;
  return 0;
}

StateSpace mapSpace(const ptx::Instruction &I) {
  return I.has(Modifier::Shared_Cta) ? StateSpace::Shared
         : I.has(Modifier::Global)   ? StateSpace::Global
                                     : StateSpace::Generic;
}

} // namespace

bool ptxforge::codegen::detail::lowerTensormap(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  if (I.has(Modifier::CpFenceproxy)) {
    // tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned [dst], [src], 128:
    // every lane of the warp copies the same bytes, then the release orders them before later tensor copies.
    if (Ops.size() != 3)
      return L.unsupported(I, "operands");
    B.CreateMemCpy(L.address(Ops[0], StateSpace::Global), llvm::MaybeAlign(1), L.address(Ops[1], StateSpace::Shared),
                   llvm::MaybeAlign(1), B.CreateZExt(L.read(Ops[2], ScalarType::U32), B.getInt64Ty()));
    B.CreateFence(llvm::AtomicOrdering::Release);
    return true;
  }
  uint32_t Field = replacedField(I);
  if (!I.has(Modifier::Replace) || !I.has(Modifier::Tile) || !Field)
    return L.unsupported(I, "tensormap form");
  // [addr], new_val, or [addr], ord, new_val for the per-dimension fields
  bool PerDim = Field >= 3 && Field <= 6;
  if (Ops.size() != 2u + PerDim)
    return L.unsupported(I, "operands");
  llvm::Value *Ord = PerDim ? L.read(Ops[1], ScalarType::U32) : B.getInt32(0);
  llvm::Value *Value = L.read(Ops.back(), ScalarType::U64);
  L.callHelper("ptxrt_tensormap_replace", B.getVoidTy(),
               {L.address(Ops[0], mapSpace(I)), B.getInt32(Field), Ord, Value});
  return true;
}
