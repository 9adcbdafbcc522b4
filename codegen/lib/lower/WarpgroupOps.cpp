// wgmma and tcgen05: warpgroup matrix products and Tensor Memory (exec/WarpgroupHelpers.cpp). wgmma.mma_async(.sp)
// hands the helper its descriptors, its A registers (when A is not in shared memory), its sparsity metadata and its D
// registers through scratch buffers, and reads D back; the product completes at once, so wgmma.fence, commit_group and
// wait_group only order memory.
#include "FamilyLowering.h"
#include "ptxforge/codegen/MatrixElements.h"

using namespace ptxforge::codegen;

namespace {

/// The element codes wgmma takes: the matrix helpers' codes without f64 and the 4-bit integers.
uint32_t wgType(ScalarType T) {
  unsigned C = matrixElementCode(T);
  return T == ScalarType::F64 || T == ScalarType::S4 || T == ScalarType::U4 ? 0 : C;
}

/// N of the instruction's m64nNkK shape (0 when none), from the shape modifier's spelling.
unsigned shapeN(const ptx::Instruction &I, unsigned &K) {
  for (const ptx::Qualifier &Q : I.Qualifiers) {
    if (Q.K != ptx::Qualifier::Kind::Modifier)
      continue;
    llvm::StringRef Name = ptx::spell(static_cast<Modifier>(Q.Value));
    unsigned N;
    if (!Name.consume_front("m64n"))
      continue;
    auto Parts = Name.split('k');
    if (Parts.first.getAsInteger(10, N) || Parts.second.getAsInteger(10, K))
      continue;
    return N;
  }
  return 0;
}

/// An immediate operand's value (the imm-scale/imm-trans operands); Default when absent.
int64_t immediate(const ptx::Instruction &I, size_t Index, int64_t Default) {
  if (Index >= I.Operands.size() || I.Operands[Index].Kind != ptx::OperandKind::Immediate)
    return Default;
  return static_cast<int64_t>(I.Operands[Index].Bits);
}

bool lowerMmaAsync(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  unsigned K = 0, N = shapeN(I, K);
  bool Sparse = I.has(Modifier::Sp);
  // The sparse form's metadata and sparsity selector come between b-desc and scale-d.
  size_t ScaleDIndex = Sparse ? 5 : 3;
  if (I.typeCount() != 3 || Ops.size() <= ScaleDIndex)
    return L.unsupported(I, "mistyped wgmma");
  ScalarType TD = I.type(0), TA = I.type(1), TB = I.type(2);
  uint32_t CD = wgType(TD), CA = wgType(TA), CB = wgType(TB);
  unsigned ABytes = CA == 1 || CA == 2 ? 2 : CA == 3 ? 4 : 1;
  if (!N || N % 8 || N > 256 || !CD || !CA || !CB || K != (Sparse ? 64 : 32) / ABytes ||
      (CD != 4 && CD != 1 && CD != 8))
    return L.unsupported(I, "wgmma shape or types");
  // The selector names a pair of a group's four lanes (16- and 32-bit types) or must be 0 (8-bit types).
  if (Sparse && (Ops[4].Kind != ptx::OperandKind::Immediate || Ops[4].Bits > (ABytes == 1 ? 0u : 1u)))
    return L.unsupported(I, "wgmma sparsity selector");
  auto DE = operandElements(Ops[0]);
  unsigned DWords = CD == MEF16 ? N / 4 : N / 2;
  if (DE.size() != DWords)
    return L.unsupported(I, "wgmma D registers");
  bool ARegs = Ops[1].Kind == ptx::OperandKind::Vector;
  bool Int = CD == MES32;
  // Operands after b-desc: scale-d, then (floating types) imm-scale-a, imm-scale-b, then imm-trans-a (A in shared
  // memory only) and imm-trans-b (16-bit types only).
  size_t Next = ScaleDIndex + 1;
  uint32_t Flags = ARegs ? WgARegs : 0;
  if (Sparse)
    Flags |= WgSparse | static_cast<uint32_t>(Ops[4].Bits) << WgSelectorShift;
  if (!Int) {
    Flags |= immediate(I, Next++, 1) == -1 ? WgNegA : 0;
    Flags |= immediate(I, Next++, 1) == -1 ? WgNegB : 0;
    if (ABytes == 2) {
      if (!ARegs)
        Flags |= immediate(I, Next++, 0) ? WgTransA : 0;
      Flags |= immediate(I, Next++, 0) ? WgTransB : 0;
    }
  }
  if (I.has(Modifier::Satfinite))
    Flags |= WgSat;
  llvm::Value *ADesc = B.getInt64(0);
  llvm::Value *ABuf = scratchBuffer(L, B.getInt32Ty(), 4, 3);
  if (ARegs) {
    auto AE = operandElements(Ops[1]);
    if (AE.size() != 4)
      return L.unsupported(I, "wgmma A registers");
    for (unsigned J = 0; J < 4; ++J)
      B.CreateStore(L.read(*AE[J], ScalarType::B32), B.CreateConstGEP1_32(B.getInt32Ty(), ABuf, J));
  } else {
    ADesc = L.read(Ops[1], ScalarType::B64);
  }
  llvm::Value *DBuf = scratchBuffer(L, B.getInt32Ty(), 128, 2);
  for (unsigned J = 0; J < DWords; ++J)
    B.CreateStore(L.read(*DE[J], ScalarType::B32), B.CreateConstGEP1_32(B.getInt32Ty(), DBuf, J));
  llvm::Value *ScaleD = B.CreateZExt(L.read(Ops[ScaleDIndex], ScalarType::Pred), B.getInt32Ty());
  llvm::Value *Meta = Sparse ? L.read(Ops[3], ScalarType::B32) : B.getInt32(0);
  uint64_t Types = CA | CB << 8 | CD << 16 | uint64_t(Flags) << 32;
  L.callHelper("ptxrt_wgmma", B.getVoidTy(),
               {L.threadCtx(), B.getInt64(Types), B.getInt32(N), ADesc, ABuf, L.read(Ops[2], ScalarType::B64), ScaleD,
                DBuf, Meta});
  for (unsigned J = 0; J < DWords; ++J)
    L.write(*DE[J], ScalarType::B32, B.CreateLoad(B.getInt32Ty(), B.CreateConstGEP1_32(B.getInt32Ty(), DBuf, J)));
  return true;
}

/// A Tensor Memory address operand `[taddr+offset]`: the register's value plus the offset.
llvm::Value *tmemAddress(FunctionLowering &L, const ptx::Operand &Op) {
  auto &B = L.b();
  llvm::Value *Base = B.getInt32(0);
  if (Op.Reg != ptx::NoReg) {
    ptx::Operand R = Op;
    R.Kind = ptx::OperandKind::Register;
    R.Elements = {};
    R.Bits = 0;
    Base = L.read(R, ScalarType::B32);
  }
  return B.CreateAdd(Base, B.getInt32(static_cast<uint32_t>(Op.offset())));
}

/// tcgen05.ld.red's flags (Tcgen05CopyFlag) for its .redOp, .abs, .NaN and type, or 0 for a form the ISA does not
/// define: .min or .max; f32 with optional .abs and .NaN, or u32/s32 with neither.
uint32_t reductionFlags(const ptx::Instruction &I) {
  bool Max = I.has(Modifier::Max), Float = I.type() == ScalarType::F32;
  if (Max == I.has(Modifier::Min) || I.typeCount() != 1 ||
      (!Float && (I.has(Modifier::Abs) || I.has(Modifier::NaN))))
    return 0;
  uint32_t Type = Float                        ? 0
                  : I.type() == ScalarType::U32 ? uint32_t(TgRedU32)
                  : I.type() == ScalarType::S32 ? uint32_t(TgRedS32)
                                                : ~0u;
  if (Type == ~0u)
    return 0;
  return TgRed | Type | (Max ? uint32_t(TgRedMax) : 0u) | (I.has(Modifier::Abs) ? uint32_t(TgRedAbs) : 0u) |
         (I.has(Modifier::NaN) ? uint32_t(TgRedNaN) : 0u);
}

/// tcgen05.ld/st: the registers through a scratch buffer (exec/WarpgroupHelpers.cpp ptxrt_tcgen05_ldst, which
/// numbers the shapes), ld's .pack::16b and st's .unpack::16b as TgPack16. .16x32bx2 takes its second half's column
/// offset as an immediate after the address. tcgen05.ld.red (.32x32b and .16x32bx2, .x2 and up, no packing) puts
/// redVal between the registers and the address; the helper writes it after the loaded words.
bool lowerTmemCopy(FunctionLowering &L, const ptx::Instruction &I, bool Store) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  unsigned Shape = I.has(Modifier::G32x32b)     ? 0
                   : I.has(Modifier::G16x64b)   ? 1
                   : I.has(Modifier::G16x128b)  ? 2
                   : I.has(Modifier::G16x256b)  ? 3
                   : I.has(Modifier::G16x32bx2) ? 4
                                                : 5;
  bool Red = !Store && I.has(Modifier::Red);
  uint32_t RedFlags = Red ? reductionFlags(I) : 0;
  size_t AddrIndex = Store ? 0 : Red ? 2 : 1;
  unsigned NOps = static_cast<unsigned>(AddrIndex) + (Shape == 4 ? 2 : 1) + (Store ? 1 : 0);
  size_t ImmIndex = AddrIndex + 1;
  bool Pack = I.has(Store ? Modifier::Unpack_16b : Modifier::Pack_16b);
  auto Regs = operandElements(Store ? Ops.back() : Ops[0]);
  if (Shape == 5 || Ops.size() != NOps || (Store && I.has(Modifier::Red)) ||
      I.has(Store ? Modifier::Pack_16b : Modifier::Unpack_16b) ||
      (Shape == 4 && Ops[ImmIndex].Kind != ptx::OperandKind::Immediate) ||
      (Red && (!RedFlags || Pack || (Shape != 0 && Shape != 4) || Regs.size() < 2)))
    return L.unsupported(I, "tcgen05.ld/st shape, operands or packing");
  uint32_t Imm = Shape == 4 ? static_cast<uint32_t>(Ops[ImmIndex].Bits) : 0;
  unsigned N = static_cast<unsigned>(Regs.size());
  llvm::Value *Buf = scratchBuffer(L, B.getInt32Ty(), N + 1, 2);
  if (Store)
    for (unsigned J = 0; J < N; ++J)
      B.CreateStore(L.read(*Regs[J], ScalarType::B32), B.CreateConstGEP1_32(B.getInt32Ty(), Buf, J));
  L.callHelper("ptxrt_tcgen05_ldst", B.getVoidTy(),
               {L.threadCtx(), tmemAddress(L, Ops[AddrIndex]), Buf, B.getInt32(N), B.getInt32(Store),
                B.getInt32(Shape | (Pack ? uint32_t(TgPack16) : 0u) | RedFlags), B.getInt32(Imm)});
  if (!Store)
    for (unsigned J = 0; J < N; ++J)
      L.write(*Regs[J], ScalarType::B32, B.CreateLoad(B.getInt32Ty(), B.CreateConstGEP1_32(B.getInt32Ty(), Buf, J)));
  if (Red)
    L.write(Ops[1], ScalarType::B32, B.CreateLoad(B.getInt32Ty(), B.CreateConstGEP1_32(B.getInt32Ty(), Buf, N)));
  return true;
}

