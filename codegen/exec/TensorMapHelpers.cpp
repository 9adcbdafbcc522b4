// The Tensor Memory Accelerator's copies: cp.async.bulk.tensor (tile mode) between global memory, described by
// a tensor map (codegen/TensorMap.h), and shared memory, and the bulk reductions (cp.reduce.async.bulk, tensor
// or not). Like every asynchronous copy here they complete at once, a legal schedule; the lowering completes
// the transaction bytes on the mbarrier with the byte count these helpers return.
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
#include <cstring>

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

/// Dst = Dst op Src for one element of Bytes bytes of kind K.
void reduceElement(char *Dst, const char *Src, unsigned Bytes, RedKind K, uint32_t Op) {
  auto apply = [&](auto Zero, auto Fn) {
    decltype(Zero) A, B;
    memcpy(&A, Dst, sizeof A);
    memcpy(&B, Src, sizeof B);
    A = Fn(A, B);
    memcpy(Dst, &A, sizeof A);
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
    return apply(float(), [&](float A, float B) { return combineFloat(A, B, Op); });
  case RF64:
    return apply(double(), [&](double A, double B) { return combineFloat(A, B, Op); });
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
  case RF16:
  case RBF16:
    memcpy(Dst, "\xff\x7f", 2);
    return;
  case RF32:
    memcpy(Dst, "\xff\xff\xff\x7f", 4);
    return;
  case RF64:
    memcpy(Dst, "\xff\xff\xff\xff\xff\xff\xff\x7f", 8);
    return;
  default:
    return;
  }
}

uint64_t dimOf(const TensorMap &M, unsigned I) { return M.GlobalDim[I] ? M.GlobalDim[I] : 1ull << 32; }

} // namespace

extern "C" {

/// cp.async.bulk.tensor.{Dims}d.tile / cp.reduce.async.bulk.tensor: Op 0 loads the box at Coords into Smem,
/// 1 stores it, 2.. reduces it into global memory (BulkOp). Returns the box's bytes (the transaction count).
static uint32_t ptxrt_tensor_tile(ThreadContext *C, const TensorMap *Map, char *Smem, const int32_t *Coords,
                                  uint32_t Dims, uint32_t Op) {
  TensorMap M;
  memcpy(&M, Map, sizeof M);
  if (M.Magic != TensorMap::MagicValue)
    raiseFault(C, LaunchFault::IllegalInstruction, "cp.async.bulk.tensor: not a tensor map cuTensorMapEncode made",
               true);
  if (M.Mode != static_cast<uint8_t>(TensorMapMode::Tiled) || M.Rank != Dims)
    raiseFault(C, LaunchFault::IllegalInstruction,
               "cp.async.bulk.tensor: the tensor map's mode or rank differs from the instruction's", true);
  if (M.Interleave != 0)
    raiseFault(C, LaunchFault::IllegalInstruction, "cp.async.bulk.tensor: interleaved tensor maps are not supported",
               true);
  // The bytes of a map in device memory may have been written by anything: hold them to the encoder's limits, so
  // a forged box cannot make the copy run unbounded.
  for (unsigned I = 0; I < Dims; ++I)
    if (M.BoxDim[I] == 0 || M.BoxDim[I] > 256 || M.ElementStride[I] == 0 || M.ElementStride[I] > 8 ||
        !tensorMapElementBytes(M.DataType) || M.Swizzle > 3)
      raiseFault(C, LaunchFault::IllegalInstruction, "cp.async.bulk.tensor: a tensor map field out of range", true);
  unsigned Elem = tensorMapElementBytes(M.DataType), Span = M.Swizzle ? 16u << M.Swizzle : 0;
  RedKind K = kindOfMapType(M.DataType);
  // An H100 ignores the element stride of dimension 0 (the box's rows are loaded whole, tma/
  // tile_2d_f32_inner_element_stride); the other dimensions take every stride-th index, as the ISA says.
  uint64_t N[5] = {1, 1, 1, 1, 1}, Step[5] = {1, 1, 1, 1, 1}, Total = 1;
  for (unsigned I = 0; I < Dims; ++I) {
    Step[I] = I == 0 ? 1 : M.ElementStride[I];
    N[I] = (M.BoxDim[I] + Step[I] - 1) / Step[I];
    Total *= N[I];
  }
  // Rows narrower than the swizzle span still start a span apart (tma/tile_2d_swizzle_128b_box64b).
  uint64_t RowBytes = N[0] * Elem, Pitch = Span ? (RowBytes + Span - 1) / Span * Span : RowBytes;
  // An H100 faults a store at a negative coordinate, and a reduction whose box starts at a byte offset that is
  // not a multiple of 16 (conformance cases tma/store_*, tma/reduce_add_2d: README.md).
  if (Op != OpLoad)
    for (unsigned I = 0; I < Dims; ++I)
      if (Coords[I] < 0 || (Op != OpStore && I == 0 && (int64_t(Coords[0]) * Elem) % 16))
        raiseFault(C, LaunchFault::IllegalInstruction,
                   "cp.async.bulk.tensor: a store or reduction box at a negative or unaligned coordinate", true);
  uint32_t Base = static_cast<uint32_t>(Smem - C->Shared);
  if (uint64_t(Base) + Total / N[0] * Pitch > C->TotalSmemSize)
    raiseFault(C, LaunchFault::IllegalAddress, "cp.async.bulk.tensor: the box does not fit in shared memory", true);
  uint64_t J[5] = {0, 0, 0, 0, 0};
  for (uint64_t Lin = 0; Lin < Total; ++Lin) {
    bool In = true;
    uint64_t Off = 0;
    for (unsigned I = 0; I < Dims; ++I) {
      int64_t G = int64_t(Coords[I]) + int64_t(J[I] * Step[I]);
      In &= G >= 0 && uint64_t(G) < dimOf(M, I);
      Off += I == 0 ? uint64_t(G) * Elem : uint64_t(G) * M.GlobalStride[I - 1];
    }
    uint64_t SmemOff = (Lin / N[0]) * Pitch + (Lin % N[0]) * Elem;
    char *S = C->Shared + swizzleSharedOffset(Base + static_cast<uint32_t>(SmemOff), Span);
    char *G = reinterpret_cast<char *>(M.GlobalAddress + Off);
    if (Op == OpLoad) {
      if (In)
        memcpy(S, G, Elem);
      else
        fillElement(S, Elem, M);
    } else if (In) {
      if (Op == OpStore)
        memcpy(G, S, Elem);
      else
        reduceElement(G, S, Elem, K, Op);
    }
    for (unsigned I = 0; I < Dims && ++J[I] == N[I]; ++I)
      J[I] = 0;
  }
  return static_cast<uint32_t>(Total * Elem);
}

/// cp.reduce.async.bulk (not tensor): Size bytes of elements of Bytes bytes and kind Kind (RedKind), Dst op= Src.
static void ptxrt_bulk_reduce(char *Dst, const char *Src, uint32_t Size, uint32_t Bytes, uint32_t Kind, uint32_t Op) {
  for (uint32_t I = 0; I + Bytes <= Size; I += Bytes)
    reduceElement(Dst + I, Src + I, Bytes, static_cast<RedKind>(Kind), Op);
}
}

void ptxforge::codegen::exec::registerTensorMapHelpers(HelperTable &T) {
  T.insert(T.end(), {PTXRT_HELPER(ptxrt_tensor_tile), PTXRT_HELPER(ptxrt_bulk_reduce)});
}
