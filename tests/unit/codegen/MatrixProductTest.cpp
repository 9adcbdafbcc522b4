// The warp matrix product's arithmetic (exec/MatrixProduct.cpp) against a scalar reference of its contract: each
// D element is ((C + a0 b0) + a1 b1) + ... in double, every product rounded before its sum unless it is exact.
// The vectorized kernels must give the same bits for every shape the mma and wmma instructions have.
#include "MatrixProduct.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

namespace {

struct Shape {
  unsigned M, N, K;
};

// mma.sync m16n8k{4,8,16,32,64}, m8n8k4 (f64); wmma m16n16k16, m32n8k16, m8n32k16, m16n16k8.
constexpr Shape Shapes[] = {{16, 8, 4}, {16, 8, 8},   {16, 8, 16}, {16, 8, 32}, {16, 8, 64},
                            {8, 8, 4},  {16, 16, 16}, {32, 8, 16}, {8, 32, 16}, {16, 16, 8}};

std::vector<double> reference(const Shape &S, const std::vector<double> &A, const std::vector<double> &B,
                              const std::vector<double> &C) {
  std::vector<double> D(C);
  for (unsigned I = 0; I < S.M; ++I)
    for (unsigned J = 0; J < S.N; ++J)
      for (unsigned K = 0; K < S.K; ++K) {
        volatile double P = A[I * S.K + K] * B[K * S.N + J]; // rounded on its own, whatever the compiler's contraction
        D[I * S.N + J] += P;
      }
  return D;
}

bool sameBits(const std::vector<double> &X, const std::vector<double> &Y) {
  return X.size() == Y.size() && memcmp(X.data(), Y.data(), X.size() * sizeof(double)) == 0;
}

} // namespace

TEST_CASE("matrix products of doubles round each product before its sum, in k order") {
  std::mt19937_64 Rng(7);
  std::uniform_real_distribution<double> Dist(-3, 3);
  for (const Shape &S : Shapes) {
    CAPTURE(S.M);
    CAPTURE(S.N);
    CAPTURE(S.K);
    std::vector<double> A(S.M * S.K), B(S.K * S.N), C(S.M * S.N), D(S.M * S.N);
    for (double &V : A)
      V = Dist(Rng);
    for (double &V : B)
      V = Dist(Rng);
    for (double &V : C)
      V = Dist(Rng);
    multiplyMatrices(S.M, S.N, S.K, A.data(), B.data(), C.data(), D.data(), /*ExactProducts=*/false);
    CHECK(sameBits(D, reference(S, A, B, C)));
    // In place (D is C), as the callers may do.
    std::vector<double> InPlace(C);
    multiplyMatrices(S.M, S.N, S.K, A.data(), B.data(), InPlace.data(), InPlace.data(), false);
    CHECK(sameBits(InPlace, D));
  }
}

TEST_CASE("matrix products of exact products sum them as the reference does") {
  // f16-like inputs: 11-bit significands, so every product is exact in double and fused multiply-adds may stand
  // for multiply and add; the sums still round in k order.
  std::mt19937_64 Rng(11);
  std::uniform_int_distribution<int> Mant(-2047, 2047), Exp(-20, 4);
  auto value = [&] { return std::ldexp(static_cast<double>(Mant(Rng)), Exp(Rng)); };
  for (const Shape &S : Shapes) {
    CAPTURE(S.M);
    CAPTURE(S.N);
    CAPTURE(S.K);
    std::vector<double> A(S.M * S.K), B(S.K * S.N), C(S.M * S.N), D(S.M * S.N);
    for (double &V : A)
      V = value();
    for (double &V : B)
      V = value();
    for (double &V : C)
      V = value() * 1e-3;
    multiplyMatrices(S.M, S.N, S.K, A.data(), B.data(), C.data(), D.data(), /*ExactProducts=*/true);
    CHECK(sameBits(D, reference(S, A, B, C)));
  }
}

