// The warp-major form of ptxrt_mma_batch (exec/WarpCollectives.cpp computeMmaBatch) for a full warp's run of wmma
// products: each fragment the run reads is gathered from the lanes' registers and decoded once, then kept while
// its registers are unchanged (a GEMM's unrolled k step multiplies each A tile by every B tile and each B by
// every A); each product's D stays decoded, as its registers hold it after rounding, for the next product that
// takes it as C, and reaches the lanes' registers once: when the run ends, or before anything reads those
// registers otherwise. A product per lane-by-lane gather, decode, encode and scatter cost ~30 times its
// arithmetic; the results are those of the per-product path, bit for bit (the same decode, the same
// multiplyMatrices call, the same rounding).
#include "MatrixCompute.h"
#include "MatrixProduct.h"
#include "Runtime.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

namespace {

/// A batch's registers and taken-over loads' addresses are at most this many words of each lane's buffer
/// (codegen/lib/MatrixBatches.cpp, lower/MatrixOps.cpp planMmaBatch).
constexpr unsigned MaxWords = 1024;
/// Decoded fragments kept at once: a 2 x 4 warp tile's eight accumulators and its A and B tiles with room.
constexpr unsigned Capacity = 24;

/// How a fragment's elements lie: A row-major M x K, B column-major K x N (kept decoded row-major), C and D
/// row-major M x N (one role: a D is the next product's C).
enum class Role : uint8_t { A, B, Acc };

/// One fragment of one product: its role, element type and the batch words of its registers.
struct Fragment {
  Role R;
  uint32_t T;
  unsigned Rows, Cols, NRegs;
  const uint32_t *Words; ///< into the batch's descriptor
  unsigned Load = 0;     ///< 1 + the index of the taken-over load that fills its registers, or 0
};

/// A fragment load the batch took over (lower/MatrixOps.cpp planMmaBatch): the run layout, the words holding
/// each lane's address and stride, and its registers' words.
struct TakenLoad {
  uint32_t Run, PtrWord, StrideWord, NRegs;
  const uint32_t *Words;
  bool LaneByLane = false; ///< a product reads its registers as another fragment: load them into the lanes
};

/// Where a taken-over load's fragment lies for this warp: Ptr null where the lanes disagree (or LaneByLane),
/// so that the lanes' registers were loaded instead.
struct LoadSource {
  const char *Ptr;
  uint64_t Stride;
};

/// Each lane's registers of load Ld, loaded from its own address and stride (ptxrt_wmma_run's access).
void loadLaneByLane(const TakenLoad &Ld, uint32_t Participants, uint64_t *const *LaneWords) {
  for (uint32_t L = 0; L < 32; ++L) {
    if (!(Participants >> L & 1))
      continue;
    uint64_t *W = LaneWords[L], Regs[32];
    wmmaRunAccess(L, Ld.Run, static_cast<uint32_t>(W[Ld.StrideWord]), reinterpret_cast<char *>(W[Ld.PtrWord]), Regs);
    for (unsigned R = 0; R < Ld.NRegs; ++R)
      W[Ld.Words[R]] = Regs[R];
  }
}

/// Bits of an element of type T (WarpCollectives.cpp elemBits, here without a call into another file: the
/// helpers below run for every fragment).
unsigned elementBits(uint32_t T) {
  switch (T) {
  case MEF16:
  case MEBF16:
    return 16;
  case MEF64:
    return 64;
  case MES8:
  case MEU8:
  case MEE4M3:
  case MEE5M2:
    return 8;
  case MES4:
  case MEU4:
    return 4;
  default:
    return 32;
  }
}

/// Elements per lane of a fragment of NRegs registers (32-bit registers pack smaller elements).
unsigned laneElements(uint32_t T, unsigned NRegs) {
  unsigned Bits = elementBits(T);
  return Bits >= 32 ? NRegs : NRegs * (32 / Bits);
}

/// Bytes of one register in a lane's buffer word: 8 for f64 fragments, else the 32-bit register's 4.
unsigned registerBytes(uint32_t T) { return elementBits(T) == 64 ? 8 : 4; }

/// Whether the fragment's per-lane runs tile its matrix, so that lanes 32 - Total/E ... 31 hold one whole copy in
/// order (the wmma layout of WarpCollectives.cpp wmmaPos), and its type is one decodeElements takes.
bool tiles(const Fragment &F) {
  unsigned Total = F.Rows * F.Cols, E = laneElements(F.T, F.NRegs), Bits = elementBits(F.T);
  return E && F.NRegs <= 16 && Total <= 512 && !(Total & (Total - 1)) && Total % E == 0 && (32 * E) % Total == 0 &&
         Bits >= 8 &&
         E * Bits == F.NRegs * registerBytes(F.T) * 8;
}

/// Count sums (in place) rounded to D's type T: the values its registers will hold and the next product reads,
/// as the per-product path (WarpCollectives.cpp computeMma) rounds them. False for a type a wmma D cannot have.
bool roundResults(uint32_t T, bool Sat, double *Vals, unsigned Count) {
  switch (T) {
  case MEF32:
    roundToF32(Vals, Count);
    return true;
  case MEF64:
    return true;
  case MEF16:
    for (unsigned I = 0; I < Count; ++I)
      Vals[I] = static_cast<double>(static_cast<_Float16>(Vals[I]));
    return true;
  case MES32: // exact integer sums, wrapped to 32 bits or saturated
    for (unsigned I = 0; I < Count; ++I) {
      int64_t V = static_cast<int64_t>(Vals[I]);
      Vals[I] = static_cast<int32_t>(static_cast<uint32_t>(Sat ? std::clamp<int64_t>(V, INT32_MIN, INT32_MAX) : V));
    }
    return true;
  default:
    return false;
  }
}

/// Count rounded values of type T (roundResults) as their registers hold them, packed: exact conversions, done
/// only for a D that reaches the lanes' registers.
void encodeResults(uint32_t T, const double *Vals, unsigned Count, unsigned char *Bits) {
  switch (T) {
  case MEF32:
    doublesToF32(Vals, Count, reinterpret_cast<uint32_t *>(Bits));
    return;
  case MEF64:
    memcpy(Bits, Vals, size_t(Count) * 8);
    return;
  case MEF16:
    for (unsigned I = 0; I < Count; ++I) {
      _Float16 H = static_cast<_Float16>(Vals[I]);
      memcpy(Bits + 2 * I, &H, 2);
    }
    return;
  default: // MES32
    for (unsigned I = 0; I < Count; ++I) {
      uint32_t U = static_cast<uint32_t>(static_cast<int32_t>(Vals[I]));
      memcpy(Bits + 4 * I, &U, 4);
    }
    return;
  }
}

/// A cached fragment. The entries are small and together, their matrices elsewhere: every allocation scans them
/// all, and with the matrices inline each entry was a cache line (and a page) of its own.
struct Entry {
  Fragment F;
  bool Valid = false, Dirty = false; ///< Dirty: the lanes' registers do not hold it yet
  uint64_t LastUse = 0;
  double *Vals = nullptr;         ///< row-major (B too), 512 doubles
  unsigned char *Bits = nullptr; ///< writeBack's scratch: a D's elements as its registers take them, packed
};

/// Whether N register words agree. A loop, not std::equal: that becomes a memcmp call, for the one to eight words
/// of a fragment on every get (an f64 GEMM: 7% of its time in memcmp).
bool sameWords(const uint32_t *X, const uint32_t *Y, unsigned N) {
  for (unsigned I = 0; I < N; ++I)
    if (X[I] != Y[I])
      return false;
  return true;
}

bool sameFragment(const Fragment &X, const Fragment &Y) {
  return X.R == Y.R && X.T == Y.T && X.Rows == Y.Rows && X.Cols == Y.Cols && X.NRegs == Y.NRegs &&
         sameWords(X.Words, Y.Words, X.NRegs);
}

/// The decoded fragments of the batch being computed, and which entry last took each register word.
class FragmentCache {
public:
  explicit FragmentCache(uint64_t *const *LaneWords) : LaneWords(LaneWords) {
    for (unsigned I = 0; I < Capacity; ++I)
      Entries[I].Vals = ValStore[I], Entries[I].Bits = BitStore[I];
  }
  /// A new batch: Lanes its lanes' words, Dead its bitmap of words whose values die in it (NDead words), Reads
  /// the last product (from 1) that reads each word, or 0.
  void reset(uint64_t *const *Lanes, const uint32_t *Dead, unsigned NDead, const uint32_t *Reads,
             const LoadSource *Sources);
  /// F decoded, from the cache or the lanes' registers; pinned for the current product.
  Entry &get(const Fragment &F);
  /// A fresh entry for a product's D (the caller fills Vals, rounded, then calls publish).
  Entry &allocate();
  /// E, a product's D just computed, becomes what its registers hold.
  void publish(Entry &E);
  /// Every D not yet in the lanes' registers goes there.
  void flush();
  /// Product Index (from 1) is next: the entries it gets are pinned until the next one.
  void startProduct(uint32_t Index) { Current = Index, ++Tick; }
  /// computeWarpMmaBatch's scratch: the taken-over loads' sources and whether the lanes agree on each.
  std::vector<LoadSource> SourceStore;
  std::vector<uint8_t> UniformStore;
  /// Starts loading the lanes' registers of F unless the cache holds it: the lanes' buffers are far apart
  /// (a thread's frame each), and a gather waiting on each lane's line was most of a decode.
  void prefetch(const Fragment &F) const {
    if (uint8_t O = Owner[F.Words[0]]; O && Entries[O - 1].Valid)
      return;
    if (F.Load && Sources[F.Load - 1].Ptr)
      return; // rows of shared memory: the hardware prefetcher's
    prefetchLanes(F, /*Write=*/false);
  }

private:
  void writeBack(Entry &E);
  void prefetchLanes(const Fragment &F, bool Write) const {
    for (unsigned L = 0; L < 32; ++L) {
      const uint64_t *W = LaneWords[L];
      if (Write)
        __builtin_prefetch(&W[F.Words[0]], 1), __builtin_prefetch(&W[F.Words[F.NRegs - 1]], 1);
      else
        __builtin_prefetch(&W[F.Words[0]]), __builtin_prefetch(&W[F.Words[F.NRegs - 1]]);
    }
  }
  void drop(Entry &E, const Fragment *Keep);
  void claim(Entry &E);
  void decode(Entry &E);
  /// E's fragment straight from the memory a taken-over load names (rows, or a B's columns, Stride apart).
  void decodeFromMemory(Entry &E, const LoadSource &Src);
  /// Whether a register of E's may be read after the batch, so that E must reach the lanes' registers.
  bool liveOut(const Entry &E) const;
  /// Whether the current product (which may not have pinned it yet), a later one or code after the batch may
  /// read a register of E's.
  bool readLater(const Entry &E) const {
    for (unsigned R = 0; R < E.F.NRegs; ++R)
      if (LastRead[E.F.Words[R]] >= Current)
        return true;
    return liveOut(E);
  }

