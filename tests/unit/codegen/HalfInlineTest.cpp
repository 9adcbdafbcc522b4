// f16/bf16 arithmetic, min/max, neg/abs and f32/f64 -> f16/bf16 conversions to nearest are lowered to plain IR
// (lower/HalfOps.cpp). These tests run every form and flag combination through the JIT over edge cases and
// random bit patterns and compare the bits with the runtime helpers (exec/HalfMath.cpp), whose exact rounding
// from double is the GPU-checked reference (and which the directed modes still use).
#include "KernelRunner.h"
#include "ptxforge/codegen/CompiledModule.h"
#include "ptxforge/codegen/Launch.h"
#include "ptxforge/ptx/Frontend.h"

#include "../lib/lower/HalfCode.h"

#include <doctest/doctest.h>

#include "llvm/ADT/bit.h"
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace ptxforge;
using namespace ptxforge::codegen::halfcode;

extern "C" uint32_t ptxrt_half_op(uint32_t Code, uint32_t A, uint32_t B, uint32_t C);
extern "C" uint32_t ptxrt_cvt_narrow_f64(uint32_t Code, double X);

namespace {

/// One instruction of the test kernels and the helper code word that computes the same.
struct Form {
  std::string Ptx; ///< without operands
  uint32_t Code;
  unsigned Inputs;
};

std::vector<Form> forms(bool X2) {
  std::vector<Form> Out;
  for (uint32_t Fmt : {FmtF16, FmtBF16}) {
    std::string T = std::string(Fmt == FmtF16 ? "f16" : "bf16") + (X2 ? "x2" : "");
    uint32_t Lanes = X2 ? FlagX2 : 0;
    auto add = [&](const std::string &Ptx, uint32_t Op, uint32_t Flags, unsigned Inputs) {
      Out.push_back({Ptx + "." + T, code(Op, Fmt, ModeRN, Flags | Lanes), Inputs});
    };
    bool F16 = Fmt == FmtF16;
    for (auto [Name, Op] : {std::pair{"add", OpAdd}, {"sub", OpSub}, {"mul", OpMul}}) {
      add(std::string(Name) + ".rn", Op, 0, 2);
      if (F16) {
        add(std::string(Name) + ".rn.ftz", Op, FlagFtz, 2);
        add(std::string(Name) + ".rn.sat", Op, FlagSat, 2);
        add(std::string(Name) + ".rn.ftz.sat", Op, FlagFtz | FlagSat, 2);
      }
    }
    add("fma.rn", OpFma, 0, 3);
    add("fma.rn.relu", OpFma, FlagRelu, 3);
    if (F16) {
      add("fma.rn.ftz", OpFma, FlagFtz, 3);
      add("fma.rn.sat", OpFma, FlagSat, 3);
      add("fma.rn.ftz.sat", OpFma, FlagFtz | FlagSat, 3);
      add("fma.rn.ftz.relu", OpFma, FlagFtz | FlagRelu, 3);
    }
    for (auto [Name, Op] : {std::pair{"min", OpMin}, {"max", OpMax}}) {
      std::string N = Name;
      add(N, Op, 0, 2);
      add(N + ".NaN", Op, FlagNaN, 2);
      add(N + ".xorsign.abs", Op, FlagXorsignAbs, 2);
      add(N + ".NaN.xorsign.abs", Op, FlagNaN | FlagXorsignAbs, 2);
      if (F16) {
        add(N + ".ftz", Op, FlagFtz, 2);
        add(N + ".ftz.NaN", Op, FlagFtz | FlagNaN, 2);
      } else {
        add(N + ".relu", Op, FlagRelu, 2);
      }
    }
    add("neg", OpNeg, 0, 1);
    add("abs", OpAbs, 0, 1);
    if (F16) {
      add("neg.ftz", OpNeg, FlagFtz, 1);
      add("abs.ftz", OpAbs, FlagFtz, 1);
    }
  }
  return Out;
}

std::unique_ptr<codegen::CompiledModule> compile(const std::string &Text) {
  return testing::compileKernels("half-inline.ptx", Text);
}

void launch(const codegen::CompiledModule &M, std::vector<void *> Pointers, uint32_t N) {
  testing::launchOverN(M, Pointers, N);
}

/// A kernel: thread i loads element i of the three inputs (InReg registers, InBytes each) into %in1..3, runs
/// every instruction of Body (each writes %x5, a Reg register of Bytes) and stores the results one after another.
std::string kernel(const std::string &Reg, unsigned Bytes, const std::vector<std::string> &Body, unsigned InBytes,
                   const std::string &InReg) {
  std::string T = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 pa, .param .u64 pb, "
                  ".param .u64 pc, .param .u64 po, .param .u32 n)\n{\n .reg .pred %p;\n .reg .b32 %r<4>;\n .reg " +
                  Reg + " %x<6>;\n .reg " + InReg +
                  " %in<4>;\n .reg .b64 %rd<10>;\n"
                  " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mad.lo.u32 %r1, %r2, 128, %r1;\n"
                  " ld.param.u32 %r3, [n];\n setp.ge.u32 %p, %r1, %r3;\n @%p ret;\n"
                  " ld.param.u64 %rd1, [pa];\n ld.param.u64 %rd2, [pb];\n ld.param.u64 %rd3, [pc];\n"
                  " ld.param.u64 %rd4, [po];\n mul.wide.u32 %rd5, %r1, " +
                  std::to_string(InBytes) + ";\n";
  for (int K = 1; K <= 3; ++K)
    T += " add.u64 %rd6, %rd" + std::to_string(K) + ", %rd5;\n ld.global" + InReg + " %in" + std::to_string(K) +
         ", [%rd6];\n";
  T += " mul.wide.u32 %rd7, %r1, " + std::to_string(Bytes * Body.size()) + ";\n add.u64 %rd8, %rd4, %rd7;\n";
  for (size_t I = 0; I < Body.size(); ++I)
    T += " " + Body[I] + "\n st.global" + Reg + " [%rd8+" + std::to_string(Bytes * I) + "], %x5;\n";
  return T + " ret;\n}\n";
}

/// Operand patterns: every sign of zero, subnormal, normal, largest, infinity and NaN edge of both formats, and
/// values around 1 and the rounding boundaries.
std::vector<uint16_t> edges() {
  std::vector<uint16_t> V = {0x0000, 0x0001, 0x0002, 0x01ff, 0x03ff, 0x0400, 0x0401, 0x3555, 0x3bff,
                             0x3c00, 0x3c01, 0x3e00, 0x4000, 0x5bff, 0x7bfe, 0x7bff, 0x7c00, 0x7c01,
                             0x7e00, 0x7fff, 0x007f, 0x0080, 0x0081, 0x3f80, 0x3f81, 0x3fff, 0x7f7f,
                             0x7f80, 0x7f81, 0x7fc0, 0x1400, 0x1000, 0x0c00, 0x2000};
  size_t N = V.size();
  for (size_t I = 0; I < N; ++I)
    V.push_back(V[I] | 0x8000);
  return V;
}

/// Inputs for the 16-bit lanes: all pairs of edges (with the third operand cancelling or not), random patterns,
/// and operands of like magnitude whose fma products meet the addend.
void inputs(std::vector<uint16_t> &A, std::vector<uint16_t> &B, std::vector<uint16_t> &C) {
  std::vector<uint16_t> E = edges();
  std::mt19937 Rng(16);
  for (uint16_t X : E)
    for (uint16_t Y : E) {
      A.push_back(X), B.push_back(Y), C.push_back(E[Rng() % E.size()]);
      A.push_back(X), B.push_back(Y), C.push_back(static_cast<uint16_t>(Rng()));
    }
  for (int I = 0; I < 40000; ++I) {
    A.push_back(static_cast<uint16_t>(Rng())), B.push_back(static_cast<uint16_t>(Rng()));
    C.push_back(static_cast<uint16_t>(Rng()));
    // Like magnitudes: exponent fields near the middle of either format, signs mixed.
    uint16_t Mid = static_cast<uint16_t>((Rng() & 0x83ff) | (0x3800 + (Rng() % 5) * 0x400));
    uint16_t MidB = static_cast<uint16_t>((Rng() & 0x807f) | (0x3e80 + (Rng() % 4) * 0x80));
    A.push_back(Mid), B.push_back(Mid ^ 0x8000), C.push_back(static_cast<uint16_t>((Rng() & 0x83ff) | 0x3c00));
    A.push_back(MidB), B.push_back(MidB), C.push_back(static_cast<uint16_t>((Rng() & 0x807f) | 0xbf80));
    // bf16 products around bf16's smallest subnormal (2^-133), where a product rounded to f32 could round twice:
    // exponent fields summing to 127 - 134 + 127 within 10.
    uint32_t EA = 1 + Rng() % 118, EB = 120 - EA + Rng() % 21 - 10;
    if (EB >= 1 && EB <= 254) {
      A.push_back(static_cast<uint16_t>((Rng() & 0x807f) | (EA << 7)));
      B.push_back(static_cast<uint16_t>((Rng() & 0x807f) | (EB << 7)));
      C.push_back(static_cast<uint16_t>(Rng() & 0x807f));
    }
  }
}

std::string hex(uint32_t V) {
  char Buf[16];
  std::snprintf(Buf, sizeof Buf, "0x%x", V);
  return Buf;
}

} // namespace

