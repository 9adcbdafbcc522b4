// The directed-rounding f32 forms and ex2.approx.f32 are lowered to plain IR (lower/DirectedRounding.cpp,
// lower/ApproxMath.cpp). These tests run them through the JIT over edge cases and random bit patterns and
// compare with references that are right by construction: the runtime's ptxrt_* helpers, themselves checked
// against the host FPU switched to the same rounding mode, and exp2 in double.
#include "KernelRunner.h"
#include "ptxforge/codegen/CompiledModule.h"
#include "ptxforge/codegen/Launch.h"
#include "ptxforge/ptx/Frontend.h"

#include <doctest/doctest.h>

#include "llvm/ADT/bit.h"
#include <cfenv>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace ptxforge;

extern "C" {
#define PTXRT_REFERENCE(MODE, T, SUFFIX)                                                                               \
  T ptxrt_add_##MODE##_##SUFFIX(T, T);                                                                                 \
  T ptxrt_sub_##MODE##_##SUFFIX(T, T);                                                                                 \
  T ptxrt_mul_##MODE##_##SUFFIX(T, T);                                                                                 \
  T ptxrt_div_##MODE##_##SUFFIX(T, T);                                                                                 \
  T ptxrt_fma_##MODE##_##SUFFIX(T, T, T);                                                                              \
  T ptxrt_sqrt_##MODE##_##SUFFIX(T);
PTXRT_REFERENCE(rz, float, f32)
PTXRT_REFERENCE(rm, float, f32)
PTXRT_REFERENCE(rp, float, f32)
PTXRT_REFERENCE(rz, double, f64)
PTXRT_REFERENCE(rm, double, f64)
PTXRT_REFERENCE(rp, double, f64)
#undef PTXRT_REFERENCE
}

namespace {

constexpr const char *Modes[] = {"rz", "rm", "rp"};
constexpr const char *Ops[] = {"add", "sub", "mul", "div", "fma", "sqrt", "rcp"};
constexpr unsigned NumOps = std::size(Ops), NumModes = std::size(Modes);

/// One kernel: thread i reads a[i], b[i], c[i] and writes every op in every mode to out[(i * modes + m) * ops + op].
/// Kernel `k(Params..., u32 n)` in blocks of 128 threads: %r1 is the thread's element, threads past n return.
std::string kernelPrologue(const std::string &Params) {
  return ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(" + Params +
         ", .param .u32 n)\n{\n .reg .pred %p;\n .reg .b32 %r<4>;\n .reg .f32 %f<5>;\n .reg .b64 %rd<10>;\n"
         " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mad.lo.u32 %r1, %r2, 128, %r1;\n"
         " ld.param.u32 %r3, [n];\n setp.ge.u32 %p, %r1, %r3;\n @%p ret;\n";
}

std::string kernelText() {
  std::string T = kernelPrologue(".param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 po") +
                  " ld.param.u64 %rd1, [pa];\n ld.param.u64 %rd2, [pb];\n ld.param.u64 %rd3, [pc];\n"
                  " ld.param.u64 %rd4, [po];\n mul.wide.u32 %rd5, %r1, 4;\n"
                  " add.u64 %rd6, %rd1, %rd5;\n ld.global.f32 %f1, [%rd6];\n"
                  " add.u64 %rd6, %rd2, %rd5;\n ld.global.f32 %f2, [%rd6];\n"
                  " add.u64 %rd6, %rd3, %rd5;\n ld.global.f32 %f3, [%rd6];\n" +
                  std::string(" mul.wide.u32 %rd7, %r1, ") + std::to_string(4 * NumOps * NumModes) +
                  ";\n add.u64 %rd8, %rd4, %rd7;\n";
  for (unsigned M = 0; M < NumModes; ++M)
    for (unsigned O = 0; O < NumOps; ++O) {
      std::string Op = Ops[O], Mode = Modes[M];
      std::string Args = Op == "fma" ? "%f1, %f2, %f3" : Op == "sqrt" || Op == "rcp" ? "%f1" : "%f1, %f2";
      T += " " + Op + "." + Mode + ".f32 %f4, " + Args + ";\n";
      T += " st.global.f32 [%rd8+" + std::to_string(4 * (M * NumOps + O)) + "], %f4;\n";
    }
  T += " ret;\n}\n";
  return T;
}

float reference(unsigned M, unsigned O, float A, float B, float C) {
  switch (M * NumOps + O) {
#define PTXRT_CASES(MODE, K)                                                                                           \
  case K *NumOps + 0:                                                                                                  \
    return ptxrt_add_##MODE##_f32(A, B);                                                                               \
  case K *NumOps + 1:                                                                                                  \
    return ptxrt_sub_##MODE##_f32(A, B);                                                                               \
  case K *NumOps + 2:                                                                                                  \
    return ptxrt_mul_##MODE##_f32(A, B);                                                                               \
  case K *NumOps + 3:                                                                                                  \
    return ptxrt_div_##MODE##_f32(A, B);                                                                               \
  case K *NumOps + 4:                                                                                                  \
    return ptxrt_fma_##MODE##_f32(A, B, C);                                                                            \
  case K *NumOps + 5:                                                                                                  \
    return ptxrt_sqrt_##MODE##_f32(A);                                                                                 \
  case K *NumOps + 6:                                                                                                  \
    return ptxrt_div_##MODE##_f32(1.0f, A);
    PTXRT_CASES(rz, 0)
    PTXRT_CASES(rm, 1)
    PTXRT_CASES(rp, 2)
#undef PTXRT_CASES
  }
  return NAN;
}

std::unique_ptr<codegen::CompiledModule> compile(const std::string &Text) {
  return testing::compileKernels("inline-math.ptx", Text);
}

void launch(const codegen::CompiledModule &M, std::vector<void *> Pointers, uint32_t N) {
  testing::launchOverN(M, Pointers, N);
}

std::vector<float> interestingFloats() {
  std::vector<float> V = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          1.5f,
                          3.0f,
                          0.1f,
                          FLT_MAX,
                          -FLT_MAX,
                          FLT_MIN,
                          -FLT_MIN,
                          FLT_TRUE_MIN,
                          -FLT_TRUE_MIN,
                          INFINITY,
                          -INFINITY,
                          NAN,
                          1.0f + FLT_EPSILON,
                          1.0f - FLT_EPSILON / 2,
                          16777216.0f,
                          16777217.0f,
                          3.4e38f,
                          1e-38f,
                          1e-45f,
                          7.0f,
                          1e20f,
                          1e-20f};
  return V;
}

} // namespace