  uint64_t *const *LaneWords;
  const LoadSource *Sources = nullptr; ///< per taken-over load
  const uint32_t *Dead = nullptr;
  unsigned NDead = 0;
  uint64_t Tick = 1;
  uint32_t Current = 0;
  unsigned Hand = 0; ///< allocate's next candidate
  Entry Entries[Capacity];
  uint8_t Owner[MaxWords] = {}; ///< entry index + 1 of the entry holding the word, or 0
  uint32_t LastRead[MaxWords] = {}; ///< the last product (from 1) of the batch that reads the word, or 0
  // decode's scratch: a fragment's registers packed, and a B's column-major elements.
  alignas(64) unsigned char Packed[512 * 8]; // as 32-bit or 64-bit registers
  alignas(64) double Cols[512];
  alignas(64) double ValStore[Capacity][512];
  alignas(64) unsigned char BitStore[Capacity][256 * 8];
};

void FragmentCache::reset(uint64_t *const *Lanes, const uint32_t *DeadWords, unsigned NDeadWords,
                          const uint32_t *Reads, const LoadSource *LoadSources) {
  LaneWords = Lanes;
  Sources = LoadSources;
  Dead = DeadWords;
  NDead = NDeadWords;
  for (Entry &E : Entries)
    E.Valid = E.Dirty = false;
  unsigned N = std::min(NDeadWords, MaxWords);
  memset(Owner, 0, N * sizeof Owner[0]);
  memcpy(LastRead, Reads, N * sizeof LastRead[0]);
  Current = 0;
  ++Tick;
}

/// The lanes' registers take E's elements: lane L's registers are its run of E elements from (L * E) mod Total.
void FragmentCache::writeBack(Entry &E) {
  const Fragment &F = E.F;
  unsigned Total = F.Rows * F.Cols, PerLane = laneElements(F.T, F.NRegs), Bytes = elementBits(F.T) / 8;
  unsigned NRegs = F.NRegs;
  encodeResults(F.T, E.Vals, Total, E.Bits);
  uint32_t Idx[16]; // a copy the stores below cannot alias: no reload per register
  std::copy(F.Words, F.Words + NRegs, Idx);
  for (unsigned L = 0; L < 32; ++L) {
    const unsigned char *Run = E.Bits + ((L * PerLane) & (Total - 1)) * Bytes;
    uint64_t *W = LaneWords[L];
    if (registerBytes(F.T) == 4) // copies of a size the compiler knows: no call per register
      for (unsigned R = 0; R < NRegs; ++R) {
        uint32_t V;
        memcpy(&V, Run + R * 4, 4);
        W[Idx[R]] = V;
      }
    else
      for (unsigned R = 0; R < NRegs; ++R)
        memcpy(&W[Idx[R]], Run + R * 8, 8);
  }
  E.Dirty = false;
}

bool FragmentCache::liveOut(const Entry &E) const {
  for (unsigned R = 0; R < E.F.NRegs; ++R) {
    uint32_t W = E.F.Words[R];
    if (W >= NDead || !(Dead[W / 32] >> (W % 32) & 1))
      return true;
  }
  return false;
}

/// Forgets E, writing it back first if its registers lack it and anyone may read them, unless Keep (the D about to replace it) has
/// exactly its registers and role.
void FragmentCache::drop(Entry &E, const Fragment *Keep) {
  if (E.Dirty && readLater(E) &&
      !(Keep && Keep->R == E.F.R && Keep->NRegs == E.F.NRegs &&
        sameWords(Keep->Words, E.F.Words, Keep->NRegs)))
    writeBack(E);
  E.Valid = E.Dirty = false;
  uint8_t Id = static_cast<uint8_t>(&E - Entries + 1);
  for (unsigned R = 0; R < E.F.NRegs; ++R)
    if (Owner[E.F.Words[R]] == Id)
      Owner[E.F.Words[R]] = 0;
}

/// E becomes its words' owner; an entry that held any of them is dropped (a register holds one value).
void FragmentCache::claim(Entry &E) {
  uint8_t Id = static_cast<uint8_t>(&E - Entries + 1);
  for (unsigned R = 0; R < E.F.NRegs; ++R) {
    uint8_t &O = Owner[E.F.Words[R]];
    if (O && O != Id)
      drop(Entries[O - 1], &E.F);
    O = Id;
  }
}

/// E's fragment from the lanes' registers: lanes 32 - Total/E ... 31 hold one copy, in order.
void FragmentCache::decode(Entry &E) {
  const Fragment &F = E.F;
  if (F.Load && Sources[F.Load - 1].Ptr)
    return decodeFromMemory(E, Sources[F.Load - 1]);
  for (unsigned R = 0; R < F.NRegs; ++R) // a D still in the cache is what the registers hold
    if (uint8_t O = Owner[F.Words[R]]; O && Entries[O - 1].Dirty)
      writeBack(Entries[O - 1]);
  unsigned Total = F.Rows * F.Cols, PerLane = laneElements(F.T, F.NRegs), NRegs = F.NRegs;
  uint32_t Idx[16]; // a copy the stores below cannot alias: no reload per register
  std::copy(F.Words, F.Words + NRegs, Idx);
  if (registerBytes(F.T) == 4) { // a 32-bit register is its word's low half
    uint32_t *P = reinterpret_cast<uint32_t *>(Packed);
    for (unsigned L = 32 - Total / PerLane; L < 32; ++L, P += NRegs)
      for (unsigned R = 0; R < NRegs; ++R)
        P[R] = static_cast<uint32_t>(LaneWords[L][Idx[R]]);
  } else { // f64: the registers are the elements, gathered straight into the matrix (B: its columns)
    double *P = F.R == Role::B ? Cols : E.Vals;
    for (unsigned L = 32 - Total / PerLane; L < 32; ++L, P += NRegs)
      for (unsigned R = 0; R < NRegs; ++R)
        memcpy(&P[R], &LaneWords[L][Idx[R]], 8);
  }
  bool F64 = registerBytes(F.T) == 8;
  if (F.R != Role::B) {
    if (!F64)
      decodeElements(F.T, Packed, Total, E.Vals);
    return;
  }
  if (!F64)
    decodeElements(F.T, Packed, Total, Cols);
  transposeMatrix(Cols, F.Cols, F.Rows, E.Vals); // column-major K x N -> row-major
}

void FragmentCache::decodeFromMemory(Entry &E, const LoadSource &Src) {
  const Fragment &F = E.F;
  bool ColumnWise = F.R == Role::B; // a B fragment's order is column-major
  unsigned Lines = ColumnWise ? F.Cols : F.Rows, Len = ColumnWise ? F.Rows : F.Cols;
  uint64_t LineBytes = Src.Stride * (elementBits(F.T) / 8);
  if (F.T == MEF64) { // the elements are the doubles: rows straight into place, a B's columns transposed
    for (unsigned I = 0; I < Lines; ++I) {
      const char *Line = Src.Ptr + I * LineBytes;
      if (!ColumnWise) {
        memcpy(E.Vals + I * Len, Line, size_t(Len) * 8);
        continue;
      }
      for (unsigned J = 0; J < Len; ++J)
        memcpy(&E.Vals[J * Lines + I], Line + 8 * J, 8);
    }
    return;
  }
  double *Out = ColumnWise ? Cols : E.Vals;
  for (unsigned I = 0; I < Lines; ++I)
    decodeElements(F.T, Src.Ptr + I * LineBytes, Len, Out + I * Len);
  if (ColumnWise)
    transposeMatrix(Cols, F.Cols, F.Rows, E.Vals);
}

Entry &FragmentCache::allocate() {
  // First in, first out, past the entries the current product pinned: a scan for the least recently used one
  // was a tenth of an f64 GEMM's time, and a k step's fragments are allocated in the order they are used.
  for (;;) {
    Entry &E = Entries[Hand];
    Hand = Hand + 1 == Capacity ? 0 : Hand + 1;
    if (E.LastUse == Tick) // pinned: the current product reads it, dropped or not
      continue;
    if (E.Valid)
      drop(E, nullptr);
    E.LastUse = Tick;
    return E; // Capacity exceeds the four entries one product pins, so the loop ends
  }
}

Entry &FragmentCache::get(const Fragment &F) {
  // A valid entry owns every one of its words, so the owner of F's first is the only candidate.
  if (uint8_t O = Owner[F.Words[0]]; O && Entries[O - 1].Valid && sameFragment(Entries[O - 1].F, F)) {
    Entries[O - 1].LastUse = Tick;
    return Entries[O - 1];
  }
  Entry &E = allocate();
  E.F = F;
  decode(E);
  E.Valid = true;
  claim(E);
  return E;
}

void FragmentCache::publish(Entry &E) {
  E.Valid = E.Dirty = true;
  claim(E);
}

void FragmentCache::flush() {
  Entry *Pending = nullptr; // each write-back overlaps the next one's line fetches
  for (Entry &E : Entries) {
    if (!E.Valid || !E.Dirty || !liveOut(E))
      continue;
    prefetchLanes(E.F, /*Write=*/true);
    if (Pending)
      writeBack(*Pending);
    Pending = &E;
  }
  if (Pending)
    writeBack(*Pending);
}

/// The fragments of one product of the descriptor (P: code, counts, then its registers' words).
struct Product {
  uint32_t Code;
  Fragment A, B, C, D;
  unsigned Words; ///< descriptor words it takes
};

bool readProduct(const uint32_t *P, Product &Out) {
  uint32_t Code = P[0], Counts = P[1];
  unsigned NA = Counts & 0xff, NB = Counts >> 8 & 0xff, NC = Counts >> 16 & 0xff, ND = Counts >> 24;
  MmaShape Sh = mmaShapeOf(Code);
  if (!Sh.Wmma || !(Code >> 23 & 1))
    return false;
  const uint32_t *W = P + 2;
  uint32_t TA = Code >> 4 & 15, TB = Code >> 8 & 15, TC = Code >> 12 & 15, TD = Code >> 16 & 15;
  Out = {Code,
         {Role::A, TA, Sh.M, Sh.K, NA, W},
         {Role::B, TB, Sh.K, Sh.N, NB, W + NA},
         {Role::Acc, TC, Sh.M, Sh.N, NC, W + NA + NB},
         {Role::Acc, TD, Sh.M, Sh.N, ND, W + NA + NB + NC},
         2 + NA + NB + NC + ND};
  bool Words64 = !(Code >> 21 & 1);
  for (const Fragment *F : {&Out.A, &Out.B, &Out.C, &Out.D}) {
    if (!tiles(*F) || (registerBytes(F->T) == 8) != Words64)
      return false;
    for (unsigned R = 0; R < F->NRegs; ++R)
      if (F->Words[R] >= MaxWords)
        return false;
  }
  return TD == MEF32 || TD == MEF64 || TD == MEF16 || TD == MES32;
}

void computeProduct(FragmentCache &Cache, const Product &P) {
  const Entry &A = Cache.get(P.A);
  const Entry &B = Cache.get(P.B);
  const Entry &C = Cache.get(P.C);
  Entry &D = Cache.allocate();
  D.F = P.D;
  uint32_t TA = P.Code >> 4 & 15, TD = P.Code >> 16 & 15;
  multiplyMatrices(P.A.Rows, P.B.Cols, P.A.Cols, A.Vals, B.Vals, C.Vals, D.Vals, TA != MEF64);
  roundResults(TD, P.Code >> 20 & 1, D.Vals, P.D.Rows * P.D.Cols);
  Cache.publish(D);
}

/// A batch's descriptor parsed (its words copied: the products point into them), or Ok false where the
/// per-product path must take it.
struct ParsedBatch {
  const uint32_t *Desc = nullptr;
  uint64_t Epoch = 0; ///< UnloadEpoch when Copy was last found to be Desc's words
  std::vector<uint32_t> Copy;
  std::vector<Product> Products;
  std::vector<uint32_t> LastRead; ///< per word, the last product (from 1) that reads it
  std::vector<TakenLoad> Loads;
  bool AddressesFirst = false; ///< load I's address and stride are words 2I and 2I + 1
  const uint32_t *Dead = nullptr;
  unsigned NWords = 0;
  bool Ok = false;
};

/// The taken-over loads after the descriptor's bitmap (P: its load count).
std::vector<TakenLoad> readLoads(const uint32_t *P) {
  std::vector<TakenLoad> Loads(P[0]);
  P += 1;
  for (TakenLoad &Ld : Loads) {
    Ld = {P[0], P[1], P[2], P[3], P + 4};
    P += 4 + Ld.NRegs;
  }
  return Loads;
}

/// The descriptor's words from its word count on (P): the count, the bitmap, the load count and the loads.
size_t tailWords(const uint32_t *P) {
  size_t N = 1 + (P[0] + 31) / 32;
  uint32_t Count = P[N];
  N += 1;
  for (uint32_t I = 0; I < Count; ++I)
    N += 4 + P[N + 3];
  return N;
}

/// The descriptor's length in words: the products, then the word count and its bitmap.
/// Where the descriptor's products end: its word count, then the bitmap and the taken-over loads.
const uint32_t *productsEnd(const uint32_t *Desc) {
  const uint32_t *P = Desc + 1;
  for (uint32_t I = 0; I < Desc[0]; ++I) {
    uint32_t Counts = P[1];
    P += 2 + (Counts & 0xff) + (Counts >> 8 & 0xff) + (Counts >> 16 & 0xff) + (Counts >> 24);
  }
  return P;
}

size_t descriptorWords(const uint32_t *Desc) {
  const uint32_t *P = productsEnd(Desc);
  return (P - Desc) + tailWords(P);
}

/// Whether F is exactly what load Ld puts in its registers: the same words in order, and lines of its matrix in
/// the fragment's order (rows; a B's columns) as the load's run layout reads them.
bool loadFills(const TakenLoad &Ld, const Fragment &F) {
  unsigned Total = 1u << (Ld.Run >> 8 & 15), Len = 1u << (Ld.Run >> 12 & 15), Bytes = 1u << (Ld.Run >> 16 & 3);
  return Ld.NRegs == F.NRegs && std::equal(F.Words, F.Words + F.NRegs, Ld.Words) && Total == F.Rows * F.Cols &&
         Len == (F.R == Role::B ? F.Rows : F.Cols) && Bytes * 8 == elementBits(F.T) && Len <= 512;
}

/// Marks each product fragment a taken-over load fills (Fragment::Load); a load whose registers a product reads
/// otherwise, or writes, is loaded lane by lane. False where the loads are malformed.
bool matchLoads(ParsedBatch &B) {
  std::vector<uint16_t> LoadOf(B.NWords, 0); // 1 + the load each word belongs to
  for (size_t I = 0; I < B.Loads.size(); ++I)
    for (unsigned R = 0; R < B.Loads[I].NRegs; ++R) {
      if (B.Loads[I].Words[R] >= B.NWords || B.Loads[I].PtrWord >= B.NWords || B.Loads[I].StrideWord >= B.NWords)
        return false;
      LoadOf[B.Loads[I].Words[R]] = static_cast<uint16_t>(I + 1);
    }
  for (Product &P : B.Products) {
    for (Fragment *F : {&P.A, &P.B, &P.C})
      for (unsigned R = 0; R < F->NRegs; ++R)
        if (uint16_t Ld = LoadOf[F->Words[R]]) {
          if (loadFills(B.Loads[Ld - 1], *F))
            F->Load = Ld;
          else
            B.Loads[Ld - 1].LaneByLane = true;
        }
    for (unsigned R = 0; R < P.D.NRegs; ++R)
      if (uint16_t Ld = LoadOf[P.D.Words[R]])
        B.Loads[Ld - 1].LaneByLane = true;
  }
  for (Product &P : B.Products) // a load marked late: every fragment it fills is read from the lanes
    for (Fragment *F : {&P.A, &P.B, &P.C})
      if (F->Load && B.Loads[F->Load - 1].LaneByLane)
        F->Load = 0;
  return true;
}

/// Parses B.Copy: its products, each checked, with the word count and bitmap after them (lowerMmaBatch
/// markLiveOut).
void parseBatch(ParsedBatch &B) {
  B.Products.clear();
  B.Ok = false;
  const uint32_t *Desc = B.Copy.data(), *P = Desc + 1;
  for (uint32_t I = 0; I < Desc[0]; ++I) {
    Product Pr;
    if (!readProduct(P, Pr) || Pr.D.Rows * Pr.D.Cols > 256)
      return;
    B.Products.push_back(Pr);
    P += Pr.Words;
  }
  B.NWords = *P, B.Dead = P + 1;
  if (B.NWords > MaxWords)
    return;
  B.LastRead.assign(B.NWords, 0);
  for (uint32_t I = 0; I < B.Products.size(); ++I) // every word in the bitmap's range
    for (const Fragment *F : {&B.Products[I].A, &B.Products[I].B, &B.Products[I].C, &B.Products[I].D})
      for (unsigned R = 0; R < F->NRegs; ++R) {
        if (F->Words[R] >= B.NWords)
          return;
        if (F != &B.Products[I].D)
          B.LastRead[F->Words[R]] = I + 1;
      }
  B.Loads = readLoads(P + 1 + (B.NWords + 31) / 32);
  B.AddressesFirst = true;
  for (uint32_t I = 0; I < B.Loads.size(); ++I)
    B.AddressesFirst &= B.Loads[I].PtrWord == 2 * I && B.Loads[I].StrideWord == 2 * I + 1;
  B.Ok = matchLoads(B);
}

/// Counts unloads of JIT'd code (noteCodeUnloaded): a descriptor's words cannot change while its code is loaded.
std::atomic<uint64_t> UnloadEpoch{1};

/// Desc parsed: the dispatcher computes every warp's batch at one cut in turn, so a few recent ones are kept,
/// by address. Checked word for word once after each unload of code (a module unloaded and another loaded may
/// reuse the address), not at every call: the check and the walk to find the descriptor's length were 9% of an
/// f64 GEMM's time.
const ParsedBatch &parsedBatch(const uint32_t *Desc) {
  constexpr unsigned Kept = 32; // dmmaTensorCoreGemm's k loop, unrolled by nvcc, is 16 batches
  struct Recent {
    ParsedBatch Batches[Kept];
    unsigned Next = 0;
  };
  // On the heap: libcuda.so.1's thread-locals live in static TLS (FaultGuard.cpp's initial-exec variable), of
  // which a dlopen()ed library gets little; 32 batches there made dlopen fail.
  thread_local std::unique_ptr<Recent> Store;
  if (!Store)
    Store = std::make_unique<Recent>();
  Recent &R = *Store;
  uint64_t Epoch = UnloadEpoch.load(std::memory_order_acquire);
  for (ParsedBatch &B : R.Batches)
    if (B.Desc == Desc && B.Epoch == Epoch)
      return B;
  size_t N = descriptorWords(Desc);
  for (ParsedBatch &B : R.Batches)
    if (B.Desc == Desc && B.Copy.size() == N && std::equal(Desc, Desc + N, B.Copy.begin())) {
      B.Epoch = Epoch;
      return B;
    }
  ParsedBatch &B = R.Batches[R.Next];
  R.Next = (R.Next + 1) % Kept;
  B.Desc = Desc;
  B.Epoch = Epoch;
  B.Copy.assign(Desc, Desc + N);
  parseBatch(B);
  return B;
}

} // namespace

