// Kernel benchmark: the nine kernels of ../shared/bench (README there: sizes, launch shapes, inputs, metrics)
// through ptxforge (their nvcc PTX), through a native C++ twin (bench/native, g++ -O3 -march=native -fopenmp
// -fno-math-errno) and through PoCL with an OpenCL C twin (bench/opencl, same work-group shapes), alternating
// in one run; all outputs verified against the native twin; per-kernel medians at 1 thread and at all threads,
// ratios ptxforge/native and ptxforge/PoCL with geometric means, and the bar (issue): ptxforge at least as fast
// as PoCL on every kernel, geomean ptxforge/native <= 1.5. Also ptxforge's JIT time per kernel beside
// `ptxas -O3` on the same PTX when ptxas is present. A fourth implementation, libcuda, runs the same PTX through
// libcuda.so.1 (harness/CudaRunner.h: the driver API, tiered JIT included), its bar (issue 18): each kernel <= 1.0x
// native.
//
// Process layout: the parent measures JIT times, then runs one child process per (thread count, kernel) with
// the thread-count environment set before anything starts (POCL_MAX_PTHREAD_COUNT is read when PoCL creates its
// platform; OMP_* when libgomp starts), collects each child's JSON result and prints the tables. A child that
// crashes in ptxforge is rerun without ptxforge so native and PoCL still get measured.
#include "harness/BenchUtil.h"
#include "harness/CudaRunner.h"
#include "native/NativeKernels.h"

#include "ptxforge/codegen/Launch.h"
#include "ptxforge/driver/ComputeCache.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Module.h"
#include "ptxforge/driver/Settings.h"
#include "ptxforge/ptx/Frontend.h"

#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#if PTXFORGE_BENCH_HAVE_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#endif

extern char **environ;

using namespace ptxforge;
using namespace ptxforge::bench;
using nlohmann::json;
namespace nat = ptxforge::bench::native;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int MaxReps = 40;

// ---------------------------------------------------------------------------------------------------------------
// Options

struct Options : SharedOptions {
  Options() { Timeout = 1800; }
  bool Quick = false;
  int Reps = 5;
  /// Short kernels repeat past Reps until each implementation has this much timed work (at most MaxReps runs):
  /// one 5 ms run's time moves by 10-20% on a shared VM's memory bus, a median of ~30 of them by a few percent.
  int MinMs = -1;   ///< -1: 150 (0 with --quick)
  int Warmup = -1;  ///< -1: 1 (0 with --quick)
  int JitReps = -1; ///< -1: 3 (1 with --quick)
  std::vector<std::string> Kernels;
  bool NoPocl = false, NoJit = false, NoLibcuda = false;
  std::string PtxDir = PTXFORGE_SHARED_DIR "/bench/cuda";
  // Child mode.
  std::vector<int> Cpus; ///< the parent's CPUs
  bool SkipPtxforge = false;
};

/// Where <kernel>.ptx is read from (--ptx-dir).
std::string PtxDir = PTXFORGE_SHARED_DIR "/bench/cuda";

void usage() {
  std::printf("usage: bench_kernels [--quick] [--reps N] [--warmup N] [--threads 1,2,...] [--kernels a,b] [--no-pocl]\n"
              "                     [--no-jit] [--jit-reps N] [--timeout SECONDS] [--json FILE] [--ptx-dir D] [-v]\n"
              "  --quick      small sizes (a smoke run); with --reps 1 the run only verifies outputs\n"
              "  --reps N     timed repetitions per implementation, alternating (default 5)\n"
              "  --min-ms T   short kernels repeat past --reps until each implementation has T ms of timed runs\n"
              "               (default 150, 0 with --quick; at most 40 repetitions)\n"
              "  --warmup N   untimed runs of each implementation first (default 1; 0 with --quick)\n"
              "  --threads L  thread counts to measure (default: 1 and all CPUs of this process's affinity mask)\n"
              "  --kernels L  only these kernels (names as in the table)\n"
              "  --no-pocl    skip PoCL;  --no-jit: skip the JIT/ptxas compile-time table\n"
              "  --no-libcuda skip the run through libcuda.so.1 (the driver API, tiered JIT; column 'libcuda')\n"
              "  --timeout S  seconds allowed per (kernel, thread count) child (default 1800)\n"
              "  --json FILE  also write every measurement as JSON\n"
              "  --ptx-dir D  read <kernel>.ptx from D instead of ../shared/bench/cuda (e.g. PTX of another nvcc)\n");
}

