// Inline forms of the .approx instructions that hot kernels use (ex2.approx.f32: CUDA's expf is built on it;
// rsqrt.approx.f32: n-body codes). A libm call per element keeps the loop around it scalar, and an exact
// 1/sqrt(x) costs a square root and a division of long latency and low throughput; these forms vectorize and
// stay within the PTX ISA's bounds (ex2: 2 ulp; rsqrt: 2^-22.9 relative).
#include "FamilyLowering.h"

#include <iterator>

llvm::Value *ptxforge::codegen::detail::exp2ApproxF32(FunctionLowering &L, llvm::Value *X) {
  auto &B = L.b();
  llvm::Type *F = X->getType(), *I32 = B.getInt32Ty();
  auto c = [&](double V) { return llvm::ConstantFP::get(F, V); };
  // Beyond [-150, 128] the result is 0 or infinity; clamping first keeps the integer part in range.
  llvm::Value *Xc = B.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum,
                                            B.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, X, c(128.0)), c(-150.0));
  llvm::Value *N = B.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, Xc);
  llvm::Value *Fr = B.CreateFSub(Xc, N); // exact, in [-0.5, 0.5]
  // 2^f = e^(f ln 2): Taylor to degree 7, relative error below 2^-27 on [-0.5, 0.5].
  static const double Coeff[] = {
      1.525273380405984e-05, 1.5403530393381606e-04, 1.3333558146428443e-03, 9.618129107628477e-03,
      5.550410866482158e-02, 2.402265069591007e-01,  6.931471805599453e-01,  1.0};
  llvm::Value *P = c(Coeff[0]);
  for (unsigned K = 1; K < std::size(Coeff); ++K)
    P = B.CreateIntrinsic(llvm::Intrinsic::fma, {F}, {P, Fr, c(Coeff[K])});
  // 2^n as two normal powers of two (n in [-150, 128]), so subnormal results round once, in the last product.
  llvm::Value *Ni = B.CreateFPToSI(N, I32);
  llvm::Value *N1 = B.CreateAShr(Ni, 1), *N2 = B.CreateSub(Ni, B.CreateAShr(Ni, 1));
  auto pow2 = [&](llvm::Value *E) { return B.CreateBitCast(B.CreateShl(B.CreateAdd(E, B.getInt32(127)), 23), F); };
  llvm::Value *R = B.CreateFMul(B.CreateFMul(P, pow2(N1)), pow2(N2));
  return B.CreateSelect(B.CreateFCmpUNO(X, X), X, R);
}

llvm::Value *ptxforge::codegen::detail::rsqrtApproxF32(FunctionLowering &L, llvm::Value *X) {
  auto &B = L.b();
  llvm::Type *F = X->getType();
  auto c = [&](double V) { return llvm::ConstantFP::get(F, V); };
  // 1/sqrt with approximation flags: the x86 backend emits the hardware estimate (rsqrt14 / rsqrt) refined by
  // Newton-Raphson steps, as many as optimizeModule's "reciprocal-estimates" asks for. The estimate flushes
  // subnormal inputs and the refinement turns 0 and infinity into NaN, so those are scaled or selected.
  llvm::Value *Small = B.CreateFCmpOLT(B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, X), c(0x1p-126));
  llvm::Value *Xs = B.CreateSelect(Small, B.CreateFMul(X, c(0x1p24)), X);
  llvm::FastMathFlags Approx;
  Approx.setApproxFunc();
  Approx.setAllowReciprocal();
  llvm::Value *Root = B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, Xs, Approx);
  llvm::Value *R = B.CreateFDivFMF(c(1.0), Root, Approx);
  R = B.CreateSelect(Small, B.CreateFMul(R, c(0x1p12)), R);
  R = B.CreateSelect(B.CreateFCmpOEQ(X, c(0.0)), B.CreateCopySign(llvm::ConstantFP::getInfinity(F), X), R);
  return B.CreateSelect(B.CreateFCmpOEQ(X, llvm::ConstantFP::getInfinity(F)), c(0.0), R);
}