void ptxforge::codegen::exec::noteCodeUnloaded() { UnloadEpoch.fetch_add(1, std::memory_order_acq_rel); }

bool ptxforge::codegen::exec::computeWarpMmaBatch(const uint32_t *Desc, uint64_t *const *LaneWords) {
  // Every product must fit before any runs: the per-product path takes the whole batch otherwise.
  const ParsedBatch &Batch = parsedBatch(Desc);
  if (!Batch.Ok)
    return false;
  // One per worker thread (a product never yields): 24 entries of 6 KiB, not on a fiber's stack.
  thread_local std::unique_ptr<FragmentCache> CacheStore;
  if (!CacheStore)
    CacheStore = std::make_unique<FragmentCache>(LaneWords);
  FragmentCache &Cache = *CacheStore;
  // Each taken-over load: from memory where the warp gives one address and stride (wmma.load requires it),
  // else into the lanes' registers as the load itself would have. Lane by lane, each lane's words in order: a
  // lane's buffer is far from the next one's, and a load's words from 32 buffers in turn were 32 cache misses
  // where one lane's run of loads is a stream. (The vectors are the cache's, not thread-locals: GCC called
  // __tls_get_addr for every use of one in the loops.)
  std::vector<LoadSource> &Sources = Cache.SourceStore;
  std::vector<uint8_t> &Uniform = Cache.UniformStore;
  size_t NLoads = Batch.Loads.size();
  Sources.resize(NLoads);
  Uniform.resize(NLoads);
  for (size_t I = 0; I < NLoads; ++I) {
    const TakenLoad &Ld = Batch.Loads[I];
    Sources[I] = {reinterpret_cast<const char *>(LaneWords[0][Ld.PtrWord]), LaneWords[0][Ld.StrideWord]};
    Uniform[I] = !Ld.LaneByLane;
  }
  for (unsigned L = 1; L < 32; ++L) {
    const uint64_t *W = LaneWords[L];
    // planMmaBatch puts the addresses and strides first: a lane that agrees on all of them is one memcmp.
    if (Batch.AddressesFirst && !memcmp(W, LaneWords[0], NLoads * 2 * sizeof(uint64_t)))
      continue;
    for (size_t I = 0; I < NLoads; ++I)
      Uniform[I] &= W[Batch.Loads[I].PtrWord] == reinterpret_cast<uint64_t>(Sources[I].Ptr) &&
                    W[Batch.Loads[I].StrideWord] == Sources[I].Stride;
  }
  for (size_t I = 0; I < NLoads; ++I)
    if (!Uniform[I]) {
      Sources[I].Ptr = nullptr;
      loadLaneByLane(Batch.Loads[I], 0xffffffffu, LaneWords);
    }
  Cache.reset(LaneWords, Batch.Dead, Batch.NWords, Batch.LastRead.data(), Sources.data());
  const std::vector<Product> &Products = Batch.Products;
  constexpr unsigned Ahead = 2; // products whose fragments are fetched while one computes
  for (uint32_t I = 0; I < std::min<size_t>(Ahead, Products.size()); ++I)
    for (const Fragment *F : {&Products[I].A, &Products[I].B, &Products[I].C})
      Cache.prefetch(*F);
  for (uint32_t I = 0; I < Products.size(); ++I) {
    if (I + Ahead < Products.size())
      for (const Fragment *F : {&Products[I + Ahead].A, &Products[I + Ahead].B, &Products[I + Ahead].C})
        Cache.prefetch(*F);
    Cache.startProduct(I + 1);
    computeProduct(Cache, Products[I]);
  }
  Cache.flush();
  return true;
}

void ptxforge::codegen::exec::loadBatchFragments(const uint32_t *Desc, uint32_t Participants,
                                                  uint64_t *const *LaneWords) {
  const uint32_t *P = productsEnd(Desc);
  for (const TakenLoad &Ld : readLoads(P + 1 + (P[0] + 31) / 32))
    loadLaneByLane(Ld, Participants, LaneWords);
}