bool parseOptions(int Argc, char **Argv, Options &O) {
  bool Ok = parseCommandLine(Argc, Argv, "bench_kernels", usage, O, [&](const std::string &A, const auto &Next) {
    if (A == "--quick")
      O.Quick = true;
    else if (A == "--reps")
      O.Reps = std::max(1, std::atoi(Next().c_str()));
    else if (A == "--min-ms")
      O.MinMs = std::max(0, std::atoi(Next().c_str()));
    else if (A == "--warmup")
      O.Warmup = std::max(0, std::atoi(Next().c_str()));
    else if (A == "--jit-reps")
      O.JitReps = std::max(1, std::atoi(Next().c_str()));
    else if (A == "--kernels")
      O.Kernels = splitList(Next());
    else if (A == "--no-pocl")
      O.NoPocl = true;
    else if (A == "--no-jit")
      O.NoJit = true;
    else if (A == "--no-libcuda")
      O.NoLibcuda = true;
    else if (A == "--ptx-dir")
      O.PtxDir = Next();
    else if (A == "--cpus")
      for (const std::string &C : splitList(Next()))
        O.Cpus.push_back(std::atoi(C.c_str()));
    else if (A == "--skip-ptxforge")
      O.SkipPtxforge = true;
    else
      return false;
    return true;
  });
  if (!Ok)
    return false;
  if (O.Warmup < 0)
    O.Warmup = O.Quick ? 0 : 1;
  if (O.JitReps < 0)
    O.JitReps = O.Quick ? 1 : 3;
  if (O.MinMs < 0)
    O.MinMs = O.Quick ? 0 : 150;
  PtxDir = O.PtxDir;
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Workloads

/// Frees host memory, or (Device) what ptxforge's device allocator gave.
struct BufferFree {
  bool Device = false;
  void operator()(void *P) const {
    if (!Device)
      return std::free(P);
    llvm::consumeError(ptxforge::driver::DeviceMemory::get().free(reinterpret_cast<uintptr_t>(P),
                                                                  {ptxforge::driver::MemoryKind::Device}));
  }
};
using Storage = std::unique_ptr<char, BufferFree>;

/// Page-aligned host memory (native twins, inputs), or device memory as cuMemAlloc hands it out (ptxforge's
/// buffers: its allocator decides their placement and page size, as PoCL's does for PoCL's buffers).
Storage allocate(size_t Bytes, bool Device = false) {
  if (!Device)
    return Storage(zeroedPages(Bytes, "bench_kernels").release());
  size_t Rounded = pageRounded(Bytes);
  Storage S;
  auto A = ptxforge::driver::DeviceMemory::get().allocate(Rounded, ptxforge::driver::MemoryKind::Device, nullptr, 0);
  if (!A) {
    std::fprintf(stderr, "bench_kernels: device allocation of %zu bytes failed: %s\n", Bytes,
                 llvm::toString(A.takeError()).c_str());
    std::exit(3);
  }
  S = Storage(reinterpret_cast<char *>(*A), BufferFree{true});
  std::memset(S.get(), 0, Rounded); // first touch, outside any timing
  return S;
}

struct Buffer {
  std::string Name;
  Elem Type = Elem::F32;
  size_t Count = 0;
  Role Kind = Role::In;
  bool ZeroBeforeRun = false; ///< accumulating outputs (histogram)
  Tolerance Tol;
  Storage Init; ///< inputs' contents; zeros for outputs
  size_t bytes() const { return Count * elemSize(Type); }
};

/// A launch of the workload's entry (Arg, Dim3: harness/CudaRunner.h).
LaunchSpec launch(Dim3 Grid, Dim3 Block, std::vector<Arg> Args) {
  LaunchSpec L;
  L.Grid = Grid, L.Block = Block, L.Args = std::move(Args);
  return L;
}

struct Workload {
  std::string Name; ///< the `.entry` name
  std::string File; ///< ../shared/bench/cuda/<File>.ptx and bench/opencl/<File>.cl
  std::vector<Buffer> Buffers;
  std::vector<LaunchSpec> Launches;
  std::function<void(const std::vector<void *> &)> Native;
  /// Optional independent check of the native output (the reference for the other two); "" when fine.
  std::function<std::string(const std::vector<void *> &)> Sanity;
  double Work = 0; ///< bytes or FLOP per run
  bool Flops = false;
  std::string Shape; ///< sizes, for the table
};

const std::vector<std::string> &kernelNames() {
  static const std::vector<std::string> Names{"vecadd",       "saxpy",      "reduce_sum",    "sgemm_tiled", "transpose",
                                              "histogram256", "nbody_step", "black_scholes", "stencil5"};
  return Names;
}

Storage uniformFloats(size_t N, float Lo, float Hi, std::mt19937 &G) {
  Storage S = allocate(N * 4);
  std::uniform_real_distribution<float> D(Lo, Hi);
  float *P = reinterpret_cast<float *>(S.get());
  for (size_t I = 0; I < N; ++I)
    P[I] = D(G);
  return S;
}

Buffer input(std::string Name, size_t Count, Storage Data, Elem Type = Elem::F32) {
  Buffer B;
  B.Name = std::move(Name), B.Count = Count, B.Type = Type, B.Kind = Role::In, B.Init = std::move(Data);
  return B;
}

Buffer output(std::string Name, size_t Count, Tolerance Tol, Elem Type = Elem::F32) {
  Buffer B;
  B.Name = std::move(Name), B.Count = Count, B.Type = Type, B.Kind = Role::Out, B.Tol = Tol;
  B.Init = allocate(B.bytes());
  return B;
}

template <class T> T *as(void *P) { return static_cast<T *>(P); }

std::string fmtSize(double V) {
  char Buf[64];
  std::snprintf(Buf, sizeof Buf, "%g", V);
  return Buf;
}

/// The image kernels (transpose, stencil5): a Width x Height float image in, uniform in [-1,1], one out (Out), one
/// launch of 32 x 8 blocks, each over a tile of 32 x TileRows elements, taking (in, out, Width, Height,
/// Scalars...); 8 bytes of traffic per element.
void addImageKernel(Workload &W, int Width, int Height, int TileRows, Tolerance Out, std::vector<Arg> Scalars,
                    std::mt19937 &G) {
  size_t N = size_t(Width) * Height;
  W.Buffers.push_back(input("in", N, uniformFloats(N, -1, 1, G)));
  W.Buffers.push_back(output("out", N, Out));
  std::vector<Arg> Args{Arg::buffer(0), Arg::buffer(1), Arg::value<int32_t>(Width), Arg::value<int32_t>(Height)};
  Args.insert(Args.end(), Scalars.begin(), Scalars.end());
  W.Launches.push_back(launch({uint32_t(Width / 32), uint32_t(Height / TileRows), 1}, {32, 8, 1}, std::move(Args)));
  W.Work = 8.0 * Width * Height;
  W.Shape = std::to_string(Width) + "x" + std::to_string(Height);
}

/// Builds kernel Name at the README's sizes (or small ones with Quick), inputs from mt19937(12345) in parameter
/// order, uniform in [-1,1] unless the README says otherwise.
std::unique_ptr<Workload> makeWorkload(const std::string &Name, bool Quick) {
  auto W = std::make_unique<Workload>();
  W->Name = Name;
  std::mt19937 G(12345);
  const Tolerance Exact{0, 0}, Rounding{1e-6, 1e-6};
  auto grid1 = [](uint32_t X) { return Dim3{X, 1, 1}; };
  if (Name == "vecadd" || Name == "saxpy") {
    int N = Quick ? 1 << 16 : 1 << 24;
    W->File = Name;
    W->Buffers.push_back(input(Name == "vecadd" ? "a" : "x", N, uniformFloats(N, -1, 1, G)));
    if (Name == "vecadd") {
      W->Buffers.push_back(input("b", N, uniformFloats(N, -1, 1, G)));
      W->Buffers.push_back(output("c", N, Exact));
      W->Launches.push_back(launch(grid1(N / 256), {256, 1, 1},
                                   {Arg::buffer(0), Arg::buffer(1), Arg::buffer(2), Arg::value<int32_t>(N)}));
      W->Native = [N](const std::vector<void *> &P) {
        nat::vecadd(as<float>(P[0]), as<float>(P[1]), as<float>(P[2]), N);
      };
    } else {
      Buffer Y = input("y", N, uniformFloats(N, -1, 1, G));
      Y.Kind = Role::InOut, Y.Tol = Rounding;
      W->Buffers.push_back(std::move(Y));
      W->Launches.push_back(launch(grid1(N / 256), {256, 1, 1},
                                   {Arg::buffer(0), Arg::buffer(1), Arg::value(2.0f), Arg::value<int32_t>(N)}));
      W->Native = [N](const std::vector<void *> &P) { nat::saxpy(as<float>(P[0]), as<float>(P[1]), 2.0f, N); };
    }
    W->Work = 12.0 * N;
    W->Shape = "n=" + std::to_string(N);
  } else if (Name == "reduce_sum") {
    int N = Quick ? 1 << 16 : 1 << 24, Blocks = 1024;
    W->File = "reduce";
    W->Buffers.push_back(input("in", N, uniformFloats(N, 0, 1, G)));
    W->Buffers.push_back(output("partial", Blocks, {1e-6, 1e-5}));
    W->Buffers.push_back(output("out", 1, {0, 1e-5}));
    W->Launches.push_back(launch(grid1(Blocks), {256, 1, 1}, {Arg::buffer(0), Arg::buffer(1), Arg::value<int32_t>(N)}));
    W->Launches.push_back(launch(grid1(1), {256, 1, 1}, {Arg::buffer(1), Arg::buffer(2), Arg::value<int32_t>(Blocks)}));
    W->Native = [N, Blocks](const std::vector<void *> &P) {
      nat::reduceSum(as<float>(P[0]), as<float>(P[1]), as<float>(P[2]), N, Blocks);
    };
    W->Sanity = [N](const std::vector<void *> &P) -> std::string {
      const float *In = as<float>(P[0]);
      double Sum = 0;
      for (int I = 0; I < N; ++I)
        Sum += In[I];
      double Got = *as<float>(P[2]);
      return std::fabs(Got - Sum) <= 1e-5 * Sum ? "" : "sum " + fmtSize(Got) + " vs " + fmtSize(Sum) + " in double";
    };
    W->Work = 4.0 * N;
    W->Shape = "n=" + std::to_string(N);
  } else if (Name == "sgemm_tiled") {
    int M = Quick ? 128 : 1024, N = M, K = M;
    W->File = "sgemm";
    W->Buffers.push_back(input("A", size_t(M) * K, uniformFloats(size_t(M) * K, -1, 1, G)));
    W->Buffers.push_back(input("B", size_t(K) * N, uniformFloats(size_t(K) * N, -1, 1, G)));
    // Same summation order in all three; fused vs separate multiply-add leaves ~K ulps of |a||b| at worst.
    W->Buffers.push_back(output("C", size_t(M) * N, {2e-6 * K, 1e-5}));
    W->Launches.push_back(launch({uint32_t(N / 16), uint32_t(M / 16), 1}, {16, 16, 1},
                                 {Arg::buffer(0), Arg::buffer(1), Arg::buffer(2), Arg::value<int32_t>(M),
                                  Arg::value<int32_t>(N), Arg::value<int32_t>(K)}));
    W->Native = [M, N, K](const std::vector<void *> &P) {
      nat::sgemmTiled(as<float>(P[0]), as<float>(P[1]), as<float>(P[2]), M, N, K);
    };
    W->Sanity = [M, N, K](const std::vector<void *> &P) -> std::string {
      const float *A = as<float>(P[0]), *B = as<float>(P[1]), *C = as<float>(P[2]);
      for (int S = 0; S < 64; ++S) {
        int R = (S * 7919) % M, Col = (S * 104729) % N;
        double Ref = 0;
        for (int Kk = 0; Kk < K; ++Kk)
          Ref += double(A[size_t(R) * K + Kk]) * B[size_t(Kk) * N + Col];
        if (std::fabs(C[size_t(R) * N + Col] - Ref) > 2e-6 * K)
          return "C[" + std::to_string(R) + "][" + std::to_string(Col) + "] = " + fmtSize(C[size_t(R) * N + Col]) +
                 " vs " + fmtSize(Ref) + " in double";
      }
      return "";
    };
    W->Work = 2.0 * M * N * K;
    W->Flops = true;
    W->Shape = std::to_string(M) + "^3";
  } else if (Name == "transpose") {
    int Width = Quick ? 512 : 4096, Height = Quick ? 256 : 4096;
    W->File = "transpose";
    addImageKernel(*W, Width, Height, /*TileRows=*/32, Exact, {}, G);
    W->Native = [Width, Height](const std::vector<void *> &P) {
      nat::transpose(as<float>(P[0]), as<float>(P[1]), Width, Height);
    };
    W->Sanity = [Width, Height](const std::vector<void *> &P) -> std::string {
      const float *In = as<float>(P[0]), *Out = as<float>(P[1]);
      for (size_t Y = 0; Y < size_t(Height); ++Y)
        for (size_t X = 0; X < size_t(Width); ++X)
          if (Out[X * Height + Y] != In[Y * Width + X])
            return "out[" + std::to_string(X) + "][" + std::to_string(Y) + "] != in[" + std::to_string(Y) + "][" +
                   std::to_string(X) + "]";
      return "";
    };
  } else if (Name == "histogram256") {
    int N = Quick ? 1 << 18 : 1 << 24;
    W->File = "histogram";
    Storage Data = allocate(N);
    std::uniform_int_distribution<int> D(0, 255);
    for (int I = 0; I < N; ++I)
      Data.get()[I] = static_cast<char>(D(G));
    W->Buffers.push_back(input("data", N, std::move(Data), Elem::U8));
    Buffer H = output("hist", 256, Exact, Elem::U32);
    H.ZeroBeforeRun = true;
    W->Buffers.push_back(std::move(H));
    W->Launches.push_back(launch(grid1(1024), {256, 1, 1}, {Arg::buffer(0), Arg::buffer(1), Arg::value<int32_t>(N)}));
    W->Native = [N](const std::vector<void *> &P) {
      nat::histogram256(as<unsigned char>(P[0]), as<unsigned>(P[1]), N, 1024);
    };
    W->Sanity = [N](const std::vector<void *> &P) -> std::string {
      std::vector<unsigned> Ref(256, 0);
      const unsigned char *Data = as<unsigned char>(P[0]);
      for (int I = 0; I < N; ++I)
        ++Ref[Data[I]];
      return std::equal(Ref.begin(), Ref.end(), as<unsigned>(P[1])) ? "" : "differs from a serial count";
    };
    W->Work = N;
    W->Shape = "n=" + std::to_string(N);
  } else if (Name == "nbody_step") {
    int N = Quick ? 1024 : 16384;
    W->File = "nbody";
    W->Buffers.push_back(input("pos", 4 * size_t(N), uniformFloats(4 * size_t(N), -1, 1, G)));
    W->Buffers.push_back(input("vel", 4 * size_t(N), uniformFloats(4 * size_t(N), -1, 1, G)));
    // Same interaction order everywhere; rsqrt.approx (PTX, ~2^-22 relative) and OpenCL rsqrt differ from
    // 1/sqrtf by a few ulps per term, summed over N terms whose magnitudes reach 1/eps^3 = 1000 before * dt.
    W->Buffers.push_back(output("newPos", 4 * size_t(N), {1e-5, 1e-4}));
    W->Buffers.push_back(output("newVel", 4 * size_t(N), {1e-3, 1e-4}));
    W->Launches.push_back(launch(grid1(N / 256), {256, 1, 1},
                                 {Arg::buffer(0), Arg::buffer(1), Arg::buffer(2), Arg::buffer(3),
                                  Arg::value<int32_t>(N), Arg::value(0.01f), Arg::value(0.01f)}));
    W->Native = [N](const std::vector<void *> &P) {
      nat::nbodyStep(as<float>(P[0]), as<float>(P[1]), as<float>(P[2]), as<float>(P[3]), N, 0.01f, 0.01f);
    };
    W->Work = 20.0 * N * N;
    W->Flops = true;
    W->Shape = "n=" + std::to_string(N);
  } else if (Name == "black_scholes") {
    int N = Quick ? 1 << 16 : 1 << 22;
    W->File = "blackscholes";
    // expf/logf of nvcc's libdevice, PoCL's and glibc's differ by an ulp or two; prices reach ~100.
    W->Buffers.push_back(output("call", N, {1e-4, 1e-5}));
    W->Buffers.push_back(output("put", N, {1e-4, 1e-5}));
    W->Buffers.push_back(input("S", N, uniformFloats(N, 5, 30, G)));
    W->Buffers.push_back(input("X", N, uniformFloats(N, 1, 100, G)));
    W->Buffers.push_back(input("T", N, uniformFloats(N, 0.25f, 10, G)));
    W->Launches.push_back(launch(grid1(N / 256), {256, 1, 1},
                                 {Arg::buffer(0), Arg::buffer(1), Arg::buffer(2), Arg::buffer(3), Arg::buffer(4),
                                  Arg::value(0.02f), Arg::value(0.30f), Arg::value<int32_t>(N)}));
    W->Native = [N](const std::vector<void *> &P) {
      nat::blackScholes(as<float>(P[0]), as<float>(P[1]), as<float>(P[2]), as<float>(P[3]), as<float>(P[4]), 0.02f,
                        0.30f, N);
    };
    W->Work = 20.0 * N;
    W->Shape = "n=" + std::to_string(N);
  } else if (Name == "stencil5") {
    int Nx = Quick ? 256 : 4096, Ny = Quick ? 128 : 4096;
    W->File = "stencil";
    addImageKernel(*W, Nx, Ny, /*TileRows=*/8, Rounding, {Arg::value(0.5f), Arg::value(0.125f)}, G);
    W->Native = [Nx, Ny](const std::vector<void *> &P) {
      nat::stencil5(as<float>(P[0]), as<float>(P[1]), Nx, Ny, 0.5f, 0.125f);
    };
  } else {
    return nullptr;
  }
  return W;
}

std::string ptxPath(const Workload &W) { return PtxDir + "/" + W.File + ".ptx"; }
#if PTXFORGE_BENCH_HAVE_OPENCL
std::string clPath(const Workload &W) { return std::string(PTXFORGE_BENCH_OPENCL_DIR) + "/" + W.File + ".cl"; }
#endif

// ---------------------------------------------------------------------------------------------------------------
// Verification

/// Buffer B of Got against Ref.
CheckResult compareBuffer(const Buffer &B, const void *Got, const void *Ref) {
  return ptxforge::bench::compareBuffer(B.Name, B.Type, B.Count, B.Tol, Got, Ref);
}

// ---------------------------------------------------------------------------------------------------------------
// The three implementations of one workload, in a child process.

/// ptxforge: the PTX through the compiler and launcher linked into this program; libcuda: the same PTX through
/// libcuda.so.1 (harness/CudaRunner.h: the driver API, tiered JIT included, timed once the optimized code is in).
enum ImplId { Ptx = 0, Native = 1, Pocl = 2, Cuda = 3, NumImpls = 4 };
const char *ImplNames[NumImpls] = {"ptxforge", "native", "pocl", "libcuda"};

struct ImplState {
  bool Available = false;
  std::string Status = "skipped"; ///< ok, skipped, unavailable, compile error, run error, mismatch
  std::string Message;
  std::vector<double> Ms;
  std::vector<void *> Ptrs;    ///< host pointers per buffer (ptxforge, native)
  std::vector<Storage> Own;    ///< this implementation's outputs
  std::vector<Storage> Result; ///< PoCL: outputs read back after the runs
};

/// Device: every buffer in ptxforge's device memory, inputs copied in (cuMemcpyHtoD's part, untimed); otherwise
/// inputs are read where they were made.
void setupBuffers(const Workload &W, ImplState &S, bool Device = false) {
  for (const Buffer &B : W.Buffers) {
    if (B.Kind == Role::In && !Device) {
      S.Ptrs.push_back(B.Init.get());
      continue;
    }
    Storage Own = allocate(B.bytes(), Device);
    std::memcpy(Own.get(), B.Init.get(), B.bytes());
    S.Ptrs.push_back(Own.get());
    S.Own.push_back(std::move(Own));
  }
}

/// Untimed per-run reset: in/out buffers get their input back, accumulating outputs go to zero.
void resetHost(const Workload &W, ImplState &S) {
  for (size_t I = 0; I < W.Buffers.size(); ++I) {
    const Buffer &B = W.Buffers[I];
    if (B.Kind == Role::InOut)
      std::memcpy(S.Ptrs[I], B.Init.get(), B.bytes());
    else if (B.ZeroBeforeRun)
      std::memset(S.Ptrs[I], 0, B.bytes());
  }
}

struct PtxforgeRunner {
  std::unique_ptr<ptx::FrontendResult> Front;
  std::unique_ptr<codegen::CompiledModule> Module;
  const codegen::KernelInfo *Kernel = nullptr;
  std::vector<std::vector<char>> Params; ///< one parameter buffer per launch
  std::vector<codegen::LaunchConfig> Configs;

  /// Returns "" or an error.
  std::string compile(const Workload &W) {
    bool Ok;
    std::string Text = readFile(ptxPath(W), Ok);
    if (!Ok)
      return "cannot read " + ptxPath(W);
    Front = ptx::runFrontend(std::make_unique<ptx::SourceBuffer>(ptxPath(W), std::move(Text)));
    if (!Front->ok()) {
      std::string S;
      llvm::raw_string_ostream OS(S);
      Front->Diags.print(*Front->Source, OS);
      return "front end: " + OS.str();
    }
    auto CM = codegen::compilePTX(*Front->Verified, Front->Source.get(), driver::processSettings().Compile);
    if (!CM)
      return llvm::toString(CM.takeError());
    Module = std::move(*CM);
    Kernel = Module->kernel(W.Name);
    if (!Kernel)
      return "no kernel '" + W.Name + "' in the compiled module";
    return "";
  }

  std::string prepare(const Workload &W, const std::vector<void *> &Ptrs, unsigned Threads) {
    Params.clear();
    Configs.clear();
    for (const LaunchSpec &L : W.Launches) {
      if (L.Args.size() != Kernel->Params.size())
        return "kernel takes " + std::to_string(Kernel->Params.size()) + " parameters, the benchmark passes " +
               std::to_string(L.Args.size());
      std::vector<char> P(std::max<uint64_t>(Kernel->ParamBytes, 1), 0);
      for (size_t I = 0; I < L.Args.size(); ++I) {
        std::vector<char> Bytes = L.Args[I].Bytes;
        if (L.Args[I].Buf >= 0) {
          uint64_t Addr = reinterpret_cast<uintptr_t>(Ptrs[L.Args[I].Buf]);
          Bytes.resize(8);
          std::memcpy(Bytes.data(), &Addr, 8);
        }
        const codegen::ParamInfo &PI = Kernel->Params[I];
        if (PI.Size != Bytes.size() || PI.Offset + PI.Size > P.size())
          return "parameter " + std::to_string(I) + " (" + PI.Name + ") has size " + std::to_string(PI.Size) +
                 ", the benchmark passes " + std::to_string(Bytes.size()) + " bytes";
        std::memcpy(P.data() + PI.Offset, Bytes.data(), Bytes.size());
      }
      codegen::LaunchConfig C;
      C.Grid = {L.Grid.X, L.Grid.Y, L.Grid.Z}, C.Block = {L.Block.X, L.Block.Y, L.Block.Z}, C.Workers = Threads;
      Params.push_back(std::move(P));
      Configs.push_back(C);
    }
    return "";
  }

  std::string run() {
    for (size_t I = 0; I < Configs.size(); ++I)
      if (auto E = codegen::launchKernel(*Module, *Kernel, Configs[I], Params[I].data()))
        return llvm::toString(std::move(E));
    return "";
  }
};

#if PTXFORGE_BENCH_HAVE_OPENCL
const char *clErrorName(cl_int E) {
  switch (E) {
  case CL_SUCCESS:
    return "CL_SUCCESS";
  case CL_DEVICE_NOT_FOUND:
    return "CL_DEVICE_NOT_FOUND";
  case CL_BUILD_PROGRAM_FAILURE:
    return "CL_BUILD_PROGRAM_FAILURE";
  case CL_OUT_OF_RESOURCES:
    return "CL_OUT_OF_RESOURCES";
  case CL_OUT_OF_HOST_MEMORY:
    return "CL_OUT_OF_HOST_MEMORY";
  case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
  case CL_INVALID_VALUE:
    return "CL_INVALID_VALUE";
  case CL_INVALID_KERNEL_NAME:
    return "CL_INVALID_KERNEL_NAME";
  case CL_INVALID_KERNEL_ARGS:
    return "CL_INVALID_KERNEL_ARGS";
  case CL_INVALID_ARG_SIZE:
    return "CL_INVALID_ARG_SIZE";
  case CL_INVALID_WORK_GROUP_SIZE:
    return "CL_INVALID_WORK_GROUP_SIZE";
  case CL_INVALID_WORK_ITEM_SIZE:
    return "CL_INVALID_WORK_ITEM_SIZE";
  case -1001:
    return "CL_PLATFORM_NOT_FOUND_KHR (no OpenCL platform installed)";
  default:
    return "OpenCL error";
  }
}

std::string clErr(const char *What, cl_int E) {
  return std::string(What) + ": " + clErrorName(E) + " (" + std::to_string(E) + ")";
}

struct PoclRunner {
  cl_context Ctx = nullptr;
  cl_command_queue Queue = nullptr;
  cl_program Program = nullptr;
  cl_kernel Kernel = nullptr;
  std::vector<cl_mem> Mems;
  std::string DeviceName;
  cl_uint Units = 0;

  ~PoclRunner() {
    for (cl_mem M : Mems)
      if (M)
        clReleaseMemObject(M);
    if (Kernel)
      clReleaseKernel(Kernel);
    if (Program)
      clReleaseProgram(Program);
    if (Queue)
      clReleaseCommandQueue(Queue);
    if (Ctx)
      clReleaseContext(Ctx);
  }

  /// Finds PoCL's CPU device. Returns "" or why PoCL is not available.
  std::string init() {
    cl_uint N = 0;
    cl_int E = clGetPlatformIDs(0, nullptr, &N);
    if (E != CL_SUCCESS || N == 0)
      return E != CL_SUCCESS ? clErr("clGetPlatformIDs", E) : "no OpenCL platform";
    std::vector<cl_platform_id> Ps(N);
    clGetPlatformIDs(N, Ps.data(), nullptr);
    for (cl_platform_id P : Ps) {
      char Name[256] = {}, Vendor[256] = {};
      clGetPlatformInfo(P, CL_PLATFORM_NAME, sizeof Name - 1, Name, nullptr);
      clGetPlatformInfo(P, CL_PLATFORM_VENDOR, sizeof Vendor - 1, Vendor, nullptr);
      std::string S = std::string(Name) + " " + Vendor;
      if (S.find("Portable Computing Language") == std::string::npos && S.find("pocl") == std::string::npos)
        continue;
      cl_device_id D;
      if ((E = clGetDeviceIDs(P, CL_DEVICE_TYPE_CPU, 1, &D, nullptr)) != CL_SUCCESS)
        return clErr("clGetDeviceIDs(PoCL, CPU)", E);
      char DName[256] = {};
      clGetDeviceInfo(D, CL_DEVICE_NAME, sizeof DName - 1, DName, nullptr);
      clGetDeviceInfo(D, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof Units, &Units, nullptr);
      DeviceName = DName;
      Ctx = clCreateContext(nullptr, 1, &D, nullptr, nullptr, &E);
      if (!Ctx)
        return clErr("clCreateContext", E);
      Queue = clCreateCommandQueue(Ctx, D, 0, &E);
      if (!Queue)
        return clErr("clCreateCommandQueue", E);
      Device = D;
      return "";
    }
    return "no PoCL platform among " + std::to_string(N) + " OpenCL platform(s)";
  }

  std::string build(const Workload &W) {
    bool Ok;
    std::string Src = readFile(clPath(W), Ok);
    if (!Ok)
      return "cannot read " + clPath(W);
    const char *Text = Src.c_str();
    size_t Len = Src.size();
    cl_int E;
    Program = clCreateProgramWithSource(Ctx, 1, &Text, &Len, &E);
    if (!Program)
      return clErr("clCreateProgramWithSource", E);
    if ((E = clBuildProgram(Program, 1, &Device, "", nullptr, nullptr)) != CL_SUCCESS) {
      size_t LogLen = 0;
      clGetProgramBuildInfo(Program, Device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &LogLen);
      std::string Log(LogLen, '\0');
      clGetProgramBuildInfo(Program, Device, CL_PROGRAM_BUILD_LOG, LogLen, Log.data(), nullptr);
      return clErr("clBuildProgram", E) + "\n" + Log;
    }
    Kernel = clCreateKernel(Program, W.Name.c_str(), &E);
    if (!Kernel)
      return clErr("clCreateKernel", E);
    for (const Buffer &B : W.Buffers) {
      cl_mem_flags F = B.Kind == Role::In ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE;
      cl_mem M = clCreateBuffer(Ctx, F | CL_MEM_COPY_HOST_PTR, B.bytes(), B.Init.get(), &E);
      if (!M)
        return clErr("clCreateBuffer", E);
      Mems.push_back(M);
    }
    return clFinish(Queue) == CL_SUCCESS ? "" : "clFinish failed";
  }

  std::string reset(const Workload &W) {
    for (size_t I = 0; I < W.Buffers.size(); ++I) {
      const Buffer &B = W.Buffers[I];
      cl_int E = CL_SUCCESS;
      if (B.Kind == Role::InOut)
        E = clEnqueueWriteBuffer(Queue, Mems[I], CL_FALSE, 0, B.bytes(), B.Init.get(), 0, nullptr, nullptr);
      else if (B.ZeroBeforeRun) {
        cl_uint Zero = 0;
        E = clEnqueueFillBuffer(Queue, Mems[I], &Zero, sizeof Zero, 0, B.bytes(), 0, nullptr, nullptr);
      }
      if (E != CL_SUCCESS)
        return clErr("resetting a buffer", E);
    }
    return clFinish(Queue) == CL_SUCCESS ? "" : "clFinish failed";
  }

  std::string run(const Workload &W) {
    for (const LaunchSpec &L : W.Launches) {
      for (size_t I = 0; I < L.Args.size(); ++I) {
        cl_int E = L.Args[I].Buf >= 0 ? clSetKernelArg(Kernel, I, sizeof(cl_mem), &Mems[L.Args[I].Buf])
                                      : clSetKernelArg(Kernel, I, L.Args[I].Bytes.size(), L.Args[I].Bytes.data());
        if (E != CL_SUCCESS)
          return clErr("clSetKernelArg", E);
      }
      size_t Global[3] = {size_t(L.Grid.X) * L.Block.X, size_t(L.Grid.Y) * L.Block.Y, size_t(L.Grid.Z) * L.Block.Z};
      size_t Local[3] = {L.Block.X, L.Block.Y, L.Block.Z};
      cl_int E = clEnqueueNDRangeKernel(Queue, Kernel, 3, nullptr, Global, Local, 0, nullptr, nullptr);
      if (E != CL_SUCCESS)
        return clErr("clEnqueueNDRangeKernel", E);
    }
    cl_int E = clFinish(Queue);
    return E == CL_SUCCESS ? "" : clErr("clFinish", E);
  }

  std::string readBack(const Workload &W, std::vector<void *> &Ptrs, std::vector<Storage> &Keep) {
    for (size_t I = 0; I < W.Buffers.size(); ++I) {
      const Buffer &B = W.Buffers[I];
      if (B.Kind == Role::In) {
        Ptrs.push_back(B.Init.get());
        continue;
      }
      Storage S = allocate(B.bytes());
      cl_int E = clEnqueueReadBuffer(Queue, Mems[I], CL_TRUE, 0, B.bytes(), S.get(), 0, nullptr, nullptr);
      if (E != CL_SUCCESS)
        return clErr("clEnqueueReadBuffer", E);
      Ptrs.push_back(S.get());
      Keep.push_back(std::move(S));
    }
    return "";
  }

private:
  cl_device_id Device = nullptr;
};
#endif

/// The CPUs this process may run on.
std::vector<int> allowedCpus() {
  std::vector<int> Cpus = codegen::affinityCpus();
  if (Cpus.empty())
    for (int C = 0, N = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)); C < N; ++C)
      Cpus.push_back(C);
  return Cpus;
}

