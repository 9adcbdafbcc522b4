// Warp-wide matrix instructions: ldmatrix, stmatrix, mma.sync and wmma. They are warp collectives: each lane
// hands its row address / fragment registers to a runtime helper (exec/WarpCollectives.cpp; sm_120a's mma.sync
// .kind::f8f6f4 and block-scaled kinds exec/ScaledMatrixHelpers.cpp) that gathers all 32 lanes and computes every
// lane's result at once. The registers travel in a buffer of the thread's (a scratch alloca), so a region-split
// block function (BarrierRegions.cpp) cuts at these calls as at a shuffle: each lane deposits the buffer's
// address and the dispatcher computes the warp in place (Markers.h: CutOperands::Buffer). The sm_100/sm_120a
// forms meet on fibers only (isFiberOnlyMatrixForm). wmma.load and wmma.store are no rendezvous: in this
// implementation's fragment layout each lane accesses its own elements.
#include "../Markers.h"
#include "../WarpRendezvous.h"
#include "FamilyLowering.h"
#include "ptxforge/codegen/MatrixElements.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"

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

/// ldmatrix's sm_100 forms: .m16n16.trans.b8 (Form 0) and .m8n16 .b8x16.b4x16_p64 / .b6x16_p32 (Forms 1 and 2;
/// exec/WarpCollectives.cpp ptxrt_ldmatrix_b8 places the bytes).
bool lowerLdmatrixB8(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  unsigned Num = matrixCount(I), Form;
  if (I.has(Modifier::M16n16) && I.has(Modifier::Trans) && I.type() == ScalarType::B8 && Num <= 2)
    Form = 0;
  else if (I.has(Modifier::M8n16) && I.has(Modifier::B8x16) && !I.has(Modifier::Trans) &&
           (I.has(Modifier::B4x16P64) || I.has(Modifier::B6x16P32)))
    Form = I.has(Modifier::B4x16P64) ? 1 : 2;
  else
    return L.unsupported(I, "ldmatrix shape or types");
  unsigned Regs = Form == 0 ? 2 * Num : Num;
  auto Dst = operandElements(I.Operands[0]);
  if (I.Operands.size() != 2 || Dst.size() != Regs)
    return L.unsupported(I, "ldmatrix operands");
  llvm::Value *Addr = L.address(I.Operands[1], matrixSpace(I));
  llvm::Value *Out = scratchBuffer(L, B.getInt32Ty(), 4);
  L.callHelper("ptxrt_ldmatrix_b8", B.getVoidTy(), {L.threadCtx(), Addr, B.getInt32(Form), B.getInt32(Num), Out});
  for (unsigned K = 0; K < Regs; ++K)
    L.write(*Dst[K], ScalarType::B32, B.CreateLoad(B.getInt32Ty(), B.CreateConstGEP1_32(B.getInt32Ty(), Out, K)));
  return true;
}