TEST_CASE("directed-rounding f32 arithmetic is exact in every mode") {
  auto M = compile(kernelText());
  std::vector<float> A, B, C;
  std::vector<float> Edge = interestingFloats();
  for (float X : Edge)
    for (float Y : Edge) {
      A.push_back(X), B.push_back(Y), C.push_back(-X * Y); // exact-zero sums in fma
      A.push_back(X), B.push_back(Y), C.push_back(Y);
    }
  std::mt19937 Rng(2024);
  auto randomBits = [&] { return llvm::bit_cast<float>(static_cast<uint32_t>(Rng())); };
  std::uniform_real_distribution<float> Near(0.5f, 2.0f);
  for (int I = 0; I < 20000; ++I) {
    A.push_back(randomBits()), B.push_back(randomBits()), C.push_back(randomBits());
    // Operands of like magnitude, where sums cancel and products carry into the addend.
    float X = Near(Rng), Y = Near(Rng);
    A.push_back(X), B.push_back(-Y), C.push_back(X * Y * (I % 2 ? 1.0f : -1.0f));
  }
  uint32_t N = static_cast<uint32_t>(A.size());
  std::vector<float> Out(size_t(N) * NumOps * NumModes);
  launch(*M, {A.data(), B.data(), C.data(), Out.data()}, N);
  unsigned Mismatches = 0;
  for (uint32_t I = 0; I < N; ++I)
    for (unsigned Mo = 0; Mo < NumModes; ++Mo)
      for (unsigned O = 0; O < NumOps; ++O) {
        float Got = Out[(size_t(I) * NumModes + Mo) * NumOps + O];
        float Want = reference(Mo, O, A[I], B[I], C[I]);
        bool Same =
            std::isnan(Want) ? std::isnan(Got) : llvm::bit_cast<uint32_t>(Got) == llvm::bit_cast<uint32_t>(Want);
        if (!Same && Mismatches++ < 10)
          FAIL_CHECK(Ops[O] << "." << Modes[Mo] << "(" << A[I] << ", " << B[I] << ", " << C[I] << "): got " << Got
                            << " (0x" << std::hex << llvm::bit_cast<uint32_t>(Got) << "), want " << Want << " (0x"
                            << llvm::bit_cast<uint32_t>(Want) << std::dec << ")");
      }
  CHECK(Mismatches == 0);
}

