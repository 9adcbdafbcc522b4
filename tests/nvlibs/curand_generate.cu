// cuRAND's device generators (XORWOW, Philox4_32_10: uniform and normal floats) against the host generator of
// the same library, which runs the same algorithms on the CPU and gives the same sequence.
#include "NvlibsCheck.h"

#include <curand.h>
#include <vector>

namespace {
constexpr size_t N = 4096;

void generate(curandGenerator_t G, bool Normal, float *Out) {
  CHECK_STATUS(curandSetPseudoRandomGeneratorSeed(G, 1234ULL), CURAND_STATUS_SUCCESS);
  if (Normal)
    CHECK_STATUS(curandGenerateNormal(G, Out, N, 1.0f, 2.0f), CURAND_STATUS_SUCCESS);
  else
    CHECK_STATUS(curandGenerateUniform(G, Out, N), CURAND_STATUS_SUCCESS);
}

void check(curandRngType_t Type, const char *Name, bool Normal) {
  float *Device;
  CHECK_CUDA(cudaMalloc(&Device, N * sizeof(float)));
  curandGenerator_t G, H;
  CHECK_STATUS(curandCreateGenerator(&G, Type), CURAND_STATUS_SUCCESS);
  generate(G, Normal, Device);
  std::vector<float> Got(N), Want(N);
  CHECK_CUDA(cudaMemcpy(Got.data(), Device, N * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_STATUS(curandCreateGeneratorHost(&H, Type), CURAND_STATUS_SUCCESS);
  generate(H, Normal, Want.data());
  char What[64];
  std::snprintf(What, sizeof What, "%s %s", Name, Normal ? "normal" : "uniform");
  // The device's and the host's log/sqrt/sincos may differ in the last bits.
  expectClose(What, Got.data(), Want.data(), N, Normal ? 1e-5 : 0.0);
  CHECK_STATUS(curandDestroyGenerator(G), CURAND_STATUS_SUCCESS);
  CHECK_STATUS(curandDestroyGenerator(H), CURAND_STATUS_SUCCESS);
  CHECK_CUDA(cudaFree(Device));
}
} // namespace

int main() {
  for (bool Normal : {false, true}) {
    check(CURAND_RNG_PSEUDO_XORWOW, "XORWOW", Normal);
    check(CURAND_RNG_PSEUDO_PHILOX4_32_10, "Philox4_32_10", Normal);
  }
  return 0;
}
