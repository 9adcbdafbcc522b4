// A memory fault names the PTX line:col of the faulting instruction and its thread, in quick code (threads one by
// one) and in optimized code (a block's threads in one vectorized loop: the launch replays the block thread by
// thread), also for code that went through CompiledObject's serialized form, as the compute cache stores it.
#include "ptxforge/codegen/CompiledObject.h"
#include "ptxforge/codegen/Launch.h"
#include "ptxforge/ptx/Frontend.h"

#include "TestKernels.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <sys/mman.h>
#include <unistd.h>

using namespace ptxforge;

namespace {

/// A serialized and reloaded object of StorePastEndPtx, compiled with or without block functions.
std::unique_ptr<codegen::CompiledModule> reloaded(bool BlockFunctions) {
  auto Front = ptx::runFrontend(std::make_unique<ptx::SourceBuffer>("fault.ptx", testing::StorePastEndPtx));
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

/// "fault.ptx:LINE:COL" of StorePastEndPtx's faulting store.
std::string faultLocation() {
  const std::string &Text = testing::StorePastEndPtx;
  size_t At = Text.find(testing::StorePastEndFault);
  REQUIRE(At != std::string::npos);
  size_t Line = 1 + std::count(Text.begin(), Text.begin() + At, '\n');
  size_t Column = At - Text.rfind('\n', At);
  return "fault.ptx:" + std::to_string(Line) + ":" + std::to_string(Column);
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
    CHECK(Site.Location == faultLocation());
    CHECK(Site.Address == reinterpret_cast<uint64_t>(Y) + 4 * (N - 1) + 4096);
    REQUIRE(Site.HasThread);
    CHECK(Site.Thread[0] == 43);
    CHECK(Site.Block[0] == 2);
    CHECK(Site.Replay ==
          (Optimized ? codegen::FaultSite::ReplayResult::Found : codegen::FaultSite::ReplayResult::None));
  }
  munmap(Y, 2 * Page);
}

// PTXFORGE_PERF_MAP: perf names the JIT's functions from /tmp/perf-PID.map. A region-split kernel runs in its
// block function and region pieces, which are local to the object and not found by a JIT lookup; the map must
// name them too, placed by the exported functions of their section, without overlaps.
TEST_CASE("the perf map names a region-split kernel's block function and region pieces") {
  const std::string Path = "/tmp/perf-" + std::to_string(getpid()) + ".map";
  std::remove(Path.c_str());
  const char *Ptx = ".version 8.0\n.target sm_80\n.address_size 64\n"
                    ".visible .entry k(.param .u64 out)\n{\n .shared .b32 s[128];\n .reg .b32 %r<4>;\n"
                    " .reg .b64 %rd<4>;\n mov.u32 %r1, %tid.x;\n shl.b32 %r2, %r1, 2;\n mov.u32 %r3, s;\n"
                    " add.u32 %r3, %r3, %r2;\n st.shared.u32 [%r3], %r1;\n bar.sync 0;\n ld.shared.u32 %r1, [%r3];\n"
                    " ld.param.u64 %rd1, [out];\n cvt.u64.u32 %rd2, %r2;\n add.u64 %rd3, %rd1, %rd2;\n"
                    " st.global.u32 [%rd3], %r1;\n ret;\n}\n";
  auto Front = ptx::runFrontend(std::make_unique<ptx::SourceBuffer>("perf.ptx", Ptx));
  REQUIRE(Front->ok());
  codegen::CompileOptions O;
  O.Perf = codegen::PerfMap::Symbols;
  auto CM = codegen::compilePTX(*Front->Verified, Front->Source.get(), O);
  REQUIRE(static_cast<bool>(CM));
  std::FILE *F = std::fopen(Path.c_str(), "r");
  REQUIRE(F);
  struct Entry {
    unsigned long long Address, Size;
    std::string Name;
  };
  std::vector<Entry> Entries;
  unsigned long long A, S;
  char Name[512];
  while (std::fscanf(F, "%llx %llx %511s", &A, &S, Name) == 3)
    Entries.push_back({A, S, Name});
  std::fclose(F);
  std::remove(Path.c_str());
  auto named = [&](const char *Prefix) {
    return std::any_of(Entries.begin(), Entries.end(), [&](const Entry &E) { return E.Name.rfind(Prefix, 0) == 0; });
  };
  CHECK(named("__ptx_kernel_k"));
  CHECK(named("__ptx_block_k"));
  CHECK(named("__ptx_piece_k."));
  std::sort(Entries.begin(), Entries.end(), [](const Entry &X, const Entry &Y) { return X.Address < Y.Address; });
  for (size_t I = 0; I + 1 < Entries.size(); ++I) {
    CAPTURE(Entries[I].Name);
    CHECK(Entries[I].Address != 0);
    CHECK(Entries[I].Address + Entries[I].Size <= Entries[I + 1].Address);
  }
}
