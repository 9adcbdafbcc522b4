// Micro benchmarks of single costs, each against a reference kernel measured in the same run (alternating
// runs, medians): `half`: packed f16/bf16 arithmetic against the f32 kernel of the same shape (per element:
// one 32-bit word in, one out); `blocks`: the cost per block of a grid of 8-thread blocks against the same
// threads in 32-thread blocks; `warpsync`: the classic shared-memory reduction whose warp-synchronous tail relies
// on warp lockstep (volatile, no __syncwarp: lockstep points, codegen/lib/ProgressPoints.h) against the same
// kernel with bar.warp.sync after each step (region cuts the block function releases itself); `match`:
// match.any.sync over the even lanes only (a partial mask) against every lane with the full mask; `shfl`: the same
// with shfl.sync.down; `atomics`: atomicAdd on doubles as the compare-and-swap loop of the CUDA guide against
// atom.add.f64 and atomicAdd on floats. Kernels go through runFrontend -> codegen::compilePTX -> launchKernel,
// with one worker per CPU unless --workers says otherwise.
//   bench_micro [half|blocks|warpsync|match|shfl|atomics|all] [--reps N] [--workers N] [--quick]
#include "ptxforge/codegen/Launch.h"
#include "ptxforge/ptx/Frontend.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace ptxforge;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string Which = "all";
  int Reps = 9;
  unsigned Workers = 0;
  bool Quick = false;
};

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V.empty() ? 0 : V[V.size() / 2];
}

std::unique_ptr<codegen::CompiledModule> compile(const std::string &Text) {
  auto Front = ptx::runFrontend(std::make_unique<ptx::SourceBuffer>("micro.ptx", Text));
  if (!Front->ok()) {
    for (const ptx::Diagnostic &D : Front->Diags.sorted())
      std::fprintf(stderr, "%s\n", ptx::formatDiagnostic(*Front->Source, D).c_str());
    std::exit(1);
  }
  auto CM = codegen::compilePTX(*Front->Verified, Front->Source.get());
  if (!CM) {
    std::fprintf(stderr, "compile: %s\n", llvm::toString(CM.takeError()).c_str());
    std::exit(1);
  }
  return std::move(*CM);
}

/// CPU time of the process: on a loaded machine it varies less than the wall clock (the launch's threads wait
/// without spinning).
double cpuMs() {
  timespec Ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &Ts);
  return double(Ts.tv_sec) * 1e3 + double(Ts.tv_nsec) / 1e6;
}

/// A launch of kernel "k" of its own module with its parameters bound; each launch's CPU time is kept too.
struct Run {
  std::unique_ptr<codegen::CompiledModule> M;
  codegen::LaunchConfig Config;
  std::vector<char> Params;

  Run(const std::string &Ptx, std::vector<uint64_t> Args, codegen::Dim3 Grid, codegen::Dim3 Block, unsigned Workers)
      : M(compile(Ptx)) {
    const codegen::KernelInfo *K = M->kernel("k");
    Params.resize(K->ParamBytes);
    for (size_t I = 0; I < Args.size(); ++I)
      std::memcpy(Params.data() + K->Params[I].Offset, &Args[I], K->Params[I].Size);
    Config.Grid = Grid, Config.Block = Block, Config.Workers = Workers;
  }
  std::vector<double> CpuMs;

  double ms() {
    auto T0 = Clock::now();
    double C0 = cpuMs();
    if (auto E = codegen::launchKernel(*M, *M->kernel("k"), Config, Params.data())) {
      std::fprintf(stderr, "launch: %s\n", llvm::toString(std::move(E)).c_str());
      std::exit(1);
    }
    CpuMs.push_back(cpuMs() - C0);
    return std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
  }
  /// The median CPU time of the launches after the first (untimed) one.
  double cpuMedian() const { return median(std::vector<double>(CpuMs.begin() + !CpuMs.empty(), CpuMs.end())); }
};

/// Medians of A and B over Reps alternating runs (after one untimed run of each).
std::pair<double, double> alternate(Run &A, Run &B, int Reps) {
  A.ms(), B.ms();
  std::vector<double> TA, TB;
  for (int R = 0; R < Reps; ++R) {
    if (R % 2)
      TA.push_back(A.ms()), TB.push_back(B.ms());
    else
      TB.push_back(B.ms()), TA.push_back(A.ms());
  }
  return {median(TA), median(TB)};
}