/// tcgen05.mma's kind as ptxrt_tcgen05_mma numbers it (Tcgen05MmaFlag), or -1 for the kinds not done here.
int tcgen05Kind(const ptx::Instruction &I) {
  static constexpr std::pair<Modifier, int> Kinds[] = {
      {Modifier::Kind_F16, 0},      {Modifier::Kind_Tf32, 1}, {Modifier::Kind_F8f6f4, 2},   {Modifier::Kind_I8, 3},
      {Modifier::Kind_Mxf8f6f4, 4}, {Modifier::Kind_Mxf4, 5}, {Modifier::Kind_Mxf4nvf4, 6}};
  for (auto [M, K] : Kinds)
    if (I.has(M))
      return K;
  return -1;
}

/// The words of disable-output-lane (four, eight for cta_group::2) into a nine-word scratch buffer, zeros where
/// the operand has none; or .ws's 64-bit zero-column-mask-desc (ZeroColumns) in its first two words. The ninth word
/// is .sp's metadata address (MmaWords).
constexpr unsigned MmaWords = 9, MetaWord = 8;
llvm::Value *outputLaneMask(FunctionLowering &L, const ptx::Operand *Op, const ptx::Operand *ZeroColumns = nullptr) {
  auto &B = L.b();
  llvm::Value *Buf = scratchBuffer(L, B.getInt32Ty(), MmaWords, 4);
  auto E = Op ? operandElements(*Op) : std::vector<const ptx::Operand *>{};
  for (unsigned J = 0; J < MmaWords; ++J)
    B.CreateStore(J < E.size() ? L.read(*E[J], ScalarType::B32) : B.getInt32(0),
                  B.CreateConstGEP1_32(B.getInt32Ty(), Buf, J));
  if (ZeroColumns)
    B.CreateStore(L.read(*ZeroColumns, ScalarType::B64), Buf);
  return Buf;
}

