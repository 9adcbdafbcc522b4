// Native twins of bench/idioms/idioms.cu and the probes (IdiomsNative.h).
#include "IdiomsNative.h"
#include "../MandelbrotIteration.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <omp.h>
#include <vector>

namespace ptxforge::bench::idioms {

void setThreads(int N) { omp_set_num_threads(N); }

namespace {

struct B8 {
  uint32_t A, B;
};
struct B12 {
  uint32_t R, G, B;
};
struct alignas(16) B16 {
  uint32_t A, B, C, D;
};

template <class T> void copyAs(void *Out, const void *In, size_t N) {
  T *__restrict O = static_cast<T *>(Out);
  const T *__restrict I = static_cast<const T *>(In);
#pragma omp parallel for schedule(static)
  for (size_t K = 0; K < N; ++K)
    O[K] = I[K];
}

} // namespace

void copyElems(void *Out, const void *In, size_t N, int ElemSize) {
  switch (ElemSize) {
  case 1:
    return copyAs<uint8_t>(Out, In, N);
  case 2:
    return copyAs<uint16_t>(Out, In, N);
  case 4:
    return copyAs<uint32_t>(Out, In, N);
  case 8:
    return copyAs<B8>(Out, In, N);
  case 12:
    return copyAs<B12>(Out, In, N);
  default:
    return copyAs<B16>(Out, In, N);
  }
}

void mapAffine(float *__restrict Y, const float *__restrict X, float A, float B, size_t N) {
#pragma omp parallel for simd schedule(static)
  for (size_t I = 0; I < N; ++I)
    Y[I] = A * X[I] + B;
}

void spmvCsr(const int *__restrict RowPtr, const int *__restrict Cols, const float *__restrict Vals,
             const float *__restrict X, float *__restrict Y, int Rows) {
#pragma omp parallel for schedule(static)
  for (int R = 0; R < Rows; ++R) {
    float Sum = 0;
    for (int J = RowPtr[R]; J < RowPtr[R + 1]; ++J)
      Sum += Vals[J] * X[Cols[J]];
    Y[R] = Sum;
  }
}

void rowDot(const float *__restrict A, const float *__restrict X, float *__restrict Y, int Rows, int Cols) {
#pragma omp parallel for schedule(static)
  for (int R = 0; R < Rows; ++R) {
    float Sum = 0;
    for (int K = 0; K < Cols; ++K)
      Sum += A[size_t(R) * Cols + K] * X[K];
    Y[R] = Sum;
  }
}

void segmentInclusiveScan(const int *__restrict In, int *__restrict Out, size_t N, int Seg) {
#pragma omp parallel for schedule(static)
  for (size_t S = 0; S < N; S += Seg) {
    int Acc = 0;
    for (size_t I = S; I < std::min(N, S + Seg); ++I)
      Out[I] = Acc += In[I];
  }
}

void segmentExclusiveScan(const int *__restrict In, int *__restrict Out, size_t N, int Seg) {
#pragma omp parallel for schedule(static)
  for (size_t S = 0; S < N; S += Seg) {
    int Acc = 0;
    for (size_t I = S; I < std::min(N, S + Seg); ++I) {
      Out[I] = Acc;
      Acc += In[I];
    }
  }
}

void sortSegments(unsigned *Keys, size_t N, int Seg) {
#pragma omp parallel for schedule(static)
  for (size_t S = 0; S < N; S += Seg)
    std::sort(Keys + S, Keys + std::min(N, S + Seg));
}

void radixPass(const unsigned *__restrict In, unsigned *__restrict Out, unsigned *__restrict Counts, size_t N, int Seg,
               int Shift) {
#pragma omp parallel for schedule(static)
  for (size_t S = 0; S < N; S += Seg) {
    unsigned Count[16] = {}, Start[16];
    size_t End = std::min(N, S + Seg);
    for (size_t I = S; I < End; ++I)
      ++Count[(In[I] >> Shift) & 15];
    for (unsigned D = 0, Sum = 0; D < 16; ++D)
      Start[D] = Sum, Sum += Count[D];
    for (size_t I = S; I < End; ++I)
      Out[S + Start[(In[I] >> Shift) & 15]++] = In[I];
    std::memcpy(Counts + (S / Seg) * 16, Count, sizeof Count);
  }
}

void histogram(const uint8_t *__restrict Data, unsigned *__restrict Hist, size_t N) {
#pragma omp parallel
  {
    unsigned Local[256] = {};
#pragma omp for schedule(static)
    for (size_t I = 0; I < N; ++I)
      ++Local[Data[I]];
    for (int B = 0; B < 256; ++B)
      if (Local[B]) {
#pragma omp atomic
        Hist[B] += Local[B];
      }
  }
}

void binMax(const float *__restrict Vals, const unsigned *__restrict Bins, float *BinMax, int NBins, size_t N) {
#pragma omp parallel
  {
    std::vector<float> Local(BinMax, BinMax + NBins);
#pragma omp for schedule(static)
    for (size_t I = 0; I < N; ++I) {
      float &M = Local[Bins[I] % NBins];
      M = std::max(M, Vals[I]);
    }
#pragma omp critical
    for (int B = 0; B < NBins; ++B)
      BinMax[B] = std::max(BinMax[B], Local[B]);
  }
}

void mandelbrot(int *Iters, int Width, int Height, float X0, float Y0, float Dx, float Dy, int MaxIter) {
#pragma omp parallel for schedule(dynamic, 4)
  for (int Py = 0; Py < Height; ++Py)
    for (int Px = 0; Px < Width; ++Px) {
      Iters[size_t(Py) * Width + Px] = mandelbrotIterations(X0 + Px * Dx, Y0 + Py * Dy, MaxIter);
    }
}

void stencil3d7(const float *__restrict In, float *__restrict Out, int Nx, int Ny, int Nz, float C0, float C1) {
  const size_t Sy = Nx, Sz = size_t(Nx) * Ny;
#pragma omp parallel for collapse(2) schedule(static)
  for (int Z = 0; Z < Nz; ++Z)
    for (int Y = 0; Y < Ny; ++Y) {
      size_t Row = Z * Sz + Y * Sy;
      if (Z == 0 || Y == 0 || Z == Nz - 1 || Y == Ny - 1) {
        std::memcpy(Out + Row, In + Row, Nx * sizeof(float));
        continue;
      }
      Out[Row] = In[Row];
      Out[Row + Nx - 1] = In[Row + Nx - 1];
#pragma omp simd
      for (int X = 1; X < Nx - 1; ++X) {
        size_t I = Row + X;
        Out[I] = C0 * In[I] + C1 * (In[I - 1] + In[I + 1] + In[I - Sy] + In[I + Sy] + In[I - Sz] + In[I + Sz]);
      }
    }
}

void conv2d5x5(const float *__restrict In, float *__restrict Out, const float *__restrict Filter, int Width,
               int Height) {
#pragma omp parallel for schedule(static)
  for (int Y = 0; Y < Height; ++Y) {
    const float *Rows[5];
    for (int F = 0; F < 5; ++F)
      Rows[F] = In + size_t(std::min(std::max(Y + F - 2, 0), Height - 1)) * Width;
    auto at = [&](int F, int X) { return Rows[F][std::min(std::max(X, 0), Width - 1)]; };
    for (int X = 0; X < 2 && X < Width; ++X) { // clamped left edge
      float S = 0;
      for (int Fy = 0; Fy < 5; ++Fy)
        for (int Fx = 0; Fx < 5; ++Fx)
          S += Filter[Fy * 5 + Fx] * at(Fy, X + Fx - 2);
      Out[size_t(Y) * Width + X] = S;
    }
#pragma omp simd
    for (int X = 2; X < Width - 2; ++X) {
      float S = 0;
      for (int Fy = 0; Fy < 5; ++Fy)
        for (int Fx = 0; Fx < 5; ++Fx)
          S += Filter[Fy * 5 + Fx] * Rows[Fy][X + Fx - 2];
      Out[size_t(Y) * Width + X] = S;
    }
    for (int X = std::max(2, Width - 2); X < Width; ++X) { // clamped right edge
      float S = 0;
      for (int Fy = 0; Fy < 5; ++Fy)
        for (int Fx = 0; Fx < 5; ++Fx)
          S += Filter[Fy * 5 + Fx] * at(Fy, X + Fx - 2);
      Out[size_t(Y) * Width + X] = S;
    }
  }
}

void nbodyFp64(const double *__restrict Pos, const double *__restrict Vel, double *__restrict NewPos,
               double *__restrict NewVel, int N, double Dt, double Eps2) {
#pragma omp parallel for schedule(static)
  for (int I = 0; I < N; ++I) {
    const double Px = Pos[4 * I], Py = Pos[4 * I + 1], Pz = Pos[4 * I + 2];
    double Ax = 0, Ay = 0, Az = 0;
#pragma omp simd reduction(+ : Ax, Ay, Az)
    for (int J = 0; J < N; ++J) {
      double Rx = Pos[4 * J] - Px, Ry = Pos[4 * J + 1] - Py, Rz = Pos[4 * J + 2] - Pz;
      double Inv = 1.0 / std::sqrt(Rx * Rx + Ry * Ry + Rz * Rz + Eps2);
      double S = Pos[4 * J + 3] * Inv * Inv * Inv;
      Ax += Rx * S, Ay += Ry * S, Az += Rz * S;
    }
    double Vx = Vel[4 * I] + Ax * Dt, Vy = Vel[4 * I + 1] + Ay * Dt, Vz = Vel[4 * I + 2] + Az * Dt;
    NewVel[4 * I] = Vx, NewVel[4 * I + 1] = Vy, NewVel[4 * I + 2] = Vz, NewVel[4 * I + 3] = Vel[4 * I + 3];
    NewPos[4 * I] = Px + Vx * Dt, NewPos[4 * I + 1] = Py + Vy * Dt, NewPos[4 * I + 2] = Pz + Vz * Dt;
    NewPos[4 * I + 3] = Pos[4 * I + 3];
  }
}

void compact(const int *__restrict In, int *__restrict Out, unsigned *Count, int Threshold, size_t N) {
  // Two passes over per-thread chunks: count, then write at the chunk's offset.
  std::vector<size_t> Offsets(omp_get_max_threads() + 1, 0);
#pragma omp parallel
  {
    int T = omp_get_thread_num(), NT = omp_get_num_threads();
    size_t Lo = N * T / NT, Hi = N * (T + 1) / NT, Kept = 0;
    for (size_t I = Lo; I < Hi; ++I)
      Kept += In[I] > Threshold;
    Offsets[T + 1] = Kept;
#pragma omp barrier
#pragma omp single
    for (int K = 1; K <= NT; ++K)
      Offsets[K] += Offsets[K - 1];
    size_t At = Offsets[T];
    for (size_t I = Lo; I < Hi; ++I)
      if (In[I] > Threshold)
        Out[At++] = In[I];
#pragma omp single
    *Count = unsigned(Offsets[NT]);
  }
}

float sum(const float *__restrict In, size_t N) {
  float S = 0;
#pragma omp parallel for simd reduction(+ : S) schedule(static)
  for (size_t I = 0; I < N; ++I)
    S += In[I];
  return S;
}

void transpose(const float *__restrict In, float *__restrict Out, int Width, int Height) {
  constexpr int T = 32;
#pragma omp parallel for collapse(2) schedule(static)
  for (int By = 0; By < Height; By += T)
    for (int Bx = 0; Bx < Width; Bx += T)
      for (int X = Bx; X < std::min(Width, Bx + T); ++X)
        for (int Y = By; Y < std::min(Height, By + T); ++Y)
          Out[size_t(X) * Height + Y] = In[size_t(Y) * Width + X];
}

// ---------------------------------------------------------------------------------------------------------------
// Probes

namespace {

template <class F> double bestSeconds(int Reps, F &&Fn) {
  double Best = 1e30;
  for (int R = 0; R < Reps; ++R) {
    auto T0 = std::chrono::steady_clock::now();
    Fn();
    Best = std::min(Best, std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count());
  }
  return Best;
}

/// Chains independent accumulators, each Acc = Acc * M + A, in vectors of one 512-bit register: 2 FLOP per lane.
template <class T> double fmaPeak(int Reps) {
  typedef T V __attribute__((vector_size(64)));
  constexpr int Chains = 12, Lanes = 64 / sizeof(T);
  constexpr long Iters = 1 << 22;
  double Flops = 0;
  double S = bestSeconds(Reps, [&] {
    double Total = 0;
#pragma omp parallel reduction(+ : Total)
    {
      V Acc[Chains], M = V{} + T(0.999999), A = V{} + T(1e-7);
      for (int C = 0; C < Chains; ++C)
        Acc[C] = V{} + T(C);
      for (long I = 0; I < Iters; ++I)
        for (int C = 0; C < Chains; ++C) {
          Acc[C] = Acc[C] * M + A;
          asm volatile("" : "+v"(Acc[C])); // the chain's value is used: the compiler may not drop or fold it
        }
      Total += 2.0 * Chains * Lanes * Iters;
    }
    Flops = Total;
  });
  return Flops / S;
}

} // namespace

double streamCopy(double *__restrict A, const double *__restrict B, size_t N, int Reps) {
  double S = bestSeconds(Reps, [&] {
#pragma omp parallel for simd schedule(static)
    for (size_t I = 0; I < N; ++I)
      A[I] = B[I];
  });
  return 16.0 * N / S;
}

double streamTriad(double *__restrict A, const double *__restrict B, const double *__restrict C, size_t N, int Reps) {
  const double Scalar = 3.0;
  double S = bestSeconds(Reps, [&] {
#pragma omp parallel for simd schedule(static)
    for (size_t I = 0; I < N; ++I)
      A[I] = B[I] + Scalar * C[I];
  });
  return 24.0 * N / S;
}

double fmaPeakF32(int Reps) { return fmaPeak<float>(Reps); }
double fmaPeakF64(int Reps) { return fmaPeak<double>(Reps); }

} // namespace ptxforge::bench::idioms
