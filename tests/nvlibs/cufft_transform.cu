// cuFFT: a batched 1D complex transform and a 2D complex transform (forward), against a direct DFT on the host.
#include "NvlibsCheck.h"

#include <cufft.h>
#include <vector>

namespace {
constexpr double Pi = 3.14159265358979323846;

std::vector<cufftComplex> input(size_t N) {
  std::vector<cufftComplex> V(N);
  for (size_t I = 0; I < N; ++I)
    V[I] = {float((I * 7) % 11) / 11.0f - 0.5f, float((I * 5) % 13) / 13.0f - 0.5f};
  return V;
}

/// The forward DFT of Rows x Cols elements (row-major) at In, into interleaved real/imaginary doubles.
std::vector<double> dft2d(const cufftComplex *In, int Rows, int Cols) {
  std::vector<double> Out(2 * size_t(Rows) * Cols);
  for (int U = 0; U < Rows; ++U)
    for (int V = 0; V < Cols; ++V) {
      double Re = 0, Im = 0;
      for (int R = 0; R < Rows; ++R)
        for (int C = 0; C < Cols; ++C) {
          double A = -2 * Pi * (double(U) * R / Rows + double(V) * C / Cols);
          const cufftComplex &X = In[R * Cols + C];
          Re += X.x * std::cos(A) - X.y * std::sin(A);
          Im += X.x * std::sin(A) + X.y * std::cos(A);
        }
      Out[2 * (size_t(U) * Cols + V)] = Re, Out[2 * (size_t(U) * Cols + V) + 1] = Im;
    }
  return Out;
}

std::vector<float> run(cufftHandle Plan, const std::vector<cufftComplex> &In) {
  cufftComplex *D;
  size_t Bytes = In.size() * sizeof(cufftComplex);
  CHECK_CUDA(cudaMalloc(&D, Bytes));
  CHECK_CUDA(cudaMemcpy(D, In.data(), Bytes, cudaMemcpyHostToDevice));
  CHECK_STATUS(cufftExecC2C(Plan, D, D, CUFFT_FORWARD), CUFFT_SUCCESS);
  std::vector<float> Out(2 * In.size());
  CHECK_CUDA(cudaMemcpy(Out.data(), D, Bytes, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(D));
  return Out;
}
} // namespace

int main() {
  // A batch of 6 transforms of 64 points: each row is its own 1 x 64 "2D" transform.
  constexpr int Length = 64, Batch = 6;
  cufftHandle Plan;
  CHECK_STATUS(cufftPlan1d(&Plan, Length, CUFFT_C2C, Batch), CUFFT_SUCCESS);
  std::vector<cufftComplex> In = input(size_t(Length) * Batch);
  std::vector<float> Got = run(Plan, In);
  std::vector<double> Want;
  for (int B = 0; B < Batch; ++B) {
    std::vector<double> Row = dft2d(&In[size_t(B) * Length], 1, Length);
    Want.insert(Want.end(), Row.begin(), Row.end());
  }
  // Sums of 64 terms of magnitude <= 0.5 in single precision.
  expectClose("batched 1D C2C (64 x 6)", Got.data(), Want.data(), Want.size(), 1e-4);
  CHECK_STATUS(cufftDestroy(Plan), CUFFT_SUCCESS);

  constexpr int Rows = 16, Cols = 24;
  CHECK_STATUS(cufftPlan2d(&Plan, Rows, Cols, CUFFT_C2C), CUFFT_SUCCESS);
  In = input(size_t(Rows) * Cols);
  Got = run(Plan, In);
  Want = dft2d(In.data(), Rows, Cols);
  expectClose("2D C2C (16 x 24)", Got.data(), Want.data(), Want.size(), 1e-4);
  CHECK_STATUS(cufftDestroy(Plan), CUFFT_SUCCESS);
  return 0;
}
