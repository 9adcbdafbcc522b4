// tcgen05's forms as the PTX ISA's syntax blocks spell them (9.7.16 / 9.7.17 in ISA 9.1): tcgen05.shift, tcgen05.cp,
// tcgen05.ld(.red) and tcgen05.mma.ws. One opcode carries every tcgen05 operation, so the table lets any of its
// modifiers appear on any of them; these checks reject the combinations the ISA does not define, e.g.
//   tcgen05.cp.cta_group::1.64x128b [t], d;                 // 64x128b needs .warpx2::02_13 or .warpx2::01_23
//   tcgen05.ld.red.sync.aligned.32x32b.x1.min.f32 {r}, m, [t];  // .red needs .x2 or more
#include "Tcgen05Forms.h"

#include <initializer_list>

using namespace ptxforge::ptx;

namespace {

unsigned countOf(const Instruction &I, std::initializer_list<Modifier> Ms) {
  unsigned N = 0;
  for (Modifier M : Ms)
    N += I.has(M);
  return N;
}

bool oneCtaGroup(const Instruction &I) { return countOf(I, {Modifier::CtaGroup_1, Modifier::CtaGroup_2}) == 1; }

/// tcgen05.shift.cta_group.down [taddr];
std::string shiftError(const Instruction &I) {
  if (!I.has(Modifier::Down) || !oneCtaGroup(I))
    return "tcgen05.shift takes .down and one of .cta_group::1 and .cta_group::2";
  if (I.Operands.size() != 1 || I.Operands[0].Kind != OperandKind::Address)
    return "tcgen05.shift takes one Tensor Memory address";
  return "";
}

/// tcgen05.cp.cta_group.shape{.multicast}{.dst_fmt.src_fmt} [taddr], s-desc; where .64x128b takes one of the
/// .warpx2 multicasts, .32x128b takes .warpx4 and the other shapes none, and .b8x16 comes with one source format.
std::string copyError(const Instruction &I) {
  unsigned Shapes = countOf(I, {Modifier::G128x256b, Modifier::G4x256b, Modifier::G128x128b, Modifier::G64x128b,
                                Modifier::G32x128b});
  if (!oneCtaGroup(I) || Shapes != 1)
    return "tcgen05.cp takes one .cta_group and one shape";
  unsigned Warpx2 = countOf(I, {Modifier::Warpx2_0213, Modifier::Warpx2_0123});
  bool Multicast = Warpx2 || I.has(Modifier::Warpx4);
  if (I.has(Modifier::G64x128b) ? Warpx2 != 1 || I.has(Modifier::Warpx4)
      : I.has(Modifier::G32x128b) ? Warpx2 || !I.has(Modifier::Warpx4)
                                  : Multicast)
    return "tcgen05.cp's .64x128b takes .warpx2::02_13 or .warpx2::01_23, .32x128b takes .warpx4, the other "
           "shapes no multicast";
  if (I.has(Modifier::B8x16) != (countOf(I, {Modifier::B6x16P32, Modifier::B4x16P64}) == 1) ||
      (I.has(Modifier::B6x16P32) && I.has(Modifier::B4x16P64)))
    return "tcgen05.cp's decompression takes .b8x16 with one of .b6x16_p32 and .b4x16_p64";
  if (I.Operands.size() != 2 || I.Operands[0].Kind != OperandKind::Address)
    return "tcgen05.cp takes a Tensor Memory address and a shared-memory descriptor";
  return "";
}

/// tcgen05.ld.red.sync.aligned.shape.num.redOp{.abs}{.NaN}.f32 and .redOp.{u32,s32}: .32x32b or .16x32bx2, .x2 or
/// more, no packing; r, redval, [taddr] (and immHalfSplitoff for .16x32bx2). Without .red no reduction modifier.
std::string loadError(const Instruction &I) {
  bool Red = I.has(Modifier::Red);
  unsigned Ops = countOf(I, {Modifier::Min, Modifier::Max});
  if (!Red)
    return Ops || I.has(Modifier::Abs) || I.has(Modifier::NaN) ? "tcgen05.ld takes .min/.max/.abs/.NaN only with .red"
                                                               : "";
  if (Ops != 1)
    return "tcgen05.ld.red takes one of .min and .max";
  if (!I.has(Modifier::G32x32b) && !I.has(Modifier::G16x32bx2))
    return "tcgen05.ld.red takes the shape .32x32b or .16x32bx2";
  if (I.has(Modifier::X1) || I.has(Modifier::Pack_16b))
    return "tcgen05.ld.red takes .x2 or more and no .pack::16b";
  ScalarType T = I.typeCount() == 1 ? I.type() : ScalarType::None;
  if (T != ScalarType::F32 && T != ScalarType::U32 && T != ScalarType::S32)
    return "tcgen05.ld.red takes the type .f32, .u32 or .s32";
  if (T != ScalarType::F32 && (I.has(Modifier::Abs) || I.has(Modifier::NaN)))
    return "tcgen05.ld.red takes .abs and .NaN only with .f32";
  size_t Want = I.has(Modifier::G16x32bx2) ? 4 : 3;
  if (I.Operands.size() != Want || I.Operands[2].Kind != OperandKind::Address)
    return "tcgen05.ld.red takes the registers, redval, a Tensor Memory address" +
           std::string(Want == 4 ? " and immHalfSplitoff" : "");
  return "";
}

/// tcgen05.mma's block scaling: .block_scale exactly with the kinds mxf8f6f4, mxf4 and mxf4nvf4, and at most one
/// .scale_vectorsize, one the kind takes (the ISA's Table 54/55): mxf8f6f4 1X or .block32 (or none), mxf4 2X or
/// .block32 (or none, meaning .block32), mxf4nvf4 2X, 4X, .block32 or .block16, which it must name.
std::string blockScaleError(const Instruction &I) {
  bool Mx8 = I.has(Modifier::Kind_Mxf8f6f4), Mx4 = I.has(Modifier::Kind_Mxf4), Nv4 = I.has(Modifier::Kind_Mxf4nvf4);
  unsigned Named = countOf(I, {Modifier::ScaleVec_1X, Modifier::ScaleVec_2X, Modifier::ScaleVec_4X, Modifier::Block16,
                               Modifier::Block32});
  if (I.has(Modifier::BlockScale) != (Mx8 || Mx4 || Nv4))
    return "tcgen05.mma takes .block_scale with .kind::mxf8f6f4, .kind::mxf4 and .kind::mxf4nvf4, and only there";
  if (!I.has(Modifier::BlockScale))
    return Named ? "tcgen05.mma takes a .scale_vectorsize only with .block_scale" : "";
  bool Ok = Named <= 1 && (Mx8 ? !I.has(Modifier::ScaleVec_2X) && !I.has(Modifier::ScaleVec_4X) && !I.has(Modifier::Block16)
                           : Mx4 ? !I.has(Modifier::ScaleVec_1X) && !I.has(Modifier::ScaleVec_4X) && !I.has(Modifier::Block16)
                                 : Named == 1 && !I.has(Modifier::ScaleVec_1X));
  return Ok ? "" : "tcgen05.mma's .kind::mxf8f6f4 takes .scale_vec::1X or .block32, .kind::mxf4 .scale_vec::2X or "
                   ".block32, .kind::mxf4nvf4 one of .scale_vec::2X, .scale_vec::4X, .block32 and .block16";
}

/// The block-scaled kinds' operands by the ISA's syntax blocks: [d-tmem], a-desc or [a-tmem], b-desc,
/// ([sp-meta-tmem],) idesc, [scale-A-tmem], [scale-B-tmem], enable-input-d -- neither disable-output-lane nor
/// scale-input-d, which ptxas refuses there as an argument mismatch.
std::string blockScaleOperandError(const Instruction &I) {
  size_t Meta = I.has(Modifier::Sp) ? 1 : 0;
  auto &Ops = I.Operands;
  if (Ops.size() == 7 + Meta && Ops[4 + Meta].Kind == OperandKind::Address &&
      Ops[5 + Meta].Kind == OperandKind::Address)
    return "";
  return "tcgen05.mma's block-scaled kinds take [d-tmem], a-desc or [a-tmem], b-desc, ([sp-meta-tmem],) idesc, "
         "[scale-A-tmem], [scale-B-tmem] and enable-input-d";
}

} // namespace

