// Dynamic parallelism through the core: kernels launch kernels with the device runtime's functions (the PTX nvcc
// 13 emits for `<<<>>>` in device code: `mov.u64` of the child's name, __cudaCDP2GetParameterBufferV2,
// __cudaCDP2LaunchDeviceV2). Children run after their parent and complete before it does; tail launches run
// after the parent's other children; nesting stops at CUDA's depth of 24 with cudaErrorLaunchMaxDepthExceeded.
#include "TestContext.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Launch.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Module.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>

using namespace ptxforge;
using namespace ptxforge::driver;

namespace {

const char *DeviceRuntimeDecls = R"(.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b64 func_retval0) __cudaCDP2GetParameterBufferV2
(.param .b64 f, .param .align 4 .b8 g[12], .param .align 4 .b8 b[12], .param .b32 s);
.extern .func (.param .b32 func_retval0) __cudaCDP2LaunchDeviceV2 (.param .b64 buf, .param .b64 stream);
)";

/// A parameter buffer for a launch of CHILD (BLOCKS x THREADS) into %rd10 (null when there is none); the caller
/// fills it and calls launchCall.
std::string bufferCall(const std::string &Child, unsigned Threads, unsigned Blocks = 1) {
  return "  mov.u64 %rd9, " + Child + R"(;
  {
  .param .b64 p0;
  st.param.b64 [p0], %rd9;
  .param .align 4 .b8 p1[12];
  st.param.b32 [p1], )" +
         std::to_string(Blocks) + R"(;
  st.param.b32 [p1+4], 1;
  st.param.b32 [p1+8], 1;
  .param .align 4 .b8 p2[12];
  st.param.b32 [p2], )" +
         std::to_string(Threads) + R"(;
  st.param.b32 [p2+4], 1;
  st.param.b32 [p2+8], 1;
  .param .b32 p3;
  st.param.b32 [p3], 0;
  .param .b64 r;
  call.uni (r), __cudaCDP2GetParameterBufferV2, (p0, p1, p2, p3);
  ld.param.b64 %rd10, [r];
  }
)";
}

/// Launches the buffer in %rd10 into stream STREAM; the result goes to %r9.
std::string launchCall(unsigned Stream) {
  return R"(  {
  .param .b64 p0;
  st.param.b64 [p0], %rd10;
  .param .b64 p1;
  st.param.b64 [p1], )" +
         std::to_string(Stream) + R"(;
  .param .b32 r;
  call.uni (r), __cudaCDP2LaunchDeviceV2, (p0, p1);
  ld.param.b32 %r9, [r];
  }
)";
}

/// out[1 + ctaid] = a sequence number taken from out[0]; a parent block launches a child into the NULL stream
/// (which records into out[16 + ctaid]) and a tail launch (out[32 + ctaid]).
std::string orderingModule() {
  std::string Record = R"(
.visible .entry record(.param .u64 p_out, .param .u32 p_slot)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_out];
  ld.param.u32 %r1, [p_slot];
  atom.global.add.u32 %r2, [%rd1], 1;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
)";
  auto launchRecord = [](unsigned SlotBase, unsigned Stream) {
    return bufferCall("record", 1) + "  setp.eq.s64 %p1, %rd10, 0;\n  @%p1 bra SKIP" + std::to_string(SlotBase) +
           ";\n  st.u64 [%rd10], %rd1;\n  add.s32 %r3, %r1, " + std::to_string(SlotBase) +
           ";\n  st.u32 [%rd10+8], %r3;\n" + launchCall(Stream) + "SKIP" + std::to_string(SlotBase) + ":\n";
  };
  return std::string(DeviceRuntimeDecls) + Record + R"(
.visible .entry parent(.param .u64 p_out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<11>;
  ld.param.u64 %rd1, [p_out];
  mov.u32 %r1, %ctaid.x;
)" + launchRecord(32, 3) +
         launchRecord(16, 0) + R"(  atom.global.add.u32 %r2, [%rd1], 1;
  add.s32 %r4, %r1, 1;
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
)";
}

/// rec(out, depth): out[depth] = 1, then launches rec(out, depth + 1) and stores what the launch returned at
/// out[32 + depth].
std::string recursionModule() {
  return std::string(DeviceRuntimeDecls) + R"(
.visible .entry rec(.param .u64 p_out, .param .u32 p_depth)
{
  .reg .pred %p<2>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<11>;
  ld.param.u64 %rd1, [p_out];
  ld.param.u32 %r1, [p_depth];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  mov.u32 %r2, 1;
  st.global.u32 [%rd3], %r2;
  mov.u32 %r9, -1;
)" + bufferCall("rec", 1) +
         R"(  setp.eq.s64 %p1, %rd10, 0;
  @%p1 bra DONE;
  st.u64 [%rd10], %rd1;
  add.s32 %r3, %r1, 1;
  st.u32 [%rd10+8], %r3;
)" + launchCall(0) +
         R"(DONE:
  st.global.u32 [%rd3+128], %r9;
  ret;
}
)";
}

