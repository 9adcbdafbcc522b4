// Native C++ twins of bench/idioms/idioms.cu, and the machine probes (STREAM copy and triad, FMA peak) the
// kernels' rates are judged against. Each twin is what a C++ programmer writes for the task on a CPU (OpenMP
// over the outer loop, loops the compiler vectorizes), not a transcription of the CUDA thread structure: the
// same result, where floating-point order allows the same order. Built with `g++ -O3 -march=native -fopenmp
// -fno-math-errno` (bench/CMakeLists.txt); the harness is not.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ptxforge::bench::idioms {

/// omp_set_num_threads(N) (the harness is compiled without OpenMP).
void setThreads(int N);

/// out[i] = in[i] for N elements of ElemSize (1, 2, 4, 8, 12 or 16) bytes.
void copyElems(void *Out, const void *In, size_t N, int ElemSize);
void mapAffine(float *Y, const float *X, float A, float B, size_t N);
void spmvCsr(const int *RowPtr, const int *Cols, const float *Vals, const float *X, float *Y, int Rows);
void rowDot(const float *A, const float *X, float *Y, int Rows, int Cols);
/// Scans of each Seg-element segment.
void segmentInclusiveScan(const int *In, int *Out, size_t N, int Seg);
void segmentExclusiveScan(const int *In, int *Out, size_t N, int Seg);
/// Sorts each Seg-key segment ascending, in place.
void sortSegments(unsigned *Keys, size_t N, int Seg);
/// Stable sort of each Seg-key segment by the 4 bits at Shift; Counts[s * 16 + d]: segment s's keys of digit d.
void radixPass(const unsigned *In, unsigned *Out, unsigned *Counts, size_t N, int Seg, int Shift);
/// Hist (256 bins) is added to.
void histogram(const uint8_t *Data, unsigned *Hist, size_t N);
/// BinMax[Bins[i] % NBins] = max(itself, Vals[i]).
void binMax(const float *Vals, const unsigned *Bins, float *BinMax, int NBins, size_t N);
void mandelbrot(int *Iters, int Width, int Height, float X0, float Y0, float Dx, float Dy, int MaxIter);
void stencil3d7(const float *In, float *Out, int Nx, int Ny, int Nz, float C0, float C1);
/// 5x5 filter, edges clamped.
void conv2d5x5(const float *In, float *Out, const float *Filter, int Width, int Height);
/// Arrays of N (x, y, z, w) bodies, w the mass.
void nbodyFp64(const double *Pos, const double *Vel, double *NewPos, double *NewVel, int N, double Dt, double Eps2);
/// Keeps In[i] > Threshold in order; *Count = how many.
void compact(const int *In, int *Out, unsigned *Count, int Threshold, size_t N);
float sum(const float *In, size_t N);
void transpose(const float *In, float *Out, int Width, int Height);

// Probes, in bytes or FLOP per second over all OpenMP threads.
/// STREAM copy a[i] = b[i] over N doubles (16 bytes per element counted), best of Reps.
double streamCopy(double *A, const double *B, size_t N, int Reps);
/// STREAM triad a[i] = b[i] + s * c[i] (24 bytes per element counted), best of Reps.
double streamTriad(double *A, const double *B, const double *C, size_t N, int Reps);
/// Independent fused multiply-adds in registers, float and double, best of Reps.
double fmaPeakF32(int Reps);
double fmaPeakF64(int Reps);

} // namespace ptxforge::bench::idioms