TEST_CASE("inline f16/bf16 arithmetic gives the runtime helper's bits for every form and flag") {
  for (bool X2 : {false, true}) {
    std::vector<Form> F = forms(X2);
    std::vector<std::string> Body;
    for (const Form &Fm : F) {
      std::string Ops = Fm.Inputs == 1 ? "%in1" : Fm.Inputs == 2 ? "%in1, %in2" : "%in1, %in2, %in3";
      Body.push_back(Fm.Ptx + " %x5, " + Ops + ";");
    }
    auto M = compile(X2 ? kernel(".b32", 4, Body, 4, ".b32") : kernel(".b16", 2, Body, 2, ".b16"));
    std::vector<uint16_t> A16, B16, C16;
    inputs(A16, B16, C16);
    std::vector<uint32_t> A, B, C; // x2: the pattern in both lanes, differently paired
    size_t N = A16.size();
    for (size_t I = 0; I < N; ++I) {
      auto pack = [&](const std::vector<uint16_t> &V) {
        return uint32_t(V[I]) | uint32_t(V[(I * 7919 + 1) % N]) << 16;
      };
      A.push_back(X2 ? pack(A16) : A16[I]), B.push_back(X2 ? pack(B16) : B16[I]), C.push_back(X2 ? pack(C16) : C16[I]);
    }
    std::vector<uint16_t> In16[3] = {A16, B16, C16};
    std::vector<uint32_t> Out32(N * F.size());
    std::vector<uint16_t> Out16(N * F.size());
    if (X2)
      launch(*M, {A.data(), B.data(), C.data(), Out32.data()}, static_cast<uint32_t>(N));
    else
      launch(*M, {In16[0].data(), In16[1].data(), In16[2].data(), Out16.data()}, static_cast<uint32_t>(N));
    unsigned Mismatches = 0;
    for (size_t I = 0; I < N; ++I)
      for (size_t K = 0; K < F.size(); ++K) {
        uint32_t Got = X2 ? Out32[I * F.size() + K] : Out16[I * F.size() + K];
        uint32_t Want = ptxrt_half_op(F[K].Code, A[I], F[K].Inputs > 1 ? B[I] : 0, F[K].Inputs > 2 ? C[I] : 0);
        if (!X2)
          Want &= 0xffff;
        if (Got != Want && Mismatches++ < 12)
          FAIL_CHECK(F[K].Ptx << "(" << hex(A[I]) << ", " << hex(B[I]) << ", " << hex(C[I]) << "): got " << hex(Got)
                              << ", want " << hex(Want));
      }
    CHECK(Mismatches == 0);
  }
}

