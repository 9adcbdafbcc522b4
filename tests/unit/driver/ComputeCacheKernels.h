// The kernel the compute cache tests load and run (in-process tests and compute_cache_worker): out[i] = i * K,
// one module per factor K, checked element by element.
#pragma once

#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Copy.h"
#include "ptxforge/driver/Launch.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Module.h"

#include <string>
#include <vector>

namespace ptxforge::testing {

/// out[i] = i * Factor for i < n; Factor is a PTX float literal (each factor is another module).
inline std::string scaleModule(const char *Factor) {
  return std::string(R"(.version 7.5
.target sm_75
.address_size 64
.visible .entry scale(.param .u64 p_out, .param .u32 p_n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_out];
  ld.param.u32 %r1, [p_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvt.rn.f32.u32 %f1, %r5;
  mul.f32 %f2, %f1, )") +
         Factor + R"(;
  mul.wide.u32 %rd2, %r5, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.f32 [%rd3], %f2;
DONE:
  ret;
}
)";
}

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
