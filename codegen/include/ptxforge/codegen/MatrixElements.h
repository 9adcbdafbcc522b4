// The element types of matrix instructions as the lowering encodes them in the codes it passes to the runtime's
// matrix helpers (ptxrt_mma's and ptxrt_wgmma's type fields, lower/MatrixOps.cpp, lower/WarpgroupOps.cpp,
// lower/SparseMatrixOps.cpp) and as those helpers decode them (exec/MatrixProduct.cpp, exec/WarpCollectives.cpp,
// exec/WarpgroupHelpers.cpp): one numbering, written down once, and the wgmma helper's flags.
#pragma once

#include <cstdint>

namespace ptxforge::codegen {

enum MatrixElement : uint32_t {
  MENone, ///< not a matrix element type
  MEF16,
  MEBF16,
  METF32,
  MEF32,
  MEF64,
  MES8,
  MEU8,
  MES32,
  MES4,
  MEU4,
  MEE4M3,
  MEE5M2,
  MEE2M1, ///< fp4, two to a byte (tcgen05.mma's mxf4 kinds)
  /// tcgen05.mma's kinds f8f6f4 and mxf8f6f4 give fp6 and fp4 a byte's place each (16 of them packed into 16 bytes
  /// of shared memory with padding, an 8-bit container each in Tensor Memory): e2m3, e3m2 and e2m1 so placed.
  MEE2M3,
  MEE3M2,
  MEE2M1Byte
};

/// ptxrt_wgmma's flags beside the type codes: A from registers, transposes, negations, saturation, a sparse A
/// (wgmma.mma_async.sp) with its sparsity selector in the bits from WgSelectorShift.
enum WgmmaFlag : uint32_t {
  WgARegs = 1,
  WgTransA = 2,
  WgTransB = 4,
  WgNegA = 8,
  WgNegB = 16,
  WgSat = 32,
  WgSparse = 64,
  WgSelectorShift = 8
};

/// ptxrt_mma_scaled's code (mma.sync m16n8k32 .kind::f8f6f4 / .kind::mxf8f6f4, m16n8k64 .kind::mxf4 /
/// .kind::mxf4nvf4): the A and B element types (ScaledElement) in bits 0-3 and 4-7, then flags: e2m1 packed two
/// to a byte (the mxf4 kinds; otherwise every element has a byte of its own), the scale vector's length (0 for
/// no scales, 1, 2 or 4 scales per row of A and column of B) from SmScaleVecShift, f16 C and D (else f32), ue4m3
/// scales (mxf4nvf4's scale_vec::4X; else ue8m0).
enum ScaledElement : uint32_t { SEE4M3, SEE5M2, SEE3M2, SEE2M3, SEE2M1 };
enum ScaledMmaFlag : uint32_t { SmPackedFp4 = 1u << 8, SmScaleVecShift = 9, SmF16 = 1u << 12, SmUe4m3 = 1u << 13 };

/// ptxrt_tcgen05_mma's flags: the kind (0 f16, 1 tf32, 2 f8f6f4, 3 i8, 4 mxf8f6f4, 5 mxf4, 6 mxf4nvf4) in bits 0-3,
/// A in Tensor Memory (the `[a-tmem]` form), the weight-stationary .ws form, a cta_group::2 pair, scale-input-d (D's
/// input scaled by 2^-s) from TgScaleDShift, .ws's zero-column-mask-desc (the 64-bit descriptor in the mask buffer's
/// first two words), and a block-scaled kind's scale vector (log2 of its scales per row, plus one) from
/// TgScaleVecShift, with scale-A-tmem and scale-B-tmem in the mask buffer's first two words.
enum Tcgen05MmaFlag : uint32_t {
  TgKindMask = 0xf,
  TgATmem = 16,
  TgWs = 32,
  TgPair = 64,
  TgScaleDShift = 8,
  TgZeroColumns = 1u << 12,
  TgScaleVecShift = 13,
  TgSparse = 1u << 15 ///< tcgen05.mma.sp: the metadata's Tensor Memory address in the mask buffer's ninth word
};

/// ptxrt_tcgen05_ldst's shape flags beside the shape number: .pack::16b (ld) and .unpack::16b (st), and
/// tcgen05.ld.red's reduction (TgRed; max, else min; .abs, .NaN; u32 or s32 values, else f32), whose result the
/// helper writes after the loaded registers.
enum Tcgen05CopyFlag : uint32_t {
  TgPack16 = 8,
  TgRed = 16,
  TgRedMax = 32,
  TgRedAbs = 64,
  TgRedNaN = 128,
  TgRedU32 = 256,
  TgRedS32 = 512
};

/// ptxrt_tcgen05_cp's flags beside the shape number (bits 0-3): a cta_group::2 pair, and the decompressing
/// .b8x16 forms' source format.
enum Tcgen05CpFlag : uint32_t { TgCpPair = 16, TgCpB4x16P64 = 32, TgCpB6x16P32 = 64 };

} // namespace ptxforge::codegen