const char *Header = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// out[i] = OP(a[i], b[i]) over n 32-bit words, one per thread.
std::string binaryKernel(const std::string &Op, const std::string &Reg) {
  return std::string(Header) +
         ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 po, .param .u32 n)\n{\n"
         " .reg .pred %p;\n .reg .b32 %r<5>;\n .reg " +
         Reg +
         " %v<4>;\n .reg .b64 %rd<8>;\n"
         " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %ntid.x;\n mad.lo.u32 %r1, %r2, %r3, %r1;\n"
         " ld.param.u32 %r4, [n];\n setp.ge.u32 %p, %r1, %r4;\n @%p ret;\n"
         " ld.param.u64 %rd1, [pa];\n ld.param.u64 %rd2, [pb];\n ld.param.u64 %rd3, [po];\n"
         " cvta.to.global.u64 %rd1, %rd1;\n cvta.to.global.u64 %rd2, %rd2;\n cvta.to.global.u64 %rd3, %rd3;\n"
         " mul.wide.u32 %rd4, %r1, 4;\n add.s64 %rd5, %rd1, %rd4;\n add.s64 %rd6, %rd2, %rd4;\n"
         " add.s64 %rd7, %rd3, %rd4;\n ld.global" +
         Reg + " %v1, [%rd5];\n ld.global" + Reg + " %v2, [%rd6];\n " + Op + " %v3, %v1, %v2;\n st.global" + Reg +
         " [%rd7], %v3;\n ret;\n}\n";
}

void benchHalf(const Options &O) {
  uint32_t N = O.Quick ? (1u << 20) : (1u << 24);
  std::vector<uint32_t> A(N), B(N), Out(N);
  for (uint32_t I = 0; I < N; ++I) {
    A[I] = 0x3c003c00u + (I & 0x3ff) * 0x10001u; // ordinary f16 values in both lanes (and ordinary bf16)
    B[I] = 0x38003800u + ((I * 7) & 0x3ff) * 0x10001u;
  }
  std::vector<uint64_t> Args = {reinterpret_cast<uint64_t>(A.data()), reinterpret_cast<uint64_t>(B.data()),
                                reinterpret_cast<uint64_t>(Out.data()), N};
  codegen::Dim3 Grid{(N + 255) / 256, 1, 1}, Block{256, 1, 1};
  Run F32(binaryKernel("max.f32", ".f32"), Args, Grid, Block, O.Workers);
  std::printf("== half: packed 16-bit arithmetic against f32 max, %u elements (32-bit words), median of %d\n", N,
              O.Reps);
  std::printf("%-22s %10s %10s %8s\n", "kernel", "ms", "f32 ms", "ratio");
  for (const char *Op : {"sub.f16x2", "add.f16x2", "mul.f16x2", "max.f16x2", "sub.rn.bf16x2", "mul.rn.bf16x2"}) {
    Run H(binaryKernel(Op, ".b32"), Args, Grid, Block, O.Workers);
    auto [Half, Single] = alternate(H, F32, O.Reps);
    std::printf("%-22s %10.2f %10.2f %8.2f\n", Op, Half, Single, Half / Single);
  }
}

/// Every thread writes its global id into a 1 MiB window: a block costs little beyond its own overhead.
std::string idKernel() {
  return std::string(Header) +
         ".visible .entry k(.param .u64 po)\n{\n .reg .b32 %r<6>;\n .reg .b64 %rd<4>;\n"
         " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %ntid.x;\n mad.lo.u32 %r1, %r2, %r3, %r1;\n"
         " and.b32 %r4, %r1, 262143;\n ld.param.u64 %rd1, [po];\n mul.wide.u32 %rd2, %r4, 4;\n"
         " add.s64 %rd3, %rd1, %rd2;\n st.global.u32 [%rd3], %r1;\n ret;\n}\n";
}