std::string cpuList(const std::vector<int> &Cpus) {
  std::string List;
  for (size_t I = 0; I < Cpus.size(); ++I)
    List += (I ? "," : "") + std::to_string(Cpus[I]);
  return List;
}

/// Sets the calling thread's CPU mask (threads it creates later inherit it).
void setThreadCpus(const std::vector<int> &Cpus) {
  if (Cpus.empty())
    return;
  cpu_set_t Set;
  CPU_ZERO(&Set);
  for (int C : Cpus)
    CPU_SET(C, &Set);
  sched_setaffinity(0, sizeof Set, &Set);
}

/// CPU placement of a child. libgomp, started with OMP_PROC_BIND, binds the main thread to its first place
/// before main() runs; threads that ptxforge (per launch) and PoCL create from the main thread would inherit
/// that one-CPU mask. So the main thread holds the phase's CPUs (the first Threads of the parent's mask)
/// while it compiles, creates the PoCL context and launches ptxforge, and libgomp's place only while it runs
/// the native twin. At 1 thread everything is on one CPU.
struct Placement {
  std::vector<int> Phase, Omp;
  void forPtxforgeAndPocl() const { setThreadCpus(Phase); }
  void forNative() const { setThreadCpus(Omp); }
};

Placement placeChild(const Options &O) {
  Placement P;
  std::vector<int> Parent = O.Cpus.empty() ? allowedCpus() : O.Cpus;
  P.Phase.assign(Parent.begin(), Parent.begin() + std::min<size_t>(Parent.size(), O.Phase));
  P.Omp = codegen::affinityCpus(); // libgomp's binding of the main thread, if any
  bool OmpInside = !P.Omp.empty() && std::all_of(P.Omp.begin(), P.Omp.end(), [&](int C) {
    return std::find(P.Phase.begin(), P.Phase.end(), C) != P.Phase.end();
  });
  if (!OmpInside || O.Phase == 1)
    P.Omp = P.Phase;
  P.forPtxforgeAndPocl();
  return P;
}

