// Inline forms of the .approx transcendental instructions that hot kernels use (ex2.approx.f32: CUDA's expf
// is built on it). A libm call per element keeps the loop around it scalar; this plain IR vectorizes, and is
// well within the PTX ISA's bound (ex2.approx.f32: 2 ulp) on every input.
#include "../FunctionLowering.h"

#include <iterator>

using namespace ptxforge;
using namespace ptxforge::codegen::detail;

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
  static const double Coeff[] = {1.525273380405984e-05, 1.5403530393381606e-04, 1.3333558146428443e-03,
                                 9.618129107628477e-03, 5.550410866482158e-02,  2.402265069591007e-01,
                                 6.931471805599453e-01, 1.0};
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
