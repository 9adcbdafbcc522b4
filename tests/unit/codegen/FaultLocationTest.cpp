// A memory fault names the PTX line:col of the faulting instruction and its thread, in quick code (threads one by
// one) and in optimized code (a block's threads in one vectorized loop: the launch replays the block thread by
// thread), also for code that went through CompiledObject's serialized form, as the compute cache stores it.
#include "ptxforge/codegen/CompiledObject.h"
#include "ptxforge/codegen/Launch.h"
#include "ptxforge/ptx/Frontend.h"

#include <doctest/doctest.h>

#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

using namespace ptxforge;

namespace {

// Thread n-1 stores one page past its element: into the inaccessible page after y's.
const char *const StorePastEnd = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 y, .param .u32 n)
{
	.reg .pred %p<3>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<6>;
	ld.param.u64 %rd1, [y];
	ld.param.u32 %r2, [n];
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mov.u32 %r1, %tid.x;
	mad.lo.s32 %r1, %r3, %r4, %r1;
	setp.ge.u32 %p1, %r1, %r2;
	@%p1 bra DONE;
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
	add.u32 %r5, %r2, -1;
	setp.eq.u32 %p2, %r1, %r5;
	selp.b64 %rd4, 4096, 0, %p2;
	add.s64 %rd3, %rd3, %rd4;
	st.global.u32 [%rd3], %r1;
DONE:
	ret;
}
)";

/// A serialized and reloaded object of StorePastEnd, compiled with or without block functions.
std::unique_ptr<codegen::CompiledModule> reloaded(bool BlockFunctions) {
  auto Front = ptx::runFrontend(std::make_unique<ptx::SourceBuffer>("fault.ptx", StorePastEnd));
  REQUIRE(Front->ok());
  codegen::CompileOptions O;
  O.Lowering.BlockFunctions = BlockFunctions;
  auto Obj = codegen::compilePTXObject(*Front->Verified, Front->Source.get(), O);
  REQUIRE(static_cast<bool>(Obj));
  auto Back = codegen::CompiledObject::deserialize(Obj->serialize());
  REQUIRE(static_cast<bool>(Back));
  auto CM = codegen::CompiledModule::load(*Back);
  REQUIRE(static_cast<bool>(CM));
  return std::move(*CM);
}

} // namespace

TEST_CASE("a memory fault names its PTX line and thread, also in reloaded optimized code") {
  const long Page = sysconf(_SC_PAGESIZE);
  char *Y = static_cast<char *>(mmap(nullptr, 2 * Page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(Y != MAP_FAILED);
  REQUIRE(mprotect(Y + Page, Page, PROT_NONE) == 0);
  const uint32_t N = 300; // blocks of 128: thread 299 is thread 43 of block 2
  for (bool Optimized : {false, true}) {
    CAPTURE(Optimized);
    auto M = reloaded(Optimized);
    const codegen::KernelInfo *K = M->kernel("k");
    REQUIRE(K);
    CHECK(Optimized == !K->BlockSymbol.empty());
    std::vector<char> Params(K->ParamBytes);
    std::memcpy(Params.data() + K->Params[0].Offset, &Y, 8);
    std::memcpy(Params.data() + K->Params[1].Offset, &N, 4);
    codegen::LaunchConfig C;
    C.Grid = {3, 1, 1};
    C.Block = {128, 1, 1};
    codegen::FaultSite Site;
    llvm::Error E = codegen::launchKernel(*M, *K, C, Params.data());
    REQUIRE(static_cast<bool>(E));
    llvm::handleAllErrors(std::move(E), [&](const codegen::LaunchError &LE) {
      CHECK(LE.kind() == codegen::LaunchFault::IllegalAddress);
      Site = LE.site();
    });
    CHECK(Site.Location == "fault.ptx:23:2");
    CHECK(Site.Address == reinterpret_cast<uint64_t>(Y) + 4 * (N - 1) + 4096);
    REQUIRE(Site.HasThread);
    CHECK(Site.Thread[0] == 43);
    CHECK(Site.Block[0] == 2);
    CHECK(Site.Replay ==
          (Optimized ? codegen::FaultSite::ReplayResult::Found : codegen::FaultSite::ReplayResult::None));
  }
  munmap(Y, 2 * Page);
}
