// mma.sp and mma.sp::ordered_metadata: a warp's D = A * B + C with A structured-sparse (2:4 for 8- and 16-bit
// types, 1:2 for tf32), held as its non-zero half plus a metadata word per lane and a sparsity selector naming
// the lanes whose metadata counts. Like mma.sync it is a warp collective: each lane hands its fragments and
// metadata to exec/SparseMatrixHelpers.cpp, which expands the warp's A to the dense M x K matrix and runs the
// dense mma path's product on it (exec/MatrixCompute.h). The two forms differ only in what the ISA leaves
// undefined (unsorted indices), so they share one lowering.
#include "FamilyLowering.h"

namespace {

/// The runtime's shape code (exec/WarpCollectives.cpp shapeOf) of the dense product a sparse shape expands to,
/// with its A and B register counts for the type; 0 for a shape the ISA does not give mma.sp for that type.
struct SparseShape {
  unsigned Code = 0, NA = 0, NB = 0, MaxSelector = 0;
};

SparseShape sparseShape(const ptx::Instruction &I, ScalarType TA) {
  unsigned Bits = ptx::bitWidth(TA);
  bool Half = TA == ScalarType::F16 || TA == ScalarType::BF16, Tf32 = TA == ScalarType::TF32,
       Byte = Bits == 8 && TA != ScalarType::B8, Nibble = TA == ScalarType::S4 || TA == ScalarType::U4;
  // The selector names one lane of four (0-3), a pair (0-1) or, where all four hold metadata, must be 0.
  if (I.has(Modifier::M16n8k16))
    return Half ? SparseShape{1, 2, 2, 3} : Tf32 ? SparseShape{1, 4, 4, 1} : SparseShape{};
  if (I.has(Modifier::M16n8k8))
    return Tf32 ? SparseShape{2, 2, 2, 3} : SparseShape{};
  if (I.has(Modifier::M16n8k32))
    return Half ? SparseShape{3, 4, 4, 1} : Byte ? SparseShape{3, 2, 2, 1} : SparseShape{};
  if (I.has(Modifier::M16n8k64))
    return Byte ? SparseShape{9, 4, 4, 0} : Nibble ? SparseShape{9, 2, 2, 1} : SparseShape{};
  if (I.has(Modifier::M16n8k128))
    return Nibble ? SparseShape{12, 4, 4, 0} : SparseShape{};
  return {};
}

} // namespace

bool ptxforge::codegen::detail::lowerSparseMma(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  if (Ops.size() != 6 || I.typeCount() != 4 || !I.has(Modifier::Row) || !I.has(Modifier::Col))
    return L.unsupported(I, "mma.sp operands");
  ScalarType TD = I.type(0), TA = I.type(1), TB = I.type(2), TC = I.type(3);
  SparseShape Sh = sparseShape(I, TA);
  if (!Sh.Code || !matrixElementCode(TD) || !matrixElementCode(TB) || !matrixElementCode(TC))
    return L.unsupported(I, "mma.sp shape or types");
  if (Ops[5].Kind != ptx::OperandKind::Immediate || Ops[5].Bits > Sh.MaxSelector)
    return L.unsupported(I, "mma.sp sparsity selector");
  auto DE = operandElements(Ops[0]), AE = operandElements(Ops[1]), BE = operandElements(Ops[2]),
       CE = operandElements(Ops[3]);
  unsigned NC = ptx::bitWidth(TC) == 16 ? 2 : 4, ND = ptx::bitWidth(TD) == 16 ? 2 : 4;
  if (AE.size() != Sh.NA || BE.size() != Sh.NB || CE.size() != NC || DE.size() != ND)
    return L.unsupported(I, "mma.sp fragment sizes");
  uint32_t Code = Sh.Code | matrixElementCode(TA) << 4 | matrixElementCode(TB) << 8 | matrixElementCode(TC) << 12 |
                  matrixElementCode(TD) << 16 | (I.has(Modifier::Satfinite) ? 1u << 20 : 0) |
                  static_cast<uint32_t>(Ops[5].Bits) << 24;
  // In: the A, B and C registers in that order, 32 bits each; Out: the D registers.
  unsigned N = static_cast<unsigned>(AE.size() + BE.size() + CE.size());
  llvm::Value *In = scratchBuffer(L, B.getInt32Ty(), N);
  llvm::Value *Out = scratchBuffer(L, B.getInt32Ty(), ND, /*Slot=*/1);
  unsigned K = 0;
  for (const auto *Es : {&AE, &BE, &CE})
    for (const ptx::Operand *E : *Es)
      B.CreateStore(L.read(*E, ScalarType::B32), B.CreateConstGEP1_32(B.getInt32Ty(), In, K++));
  L.callHelper("ptxrt_mma_sp", B.getVoidTy(),
               {L.threadCtx(), B.getInt32(Code), In, L.read(Ops[4], ScalarType::B32), Out});
  for (unsigned J = 0; J < ND; ++J)
    L.write(*DE[J], ScalarType::B32, B.CreateLoad(B.getInt32Ty(), B.CreateConstGEP1_32(B.getInt32Ty(), Out, J)));
  return true;
}