void benchBlocks(const Options &O) {
  uint64_t Threads = O.Quick ? (1ull << 22) : (1ull << 27);
  std::vector<uint32_t> Out(1u << 18);
  std::vector<uint64_t> Args = {reinterpret_cast<uint64_t>(Out.data())};
  Run Tiny(idKernel(), Args, {static_cast<uint32_t>(Threads / 8), 1, 1}, {8, 1, 1}, O.Workers);
  Run Warp(idKernel(), Args, {static_cast<uint32_t>(Threads / 32), 1, 1}, {32, 1, 1}, O.Workers);
  auto [T8, T32] = alternate(Tiny, Warp, O.Reps);
  std::printf("== blocks: %llu threads as 8-thread and as 32-thread blocks, median of %d\n",
              static_cast<unsigned long long>(Threads), O.Reps);
  std::printf("8-thread blocks:  %10.2f ms  %8.1f ns per block\n", T8, T8 * 1e6 / double(Threads / 8));
  std::printf("32-thread blocks: %10.2f ms  %8.1f ns per block\n", T32, T32 * 1e6 / double(Threads / 32));
  std::printf("ratio 8/32: %.2f\n", T8 / T32);
}

/// out[block] = the sum of the block's 256 inputs: a tree through shared memory down to 64 values, then six
/// warp-synchronous steps of warp 0 through volatile shared memory, each followed by bar.warp.sync if Sync.
std::string warpReduceKernel(bool Sync) {
  std::string K = std::string(Header) +
                  ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n .reg .pred %p;\n .reg .b32 %r<6>;\n"
                  " .reg .f32 %f<3>;\n .reg .b64 %rd<5>;\n .shared .align 4 .b32 s[256];\n"
                  " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mad.lo.u32 %r3, %r2, 256, %r1;\n"
                  " ld.param.u64 %rd1, [pin];\n mul.wide.u32 %rd2, %r3, 4;\n add.s64 %rd2, %rd1, %rd2;\n"
                  " ld.global.f32 %f1, [%rd2];\n mov.u32 %r4, s;\n shl.b32 %r5, %r1, 2;\n add.u32 %r4, %r4, %r5;\n"
                  " st.shared.f32 [%r4], %f1;\n bar.sync 0;\n";
  for (int Half : {128, 64}) {
    std::string H = std::to_string(Half);
    K += " setp.ge.u32 %p, %r1, " + H + ";\n @%p bra $T" + H +
         ";\n ld.shared.f32 %f1, [%r4];\n ld.shared.f32 %f2, [%r4+" + std::to_string(4 * Half) +
         "];\n add.f32 %f1, %f1, %f2;\n st.shared.f32 [%r4], %f1;\n$T" + H + ":\n bar.sync 0;\n";
  }
  K += " setp.ge.u32 %p, %r1, 32;\n @%p bra $END;\n";
  for (int Off : {32, 16, 8, 4, 2, 1}) {
    K += " ld.volatile.shared.f32 %f1, [%r4];\n ld.volatile.shared.f32 %f2, [%r4+" + std::to_string(4 * Off) +
         "];\n add.f32 %f1, %f1, %f2;\n st.volatile.shared.f32 [%r4], %f1;\n";
    if (Sync)
      K += " bar.warp.sync -1;\n";
  }
  return K + " setp.ne.u32 %p, %r1, 0;\n @%p bra $END;\n ld.volatile.shared.f32 %f1, [%r4];\n"
             " ld.param.u64 %rd3, [pout];\n mul.wide.u32 %rd4, %r2, 4;\n add.s64 %rd3, %rd3, %rd4;\n"
             " st.global.f32 [%rd3], %f1;\n$END:\n ret;\n}\n";
}

void benchWarpSync(const Options &O) {
  uint32_t Blocks = O.Quick ? (1u << 12) : (1u << 16), N = Blocks * 256;
  std::vector<float> In(N), Legacy(Blocks), Synced(Blocks);
  for (uint32_t I = 0; I < N; ++I)
    In[I] = static_cast<float>(I % 17);
  auto run = [&](bool Sync, std::vector<float> &Out) {
    return Run(warpReduceKernel(Sync), {reinterpret_cast<uint64_t>(In.data()), reinterpret_cast<uint64_t>(Out.data())},
               {Blocks, 1, 1}, {256, 1, 1}, O.Workers);
  };
  Run A = run(false, Legacy), B = run(true, Synced);
  auto [TA, TB] = alternate(A, B, O.Reps);
  bool Same = Legacy == Synced;
  std::printf("== warpsync: %u-element block reductions, volatile warp tail without / with bar.warp.sync, median of "
              "%d\n",
              N, O.Reps);
  std::printf("lockstep (no sync): %10.2f ms\nbar.warp.sync:      %10.2f ms\nratio: %.2f  results %s\n", TA, TB,
              TA / TB, Same ? "equal" : "DIFFER");
}

