// The warp-major form of ptxrt_mma_batch (exec/WarpCollectives.cpp computeMmaBatch) for a full warp's run of wmma
// products: each fragment the run reads is gathered from the lanes' registers and decoded once, then kept while
// its registers are unchanged (a GEMM's unrolled k step multiplies each A tile by every B tile and each B by
// every A); each product's D stays decoded, as its registers hold it after rounding, for the next product that
// takes it as C, and reaches the lanes' registers once: when the run ends, or before anything reads those
// registers otherwise. A product per lane-by-lane gather, decode, encode and scatter cost ~30 times its
// arithmetic; the results are those of the per-product path, bit for bit (the same decode, the same
// multiplyMatrices call, the same rounding). Which fragments are decoded, kept and written back depends only on
// the descriptor, so it is planned once per descriptor (Planner) into a list of steps each warp's batch runs.
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

/// Whether N register words agree. A loop, not std::equal: that becomes a memcmp call, for the one to eight words
/// of a fragment.
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

/// One step of a batch's schedule (Planner): decode a fragment into a slot, compute a product, or put a slot's
/// matrix into the lanes' registers.
struct Step {
  enum Kind : uint8_t { Decode, Multiply, WriteBack } K;
  uint16_t Slot;                ///< the matrix a Decode or a Multiply (its D) fills, or a WriteBack reads
  uint16_t A = 0, B = 0, C = 0; ///< a Multiply's operands
  const Fragment *F = nullptr;  ///< a Decode's or WriteBack's fragment, a Multiply's D
  const Product *P = nullptr;   ///< a Multiply's product
};

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
  std::vector<Step> Steps; ///< the batch's plan (Planner), pointing into Products
  unsigned Slots = 0, SlotSize = 0; ///< the matrices it keeps at once, and the doubles of each
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

/// Plans a batch (ParsedBatch::Steps) by following what each register word holds, product by product: the
/// decisions a fragment cache took at every product of every warp (a fifth of an f64 GEMM's time in its
/// bookkeeping), taken once per descriptor.
/// - A fragment read as exactly the matrix its first word holds (the same role, type, shape and words) is that
///   matrix. Any other is decoded, after each matrix that holds one of its words and the lanes lack is written
///   back.
/// - A product's D is a new matrix the lanes lack. Where it (or a decoded fragment) takes over words of another
///   such matrix, that one is written back first if a later product or code after the batch may read one of its
///   words, unless the newcomer is a D of exactly its words and role (a GEMM's accumulator updated in place).
/// - At the end, each matrix the lanes lack is written back where its words are live out (the descriptor's
///   bitmap).
/// Each matrix then takes a slot from the step that fills it to its last use.
class Planner {
public:
  explicit Planner(ParsedBatch &B) : B(B), Owner(B.NWords, -1) {}
  void run();

private:
  struct Matrix {
    const Fragment *F;
    bool Valid, Dirty; ///< Valid: it owns its words; Dirty: the lanes' registers lack it
    size_t LastUse;    ///< the last step that fills or reads it
  };
  int read(const Fragment &F);
  int create(Step S, const Fragment &F, bool Dirty);
  void claim(int M, const Fragment *Keep);
  void writeBack(int M);
  bool deadAfter(uint32_t Word) const { return B.Dead[Word / 32] >> (Word % 32) & 1; }
  bool readLater(const Fragment &F) const;
  void assignSlots();

  ParsedBatch &B;
  std::vector<Matrix> Matrices;
  std::vector<int> Owner;  ///< per word, the matrix holding its value, or -1: the lanes (or the load's memory)
  std::vector<Step> Steps; ///< Slot, A, B and C name matrices until assignSlots
  uint32_t Current = 0;    ///< the product being planned, from 1
};

void Planner::run() {
  for (const Product &P : B.Products) {
    ++Current;
    int A = read(P.A), Bm = read(P.B), C = read(P.C);
    for (int M : {A, Bm, C})
      Matrices[M].LastUse = Steps.size();
    Step S{Step::Multiply, 0, static_cast<uint16_t>(A), static_cast<uint16_t>(Bm), static_cast<uint16_t>(C)};
    S.P = &P;
    claim(create(S, P.D, /*Dirty=*/true), &P.D);
  }
  for (size_t M = 0; M < Matrices.size(); ++M) {
    const Fragment &F = *Matrices[M].F;
    if (Matrices[M].Valid && Matrices[M].Dirty &&
        std::any_of(F.Words, F.Words + F.NRegs, [&](uint32_t W) { return !deadAfter(W); }))
      writeBack(static_cast<int>(M));
  }
  assignSlots();
}