TEST_CASE("fragment elements decode exactly") {
  uint16_t Halves[] = {0x3c00, 0x0001, 0x8400, 0x7bff, 0x03ff, 0xc000, 0x0000, 0x8000, 0x3555};
  double Out[9];
  REQUIRE(decodeElements(MEF16, Halves, 9, Out));
  CHECK(Out[0] == 1.0);
  CHECK(Out[1] == std::ldexp(1.0, -24)); // subnormal
  CHECK(Out[2] == -std::ldexp(1.0, -14));
  CHECK(Out[3] == 65504.0);
  CHECK(Out[4] == std::ldexp(1023.0, -24));
  CHECK(Out[5] == -2.0);
  CHECK(std::signbit(Out[7]));
  uint32_t Tf32 = 0x3f800000u | 0x1fffu; // tf32 ignores the low 13 bits
  REQUIRE(decodeElements(METF32, &Tf32, 1, Out));
  CHECK(Out[0] == 1.0);
  uint16_t Bf16 = 0xc040;
  REQUIRE(decodeElements(MEBF16, &Bf16, 1, Out));
  CHECK(Out[0] == -3.0);
  unsigned char Bytes[19];
  double Wide[19];
  for (unsigned I = 0; I < 19; ++I)
    Bytes[I] = static_cast<unsigned char>(I * 37 + 100);
  for (uint32_t T : {MES8, MEU8}) { // 8 at a time and the tail
    REQUIRE(decodeElements(T, Bytes, 19, Wide));
    for (unsigned I = 0; I < 19; ++I)
      CHECK(Wide[I] == (T == MES8 ? static_cast<double>(static_cast<int8_t>(Bytes[I])) : Bytes[I]));
  }
  uint32_t Words[3] = {}, Src[3] = {1, 2, 3};
  copyWords(Words, Src, 2);
  CHECK(Words[0] == 1);
  CHECK(Words[1] == 2);
  CHECK(Words[2] == 0); // no byte past the count
  double Ds[] = {1.0 + std::ldexp(1.0, -24), -0.1};
  uint32_t F[2];
  doublesToF32(Ds, 2, F);
  float G = -0.1f;
  uint32_t GBits;
  memcpy(&GBits, &G, 4);
  CHECK(F[0] == 0x3f800000u); // ties to even
  CHECK(F[1] == GBits);
}

TEST_CASE("bf16 fragments decode 8 at a time and in the tail alike") {
  uint16_t In[19];
  double Out[19];
  for (unsigned I = 0; I < 19; ++I)
    In[I] = static_cast<uint16_t>(0x3f80 + I * 0x0731); // normals, both signs, an infinity's neighbours
  REQUIRE(decodeElements(MEBF16, In, 19, Out));
  for (unsigned I = 0; I < 19; ++I) {
    uint32_t Bits = static_cast<uint32_t>(In[I]) << 16;
    float F;
    memcpy(&F, &Bits, 4);
    CAPTURE(I);
    CHECK(std::memcmp(&Out[I], &static_cast<const double &>(static_cast<double>(F)), 8) == 0);
  }
}

TEST_CASE("sums round to f32 in place, as the doubles of their f32s") {
  double Sums[21], Vals[21];
  for (unsigned I = 0; I < 21; ++I)
    Sums[I] = Vals[I] = (I % 2 ? -1.0 : 1.0) * (1.0 + std::ldexp(static_cast<double>(I), -30)) * std::ldexp(1.0, I);
  roundToF32(Vals, 21); // 8 at a time and the tail
  for (unsigned I = 0; I < 21; ++I) {
    CAPTURE(I);
    CHECK(Vals[I] == static_cast<double>(static_cast<float>(Sums[I])));
  }
}

TEST_CASE("matrices transpose in 8 x 8 blocks and in any other shape") {
  for (Shape S : {Shape{16, 16, 0}, Shape{8, 16, 0}, Shape{16, 8, 0}, Shape{4, 8, 0}, Shape{32, 8, 0}}) {
    CAPTURE(S.M);
    CAPTURE(S.N);
    std::vector<double> In(S.M * S.N), Out(S.M * S.N, -1);
    for (unsigned I = 0; I < In.size(); ++I)
      In[I] = I;
    transposeMatrix(In.data(), S.M, S.N, Out.data());
    for (unsigned R = 0; R < S.M; ++R)
      for (unsigned C = 0; C < S.N; ++C)
        CHECK(Out[C * S.M + R] == In[R * S.N + C]);
  }
}

TEST_CASE("column runs in memory read into row-major order, f64 m8n8k4's B and any other shape") {
  struct Shape {
    unsigned Lines, Len;
  };
  for (Shape S : {Shape{8, 4}, Shape{4, 8}, Shape{3, 5}}) {
    // Columns 104 bytes apart (a skewed shared-memory tile: not a multiple of the vector), each run of Len doubles.
    constexpr uint64_t LineBytes = 13 * 8;
    std::vector<double> Memory(S.Lines * LineBytes / 8 + S.Len, -2), Out(S.Lines * S.Len, -1);
    for (unsigned J = 0; J < S.Lines; ++J)
      for (unsigned K = 0; K < S.Len; ++K)
        Memory[J * LineBytes / 8 + K] = 100 * J + K;
    transposeLines(reinterpret_cast<const char *>(Memory.data()), LineBytes, S.Lines, S.Len, Out.data());
    for (unsigned K = 0; K < S.Len; ++K)
      for (unsigned J = 0; J < S.Lines; ++J)
        CHECK(Out[K * S.Lines + J] == 100 * J + K);
  }
}
