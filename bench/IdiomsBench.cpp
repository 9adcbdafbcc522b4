// bench_idioms: ordinary CUDA (bench/idioms/idioms.cu, its nvcc PTX committed beside it) through libcuda.so.1,
// against a native C++ twin of each kernel (bench/idioms/native), with the machine's limits probed in the same run
// (STREAM copy and triad, FMA peak, native C++). Per kernel: the tiered JIT's first use (module load + quick code,
// and the first run on it), then steady state once the optimized code is in place: medians of alternating runs
// (ptxforge, native, ptxforge, ...), the ratio, the achieved GB/s or GFLOP/s and its fraction of the matching
// probe; outputs verified against the twin (a kernel that does not verify is a FAIL, not a time).
//
// Process layout (as bench_kernels): the parent starts one child per (thread count, kernel) and one for the probes,
// with libcuda's worker count (PTXFORGE_WORKERS, read at cuInit) and OpenMP's set in its environment and the
// compute cache off (CUDA_CACHE_DISABLE=1, so every child's first use is a cold compile); at 1 thread the child
// pins itself to one CPU before anything starts. It collects each child's JSON and prints the table.
#include "harness/BenchUtil.h"
#include "harness/CudaRunner.h"
#include "idioms/native/IdiomsNative.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sched.h>
#include <signal.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace ptxforge::bench;
using nlohmann::json;
namespace nat = ptxforge::bench::idioms;
using Clock = std::chrono::steady_clock;

