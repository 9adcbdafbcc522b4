// driver/include/cuda.h must be ABI-identical to NVIDIA's cuda.h (CUDA 13.0) for everything it declares: the
// same enum and macro values, type sizes and alignments, struct field offsets and entry point types. The probe
// list is generated from our header (AbiProbeList.cmake), so nothing it declares escapes the comparison.
#include "AbiProbe.h"

#include <doctest/doctest.h>

#include <map>

TEST_CASE("our cuda.h describes the layouts programs rely on") {
  AbiFacts Facts = ourCudaHeaderFacts();
  std::map<std::string, std::string> Ours(Facts.begin(), Facts.end());
  CHECK(Ours.size() > 600);
  CHECK(Ours["sizeof CUDA_MEMCPY2D"] == "128");
  CHECK(Ours["sizeof CUDA_MEMCPY3D"] == "200");
  CHECK(Ours["value CUDA_ERROR_ILLEGAL_ADDRESS"] == "700");
  CHECK(Ours["value CU_LAUNCH_PARAM_BUFFER_SIZE"] == "2");
  CHECK(Ours["value CUDA_VERSION"] == "13000");
}

TEST_CASE("our cuda.h is ABI-identical to NVIDIA's") {
#ifndef PTXFORGE_HAVE_NVIDIA_CUDA_H
  MESSAGE("skipped: NVIDIA's cuda.h was not found when configuring (cmake/PtxforgeCudaToolkit.cmake found no CUDA "
          "toolkit)");
#else
  AbiFacts Ours = ourCudaHeaderFacts(), Theirs = nvidiaCudaHeaderFacts();
  REQUIRE(Ours.size() == Theirs.size());
  size_t Mismatches = 0;
  for (size_t I = 0; I < Ours.size(); ++I) {
    REQUIRE(Ours[I].first == Theirs[I].first);
    if (Ours[I].second != Theirs[I].second) {
      ++Mismatches;
      INFO(Ours[I].first << ": ours " << Ours[I].second << ", NVIDIA's " << Theirs[I].second);
      CHECK(Ours[I].second == Theirs[I].second);
    }
  }
  MESSAGE(Ours.size() << " facts compared, " << Mismatches << " differ");
#endif
}