int Planner::read(const Fragment &F) {
  if (int M = Owner[F.Words[0]]; M >= 0 && Matrices[M].Valid && sameFragment(*Matrices[M].F, F))
    return M;
  for (unsigned R = 0; R < F.NRegs; ++R) // it is decoded from the lanes' registers: they must hold its words
    if (int M = Owner[F.Words[R]]; M >= 0 && Matrices[M].Dirty)
      writeBack(M);
  int M = create({Step::Decode, 0}, F, /*Dirty=*/false);
  claim(M, nullptr);
  return M;
}

int Planner::create(Step S, const Fragment &F, bool Dirty) {
  int M = static_cast<int>(Matrices.size());
  Matrices.push_back({&F, true, Dirty, Steps.size()});
  S.Slot = static_cast<uint16_t>(M);
  S.F = &F;
  Steps.push_back(S);
  return M;
}

void Planner::claim(int M, const Fragment *Keep) {
  const Fragment &F = *Matrices[M].F;
  for (unsigned R = 0; R < F.NRegs; ++R) {
    int Old = Owner[F.Words[R]];
    if (Old >= 0 && Old != M) { // a register holds one value: the old matrix no longer owns any word
      Matrix &X = Matrices[Old];
      bool Replaced = Keep && Keep->R == X.F->R && Keep->NRegs == X.F->NRegs &&
                      sameWords(Keep->Words, X.F->Words, Keep->NRegs);
      if (X.Dirty && readLater(*X.F) && !Replaced)
        writeBack(Old);
      X.Valid = X.Dirty = false;
      for (unsigned Q = 0; Q < X.F->NRegs; ++Q)
        if (Owner[X.F->Words[Q]] == Old)
          Owner[X.F->Words[Q]] = -1;
    }
    Owner[F.Words[R]] = M;
  }
}

void Planner::writeBack(int M) {
  Matrices[M].Dirty = false;
  Matrices[M].LastUse = Steps.size();
  Step S{Step::WriteBack, static_cast<uint16_t>(M)};
  S.F = Matrices[M].F;
  Steps.push_back(S);
}

bool Planner::readLater(const Fragment &F) const {
  return std::any_of(F.Words, F.Words + F.NRegs,
                     [&](uint32_t W) { return B.LastRead[W] >= Current || !deadAfter(W); });
}

/// Slots by a linear scan: a matrix's slot is free after its last use; a product's D never shares its operands'.
void Planner::assignSlots() {
  std::vector<std::vector<int>> EndsAt(Steps.size());
  for (size_t M = 0; M < Matrices.size(); ++M)
    EndsAt[Matrices[M].LastUse].push_back(static_cast<int>(M));
  std::vector<uint16_t> SlotOf(Matrices.size()), Free;
  unsigned Slots = 0, Largest = 0;
  for (size_t I = 0; I < Steps.size(); ++I) {
    Step &S = Steps[I];
    if (S.K != Step::WriteBack) {
      uint16_t Slot = static_cast<uint16_t>(Slots);
      if (Free.empty())
        ++Slots;
      else
        Slot = Free.back(), Free.pop_back();
      SlotOf[S.Slot] = Slot;
      Largest = std::max(Largest, S.F->Rows * S.F->Cols);
    }
    S.Slot = SlotOf[S.Slot];
    if (S.K == Step::Multiply)
      S.A = SlotOf[S.A], S.B = SlotOf[S.B], S.C = SlotOf[S.C];
    for (int M : EndsAt[I])
      Free.push_back(SlotOf[M]);
  }
  B.Steps = std::move(Steps);
  B.Slots = Slots;
  B.SlotSize = (Largest + 7) / 8 * 8; // whole cache lines
}

