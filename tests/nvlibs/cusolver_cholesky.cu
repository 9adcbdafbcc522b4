// cuSOLVER: Cholesky factorisation (potrf, lower) of a symmetric positive definite matrix, checked by multiplying
// the factor back on the host (L L^T = A), then the solve (potrs) of A X = B for two right-hand sides, which goes
// through cuBLAS's trsm (docs/export-tables.md says where that stops), checked by multiplying X back.
#include "NvlibsCheck.h"

#include <cusolverDn.h>
#include <vector>

namespace {

/// L L^T for the factor potrf leaves in the lower triangle of L (its upper triangle holds what A held there).
std::vector<double> multiplyFactor(std::vector<double> L, int N) {
  for (int C = 0; C < N; ++C)
    for (int R = 0; R < C; ++R)
      L[C * N + R] = 0;
  std::vector<double> LLt(N * N);
  for (int C = 0; C < N; ++C)
    for (int R = 0; R < N; ++R) {
      double Sum = 0;
      for (int K = 0; K < N; ++K)
        Sum += L[K * N + R] * L[K * N + C];
      LLt[C * N + R] = Sum;
    }
  return LLt;
}

} // namespace

int main() {
  constexpr int N = 24, Rhs = 2;
  // A = M^T M + N I (column-major), B with known columns.
  std::vector<double> M(N * N), A(N * N), B(N * Rhs);
  for (int I = 0; I < N * N; ++I)
    M[I] = double((I * 29) % 23) / 23.0 - 0.5;
  for (int C = 0; C < N; ++C)
    for (int R = 0; R < N; ++R) {
      double Sum = R == C ? N : 0;
      for (int K = 0; K < N; ++K)
        Sum += M[R * N + K] * M[C * N + K];
      A[C * N + R] = Sum;
    }
  for (int I = 0; I < N * Rhs; ++I)
    B[I] = double(I % 9) - 4.0;

  double *DA, *DB;
  int *DInfo;
  CHECK_CUDA(cudaMalloc(&DA, A.size() * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&DB, B.size() * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&DInfo, sizeof(int)));
  CHECK_CUDA(cudaMemcpy(DA, A.data(), A.size() * sizeof(double), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(DB, B.data(), B.size() * sizeof(double), cudaMemcpyHostToDevice));
  cusolverDnHandle_t H;
  CHECK_STATUS(cusolverDnCreate(&H), CUSOLVER_STATUS_SUCCESS);
  int Lwork = 0;
  CHECK_STATUS(cusolverDnDpotrf_bufferSize(H, CUBLAS_FILL_MODE_LOWER, N, DA, N, &Lwork), CUSOLVER_STATUS_SUCCESS);
  double *Work;
  CHECK_CUDA(cudaMalloc(&Work, size_t(Lwork > 0 ? Lwork : 1) * sizeof(double)));
  CHECK_STATUS(cusolverDnDpotrf(H, CUBLAS_FILL_MODE_LOWER, N, DA, N, Work, Lwork, DInfo), CUSOLVER_STATUS_SUCCESS);
  int Info = -1;
  CHECK_CUDA(cudaMemcpy(&Info, DInfo, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK_STATUS(Info, 0);
  std::vector<double> L(N * N);
  CHECK_CUDA(cudaMemcpy(L.data(), DA, L.size() * sizeof(double), cudaMemcpyDeviceToHost));
  std::vector<double> LLt = multiplyFactor(L, N);
  expectClose("potrf (24 x 24): L L^T = A", LLt.data(), A.data(), A.size(), 1e-12);
  CHECK_STATUS(cusolverDnDpotrs(H, CUBLAS_FILL_MODE_LOWER, N, Rhs, DA, N, DB, N, DInfo), CUSOLVER_STATUS_SUCCESS);
  CHECK_CUDA(cudaMemcpy(&Info, DInfo, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK_STATUS(Info, 0);
  std::vector<double> X(N * Rhs), AX(N * Rhs);
  CHECK_CUDA(cudaMemcpy(X.data(), DB, X.size() * sizeof(double), cudaMemcpyDeviceToHost));
  for (int J = 0; J < Rhs; ++J)
    for (int R = 0; R < N; ++R) {
      double Sum = 0;
      for (int K = 0; K < N; ++K)
        Sum += A[K * N + R] * X[J * N + K];
      AX[J * N + R] = Sum;
    }
  expectClose("potrs (24 x 24, 2 right-hand sides): A X = B", AX.data(), B.data(), B.size(), 1e-10);
  CHECK_STATUS(cusolverDnDestroy(H), CUSOLVER_STATUS_SUCCESS);
  return 0;
}