std::string ptxforge::ptx::tcgen05FormError(const Instruction &I) {
  if (I.Op != Opcode::Tcgen05)
    return "";
  if (I.has(Modifier::Shift))
    return shiftError(I);
  if (I.has(Modifier::Cp))
    return copyError(I);
  if (I.has(Modifier::Ld))
    return loadError(I);
  if (I.has(Modifier::Mma) && I.has(Modifier::Ws) && !I.has(Modifier::CtaGroup_1))
    return "tcgen05.mma.ws takes .cta_group::1 only";
  // The ISA's shape table marks every .ws form of the block-scaled kinds invalid.
  if (I.has(Modifier::Mma) && I.has(Modifier::Ws) &&
      countOf(I, {Modifier::Kind_Mxf8f6f4, Modifier::Kind_Mxf4, Modifier::Kind_Mxf4nvf4}))
    return "tcgen05.mma.ws takes .kind::f16, .kind::tf32, .kind::f8f6f4 and .kind::i8 only";
  if (I.has(Modifier::Mma))
    if (std::string Why = blockScaleError(I); !Why.empty())
      return Why;
  if (I.has(Modifier::Mma) && I.has(Modifier::BlockScale))
    if (std::string Why = blockScaleOperandError(I); !Why.empty())
      return Why;
  if ((I.has(Modifier::St) || I.has(Modifier::Mma) || I.has(Modifier::Alloc) || I.has(Modifier::Dealloc)) &&
      (I.has(Modifier::Red) || I.has(Modifier::Down)))
    return "'.red' and '.down' belong to tcgen05.ld and tcgen05.shift";
  return "";
}