namespace {

struct Options : SharedOptions {
  double Scale = 1;
  int Reps = 7;
  bool VerifyOnly = false;
  std::vector<std::string> Filter;
  std::string Ptx = PTXFORGE_IDIOMS_PTX, ExpectedFailures;
};

void usage() {
  std::printf(
      "usage: bench_idioms [--threads 1,2] [--scale F] [--reps N] [--kernels a,b] [--verify-only] [--json FILE]\n"
      "  --threads L    thread counts (default: 1 and all CPUs of the affinity mask); ptxforge's through\n"
      "                 PTXFORGE_WORKERS (read at cuInit), the native twins' through omp_set_num_threads\n"
      "  --scale F      multiplies every problem size (default 1: memory-bound working sets beyond the LLC)\n"
      "  --reps N       timed runs of each implementation, alternating; medians (default 7)\n"
      "  --kernels L    only kernels whose name contains one of these (e.g. copy,scan)\n"
      "  --verify-only  no timing: the quick-tier run and one optimized run, each verified\n"
      "  --timeout S    seconds per kernel child (default 900);  --ptx FILE: another idioms.ptx;  -v: samples\n"
      "  --expected-failures FILE  kernels (one a line, '#' comments) known to fail on ptxforge: XFAIL, and the\n"
      "                 exit status is 0 if only they fail (one that verifies is reported as XPASS)\n");
}

bool parseOptions(int Argc, char **Argv, Options &O) {
  return parseCommandLine(Argc, Argv, "bench_idioms", usage, O, [&](const std::string &A, const auto &Next) {
    if (A == "--scale")
      O.Scale = std::max(1e-6, std::atof(Next().c_str()));
    else if (A == "--reps")
      O.Reps = std::max(1, std::atoi(Next().c_str()));
    else if (A == "--kernels")
      O.Filter = splitList(Next());
    else if (A == "--verify-only")
      O.VerifyOnly = true;
    else if (A == "--ptx")
      O.Ptx = Next();
    else if (A == "--expected-failures")
      O.ExpectedFailures = Next();
    else
      return false;
    return true;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Workloads

using Host = HostBuffer;

Host allocate(size_t Bytes) { return zeroedPages(Bytes, "bench_idioms"); }

struct Buffer {
  std::string Name;
  Elem Type = Elem::U8; ///< how it is compared (structs: bytes)
  size_t Bytes = 0;
  Role Kind = Role::In;
  bool ZeroBeforeRun = false;
  Tolerance Tol;
  Host Init;
  size_t count() const { return Bytes / elemSize(Type); }
};

/// What the rate is judged against.
enum class Limit { Copy, Triad, F32, F64, None };
const char *limitName(Limit L) {
  static const char *Names[] = {"copy", "triad", "fma32", "fma64", "-"};
  return Names[int(L)];
}

using Ptrs = std::vector<void *>;

struct Idiom {
  std::string Name, Entry, Shape;
  std::vector<Buffer> Buffers;
  std::vector<LaunchSpec> Launches;
  std::function<void(const Ptrs &)> Native;
  /// Replaces the per-buffer comparison where the output's order is not fixed: "" or what differs.
  std::function<std::string(const Ptrs &Got, const Ptrs &Ref)> Check;
  double Work = 0; ///< bytes (compulsory traffic) or FLOP per run
  /// Work from the native output, where it depends on the data (mandelbrot's iterations).
  std::function<double(const Ptrs &Ref)> WorkOf;
  bool Flops = false;
  bool MemoryBound = false; ///< held to the STREAM bar
  Limit Against = Limit::None;

  /// A memory-bound kernel: Bytes of compulsory traffic per run, held to L's STREAM probe.
  void memoryBound(double Bytes, Limit L, std::string Size) {
    Work = Bytes, MemoryBound = true, Against = L, Shape = std::move(Size);
  }
  /// A compute-bound kernel: Flop per run, against L's FMA probe.
  void flopBound(double Flop, Limit L, std::string Size) {
    Work = Flop, Flops = true, Against = L, Shape = std::move(Size);
  }
};

template <class T> T *as(void *P) { return static_cast<T *>(P); }

/// Size Base * Scale rounded to a multiple of Multiple (at least one).
size_t sized(double Base, double Scale, size_t Multiple) {
  return std::max<size_t>(1, size_t(std::llround(Base * Scale / Multiple))) * Multiple;
}

template <class T, class D> Host randomArray(size_t N, D Dist, std::mt19937 &G) {
  Host H = allocate(N * sizeof(T));
  T *P = as<T>(H.get());
  for (size_t I = 0; I < N; ++I)
    P[I] = T(Dist(G));
  return H;
}

Buffer in(std::string Name, Elem Type, size_t Bytes, Host Data) {
  Buffer B;
  B.Name = std::move(Name), B.Type = Type, B.Bytes = Bytes, B.Init = std::move(Data);
  return B;
}

Buffer out(std::string Name, Elem Type, size_t Bytes, Tolerance Tol = {}) {
  Buffer B;
  B.Name = std::move(Name), B.Type = Type, B.Bytes = Bytes, B.Kind = Role::Out, B.Tol = Tol;
  B.Init = allocate(Bytes);
  return B;
}

Dim3 grid1(size_t X) { return Dim3{uint32_t(X), 1, 1}; }
Dim3 block1(uint32_t X) { return Dim3{X, 1, 1}; }
LaunchSpec launch(Dim3 Grid, Dim3 Block, std::vector<Arg> Args, unsigned SharedBytes = 0) {
  LaunchSpec L;
  L.Grid = Grid, L.Block = Block, L.Args = std::move(Args), L.SharedBytes = SharedBytes;
  return L;
}

/// Grid-stride kernels launch a fixed grid, as cuda-samples' alignedTypes does (more blocks than any CPU has
/// cores, fewer than elements).
constexpr uint32_t StrideGrid = 1024, StrideBlock = 256;

void makeCopy(Idiom &W, int Size, double Scale, std::mt19937 &G) {
  size_t N = sized(256.0 * (1 << 20) / Size, Scale, 256);
  W.Entry = "copy_" + std::to_string(Size);
  W.Buffers.push_back(
      in("in", Elem::U8, N * Size, randomArray<uint8_t>(N * Size, std::uniform_int_distribution<>(0, 255), G)));
  W.Buffers.push_back(out("out", Elem::U8, N * Size));
  W.Launches.push_back(
      launch(grid1(StrideGrid), block1(StrideBlock), {Arg::buffer(1), Arg::buffer(0), Arg::value<uint64_t>(N)}));
  W.Native = [N, Size](const Ptrs &P) { nat::copyElems(P[1], P[0], N, Size); };
  W.memoryBound(2.0 * N * Size, Limit::Copy, "n=" + std::to_string(N));
}

/// A banded random CSR matrix (8 to 24 entries a row, columns within 512 of the diagonal) and x.
void makeSpmv(Idiom &W, bool Vector, double Scale, std::mt19937 &G) {
  int Rows = int(sized(1 << 21, Scale, 256));
  Host RowPtr = allocate((Rows + 1) * sizeof(int));
  int *RP = as<int>(RowPtr.get());
  std::uniform_int_distribution<int> Len(8, 24), Off(-512, 512);
  for (int R = 0; R < Rows; ++R)
    RP[R + 1] = RP[R] + Len(G);
  size_t Nnz = RP[Rows];
  Host Cols = allocate(Nnz * sizeof(int));
  for (int R = 0; R < Rows; ++R)
    for (int J = RP[R]; J < RP[R + 1]; ++J)
      as<int>(Cols.get())[J] = std::min(std::max(R + Off(G), 0), Rows - 1);
  W.Entry = Vector ? "spmv_csr_vector" : "spmv_csr_scalar";
  W.Buffers.push_back(in("rowPtr", Elem::U32, (Rows + 1) * sizeof(int), std::move(RowPtr)));
  W.Buffers.push_back(in("cols", Elem::U32, Nnz * sizeof(int), std::move(Cols)));
  W.Buffers.push_back(
      in("vals", Elem::F32, Nnz * 4, randomArray<float>(Nnz, std::uniform_real_distribution<float>(-1, 1), G)));
  W.Buffers.push_back(
      in("x", Elem::F32, Rows * 4, randomArray<float>(Rows, std::uniform_real_distribution<float>(-1, 1), G)));
  W.Buffers.push_back(out("y", Elem::F32, Rows * 4, {1e-5, 1e-5})); // vector: another summation order
  size_t Threads = Vector ? size_t(Rows) * 32 : Rows;
  W.Launches.push_back(
      launch(grid1((Threads + 255) / 256), block1(256),
             {Arg::buffer(0), Arg::buffer(1), Arg::buffer(2), Arg::buffer(3), Arg::buffer(4), Arg::value(Rows)}));
  W.Native = [Rows](const Ptrs &P) {
    nat::spmvCsr(as<int>(P[0]), as<int>(P[1]), as<float>(P[2]), as<float>(P[3]), as<float>(P[4]), Rows);
  };
  W.memoryBound(8.0 * Nnz + 16.0 * Rows, Limit::Triad, std::to_string(Rows) + " rows, nnz=" + std::to_string(Nnz));
}

void makeRowDot(Idiom &W, double Scale, std::mt19937 &G) {
  int Cols = 1024, Rows = int(sized(1 << 16, Scale, 256));
  size_t N = size_t(Rows) * Cols;
  W.Entry = "row_dot";
  W.Buffers.push_back(
      in("A", Elem::F32, N * 4, randomArray<float>(N, std::uniform_real_distribution<float>(-1, 1), G)));
  W.Buffers.push_back(
      in("x", Elem::F32, Cols * 4, randomArray<float>(Cols, std::uniform_real_distribution<float>(-1, 1), G)));
  W.Buffers.push_back(out("y", Elem::F32, Rows * 4, {1e-5, 1e-5}));
  W.Launches.push_back(launch(grid1(Rows / 256), block1(256),
                              {Arg::buffer(0), Arg::buffer(1), Arg::buffer(2), Arg::value(Rows), Arg::value(Cols)}));
  W.Native = [Rows, Cols](const Ptrs &P) {
    nat::rowDot(as<float>(P[0]), as<float>(P[1]), as<float>(P[2]), Rows, Cols);
  };
  W.memoryBound(4.0 * N, Limit::Triad, std::to_string(Rows) + "x" + std::to_string(Cols));
}

/// The block scans: 512 threads; Hillis-Steele and the warp scan scan 512-element segments, Blelloch 1024.
void makeScan(Idiom &W, const std::string &Kind, double Scale, std::mt19937 &G) {
  const uint32_t Block = 512;
  int Seg = Kind == "blelloch" ? 1024 : 512;
  size_t N = sized(1 << 26, Scale, Seg);
  W.Entry = "scan_" + Kind;
  W.Buffers.push_back(
      in("in", Elem::U32, N * 4, randomArray<int>(N, std::uniform_int_distribution<int>(-1000, 1000), G)));
  W.Buffers.push_back(out("out", Elem::U32, N * 4));
  unsigned Shared = Kind == "warp_shfl" ? 0 : 2 * Block * 4;
  W.Launches.push_back(
      launch(grid1(N / Seg), block1(Block), {Arg::buffer(0), Arg::buffer(1), Arg::value(int(N))}, Shared));
  bool Inclusive = Kind != "blelloch";
  W.Native = [N, Seg, Inclusive](const Ptrs &P) {
    (Inclusive ? nat::segmentInclusiveScan : nat::segmentExclusiveScan)(as<int>(P[0]), as<int>(P[1]), N, Seg);
  };
  W.memoryBound(8.0 * N, Limit::Triad, "n=" + std::to_string(N) + ", seg " + std::to_string(Seg));
}

void makeSorts(Idiom &W, bool Radix, double Scale, std::mt19937 &G) {
  uint32_t Block = Radix ? 256 : 512, Seg = Radix ? 256 : 1024;
  size_t N = sized(1 << 24, Scale, Seg);
  Host Keys = randomArray<uint32_t>(N, std::uniform_int_distribution<uint32_t>(0, ~0u), G);
  if (!Radix) {
    Buffer K = in("keys", Elem::U32, N * 4, std::move(Keys));
    K.Kind = Role::InOut;
    W.Entry = "bitonic_sort_shared";
    W.Buffers.push_back(std::move(K));
    W.Launches.push_back(launch(grid1(N / Seg), block1(Block), {Arg::buffer(0)}, Seg * 4));
    W.Native = [N, Seg](const Ptrs &P) { nat::sortSegments(as<uint32_t>(P[0]), N, Seg); };
  } else {
    const int Shift = 8;
    W.Entry = "radix_sort_pass";
    W.Buffers.push_back(in("in", Elem::U32, N * 4, std::move(Keys)));
    W.Buffers.push_back(out("out", Elem::U32, N * 4));
    W.Buffers.push_back(out("digitCounts", Elem::U32, N / Seg * 16 * 4));
    W.Launches.push_back(launch(grid1(N / Seg), block1(Block),
                                {Arg::buffer(0), Arg::buffer(1), Arg::buffer(2), Arg::value(Shift)}, 2 * Block * 4));
    W.Native = [N, Seg](const Ptrs &P) {
      nat::radixPass(as<uint32_t>(P[0]), as<uint32_t>(P[1]), as<uint32_t>(P[2]), N, Seg, Shift);
    };
  }
  W.Work = 8.0 * N;
  W.Against = Limit::Triad;
  W.Shape = "n=" + std::to_string(N) + ", seg " + std::to_string(Seg);
}

void makeAtomics(Idiom &W, bool Cas, double Scale, std::mt19937 &G) {
  if (!Cas) {
    size_t N = sized(1 << 28, Scale, 256);
    W.Entry = "histogram_global";
    W.Buffers.push_back(in("data", Elem::U8, N, randomArray<uint8_t>(N, std::uniform_int_distribution<>(0, 255), G)));
    Buffer H = out("hist", Elem::U32, 256 * 4);
    H.ZeroBeforeRun = true;
    W.Buffers.push_back(std::move(H));
    W.Launches.push_back(
        launch(grid1(StrideGrid), block1(StrideBlock), {Arg::buffer(0), Arg::buffer(1), Arg::value<uint64_t>(N)}));
    W.Native = [N](const Ptrs &P) { nat::histogram(as<uint8_t>(P[0]), as<unsigned>(P[1]), N); };
    W.Work = double(N);
    W.Shape = "n=" + std::to_string(N) + ", 256 bins";
  } else {
    size_t N = sized(1 << 24, Scale, 256);
    const int Bins = 1024;
    W.Entry = "atomic_cas_max";
    W.Buffers.push_back(
        in("vals", Elem::F32, N * 4, randomArray<float>(N, std::uniform_real_distribution<float>(-1e6f, 1e6f), G)));
    W.Buffers.push_back(
        in("bins", Elem::U32, N * 4, randomArray<uint32_t>(N, std::uniform_int_distribution<uint32_t>(0, ~0u), G)));
    Buffer M = out("binMax", Elem::F32, Bins * 4);
    std::fill(as<float>(M.Init.get()), as<float>(M.Init.get()) + Bins, -INFINITY);
    M.Kind = Role::InOut;
    W.Buffers.push_back(std::move(M));
    W.Launches.push_back(
        launch(grid1(StrideGrid), block1(StrideBlock),
               {Arg::buffer(0), Arg::buffer(1), Arg::buffer(2), Arg::value(Bins), Arg::value<uint64_t>(N)}));
    W.Native = [N](const Ptrs &P) { nat::binMax(as<float>(P[0]), as<uint32_t>(P[1]), as<float>(P[2]), Bins, N); };
    W.Work = 8.0 * N;
    W.Shape = "n=" + std::to_string(N) + ", 1024 bins";
  }
  W.Against = Limit::Triad;
}

/// Mandelbrot over [-2, 1] x [-1.5, 1.5], 256 iterations at most. Float rounding (where each compiler fuses
/// multiply-adds) can move a pixel on the set's edge by an iteration or many: 0.1% of pixels may differ.
void makeMandelbrot(Idiom &W, double Scale) {
  int Side = int(sized(2048, std::sqrt(Scale), 16));
  const int MaxIter = 256;
  float D = 3.0f / Side;
  W.Entry = "mandelbrot";
  W.Buffers.push_back(out("iters", Elem::U32, size_t(Side) * Side * 4, {0, 0, 1e-3}));
  W.Launches.push_back(launch({uint32_t(Side / 16), uint32_t(Side / 16), 1}, {16, 16, 1},
                              {Arg::buffer(0), Arg::value(Side), Arg::value(Side), Arg::value(-2.0f), Arg::value(-1.5f),
                               Arg::value(D), Arg::value(D), Arg::value(MaxIter)}));
  W.Native = [Side, D](const Ptrs &P) { nat::mandelbrot(as<int>(P[0]), Side, Side, -2.0f, -1.5f, D, D, MaxIter); };
  W.WorkOf = [Side](const Ptrs &Ref) { // 8 FLOP per iteration (3 squares... as written: 4 mul, 4 add)
    double Iters = 0;
    for (size_t I = 0; I < size_t(Side) * Side; ++I)
      Iters += as<int>(Ref[0])[I];
    return 8.0 * Iters;
  };
  W.Flops = true, W.Against = Limit::F32;
  W.Shape = std::to_string(Side) + "^2, <=256 it";
}

void makeStencil3d(Idiom &W, double Scale, std::mt19937 &G) {
  int Nx = 384, Ny = 384, Nz = int(sized(256, Scale, 1));
  size_t N = size_t(Nx) * Ny * Nz;
  W.Entry = "stencil3d_7pt";
  W.Buffers.push_back(
      in("in", Elem::F32, N * 4, randomArray<float>(N, std::uniform_real_distribution<float>(-1, 1), G)));
  W.Buffers.push_back(out("out", Elem::F32, N * 4, {1e-6, 1e-6}));
  W.Launches.push_back(launch({uint32_t(Nx / 32), uint32_t(Ny / 8), uint32_t(Nz)}, {32, 8, 1},
                              {Arg::buffer(0), Arg::buffer(1), Arg::value(Nx), Arg::value(Ny), Arg::value(Nz),
                               Arg::value(0.4f), Arg::value(0.1f)}));
  W.Native = [Nx, Ny, Nz](const Ptrs &P) { nat::stencil3d7(as<float>(P[0]), as<float>(P[1]), Nx, Ny, Nz, 0.4f, 0.1f); };
  W.memoryBound(8.0 * N, Limit::Triad, std::to_string(Nx) + "x" + std::to_string(Ny) + "x" + std::to_string(Nz));
}

void makeConv2d(Idiom &W, double Scale, std::mt19937 &G) {
  int Side = int(sized(4096, std::sqrt(Scale), 16));
  size_t N = size_t(Side) * Side;
  W.Entry = "conv2d_tiled";
  W.Buffers.push_back(
      in("in", Elem::F32, N * 4, randomArray<float>(N, std::uniform_real_distribution<float>(-1, 1), G)));
  W.Buffers.push_back(out("out", Elem::F32, N * 4, {1e-5, 1e-5}));
  W.Buffers.push_back(
      in("filter", Elem::F32, 25 * 4, randomArray<float>(25, std::uniform_real_distribution<float>(0, 0.08f), G)));
  W.Launches.push_back(launch({uint32_t(Side / 16), uint32_t(Side / 16), 1}, {16, 16, 1},
                              {Arg::buffer(0), Arg::buffer(1), Arg::buffer(2), Arg::value(Side), Arg::value(Side)}));
  W.Native = [Side](const Ptrs &P) { nat::conv2d5x5(as<float>(P[0]), as<float>(P[1]), as<float>(P[2]), Side, Side); };
  W.flopBound(50.0 * N, Limit::F32, std::to_string(Side) + "^2, 5x5");
}

void makeNbody(Idiom &W, double Scale, std::mt19937 &G) {
  int N = int(sized(8192, std::sqrt(Scale), 256));
  W.Entry = "nbody_fp64";
  auto Bodies = [&](double Lo, double Hi) {
    return randomArray<double>(4 * size_t(N), std::uniform_real_distribution<double>(Lo, Hi), G);
  };
  W.Buffers.push_back(in("pos", Elem::F64, 32 * size_t(N), Bodies(0.1, 1)));
  W.Buffers.push_back(in("vel", Elem::F64, 32 * size_t(N), Bodies(-1, 1)));
  W.Buffers.push_back(out("newPos", Elem::F64, 32 * size_t(N), {1e-9, 1e-9}));
  W.Buffers.push_back(out("newVel", Elem::F64, 32 * size_t(N), {1e-9, 1e-9}));
  W.Launches.push_back(launch(grid1(N / 256), block1(256),
                              {Arg::buffer(0), Arg::buffer(1), Arg::buffer(2), Arg::buffer(3), Arg::value(N),
                               Arg::value(0.01), Arg::value(0.01)},
                              256 * 32));
  W.Native = [N](const Ptrs &P) {
    nat::nbodyFp64(as<double>(P[0]), as<double>(P[1]), as<double>(P[2]), as<double>(P[3]), N, 0.01, 0.01);
  };
  W.flopBound(20.0 * N * N, Limit::F64, "n=" + std::to_string(N));
}

/// Keeps the elements above 0 (about half); warps append in whatever order they reserve room, so the check
/// compares the count and the sorted survivors.
void makeCompact(Idiom &W, double Scale, std::mt19937 &G) {
  size_t N = sized(1 << 26, Scale, 256);
  W.Entry = "compact_ballot";
  W.Buffers.push_back(
      in("in", Elem::U32, N * 4, randomArray<int>(N, std::uniform_int_distribution<int>(-1000000, 1000000), G)));
  W.Buffers.push_back(out("out", Elem::U32, N * 4));
  Buffer C = out("count", Elem::U32, 4);
  C.ZeroBeforeRun = true;
  W.Buffers.push_back(std::move(C));
  W.Launches.push_back(launch(grid1(N / 256), block1(256),
                              {Arg::buffer(0), Arg::buffer(1), Arg::buffer(2), Arg::value(0), Arg::value(int(N))}));
  W.Native = [N](const Ptrs &P) { nat::compact(as<int>(P[0]), as<int>(P[1]), as<unsigned>(P[2]), 0, N); };
  W.Check = [](const Ptrs &Got, const Ptrs &Ref) -> std::string {
    unsigned Count = *as<unsigned>(Got[2]), Expected = *as<unsigned>(Ref[2]);
    if (Count != Expected)
      return "count " + std::to_string(Count) + ", expected " + std::to_string(Expected);
    std::vector<int> G(as<int>(Got[1]), as<int>(Got[1]) + Count);
    std::vector<int> R(as<int>(Ref[1]), as<int>(Ref[1]) + Count);
    std::sort(G.begin(), G.end());
    std::sort(R.begin(), R.end());
    return G == R ? "" : "the kept elements differ";
  };
  W.memoryBound(4.0 * N + 2.0 * N, Limit::Triad, "n=" + std::to_string(N)); // all read, about half written
}

/// A grid-sync reduction over floats in [0, 1): per-thread float partials over n / (grid threads) elements each,
/// against a sum in double: 1e-3 relative covers the float partials' rounding.
void makeGridSync(Idiom &W, double Scale, std::mt19937 &G) {
  size_t N = sized(1 << 26, Scale, 256);
  W.Entry = "grid_sync_reduce";
  W.Buffers.push_back(
      in("in", Elem::F32, N * 4, randomArray<float>(N, std::uniform_real_distribution<float>(0, 1), G)));
  W.Buffers.push_back(out("partial", Elem::F32, 1 << 16)); // the cooperative grid's partials (not compared)
  W.Buffers.push_back(out("out", Elem::F32, 4, {0, 1e-3}));
  LaunchSpec L =
      launch(grid1(0), block1(256), {Arg::buffer(0), Arg::buffer(1), Arg::buffer(2), Arg::value<uint64_t>(N)});
  L.Cooperative = true;
  W.Launches.push_back(L);
  W.Native = [N](const Ptrs &P) { *as<float>(P[2]) = nat::sum(as<float>(P[0]), N); };
  W.Check = [](const Ptrs &Got, const Ptrs &Ref) -> std::string {
    CheckResult C = compareBuffer("out", Elem::F32, 1, {0, 1e-3}, Got[2], Ref[2]);
    return C.Message;
  };
  W.memoryBound(4.0 * N, Limit::Triad, "n=" + std::to_string(N) + ", cooperative");
}

void makeTranspose(Idiom &W, double Scale, std::mt19937 &G) {
  int Width = 8192, Height = int(sized(4096, Scale, 32));
  size_t N = size_t(Width) * Height;
  W.Entry = "transpose_padded";
  W.Buffers.push_back(
      in("in", Elem::F32, N * 4, randomArray<float>(N, std::uniform_real_distribution<float>(-1, 1), G)));
  W.Buffers.push_back(out("out", Elem::F32, N * 4));
  W.Launches.push_back(launch({uint32_t(Width / 32), uint32_t(Height / 32), 1}, {32, 8, 1},
                              {Arg::buffer(0), Arg::buffer(1), Arg::value(Width), Arg::value(Height)}));
  W.Native = [Width, Height](const Ptrs &P) { nat::transpose(as<float>(P[0]), as<float>(P[1]), Width, Height); };
  W.memoryBound(8.0 * N, Limit::Copy, std::to_string(Width) + "x" + std::to_string(Height));
}

void makeMap(Idiom &W, double Scale, std::mt19937 &G) {
  size_t N = sized(1 << 26, Scale, 256);
  W.Entry = "map_affine";
  W.Buffers.push_back(out("y", Elem::F32, N * 4, {1e-6, 1e-6}));
  W.Buffers.push_back(
      in("x", Elem::F32, N * 4, randomArray<float>(N, std::uniform_real_distribution<float>(-1, 1), G)));
  W.Launches.push_back(
      launch(grid1(StrideGrid), block1(StrideBlock),
             {Arg::buffer(0), Arg::buffer(1), Arg::value(1.5f), Arg::value(0.25f), Arg::value<uint64_t>(N)}));
  W.Native = [N](const Ptrs &P) { nat::mapAffine(as<float>(P[0]), as<float>(P[1]), 1.5f, 0.25f, N); };
  W.memoryBound(8.0 * N, Limit::Copy, "n=" + std::to_string(N));
}

const std::vector<std::string> &idiomNames() {
  static const std::vector<std::string> Names{
      "copy_1",        "copy_2",       "copy_4",      "copy_8",           "copy_12",          "copy_16",
      "map_affine",    "spmv_scalar",  "spmv_vector", "row_dot",          "scan_hillis",      "scan_blelloch",
      "scan_warp",     "bitonic_sort", "radix_pass",  "histogram_global", "atomic_cas_max",   "mandelbrot",
      "stencil3d_7pt", "conv2d_tiled", "nbody_fp64",  "compact_ballot",   "grid_sync_reduce", "transpose_padded"};
  return Names;
}

std::unique_ptr<Idiom> makeIdiom(const std::string &Name, double Scale) {
  auto W = std::make_unique<Idiom>();
  W->Name = Name;
  std::mt19937 G(12345);
  if (Name.rfind("copy_", 0) == 0)
    makeCopy(*W, std::atoi(Name.c_str() + 5), Scale, G);
  else if (Name == "map_affine")
    makeMap(*W, Scale, G);
  else if (Name == "spmv_scalar" || Name == "spmv_vector")
    makeSpmv(*W, Name == "spmv_vector", Scale, G);
  else if (Name == "row_dot")
    makeRowDot(*W, Scale, G);
  else if (Name == "scan_hillis" || Name == "scan_blelloch" || Name == "scan_warp")
    makeScan(*W, Name == "scan_hillis" ? "hillis_steele" : Name == "scan_warp" ? "warp_shfl" : "blelloch", Scale, G);
  else if (Name == "bitonic_sort" || Name == "radix_pass")
    makeSorts(*W, Name == "radix_pass", Scale, G);
  else if (Name == "histogram_global" || Name == "atomic_cas_max")
    makeAtomics(*W, Name == "atomic_cas_max", Scale, G);
  else if (Name == "mandelbrot")
    makeMandelbrot(*W, Scale);
  else if (Name == "stencil3d_7pt")
    makeStencil3d(*W, Scale, G);
  else if (Name == "conv2d_tiled")
    makeConv2d(*W, Scale, G);
  else if (Name == "nbody_fp64")
    makeNbody(*W, Scale, G);
  else if (Name == "compact_ballot")
    makeCompact(*W, Scale, G);
  else if (Name == "grid_sync_reduce")
    makeGridSync(*W, Scale, G);
  else if (Name == "transpose_padded")
    makeTranspose(*W, Scale, G);
  else
    return nullptr;
  return W;
}

// ---------------------------------------------------------------------------------------------------------------
// Child: one kernel, or the probes, at one thread count.

/// Compares ptxforge's outputs (Got) with the twin's (Ref): "" when they agree.
std::string verify(const Idiom &W, const Ptrs &Got, const Ptrs &Ref) {
  if (W.Check)
    return W.Check(Got, Ref);
  std::string Msgs;
  for (size_t B = 0; B < W.Buffers.size(); ++B) {
    const Buffer &Buf = W.Buffers[B];
    if (Buf.Kind == Role::In)
      continue;
    CheckResult C = compareBuffer(Buf.Name, Buf.Type, Buf.count(), Buf.Tol, Got[B], Ref[B]);
    if (!C.Ok)
      Msgs += (Msgs.empty() ? "" : "; ") + C.Message;
  }
  return Msgs;
}

json runProbes(double Scale) {
  size_t N = sized(1 << 25, Scale, 1024); // 256 MiB a array at scale 1
  Host A = allocate(N * 8), B = allocate(N * 8), C = allocate(N * 8);
  std::fill(as<double>(B.get()), as<double>(B.get()) + N, 1.0);
  std::fill(as<double>(C.get()), as<double>(C.get()) + N, 2.0);
  json R;
  R["copy_gbs"] = nat::streamCopy(as<double>(A.get()), as<double>(B.get()), N, 7) / 1e9;
  R["triad_gbs"] = nat::streamTriad(as<double>(A.get()), as<double>(B.get()), as<double>(C.get()), N, 7) / 1e9;
  R["fma32_gflops"] = nat::fmaPeakF32(5) / 1e9;
  R["fma64_gflops"] = nat::fmaPeakF64(5) / 1e9;
  R["array_mib"] = N * 8.0 / (1 << 20);
  return R;
}

/// Ptxforge's outputs now, downloaded into host buffers; Views: per buffer, host pointers (inputs: their data).
std::string download(CudaRunner &Cuda, const Idiom &W, std::vector<Host> &Keep, Ptrs &Views) {
  Keep.clear();
  Views.clear();
  for (size_t I = 0; I < W.Buffers.size(); ++I) {
    if (W.Buffers[I].Kind == Role::In) {
      Views.push_back(W.Buffers[I].Init.get());
      continue;
    }
    Keep.push_back(allocate(W.Buffers[I].Bytes));
    if (std::string E = Cuda.download(I, Keep.back().get()); !E.empty())
      return E;
    Views.push_back(Keep.back().get());
  }
  return "";
}

/// The native twin's buffers: outputs of its own, restored or zeroed before each run as the device's are.
struct NativeSide {
  std::vector<Host> Own;
  Ptrs Views;
  void setup(const Idiom &W) {
    for (const Buffer &B : W.Buffers) {
      if (B.Kind == Role::In) {
        Views.push_back(B.Init.get());
        continue;
      }
      Own.push_back(allocate(B.Bytes));
      std::memcpy(Own.back().get(), B.Init.get(), B.Bytes);
      Views.push_back(Own.back().get());
    }
  }
  double run(const Idiom &W) {
    for (size_t I = 0; I < W.Buffers.size(); ++I)
      if (W.Buffers[I].Kind == Role::InOut)
        std::memcpy(Views[I], W.Buffers[I].Init.get(), W.Buffers[I].Bytes);
      else if (W.Buffers[I].ZeroBeforeRun)
        std::memset(Views[I], 0, W.Buffers[I].Bytes);
    auto T0 = Clock::now();
    W.Native(Views);
    return std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
  }
};

json runKernel(const Options &O, const Idiom &W) {
  json R;
  R["kernel"] = W.Name, R["shape"] = W.Shape, R["memory_bound"] = W.MemoryBound, R["flops"] = W.Flops;
  R["limit"] = limitName(W.Against);
  NativeSide Nat;
  Nat.setup(W);
  double NativeFirst = Nat.run(W); // the reference (and the twin's warm-up)
  R["work"] = W.WorkOf ? W.WorkOf(Nat.Views) : W.Work;
  auto Fail = [&](const std::string &Status, const std::string &Msg) {
    R["status"] = Status, R["message"] = Msg;
    return R;
  };
  bool Ok;
  std::string Ptx = readFile(O.Ptx, Ok);
  if (!Ok)
    return Fail("error", "cannot read " + O.Ptx);
  std::vector<DeviceBufferSpec> Specs;
  for (const Buffer &B : W.Buffers)
    Specs.push_back({B.Init.get(), B.Bytes, B.Kind == Role::InOut, B.ZeroBeforeRun});
  CudaRunner Cuda;
  if (std::string E = Cuda.setup(Ptx, W.Entry, Specs, W.Launches); !E.empty())
    return Fail("error", E);
  double FirstMs = 0;
  if (std::string E = Cuda.run(FirstMs); !E.empty())
    return Fail("error", "first run (quick code, optimized from the block it lands at): " + E);
  R["load_ms"] = Cuda.LoadMs, R["first_ms"] = FirstMs, R["native_first_ms"] = NativeFirst;
  std::vector<Host> Keep;
  Ptrs Got;
  if (std::string E = download(Cuda, W, Keep, Got); !E.empty())
    return Fail("error", E);
  if (std::string E = verify(W, Got, Nat.Views); !E.empty())
    return Fail("FAIL", "quick code: " + E);
  if (std::string E = Cuda.waitForOptimizedCode(); !E.empty())
    return Fail("error", E);
  R["wait_ms"] = Cuda.WaitMs, R["tiered"] = Cuda.Tiered;
  std::vector<double> PtxMs, NatMs;
  int Reps = O.VerifyOnly ? 1 : O.Reps + 1; // the first of each: warm-up
  for (int Rep = 0; Rep < Reps; ++Rep)
    for (int K = 0; K < 2; ++K) {
      bool Ptxforge = (K + Rep) % 2 == 0; // the order alternates too
      if (!O.VerifyOnly)
        std::this_thread::sleep_for(std::chrono::milliseconds(QuietMs));
      double Ms = 0;
      if (!Ptxforge)
        Ms = Nat.run(W);
      else if (std::string E = Cuda.run(Ms); !E.empty())
        return Fail("error", E);
      if (Rep > 0 || O.VerifyOnly)
        (Ptxforge ? PtxMs : NatMs).push_back(Ms);
    }
  if (std::string E = download(Cuda, W, Keep, Got); !E.empty())
    return Fail("error", E);
  if (std::string E = verify(W, Got, Nat.Views); !E.empty())
    return Fail("FAIL", "optimized code: " + E);
  R["ptxforge_ms"] = PtxMs, R["native_ms"] = NatMs;
  R["status"] = "ok";
  return R;
}

/// At 1 thread everything runs on the first CPU of the mask: set before libcuda or libgomp start threads.
void pinToFirstCpu() {
  cpu_set_t Set;
  if (sched_getaffinity(0, sizeof Set, &Set) != 0)
    return;
  for (int C = 0; C < CPU_SETSIZE; ++C)
    if (CPU_ISSET(C, &Set)) {
      CPU_ZERO(&Set);
      CPU_SET(C, &Set);
      sched_setaffinity(0, sizeof Set, &Set);
      return;
    }
}

int runChild(const Options &O) {
  alarm(O.Timeout);
  if (O.Phase == 1)
    pinToFirstCpu();
  nat::setThreads(O.Phase);
  json R;
  if (O.Kernel == "probes") {
    R = runProbes(O.Scale);
  } else {
    std::unique_ptr<Idiom> W = makeIdiom(O.Kernel, O.Scale);
    if (!W)
      return 2;
    R = runKernel(O, *W);
  }
  R["threads"] = O.Phase;
  return writeTextFile(O.ResultFile, R.dump());
}

// ---------------------------------------------------------------------------------------------------------------
// Parent

int allCpus() {
  cpu_set_t Set;
  return sched_getaffinity(0, sizeof Set, &Set) == 0 ? CPU_COUNT(&Set) : 1;
}

/// Runs the child for Kernel at T threads; its JSON, or {"status": "crashed", ...}.
json runInChild(const Options &O, const std::string &Self, const std::string &Kernel, int T) {
  char Tmp[] = "/tmp/bench_idioms_result_XXXXXX";
  int Fd = mkstemp(Tmp);
  if (Fd >= 0)
    close(Fd);
  std::vector<std::string> Env = currentEnv();
  setEnv(Env, "PTXFORGE_WORKERS", std::to_string(T));
  setEnv(Env, "OMP_NUM_THREADS", std::to_string(T));
  setEnv(Env, "CUDA_CACHE_DISABLE", "1");
  std::vector<std::string> Args = childCommand(Self, T, Kernel, Tmp, O.Timeout);
  Args.insert(Args.end(), {"--scale", std::to_string(O.Scale), "--reps", std::to_string(O.Reps), "--ptx", O.Ptx});
  if (O.VerifyOnly)
    Args.push_back("--verify-only");
  int St = spawnWait(Args, Env, false);
  std::ifstream In(Tmp);
  std::string Line;
  json R;
  if (St == 0 && std::getline(In, Line))
    R = json::parse(Line, nullptr, false);
  unlink(Tmp);
  if (St == 0 && !R.is_discarded() && !R.is_null())
    return R;
  R = json();
  R["kernel"] = Kernel;
  R["status"] = "crashed";
  R["message"] = WIFSIGNALED(St) ? std::string("killed by signal ") + strsignal(WTERMSIG(St)) +
                                       (WTERMSIG(St) == SIGALRM ? " (--timeout)" : "")
                                 : "exited with status " + std::to_string(WIFEXITED(St) ? WEXITSTATUS(St) : -1);
  return R;
}

double probeLimit(const json &P, const std::string &Limit) {
  if (Limit == "copy")
    return P.value("copy_gbs", NAN);
  if (Limit == "triad")
    return P.value("triad_gbs", NAN);
  if (Limit == "fma32")
    return P.value("fma32_gflops", NAN);
  if (Limit == "fma64")
    return P.value("fma64_gflops", NAN);
  return NAN;
}

struct Summary {
  std::vector<double> Ratios;
  std::vector<std::string> Failed, OverRatio, UnderStream;
};

/// The kernel names of an --expected-failures file (one a line; '#' starts a comment).
std::vector<std::string> readExpectedFailures(const std::string &Path) {
  std::vector<std::string> Names;
  std::ifstream In(Path);
  if (!Path.empty() && !In)
    std::fprintf(stderr, "bench_idioms: cannot read %s\n", Path.c_str());
  std::string Line;
  while (std::getline(In, Line)) {
    Line = Line.substr(0, Line.find('#'));
    std::stringstream SS(Line);
    std::string Name;
    if (SS >> Name)
      Names.push_back(Name);
  }
  return Names;
}

void printRow(const Options &O, const json &R, const json &Probes, Summary &S) {
  std::string K = R["kernel"];
  std::string Status = R.value("status", "?");
  if (Status != "ok") {
    std::printf("%-17s %-26s %s: %s\n", K.c_str(), R.value("shape", "").c_str(), Status == "FAIL" ? "FAIL" : "ERROR",
                R.value("message", "").substr(0, 400).c_str());
    S.Failed.push_back(K);
    return;
  }
  if (O.VerifyOnly) {
    std::printf("%-17s %-26s verified (quick and optimized code)\n", K.c_str(), R["shape"].get<std::string>().c_str());
    return;
  }
  double P = median(R["ptxforge_ms"].get<std::vector<double>>()), N = median(R["native_ms"].get<std::vector<double>>());
  double Ratio = P / N, Work = R["work"].get<double>(), Rate = Work / (P * 1e-3) / 1e9, NRate = Work / (N * 1e-3) / 1e9;
  std::string Limit = R["limit"];
  double Of = Rate / probeLimit(Probes, Limit);
  bool Mem = R["memory_bound"].get<bool>();
  S.Ratios.push_back(Ratio);
  if (Ratio > 1.3)
    S.OverRatio.push_back(K);
  if (Mem && !(Of >= 0.6))
    S.UnderStream.push_back(K);
  char Frac[32] = "-";
  if (!std::isnan(Of))
    std::snprintf(Frac, sizeof Frac, "%3.0f%% %s", 100 * Of, Limit.c_str());
  std::printf("%-17s %-26s %8.1f %8.1f %9.2f %9.2f %6.2f %7.1f %7.1f %-7s %-12s %s\n", K.c_str(),
              R["shape"].get<std::string>().c_str(), R["load_ms"].get<double>(), R["first_ms"].get<double>(), P, N,
              Ratio, Rate, NRate, R["flops"].get<bool>() ? "GFLOP/s" : "GB/s", Frac, Mem ? "mem" : "");
  if (O.Verbose)
    std::printf("    ptxforge %s\n    native   %s\n    wait for optimized code %.1f ms\n",
                R["ptxforge_ms"].dump().c_str(), R["native_ms"].dump().c_str(), R.value("wait_ms", 0.0));
  std::fflush(stdout);
}

void printBars(const Summary &S, size_t Kernels) {
  auto list = [](const std::vector<std::string> &L) {
    std::string Out;
    for (const std::string &K : L)
      Out += (Out.empty() ? "" : ", ") + K;
    return Out.empty() ? std::string("none") : Out;
  };
  double G = geomean(S.Ratios);
  std::printf("geomean ptxforge/native over %zu kernels: %.3f (bar <= 1.0: %s)\n", S.Ratios.size(), G,
              G <= 1.0 && S.Ratios.size() == Kernels ? "MET" : "NOT MET");
  std::printf("over 1.3x native: %s\n", list(S.OverRatio).c_str());
  std::printf("memory-bound under 60%% of the STREAM probe: %s\n", list(S.UnderStream).c_str());
  if (!S.Failed.empty())
    std::printf("FAILED (not verified or not run): %s\n", list(S.Failed).c_str());
}

int runParent(const Options &O, const char *Argv0) {
  std::vector<std::string> Kernels;
  for (const std::string &K : idiomNames())
    if (O.Filter.empty() || std::any_of(O.Filter.begin(), O.Filter.end(),
                                        [&](const std::string &F) { return K.find(F) != std::string::npos; }))
      Kernels.push_back(K);
  if (Kernels.empty()) {
    std::fprintf(stderr, "bench_idioms: no kernel matches --kernels\n");
    return 2;
  }
  std::vector<int> Threads = O.Threads;
  if (Threads.empty()) {
    Threads.push_back(1);
    if (allCpus() > 1)
      Threads.push_back(allCpus());
  }
  std::string Self = selfPath(Argv0);
  std::vector<std::string> Expected = readExpectedFailures(O.ExpectedFailures);
  std::printf("bench_idioms: %zu kernels through libcuda.so.1 (%s), scale %g, %s\n", Kernels.size(), O.Ptx.c_str(),
              O.Scale,
              O.VerifyOnly ? "verification only"
                           : ("median of " + std::to_string(O.Reps) + " alternating runs after one warm-up").c_str());
  bool Failed = false;
  json All = json::array();
  for (int T : Threads) {
    std::printf("\n== %d thread%s (PTXFORGE_WORKERS=%d, omp_set_num_threads(%d)%s); load average %s\n", T,
                T == 1 ? "" : "s", T, T, T == 1 ? ", pinned to one CPU" : "", loadAverage().c_str());
    json Probes = O.VerifyOnly ? json::object() : runInChild(O, Self, "probes", T);
    if (!O.VerifyOnly)
      std::printf("probes (native C++, %d thread%s, %.0f MiB arrays): STREAM copy %.1f GB/s, triad %.1f GB/s; FMA peak "
                  "%.1f GFLOP/s f32, %.1f f64\n",
                  T, T == 1 ? "" : "s", Probes.value("array_mib", 0.0), Probes.value("copy_gbs", NAN),
                  Probes.value("triad_gbs", NAN), Probes.value("fma32_gflops", NAN), Probes.value("fma64_gflops", NAN));
    if (!O.VerifyOnly)
      std::printf("%-17s %-26s %8s %8s %9s %9s %6s %7s %7s %-7s %-12s\n", "kernel", "size", "load ms", "1st ms",
                  "ptxforge", "native", "ratio", "rate", "native", "unit", "of probe");
    Summary S;
    json Rows = json::array();
    for (const std::string &K : Kernels) {
      json R = runInChild(O, Self, K, T);
      printRow(O, R, Probes, S);
      if (R.value("status", "") != "ok" && std::find(Expected.begin(), Expected.end(), K) != Expected.end())
        std::printf("    XFAIL: listed in %s\n", O.ExpectedFailures.c_str());
      Rows.push_back(R);
    }
    if (!O.VerifyOnly)
      printBars(S, Kernels.size());
    for (const std::string &K : S.Failed)
      Failed |= std::find(Expected.begin(), Expected.end(), K) == Expected.end();
    for (const std::string &K : Expected)
      if (std::find(Kernels.begin(), Kernels.end(), K) != Kernels.end() &&
          std::find(S.Failed.begin(), S.Failed.end(), K) == S.Failed.end())
        std::printf("XPASS %s: listed in %s but verified; take it off the list\n", K.c_str(),
                    O.ExpectedFailures.c_str());
    All.push_back({{"threads", T}, {"probes", Probes}, {"kernels", Rows}, {"load_average", loadAverage()}});
  }
  if (!O.JsonOut.empty())
    writeTextFile(O.JsonOut, All.dump(2));
  std::printf("\nRESULT: %s\n", Failed             ? "some kernels FAILED (see above)"
                                : Expected.empty() ? "every kernel verified"
                                                   : "every kernel verified but the expected failures (XFAIL)");
  return Failed ? 1 : 0;
}

} // namespace

int main(int Argc, char **Argv) { return benchMain<Options>(Argc, Argv, parseOptions, runChild, runParent); }