/// out[i] = Collective applied to (i & 7) among the lanes Mask names (0x55555555: the even ones, which alone run
/// it; the odd lanes write 0).
std::string warpKernel(const std::string &Collective, bool Partial) {
  return std::string(Header) +
         ".visible .entry k(.param .u64 po)\n{\n .reg .pred %p;\n .reg .b32 %r<8>;\n .reg .b64 %rd<4>;\n"
         " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %ntid.x;\n mad.lo.u32 %r1, %r2, %r3, %r1;\n"
         " and.b32 %r4, %r1, 1;\n setp.eq.u32 %p, %r4, 0;\n and.b32 %r5, %r1, 7;\n mov.u32 %r6, 0;\n" +
         (Partial ? " @%p " + Collective + ", 0x55555555;\n" : " " + Collective + ", 0xffffffff;\n") +
         " ld.param.u64 %rd1, [po];\n mul.wide.u32 %rd2, %r1, 4;\n add.s64 %rd3, %rd1, %rd2;\n"
         " st.global.u32 [%rd3], %r6;\n ret;\n}\n";
}

/// Collective with the partial and the full mask over 16M threads; Check says whether the partial run's output
/// is right.
void benchWarpCollective(const Options &O, const char *Name, const std::string &Collective,
                         bool (*Check)(const std::vector<uint32_t> &)) {
  uint32_t N = O.Quick ? (1u << 20) : (1u << 24);
  std::vector<uint32_t> Out(N);
  std::vector<uint64_t> Args = {reinterpret_cast<uint64_t>(Out.data())};
  Run Partial(warpKernel(Collective, true), Args, {N / 256, 1, 1}, {256, 1, 1}, O.Workers);
  Run Full(warpKernel(Collective, false), Args, {N / 256, 1, 1}, {256, 1, 1}, O.Workers);
  auto [TP, TF] = alternate(Partial, Full, O.Reps);
  Partial.ms();
  std::printf("== %s: %s over %u threads, median of %d\n", Name, Collective.substr(0, Collective.find(' ')).c_str(), N,
              O.Reps);
  std::printf("partial mask (even lanes): %10.2f ms  %10.2f cpu ms  %s\nfull mask:                 %10.2f ms  %10.2f "
              "cpu ms\n",
              TP, Partial.cpuMedian(), Check(Out) ? "ok" : "WRONG", TF, Full.cpuMedian());
}

void benchMatch(const Options &O) {
  benchWarpCollective(O, "match", "match.any.sync.b32 %r6, %r5", [](const std::vector<uint32_t> &Out) {
    return Out[0] == 0x01010101u && Out[1] == 0 && Out[2] == 0x04040404u;
  });
}

/// shfl.sync.down by 2 among the even lanes: lane l reads lane l + 2's value, lane 30 its own.
void benchShfl(const Options &O) {
  benchWarpCollective(O, "shfl", "shfl.sync.down.b32 %r6, %r5, 2, 31", [](const std::vector<uint32_t> &Out) {
    return Out[0] == 2 && Out[1] == 0 && Out[6] == 0 && Out[30] == 6 && Out[32] == 2;
  });
}

/// bins[i & 255] += in[i] for n doubles: with the compare-and-swap loop nvcc makes of the CUDA guide's
/// atomicAdd for doubles (CAS true), or with atom.add.f64.
std::string casAddKernel(bool Cas) {
  std::string K = std::string(Header) +
                  ".visible .entry k(.param .u64 pin, .param .u64 pbins, .param .u32 n)\n{\n .reg .pred %p<3>;\n"
                  " .reg .b32 %r<6>;\n .reg .f64 %fd<4>;\n .reg .b64 %rd<15>;\n"
                  " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %ntid.x;\n"
                  " mad.lo.u32 %r1, %r2, %r3, %r1;\n ld.param.u32 %r4, [n];\n setp.ge.u32 %p1, %r1, %r4;\n"
                  " @%p1 bra $END;\n ld.param.u64 %rd5, [pin];\n ld.param.u64 %rd6, [pbins];\n"
                  " cvta.to.global.u64 %rd7, %rd5;\n cvta.to.global.u64 %rd8, %rd6;\n and.b32 %r5, %r1, 255;\n"
                  " mul.wide.u32 %rd10, %r5, 8;\n add.s64 %rd1, %rd8, %rd10;\n mul.wide.u32 %rd11, %r1, 8;\n"
                  " add.s64 %rd12, %rd7, %rd11;\n ld.global.f64 %fd1, [%rd12];\n";
  if (!Cas)
    return K + " red.global.add.f64 [%rd1], %fd1;\n$END:\n ret;\n}\n";
  return K + " ld.global.u64 %rd14, [%rd1];\n$LOOP:\n mov.b64 %fd2, %rd14;\n add.f64 %fd3, %fd1, %fd2;\n"
             " mov.b64 %rd13, %fd3;\n atom.global.cas.b64 %rd4, [%rd1], %rd14, %rd13;\n"
             " setp.ne.s64 %p2, %rd14, %rd4;\n mov.u64 %rd14, %rd4;\n @%p2 bra $LOOP;\n$END:\n ret;\n}\n";
}