/// One warp's run of a batch's steps: its slots, and the lanes' registers and the taken-over loads' memory.
class BatchRun {
public:
  void run(const ParsedBatch &B, uint64_t *const *Lanes, const LoadSource *LoadSources);
  /// computeWarpMmaBatch's scratch: the taken-over loads' sources and whether the lanes agree on each.
  std::vector<LoadSource> SourceStore;
  std::vector<uint8_t> UniformStore;

private:
  bool fromMemory(const Fragment &F) const { return F.Load && Sources[F.Load - 1].Ptr; }
  void decode(const Fragment &F, double *Vals);
  /// F's matrix straight from the memory a taken-over load names (rows, or a B's columns, Stride apart).
  void decodeFromMemory(const Fragment &F, const LoadSource &Src, double *Vals);
  /// The lanes' registers take F's elements: lane L's registers are its run of E elements from (L * E) mod Total.
  void writeBack(const Fragment &F, const double *Vals);
  /// Starts loading (or owning, to write) the lanes' lines a step will touch: the lanes' buffers are far apart (a
  /// thread's frame each), and a gather waiting on each lane's line was most of a decode.
  void prefetch(const Step &S) const;

  uint64_t *const *LaneWords = nullptr;
  const LoadSource *Sources = nullptr;
  std::vector<double> SlotStore;
  // decode's and writeBack's scratch: a fragment's registers packed, a B's column-major elements.
  alignas(64) unsigned char Packed[512 * 8]; // as 32-bit or 64-bit registers
  alignas(64) double Cols[512];
};

void BatchRun::run(const ParsedBatch &B, uint64_t *const *Lanes, const LoadSource *LoadSources) {
  LaneWords = Lanes;
  Sources = LoadSources;
  if (SlotStore.size() < size_t(B.Slots) * B.SlotSize)
    SlotStore.resize(size_t(B.Slots) * B.SlotSize);
  double *Slots = SlotStore.data();
  auto at = [&](uint16_t Slot) { return Slots + size_t(Slot) * B.SlotSize; };
  const std::vector<Step> &Steps = B.Steps;
  constexpr size_t Ahead = 6; // steps whose lanes' lines are fetched while one runs
  for (size_t I = 0; I < std::min(Ahead, Steps.size()); ++I)
    prefetch(Steps[I]);
  for (size_t I = 0; I < Steps.size(); ++I) {
    if (I + Ahead < Steps.size())
      prefetch(Steps[I + Ahead]);
    const Step &S = Steps[I];
    switch (S.K) {
    case Step::Decode:
      decode(*S.F, at(S.Slot));
      break;
    case Step::Multiply: {
      const Product &P = *S.P;
      double *D = at(S.Slot);
      multiplyMatrices(P.A.Rows, P.B.Cols, P.A.Cols, at(S.A), at(S.B), at(S.C), D, (P.Code >> 4 & 15) != MEF64);
      roundResults(P.Code >> 16 & 15, P.Code >> 20 & 1, D, P.D.Rows * P.D.Cols);
      break;
    }
    case Step::WriteBack:
      writeBack(*S.F, at(S.Slot));
      break;
    }
  }
}

void BatchRun::prefetch(const Step &S) const {
  if (S.K == Step::Multiply || (S.K == Step::Decode && fromMemory(*S.F)))
    return; // rows of shared memory: the hardware prefetcher's
  const Fragment &F = *S.F;
  for (unsigned L = 0; L < 32; ++L) {
    const uint64_t *W = LaneWords[L];
    if (S.K == Step::WriteBack)
      __builtin_prefetch(&W[F.Words[0]], 1), __builtin_prefetch(&W[F.Words[F.NRegs - 1]], 1);
    else
      __builtin_prefetch(&W[F.Words[0]]), __builtin_prefetch(&W[F.Words[F.NRegs - 1]]);
  }
}

