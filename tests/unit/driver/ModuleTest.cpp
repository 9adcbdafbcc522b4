// Loading modules through the core: PTX text and its diagnostics, images that are not PTX, targets above the
// device, globals as device memory, and a launch on the legacy stream.
#include "ptxforge/driver/Module.h"
#include "TestContext.h"
#include "TestKernels.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Copy.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Launch.h"
#include "ptxforge/driver/Memory.h"

#include <doctest/doctest.h>

#include <cstring>
#include <sys/mman.h>

using namespace ptxforge;
using namespace ptxforge::driver;

namespace {

using ptxforge::testing::ScaleByParamPtx;
using ptxforge::testing::testContext;

llvm::Expected<std::unique_ptr<Module>> compile(const std::string &Ptx, JitLogs &Logs, JitOptions Options = {}) {
  return Module::compile(testContext(), Ptx, "test.ptx", Options, Logs);
}

Status loadStatus(const std::string &Ptx, JitLogs &Logs, JitOptions Options = {}) {
  auto M = compile(Ptx, Logs, Options);
  return M ? Status::Success : takeStatus(M.takeError());
}

} // namespace

TEST_CASE("a module compiles, exposes its kernel and globals, and runs") {
  Context &Ctx = testContext();
  JitLogs Logs;
  JitOptions Options;
  Options.Verbose = true;
  auto M = compile(ScaleByParamPtx, Logs, Options);
  REQUIRE(static_cast<bool>(M));
  CHECK(Logs.Error.empty());
  CHECK(Logs.Info.find("1 kernel(s)") != std::string::npos);
  Function *F = (*M)->function("scale");
  REQUIRE(F);
  CHECK((*M)->function("nope") == nullptr);
  CHECK(F->info().ParamBytes == 16);
  auto G = (*M)->global("calls");
  REQUIRE(G);
  CHECK(G->Size == 4);
  CHECK(*reinterpret_cast<const uint32_t *>(G->Address) == 5);
  CHECK(DeviceMemory::get().find(G->Address)->Kind == MemoryKind::ModuleGlobal);

  auto Out = DeviceMemory::get().allocate(1000 * 4, MemoryKind::Device, &Ctx);
  REQUIRE(static_cast<bool>(Out));
  uint64_t OutPtr = *Out;
  float A = 0.5f;
  uint32_t N = 1000;
  void *Args[] = {&OutPtr, &A, &N};
  auto Params = F->packParams(Args);
  REQUIRE(static_cast<bool>(Params));
  codegen::LaunchConfig Config;
  Config.Grid = {8, 1, 1};
  Config.Block = {128, 1, 1};
  CHECK(takeStatus(launch(Ctx, nullptr, *F, Config, std::move(*Params))) == Status::Success);
  std::vector<float> Host(1000);
  CopyRegion R;
  R.Dst = reinterpret_cast<uint64_t>(Host.data()), R.DstSide = Side::Host;
  R.Src = OutPtr, R.SrcSide = Side::Device, R.Width = 4000;
  CHECK(takeStatus(copyMemory(Ctx, nullptr, false, R)) == Status::Success);
  CHECK(Host[0] == 0.0f);
  CHECK(Host[999] == 499.5f);

  Config.Block = {2048, 1, 1};
  CHECK(takeStatus(F->checkLaunch(Config)) == Status::InvalidValue);
  Config.Block = {32, 1, 1};
  Config.Grid = {1, 65536, 1};
  CHECK(takeStatus(F->checkLaunch(Config)) == Status::InvalidValue);
  Config.Grid = {1, 1, 1};
  Config.DynamicSharedBytes = 200 * 1024;
  CHECK(takeStatus(F->checkLaunch(Config)) == Status::InvalidValue);
  CHECK(takeStatus(F->setMaxDynamicSharedBytes(200 * 1024)) == Status::Success);
  CHECK(takeStatus(F->checkLaunch(Config)) == Status::Success);
  CHECK(takeStatus(F->packParams(nullptr).takeError()) == Status::InvalidValue);
  CHECK(takeStatus(DeviceMemory::get().free(OutPtr, {MemoryKind::Device})) == Status::Success);
}

TEST_CASE("front-end errors are InvalidPtx with the diagnostics in the error log") {
  JitLogs Logs;
  std::string Bad = ScaleByParamPtx;
  Bad.replace(Bad.find("%r5, %r1;"), 9, "%r5, %q7;");
  CHECK(loadStatus(Bad, Logs) == Status::InvalidPtx);
  CHECK(Logs.Error.find("test.ptx:") != std::string::npos);
  CHECK(Logs.Error.find("%q7") != std::string::npos);
}