/// Runs `OP.f32 %f2, %f1` over X, one thread per element.
std::vector<float> runUnary(const std::string &Op, const std::vector<float> &X) {
  std::string T = kernelPrologue(".param .u64 pa, .param .u64 pb") +
                  " ld.param.u64 %rd1, [pa];\n ld.param.u64 %rd2, [pb];\n mul.wide.u32 %rd3, %r1, 4;\n"
                  " add.u64 %rd4, %rd1, %rd3;\n ld.global.f32 %f1, [%rd4];\n " +
                  Op + ".f32 %f2, %f1;\n add.u64 %rd5, %rd2, %rd3;\n st.global.f32 [%rd5], %f2;\n ret;\n}\n";
  auto M = compile(T);
  std::vector<float> In = X, Out(X.size());
  launch(*M, {In.data(), Out.data()}, static_cast<uint32_t>(X.size()));
  return Out;
}

/// Checks Got against the correctly rounded Want: specials exactly, subnormals within one step, the rest
/// within MaxUlp.
unsigned countOutsideUlp(const std::vector<float> &X, const std::vector<float> &Got, const std::vector<float> &Want,
                         unsigned MaxUlp, const char *What) {
  unsigned Bad = 0;
  for (size_t I = 0; I < X.size(); ++I) {
    bool Ok;
    if (std::isnan(Want[I]) || std::isinf(Want[I]) || Want[I] == 0.0f)
      Ok = std::isnan(Want[I]) ? std::isnan(Got[I]) : Got[I] == Want[I];
    else if (std::fabs(Want[I]) < FLT_MIN)
      Ok = std::fabs(Got[I] - Want[I]) <= FLT_TRUE_MIN;
    else
      Ok = std::abs(int64_t(llvm::bit_cast<uint32_t>(Got[I])) - int64_t(llvm::bit_cast<uint32_t>(Want[I]))) <= MaxUlp;
    if (!Ok && Bad++ < 10)
      FAIL_CHECK(What << "(" << X[I] << ") = " << Got[I] << ", want " << Want[I]);
  }
  return Bad;
}

namespace {
/// Op(A, B, C) with the host FPU switched to Mode: the operands and the result pass through volatiles, so the
/// operation stays between the two switches without -frounding-math.
template <typename T, typename F> T underMode(int Mode, T A, T B, T C, F Op) {
  volatile T VA = A, VB = B, VC = C, R;
  int Old = std::fegetround();
  std::fesetround(Mode);
  R = Op(VA, VB, VC);
  std::fesetround(Old);
  return R;
}

/// The helpers of one type in one mode against the switched FPU, bit for bit, on Values taken three at a time.
template <typename T, typename U> void checkDirectedHelpers(int Mode, const std::vector<T> &Values, T (*Add)(T, T),
                                                            T (*Sub)(T, T), T (*Mul)(T, T), T (*Div)(T, T),
                                                            T (*Fma)(T, T, T), T (*Sqrt)(T)) {
  auto same = [](T X, T Y) { return llvm::bit_cast<U>(X) == llvm::bit_cast<U>(Y); };
  for (size_t I = 0; I + 2 < Values.size(); ++I) {
    T A = Values[I], B = Values[I + 1], C = Values[I + 2];
    CAPTURE(A);
    CAPTURE(B);
    CAPTURE(C);
    CHECK(same(Add(A, B), underMode(Mode, A, B, C, [](T X, T Y, T) { return X + Y; })));
    CHECK(same(Sub(A, B), underMode(Mode, A, B, C, [](T X, T Y, T) { return X - Y; })));
    CHECK(same(Mul(A, B), underMode(Mode, A, B, C, [](T X, T Y, T) { return X * Y; })));
    CHECK(same(Div(A, B), underMode(Mode, A, B, C, [](T X, T Y, T) { return X / Y; })));
    CHECK(same(Fma(A, B, C), underMode(Mode, A, B, C, [](T X, T Y, T Z) { return std::fma(X, Y, Z); })));
    CHECK(same(Sqrt(A), underMode(Mode, A, B, C, [](T X, T, T) { return std::sqrt(X); })));
  }
}
} // namespace