/// The scales per row of A a block-scaled tcgen05.mma names (.scale_vec::NX, or its .block16/.block32 alias: 4 and
/// 2 for the mxf4 kinds at K = 64, .block32 1 for mxf8f6f4), defaulting as the ISA says (mxf4 to .block32, mxf8f6f4 to
/// its only 1X); 0 for a combination Table 54/55 of the ISA does not list (mxf4nvf4 must name one).
unsigned scaleVector(const ptx::Instruction &I, int Kind) {
  unsigned Named = I.has(Modifier::ScaleVec_1X) + I.has(Modifier::ScaleVec_2X) + I.has(Modifier::ScaleVec_4X) +
                   I.has(Modifier::Block16) + I.has(Modifier::Block32);
  if (Named > 1)
    return 0;
  unsigned Vec = I.has(Modifier::ScaleVec_1X)                                 ? 1
                 : I.has(Modifier::ScaleVec_2X)                               ? 2
                 : I.has(Modifier::ScaleVec_4X) || I.has(Modifier::Block16)  ? 4
                 : I.has(Modifier::Block32) || (!Named && Kind == 5)          ? (Kind == 4 ? 1 : 2)
                 : !Named && Kind == 4                                        ? 1
                                                                              : 0;
  bool Ok = Kind == 4 ? Vec == 1 : Kind == 5 ? Vec == 2 : Vec == 2 || Vec == 4;
  return Ok ? Vec : 0;
}

