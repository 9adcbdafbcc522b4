// Native twins of ../shared/bench/cuda/*.cu (see NativeKernels.h). What CUDA runs as a block becomes one
// iteration of an OpenMP-parallel loop; what it runs as the block's threads becomes an inner loop over the
// thread index, which GCC vectorizes. Shared-memory tiles become local arrays; barriers disappear because the
// phases between them become consecutive loops.
#include "NativeKernels.h"

#include <algorithm>
#include <cmath>
#include <omp.h>

namespace ptxforge::bench::native {

void setThreads(int N) { omp_set_num_threads(N); }
int maxThreads() { return omp_get_max_threads(); }

void vecadd(const float *__restrict A, const float *__restrict B, float *__restrict C, int N) {
#pragma omp parallel for simd schedule(static)
  for (int I = 0; I < N; ++I)
    C[I] = A[I] + B[I];
}

void saxpy(const float *__restrict X, float *__restrict Y, float A, int N) {
#pragma omp parallel for simd schedule(static)
  for (int I = 0; I < N; ++I)
    Y[I] = A * X[I] + Y[I];
}

namespace {

constexpr int ReduceBlock = 256;

/// One block of reduce_sum: 256 grid-stride partial sums, a tree down to 64, then the warp step (the order of
/// additions is the CUDA kernel's, so lane 0 ends with the same value).
float reduceBlock(const float *__restrict In, int N, int Block, int Grid) {
  alignas(64) float S[ReduceBlock] = {};
  const long Stride = long(ReduceBlock) * Grid;
  for (long Base = long(Block) * ReduceBlock; Base < N; Base += Stride) {
    int Lim = static_cast<int>(std::min<long>(ReduceBlock, N - Base));
    const float *__restrict P = In + Base;
#pragma omp simd
    for (int T = 0; T < Lim; ++T)
      S[T] += P[T];
  }
  for (int K = ReduceBlock / 2; K > 32; K >>= 1)
#pragma omp simd
    for (int T = 0; T < K; ++T)
      S[T] += S[T + K];
  float V[32];
#pragma omp simd
  for (int T = 0; T < 32; ++T)
    V[T] = S[T] + S[T + 32];
  for (int Off = 16; Off > 0; Off >>= 1)
    for (int T = 0; T < Off; ++T)
      V[T] += V[T + Off];
  return V[0];
}

} // namespace

void reduceSum(const float *In, float *Partial, float *Out, int N, int Blocks) {
#pragma omp parallel for schedule(static)
  for (int B = 0; B < Blocks; ++B)
    Partial[B] = reduceBlock(In, N, B, Blocks);
  Out[0] = reduceBlock(Partial, Blocks, 0, 1);
}

void sgemmTiled(const float *__restrict A, const float *__restrict B, float *__restrict C, int M, int N, int K) {
  constexpr int Tile = 16;
#pragma omp parallel for collapse(2) schedule(static)
  for (int By = 0; By < M / Tile; ++By)
    for (int Bx = 0; Bx < N / Tile; ++Bx) {
      alignas(64) float As[Tile][Tile], Bs[Tile][Tile], Acc[Tile][Tile] = {};
      const int Row0 = By * Tile, Col0 = Bx * Tile;
      for (int T = 0; T < K; T += Tile) {
        for (int Ty = 0; Ty < Tile; ++Ty)
#pragma omp simd
          for (int Tx = 0; Tx < Tile; ++Tx) {
            As[Ty][Tx] = A[(Row0 + Ty) * K + T + Tx];
            Bs[Ty][Tx] = B[(T + Ty) * N + Col0 + Tx];
          }
        for (int Ty = 0; Ty < Tile; ++Ty)
          for (int Kk = 0; Kk < Tile; ++Kk)
#pragma omp simd
            for (int Tx = 0; Tx < Tile; ++Tx)
              Acc[Ty][Tx] += As[Ty][Kk] * Bs[Kk][Tx];
      }
      for (int Ty = 0; Ty < Tile; ++Ty)
#pragma omp simd
        for (int Tx = 0; Tx < Tile; ++Tx)
          C[(Row0 + Ty) * N + Col0 + Tx] = Acc[Ty][Tx];
    }
}

void transpose(const float *__restrict In, float *__restrict Out, int Width, int Height) {
  constexpr int Tile = 32;
#pragma omp parallel for collapse(2) schedule(static)
  for (int By = 0; By < Height / Tile; ++By)
    for (int Bx = 0; Bx < Width / Tile; ++Bx) {
      float T[Tile][Tile + 1];
      for (int R = 0; R < Tile; ++R)
#pragma omp simd
        for (int C = 0; C < Tile; ++C)
          T[R][C] = In[long(By * Tile + R) * Width + Bx * Tile + C];
      for (int R = 0; R < Tile; ++R)
#pragma omp simd
        for (int C = 0; C < Tile; ++C)
          Out[long(Bx * Tile + R) * Height + By * Tile + C] = T[C][R];
    }
}

void histogram256(const unsigned char *__restrict Data, unsigned *__restrict Hist, int N, int Blocks) {
  constexpr int Block = 256;
  const long Stride = long(Block) * Blocks;
#pragma omp parallel for schedule(static)
  for (int B = 0; B < Blocks; ++B) {
    unsigned Local[256] = {};
    for (long Base = long(B) * Block; Base < N; Base += Stride) {
      int Lim = static_cast<int>(std::min<long>(Block, N - Base));
      for (int T = 0; T < Lim; ++T)
        ++Local[Data[Base + T]];
    }
    for (int T = 0; T < 256; ++T)
      if (Local[T]) {
#pragma omp atomic
        Hist[T] += Local[T];
      }
  }
}

void nbodyStep(const float *__restrict Pos, const float *__restrict Vel, float *__restrict NewPos,
               float *__restrict NewVel, int N, float Dt, float Eps2) {
  constexpr int Block = 256;
#pragma omp parallel for schedule(static)
  for (int B = 0; B < N / Block; ++B) {
    alignas(64) float Px[Block], Py[Block], Pz[Block], Ax[Block] = {}, Ay[Block] = {}, Az[Block] = {};
    alignas(64) float Sh[Block][4];
    for (int T = 0; T < Block; ++T) {
      const float *P = Pos + 4 * (B * Block + T);
      Px[T] = P[0], Py[T] = P[1], Pz[T] = P[2];
    }
    for (int Tile = 0; Tile < N; Tile += Block) {
      for (int J = 0; J < Block; ++J)
        for (int C = 0; C < 4; ++C)
          Sh[J][C] = Pos[4 * (Tile + J) + C];
      for (int J = 0; J < Block; ++J) {
        const float Qx = Sh[J][0], Qy = Sh[J][1], Qz = Sh[J][2], Qw = Sh[J][3];
#pragma omp simd
        for (int T = 0; T < Block; ++T) {
          float Dx = Qx - Px[T], Dy = Qy - Py[T], Dz = Qz - Pz[T];
          float D2 = Dx * Dx + Dy * Dy + Dz * Dz + Eps2;
          float Inv = 1.0f / std::sqrt(D2);
          float S = Qw * Inv * Inv * Inv;
          Ax[T] += Dx * S;
          Ay[T] += Dy * S;
          Az[T] += Dz * S;
        }
      }
    }
    for (int T = 0; T < Block; ++T) {
      int I = B * Block + T;
      const float *P = Pos + 4 * I, *V = Vel + 4 * I;
      float Vx = V[0] + Ax[T] * Dt, Vy = V[1] + Ay[T] * Dt, Vz = V[2] + Az[T] * Dt;
      float *NP = NewPos + 4 * I, *NV = NewVel + 4 * I;
      NP[0] = P[0] + Vx * Dt, NP[1] = P[1] + Vy * Dt, NP[2] = P[2] + Vz * Dt, NP[3] = P[3];
      NV[0] = Vx, NV[1] = Vy, NV[2] = Vz, NV[3] = V[3];
    }
  }
}

namespace {

inline float cnd(float D) {
  const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f, A4 = -1.821255978f, A5 = 1.330274429f,
              RSqrt2Pi = 0.39894228040143267794f;
  float K = 1.0f / (1.0f + 0.2316419f * std::fabs(D));
  float C = RSqrt2Pi * std::exp(-0.5f * D * D) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
  return D > 0.0f ? 1.0f - C : C;
}

} // namespace

void blackScholes(float *__restrict Call, float *__restrict Put, const float *__restrict S, const float *__restrict X,
                  const float *__restrict T, float R, float V, int N) {
#pragma omp parallel for simd schedule(static)
  for (int I = 0; I < N; ++I) {
    float Si = S[I], Xi = X[I], Ti = T[I];
    float SqrtT = std::sqrt(Ti);
    float D1 = (std::log(Si / Xi) + (R + 0.5f * V * V) * Ti) / (V * SqrtT);
    float D2 = D1 - V * SqrtT;
    float C1 = cnd(D1), C2 = cnd(D2);
    float ExpRT = std::exp(-R * Ti);
    Call[I] = Si * C1 - Xi * ExpRT * C2;
    Put[I] = Xi * ExpRT * (1.0f - C2) - Si * (1.0f - C1);
  }
}

void stencil5(const float *__restrict In, float *__restrict Out, int Nx, int Ny, float C0, float C1) {
#pragma omp parallel for schedule(static)
  for (int Y = 0; Y < Ny; ++Y) {
    const float *__restrict Row = In + long(Y) * Nx;
    float *__restrict O = Out + long(Y) * Nx;
    if (Y == 0 || Y == Ny - 1) {
#pragma omp simd
      for (int X = 0; X < Nx; ++X)
        O[X] = Row[X];
      continue;
    }
    O[0] = Row[0];
#pragma omp simd
    for (int X = 1; X < Nx - 1; ++X)
      O[X] = C0 * Row[X] + C1 * (Row[X - 1] + Row[X + 1] + Row[X - Nx] + Row[X + Nx]);
    O[Nx - 1] = Row[Nx - 1];
  }
}

} // namespace ptxforge::bench::native