// Where the CPU has AVX-512 the runtime's directed-rounding helpers round in the instruction (embedded rounding)
// instead of switching the FPU: both must give the same bits, NaNs included.
TEST_CASE("directed-rounding helpers match the FPU switched to the same mode") {
  std::mt19937_64 Rng(20);
  std::vector<double> Doubles = {1.0,       3.0,       -1.0,          0.1,      -0.0,           0.0,
                                 1e308,     -1e308,    4.9e-324,      -4.9e-324, 0x1p-1022,     INFINITY,
                                 -INFINITY, NAN,       1.0 + 0x1p-52, 0x1p-1074, 7.0,           1e-300};
  std::vector<float> Floats = {1.0f, 3.0f, -1.0f, 0.1f, -0.0f, 0.0f, 3e38f, -3e38f, 1.4e-45f, 1.17549435e-38f,
                               INFINITY, -INFINITY, NAN, 1.0f + 0x1p-23f, 7.0f};
  for (int I = 0; I < 3000; ++I) {
    Doubles.push_back(llvm::bit_cast<double>(Rng()));
    Floats.push_back(llvm::bit_cast<float>(static_cast<uint32_t>(Rng())));
  }
  checkDirectedHelpers<double, uint64_t>(FE_TOWARDZERO, Doubles, ptxrt_add_rz_f64, ptxrt_sub_rz_f64, ptxrt_mul_rz_f64,
                                         ptxrt_div_rz_f64, ptxrt_fma_rz_f64, ptxrt_sqrt_rz_f64);
  checkDirectedHelpers<double, uint64_t>(FE_DOWNWARD, Doubles, ptxrt_add_rm_f64, ptxrt_sub_rm_f64, ptxrt_mul_rm_f64,
                                         ptxrt_div_rm_f64, ptxrt_fma_rm_f64, ptxrt_sqrt_rm_f64);
  checkDirectedHelpers<double, uint64_t>(FE_UPWARD, Doubles, ptxrt_add_rp_f64, ptxrt_sub_rp_f64, ptxrt_mul_rp_f64,
                                         ptxrt_div_rp_f64, ptxrt_fma_rp_f64, ptxrt_sqrt_rp_f64);
  checkDirectedHelpers<float, uint32_t>(FE_TOWARDZERO, Floats, ptxrt_add_rz_f32, ptxrt_sub_rz_f32, ptxrt_mul_rz_f32,
                                        ptxrt_div_rz_f32, ptxrt_fma_rz_f32, ptxrt_sqrt_rz_f32);
  checkDirectedHelpers<float, uint32_t>(FE_DOWNWARD, Floats, ptxrt_add_rm_f32, ptxrt_sub_rm_f32, ptxrt_mul_rm_f32,
                                        ptxrt_div_rm_f32, ptxrt_fma_rm_f32, ptxrt_sqrt_rm_f32);
  checkDirectedHelpers<float, uint32_t>(FE_UPWARD, Floats, ptxrt_add_rp_f32, ptxrt_sub_rp_f32, ptxrt_mul_rp_f32,
                                        ptxrt_div_rp_f32, ptxrt_fma_rp_f32, ptxrt_sqrt_rp_f32);
}

TEST_CASE("ex2.approx.f32 stays within 2 ulp of 2^x") {
  std::vector<float> X = {0.0f,    -0.0f,   1.0f,    -1.0f,   0.5f,    127.0f,   127.99f,   128.0f, 200.0f, -126.0f,
                          -130.5f, -149.0f, -149.5f, -150.0f, -151.0f, INFINITY, -INFINITY, NAN,    1e-30f, -1e-30f};
  std::mt19937 Rng(7);
  std::uniform_real_distribution<float> Range(-152.0f, 130.0f);
  for (int I = 0; I < 200000; ++I)
    X.push_back(Range(Rng));
  std::vector<float> Want;
  for (float V : X)
    Want.push_back(static_cast<float>(std::exp2(static_cast<double>(V))));
  CHECK(countOutsideUlp(X, runUnary("ex2.approx", X), Want, 2, "ex2") == 0);
}

TEST_CASE("rsqrt.approx.f32 stays within the PTX bound (2^-22.9 relative: 2 ulp) of 1/sqrt(x)") {
  std::vector<float> X = {0.0f,    -0.0f,        1.0f,   4.0f,   2.0f,    -1.0f, INFINITY, -INFINITY, NAN,
                          FLT_MIN, FLT_TRUE_MIN, 1e-40f, 3e-39f, FLT_MAX, 1e30f, 1e-30f,   0.25f,     1.5f};
  std::mt19937 Rng(11);
  for (int I = 0; I < 200000; ++I) // every binade, positive
    X.push_back(llvm::bit_cast<float>(static_cast<uint32_t>(Rng()) & 0x7fffffffu));
  std::vector<float> Want;
  for (float V : X)
    Want.push_back(static_cast<float>(1.0 / std::sqrt(static_cast<double>(V))));
  CHECK(countOutsideUlp(X, runUnary("rsqrt.approx", X), Want, 2, "rsqrt") == 0);
}