int runChild(const Options &O) {
  alarm(O.Timeout);
  json R;
  R["kernel"] = O.Kernel;
  R["threads"] = O.Phase;
  Placement Place = placeChild(O);
  R["cpus"] = cpuList(Place.Phase);
  R["native_main_thread_cpus"] = cpuList(Place.Omp);
  nat::setThreads(O.Phase);
  std::unique_ptr<Workload> W = makeWorkload(O.Kernel, O.Quick);
  if (!W) {
    std::fprintf(stderr, "bench_kernels: unknown kernel '%s'\n", O.Kernel.c_str());
    return 2;
  }
  R["shape"] = W->Shape;
  R["work"] = W->Work;
  R["flops"] = W->Flops;
  ImplState S[NumImpls];

  // ptxforge (compiled before PoCL loads its own LLVM, untimed here: the parent times JIT separately).
  PtxforgeRunner PR;
  if (O.SkipPtxforge) {
    S[Ptx].Status = "crashed";
    S[Ptx].Message = "the run with ptxforge died; this is a rerun without it";
  } else if (std::string E = PR.compile(*W); !E.empty()) {
    S[Ptx].Status = "compile error", S[Ptx].Message = E;
  } else {
    setupBuffers(*W, S[Ptx], /*Device=*/true);
    if (std::string E = PR.prepare(*W, S[Ptx].Ptrs, O.Phase); !E.empty())
      S[Ptx].Status = "launch error", S[Ptx].Message = E;
    else
      S[Ptx].Available = true;
  }
  setupBuffers(*W, S[Native]);
  S[Native].Available = true;

#if PTXFORGE_BENCH_HAVE_OPENCL
  std::unique_ptr<PoclRunner> CL;
  if (O.NoPocl) {
    S[Pocl].Status = "unavailable", S[Pocl].Message = "--no-pocl";
  } else {
    CL = std::make_unique<PoclRunner>();
    if (std::string E = CL->init(); !E.empty()) {
      S[Pocl].Status = "unavailable", S[Pocl].Message = E;
      CL.reset();
    } else {
      R["pocl_device"] = CL->DeviceName;
      R["pocl_units"] = CL->Units;
      if (std::string E = CL->build(*W); !E.empty())
        S[Pocl].Status = "compile error", S[Pocl].Message = E;
      else
        S[Pocl].Available = true;
    }
  }
#else
  S[Pocl].Status = "unavailable";
  S[Pocl].Message = "built without OpenCL headers/library (install ocl-icd-opencl-dev opencl-headers, reconfigure)";
#endif

  // libcuda.so.1: load, first use (quick code) and one run on it, then the wait for the optimized code.
  CudaRunner CR;
  std::vector<Storage> CudaOut;
  if (O.NoLibcuda) {
    S[Cuda].Status = "unavailable", S[Cuda].Message = "--no-libcuda";
  } else if (O.SkipPtxforge) {
    S[Cuda].Status = "crashed", S[Cuda].Message = "the run with ptxforge died; this is a rerun without it";
  } else {
    bool Ok;
    std::string Text = readFile(ptxPath(*W), Ok);
    std::vector<DeviceBufferSpec> Specs;
    for (const Buffer &B : W->Buffers)
      Specs.push_back({B.Init.get(), B.bytes(), B.Kind == Role::InOut, B.ZeroBeforeRun});
    double FirstMs = 0;
    std::string E = !Ok ? "cannot read " + ptxPath(*W) : CR.setup(Text, W->Name, Specs, W->Launches);
    if (E.empty())
      E = CR.run(FirstMs);
    if (E.empty())
      E = CR.waitForOptimizedCode();
    if (!E.empty())
      S[Cuda].Status = "run error", S[Cuda].Message = E;
    else
      S[Cuda].Available = true;
    R["libcuda_load_ms"] = CR.LoadMs, R["libcuda_first_ms"] = FirstMs, R["libcuda_wait_ms"] = CR.WaitMs;
  }

  // One run of implementation I; returns milliseconds or NaN on failure (recorded in S[I]).
  auto runOnce = [&](int I) -> double {
    std::string E;
    double Ms = NAN;
    if (I == Cuda) {
      E = CR.run(Ms);
    } else if (I == Pocl) {
#if PTXFORGE_BENCH_HAVE_OPENCL
      E = CL->reset(*W);
      if (E.empty()) {
        auto T0 = Clock::now();
        E = CL->run(*W);
        Ms = std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
      }
#endif
    } else {
      resetHost(*W, S[I]);
      if (I == Native)
        Place.forNative();
      auto T0 = Clock::now();
      if (I == Ptx)
        E = PR.run();
      else
        W->Native(S[I].Ptrs);
      Ms = std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
      if (I == Native)
        Place.forPtxforgeAndPocl();
    }
    if (E.empty())
      return Ms;
    S[I].Available = false;
    S[I].Status = "run error";
    S[I].Message = E;
    return NAN;
  };

  // Warm-up, then alternating timed repetitions; the order rotates so no implementation always goes first.
  // Each run starts on a quiet machine: libgomp's threads spin for several ms after a parallel region
  // (GOMP_SPINCOUNT), and on the CPU a pinned ptxforge or PoCL worker shares with them they took half of the
  // next run's time (reduce at 2 threads: 8.3 ms, 5.0-6.4 ms with passive OpenMP threads). After the pause
  // every implementation's workers are parked and each run pays the same wake-up.
  auto needsMore = [&](int Rep) {
    if (Rep < O.Reps)
      return true;
    if (Rep >= MaxReps)
      return false;
    for (int I = 0; I < NumImpls; ++I)
      if (S[I].Available && std::accumulate(S[I].Ms.begin(), S[I].Ms.end(), 0.0) < O.MinMs)
        return true;
    return false;
  };
  for (int Rep = -O.Warmup; needsMore(Rep); ++Rep)
    for (int K = 0; K < NumImpls; ++K) {
      int I = (K + (Rep < 0 ? 0 : Rep)) % NumImpls;
      if (!S[I].Available)
        continue;
      std::this_thread::sleep_for(std::chrono::milliseconds(QuietMs));
      double Ms = runOnce(I);
      if (Rep >= 0 && !std::isnan(Ms))
        S[I].Ms.push_back(Ms);
    }

  // Verification: the native twin is the reference (itself checked independently where that is cheap).
  std::vector<void *> Views[NumImpls];
  for (int I : {Ptx, Native})
    if (S[I].Available)
      Views[I] = S[I].Ptrs;
  if (S[Cuda].Available)
    for (size_t B = 0; B < W->Buffers.size(); ++B) {
      if (W->Buffers[B].Kind == Role::In) {
        Views[Cuda].push_back(W->Buffers[B].Init.get());
        continue;
      }
      CudaOut.push_back(allocate(W->Buffers[B].bytes()));
      if (std::string E = CR.download(B, CudaOut.back().get()); !E.empty())
        S[Cuda].Available = false, S[Cuda].Status = "run error", S[Cuda].Message = E;
      Views[Cuda].push_back(CudaOut.back().get());
    }
#if PTXFORGE_BENCH_HAVE_OPENCL
  if (S[Pocl].Available)
    if (std::string E = CL->readBack(*W, Views[Pocl], S[Pocl].Result); !E.empty())
      S[Pocl].Available = false, S[Pocl].Status = "run error", S[Pocl].Message = E;
#endif
  json MaxErr[NumImpls];
  bool NativeOk = true;
  if (W->Sanity)
    if (std::string E = W->Sanity(Views[Native]); !E.empty()) {
      S[Native].Status = "mismatch";
      S[Native].Message = "self-check: " + E;
      NativeOk = false;
    }
  if (NativeOk)
    S[Native].Status = "ok";
  for (int I : {Ptx, Pocl, Cuda}) {
    if (!S[I].Available)
      continue;
    std::string Msgs;
    for (size_t B = 0; B < W->Buffers.size(); ++B) {
      if (W->Buffers[B].Kind == Role::In)
        continue;
      CheckResult C = compareBuffer(W->Buffers[B], Views[I][B], Views[Native][B]);
      if (!C.Ok)
        Msgs += (Msgs.empty() ? "" : "; ") + C.Message;
      MaxErr[I][W->Buffers[B].Name] = C.MaxErr;
    }
    S[I].Status = Msgs.empty() ? "ok" : "mismatch";
    S[I].Message = Msgs;
  }

  for (int I = 0; I < NumImpls; ++I) {
    json J;
    J["status"] = S[I].Status;
    J["message"] = S[I].Message;
    J["ms"] = S[I].Ms;
    if (!S[I].Ms.empty())
      J["median_ms"] = median(S[I].Ms);
    if (!MaxErr[I].is_null())
      J["max_abs_err"] = MaxErr[I];
    R[ImplNames[I]] = J;
  }
  return writeTextFile(O.ResultFile, R.dump());
}

