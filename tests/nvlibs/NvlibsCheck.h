// Helpers the nvlibs test programs share: stop at the first failing call (naming it and its status), and
// compare device results with host references.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define CHECK_STATUS(Call, Ok)                                                                                         \
  do {                                                                                                                 \
    int Status_ = static_cast<int>(Call);                                                                              \
    if (Status_ != static_cast<int>(Ok)) {                                                                             \
      std::printf("FAIL %s:%d: %s returned %d\n", __FILE__, __LINE__, #Call, Status_);                                 \
      std::exit(1);                                                                                                    \
    }                                                                                                                  \
  } while (0)
#define CHECK_CUDA(Call) CHECK_STATUS(Call, cudaSuccess)

/// Prints "<what>: ok" when every |Got[i] - Want[i]| <= Tolerance * max(1, |Want[i]|), else the first mismatch
/// and exits 1.
template <class T, class U>
void expectClose(const char *What, const T *Got, const U *Want, size_t N, double Tolerance) {
  for (size_t I = 0; I < N; ++I) {
    double G = double(Got[I]), W = double(Want[I]);
    if (!(std::fabs(G - W) <= Tolerance * std::fmax(1.0, std::fabs(W)))) {
      std::printf("FAIL %s: element %zu is %.9g, expected %.9g\n", What, I, G, W);
      std::exit(1);
    }
  }
  std::printf("%s: ok\n", What);
}
