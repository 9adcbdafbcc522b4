// The driver tests' shared context (one context of device 0 per test process, made on first use), and the
// device memory and launches the tests make in it.
#pragma once

#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Launch.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Module.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace ptxforge::testing {

inline driver::Context &testContext() {
  static driver::Context *C = [] {
    REQUIRE(driver::takeStatus(driver::Driver::get().initialize()) == driver::Status::Success);
    auto Ctx = driver::Driver::get().createContext(0, 0);
    REQUIRE(static_cast<bool>(Ctx));
    return *Ctx;
  }();
  return *C;
}

/// Bytes of zeroed device memory of the test context.
inline uint64_t zeroedDeviceMemory(size_t Bytes) {
  auto P = driver::DeviceMemory::get().allocate(Bytes, driver::MemoryKind::Device, &testContext());
  REQUIRE(static_cast<bool>(P));
  std::memset(reinterpret_cast<void *>(*P), 0, Bytes);
  return *P;
}

/// Launches F with Args (kernelParams) over Threads threads, in blocks of 64, on the legacy stream.
inline llvm::Error launchThreads(driver::Function &F, std::vector<void *> Args, unsigned Threads) {
  auto Params = F.packParams(Args.data());
  if (!Params)
    return Params.takeError();
  codegen::LaunchConfig Config;
  Config.Grid = {(Threads + 63) / 64, 1, 1};
  Config.Block = {std::min(Threads, 64u), 1, 1};
  return driver::launch(testContext(), nullptr, F, Config, std::move(*Params));
}

} // namespace ptxforge::testing
