// Tiered JIT at the launch: a launch of quick code (thread functions only) takes up the optimized block function
// between blocks once it appears (codegen::TierUp), never inside a block, and never waits for it forever. To
// see which code ran each block, the "optimized" code here is another kernel's: quick code writes 1, the block
// function 2.
#include "ptxforge/codegen/CompiledModule.h"
#include "ptxforge/codegen/Launch.h"
#include "ptxforge/codegen/Lowering.h"
#include "ptxforge/ptx/Frontend.h"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace ptxforge;

namespace {

std::string markKernel(const char *Name, int Value) {
  return std::string(".visible .entry ") + Name +
         "(.param .u64 out)\n{\n .reg .b32 %r<5>;\n .reg .b64 %rd<4>;\n"
         " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %ntid.x;\n"
         " mad.lo.u32 %r4, %r2, %r3, %r1;\n mul.wide.u32 %rd2, %r4, 4;\n add.u64 %rd3, %rd1, %rd2;\n"
         " st.global.u32 [%rd3], " +
         std::to_string(Value) + ";\n ret;\n}\n";
}

const std::string Text =
    ".version 8.0\n.target sm_90\n.address_size 64\n" + markKernel("one", 1) + markKernel("two", 2);

std::unique_ptr<codegen::CompiledModule> compile(bool BlockFunctions) {
  auto Front = ptx::runFrontend(std::make_unique<ptx::SourceBuffer>("tier-up.ptx", Text));
  REQUIRE(Front->ok());
  codegen::LoweringOptions LO;
  LO.BlockFunctions = BlockFunctions;
  auto LM = codegen::lowerToLLVM(*Front->Verified, Front->Source.get(), LO);
  REQUIRE(static_cast<bool>(LM));
  auto CM = codegen::CompiledModule::compile(std::move(*LM));
  REQUIRE(static_cast<bool>(CM));
  return std::move(*CM);
}

constexpr uint32_t Blocks = 65536, Threads = 64;

struct Outcome {
  uint32_t Ones = 0, Twos = 0;
  bool BlocksUniform = true, AllWritten = true;
};

/// Launches quick `one` with Upgrade; Publish (run on a thread of its own with the output) may set it.
Outcome launchQuick(codegen::TierUp &Upgrade, unsigned Workers,
                    std::function<void(const std::vector<uint32_t> &)> Publish = nullptr) {
  static auto Quick = compile(false);
  const codegen::KernelInfo *One = Quick->kernel("one");
  REQUIRE(One != nullptr);
  bool HasBlockFunction = Quick->blockEntry(*One) != nullptr;
  CHECK_FALSE(HasBlockFunction); // quick code
  std::vector<uint32_t> Out(size_t(Blocks) * Threads, 0);
  uint64_t Ptr = reinterpret_cast<uint64_t>(Out.data());
  std::thread Publisher;
  if (Publish)
    Publisher = std::thread([&] { Publish(Out); });
  codegen::LaunchConfig C;
  C.Grid = {Blocks, 1, 1};
  C.Block = {Threads, 1, 1};
  C.Workers = Workers;
  C.Upgrade = &Upgrade;
  CHECK(!llvm::errorToBool(codegen::launchKernel(*Quick, *One, C, &Ptr)));
  if (Publisher.joinable())
    Publisher.join();
  Outcome R;
  for (uint32_t B = 0; B < Blocks; ++B) {
    uint32_t First = Out[size_t(B) * Threads];
    for (uint32_t T = 0; T < Threads; ++T)
      R.BlocksUniform &= Out[size_t(B) * Threads + T] == First;
    R.AllWritten &= First == 1 || First == 2;
    (First == 1 ? R.Ones : R.Twos) += 1;
  }
  return R;
}

codegen::BlockRangeFunction optimizedTwo() {
  static auto Full = compile(true);
  const codegen::KernelInfo *Two = Full->kernel("two");
  REQUIRE(Two != nullptr);
  codegen::BlockRangeFunction F = Full->blockEntry(*Two);
  bool Compiled = F != nullptr;
  REQUIRE(Compiled);
  return F;
}

} // namespace

TEST_CASE("a quick-code launch runs the optimized block function when it is there from the start") {
  codegen::TierUp Upgrade;
  Upgrade.Block = optimizedTwo();
  Outcome R = launchQuick(Upgrade, 2);
  CHECK(R.AllWritten);
  CHECK(R.Twos == Blocks);
}

TEST_CASE("without optimized code a quick-code launch finishes on its own, also with a worker waiting for it") {
  codegen::TierUp Upgrade;
  Upgrade.Compiling = true; // a compile that never ends: the waiting worker must not wait past the grid
  Outcome R = launchQuick(Upgrade, 2);
  CHECK(R.AllWritten);
  CHECK(R.Ones == Blocks);
}

TEST_CASE("optimized code that appears during a launch takes over between blocks") {
  for (unsigned Workers : {1u, 2u}) {
    CAPTURE(Workers);
    codegen::TierUp Upgrade;
    Upgrade.Compiling = true;
    Outcome R = launchQuick(Upgrade, Workers, [&](const std::vector<uint32_t> &Out) {
      // Once the first block is done on the quick code (the launch is under way), publish.
      while (__atomic_load_n(&Out[0], __ATOMIC_RELAXED) == 0)
        std::this_thread::yield();
      Upgrade.Block.store(optimizedTwo(), std::memory_order_release);
      Upgrade.Compiling.store(false, std::memory_order_release);
    });
    CHECK(R.AllWritten);
    CHECK(R.BlocksUniform); // a block runs on one code, start to end
    CHECK(R.Ones > 0);
    CHECK(R.Twos > 0);
  }
}