/// I's operands as the dense form has them, and (.sp) the [sp-meta-tmem] operand .sp puts after b-desc; false
/// where .sp has no address there.
bool denseOperands(const ptx::Instruction &I, llvm::SmallVectorImpl<ptx::Operand> &Ops, ptx::Operand &Meta) {
  Ops.assign(I.Operands.begin(), I.Operands.end());
  if (!I.has(Modifier::Sp))
    return true;
  if (Ops.size() < 4 || Ops[3].Kind != ptx::OperandKind::Address)
    return false;
  Meta = Ops[3];
  Ops.erase(Ops.begin() + 3);
  return true;
}

/// Operand A of tcgen05.mma: `[a-tmem]`'s Tensor Memory address, widened, or a-desc.
llvm::Value *mmaA(FunctionLowering &L, const ptx::Operand &Op) {
  if (Op.Kind == ptx::OperandKind::Address)
    return L.b().CreateZExt(tmemAddress(L, Op), L.b().getInt64Ty());
  return L.read(Op, ScalarType::B64);
}

/// tcgen05.mma(.sp).cta_group::{1,2}.kind::{mxf8f6f4,mxf4,mxf4nvf4}.block_scale{.scale_vectorsize} [d], a-desc or
/// [a-tmem], b-desc, ([sp-meta-tmem],) idesc, [scale-A-tmem], [scale-B-tmem], enable-input-d: ptxrt_tcgen05_mma with
/// the scale addresses in the mask buffer's first two words (.sp's metadata address in MetaWord) and the scale
/// vector in the flags. The ISA has no .ws form of these kinds (the verifier says so).
bool lowerTcgen05ScaledMma(FunctionLowering &L, const ptx::Instruction &I, int Kind) {
  auto &B = L.b();
  bool Sparse = I.has(Modifier::Sp);
  llvm::SmallVector<ptx::Operand, 8> Ops;
  ptx::Operand Meta;
  if (!denseOperands(I, Ops, Meta))
    return L.unsupported(I, "tcgen05.mma form");
  unsigned Vec = scaleVector(I, Kind);
  if (Kind < 4 || !Vec || Ops.size() != 7 || !I.has(Modifier::BlockScale) || I.has(Modifier::Ws) ||
      Ops[4].Kind != ptx::OperandKind::Address || Ops[5].Kind != ptx::OperandKind::Address)
    return L.unsupported(I, "tcgen05.mma form");
  bool ATmem = Ops[1].Kind == ptx::OperandKind::Address;
  uint32_t Flags = static_cast<uint32_t>(Kind) | (Vec == 1 ? 1u : Vec == 2 ? 2u : 3u) << TgScaleVecShift |
                   (Sparse ? uint32_t(TgSparse) : 0u) | (ATmem ? uint32_t(TgATmem) : 0u) |
                   (I.has(Modifier::CtaGroup_2) ? uint32_t(TgPair) : 0u);
  llvm::Value *Scales = scratchBuffer(L, B.getInt32Ty(), MmaWords, 4);
  for (unsigned J = 0; J < MmaWords; ++J)
    B.CreateStore(J < 2                     ? tmemAddress(L, Ops[4 + J])
                  : J == MetaWord && Sparse ? tmemAddress(L, Meta)
                                            : B.getInt32(0),
                  B.CreateConstGEP1_32(B.getInt32Ty(), Scales, J));
  L.callHelper("ptxrt_tcgen05_mma", B.getVoidTy(),
               {L.threadCtx(), tmemAddress(L, Ops[0]), mmaA(L, Ops[1]), L.read(Ops[2], ScalarType::B64),
                L.read(Ops[3], ScalarType::B32), B.CreateZExt(L.read(Ops[6], ScalarType::Pred), B.getInt32Ty()),
                B.getInt32(Flags), Scales});
  return true;
}