/// The same with atomicAdd on floats (red.add.f32).
std::string floatAddKernel() {
  return std::string(Header) +
         ".visible .entry k(.param .u64 pin, .param .u64 pbins, .param .u32 n)\n{\n .reg .pred %p<2>;\n"
         " .reg .b32 %r<6>;\n .reg .f32 %f<2>;\n .reg .b64 %rd<13>;\n"
         " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %ntid.x;\n mad.lo.u32 %r1, %r2, %r3, %r1;\n"
         " ld.param.u32 %r4, [n];\n setp.ge.u32 %p1, %r1, %r4;\n @%p1 bra $END;\n ld.param.u64 %rd5, [pin];\n"
         " ld.param.u64 %rd6, [pbins];\n cvta.to.global.u64 %rd7, %rd5;\n cvta.to.global.u64 %rd8, %rd6;\n"
         " and.b32 %r5, %r1, 255;\n mul.wide.u32 %rd10, %r5, 4;\n add.s64 %rd1, %rd8, %rd10;\n"
         " mul.wide.u32 %rd11, %r1, 4;\n add.s64 %rd12, %rd7, %rd11;\n ld.global.f32 %f1, [%rd12];\n"
         " red.global.add.f32 [%rd1], %f1;\n$END:\n ret;\n}\n";
}

void benchAtomics(const Options &O) {
  uint32_t N = O.Quick ? (1u << 18) : (1u << 22);
  std::vector<double> In(N), CasBins(256), NativeBins(256);
  std::vector<float> InF(N), FloatBins(256);
  for (uint32_t I = 0; I < N; ++I)
    In[I] = InF[I] = static_cast<float>(I % 7); // small integers: every order of additions sums exactly
  auto args = [&](const void *In, const void *Bins) {
    return std::vector<uint64_t>{reinterpret_cast<uint64_t>(In), reinterpret_cast<uint64_t>(Bins), N};
  };
  codegen::Dim3 Grid{N / 256, 1, 1}, Block{256, 1, 1};
  Run Cas(casAddKernel(true), args(In.data(), CasBins.data()), Grid, Block, O.Workers);
  Run Native(casAddKernel(false), args(In.data(), NativeBins.data()), Grid, Block, O.Workers);
  Run Float(floatAddKernel(), args(InF.data(), FloatBins.data()), Grid, Block, O.Workers);
  auto [TC, TF] = alternate(Cas, Float, O.Reps);
  auto [TN, TF2] = alternate(Native, Float, O.Reps);
  // Every run added the same values: the bins of both double kernels match after as many runs of each.
  bool Same = CasBins == NativeBins;
  std::printf("== atomics: %u atomic additions into 256 bins, median of %d\n", N, O.Reps);
  std::printf("CAS-loop atomicAdd(double): %10.2f ms  (%.2fx float)  %s\natom.add.f64:               %10.2f ms  "
              "(%.2fx float)\natomicAdd(float):           %10.2f ms\n",
              TC, TC / TF, Same ? "sums equal" : "sums DIFFER", TN, TN / TF2, (TF + TF2) / 2);
}