/// nsmid(out): out[0] = %nsmid (the launch's worker count); coop(out): block 0 launches nsmid(out) with 64 blocks.
std::string workersModule() {
  return std::string(DeviceRuntimeDecls) + R"(
.visible .entry nsmid(.param .u64 p_out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p_out];
  mov.u32 %r1, %nsmid;
  st.global.u32 [%rd1], %r1;
  ret;
}
.visible .entry coop(.param .u64 p_out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<11>;
  ld.param.u64 %rd1, [p_out];
  mov.u32 %r1, %ctaid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
)" + bufferCall("nsmid", 1, 64) +
         R"(  setp.eq.s64 %p1, %rd10, 0;
  @%p1 bra DONE;
  st.u64 [%rd10], %rd1;
)" + launchCall(0) +
         R"(DONE:
  ret;
}
)";
}

struct Buffer {
  uint64_t Address = 0;
  explicit Buffer(size_t Bytes) {
    auto P = DeviceMemory::get().allocate(Bytes, MemoryKind::Device, &testing::testContext());
    REQUIRE(static_cast<bool>(P));
    Address = *P;
    std::memset(reinterpret_cast<void *>(Address), 0, Bytes);
  }
  ~Buffer() { CHECK(takeStatus(DeviceMemory::get().free(Address, {MemoryKind::Device})) == Status::Success); }
  uint32_t operator[](size_t I) const { return reinterpret_cast<const uint32_t *>(Address)[I]; }
};

Function &kernel(const std::string &Ptx, const char *Name, std::unique_ptr<Module> &Holder) {
  JitLogs Logs;
  auto M = Module::compile(testing::testContext(), Ptx, std::string(Name) + ".ptx", {}, Logs);
  INFO(Logs.Error);
  REQUIRE(static_cast<bool>(M));
  Holder = std::move(*M);
  Function *F = Holder->function(Name);
  REQUIRE(F);
  return *F;
}

void launchAndWait(Function &F, void **Args, unsigned Blocks, LaunchKind Kind = LaunchKind::Normal) {
  Context &Ctx = testing::testContext();
  codegen::LaunchConfig Config;
  Config.Grid = {Blocks, 1, 1};
  Config.Block = {1, 1, 1};
  auto Params = F.packParams(Args);
  REQUIRE(static_cast<bool>(Params));
  REQUIRE(takeStatus(launch(Ctx, nullptr, F, Config, std::move(*Params), Kind)) == Status::Success);
  Ctx.waitIdle();
  REQUIRE(takeStatus(Driver::get().checkSticky()) == Status::Success);
}

} // namespace

TEST_CASE("device-side launches: every child and tail launch runs, after its parent's work, tails last") {
  std::unique_ptr<Module> M;
  Function &Parent = kernel(orderingModule(), "parent", M);
  constexpr unsigned Blocks = 8;
  Buffer Out(4 * 64);
  uint64_t Address = Out.Address;
  void *Args[] = {&Address};
  launchAndWait(Parent, Args, Blocks);
  CHECK(Out[0] == 3 * Blocks); // every parent block, child and tail launch took a number
  uint32_t LastChild = 0, FirstTail = ~0u;
  for (unsigned B = 0; B < Blocks; ++B) {
    // A child runs after the grid that launched it (the GPU may overlap them; ptxforge runs it after).
    CHECK(Out[16 + B] > Out[1 + B]);
    LastChild = std::max(LastChild, Out[16 + B]);
    FirstTail = std::min(FirstTail, Out[32 + B]);
  }
  CHECK(FirstTail > LastChild); // tail launches wait for all of the grid's other work
}

TEST_CASE("device-side launches nest 24 grids deep; the 25th is cudaErrorLaunchMaxDepthExceeded") {
  std::unique_ptr<Module> M;
  Function &Rec = kernel(recursionModule(), "rec", M);
  Buffer Out(4 * 64);
  uint64_t Address = Out.Address;
  uint32_t Depth = 0;
  void *Args[] = {&Address, &Depth};
  launchAndWait(Rec, Args, 1);
  for (unsigned D = 0; D < 24; ++D)
    CHECK(Out[D] == 1);
  CHECK(Out[24] == 0);
  for (unsigned D = 0; D < 23; ++D)
    CHECK(Out[32 + D] == 0); // cudaSuccess
  CHECK(Out[32 + 23] == 65); // cudaErrorLaunchMaxDepthExceeded
}

TEST_CASE("a cooperative grid's children run on the usual workers, not on one per parent block") {
  std::unique_ptr<Module> M;
  Function &Coop = kernel(workersModule(), "coop", M);
  Function *Nsmid = M->function("nsmid");
  REQUIRE(Nsmid);
  Buffer Host(4), Device(4);
  uint64_t HostAddress = Host.Address, DeviceAddress = Device.Address;
  void *HostArgs[] = {&HostAddress};
  launchAndWait(*Nsmid, HostArgs, 64); // the workers a host launch of 64 blocks gets
  uint64_t Resident = uint64_t(Coop.activeBlocksPerMultiprocessor(1, 0)) * deviceProperties().MultiprocessorCount;
  unsigned Blocks = static_cast<unsigned>(std::min<uint64_t>(Resident, Host[0] + 3)); // more blocks than workers
  void *DeviceArgs[] = {&DeviceAddress};
  launchAndWait(Coop, DeviceArgs, Blocks, LaunchKind::Cooperative);
  CHECK(Device[0] == Host[0]);
}