/// tcgen05.mma(.ws).cta_group::1 and tcgen05.mma.cta_group::2 [d], a-desc or [a-tmem], b-desc, idesc, then (not
/// .ws) an optional disable-output-lane vector, enable-input-d and (kinds f16 and tf32) an optional scale-input-d
/// immediate, or (.ws) enable-input-d and an optional 64-bit zero-column-mask-desc (ptxrt_tcgen05_mma); .sp puts
/// [sp-meta-tmem] after b-desc. The collector buffer modifiers only hint at operand reuse, so they change nothing
/// here. The block-scaled kinds go to lowerTcgen05ScaledMma.
bool lowerTcgen05Mma(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  int Kind = tcgen05Kind(I);
  if (Kind >= 4 || I.has(Modifier::BlockScale))
    return lowerTcgen05ScaledMma(L, I, Kind);
  bool Sparse = I.has(Modifier::Sp);
  llvm::SmallVector<ptx::Operand, 8> Ops;
  ptx::Operand Meta;
  if (!denseOperands(I, Ops, Meta))
    return L.unsupported(I, "tcgen05.mma form");
  bool Ws = I.has(Modifier::Ws), Pair = I.has(Modifier::CtaGroup_2),
       ATmem = Ops.size() > 1 && Ops[1].Kind == ptx::OperandKind::Address;
  bool HasMask = !Ws && Ops.size() > 4 && Ops[4].Kind == ptx::OperandKind::Vector;
  size_t Pred = HasMask ? 5 : 4;
  bool HasZeroColumns = Ws && Ops.size() == Pred + 2, HasScale = !Ws && Ops.size() == Pred + 2;
  if (Kind < 0 || Ops.size() < Pred + 1 || Ops.size() > Pred + 2 || I.has(Modifier::BlockScale) || (Ws && Pair) ||
      (HasMask && operandElements(Ops[4]).size() != (Pair ? 8u : 4u)) ||
      (HasScale && (Kind > 1 || Ops.back().Kind != ptx::OperandKind::Immediate || Ops.back().Bits > 15)) ||
      (HasZeroColumns && Ops.back().Kind != ptx::OperandKind::Register))
    return L.unsupported(I, "tcgen05.mma form");
  uint32_t Flags = static_cast<uint32_t>(Kind) | (ATmem ? uint32_t(TgATmem) : 0u) | (Ws ? uint32_t(TgWs) : 0u) |
                   (Pair ? uint32_t(TgPair) : 0u) | (HasZeroColumns ? uint32_t(TgZeroColumns) : 0u) |
                   (HasScale ? static_cast<uint32_t>(Ops.back().Bits) << TgScaleDShift : 0) |
                   (Sparse ? uint32_t(TgSparse) : 0u);
  llvm::Value *Words = outputLaneMask(L, HasMask ? &Ops[4] : nullptr, HasZeroColumns ? &Ops.back() : nullptr);
  if (Sparse)
    B.CreateStore(tmemAddress(L, Meta), B.CreateConstGEP1_32(B.getInt32Ty(), Words, MetaWord));
  L.callHelper("ptxrt_tcgen05_mma", B.getVoidTy(),
               {L.threadCtx(), tmemAddress(L, Ops[0]), mmaA(L, Ops[1]), L.read(Ops[2], ScalarType::B64),
                L.read(Ops[3], ScalarType::B32), B.CreateZExt(L.read(Ops[Pred], ScalarType::Pred), B.getInt32Ty()),
                B.getInt32(Flags), Words});
  return true;
}