bool lowerLdmatrix(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  if (isFiberOnlyMatrixForm(I))
    return lowerLdmatrixB8(L, I);
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

/// stmatrix: .m8n8 .b16 and sm_100's .m16n8.trans.b8 (exec/WarpCollectives.cpp ptxrt_stmatrix_b8).
bool lowerStmatrix(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  bool B8 = I.has(Modifier::M16n8) && I.has(Modifier::Trans) && I.type() == ScalarType::B8;
  if ((!B8 && (!I.has(Modifier::M8n8) || I.type() != ScalarType::B16)) || I.Operands.size() != 2)
    return L.unsupported(I, "stmatrix shape, type or operands");
  unsigned Num = matrixCount(I);
  auto Src = operandElements(I.Operands[1]);
  if (Src.size() != Num)
    return L.unsupported(I, "stmatrix operands");
  llvm::Value *Addr = L.address(I.Operands[0], matrixSpace(I));
  llvm::Value *In = scratchBuffer(L, B.getInt32Ty(), 4);
  for (unsigned K = 0; K < Num; ++K)
    B.CreateStore(L.read(*Src[K], ScalarType::B32), B.CreateConstGEP1_32(B.getInt32Ty(), In, K));
  if (B8)
    L.callHelper("ptxrt_stmatrix_b8", B.getVoidTy(), {L.threadCtx(), Addr, B.getInt32(Num), In});
  else
    callMatrixCut(L, "ptxrt_stmatrix", {L.threadCtx(), Addr, B.getInt32(Num * 2 + I.has(Modifier::Trans)), In},
                  {RCStmatrix, /*Arg=*/2, /*Value=*/1, -1, -1, -1, -1, /*Buffer=*/3});
  return true;
}

/// One product's runtime code (Code bit 21 aside) and operands.
struct MmaForm {
  uint32_t Code = 0;
  const ptx::Operand *D = nullptr, *A = nullptr, *B = nullptr, *C = nullptr;
  ScalarType TD = ScalarType::None, TA = ScalarType::None, TB = ScalarType::None, TC = ScalarType::None;
};

/// The registers a fragment of element type T travels in: 64-bit for f64, else 32-bit.
ScalarType fragmentRegister(ScalarType T) { return ptx::bitWidth(T) == 64 ? ScalarType::B64 : ScalarType::B32; }

/// Whether every fragment travels in 32-bit registers (Code bit 21: the runtime takes them as 32-bit words).
bool wordFragments(const MmaForm &F) {
  return llvm::all_of(std::initializer_list<ScalarType>{F.TD, F.TA, F.TB, F.TC},
                      [](ScalarType T) { return fragmentRegister(T) == ScalarType::B32; });
}

/// NA | NB << 8 | NC << 16 | ND << 24, the register counts ptxrt_mma takes.
uint32_t mmaCounts(const MmaForm &F) {
  return static_cast<uint32_t>(operandElements(*F.A).size() | operandElements(*F.B).size() << 8 |
                               operandElements(*F.C).size() << 16 | operandElements(*F.D).size() << 24);
}

/// Calls ptxrt_mma with the A, B, C fragments and writes D. Fragments of 32-bit registers (all but f64) travel as
/// 32-bit words (Code bit 21), an even number of them, which the runtime copies into its slot as they are; D
/// comes back in the same buffer, after them.
void emitMma(FunctionLowering &L, const MmaForm &F) {
  auto &B = L.b();
  auto DE = operandElements(*F.D), AE = operandElements(*F.A), BE = operandElements(*F.B), CE = operandElements(*F.C);
  bool Words = wordFragments(F);
  llvm::Type *WordTy = Words ? B.getInt32Ty() : B.getInt64Ty();
  unsigned N = static_cast<unsigned>(AE.size() + BE.size() + CE.size()), InWords = Words ? (N + 1) / 2 * 2 : N;
  llvm::Value *In = scratchBuffer(L, WordTy, InWords + static_cast<unsigned>(DE.size()));
  llvm::Value *Out = B.CreateConstInBoundsGEP1_32(WordTy, In, InWords);
  unsigned K = 0;
  auto put = [&](const std::vector<const ptx::Operand *> &Es, ScalarType T) {
    for (const ptx::Operand *E : Es)
      B.CreateStore(B.CreateZExt(L.read(*E, fragmentRegister(T)), WordTy), B.CreateConstGEP1_32(WordTy, In, K++));
  };
  put(AE, F.TA);
  put(BE, F.TB);
  put(CE, F.TC);
  callMatrixCut(L, "ptxrt_mma",
                {L.threadCtx(), B.getInt32(F.Code | (Words ? 1u << 21 : 0)), B.getInt32(mmaCounts(F)), In},
                {RCMma, /*Arg=*/1, -1, /*B=*/2, -1, -1, -1, /*Buffer=*/3});
  ScalarType RT = fragmentRegister(F.TD);
  for (unsigned J = 0; J < DE.size(); ++J) {
    llvm::Value *V = B.CreateLoad(WordTy, B.CreateConstGEP1_32(WordTy, Out, J));
    L.write(*DE[J], RT, B.CreateZExtOrTrunc(V, B.getIntNTy(ptx::bitWidth(RT))));
  }
}

/// mma.sync's product; Why says what is unsupported where there is none.
std::optional<MmaForm> mmaSyncForm(const ptx::Instruction &I, const char *&Why) {
  Why = "operands";
  if (I.Operands.size() != 4 || I.typeCount() != 4)
    return std::nullopt;
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
    return Why = "mma shape", std::nullopt;
  if (!matrixElementCode(TD) || !matrixElementCode(TA) || !matrixElementCode(TB) || !matrixElementCode(TC) ||
      !I.has(Modifier::Row) || !I.has(Modifier::Col))
    return Why = "mma types", std::nullopt;
  uint32_t Code = Shape | matrixElementCode(TA) << 4 | matrixElementCode(TB) << 8 | matrixElementCode(TC) << 12 |
                  matrixElementCode(TD) << 16 | (I.has(Modifier::Satfinite) ? 1u << 20 : 0);
  return MmaForm{Code, &I.Operands[0], &I.Operands[1], &I.Operands[2], &I.Operands[3], TD, TA, TB, TC};
}

bool lowerMma(FunctionLowering &L, const ptx::Instruction &I) {
  const char *Why = nullptr;
  std::optional<MmaForm> F = mmaSyncForm(I, Why);
  if (!F)
    return L.unsupported(I, Why);
  emitMma(L, *F);
  return true;
}

/// The helper's code of an A or B element type (MatrixElements.h ScaledElement); -1 for others.
int scaledElement(ScalarType T) {
  switch (T) {
  case ScalarType::E4M3:
    return SEE4M3;
  case ScalarType::E5M2:
    return SEE5M2;
  case ScalarType::E3M2:
    return SEE3M2;
  case ScalarType::E2M3:
    return SEE2M3;
  case ScalarType::E2M1:
    return SEE2M1;
  default:
    return -1;
  }
}

/// The scale vector's length the instruction names or defaults to (mxf8f6f4 1X, mxf4 2X); 0 where the kind and
/// length do not go together.
unsigned scaleVector(const ptx::Instruction &I, bool Packed) {
  unsigned Named = I.has(Modifier::ScaleVec_1X)   ? 1
                   : I.has(Modifier::ScaleVec_2X) ? 2
                   : I.has(Modifier::ScaleVec_4X) ? 4
                                                  : 0;
  if (I.has(Modifier::Kind_Mxf8f6f4))
    return Named <= 1 && !Packed ? 1 : 0;
  if (I.has(Modifier::Kind_Mxf4))
    return (Named == 0 || Named == 2) && Packed ? 2 : 0;
  return Packed && (Named == 2 || Named == 4) ? Named : 0; // mxf4nvf4 names its length
}

/// Whether Op is a {byte-id, thread-id} pair whose constants are ones ptxas takes: byte-id 0-3 with scale_vec::1X,
/// 0 or 2 with 2X, 0 with 4X; thread-id up to MaxThread (A 1, B 3).
bool selectorsInRange(const ptx::Instruction &I, const ptx::Operand &Op, uint64_t MaxThread) {
  auto Es = operandElements(Op);
  if (Es.size() != 2)
    return false;
  unsigned Vec = scaleVector(I, I.has(Modifier::Kind_Mxf4) || I.has(Modifier::Kind_Mxf4nvf4));
  auto constant = [](const ptx::Operand *E) { return E->Kind == ptx::OperandKind::Immediate; };
  if (constant(Es[0]) && (!Vec || Es[0]->Bits > 3 || Es[0]->Bits % Vec))
    return false;
  return !constant(Es[1]) || Es[1]->Bits <= MaxThread;
}

/// The selectors {byte-id, thread-id} of operand Op as bits 0-7 and 8-15.
llvm::Value *selectors(FunctionLowering &L, const ptx::Operand &Op) {
  auto &B = L.b();
  auto Es = operandElements(Op);
  llvm::Value *Byte = B.CreateZExt(L.read(*Es[0], ScalarType::U16), B.getInt32Ty());
  llvm::Value *Tid = B.CreateZExt(L.read(*Es[1], ScalarType::U16), B.getInt32Ty());
  return B.CreateOr(B.CreateAnd(Byte, 0xff), B.CreateShl(B.CreateAnd(Tid, 0xff), 8));
}

/// mma.sync .kind::f8f6f4 and the block-scaled kinds (sm_120a): see exec/ScaledMatrixHelpers.cpp. In: A's 4, B's 2
/// and C's 4 (f16: 2) registers; Out: D's.
bool lowerScaledMma(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  bool Scaled = I.has(Modifier::BlockScale);
  if (Ops.size() != (Scaled ? 8u : 4u) || I.typeCount() != (Scaled ? 5u : 4u) || !I.has(Modifier::Row) ||
      !I.has(Modifier::Col))
    return L.unsupported(I, "mma kind operands");
  ScalarType TD = I.type(0), TA = I.type(1), TB = I.type(2), TC = I.type(3);
  int EA = scaledElement(TA), EB = scaledElement(TB);
  bool Packed = I.has(Modifier::Kind_Mxf4) || I.has(Modifier::Kind_Mxf4nvf4);
  // f16 C and D only without scales (ptxas refuses them with block_scale).
  bool F16 = TD == ScalarType::F16 && TC == ScalarType::F16 && !Scaled;
  if (((TD != ScalarType::F32 || TC != ScalarType::F32) && !F16) || EA < 0 || EB < 0 ||
      (Packed && (EA != SEE2M1 || EB != SEE2M1)) || !I.has(Packed ? Modifier::M16n8k64 : Modifier::M16n8k32))
    return L.unsupported(I, "mma kind shape or types");
  uint32_t Code = uint32_t(EA) | uint32_t(EB) << 4 | (Packed ? SmPackedFp4 : 0) | (F16 ? SmF16 : 0);
  unsigned NCD = F16 ? 2 : 4;
  if (Scaled) {
    unsigned Vec = scaleVector(I, Packed);
    // ue8m0 scales, but ue4m3 ones for mxf4nvf4's scale_vec::4X (ptxas takes no other pairing).
    bool Ue4m3 = Vec == 4;
    if (!Vec || I.type(4) != (Ue4m3 ? ScalarType::UE4M3 : ScalarType::UE8M0))
      return L.unsupported(I, "mma block_scale kind, scale_vec or scale type");
    Code |= Vec << SmScaleVecShift | (Ue4m3 ? uint32_t(SmUe4m3) : 0u);
  } else if (!I.has(Modifier::Kind_F8f6f4) || Packed) {
    return L.unsupported(I, "mma kind without block_scale");
  }
  auto DE = operandElements(Ops[0]), AE = operandElements(Ops[1]), BE = operandElements(Ops[2]),
       CE = operandElements(Ops[3]);
  if (AE.size() != 4 || BE.size() != 2 || CE.size() != NCD || DE.size() != NCD ||
      (Scaled && (!selectorsInRange(I, Ops[5], 1) || !selectorsInRange(I, Ops[7], 3))))
    return L.unsupported(I, "mma kind fragments or selectors");
  llvm::Value *In = scratchBuffer(L, B.getInt32Ty(), 10);
  llvm::Value *Out = scratchBuffer(L, B.getInt32Ty(), 4, /*Slot=*/1);
  unsigned K = 0;
  for (const auto *Es : {&AE, &BE, &CE})
    for (const ptx::Operand *E : *Es)
      B.CreateStore(L.read(*E, ScalarType::B32), B.CreateConstGEP1_32(B.getInt32Ty(), In, K++));
  llvm::Value *Zero = B.getInt32(0);
  llvm::Value *Sel = Scaled ? B.CreateOr(selectors(L, Ops[5]), B.CreateShl(selectors(L, Ops[7]), 16)) : Zero;
  llvm::Value *ScaleA = Scaled ? L.read(Ops[4], ScalarType::B32) : Zero;
  llvm::Value *ScaleB = Scaled ? L.read(Ops[6], ScalarType::B32) : Zero;
  L.callHelper("ptxrt_mma_scaled", B.getVoidTy(), {L.threadCtx(), B.getInt32(Code), Sel, In, ScaleA, ScaleB, Out});
  for (unsigned J = 0; J < NCD; ++J)
    L.write(*DE[J], ScalarType::B32, B.CreateLoad(B.getInt32Ty(), B.CreateConstGEP1_32(B.getInt32Ty(), Out, J)));
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

/// wmma.mma's product; Why says what is unsupported where there is none.
std::optional<MmaForm> wmmaForm(const ptx::Instruction &I, const char *&Why) {
  unsigned Shape = wmmaShape(I).Code;
  Why = "wmma shape";
  if (!Shape)
    return std::nullopt;
  // f64 products round once per element in the runtime's double arithmetic: round to nearest only.
  Why = "wmma rounding other than .rn";
  if (I.has(Modifier::Rz) || I.has(Modifier::Rm) || I.has(Modifier::Rp))
    return std::nullopt;
  Why = "wmma types";
  ScalarType TD, TA, TB, TC;
  if (I.typeCount() == 2)
    TD = I.type(0), TC = I.type(1), TA = TB = ScalarType::F16;
  else if (I.typeCount() == 4)
    TD = I.type(0), TA = I.type(1), TB = I.type(2), TC = I.type(3);
  else
    return std::nullopt;
  if (I.Operands.size() != 4 || !matrixElementCode(TD) || !matrixElementCode(TA) || !matrixElementCode(TC))
    return std::nullopt;
  uint32_t Code = Shape | matrixElementCode(TA) << 4 | matrixElementCode(TB) << 8 | matrixElementCode(TC) << 12 |
                  matrixElementCode(TD) << 16 | (I.has(Modifier::Satfinite) ? 1u << 20 : 0) | 1u << 23;
  return MmaForm{Code, &I.Operands[0], &I.Operands[1], &I.Operands[2], &I.Operands[3], TD, TA, TB, TC};
}

/// A wmma.load or wmma.store: an R x C fragment (Which: 0 A, 1 B, 2 C, 3 D) of element type T in memory of
/// layout ColMajor, in NRegs registers.
struct FragmentAccess {
  unsigned Rows, Cols, Which;
  ScalarType T;
  bool ColMajor, Store;
  unsigned NRegs;
};

/// ptxrt_wmma_run's layout code for an access in which each lane's registers are one run of consecutive memory:
/// the fragment's order (exec/WarpCollectives.cpp wmmaPos: lane l holds elements l*E... row-major, B
/// column-major) is memory's, and a lane's E elements lie in one row (column). Its bits: E, log2 of the
/// elements, of the line length and of the element bytes, the register count, 64-bit registers, a store.
/// Nothing for other accesses (ptxrt_wmma_ldst's general walk takes them).
std::optional<uint32_t> runLayout(const FragmentAccess &A) {
  unsigned Bits = ptx::bitWidth(A.T);
  bool FragColMajor = A.Which == 1;
  unsigned Total = A.Rows * A.Cols, Len = FragColMajor ? A.Rows : A.Cols;
  unsigned E = Bits >= 32 ? A.NRegs : A.NRegs * (32 / std::max(Bits, 1u));
  if (A.ColMajor != FragColMajor || Bits < 8 || !A.NRegs || A.NRegs > 31 || !E || E > 127 || Len % E ||
      (32 * E) % Total || Total % E || !llvm::isPowerOf2_32(Total) || !llvm::isPowerOf2_32(Len))
    return std::nullopt;
  return E | llvm::Log2_32(Total) << 8 | llvm::Log2_32(Len) << 12 | llvm::Log2_32(Bits / 8) << 16 | A.NRegs << 18 |
         (Bits == 64 ? 1u << 23 : 0) | (A.Store ? 1u << 24 : 0);
}

/// A wmma.load's or wmma.store's fragment (Which 0 A, 1 B, 2 C, 3 D), its registers and its address operand;
/// Rows 0 for a shape or type the lowering does not take.
struct WmmaAccess {
  WmmaShape Shape;
  FragmentAccess Frag{};
  std::vector<const ptx::Operand *> Regs;
  const ptx::Operand *Addr = nullptr;
};

WmmaAccess wmmaAccess(const ptx::Instruction &I) {
  WmmaAccess R;
  R.Shape = wmmaShape(I);
  ScalarType T = I.type();
  if (!R.Shape.Code || !matrixElementCode(T) || I.Operands.size() < 2)
    return R;
  bool Store = I.has(Modifier::Store);
  unsigned Which = Store ? 3 : I.has(Modifier::A) ? 0 : I.has(Modifier::B) ? 1 : 2;
  R.Regs = operandElements(Store ? I.Operands[1] : I.Operands[0]);
  R.Addr = Store ? &I.Operands[0] : &I.Operands[1];
  unsigned Rows = Which == 0 ? R.Shape.M : Which == 1 ? R.Shape.K : R.Shape.M;
  unsigned Cols = Which == 0 ? R.Shape.K : R.Shape.N;
  R.Frag = {Rows, Cols, Which, T, I.has(Modifier::Col), Store, static_cast<unsigned>(R.Regs.size())};
  return R;
}

/// The access's address and leading dimension in elements (by default the matrix's own row or column length).
std::pair<llvm::Value *, llvm::Value *> wmmaAddress(FunctionLowering &L, const ptx::Instruction &I,
                                                    const WmmaAccess &A) {
  auto &B = L.b();
  const FragmentAccess &F = A.Frag;
  llvm::Value *Stride =
      I.Operands.size() > 2 ? L.read(I.Operands[2], ScalarType::U32) : B.getInt32(F.ColMajor ? F.Rows : F.Cols);
  return {L.address(*A.Addr, matrixSpace(I)), Stride};
}

bool lowerWmma(FunctionLowering &L, const ptx::Instruction &I) {
  if (I.has(Modifier::Mma)) {
    const char *Why = nullptr;
    std::optional<MmaForm> F = wmmaForm(I, Why);
    if (!F)
      return L.unsupported(I, Why);
    emitMma(L, *F);
    return true;
  }
  auto &B = L.b();
  WmmaAccess A = wmmaAccess(I);
  if (!A.Shape.Code)
    return L.unsupported(I, "wmma shape");
  if (!A.Frag.Rows)
    return L.unsupported(I, "wmma type");
  const FragmentAccess &F = A.Frag;
  auto [Ptr, Stride] = wmmaAddress(L, I, A);
  ScalarType T = F.T, RT = fragmentRegister(T);
  bool Store = F.Store;
  auto &Regs = A.Regs;
  llvm::Value *Buf = scratchBuffer(L, B.getInt64Ty(), static_cast<unsigned>(Regs.size()));
  if (Store)
    for (unsigned J = 0; J < Regs.size(); ++J)
      B.CreateStore(B.CreateZExt(L.read(*Regs[J], RT), B.getInt64Ty()), B.CreateConstGEP1_32(B.getInt64Ty(), Buf, J));
  // A call even for a run: inline loads and stores through the fragment's pointer more than doubled a GEMM
  // module's optimization time (aliasing queries, and thread loops vectorized across lanes).
  if (std::optional<uint32_t> Run = runLayout(F))
    L.callHelper("ptxrt_wmma_run", B.getVoidTy(), {L.ctxField(TCLaneId), B.getInt32(*Run), Stride, Ptr, Buf});
  else
    L.callHelper("ptxrt_wmma_ldst", B.getVoidTy(),
                 {L.threadCtx(), B.getInt32(A.Shape.Code), B.getInt32(F.Which), B.getInt32(matrixElementCode(T)),
                  B.getInt32(F.ColMajor), Ptr, Stride, B.getInt32(Regs.size()), Buf});
  if (!Store)
    for (unsigned J = 0; J < Regs.size(); ++J) {
      llvm::Value *V = B.CreateLoad(B.getInt64Ty(), B.CreateConstGEP1_32(B.getInt64Ty(), Buf, J));
      L.write(*Regs[J], RT, B.CreateTrunc(V, B.getIntNTy(ptx::bitWidth(RT))));
    }
  return true;
}

/// The product I is, whichever instruction.
std::optional<MmaForm> productForm(const ptx::Instruction &I, const char *&Why) {
  return I.Op == Opcode::Wmma ? wmmaForm(I, Why) : mmaSyncForm(I, Why);
}

/// A batch's registers, each in one 64-bit word of the lane's buffer, and the descriptor ptxrt_mma_batch reads:
/// {count, then per product: code, counts, the words of its A, B, C and D registers}, then markLiveOut's words.
struct BatchLayout {
  struct Word {
    const ptx::Operand *Reg; ///< null: a taken-over load's address or stride
    ScalarType T;
    bool LiveIn = false, Written = false; ///< read before any product writes it; written by a product
    bool LiveOut = true; ///< its value may be read after the batch (markLiveOut)
    bool Loaded = false; ///< a taken-over load fills it: the lanes' registers never hold it
  };
  std::vector<Word> Words;
  std::vector<uint32_t> Desc;
  llvm::DenseMap<ptx::RegId, unsigned> WordOf;
  /// The taken-over loads' part of the descriptor: per load, its run layout, address and stride words, register
  /// count and register words.
  std::vector<uint32_t> LoadDesc;
  unsigned NLoads = 0;

  /// Two words for a taken-over load's address and stride; returns the first. All loads' come first, together:
  /// the runtime reads them from every lane, and its registers' words only where the lanes' addresses differ.
  unsigned addAddress() {
    Words.push_back({nullptr, ScalarType::B64});
    Words.push_back({nullptr, ScalarType::B64});
    return static_cast<unsigned>(Words.size() - 2);
  }
  /// A load the batch takes over, its address and stride in PtrWord and the next.
  void addLoad(const WmmaAccess &A, uint32_t Run, unsigned PtrWord) {
    LoadDesc.insert(LoadDesc.end(), {Run, PtrWord, PtrWord + 1, static_cast<uint32_t>(A.Regs.size())});
    for (const ptx::Operand *E : A.Regs) {
      auto [It, New] = WordOf.try_emplace(E->Reg, static_cast<unsigned>(Words.size()));
      if (New)
        Words.push_back({E, fragmentRegister(A.Frag.T)});
      Words[It->second].Loaded = true;
      LoadDesc.push_back(It->second);
    }
    ++NLoads;
  }

  void add(const MmaForm &F) {
    Desc.push_back(F.Code | (wordFragments(F) ? 1u << 21 : 0));
    Desc.push_back(mmaCounts(F));
    for (auto [Op, T] : {std::pair(F.A, F.TA), std::pair(F.B, F.TB), std::pair(F.C, F.TC)})
      for (const ptx::Operand *E : operandElements(*Op))
        use(E, T, /*Write=*/false);
    for (const ptx::Operand *E : operandElements(*F.D))
      use(E, F.TD, /*Write=*/true);
  }

private:
  void use(const ptx::Operand *E, ScalarType T, bool Write) {
    auto [It, New] = WordOf.try_emplace(E->Reg, static_cast<unsigned>(Words.size()));
    if (New)
      Words.push_back({E, fragmentRegister(T)});
    Word &W = Words[It->second];
    W.LiveIn |= !Write && !W.Written;
    W.Written |= Write;
    Desc.push_back(It->second);
  }
};

/// Calls Fn(register) for every register Op names (an address's base, a vector's elements, a pair's two).
template <class FnT> void forRegisters(const ptx::Operand &Op, FnT &&Fn) {
  if (Op.Reg != ptx::NoReg)
    Fn(Op.Reg);
  if (Op.Reg2 != ptx::NoReg)
    Fn(Op.Reg2);
  for (const ptx::Operand &E : Op.Elements)
    forRegisters(E, Fn);
}

/// Clears LiveOut for the words a product writes whose registers no instruction outside the batch names and no
/// product reads before one writes them: a GEMM's accumulator chained from one unrolled k step to the next
/// (nvcc gives each step's D registers of their own) dies in the batch, and the runtime need not put it back
/// in the lanes' registers. Then appends {word count, a bit per word: dead after the batch} to the descriptor.
// One pass over F's instructions per batch: batches are few (each ends at a branch or a barrier).
void markLiveOut(const ptx::Function &F, llvm::ArrayRef<const ptx::Instruction *> Products, BatchLayout &Layout) {
  llvm::SmallPtrSet<const ptx::Instruction *, 32> Members(Products.begin(), Products.end());
  for (BatchLayout::Word &W : Layout.Words)
    W.LiveOut = W.LiveIn || !W.Written;
  auto named = [&](ptx::RegId R) {
    if (auto It = Layout.WordOf.find(R); It != Layout.WordOf.end())
      Layout.Words[It->second].LiveOut = true;
  };
  for (const ptx::Instruction &I : F.Instructions) {
    if (Members.contains(&I))
      continue;
    if (I.Guard != ptx::NoReg)
      named(I.Guard);
    for (const ptx::Operand &Op : I.Operands)
      forRegisters(Op, named);
  }
  unsigned N = static_cast<unsigned>(Layout.Words.size());
  Layout.Desc.push_back(N);
  for (unsigned First = 0; First < N; First += 32) {
    uint32_t Dead = 0;
    for (unsigned W = First; W < std::min(N, First + 32); ++W)
      Dead |= static_cast<uint32_t>(!Layout.Words[W].LiveOut) << (W - First);
    Layout.Desc.push_back(Dead);
  }
}

/// The batch's descriptor as a private constant of the module.
llvm::Constant *batchDescriptor(FunctionLowering &L, llvm::ArrayRef<uint32_t> Desc) {
  llvm::Constant *Init = llvm::ConstantDataArray::get(L.ctx(), Desc);
  return new llvm::GlobalVariable(*L.function()->getParent(), Init->getType(), /*isConstant=*/true,
                                  llvm::GlobalValue::PrivateLinkage, Init, "mma.batch");
}

} // namespace

bool ptxforge::codegen::detail::isFiberOnlyMatrixForm(const ptx::Instruction &I) {
  switch (I.Op) {
  case Opcode::Ldmatrix:
    return I.has(Modifier::M16n16) || I.has(Modifier::M8n16);
  case Opcode::Stmatrix:
    return I.has(Modifier::M16n8);
  case Opcode::Mma:
    return I.has(Modifier::Kind_F8f6f4) || I.has(Modifier::Kind_Mxf8f6f4) || I.has(Modifier::Kind_Mxf4) ||
           I.has(Modifier::Kind_Mxf4nvf4) || I.has(Modifier::BlockScale);
  default:
    return false;
  }
}

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
    if (I.has(Modifier::Sp) || I.has(Modifier::Sp_OrderedMetadata))
      return lowerSparseMma(L, I);
    if (isFiberOnlyMatrixForm(I))
      return lowerScaledMma(L, I);
    return lowerMma(L, I);
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

/// A planned batch (FunctionLowering.h MatrixBatchPlan): its layout, the loads it took over, its buffer.
struct ptxforge::codegen::detail::MatrixBatchPlan {
  BatchLayout Layout;
  /// Each taken-over load -> the buffer words of its address and stride.
  llvm::DenseMap<const ptx::Instruction *, std::pair<unsigned, unsigned>> Loads;
  llvm::Value *Buf = nullptr;
  bool Ok = true;
};

namespace {

/// The scratch slot of batch buffers: their words must outlive the fragment loads' scratch use (slot 0) between
/// a taken-over load and its batch.
constexpr unsigned BatchScratchSlot = 9;

/// The most buffer words a batch the runtime computes warp-major may have (exec/MmaBatch.cpp MaxWords).
constexpr size_t MaxBatchWords = 1024;

/// Whether the batch can take Load over: a run-layout wmma.load whose registers the products read as exactly
/// that fragment (the operand of the same role, the same registers in order, shape and element type). Then the
/// batch decodes it from memory (exec/MmaBatch.cpp) and no lane loads it.
std::optional<uint32_t> takeableLoad(const ptx::Instruction &Load, llvm::ArrayRef<const ptx::Instruction *> Products,
                                     llvm::ArrayRef<MmaForm> Forms) {
  WmmaAccess A = wmmaAccess(Load);
  if (!A.Frag.Rows || A.Frag.Which > 2)
    return std::nullopt;
  std::optional<uint32_t> Run = runLayout(A.Frag);
  if (!Run)
    return std::nullopt;
  bool Read = false;
  for (size_t P = 0; P < Products.size(); ++P) {
    const MmaForm &F = Forms[P];
    const ptx::Operand *Ops[3] = {F.A, F.B, F.C};
    ScalarType Types[3] = {F.TA, F.TB, F.TC};
    for (unsigned Role = 0; Role < 3; ++Role) {
      auto Es = operandElements(*Ops[Role]);
      bool Shares = llvm::any_of(Es, [&](const ptx::Operand *E) {
        return llvm::any_of(A.Regs, [&](const ptx::Operand *R) { return R->Reg == E->Reg; });
      });
      if (!Shares)
        continue;
      bool Same = Products[P]->Op == Opcode::Wmma && Role == A.Frag.Which && Types[Role] == A.Frag.T &&
                  wmmaShape(*Products[P]).Code == A.Shape.Code && Es.size() == A.Regs.size() &&
                  std::equal(Es.begin(), Es.end(), A.Regs.begin(),
                             [](const ptx::Operand *X, const ptx::Operand *Y) { return X->Reg == Y->Reg; });
      if (!Same)
        return std::nullopt;
      Read = true;
    }
    for (const ptx::Operand *E : operandElements(*F.D)) // a product's D in the load's registers: keep the load
      if (llvm::any_of(A.Regs, [&](const ptx::Operand *R) { return R->Reg == E->Reg; }))
        return std::nullopt;
  }
  if (!Read)
    return std::nullopt;
  return Run;
}

} // namespace

std::shared_ptr<detail::MatrixBatchPlan>
ptxforge::codegen::detail::planMmaBatch(FunctionLowering &L, llvm::ArrayRef<const ptx::Instruction *> Products,
                                        llvm::ArrayRef<const ptx::Instruction *> Loads) {
  auto Plan = std::make_shared<MatrixBatchPlan>();
  BatchLayout &Layout = Plan->Layout;
  std::vector<MmaForm> Forms;
  for (const ptx::Instruction *I : Products) {
    const char *Why = nullptr;
    std::optional<MmaForm> F = productForm(*I, Why);
    if (!F) {
      L.unsupported(*I, Why);
      Plan->Ok = false;
      return Plan;
    }
    Forms.push_back(*F);
  }
  // Memcheck checks every access where it stands: no load moves into the batch.
  // Each load taken over adds two words (its address and stride) to the products' registers; the runtime's
  // warp-major path takes at most MaxBatchWords, so the loads past that stay per-lane loads.
  llvm::SmallDenseSet<ptx::RegId, 64> Registers;
  for (const MmaForm &F : Forms)
    for (const ptx::Operand *Op : {F.A, F.B, F.C, F.D})
      for (const ptx::Operand *E : operandElements(*Op))
        Registers.insert(E->Reg);
  size_t Room = Registers.size() < MaxBatchWords ? (MaxBatchWords - Registers.size()) / 2 : 0;
  std::vector<std::pair<const ptx::Instruction *, uint32_t>> Taken;
  if (!L.module().Memcheck)
    for (const ptx::Instruction *Load : Loads)
      if (std::optional<uint32_t> Run = takeableLoad(*Load, Products, Forms); Run && Taken.size() < Room)
        Taken.emplace_back(Load, *Run);
  for (auto [Load, Run] : Taken) {
    unsigned PtrWord = Layout.addAddress();
    Plan->Loads[Load] = {PtrWord, PtrWord + 1};
  }
  for (auto [Load, Run] : Taken)
    Layout.addLoad(wmmaAccess(*Load), Run, Plan->Loads[Load].first);
  Layout.Desc.push_back(static_cast<uint32_t>(Products.size()));
  for (const MmaForm &F : Forms)
    Layout.add(F);
  markLiveOut(L.fn(), Products, Layout);
  Layout.Desc.push_back(Layout.NLoads);
  Layout.Desc.insert(Layout.Desc.end(), Layout.LoadDesc.begin(), Layout.LoadDesc.end());
  Plan->Buf = scratchBuffer(L, L.b().getInt64Ty(), static_cast<unsigned>(Layout.Words.size()), BatchScratchSlot);
  return Plan;
}

bool ptxforge::codegen::detail::lowerTakenLoad(FunctionLowering &L, const MatrixBatchPlan &Plan,
                                               const ptx::Instruction &Load) {
  auto It = Plan.Loads.find(&Load);
  if (It == Plan.Loads.end())
    return false;
  auto &B = L.b();
  llvm::Type *I64 = B.getInt64Ty();
  auto [Ptr, Stride] = wmmaAddress(L, Load, wmmaAccess(Load));
  B.CreateStore(B.CreatePtrToInt(Ptr, I64), B.CreateConstGEP1_32(I64, Plan.Buf, It->second.first));
  B.CreateStore(B.CreateZExt(Stride, I64), B.CreateConstGEP1_32(I64, Plan.Buf, It->second.second));
  return true;
}

void ptxforge::codegen::detail::lowerMmaBatch(FunctionLowering &L, const MatrixBatchPlan &Plan) {
  if (!Plan.Ok)
    return;
  auto &B = L.b();
  const BatchLayout &Layout = Plan.Layout;
  llvm::Type *I64 = B.getInt64Ty();
  llvm::Value *Buf = Plan.Buf;
  for (unsigned W = 0; W < Layout.Words.size(); ++W)
    if (Layout.Words[W].Reg && Layout.Words[W].LiveIn && !Layout.Words[W].Loaded)
      B.CreateStore(B.CreateZExt(L.read(*Layout.Words[W].Reg, Layout.Words[W].T), I64),
                    B.CreateConstGEP1_32(I64, Buf, W));
  // Lanes meet by kind and key (RegionRendezvous.cpp meetingKey): the key tells batches apart.
  uint32_t Key = static_cast<uint32_t>(llvm::hash_combine_range(Layout.Desc.begin(), Layout.Desc.end())) & 0xffffff;
  callMatrixCut(L, "ptxrt_mma_batch", {L.threadCtx(), B.getInt32(Key), batchDescriptor(L, Layout.Desc), Buf},
                {RCMmaBatch, /*Arg=*/1, /*Value=*/2, -1, -1, -1, -1, /*Buffer=*/3});
  for (unsigned W = 0; W < Layout.Words.size(); ++W)
    if (Layout.Words[W].Reg && Layout.Words[W].Written && Layout.Words[W].LiveOut) {
      llvm::Value *V = B.CreateLoad(I64, B.CreateConstGEP1_32(I64, Buf, W));
      L.write(*Layout.Words[W].Reg, Layout.Words[W].T, B.CreateTrunc(V, B.getIntNTy(ptx::bitWidth(Layout.Words[W].T))));
    }
}
