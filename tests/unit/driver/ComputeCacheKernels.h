// The kernel the compute cache tests load and run (in-process tests and compute_cache_worker): out[i] = i * K,
// one module per factor K, checked element by element.
#pragma once

#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Copy.h"
#include "ptxforge/driver/Launch.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Module.h"

#include "TestKernels.h"

#include <string>
#include <vector>

namespace ptxforge::testing {

/// Launches M's `scale` over 1000 elements and checks them; returns what went wrong, empty when all is right.
/// Then, with WaitForOptimizedCode, waits for the kernel's optimized code (tiered JIT), so that the cache holds
/// what the callers count.
inline std::string runScale(driver::Context &Ctx, driver::Module &M, float Factor, bool WaitForOptimizedCode = true) {
  struct Settle {
    driver::Module &M;
    bool Wait;
    ~Settle() {
      if (Wait)
        M.waitForBackgroundCompiles();
    }
  } SettleAtReturn{M, WaitForOptimizedCode};
  using namespace driver;
  Function *F = M.function("scale");
  if (!F)
    return "no kernel 'scale'" + (M.materializeLog().empty() ? "" : ": " + M.materializeLog());
  constexpr uint32_t N = 1000;
  auto Out = DeviceMemory::get().allocate(N * 4, MemoryKind::Device, &Ctx);
  if (!Out)
    return llvm::toString(Out.takeError());
  uint64_t OutPtr = *Out;
  uint32_t Count = N;
  void *Args[] = {&OutPtr, &Count};
  auto Params = F->packParams(Args);
  if (!Params)
    return llvm::toString(Params.takeError());
  codegen::LaunchConfig Config;
  Config.Grid = {(N + 127) / 128, 1, 1};
  Config.Block = {128, 1, 1};
  if (llvm::Error E = launch(Ctx, nullptr, *F, Config, std::move(*Params)))
    return "launch: " + llvm::toString(std::move(E));
  std::vector<float> Host(N);
  CopyRegion R;
  R.Dst = reinterpret_cast<uint64_t>(Host.data()), R.DstSide = Side::Host;
  R.Src = OutPtr, R.SrcSide = Side::Device, R.Width = N * 4;
  if (llvm::Error E = copyMemory(Ctx, nullptr, false, R))
    return "copy: " + llvm::toString(std::move(E));
  llvm::consumeError(DeviceMemory::get().free(OutPtr, {MemoryKind::Device}));
  for (uint32_t I = 0; I < N; ++I)
    if (Host[I] != float(I) * Factor)
      return "wrong result at " + std::to_string(I) + ": " + std::to_string(Host[I]);
  return "";
}

} // namespace ptxforge::testing