/// tcgen05.commit: the operations it tracks are complete already, so it arrives on its mbarrier at once, or with
/// .multicast::cluster on the mbarrier at the same offset in each CTA its ctaMask names.
bool lowerTcgen05Commit(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  bool Multicast = I.has(Modifier::Multicast_Cluster);
  if (Ops.size() != (Multicast ? 2u : 1u))
    return L.unsupported(I, "tcgen05.commit form");
  llvm::Value *Bar = L.address(Ops[0], I.has(Modifier::Shared_Cluster) ? StateSpace::Shared : StateSpace::Generic);
  if (Multicast)
    L.callHelper("ptxrt_tcgen05_commit_multicast", B.getVoidTy(),
                 {L.threadCtx(), Bar, B.CreateZExt(L.read(Ops[1], ScalarType::B16), B.getInt32Ty())});
  else
    L.callHelper("ptxrt_mbar_arrive", B.getInt64Ty(),
                 {L.threadCtx(), Bar, B.getInt32(1), B.getInt32(0), B.getInt32(0)});
  return true;
}

/// tcgen05.cp [taddr], s-desc (ptxrt_tcgen05_cp numbers the shapes: 0 128x256b, 1 128x128b, 2
/// 64x128b.warpx2::02_13, 3 64x128b.warpx2::01_23, 4 32x128b.warpx4, 5 4x256b, beside Tcgen05CpFlag's cta_group::2
/// and the decompressing .b8x16 forms' source format). The ISA pairs 64x128b with a warpx2 and 32x128b with warpx4,
/// and .b8x16 with one source format.
bool lowerTcgen05Copy(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  int Shape = I.has(Modifier::G128x256b)                                  ? 0
              : I.has(Modifier::G128x128b)                                ? 1
              : I.has(Modifier::G64x128b) && I.has(Modifier::Warpx2_0213) ? 2
              : I.has(Modifier::G64x128b) && I.has(Modifier::Warpx2_0123) ? 3
              : I.has(Modifier::G32x128b) && I.has(Modifier::Warpx4)      ? 4
              : I.has(Modifier::G4x256b)                                  ? 5
                                                                          : -1;
  bool B4 = I.has(Modifier::B4x16P64), B6 = I.has(Modifier::B6x16P32), Pair = I.has(Modifier::CtaGroup_2);
  unsigned Multicasts = I.has(Modifier::Warpx2_0213) + I.has(Modifier::Warpx2_0123) + I.has(Modifier::Warpx4);
  if (Shape < 0 || Ops.size() != 2 || Pair == I.has(Modifier::CtaGroup_1) || (B4 && B6) ||
      I.has(Modifier::B8x16) != (B4 || B6) || Multicasts != (Shape >= 2 && Shape <= 4 ? 1u : 0u))
    return L.unsupported(I, "tcgen05.cp form");
  uint32_t Flags = static_cast<uint32_t>(Shape) | (Pair ? uint32_t(TgCpPair) : 0u) |
                   (B4 ? uint32_t(TgCpB4x16P64) : 0u) | (B6 ? uint32_t(TgCpB6x16P32) : 0u);
  L.callHelper("ptxrt_tcgen05_cp", B.getVoidTy(),
               {L.threadCtx(), tmemAddress(L, Ops[0]), L.read(Ops[1], ScalarType::B64), B.getInt32(Flags)});
  return true;
}