TEST_CASE("inline f32/f64 to f16/bf16 conversions give the runtime helper's bits") {
  struct Cvt {
    std::string Ptx;
    uint32_t Code;
    bool FromF64;
  };
  std::vector<Cvt> Forms;
  for (uint32_t Fmt : {FmtF16, FmtBF16}) {
    std::string T = Fmt == FmtF16 ? ".f16" : ".bf16";
    Forms.push_back({"cvt.rn" + T + ".f32", code(0, Fmt, ModeRN, 0), false});
    Forms.push_back({"cvt.rn.relu" + T + ".f32", code(0, Fmt, ModeRN, FlagRelu), false});
    Forms.push_back({"cvt.rn" + T + ".f64", code(0, Fmt, ModeRN, 0), true});
  }
  Forms.push_back({"cvt.rn.sat.f16.f32", code(0, FmtF16, ModeRN, FlagSat), false});
  Forms.push_back({"cvt.rn.sat.f16.f64", code(0, FmtF16, ModeRN, FlagSat), true});
  std::vector<std::string> Body;
  for (const Cvt &C : Forms)
    Body.push_back(C.Ptx + " %x5, " + (C.FromF64 ? "%d1;" : "%in1;"));
  // The f64 source: the f32 input a plus b * 2^-24 (b = a * r, |r| <= 1: below a's f32 precision).
  std::string Text = kernel(".b16", 2, Body, 4, ".f32");
  Text.replace(Text.find(" .reg .b64"), 0, " .reg .f64 %d<3>;\n");
  Text.replace(Text.find(" mul.wide.u32 %rd7"), 0,
               " cvt.f64.f32 %d1, %in1;\n cvt.f64.f32 %d2, %in2;\n"
               " fma.rn.f64 %d1, %d2, 0d3E70000000000000, %d1;\n");
  auto M = compile(Text);
  std::vector<float> A, B, C;
  std::mt19937 Rng(32);
  std::vector<float> Edge = {0.0f,
                             1.0f,
                             65504.0f,
                             65519.99f,
                             65520.0f,
                             6.1035156e-05f,
                             5.9604645e-08f,
                             2.9802322e-08f,
                             2.98023259e-08f,
                             1.0009766f,
                             1.00048828125f,
                             3.3895314e38f,
                             3.4028235e38f,
                             1.1754944e-38f,
                             9.1835e-41f,
                             1e-45f,
                             INFINITY,
                             NAN,
                             0.5f,
                             1.5f};
  for (float X : Edge)
    for (float S : {1.0f, -1.0f})
      for (float Nudge : {0.0f, 1.0f, -1.0f, 0.5f})
        A.push_back(X * S), B.push_back(X * S * Nudge), C.push_back(0);
  for (int I = 0; I < 100000; ++I) {
    float X = llvm::bit_cast<float>(static_cast<uint32_t>(Rng()));
    // Mostly within f16's range, where the rounding happens, and all over f32's for bf16.
    if (I % 2)
      X = std::ldexp(1.0f + (Rng() % 8192) / 8192.0f, static_cast<int>(Rng() % 44) - 28) * (Rng() % 2 ? 1 : -1);
    float Nudge = static_cast<float>(static_cast<int>(Rng() % 2001) - 1000) / 1000.0f;
    A.push_back(X), B.push_back(X * Nudge), C.push_back(0);
  }
  uint32_t N = static_cast<uint32_t>(A.size());
  std::vector<uint16_t> Out(size_t(N) * Forms.size());
  launch(*M, {A.data(), B.data(), C.data(), Out.data()}, N);
  unsigned Mismatches = 0;
  for (uint32_t I = 0; I < N; ++I)
    for (size_t K = 0; K < Forms.size(); ++K) {
      double Src = Forms[K].FromF64 ? std::fma(double(B[I]), 0x1p-24, double(A[I])) : double(A[I]);
      uint32_t Want = ptxrt_cvt_narrow_f64(Forms[K].Code, Src) & 0xffff;
      uint32_t Got = Out[size_t(I) * Forms.size() + K];
      if (Got != Want && Mismatches++ < 12)
        FAIL_CHECK(Forms[K].Ptx << "(" << Src << "): got " << hex(Got) << ", want " << hex(Want));
    }
  CHECK(Mismatches == 0);
}