// ---------------------------------------------------------------------------------------------------------------
// Parent: JIT timings, children, tables.

std::string findPtxas() {
  std::string Path = std::getenv("PATH") ? std::getenv("PATH") : "";
  std::stringstream SS(Path);
  std::string Dir;
  std::vector<std::string> Dirs;
  while (std::getline(SS, Dir, ':'))
    Dirs.push_back(Dir.empty() ? "." : Dir);
  Dirs.push_back("/usr/local/cuda/bin");
  for (const std::string &D : Dirs) {
    std::string P = D + "/ptxas";
    if (access(P.c_str(), X_OK) == 0)
      return P;
  }
  return "";
}

/// What an application waits for before its first launch: cuModuleLoadData and cuModuleGetFunction of W's PTX
/// through the driver (lazy loading: the module's shared part and the kernel; the compute cache off; tiered
/// JIT, so the kernel's quick code), then the module unloaded, which waits for the background compile
/// (untimed). Returns ms, NAN with Error set on failure.
double driverFirstUseMs(const Workload &W, std::string &Error) {
  using namespace ptxforge::driver;
  bool Ok;
  std::string Text = readFile(ptxPath(W), Ok);
  if (!Ok) {
    Error = "cannot read " + ptxPath(W);
    return NAN;
  }
  static Context *Ctx = [] {
    llvm::consumeError(Driver::get().initialize());
    auto C = Driver::get().createContext(0, 0);
    if (!C) {
      llvm::consumeError(C.takeError());
      return static_cast<Context *>(nullptr);
    }
    ComputeCacheConfig Off = ComputeCache::global().config();
    Off.Enabled = false;
    ComputeCache::global().reconfigure(Off);
    return *C;
  }();
  if (!Ctx) {
    Error = "no driver context";
    return NAN;
  }
  auto T0 = Clock::now();
  JitLogs Logs;
  ModuleSource Source;
  Source.Image = Text.c_str();
  auto M = Module::load(*Ctx, Source, JitOptions(), Logs);
  if (!M) {
    Error = llvm::toString(M.takeError()) + " " + Logs.Error;
    return NAN;
  }
  if (!(*M)->function(W.Name)) {
    Error = "cannot load kernel " + W.Name + ": " + (*M)->materializeLog();
    return NAN;
  }
  double Ms = std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
  M->reset();
  return Ms;
}

