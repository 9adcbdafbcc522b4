// cuBLAS GEMM through cublasGemmEx in single, double and half precision (C = alpha * op(A) * op(B) + beta * C,
// column-major, one transposed operand) against a host reference.
#include "NvlibsCheck.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <vector>

namespace {
constexpr int M = 37, N = 29, K = 43;

/// A reproducible value in [-1, 1) for element I of matrix Seed.
float value(int Seed, int I) { return float((I * 37 + Seed * 101) % 64 - 32) / 32.0f; }

template <class T> T *toDevice(const std::vector<T> &V) {
  T *D;
  CHECK_CUDA(cudaMalloc(&D, V.size() * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(D, V.data(), V.size() * sizeof(T), cudaMemcpyHostToDevice));
  return D;
}

/// Runs C = 1.5 * A^T * B - 0.5 * C with A stored K x M (transposed), B K x N, C M x N, in Storage (host type T,
/// CUDA type DataType), accumulating in Compute (scalars of type S), and compares with the host.
template <class T, class S>
void gemm(cublasHandle_t H, const char *Name, cudaDataType DataType, cublasComputeType_t Compute, double Tolerance) {
  std::vector<T> A(K * M), B(K * N), C(M * N);
  for (int I = 0; I < K * M; ++I)
    A[I] = T(value(1, I));
  for (int I = 0; I < K * N; ++I)
    B[I] = T(value(2, I));
  for (int I = 0; I < M * N; ++I)
    C[I] = T(value(3, I));
  std::vector<double> Want(M * N);
  for (int J = 0; J < N; ++J)
    for (int I = 0; I < M; ++I) {
      double Sum = 0;
      for (int L = 0; L < K; ++L)
        Sum += double(float(A[I * K + L])) * double(float(B[J * K + L]));
      Want[J * M + I] = 1.5 * Sum - 0.5 * double(float(C[J * M + I]));
    }
  T *DA = toDevice(A), *DB = toDevice(B), *DC = toDevice(C);
  S Alpha = S(1.5f), Beta = S(-0.5f);
  CHECK_STATUS(cublasGemmEx(H, CUBLAS_OP_T, CUBLAS_OP_N, M, N, K, &Alpha, DA, DataType, K, DB, DataType, K, &Beta, DC,
                            DataType, M, Compute, CUBLAS_GEMM_DEFAULT),
               CUBLAS_STATUS_SUCCESS);
  std::vector<T> Got(M * N);
  CHECK_CUDA(cudaMemcpy(Got.data(), DC, Got.size() * sizeof(T), cudaMemcpyDeviceToHost));
  std::vector<double> GotD(M * N);
  for (int I = 0; I < M * N; ++I)
    GotD[I] = double(float(Got[I]));
  expectClose(Name, GotD.data(), Want.data(), M * N, Tolerance);
  CHECK_CUDA(cudaFree(DA));
  CHECK_CUDA(cudaFree(DB));
  CHECK_CUDA(cudaFree(DC));
}
} // namespace

int main() {
  cublasHandle_t H;
  CHECK_STATUS(cublasCreate(&H), CUBLAS_STATUS_SUCCESS);
  gemm<float, float>(H, "SGEMM", CUDA_R_32F, CUBLAS_COMPUTE_32F, 1e-5);
  gemm<double, double>(H, "DGEMM", CUDA_R_64F, CUBLAS_COMPUTE_64F, 1e-12);
  // Half inputs and outputs, single-precision accumulation: the result's rounding to half dominates.
  gemm<__half, float>(H, "HGEMM", CUDA_R_16F, CUBLAS_COMPUTE_32F, 2e-3);
  CHECK_STATUS(cublasDestroy(H), CUBLAS_STATUS_SUCCESS);
  return 0;
}
