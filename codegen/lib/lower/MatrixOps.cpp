// Warp-wide matrix instructions: ldmatrix, stmatrix, mma.sync and wmma. They are warp collectives: each lane
// hands its row address / fragment registers to a runtime helper (exec/WarpCollectives.cpp) that gathers all
// 32 lanes and computes every lane's result at once. The registers travel in a buffer of the thread's (a scratch
// alloca), so a region-split block function (BarrierRegions.cpp) cuts at these calls as at a shuffle: each lane
// deposits the buffer's address and the dispatcher computes the warp in place (Markers.h: CutOperands::Buffer).
// wmma.load and wmma.store are no rendezvous: in this implementation's fragment layout each lane accesses its
// own elements.
#include "../Markers.h"
#include "FamilyLowering.h"
#include "ptxforge/codegen/MatrixElements.h"

using namespace ptxforge::codegen;

namespace {

/// Calls a matrix collective's helper (ctx, ...) and marks it as the cut Ops says.
void callMatrixCut(FunctionLowering &L, const char *Name, llvm::ArrayRef<llvm::Value *> Args, const CutOperands &Ops) {
  markRegionCut(llvm::cast<llvm::CallInst>(L.callHelper(Name, L.b().getVoidTy(), Args)), Ops);
}

ptx::StateSpace matrixSpace(const ptx::Instruction &I) {
  if (I.has(Modifier::Shared) || I.has(Modifier::Shared_Cta))
    return ptx::StateSpace::Shared;
  if (I.has(Modifier::Global))
    return ptx::StateSpace::Global;
  return ptx::StateSpace::Generic;
}

unsigned matrixCount(const ptx::Instruction &I) { return I.has(Modifier::X4) ? 4 : I.has(Modifier::X2) ? 2 : 1; }

bool lowerLdmatrix(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  if (!I.has(Modifier::M8n8) || I.type() != ScalarType::B16 || I.Operands.size() != 2)
    return L.unsupported(I, "only m8n8 .b16 shapes");
  unsigned Num = matrixCount(I);
  auto Dst = operandElements(I.Operands[0]);
  llvm::Value *Addr = L.address(I.Operands[1], matrixSpace(I));
  llvm::Value *Out = scratchBuffer(L, B.getInt32Ty(), 4);
  callMatrixCut(L, "ptxrt_ldmatrix", {L.threadCtx(), Addr, B.getInt32(Num * 2 + I.has(Modifier::Trans)), Out},
                {RCLdmatrix, /*Arg=*/2, /*Value=*/1, -1, -1, -1, -1, /*Buffer=*/3});
  for (unsigned K = 0; K < Num && K < Dst.size(); ++K)
    L.write(*Dst[K], ScalarType::B32, B.CreateLoad(B.getInt32Ty(), B.CreateConstGEP1_32(B.getInt32Ty(), Out, K)));
  return true;
}

bool lowerStmatrix(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  if (!I.has(Modifier::M8n8) || I.type() != ScalarType::B16 || I.Operands.size() != 2)
    return L.unsupported(I, "only m8n8 .b16 shapes");
  unsigned Num = matrixCount(I);
  auto Src = operandElements(I.Operands[1]);
  llvm::Value *Addr = L.address(I.Operands[0], matrixSpace(I));
  llvm::Value *In = scratchBuffer(L, B.getInt32Ty(), 4);
  for (unsigned K = 0; K < Num && K < Src.size(); ++K)
    B.CreateStore(L.read(*Src[K], ScalarType::B32), B.CreateConstGEP1_32(B.getInt32Ty(), In, K));
  callMatrixCut(L, "ptxrt_stmatrix", {L.threadCtx(), Addr, B.getInt32(Num * 2 + I.has(Modifier::Trans)), In},
                {RCStmatrix, /*Arg=*/2, /*Value=*/1, -1, -1, -1, -1, /*Buffer=*/3});
  return true;
}

/// Calls ptxrt_mma with the A, B, C fragments and writes D. Fragments of 32-bit registers (all but f64) travel as
/// 32-bit words (Code bit 21), an even number of them, which the runtime copies into its slot as they are; D
/// comes back in the same buffer, after them.
void emitMma(FunctionLowering &L, uint32_t Code, const ptx::Operand &D, const ptx::Operand &A, const ptx::Operand &Bop,
             const ptx::Operand &C, ScalarType TD, ScalarType TA, ScalarType TB, ScalarType TC) {
  auto &B = L.b();
  auto DE = operandElements(D), AE = operandElements(A), BE = operandElements(Bop), CE = operandElements(C);
  auto regType = [](ScalarType T) { return ptx::bitWidth(T) == 64 ? ScalarType::B64 : ScalarType::B32; };
  bool Words = regType(TD) == ScalarType::B32 && regType(TA) == ScalarType::B32 && regType(TB) == ScalarType::B32 &&
               regType(TC) == ScalarType::B32;
  llvm::Type *WordTy = Words ? B.getInt32Ty() : B.getInt64Ty();
  unsigned N = static_cast<unsigned>(AE.size() + BE.size() + CE.size()), InWords = Words ? (N + 1) / 2 * 2 : N;
  llvm::Value *In = scratchBuffer(L, WordTy, InWords + static_cast<unsigned>(DE.size()));
  llvm::Value *Out = B.CreateConstInBoundsGEP1_32(WordTy, In, InWords);
  unsigned K = 0;
  auto put = [&](const std::vector<const ptx::Operand *> &Es, ScalarType T) {
    for (const ptx::Operand *E : Es)
      B.CreateStore(B.CreateZExt(L.read(*E, regType(T)), WordTy), B.CreateConstGEP1_32(WordTy, In, K++));
  };
  put(AE, TA);
  put(BE, TB);
  put(CE, TC);
  uint32_t Counts = static_cast<uint32_t>(AE.size() | BE.size() << 8 | CE.size() << 16 | DE.size() << 24);
  callMatrixCut(L, "ptxrt_mma", {L.threadCtx(), B.getInt32(Code | (Words ? 1u << 21 : 0)), B.getInt32(Counts), In},
                {RCMma, /*Arg=*/1, -1, /*B=*/2, -1, -1, -1, /*Buffer=*/3});
  for (unsigned J = 0; J < DE.size(); ++J) {
    llvm::Value *V = B.CreateLoad(WordTy, B.CreateConstGEP1_32(WordTy, Out, J));
    ScalarType RT = regType(TD);
    L.write(*DE[J], RT, B.CreateZExtOrTrunc(V, B.getIntNTy(ptx::bitWidth(RT))));
  }
}

bool lowerMma(FunctionLowering &L, const ptx::Instruction &I) {
  if (I.Operands.size() != 4 || I.typeCount() != 4)
    return L.unsupported(I, "operands");
  ScalarType TD = I.type(0), TA = I.type(1), TB = I.type(2), TC = I.type(3);
  unsigned Shape;
  if (I.has(Modifier::M16n8k16))
    Shape = 1;
  else if (I.has(Modifier::M16n8k8))
    Shape = 2;
  else if (I.has(Modifier::M16n8k32))
    Shape = 3;
  else if (I.has(Modifier::M16n8k4))
    Shape = 4;
  else if (I.has(Modifier::M8n8k4) && TA == ScalarType::F64)
    Shape = 5;
  else if (I.has(Modifier::M16n8k64))
    Shape = 9;
  else
    return L.unsupported(I, "mma shape");
  if (!matrixElementCode(TD) || !matrixElementCode(TA) || !matrixElementCode(TB) || !matrixElementCode(TC) ||
      !I.has(Modifier::Row) || !I.has(Modifier::Col))
    return L.unsupported(I, "mma types");
  uint32_t Code = Shape | matrixElementCode(TA) << 4 | matrixElementCode(TB) << 8 | matrixElementCode(TC) << 12 |
                  matrixElementCode(TD) << 16 | (I.has(Modifier::Satfinite) ? 1u << 20 : 0);
  emitMma(L, Code, I.Operands[0], I.Operands[1], I.Operands[2], I.Operands[3], TD, TA, TB, TC);
  return true;
}

/// A wmma shape: its runtime code (exec/WarpCollectives.cpp shapeOf) and dimensions.
struct WmmaShape {
  unsigned Code = 0, M = 0, N = 0, K = 0;
};

WmmaShape wmmaShape(const ptx::Instruction &I) {
  if (I.has(Modifier::M16n16k16))
    return {6, 16, 16, 16};
  if (I.has(Modifier::M32n8k16))
    return {7, 32, 8, 16};
  if (I.has(Modifier::M8n32k16))
    return {8, 8, 32, 16};
  if (I.has(Modifier::M16n16k8)) // .tf32 inputs
    return {10, 16, 16, 8};
  if (I.has(Modifier::M8n8k4)) // .f64
    return {11, 8, 8, 4};
  return {};
}

bool lowerWmma(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  WmmaShape Sh = wmmaShape(I);
  unsigned Shape = Sh.Code;
  if (!Shape)
    return L.unsupported(I, "wmma shape");
  // f64 products round once per element in the runtime's double arithmetic: round to nearest only.
  if (I.has(Modifier::Rz) || I.has(Modifier::Rm) || I.has(Modifier::Rp))
    return L.unsupported(I, "wmma rounding other than .rn");
  auto &Ops = I.Operands;
  if (I.has(Modifier::Mma)) {
    ScalarType TD, TA, TB, TC;
    if (I.typeCount() == 2) {
      TD = I.type(0), TC = I.type(1), TA = TB = ScalarType::F16;
    } else if (I.typeCount() == 4) {
      TD = I.type(0), TA = I.type(1), TB = I.type(2), TC = I.type(3);
    } else {
      return L.unsupported(I, "wmma types");
    }
    if (Ops.size() != 4 || !matrixElementCode(TD) || !matrixElementCode(TA) || !matrixElementCode(TC))
      return L.unsupported(I, "wmma types");
    uint32_t Code = Shape | matrixElementCode(TA) << 4 | matrixElementCode(TB) << 8 | matrixElementCode(TC) << 12 |
                    matrixElementCode(TD) << 16 | (I.has(Modifier::Satfinite) ? 1u << 20 : 0) | 1u << 23;
    emitMma(L, Code, Ops[0], Ops[1], Ops[2], Ops[3], TD, TA, TB, TC);
    return true;
  }
  bool Store = I.has(Modifier::Store);
  unsigned Which = Store ? 3 : I.has(Modifier::A) ? 0 : I.has(Modifier::B) ? 1 : 2;
  ScalarType T = I.type();
  if (!matrixElementCode(T) || Ops.size() < 2)
    return L.unsupported(I, "wmma type");
  const ptx::Operand &Frag = Store ? Ops[1] : Ops[0];
  const ptx::Operand &Addr = Store ? Ops[0] : Ops[1];
  auto Regs = operandElements(Frag);
  bool ColMajor = I.has(Modifier::Col);
  // Default leading dimension: the matrix's own row (or column) length.
  unsigned M = Sh.M, N = Sh.N, K = Sh.K;
  unsigned Rows = Which == 0 ? M : Which == 1 ? K : M, Cols = Which == 0 ? K : N;
  llvm::Value *Stride = Ops.size() > 2 ? L.read(Ops[2], ScalarType::U32) : B.getInt32(ColMajor ? Rows : Cols);
  ptx::StateSpace S = I.has(Modifier::Shared) || I.has(Modifier::Shared_Cta) ? ptx::StateSpace::Shared
                      : I.has(Modifier::Global)                              ? ptx::StateSpace::Global
                                                                             : ptx::StateSpace::Generic;
  llvm::Value *Ptr = L.address(Addr, S);
  ScalarType RT = ptx::bitWidth(T) == 64 ? ScalarType::B64 : ScalarType::B32;
  llvm::Value *Buf = scratchBuffer(L, B.getInt64Ty(), static_cast<unsigned>(Regs.size()));
  if (Store)
    for (unsigned J = 0; J < Regs.size(); ++J)
      B.CreateStore(B.CreateZExt(L.read(*Regs[J], RT), B.getInt64Ty()), B.CreateConstGEP1_32(B.getInt64Ty(), Buf, J));
  L.callHelper("ptxrt_wmma_ldst", B.getVoidTy(),
               {L.threadCtx(), B.getInt32(Shape), B.getInt32(Which), B.getInt32(matrixElementCode(T)),
                B.getInt32(ColMajor), Ptr, Stride, B.getInt32(Regs.size()), Buf});
  if (!Store)
    for (unsigned J = 0; J < Regs.size(); ++J) {
      llvm::Value *V = B.CreateLoad(B.getInt64Ty(), B.CreateConstGEP1_32(B.getInt64Ty(), Buf, J));
      L.write(*Regs[J], RT, B.CreateTrunc(V, B.getIntNTy(ptx::bitWidth(RT))));
    }
  return true;
}

} // namespace