json measureJit(const Options &O, const std::vector<std::string> &Kernels) {
  json Rows = json::array();
  std::string PtxasPath = findPtxas();
  std::printf(
      "== JIT: PTX text -> runnable host code (parse, verify, lower, O2, JIT link), median of %d cold compiles\n"
      "   each (no cache), beside `ptxas -arch=sm_80 -O3` on the same file (whole process, median of %d).\n"
      "   quick: cuModuleLoadData + cuModuleGetFunction through the driver core, whose tiered JIT gives the\n"
      "   kernel its quick code (thread functions only) and compiles the optimized code (block functions)\n"
      "   in the background; launches move to that between blocks. optimized: the whole module's optimized\n"
      "   code in one compile (what PTXFORGE_JIT_TIER=2 makes the driver wait for).\n",
      O.JitReps, O.JitReps);
  std::printf("%-15s %12s %12s %10s %14s %10s\n", "kernel", "quick ms", "ptxas ms", "quick/ptxas", "optimized ms",
              "opt/ptxas");
  // One throw-away compile first, so the process-wide LLVM initialisation is not charged to the first kernel.
  {
    auto W = makeWorkload("vecadd", true);
    PtxforgeRunner R;
    (void)R.compile(*W);
  }
  std::vector<double> QuickRatios, OptRatios;
  for (const std::string &K : Kernels) {
    auto W = makeWorkload(K, true);
    json Row;
    Row["kernel"] = K;
    std::vector<double> QuickMs, OptMs;
    std::string Error;
    for (int I = 0; I < O.JitReps && Error.empty(); ++I) {
      QuickMs.push_back(driverFirstUseMs(*W, Error));
      if (!Error.empty())
        break;
      PtxforgeRunner R;
      auto T0 = Clock::now();
      Error = R.compile(*W);
      OptMs.push_back(std::chrono::duration<double, std::milli>(Clock::now() - T0).count());
    }
    double Ptxas = NAN;
    if (!PtxasPath.empty()) {
      std::vector<double> P;
      std::string OutFile = "/tmp/bench_kernels_" + std::to_string(getpid()) + ".cubin";
      for (int I = 0; I < O.JitReps; ++I) {
        auto T0 = Clock::now();
        int St = spawnWait({PtxasPath, "-arch=sm_80", "-O3", ptxPath(*W), "-o", OutFile}, currentEnv(), true);
        double Ms = std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
        if (St != 0)
          break;
        P.push_back(Ms);
      }
      unlink(OutFile.c_str());
      Ptxas = median(P);
    }
    if (!Error.empty()) {
      std::printf("%-15s %12s  compile error: %s\n", K.c_str(), "FAILED", Error.substr(0, 200).c_str());
      Row["error"] = Error;
      Rows.push_back(Row);
      continue;
    }
    double Quick = median(QuickMs), Opt = median(OptMs);
    Row["quick_ms"] = Quick;
    Row["ptxforge_ms"] = Opt;
    if (std::isnan(Ptxas)) {
      std::printf("%-15s %12.1f %12s %10s %14.1f %10s\n", K.c_str(), Quick, PtxasPath.empty() ? "(absent)" : "failed",
                  "-", Opt, "-");
    } else {
      std::printf("%-15s %12.1f %12.1f %10.2f %14.1f %10.2f\n", K.c_str(), Quick, Ptxas, Quick / Ptxas, Opt,
                  Opt / Ptxas);
      QuickRatios.push_back(Quick / Ptxas);
      OptRatios.push_back(Opt / Ptxas);
      Row["ptxas_ms"] = Ptxas;
    }
    Rows.push_back(Row);
    std::fflush(stdout);
  }
  if (!QuickRatios.empty()) {
    std::printf("%-15s %12s %12s %10.2f %14s %10.2f\n", "geomean", "", "", geomean(QuickRatios), "",
                geomean(OptRatios));
    auto Worst = std::max_element(QuickRatios.begin(), QuickRatios.end());
    std::printf("goal: first runnable code no slower than ptxas on every kernel (worst quick/ptxas %.2f): %s\n",
                *Worst, *Worst <= 1.0 ? "MET" : "NOT MET");
  }
  if (PtxasPath.empty())
    std::printf("(ptxas not found on PATH or in /usr/local/cuda/bin)\n");
  std::printf("\n");
  return Rows;
}