/// Grid-stride copies (inputs/grid-stride-copy.cu: nvcc's PTX, its loop unrolled by four after a remainder
/// loop) over 1- to 32-byte elements, 64 blocks of 256 threads, each kernel alone: GB/s read + written.
void benchGridStride(const Options &O) {
  std::ifstream In(PTXFORGE_BENCH_INPUTS "/grid-stride-copy.ptx");
  std::stringstream Text;
  Text << In.rdbuf();
  if (!In) {
    std::fprintf(stderr, "bench_micro: cannot read %s\n", PTXFORGE_BENCH_INPUTS "/grid-stride-copy.ptx");
    std::exit(1);
  }
  size_t Bytes = O.Quick ? (size_t(1) << 22) : (size_t(48) << 20);
  std::vector<uint8_t> Src(Bytes), Dst(Bytes);
  for (size_t I = 0; I < Bytes; ++I)
    Src[I] = uint8_t(I * 7 + 1);
  auto M = compile(Text.str());
  std::printf("== gridstride: copy loops over %zu MiB, 64 x 256 threads, median of %d (GB/s: bytes read + written)\n",
              Bytes >> 20, O.Reps);
  std::printf("%-10s %10s %10s %10s %10s  %s\n", "kernel", "ms", "GB/s", "cpu ms", "cpu GB/s", "output");
  const std::pair<const char *, unsigned> Kernels[] = {
      {"copy_u8", 1}, {"copy_u16", 2}, {"copy_u32", 4}, {"copy_c4", 4},  {"copy_c4m", 4},
      {"copy_f2", 8}, {"copy_f2m", 8}, {"copy_f3", 12}, {"copy_f4", 16}, {"copy_f4m", 16}, {"copy_f8", 32}};
  for (auto [Name, Size] : Kernels) {
    const codegen::KernelInfo *K = M->kernel(Name);
    uint64_t Args[3] = {reinterpret_cast<uint64_t>(Dst.data()), reinterpret_cast<uint64_t>(Src.data()), Bytes / Size};
    std::vector<char> Params(K->ParamBytes);
    for (size_t I = 0; I < 3; ++I)
      std::memcpy(Params.data() + K->Params[I].Offset, &Args[I], K->Params[I].Size);
    codegen::LaunchConfig Config;
    Config.Grid = {64, 1, 1}, Config.Block = {256, 1, 1}, Config.Workers = O.Workers;
    std::fill(Dst.begin(), Dst.end(), 0);
    std::vector<double> T, Cpu;
    for (int R = 0; R <= O.Reps; ++R) {
      double C0 = cpuMs();
      auto T0 = Clock::now();
      if (auto E = codegen::launchKernel(*M, *K, Config, Params.data())) {
        std::fprintf(stderr, "launch: %s\n", llvm::toString(std::move(E)).c_str());
        std::exit(1);
      }
      if (R) { // the first run is untimed
        T.push_back(std::chrono::duration<double, std::milli>(Clock::now() - T0).count());
        Cpu.push_back(cpuMs() - C0);
      }
    }
    double Ms = median(T), CpuMs = median(Cpu), Moved = 2.0 * double(Bytes / Size * Size);
    std::printf("%-10s %10.2f %10.2f %10.2f %10.2f  %s\n", Name, Ms, Moved / Ms / 1e6, CpuMs, Moved / CpuMs / 1e6,
                std::equal(Src.begin(), Src.begin() + Bytes / Size * Size, Dst.begin()) ? "ok" : "WRONG");
  }
}

} // namespace

int main(int argc, char **argv) {
  Options O;
  for (int I = 1; I < argc; ++I) {
    std::string A = argv[I];
    if (A == "--reps" && I + 1 < argc)
      O.Reps = std::max(1, std::atoi(argv[++I]));
    else if (A == "--workers" && I + 1 < argc)
      O.Workers = static_cast<unsigned>(std::atoi(argv[++I]));
    else if (A == "--quick")
      O.Quick = true;
    else if (A == "half" || A == "blocks" || A == "warpsync" || A == "match" || A == "shfl" || A == "atomics" ||
             A == "gridstride" || A == "all")
      O.Which = A;
    else {
      std::fprintf(stderr, "usage: bench_micro [half|blocks|warpsync|match|shfl|atomics|gridstride|all] [--reps N] "
                           "[--workers N] [--quick]\n");
      return 2;
    }
  }
  if (O.Which == "all" || O.Which == "half")
    benchHalf(O);
  if (O.Which == "all" || O.Which == "blocks")
    benchBlocks(O);
  if (O.Which == "all" || O.Which == "warpsync")
    benchWarpSync(O);
  if (O.Which == "all" || O.Which == "match")
    benchMatch(O);
  if (O.Which == "all" || O.Which == "shfl")
    benchShfl(O);
  if (O.Which == "all" || O.Which == "atomics")
    benchAtomics(O);
  if (O.Which == "all" || O.Which == "gridstride")
    benchGridStride(O);
  return 0;
}
