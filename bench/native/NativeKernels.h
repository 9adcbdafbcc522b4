// Native C++ twins of the nine benchmark kernels of ../shared/bench/cuda: the same algorithm (same work
// decomposition where the algorithm depends on it: 256-wide block partials for the reduction, 16x16 tiles for
// sgemm, 32x32 tiles for transpose, 256-body tiles for nbody), written for a CPU with OpenMP across what CUDA
// runs as blocks and loops the compiler vectorizes across what CUDA runs as threads.
// Built with `g++ -O3 -march=native -fopenmp -fno-math-errno` (bench/CMakeLists.txt); the harness is not.
#pragma once

#include <cstdint>

namespace ptxforge::bench::native {

/// omp_set_num_threads(N) (the harness is compiled without OpenMP).
void setThreads(int N);
int maxThreads();

void vecadd(const float *A, const float *B, float *C, int N);
void saxpy(const float *X, float *Y, float A, int N);
/// Both launches of reduce_sum: in[N] -> Partial[Blocks] (256-wide grid-stride partials per block, tree), then
/// Partial -> Out[0]. Partial needs Blocks floats.
void reduceSum(const float *In, float *Partial, float *Out, int N, int Blocks);
void sgemmTiled(const float *A, const float *B, float *C, int M, int N, int K);
void transpose(const float *In, float *Out, int Width, int Height);
/// Hist (256 bins) is accumulated into, as the CUDA kernel does: zero it first for a fresh histogram.
void histogram256(const unsigned char *Data, unsigned *Hist, int N, int Blocks);
/// Pos/Vel/NewPos/NewVel are float4 arrays (x, y, z, w) of N bodies; N must be a multiple of 256.
void nbodyStep(const float *Pos, const float *Vel, float *NewPos, float *NewVel, int N, float Dt, float Eps2);
void blackScholes(float *Call, float *Put, const float *S, const float *X, const float *T, float R, float V, int N);
void stencil5(const float *In, float *Out, int Nx, int Ny, float C0, float C1);

} // namespace ptxforge::bench::native