/// libcuda.so.1's first use: load + quick compile ms / first run (quick code) ms.
std::string firstUse(const json &R) {
  if (!R.contains("libcuda_load_ms"))
    return "-";
  char Buf[48];
  std::snprintf(Buf, sizeof Buf, "%.0f/%.0f", R["libcuda_load_ms"].get<double>(), R.value("libcuda_first_ms", 0.0));
  return Buf;
}

std::string fmtMs(const json &Impl) {
  if (!Impl.contains("median_ms"))
    return "-";
  char Buf[32];
  double Ms = Impl["median_ms"].get<double>();
  std::snprintf(Buf, sizeof Buf, Ms < 10 ? "%.3f" : Ms < 1000 ? "%.2f" : "%.0f", Ms);
  return Buf;
}

bool usable(const json &Impl) { return Impl.value("status", "") == "ok" && Impl.contains("median_ms"); }

struct PhaseSummary {
  std::vector<double> VsNative, VsPocl, CudaVsNative;
  std::vector<std::string> SlowerThanPocl, Missing, CudaOverNative;
};

/// Implementations that may be absent without failing the run.
bool optionalImpl(const std::string &I, const std::string &Status) {
  return (I == "pocl" || I == "libcuda") && Status == "unavailable";
}

/// The PoCL bar (issue 3): within 5% where both sit at the memory bandwidth, at least as fast elsewhere.
bool atBandwidth(const std::string &Kernel) { return Kernel == "vecadd" || Kernel == "saxpy" || Kernel == "stencil5"; }
double poclAllowance(const std::string &Kernel) { return atBandwidth(Kernel) ? 1.05 : 1.0; }

void printRow(const json &R, PhaseSummary &Sum, bool Timed, bool Verbose) {
  const json &P = R["ptxforge"], &N = R["native"], &C = R["pocl"], &L = R["libcuda"];
  double Work = R["work"].get<double>();
  bool Flops = R["flops"].get<bool>();
  auto rate = [&](const json &I) -> std::string {
    if (!I.contains("median_ms"))
      return "-";
    char Buf[32];
    std::snprintf(Buf, sizeof Buf, "%.1f", Work / (I["median_ms"].get<double>() * 1e-3) / 1e9);
    return Buf;
  };
  auto ratio = [&](const json &Other, std::vector<double> &Into, const json &Mine) -> std::string {
    if (!usable(Mine) || !usable(Other))
      return "-";
    double Rt = Mine["median_ms"].get<double>() / Other["median_ms"].get<double>();
    Into.push_back(Rt);
    char Buf[32];
    std::snprintf(Buf, sizeof Buf, "%.2f", Rt);
    return Buf;
  };
  std::string K = R["kernel"];
  std::string RNat = ratio(N, Sum.VsNative, P), RPocl = ratio(C, Sum.VsPocl, P), RCuda = ratio(N, Sum.CudaVsNative, L);
  if (usable(L) && usable(N) && L["median_ms"].get<double>() > N["median_ms"].get<double>())
    Sum.CudaOverNative.push_back(K + " x" + RCuda);
  if (usable(P) && usable(C) && P["median_ms"].get<double>() > C["median_ms"].get<double>() * poclAllowance(K))
    Sum.SlowerThanPocl.push_back(K + " x" + RPocl);
  std::string Check;
  for (const char *I : {"ptxforge", "native", "pocl", "libcuda"}) {
    std::string St = R[I]["status"];
    if (St == "ok" || optionalImpl(I, St))
      continue;
    Check += std::string(Check.empty() ? "" : ", ") + I + ": " + St;
  }
  if (Check.empty()) {
    Check = "ok (";
    bool First = true;
    for (const char *I : {"ptxforge", "libcuda", "pocl"})
      if (R[I]["status"] == "ok")
        Check += std::string(First ? "" : ", ") + I, First = false;
    Check += " = native)";
  }
  std::string Rates = rate(P) + "/" + rate(N) + "/" + rate(C) + (Flops ? " GFLOP/s" : " GB/s");
  if (Timed)
    std::printf("%-14s %-10s %11s %10s %10s %8s %8s %10s %8s %9s  %-28s %s\n", K.c_str(),
                R["shape"].get<std::string>().c_str(), fmtMs(P).c_str(), fmtMs(N).c_str(), fmtMs(C).c_str(),
                RNat.c_str(), RPocl.c_str(), fmtMs(L).c_str(), RCuda.c_str(), firstUse(R).c_str(), Rates.c_str(),
                Check.c_str());
  else
    std::printf("%-14s %-10s %s\n", K.c_str(), R["shape"].get<std::string>().c_str(), Check.c_str());
  for (const char *I : {"ptxforge", "native", "pocl", "libcuda"}) {
    std::string St = R[I]["status"], Msg = R[I]["message"];
    if (St != "ok" && !Msg.empty() && !optionalImpl(I, St))
      std::printf("    %s %s: %s\n", I, St.c_str(), Msg.substr(0, 600).c_str());
  }
  if (Verbose)
    for (const char *I : {"ptxforge", "native", "pocl", "libcuda"}) {
      std::printf("    %-8s", I);
      if (R[I].contains("max_abs_err"))
        std::printf(" max |err| vs native %s;", R[I]["max_abs_err"].dump().c_str());
      std::printf(" ms %s\n", R[I]["ms"].dump().c_str());
    }
  std::fflush(stdout);
}

