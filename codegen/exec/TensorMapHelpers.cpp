// The Tensor Memory Accelerator's copies: cp.async.bulk.tensor (tile, im2col and the wide im2col modes, loads
// multicast to a cluster's blocks) between global memory, described by a tensor map (codegen/TensorMap.h), and shared
// memory, the bulk reductions (cp.reduce.async.bulk, tensor or not), and tensormap.replace's edits of a map. Like every
// asynchronous copy here they complete at once, a legal schedule: a load completes its bytes on the receiving
// block's mbarrier before it returns.
//
// A box lands in shared memory densely, dimension 0 innermost, ceil(boxDim[i] / elementStride[i]) elements per
// dimension (dimension 0 whole); out-of-bound elements read as zeros (or NaN where the map asks for it) and are
// not written back. Under a swizzle, rows narrower than its span start a span apart.
// A swizzled map moves each 16-byte chunk of a row within its 32/64/128-byte span by the XOR of the address's
// 128-byte row index (swizzleSharedOffset), on the shared-memory address itself, as the GPU does.
#include "Runtime.h"

#include "ptxforge/codegen/TensorMap.h"

#include "llvm/ADT/bit.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <iterator>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

namespace {

/// Reduction operations of cp.reduce.async.bulk (the lowering's numbering).
enum BulkOp : uint32_t { OpLoad, OpStore, OpAdd, OpMin, OpMax, OpAnd, OpOr, OpXor, OpInc, OpDec };
/// Element kinds of a reduction (the lowering's numbering, matching TensorMapDataType for tensor copies).
enum RedKind : uint32_t { RUnsigned, RSigned, RF16, RBF16, RF32, RF64 };

RedKind kindOfMapType(uint32_t T) {
  switch (T) {
  case TMS32:
  case TMS64:
    return RSigned;
  case TMF16:
    return RF16;
  case TMBF16:
    return RBF16;
  case TMF32:
  case TMF32Ftz:
  case TMTF32:
  case TMTF32Ftz:
    return RF32;
  case TMF64:
    return RF64;
  default:
    return RUnsigned;
  }
}

uint16_t floatToBF16(float F) {
  uint32_t U;
  memcpy(&U, &F, 4);
  if (std::isnan(F))
    return 0x7fff;
  return static_cast<uint16_t>((U + 0x7fff + ((U >> 16) & 1)) >> 16);
}

template <class T> T combineInt(T Old, T V, uint32_t Op) {
  switch (Op) {
  case OpAdd:
    return static_cast<T>(Old + V);
  case OpMin:
    return V < Old ? V : Old;
  case OpMax:
    return V > Old ? V : Old;
  case OpAnd:
    return Old & V;
  case OpOr:
    return Old | V;
  case OpXor:
    return Old ^ V;
  case OpInc: // the ISA's inc/dec with V as the bound (unsigned 32-bit only)
    return Old >= V ? 0 : static_cast<T>(Old + 1);
  case OpDec:
    return (Old == 0 || Old > V) ? V : static_cast<T>(Old - 1);
  default:
    return V;
  }
}

template <class F> F combineFloat(F Old, F V, uint32_t Op) {
  if (Op == OpAdd)
    return Old + V;
  if (std::isnan(Old) || std::isnan(V))
    return std::isnan(Old) ? V : Old;
  return Op == OpMin ? (V < Old ? V : Old) : (V > Old ? V : Old);
}

/// Dst = Dst op Src for one element of Bytes bytes of kind K, atomically: on the GPU each element of a bulk
/// reduction is an atomic read-modify-write at L2, so blocks reducing into the same global words (run here by
/// different workers at once) never lose an update. Elements are naturally aligned (bulk copies move 16-byte
/// aligned multiples of 16 bytes; tensor boxes are arrays of their element type).
void reduceElement(char *Dst, const char *Src, unsigned Bytes, RedKind K, uint32_t Op) {
  auto apply = [&](auto Zero, auto Fn) {
    using T = decltype(Zero);
    T B;
    memcpy(&B, Src, sizeof B);
    T *Word = reinterpret_cast<T *>(Dst);
    T Old = __atomic_load_n(Word, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(Word, &Old, Fn(Old, B), /*weak=*/true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
  };
  switch (K) {
  case RF16:
    return apply(uint16_t(), [&](uint16_t A, uint16_t B) {
      auto R = combineFloat(halfToFloat(A), halfToFloat(B), Op);
      return llvm::bit_cast<uint16_t>(static_cast<_Float16>(R));
    });
  case RBF16:
    return apply(uint16_t(),
                 [&](uint16_t A, uint16_t B) { return floatToBF16(combineFloat(bf16ToFloat(A), bf16ToFloat(B), Op)); });
  case RF32:
    return apply(uint32_t(), [&](uint32_t A, uint32_t B) {
      return llvm::bit_cast<uint32_t>(combineFloat(llvm::bit_cast<float>(A), llvm::bit_cast<float>(B), Op));
    });
  case RF64:
    return apply(uint64_t(), [&](uint64_t A, uint64_t B) {
      return llvm::bit_cast<uint64_t>(combineFloat(llvm::bit_cast<double>(A), llvm::bit_cast<double>(B), Op));
    });
  case RSigned:
    if (Bytes == 8)
      return apply(int64_t(), [&](int64_t A, int64_t B) { return combineInt(A, B, Op); });
    return apply(int32_t(), [&](int32_t A, int32_t B) { return combineInt(A, B, Op); });
  default:
    if (Bytes == 8)
      return apply(uint64_t(), [&](uint64_t A, uint64_t B) { return combineInt(A, B, Op); });
    if (Bytes == 2)
      return apply(uint16_t(), [&](uint16_t A, uint16_t B) { return combineInt(A, B, Op); });
    return apply(uint32_t(), [&](uint32_t A, uint32_t B) { return combineInt(A, B, Op); });
  }
}

/// The out-of-bound fill of one element: zeros, or the canonical NaN of a float map that asks for NaN.
void fillElement(char *Dst, unsigned Bytes, const TensorMap &M) {
  memset(Dst, 0, Bytes);
  if (M.OobFill != 1)
    return;
  switch (kindOfMapType(M.DataType)) {
  // The GPU's NaN is the bytes f7 7f repeated, in every float type (tma/tile_2d_{f16,bf16,f32}_nan_fill,
  // tma/tensormap_replace_fill_mode, tma/tensormap_replace_elemtype_f64_nan).
  case RF16:
  case RBF16:
  case RF32:
  case RF64:
    for (unsigned I = 0; I + 2 <= Bytes; I += 2)
      memcpy(Dst + I, "\xf7\x7f", 2);
    return;
  default:
    return;
  }
}

uint64_t dimOf(const TensorMap &M, unsigned I) { return M.GlobalDim[I] ? M.GlobalDim[I] : 1ull << 32; }

/// The map at Map, checked against what the instruction says (Dims, the map's mode) and held to the
/// encoder's limits: the bytes of a map in device memory may have been written by anything, and a forged box must
/// not make a copy run unbounded.
TensorMap checkedMap(ThreadContext *C, const TensorMap *Map, uint32_t Dims, TensorMapMode Mode) {
  TensorMap M;
  memcpy(&M, Map, sizeof M);
  if (M.Magic != TensorMap::MagicValue)
    raiseFault(C, LaunchFault::IllegalInstruction, "cp.async.bulk.tensor: not a tensor map cuTensorMapEncode made",
               true);
  bool Im2col = Mode != TensorMapMode::Tiled;
  if (M.Mode != static_cast<uint8_t>(Mode) || M.Rank != Dims || (Im2col && Dims < 3))
    raiseFault(C, LaunchFault::IllegalInstruction,
               "cp.async.bulk.tensor: the tensor map's mode or rank differs from the instruction's", true);
  if (M.Interleave > 2 || (M.Interleave && (Im2col || Dims < 3)))
    raiseFault(C, LaunchFault::IllegalInstruction, "cp.async.bulk.tensor: an interleaved map of this mode or rank",
               true);
  for (unsigned I = 0; I < Dims; ++I) {
    unsigned MaxBox = Im2col && I == 1 ? 1024 : 256; // im2col: [0] channels per pixel, [1] pixels per column
    bool BoxUsed = !Im2col || I < 2;
    if ((BoxUsed && (M.BoxDim[I] == 0 || M.BoxDim[I] > MaxBox)) || M.ElementStride[I] == 0 || M.ElementStride[I] > 8 ||
        !tensorMapElementBytes(M.DataType) || M.Swizzle > 3)
      raiseFault(C, LaunchFault::IllegalInstruction, "cp.async.bulk.tensor: a tensor map field out of range", true);
  }
  return M;
}

/// Where a box of Rows rows of RowBytes bytes lands: rows narrower than the swizzle span still start a span apart
/// (tma/tile_2d_swizzle_128b_box64b), except in an interleaved map, whose rows land densely (tma/interleave_*).
/// Faults when the rows do not fit the window from Base on.
uint64_t rowPitch(ThreadContext *C, const TensorMap &M, uint64_t RowBytes, uint64_t Rows, uint32_t Base) {
  unsigned Span = M.Swizzle && !M.Interleave ? 16u << M.Swizzle : 0;
  uint64_t Pitch = Span ? (RowBytes + Span - 1) / Span * Span : RowBytes;
  if (uint64_t(Base) + Rows * Pitch > C->TotalSmemSize)
    raiseFault(C, LaunchFault::IllegalAddress, "cp.async.bulk.tensor: the box does not fit in shared memory", true);
  return Pitch;
}

/// One element between global memory (G, In: inside the tensor) and shared memory (S) for BulkOp Op.
void moveElement(const TensorMap &M, uint32_t Op, char *S, char *G, bool In, unsigned Elem) {
  if (Op == OpLoad) {
    if (In)
      memcpy(S, G, Elem);
    else
      fillElement(S, Elem, M);
  } else if (In) {
    if (Op == OpStore)
      memcpy(G, S, Elem);
    else
      reduceElement(G, S, Elem, kindOfMapType(M.DataType), Op);
  }
}

/// Whether element G (global coordinates) of a box starting at Coords lies inside the tensor. An interleaved map
/// (NC/8HWC8-like: dimension 0 the channels of one 16- or 32-byte group) bounds dimension 1 only at the box's
/// start: rows past its end continue into the next index of the outer dimensions (the memory that follows), and
/// a box starting outside it reads nothing (tma/interleave_*, an H200).
bool insideTensor(const TensorMap &M, const int32_t *Coords, const int64_t *G, uint32_t Dims) {
  if (!M.Interleave) {
    for (unsigned I = 0; I < Dims; ++I)
      if (G[I] < 0 || uint64_t(G[I]) >= dimOf(M, I))
        return false;
    return true;
  }
  if (G[0] < 0 || uint64_t(G[0]) >= dimOf(M, 0) || Coords[1] < 0 || uint64_t(Coords[1]) >= dimOf(M, 1))
    return false;
  uint64_t Carry = uint64_t(G[1]) / dimOf(M, 1);
  for (unsigned I = 2; I < Dims; ++I) {
    if (G[I] < 0)
      return false;
    uint64_t V = uint64_t(G[I]) + Carry;
    Carry = V / dimOf(M, I);
    if (I == Dims - 1 && Carry)
      return false;
  }
  return true;
}

/// Tile mode: the box at Coords between global memory and the shared window Window from offset Base on; returns
/// the box's bytes (the transaction count).
uint32_t copyTile(ThreadContext *C, const TensorMap &M, char *Window, uint32_t Base, const int32_t *Coords,
                  uint32_t Dims, uint32_t Op) {
  unsigned Elem = tensorMapElementBytes(M.DataType), Span = M.Swizzle ? 16u << M.Swizzle : 0;
  // An H100 ignores the element stride of dimension 0 of a map that is not interleaved (the box's rows are loaded
  // whole, tma/tile_2d_f32_inner_element_stride); the other dimensions take every stride-th index, as the ISA says.
  uint64_t N[5] = {1, 1, 1, 1, 1}, Step[5] = {1, 1, 1, 1, 1}, Total = 1;
  for (unsigned I = 0; I < Dims; ++I) {
    Step[I] = I == 0 && !M.Interleave ? 1 : M.ElementStride[I];
    N[I] = (M.BoxDim[I] + Step[I] - 1) / Step[I];
    Total *= N[I];
  }
  // An H100 faults a store at a negative coordinate, and a reduction whose box starts at a byte offset that is
  // not a multiple of 16 (conformance cases tma/store_*, tma/reduce_add_2d: README.md).
  if (Op != OpLoad)
    for (unsigned I = 0; I < Dims; ++I)
      if (Coords[I] < 0 || (Op != OpStore && I == 0 && (int64_t(Coords[0]) * Elem) % 16))
        raiseFault(C, LaunchFault::IllegalInstruction,
                   "cp.async.bulk.tensor: a store or reduction box at a negative or unaligned coordinate", true);
  uint64_t Pitch = rowPitch(C, M, N[0] * Elem, Total / N[0], Base);
  uint64_t J[5] = {0, 0, 0, 0, 0};
  for (uint64_t Lin = 0; Lin < Total; ++Lin) {
    int64_t G[5];
    uint64_t Off = 0;
    for (unsigned I = 0; I < Dims; ++I) {
      G[I] = int64_t(Coords[I]) + int64_t(J[I] * Step[I]);
      Off += I == 0 ? uint64_t(G[I]) * Elem : uint64_t(G[I]) * M.GlobalStride[I - 1];
    }
    bool In = insideTensor(M, Coords, G, Dims);
    uint64_t SmemOff = (Lin / N[0]) * Pitch + (Lin % N[0]) * Elem;
    moveElement(M, Op, Window + swizzleSharedOffset(Base + static_cast<uint32_t>(SmemOff), Span),
                reinterpret_cast<char *>(M.GlobalAddress + Off), In, Elem);
    for (unsigned I = 0; I < Dims && ++J[I] == N[I]; ++I)
      J[I] = 0;
  }
  return static_cast<uint32_t>(Total * Elem);
}

/// Row Row (Pitch bytes apart from Base on) of an im2col column: the map's channels per pixel from channel Ch0 on,
/// of the pixel at byte offset Off of the tensor (PixelIn: inside it; the rest reads as the out-of-bound fill).
void copyPixel(const TensorMap &M, char *Window, uint32_t Base, uint64_t Row, uint64_t Pitch, uint64_t Off,
               bool PixelIn, int32_t Ch0) {
  unsigned Elem = tensorMapElementBytes(M.DataType), Span = M.Swizzle ? 16u << M.Swizzle : 0;
  for (unsigned K = 0; K < M.BoxDim[0]; ++K) {
    int64_t Ch = int64_t(Ch0) + K;
    bool In = PixelIn && Ch >= 0 && uint64_t(Ch) < dimOf(M, 0);
    uint64_t SmemOff = Row * Pitch + uint64_t(K) * Elem;
    moveElement(M, OpLoad, Window + swizzleSharedOffset(Base + static_cast<uint32_t>(SmemOff), Span),
                reinterpret_cast<char *>(M.GlobalAddress + Off + uint64_t(Ch) * Elem), In, Elem);
  }
}

/// Im2col mode (a load): BoxDim[1] pixels of BoxDim[0] channels from channel Coords[0] on. The pixels are the
/// positions of the bounding box (spatial dimension i from PixelBoxLower[i] to its size - 1 + PixelBoxUpper[i],
/// stepping by its element stride) from Coords[1..] on, dimension 1 fastest, the image index (the last dimension)
/// advancing after the box's last position; each is read at its position plus the instruction's im2col offsets
/// (Offsets, dimension 1 first). What falls outside the tensor reads as the out-of-bound fill
/// (tests/conformance/cases/tma/im2col_*).
uint32_t copyIm2col(ThreadContext *C, const TensorMap &M, char *Window, uint32_t Base, const int32_t *Coords,
                    const uint16_t *Offsets, uint32_t Dims) {
  unsigned Elem = tensorMapElementBytes(M.DataType);
  unsigned Channels = M.BoxDim[0], Pixels = M.BoxDim[1], Spatial = Dims - 2;
  uint64_t Pitch = rowPitch(C, M, uint64_t(Channels) * Elem, Pixels, Base);
  int64_t Pos[5];
  for (unsigned I = 1; I < Dims; ++I)
    Pos[I] = Coords[I];
  for (unsigned P = 0; P < Pixels; ++P) {
    bool PixelIn = true;
    uint64_t Off = 0;
    for (unsigned I = 1; I < Dims; ++I) {
      int64_t G = Pos[I] + (I <= Spatial ? Offsets[I - 1] : 0);
      PixelIn &= G >= 0 && uint64_t(G) < dimOf(M, I);
      Off += uint64_t(G) * M.GlobalStride[I - 1];
    }
    copyPixel(M, Window, Base, P, Pitch, Off, PixelIn, Coords[0]);
    // The next position: dimension 1 first, wrapping to the box's lower corner into the next dimension.
    for (unsigned I = 1; I < Dims; ++I) {
      Pos[I] += M.ElementStride[I];
      if (I > Spatial || Pos[I] <= int64_t(dimOf(M, I)) - 1 + M.PixelBoxUpper[I - 1])
        break;
      Pos[I] = M.PixelBoxLower[I - 1];
    }
  }
  return Channels * Pixels * Elem;
}

/// The walk of the wide im2col modes: W from the instruction's coordinate in steps of the W traversal stride over
/// the bounding box [Lower, End], restarting at Lower in the next image (N) past End.
struct WideWalk {
  int64_t W, N, Lower, End, Step;
  void next() {
    if ((W += Step) > End)
      W = Lower, ++N;
  }
};

/// .im2col::w and .im2col::w::128 (a load, sm_100; the PTX ISA's "im2col::w and im2col::w::128 modes"): the
/// pixels run along W alone, H and D held at the instruction's coordinates (a bounding box of one in them), and
/// wOffset (Coords[6]) moves the start and both corners of the box along W. ::w loads the map's pixels per column
/// and then wHalo (Coords[5]) more pixels of the same walk; ::w::128 loads 128 pixels in groups of 32, each
/// followed by the wHalo pixels that continue its walk, which the next group loads again. Each pixel takes a row,
/// the halo's next to the main rows. Returns the bytes landed.
uint32_t copyIm2colWide(ThreadContext *C, const TensorMap &M, char *Window, uint32_t Base, const int32_t *Coords,
                        uint32_t Dims, bool W128) {
  uint32_t Halo = static_cast<uint16_t>(Coords[5]), WOffset = static_cast<uint16_t>(Coords[6]);
  if (WOffset >= 32 || Halo >= (W128 ? 32u : 512u))
    raiseFault(C, LaunchFault::IllegalInstruction, "cp.async.bulk.tensor: wHalo or wOffset out of range", true);
  unsigned Elem = tensorMapElementBytes(M.DataType), Main = W128 ? 128 : M.BoxDim[1], Group = W128 ? 32 : Main;
  uint64_t Rows = Main + Main / Group * Halo, Row = 0;
  uint64_t Pitch = rowPitch(C, M, uint64_t(M.BoxDim[0]) * Elem, Rows, Base);
  WideWalk Cur{int64_t(Coords[1]) + WOffset, Coords[Dims - 1], int64_t(M.PixelBoxLower[0]) + WOffset,
               int64_t(dimOf(M, 1)) - 1 + M.PixelBoxUpper[0] + WOffset, M.ElementStride[1]};
  auto copy = [&](const WideWalk &P) {
    bool In = true;
    uint64_t Off = 0;
    for (unsigned I = 1; I < Dims; ++I) {
      int64_t G = I == 1 ? P.W : I == Dims - 1 ? P.N : Coords[I];
      In &= G >= 0 && uint64_t(G) < dimOf(M, I);
      Off += uint64_t(G) * M.GlobalStride[I - 1];
    }
    copyPixel(M, Window, Base, Row++, Pitch, Off, In, Coords[0]);
  };
  for (unsigned G = 0; G < Main; G += Group) {
    for (unsigned K = 0; K < Group; ++K, Cur.next())
      copy(Cur);
    WideWalk Ahead = Cur;
    for (unsigned K = 0; K < Halo; ++K, Ahead.next())
      copy(Ahead);
  }
  return static_cast<uint32_t>(Rows * M.BoxDim[0] * Elem);
}

} // namespace

extern "C" {

/// cp.reduce.async.bulk.tensor and tensor stores: Op 1 stores the box at Coords from Smem, 2.. reduces it into
/// global memory (BulkOp). Returns the box's bytes.
static uint32_t ptxrt_tensor_tile(ThreadContext *C, const TensorMap *Map, char *Smem, const int32_t *Coords,
                                  uint32_t Dims, uint32_t Op) {
  TensorMap M = checkedMap(C, Map, Dims, TensorMapMode::Tiled);
  return copyTile(C, M, C->Shared, static_cast<uint32_t>(Smem - C->Shared), Coords, Dims, Op);
}

/// tile::gather4 (a load from a 2D tiled map whose box is one row): row Coords[1 + i] of the box's width from
/// column Coords[0] on, for i = 0..3, lands as row i of a 4-row box, each an out-of-bound-filled tile copy.
uint32_t copyGather4(ThreadContext *C, const TensorMap &M, char *Window, uint32_t Base, const int32_t *Coords) {
  if (M.BoxDim[1] != 1 || M.Interleave)
    raiseFault(C, LaunchFault::IllegalInstruction,
               "cp.async.bulk.tensor: tile::gather4 through a map whose box is not "
               "one row",
               true);
  uint64_t Pitch = rowPitch(C, M, uint64_t(M.BoxDim[0]) * tensorMapElementBytes(M.DataType), 4, Base);
  uint32_t Bytes = 0;
  for (unsigned R = 0; R < 4; ++R) {
    int32_t Row[2] = {Coords[0], Coords[1 + R]};
    Bytes += copyTile(C, M, Window, Base + static_cast<uint32_t>(R * Pitch), Row, 2, OpLoad);
  }
  return Bytes;
}

/// cp.async.bulk.tensor loads: the box at Coords (Mode 0, tile), the im2col column at Coords with the offsets in
/// Coords[5..7] (1, im2col), the four rows of Coords[1..4] (2, tile::gather4) or the wide im2col column at Coords
/// with wHalo and wOffset in Coords[5..6] (3 im2col::w, 4 im2col::w::128) lands at Smem's offset in the shared
/// memory of every block of the cluster in CtaMask (0: Smem's own block alone), each completing its bytes on its
/// mbarrier at Mbar's offset.
static void ptxrt_tensor_load(ThreadContext *C, const TensorMap *Map, char *Smem, uint64_t *Mbar, const int32_t *Coords,
                              uint32_t Dims, uint32_t Mode, uint32_t CtaMask) {
  TensorMap M = checkedMap(C, Map, Dims,
                           Mode == 1   ? TensorMapMode::Im2col
                           : Mode >= 3 ? TensorMapMode::Im2colWide
                                       : TensorMapMode::Tiled);
  char *SmemWindow = sharedWindowOf(C, Smem), *BarWindow = sharedWindowOf(C, reinterpret_cast<char *>(Mbar));
  if (!SmemWindow || !BarWindow)
    raiseFault(C, LaunchFault::IllegalAddress, "cp.async.bulk.tensor: not a shared-memory address", true);
  uint16_t Offsets[3] = {static_cast<uint16_t>(Coords[5]), static_cast<uint16_t>(Coords[6]),
                         static_cast<uint16_t>(Coords[7])};
  auto loadInto = [&](char *Window) {
    uint32_t Base = static_cast<uint32_t>(Smem - SmemWindow);
    uint32_t Bytes = Mode == 1   ? copyIm2col(C, M, Window, Base, Coords, Offsets, Dims)
                     : Mode == 2 ? copyGather4(C, M, Window, Base, Coords)
                     : Mode >= 3 ? copyIm2colWide(C, M, Window, Base, Coords, Dims, Mode == 4)
                                 : copyTile(C, M, Window, Base, Coords, Dims, OpLoad);
    mbarCompleteTx(C, reinterpret_cast<uint64_t *>(Window + (reinterpret_cast<char *>(Mbar) - BarWindow)), Bytes);
  };
  if (!CtaMask)
    return loadInto(SmemWindow);
  for (uint32_t R = 0; R < 16; ++R)
    if (char *Window = CtaMask >> R & 1 ? clusterWindow(C, R) : nullptr)
      loadInto(Window);
}

/// tensormap.replace.tile: Field (1 global_address, 2 rank, 3 box_dim, 4 global_dim, 5 global_stride,
/// 6 element_stride, 7 elemtype, 8 interleave_layout, 9 swizzle_mode, 10 swizzle_atomicity, 11 fill_mode) of the
/// map at Map becomes Value; Ord names the dimension of fields 3-6. The values are the ISA's, as an H100 reads them
/// (tests/conformance/cases/tma/tensormap_replace_*): dimensions, box sizes, strides in bytes and element strides
/// as themselves, the rank less one, swizzle 1-3 for 32, 64 and 128 bytes, fill 1 for NaN. Only the field's own
/// bytes are written, so lanes replacing different fields of one map do not race. An ordinal past the field's
/// dimensions changes nothing (the GPU's result is undefined).
static void ptxrt_tensormap_replace(char *Map, uint32_t Field, uint32_t Ord, uint64_t Value) {
  auto put = [&](size_t Offset, auto V) { memcpy(Map + Offset, &V, sizeof V); };
  // The ISA's elemtype numbering (.u8 .u16 .u32 .s32 .u64 .s64 .f16 .f32 .f32.ftz .f64 .bf16 .tf32 .tf32.ftz);
  // the sub-byte types of later GPUs are no type here, so a copy through such a map faults. So does one through a
  // map given a 1- or 2-byte type here: an H200 stopped such a copy with an illegal instruction whatever the map's
  // encoded type (u32 or u16, the same size included) and box, and ran it once the type was replaced again by a
  // 4-byte one (tma/tensormap_replace_elemtype_*, cases/README.md).
  static constexpr uint8_t Invalid = 0xff;
  static constexpr uint8_t ElemTypes[] = {Invalid, Invalid,  TMU32, TMS32,   TMU64,  TMS64,    Invalid,
                                          TMF32,   TMF32Ftz, TMF64, Invalid, TMTF32, TMTF32Ftz};
  switch (Field) {
  case 1:
    return put(offsetof(TensorMap, GlobalAddress), Value);
  case 2:
    return put(offsetof(TensorMap, Rank), static_cast<uint8_t>(Value + 1));
  case 3:
    if (Ord < 5)
      put(offsetof(TensorMap, BoxDim) + 2 * Ord, static_cast<uint16_t>(Value));
    return;
  case 4:
    if (Ord < 5)
      put(offsetof(TensorMap, GlobalDim) + 4 * Ord, static_cast<uint32_t>(Value));
    return;
  case 5:
    if (Ord < 4)
      put(offsetof(TensorMap, GlobalStride) + 8 * Ord, Value);
    return;
  case 6:
    if (Ord < 5)
      put(offsetof(TensorMap, ElementStride) + Ord, static_cast<uint8_t>(Value));
    return;
  case 7:
    return put(offsetof(TensorMap, DataType), Value < std::size(ElemTypes) ? ElemTypes[Value] : Invalid);
  case 8:
    return put(offsetof(TensorMap, Interleave), static_cast<uint8_t>(Value));
  case 9:
    return put(offsetof(TensorMap, Swizzle), static_cast<uint8_t>(Value));
  case 11:
    return put(offsetof(TensorMap, OobFill), static_cast<uint8_t>(Value));
  default: // swizzle_atomicity: sm_90 has 16-byte atomicity only, which copies here need not model
    return;
  }
}

/// cp.reduce.async.bulk (not tensor): Size bytes of elements of Bytes bytes and kind Kind (RedKind), Dst op= Src.
static void ptxrt_bulk_reduce(char *Dst, const char *Src, uint32_t Size, uint32_t Bytes, uint32_t Kind, uint32_t Op) {
  for (uint32_t I = 0; I + Bytes <= Size; I += Bytes)
    reduceElement(Dst + I, Src + I, Bytes, static_cast<RedKind>(Kind), Op);
}
}

void ptxforge::codegen::exec::registerTensorMapHelpers(HelperTable &T) {
  T.insert(T.end(), {PTXRT_HELPER(ptxrt_tensor_tile), PTXRT_HELPER(ptxrt_tensor_load), PTXRT_HELPER(ptxrt_bulk_reduce),
                     PTXRT_HELPER(ptxrt_tensormap_replace)});
}
