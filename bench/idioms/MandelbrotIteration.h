// The escape-time iteration of bench_idioms' mandelbrot kernel, shared by the CUDA kernel (idioms.cu, compiled by
// nvcc) and its native twin (native/IdiomsNative.cpp, compiled by the host compiler), so that both run the same
// float arithmetic from one source.
#pragma once

#ifdef __CUDACC__
#define IDIOMS_HOST_DEVICE __host__ __device__
#else
#define IDIOMS_HOST_DEVICE
#endif

/// Iterations of z <- z^2 + c from z = 0 while |z|^2 < 4, at most MaxIter.
IDIOMS_HOST_DEVICE inline int mandelbrotIterations(float Cr, float Ci, int MaxIter) {
  float Zr = 0.0f, Zi = 0.0f;
  int It = 0;
  while (It < MaxIter && Zr * Zr + Zi * Zi < 4.0f) {
    float T = Zr * Zr - Zi * Zi + Cr;
    Zi = 2.0f * Zr * Zi + Ci;
    Zr = T;
    ++It;
  }
  return It;
}