int runParent(const Options &O, const char *Argv0) {
  std::vector<std::string> Kernels = O.Kernels.empty() ? kernelNames() : O.Kernels;
  for (const std::string &K : Kernels)
    if (!makeWorkload(K, true)) {
      std::fprintf(stderr,
                   "bench_kernels: unknown kernel '%s' (known: vecadd saxpy reduce_sum sgemm_tiled transpose "
                   "histogram256 nbody_step black_scholes stencil5)\n",
                   K.c_str());
      return 2;
    }
  int AllCpus = static_cast<int>(allowedCpus().size());
  std::vector<int> Threads = O.Threads;
  if (Threads.empty()) {
    Threads.push_back(1);
    if (AllCpus > 1)
      Threads.push_back(AllCpus);
  }
  bool Timed = !(O.Reps == 1 && O.Warmup == 0);
  std::string Cpu;
  {
    std::ifstream In("/proc/cpuinfo");
    std::string Line;
    while (std::getline(In, Line))
      if (Line.rfind("model name", 0) == 0) {
        Cpu = Line.substr(Line.find(':') + 2);
        break;
      }
  }
  std::printf("ptxforge kernel benchmark: %s sizes, %d warm-up + %d timed alternating repetitions per implementation"
              " (up to %d while an implementation has under %d ms of timed runs); %d CPU(s) (%s)\n\n",
              O.Quick ? "--quick" : "README", O.Warmup, O.Reps, std::max(O.Reps, MaxReps), O.MinMs, AllCpus,
              Cpu.c_str());
  std::fflush(stdout);
  json All;
  All["quick"] = O.Quick, All["reps"] = O.Reps, All["min_ms"] = O.MinMs, All["warmup"] = O.Warmup,
  All["cpus"] = AllCpus;
  if (!O.NoJit)
    All["jit"] = measureJit(O, Kernels);

  std::string Self = "/proc/self/exe";
  {
    char Buf[4096];
    ssize_t N = readlink("/proc/self/exe", Buf, sizeof Buf - 1);
    if (N > 0)
      Self.assign(Buf, N);
    else
      Self = Argv0;
  }
  bool Failed = false;
  json Phases = json::array();
  for (int T : Threads) {
    std::printf("== %d thread%s: ptxforge LaunchConfig::Workers=%d, native omp_set_num_threads(%d), PoCL "
                "POCL_MAX_PTHREAD_COUNT=%d;\n   %s\n",
                T, T == 1 ? "" : "s", T, T, T,
                T == 1 ? "process pinned to one CPU"
                       : "OpenMP (OMP_PROC_BIND=close), PoCL (POCL_AFFINITY=1) and ptxforge (its pool) pin their "
                         "threads");
    {
      std::ifstream L("/proc/loadavg");
      std::string A, B, C;
      if (L >> A >> B >> C)
        std::printf("   load average before this phase: %s %s %s (a 1-minute load above %d means other processes "
                    "compete with the measurement)\n",
                    A.c_str(), B.c_str(), C.c_str(), AllCpus - T);
    }
    if (Timed)
      std::printf("%-14s %-10s %11s %10s %10s %8s %8s %10s %8s %9s  %-28s %s\n", "kernel", "size", "ptxforge ms",
                  "native ms", "PoCL ms", "ptx/nat", "ptx/PoCL", "libcuda ms", "cuda/nat", "1st use",
                  "rate ptxforge/native/PoCL", "check");
    std::fflush(stdout);
    PhaseSummary Sum;
    std::string PoclLine;
    json Rows = json::array();
    for (const std::string &K : Kernels) {
      char Tmp[] = "/tmp/bench_kernels_result_XXXXXX";
      int Fd = mkstemp(Tmp);
      if (Fd >= 0)
        close(Fd);
      std::vector<std::string> Env = currentEnv();
      setEnv(Env, "POCL_MAX_PTHREAD_COUNT", std::to_string(T));
      setEnv(Env, "POCL_AFFINITY", "1");
      setEnv(Env, "OMP_NUM_THREADS", std::to_string(T));
      setEnv(Env, "OMP_PROC_BIND", "close");
      setEnv(Env, "OMP_PLACES", "cores");
      setEnv(Env, "PTXFORGE_WORKERS", std::to_string(T));
      setEnv(Env, "CUDA_CACHE_DISABLE", "1"); // libcuda's first use is a cold compile, its quick code
      std::vector<std::string> Args = childCommand(Self, T, K, Tmp, O.Timeout);
      Args.insert(Args.end(), {"--reps", std::to_string(O.Reps), "--min-ms", std::to_string(O.MinMs), "--warmup",
                               std::to_string(O.Warmup)});
      if (O.Quick)
        Args.push_back("--quick");
      if (O.NoPocl)
        Args.push_back("--no-pocl");
      if (O.NoLibcuda)
        Args.push_back("--no-libcuda");
      Args.insert(Args.end(), {"--ptx-dir", O.PtxDir, "--cpus", cpuList(allowedCpus())});
      json R;
      std::string Crash;
      for (int Attempt = 0; Attempt < 2; ++Attempt) {
        int St = spawnWait(Args, Env, false);
        std::ifstream In(Tmp);
        std::string Line;
        if (St == 0 && std::getline(In, Line) && !Line.empty()) {
          R = json::parse(Line, nullptr, false);
          if (!R.is_discarded())
            break;
        }
        Crash = WIFSIGNALED(St) ? std::string("killed by signal ") + strsignal(WTERMSIG(St)) +
                                      (WTERMSIG(St) == SIGALRM ? " (--timeout)" : "")
                                : "exited with status " + std::to_string(WIFEXITED(St) ? WEXITSTATUS(St) : -1);
        R = json();
        Args.push_back("--skip-ptxforge"); // rerun so native and PoCL still get measured
      }
      unlink(Tmp);
      if (R.is_null()) {
        std::printf("%-14s failed: the benchmark process %s (also without ptxforge)\n", K.c_str(), Crash.c_str());
        Failed = true;
        continue;
      }
      if (!Crash.empty()) {
        R["ptxforge"]["status"] = Crash.find("--timeout") != std::string::npos ? "timed out" : "crashed";
        R["ptxforge"]["message"] = "the benchmark process " + Crash + " with ptxforge; native/PoCL from a rerun";
      }
      printRow(R, Sum, Timed, O.Verbose);
      for (const char *I : {"ptxforge", "native", "pocl", "libcuda"}) {
        std::string St = R[I]["status"];
        if (St != "ok" && !optionalImpl(I, St))
          Failed = true;
      }
      if (PoclLine.empty()) {
        if (R.contains("pocl_device"))
          PoclLine = "PoCL: " + R["pocl_device"].get<std::string>() + ", " +
                     std::to_string(R["pocl_units"].get<unsigned>()) + " compute unit(s)";
        else if (R["pocl"]["status"] == "unavailable")
          PoclLine = "PoCL: not available (" + R["pocl"]["message"].get<std::string>() + ")";
      }
      Rows.push_back(R);
    }
    if (Timed) {
      double GNat = geomean(Sum.VsNative), GPocl = geomean(Sum.VsPocl), GCuda = geomean(Sum.CudaVsNative);
      auto fmt2 = [](double G) { return std::isnan(G) ? std::string("-") : fmtSize(std::round(G * 100) / 100); };
      std::printf("%-14s %-10s %11s %10s %10s %8s %8s %10s %8s\n", "geomean", "", "", "", "", fmt2(GNat).c_str(),
                  fmt2(GPocl).c_str(), "", fmt2(GCuda).c_str());
      if (!PoclLine.empty())
        std::printf("%s\n", PoclLine.c_str());
      std::printf("bar: geomean ptxforge/native <= 1.5: %s (%s over %zu kernels)\n",
                  Sum.VsNative.empty()                                   ? "n/a"
                  : GNat <= 1.5 && Sum.VsNative.size() == Kernels.size() ? "MET"
                                                                         : "NOT MET",
                  std::isnan(GNat) ? "-" : fmtSize(std::round(GNat * 1000) / 1000).c_str(), Sum.VsNative.size());
      if (Sum.VsNative.size() != Kernels.size())
        std::printf("     (only %zu of %zu kernels have a ptxforge time: the others failed, see above)\n",
                    Sum.VsNative.size(), Kernels.size());
      if (!Sum.CudaVsNative.empty()) {
        std::string List;
        for (const std::string &S : Sum.CudaOverNative)
          List += (List.empty() ? "" : ", ") + S;
        bool All = Sum.CudaVsNative.size() == Kernels.size();
        std::printf("bar (issue 18): through libcuda.so.1 every kernel <= 1.0x native: %s%s (geomean %s over %zu)\n",
                    List.empty() && All ? "MET" : "NOT MET", List.empty() ? "" : (" (over on " + List + ")").c_str(),
                    fmtSize(std::round(GCuda * 1000) / 1000).c_str(), Sum.CudaVsNative.size());
      }
      if (Sum.VsPocl.empty())
        std::printf("bar: ptxforge at least as fast as PoCL on every kernel: n/a (%s)\n",
                    PoclLine.rfind("PoCL: not", 0) == 0 ? "PoCL not available" : "no kernel ran on both");
      else {
        std::string List;
        for (const std::string &S : Sum.SlowerThanPocl)
          List += (List.empty() ? "" : ", ") + S;
        bool All9 = Sum.VsPocl.size() == Kernels.size();
        std::printf("bar: ptxforge at least as fast as PoCL on every kernel (within 5%% on vecadd, saxpy, stencil5): "
                    "%s%s%s\n",
                    Sum.SlowerThanPocl.empty() && All9 ? "MET" : "NOT MET",
                    List.empty() ? "" : (" (slower on " + List + ")").c_str(),
                    All9 ? ""
                         : (" (compared on " + std::to_string(Sum.VsPocl.size()) + " of " +
                            std::to_string(Kernels.size()) + " kernels)")
                               .c_str());
      }
    } else if (!PoclLine.empty()) {
      std::printf("%s\n", PoclLine.c_str());
    }
    std::printf("\n");
    std::fflush(stdout);
    json Ph;
    Ph["threads"] = T;
    Ph["kernels"] = Rows;
    Ph["geomean_vs_native"] = geomean(Sum.VsNative);
    Ph["geomean_vs_pocl"] = geomean(Sum.VsPocl);
    Ph["geomean_libcuda_vs_native"] = geomean(Sum.CudaVsNative);
    Phases.push_back(Ph);
  }
  All["phases"] = Phases;
  if (!O.JsonOut.empty())
    writeTextFile(O.JsonOut, All.dump(2));
  std::printf("%s\n", Failed ? "RESULT: some outputs did not verify or some implementation failed (see above)"
                             : "RESULT: all outputs verified");
  return Failed ? 1 : 0;
}

} // namespace

int main(int Argc, char **Argv) { return benchMain<Options>(Argc, Argv, parseOptions, runChild, runParent); }
