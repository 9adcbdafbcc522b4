// Cooperative launches through the core: every block of the grid is resident at once, so blocks can wait for
// each other through global memory (a normal launch of more blocks than workers would never finish this
// kernel), and a grid larger than the device holds at once is refused with CooperativeLaunchTooLarge.
#include "TestContext.h"
#include "TestKernels.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Copy.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Launch.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Module.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

using namespace ptxforge;
using namespace ptxforge::driver;

using ptxforge::testing::testContext;

TEST_CASE("a cooperative grid runs all of its blocks at once; one too large is refused") {
  Context &Ctx = testContext();
  JitLogs Logs;
  auto M = Module::compile(Ctx, testing::GridBarrierPtx, "grid_barrier.ptx", {}, Logs);
  INFO(Logs.Error);
  REQUIRE(static_cast<bool>(M));
  Function *F = (*M)->function("grid_barrier");
  REQUIRE(F);
  uint64_t Resident = uint64_t(F->activeBlocksPerMultiprocessor(32, 0)) * deviceProperties().MultiprocessorCount;
  // More blocks than multiprocessors (= launch workers): only co-residency lets them all arrive.
  unsigned Blocks = static_cast<unsigned>(std::min<uint64_t>(Resident, 2 * deviceProperties().MultiprocessorCount + 1));
  REQUIRE(Blocks > 1);

  uint64_t Counter = testing::zeroedDeviceMemory(4), Out = testing::zeroedDeviceMemory(4 * Blocks);
  void *Args[] = {&Counter, &Out};
  codegen::LaunchConfig Config;
  Config.Grid = {Blocks, 1, 1};
  Config.Block = {32, 1, 1};
  auto Params = F->packParams(Args);
  REQUIRE(static_cast<bool>(Params));
  REQUIRE(takeStatus(launch(Ctx, nullptr, *F, Config, std::move(*Params), LaunchKind::Cooperative)) == Status::Success);
  std::vector<uint32_t> Seen(Blocks);
  CopyRegion R;
  R.Dst = reinterpret_cast<uint64_t>(Seen.data()), R.DstSide = Side::Host;
  R.Src = Out, R.SrcSide = Side::Device, R.Width = 4 * Blocks;
  REQUIRE(takeStatus(copyMemory(Ctx, nullptr, false, R)) == Status::Success);
  for (unsigned B = 0; B < Blocks; ++B)
    CHECK(Seen[B] == Blocks);

  Config.Grid = {static_cast<uint32_t>(Resident + 1), 1, 1};
  auto More = F->packParams(Args);
  REQUIRE(static_cast<bool>(More));
  CHECK(takeStatus(launch(Ctx, nullptr, *F, Config, std::move(*More), LaunchKind::Cooperative)) ==
        Status::CooperativeLaunchTooLarge);
  for (uint64_t P : {Counter, Out})
    CHECK(takeStatus(DeviceMemory::get().free(P, {MemoryKind::Device})) == Status::Success);
}

TEST_CASE("cooperative groups' grid.sync() (nvcc's PTX) waits for every block of a cooperative launch") {
  Context &Ctx = testContext();
  // inputs/grid_sync.cu, `nvcc -ptx -arch=compute_80`: every thread adds data[i] to out[0]; after the grid
  // sync, thread 0 copies out[0] to out[1], so out[1] is the whole sum only if the sync waited for all blocks.
  std::string Path = std::string(PTXFORGE_SOURCE_DIR) + "/tests/unit/driver/inputs/grid_sync.ptx";
  std::ifstream In(Path);
  REQUIRE(In.good());
  std::string Ptx((std::istreambuf_iterator<char>(In)), std::istreambuf_iterator<char>());
  JitLogs Logs;
  auto M = Module::compile(Ctx, Ptx, Path, {}, Logs);
  INFO(Logs.Error);
  REQUIRE(static_cast<bool>(M));
  Function *F = (*M)->function("gsum");
  REQUIRE(F);
  uint64_t Resident = uint64_t(F->activeBlocksPerMultiprocessor(64, 0)) * deviceProperties().MultiprocessorCount;
  unsigned Blocks = static_cast<unsigned>(std::min<uint64_t>(Resident, 2 * deviceProperties().MultiprocessorCount + 1));
  REQUIRE(Blocks > 1);
  int N = static_cast<int>(Blocks * 64);
  uint64_t Data = testing::zeroedDeviceMemory(4 * N), Out = testing::zeroedDeviceMemory(8);
  for (int I = 0; I < N; ++I)
    reinterpret_cast<int *>(Data)[I] = I + 1;
  void *Args[] = {&Data, &Out, &N};
  codegen::LaunchConfig Config;
  Config.Grid = {Blocks, 1, 1};
  Config.Block = {64, 1, 1};
  auto Params = F->packParams(Args);
  REQUIRE(static_cast<bool>(Params));
  REQUIRE(takeStatus(launch(Ctx, nullptr, *F, Config, std::move(*Params), LaunchKind::Cooperative)) == Status::Success);
  Ctx.waitIdle();
  REQUIRE(takeStatus(Driver::get().checkSticky()) == Status::Success);
  const int *Result = reinterpret_cast<const int *>(Out);
  int Sum = N * (N + 1) / 2;
  CHECK(Result[0] == Sum);
  CHECK(Result[1] == Sum);
  for (uint64_t P : {Data, Out})
    CHECK(takeStatus(DeviceMemory::get().free(P, {MemoryKind::Device})) == Status::Success);
}
