// cuSPARSE: y = alpha * A * x + beta * y with A in CSR form (the generic SpMV API), against the host.
#include "NvlibsCheck.h"

#include <cusparse.h>
#include <vector>

namespace {
template <class T> T *toDevice(const std::vector<T> &V) {
  T *D;
  CHECK_CUDA(cudaMalloc(&D, V.size() * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(D, V.data(), V.size() * sizeof(T), cudaMemcpyHostToDevice));
  return D;
}
} // namespace

int main() {
  // A 50 x 40 matrix with a band and a few scattered entries per row.
  constexpr int Rows = 50, Cols = 40;
  std::vector<int> RowOffsets{0}, Columns;
  std::vector<float> Values;
  for (int R = 0; R < Rows; ++R) {
    for (int C = 0; C < Cols; ++C)
      if (std::abs(R - C) <= 1 || (R * 7 + C * 3) % 17 == 0) {
        Columns.push_back(C);
        Values.push_back(float((R * 13 + C * 5) % 19) / 19.0f - 0.4f);
      }
    RowOffsets.push_back(int(Columns.size()));
  }
  std::vector<float> X(Cols), Y(Rows);
  for (int I = 0; I < Cols; ++I)
    X[I] = float(I % 7) - 3.0f;
  for (int I = 0; I < Rows; ++I)
    Y[I] = float(I % 5) * 0.25f;
  const float Alpha = 2.0f, Beta = -1.0f;
  std::vector<double> Want(Rows);
  for (int R = 0; R < Rows; ++R) {
    double Sum = 0;
    for (int I = RowOffsets[R]; I < RowOffsets[R + 1]; ++I)
      Sum += double(Values[I]) * X[Columns[I]];
    Want[R] = Alpha * Sum + Beta * Y[R];
  }

  int *DOffsets = toDevice(RowOffsets), *DColumns = toDevice(Columns);
  float *DValues = toDevice(Values), *DX = toDevice(X), *DY = toDevice(Y);
  cusparseHandle_t H;
  CHECK_STATUS(cusparseCreate(&H), CUSPARSE_STATUS_SUCCESS);
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t VX, VY;
  CHECK_STATUS(cusparseCreateCsr(&A, Rows, Cols, int64_t(Values.size()), DOffsets, DColumns, DValues,
                                 CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
               CUSPARSE_STATUS_SUCCESS);
  CHECK_STATUS(cusparseCreateDnVec(&VX, Cols, DX, CUDA_R_32F), CUSPARSE_STATUS_SUCCESS);
  CHECK_STATUS(cusparseCreateDnVec(&VY, Rows, DY, CUDA_R_32F), CUSPARSE_STATUS_SUCCESS);
  size_t Bytes = 0;
  CHECK_STATUS(cusparseSpMV_bufferSize(H, CUSPARSE_OPERATION_NON_TRANSPOSE, &Alpha, A, VX, &Beta, VY, CUDA_R_32F,
                                       CUSPARSE_SPMV_CSR_ALG1, &Bytes),
               CUSPARSE_STATUS_SUCCESS);
  void *Buffer = nullptr;
  CHECK_CUDA(cudaMalloc(&Buffer, Bytes ? Bytes : 1));
  CHECK_STATUS(cusparseSpMV(H, CUSPARSE_OPERATION_NON_TRANSPOSE, &Alpha, A, VX, &Beta, VY, CUDA_R_32F,
                            CUSPARSE_SPMV_CSR_ALG1, Buffer),
               CUSPARSE_STATUS_SUCCESS);
  std::vector<float> Got(Rows);
  CHECK_CUDA(cudaMemcpy(Got.data(), DY, Rows * sizeof(float), cudaMemcpyDeviceToHost));
  expectClose("CSR SpMV (50 x 40)", Got.data(), Want.data(), Rows, 1e-5);
  CHECK_STATUS(cusparseDestroySpMat(A), CUSPARSE_STATUS_SUCCESS);
  CHECK_STATUS(cusparseDestroyDnVec(VX), CUSPARSE_STATUS_SUCCESS);
  CHECK_STATUS(cusparseDestroyDnVec(VY), CUSPARSE_STATUS_SUCCESS);
  CHECK_STATUS(cusparseDestroy(H), CUSPARSE_STATUS_SUCCESS);
  return 0;
}