/// tcgen05.shift.cta_group::N.down [taddr] (ptxrt_tcgen05_shift; .down is the only direction the ISA defines).
bool lowerTcgen05Shift(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  bool Pair = I.has(Modifier::CtaGroup_2);
  if (I.Operands.size() != 1 || !I.has(Modifier::Down) || Pair == I.has(Modifier::CtaGroup_1))
    return L.unsupported(I, "tcgen05.shift form");
  L.callHelper("ptxrt_tcgen05_shift", B.getVoidTy(),
               {L.threadCtx(), tmemAddress(L, I.Operands[0]), B.getInt32(Pair)});
  return true;
}

/// tcgen05: Tensor Memory allocation (a warp collective; cta_group::2 allocates in both CTAs of the pair), ld/st,
/// mma, and the waits, fences and commits, which only order since every operation completes at once.
bool lowerTcgen05(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  if (I.has(Modifier::Alloc) || I.has(Modifier::Dealloc)) {
    if (Ops.size() != 2)
      return L.unsupported(I, "tcgen05.alloc operands");
    bool Alloc = I.has(Modifier::Alloc);
    llvm::Value *Arg = Alloc ? B.CreatePtrToInt(L.address(Ops[0], I.has(Modifier::Shared_Cta) ? StateSpace::Shared
                                                                                              : StateSpace::Generic),
                                                B.getInt64Ty())
                             : B.CreateZExt(L.read(Ops[0], ScalarType::B32), B.getInt64Ty());
    L.callHelper("ptxrt_tcgen05_alloc", B.getVoidTy(),
                 {L.threadCtx(),
                  B.getInt32(!Alloc                        ? 2
                             : I.has(Modifier::CtaGroup_2) ? 3
                                                           : 1),
                  Arg, L.read(Ops[1], ScalarType::B32)});
    return true;
  }
  if (I.has(Modifier::RelinquishAllocPermit)) {
    L.callHelper("ptxrt_tcgen05_relinquish", B.getVoidTy(), {L.threadCtx()});
    return true;
  }
  if (I.has(Modifier::Ld) || I.has(Modifier::St))
    return lowerTmemCopy(L, I, I.has(Modifier::St));
  if (I.has(Modifier::Mma))
    return lowerTcgen05Mma(L, I);
  if (I.has(Modifier::Commit))
    return lowerTcgen05Commit(L, I);
  if (I.has(Modifier::Cp))
    return lowerTcgen05Copy(L, I);
  if (I.has(Modifier::Shift))
    return lowerTcgen05Shift(L, I);
  if (I.has(Modifier::Wait_Ld) || I.has(Modifier::Wait_St) || I.has(Modifier::Fence_BeforeThreadSync) ||
      I.has(Modifier::Fence_AfterThreadSync)) {
    B.CreateFence(llvm::AtomicOrdering::AcquireRelease);
    return true;
  }
  return L.unsupported(I, "tcgen05 form");
}

} // namespace

bool ptxforge::codegen::detail::lowerWarpgroup(FunctionLowering &L, const ptx::Instruction &I) {
  if (I.Op == Opcode::Tcgen05)
    return lowerTcgen05(L, I);
  if (I.Op != Opcode::Wgmma)
    return false;
  if (I.has(Modifier::MmaAsync))
    return lowerMmaAsync(L, I);
  // fence / commit_group / wait_group: the products are complete already; order the registers' memory.
  L.b().CreateFence(llvm::AtomicOrdering::AcquireRelease);
  return true;
}