TEST_CASE("an unknown PTX ISA version is UnsupportedPtxVersion") {
  JitLogs Logs;
  std::string Bad = ScaleByParamPtx;
  Bad.replace(Bad.find("7.5"), 3, "99.9");
  CHECK(loadStatus(Bad, Logs) == Status::UnsupportedPtxVersion);
  CHECK(!Logs.Error.empty());
}

TEST_CASE("a .target above the device (or the JIT target) is InvalidPtx") {
  JitLogs Logs;
  std::string Newer = ScaleByParamPtx;
  Newer.replace(Newer.find("sm_75"), 5, "sm_100");
  Newer.replace(Newer.find("7.5"), 3, "8.6");
  JitOptions Hopper; // the default device (13.0) runs sm_100
  Hopper.TargetCc = 90;
  CHECK(loadStatus(Newer, Logs, Hopper) == Status::InvalidPtx);
  CHECK(Logs.Error.find("sm_100") != std::string::npos);
  JitOptions Old;
  Old.TargetCc = 70;
  JitLogs Logs2;
  CHECK(loadStatus(ScaleByParamPtx, Logs2, Old) == Status::InvalidPtx);
}

TEST_CASE("images are told apart by their first bytes") {
  JitLogs Logs;
  ModuleSource Garbage;
  Garbage.Image = "this is not PTX at all";
  CHECK(takeStatus(selectPtx(Garbage, 90, Logs).takeError()) == Status::InvalidImage);
  const uint32_t Wrapper[6] = {0x466243b1, 1, 0, 0, 0, 0};
  ModuleSource W;
  W.Image = Wrapper;
  CHECK(takeStatus(selectPtx(W, 90, Logs).takeError()) == Status::InvalidImage);
  ModuleSource Ptx;
  Ptx.Image = "// a comment\n  .version 8.0\n";
  auto S = selectPtx(Ptx, 90, Logs);
  REQUIRE(static_cast<bool>(S));
  CHECK(S->Text.find(".version") != std::string::npos);
  ModuleSource Missing;
  Missing.K = ModuleSource::Kind::File;
  Missing.Path = "/definitely/not/here.ptx";
  CHECK(takeStatus(selectPtx(Missing, 90, Logs).takeError()) == Status::FileNotFound);
}

TEST_CASE("fatbinaries from shared/fatbins select PTX as NVIDIA's loader would") {
  JitLogs Logs;
  auto Select = [&](const char *Name) {
    ModuleSource S;
    S.K = ModuleSource::Kind::File;
    S.Path = std::string(PTXFORGE_SHARED_DIR) + "/fatbins/" + Name;
    return selectPtx(S, 90, Logs);
  };
  auto A = Select("fb_sm75_sm90_default.fatbin");
  REQUIRE(static_cast<bool>(A));
  CHECK(A->Text.find(".target sm_90") != std::string::npos);
  CHECK(takeStatus(Select("fb_sass_only_sm90.fatbin").takeError()) == Status::NoBinaryForGpu);
  CHECK(takeStatus(Select("fb_sel_d_cp100.fatbin").takeError()) == Status::NoBinaryForGpu);
}

TEST_CASE("a container whose header overstates its size is an invalid image, not a crash") {
  // The header sits at the end of a page followed by an inaccessible one; it claims a 1 MiB payload.
  char *Pages = static_cast<char *>(mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(Pages != MAP_FAILED);
  REQUIRE(mprotect(Pages + 4096, 4096, PROT_NONE) == 0);
  unsigned char *H = reinterpret_cast<unsigned char *>(Pages + 4096 - 16);
  const uint32_t Magic = 0xBA55ED50;
  const uint16_t Version = 1, HeaderSize = 16;
  const uint64_t Payload = 1 << 20;
  std::memcpy(H, &Magic, 4);
  std::memcpy(H + 4, &Version, 2);
  std::memcpy(H + 6, &HeaderSize, 2);
  std::memcpy(H + 8, &Payload, 8);
  JitLogs Logs;
  ModuleSource S;
  S.Image = H;
  CHECK(takeStatus(selectPtx(S, 90, Logs).takeError()) == Status::InvalidImage);
  munmap(Pages, 8192);
}
