// What the codegen tests that run generated kernels share: compile a PTX module (its diagnostics in the failure
// message) and launch its kernel `k(ptr..., u32 n)` over n threads in blocks of 128.
#pragma once

#include "ptxforge/codegen/CompiledModule.h"
#include "ptxforge/codegen/Launch.h"
#include "ptxforge/ptx/Frontend.h"

#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace ptxforge::testing {

inline std::unique_ptr<codegen::CompiledModule> compileKernels(const std::string &Name, const std::string &Text) {
  auto Front = ptx::runFrontend(std::make_unique<ptx::SourceBuffer>(Name, Text));
  std::string Diags;
  for (const ptx::Diagnostic &D : Front->Diags.sorted())
    Diags += ptx::formatDiagnostic(*Front->Source, D) + "\n";
  REQUIRE_MESSAGE(Front->ok(), Diags);
  auto CM = codegen::compilePTX(*Front->Verified, Front->Source.get());
  REQUIRE(static_cast<bool>(CM));
  return std::move(*CM);
}

/// Launches `k` with the Pointers, then N, as its parameters.
inline void launchOverN(const codegen::CompiledModule &M, const std::vector<void *> &Pointers, uint32_t N) {
  const codegen::KernelInfo *K = M.kernel("k");
  REQUIRE(K);
  std::vector<char> Params(K->ParamBytes);
  for (size_t I = 0; I < Pointers.size(); ++I)
    std::memcpy(Params.data() + K->Params[I].Offset, &Pointers[I], 8);
  std::memcpy(Params.data() + K->Params.back().Offset, &N, 4);
  codegen::LaunchConfig C;
  C.Grid = {(N + 127) / 128, 1, 1};
  C.Block = {128, 1, 1};
  REQUIRE(!codegen::launchKernel(M, *K, C, Params.data()));
}

} // namespace ptxforge::testing