void BatchRun::writeBack(const Fragment &F, const double *Vals) {
  unsigned Total = F.Rows * F.Cols, PerLane = laneElements(F.T, F.NRegs), Bytes = elementBits(F.T) / 8;
  unsigned NRegs = F.NRegs;
  encodeResults(F.T, Vals, Total, Packed);
  uint32_t Idx[16]; // a copy the stores below cannot alias: no reload per register
  std::copy(F.Words, F.Words + NRegs, Idx);
  for (unsigned L = 0; L < 32; ++L) {
    const unsigned char *Run = Packed + ((L * PerLane) & (Total - 1)) * Bytes;
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
}

/// F's matrix from the lanes' registers, where lanes 32 - Total/E ... 31 hold one copy in order, or from the
/// memory its taken-over load names where the lanes agreed on it.
void BatchRun::decode(const Fragment &F, double *Vals) {
  if (fromMemory(F))
    return decodeFromMemory(F, Sources[F.Load - 1], Vals);
  unsigned Total = F.Rows * F.Cols, PerLane = laneElements(F.T, F.NRegs), NRegs = F.NRegs;
  uint32_t Idx[16]; // a copy the stores below cannot alias: no reload per register
  std::copy(F.Words, F.Words + NRegs, Idx);
  bool F64 = registerBytes(F.T) == 8;
  if (!F64) { // a 32-bit register is its word's low half
    uint32_t *P = reinterpret_cast<uint32_t *>(Packed);
    for (unsigned L = 32 - Total / PerLane; L < 32; ++L, P += NRegs)
      for (unsigned R = 0; R < NRegs; ++R)
        P[R] = static_cast<uint32_t>(LaneWords[L][Idx[R]]);
  } else { // f64: the registers are the elements, gathered straight into the matrix (B: its columns)
    double *P = F.R == Role::B ? Cols : Vals;
    for (unsigned L = 32 - Total / PerLane; L < 32; ++L, P += NRegs)
      for (unsigned R = 0; R < NRegs; ++R)
        memcpy(&P[R], &LaneWords[L][Idx[R]], 8);
  }
  if (F.R != Role::B) {
    if (!F64)
      decodeElements(F.T, Packed, Total, Vals);
    return;
  }
  if (!F64)
    decodeElements(F.T, Packed, Total, Cols);
  transposeMatrix(Cols, F.Cols, F.Rows, Vals); // column-major K x N -> row-major
}

void BatchRun::decodeFromMemory(const Fragment &F, const LoadSource &Src, double *Vals) {
  bool ColumnWise = F.R == Role::B; // a B fragment's order is column-major
  unsigned Lines = ColumnWise ? F.Cols : F.Rows, Len = ColumnWise ? F.Rows : F.Cols;
  uint64_t LineBytes = Src.Stride * (elementBits(F.T) / 8);
  if (F.T == MEF64) { // the elements are the doubles: rows straight into place, a B's columns transposed
    if (ColumnWise)
      return transposeLines(Src.Ptr, LineBytes, Lines, Len, Vals);
    for (unsigned I = 0; I < Lines; ++I)
      memcpy(Vals + I * Len, Src.Ptr + I * LineBytes, size_t(Len) * 8);
    return;
  }
  double *Out = ColumnWise ? Cols : Vals;
  for (unsigned I = 0; I < Lines; ++I)
    decodeElements(F.T, Src.Ptr + I * LineBytes, Len, Out + I * Len);
  if (ColumnWise)
    transposeMatrix(Cols, F.Cols, F.Rows, Vals);
}

/// Parses B.Copy: its products, each checked, with the word count and bitmap after them (lowerMmaBatch
/// markLiveOut).
void parseBatch(ParsedBatch &B) {
  B.Products.clear();
  B.Steps.clear(); // they point into the products
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
  if (B.Ok)
    Planner(B).run();
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
  // One per worker thread (a product never yields): its slots are not on a fiber's stack.
  thread_local std::unique_ptr<BatchRun> RunStore;
  if (!RunStore)
    RunStore = std::make_unique<BatchRun>();
  BatchRun &Run = *RunStore;
  // Each taken-over load: from memory where the warp gives one address and stride (wmma.load requires it),
  // else into the lanes' registers as the load itself would have. Lane by lane, each lane's words in order: a
  // lane's buffer is far from the next one's, and a load's words from 32 buffers in turn were 32 cache misses
  // where one lane's run of loads is a stream. (The vectors are the run's, not thread-locals: GCC called
  // __tls_get_addr for every use of one in the loops.)
  std::vector<LoadSource> &Sources = Run.SourceStore;
  std::vector<uint8_t> &Uniform = Run.UniformStore;
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
  Run.run(Batch, LaneWords, Sources.data());
  return true;
}

void ptxforge::codegen::exec::loadBatchFragments(const uint32_t *Desc, uint32_t Participants,
                                                  uint64_t *const *LaneWords) {
  const uint32_t *P = productsEnd(Desc);
  for (const TakenLoad &Ld : readLoads(P + 1 + (P[0] + 31) / 32))
    loadLaneByLane(Ld, Participants, LaneWords);
}
