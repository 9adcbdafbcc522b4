// cuSOLVER: Cholesky factorisation (potrf, lower) of a symmetric positive definite matrix, checked by
// multiplying the factor back on the host (L L^T = A). cusolver_potrs.cu adds the solve, which goes through
// cuBLAS (docs/export-tables.md says where that stops).
#include "NvlibsCheck.h"

#include <cusolverDn.h>
#include <vector>

int main() {
  constexpr int N = 24;
  // A = M^T M + N I (column-major).
  std::vector<double> M(N * N), A(N * N);
  for (int I = 0; I < N * N; ++I)
    M[I] = double((I * 29) % 23) / 23.0 - 0.5;
  for (int C = 0; C < N; ++C)
    for (int R = 0; R < N; ++R) {
      double Sum = R == C ? N : 0;
      for (int K = 0; K < N; ++K)
        Sum += M[R * N + K] * M[C * N + K];
      A[C * N + R] = Sum;
    }

  double *DA;
  int *DInfo;
  CHECK_CUDA(cudaMalloc(&DA, A.size() * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&DInfo, sizeof(int)));
  CHECK_CUDA(cudaMemcpy(DA, A.data(), A.size() * sizeof(double), cudaMemcpyHostToDevice));
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
  std::vector<double> L(N * N), LLt(N * N);
  CHECK_CUDA(cudaMemcpy(L.data(), DA, L.size() * sizeof(double), cudaMemcpyDeviceToHost));
  // Only the lower triangle holds the factor; the upper one is left as it was.
  for (int C = 0; C < N; ++C)
    for (int R = 0; R < C; ++R)
      L[C * N + R] = 0;
  for (int C = 0; C < N; ++C)
    for (int R = 0; R < N; ++R) {
      double Sum = 0;
      for (int K = 0; K < N; ++K)
        Sum += L[K * N + R] * L[K * N + C];
      LLt[C * N + R] = Sum;
    }
  expectClose("potrf (24 x 24): L L^T = A", LLt.data(), A.data(), A.size(), 1e-12);
  CHECK_STATUS(cusolverDnDestroy(H), CUSOLVER_STATUS_SUCCESS);
  return 0;
}