bool ptxforge::codegen::detail::lowerMatrix(FunctionLowering &L, const ptx::Instruction &I) {
  switch (I.Op) {
  case Opcode::Ldmatrix:
    return lowerLdmatrix(L, I);
  case Opcode::Stmatrix:
    return lowerStmatrix(L, I);
  case Opcode::Movmatrix: {
    if (!I.has(Modifier::M8n8) || !I.has(Modifier::Trans) || I.Operands.size() != 2)
      return L.unsupported(I, "only m8n8.trans.b16");
    auto &B = L.b();
    llvm::Value *R =
        L.callHelper("ptxrt_movmatrix", B.getInt32Ty(), {L.threadCtx(), L.read(I.Operands[1], ScalarType::B32)});
    markRegionCut(llvm::cast<llvm::CallInst>(R), {RCMovmatrix, -1, /*Value=*/1});
    L.write(I.Operands[0], ScalarType::B32, R);
    return true;
  }
  case Opcode::Mma:
    return I.has(Modifier::Sp) || I.has(Modifier::Sp_OrderedMetadata) ? lowerSparseMma(L, I) : lowerMma(L, I);
  case Opcode::Wmma:
    return lowerWmma(L, I);
  default:
    return false;
  }
}

unsigned ptxforge::codegen::detail::matrixElementCode(ScalarType T) {
  switch (T) {
  case ScalarType::F16:
    return MEF16;
  case ScalarType::BF16:
    return MEBF16;
  case ScalarType::TF32:
    return METF32;
  case ScalarType::F32:
    return MEF32;
  case ScalarType::F64:
    return MEF64;
  case ScalarType::S8:
    return MES8;
  case ScalarType::U8:
    return MEU8;
  case ScalarType::S32:
    return MES32;
  case ScalarType::S4:
    return MES4;
  case ScalarType::U4:
    return MEU4;
  case ScalarType::E4M3:
    return MEE4M3;
  case ScalarType::E5M2:
    return MEE5M2;
  default:
    return MENone;
  }
}
