// cuLink* through the core: several PTX inputs (nvcc -rdc=true output checked in under inputs/, made from the
// .cu files there) with extern functions, globals and constants across modules, in any input order; internal
// names that collide; weak definitions; unresolved and multiply defined symbols. The *.rdc.fatbin inputs are
// relocatable fatbinaries, what an -rdc=true executable keeps in `__nv_relfatbin`:
// `nvcc -fatbin -rdc=true -gencode arch=compute_75,code=compute_75 link_X.cu -o link_X.rdc.fatbin`, and
// rdc_sass_only.rdc.fatbin the same with `-gencode arch=compute_90,code=sm_90` (SASS only).
#include "ptxforge/driver/Link.h"
#include "TestContext.h"
#include "TestKernels.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Copy.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Launch.h"
#include "ptxforge/driver/Memory.h"

#include <doctest/doctest.h>

#include "llvm/Support/MemoryBuffer.h"

#include <cstring>

using namespace ptxforge;
using namespace ptxforge::driver;
using namespace ptxforge::testing;

namespace {

std::string input(const char *Name) {
  auto B = llvm::MemoryBuffer::getFile(std::string(PTXFORGE_DRIVER_TEST_INPUTS) + "/" + Name);
  REQUIRE(static_cast<bool>(B));
  return (*B)->getBuffer().str();
}

/// Links the named inputs; the status of the first failing step, and the image on success.
Status link(const std::vector<std::pair<std::string, std::string>> &Ptx, std::string &Image, JitLogs &Logs) {
  Linker L({});
  for (const auto &[Name, Text] : Ptx)
    if (Status S = takeStatus(L.addPtx(Text, Name, Logs)); S != Status::Success)
      return S;
  auto Out = L.complete(Logs);
  if (!Out)
    return takeStatus(Out.takeError());
  Image = Out->rtrim('\0').str(); // the image is NUL-terminated, as cuModuleLoadData wants it
  return Status::Success;
}

std::unique_ptr<Module> load(const std::string &Image) {
  JitLogs Logs;
  auto M = Module::compile(testContext(), Image, "linked", {}, Logs);
  INFO(Logs.Error);
  REQUIRE(static_cast<bool>(M));
  return std::move(*M);
}

template <class T> std::vector<T> readBack(uint64_t Ptr, size_t N) {
  std::vector<T> Host(N);
  CopyRegion R;
  R.Dst = reinterpret_cast<uint64_t>(Host.data()), R.DstSide = Side::Host;
  R.Src = Ptr, R.SrcSide = Side::Device, R.Width = N * sizeof(T);
  REQUIRE(takeStatus(copyMemory(testContext(), nullptr, false, R)) == Status::Success);
  return Host;
}

void run(Module &M, const char *Kernel, std::vector<void *> Args, unsigned Threads) {
  Function *F = M.function(Kernel);
  REQUIRE(F);
  REQUIRE(takeStatus(launchThreads(*F, std::move(Args), Threads)) == Status::Success);
}

/// Runs link_kernel of a link of link_{main,lib,const}.ptx and checks what each extern contributed.
void checkLinkedKernel(Module &M) {
  const int N = 100;
  uint64_t Out = zeroedDeviceMemory(N * 4), FOut = zeroedDeviceMemory(N * 4), Count = zeroedDeviceMemory(4);
  int NArg = N;
  run(M, "link_kernel", {&Out, &FOut, &NArg}, N);
  run(M, "read_counter", {&Count}, 1);
  std::vector<int> I = readBack<int>(Out, N);
  std::vector<float> F = readBack<float>(FOut, N);
  for (int K : {0, 1, 57, 99}) {
    // add_bias(helper_main(k)) + g_bias = (2k + 100 + counter_lib (1000) + g_bias) + g_bias
    CHECK(I[K] == 2 * K + 100 + 1000 + 7 + 7);
    CHECK(F[K] == K * 2.5f + 2.5f); // scaled(k) + c_scale
  }
  // link_main's internal counter counted the threads; link_lib's (1000) is another variable.
  CHECK(readBack<int>(Count, 1)[0] == N);
  auto G = M.global("g_bias");
  REQUIRE(G);
  CHECK(*reinterpret_cast<const int *>(G->Address) == 7);
  auto C = M.global("c_scale");
  REQUIRE(C);
  CHECK(*reinterpret_cast<const float *>(C->Address) == 2.5f);
  for (uint64_t P : {Out, FOut, Count})
    CHECK(takeStatus(DeviceMemory::get().free(P, {MemoryKind::Device})) == Status::Success);
}

} // namespace

TEST_CASE("three -rdc modules link: extern functions, globals and constants resolve across them") {
  std::string Image;
  JitLogs Logs;
  REQUIRE(link({{"link_main.ptx", input("link_main.ptx")},
                {"link_lib.ptx", input("link_lib.ptx")},
                {"link_const.ptx", input("link_const.ptx")}},
               Image, Logs) == Status::Success);
  CHECK(Logs.Error.empty());
  checkLinkedKernel(*load(Image));
}

TEST_CASE("the order of link inputs does not matter") {
  std::string Image;
  JitLogs Logs;
  REQUIRE(link({{"link_const.ptx", input("link_const.ptx")},
                {"link_lib.ptx", input("link_lib.ptx")},
                {"link_main.ptx", input("link_main.ptx")}},
               Image, Logs) == Status::Success);
  checkLinkedKernel(*load(Image));
}

TEST_CASE("unresolved externs fail the link with Unknown, each named in the error log") {
  std::string Image;
  JitLogs Logs;
  CHECK(link({{"link_main.ptx", input("link_main.ptx")}, {"link_lib.ptx", input("link_lib.ptx")}}, Image, Logs) ==
        Status::Unknown);
  CHECK(Logs.Error.find("Undefined reference to '_Z6scaledf' in 'link_main.ptx'") != std::string::npos);
  CHECK(Logs.Error.find("Undefined reference to 'c_scale' in 'link_main.ptx'") != std::string::npos);
  CHECK(Logs.Error.find("g_bias") == std::string::npos);

  JitLogs Alone;
  CHECK(link({{"link_main.ptx", input("link_main.ptx")}}, Image, Alone) == Status::Unknown);
  CHECK(Alone.Error.find("'_Z8add_biasi'") != std::string::npos);
}

TEST_CASE("two definitions of a visible symbol fail the link") {
  std::string Image;
  JitLogs Logs;
  CHECK(link({{"a.ptx", input("link_lib.ptx")}, {"b.ptx", input("link_lib.ptx")}}, Image, Logs) == Status::Unknown);
  CHECK(Logs.Error.find("Multiple definition of 'g_bias' in 'b.ptx', first defined in 'a.ptx'") != std::string::npos);
  CHECK(Logs.Error.find("Multiple definition of '_Z8add_biasi'") != std::string::npos);
}

TEST_CASE("relocatable fatbinaries link under the names given; one without PTX is named and left out") {
  // nvcc -fatbin -rdc=true output of the three units, and one unit with relocatable SASS only (what
  // libcudadevrt is for most GPUs): it fails to add, and what it said must not fail the link after it.
  std::vector<std::string> Units = {input("rdc_sass_only.rdc.fatbin"), input("link_main.rdc.fatbin"),
                                    input("link_lib.rdc.fatbin"), input("link_const.rdc.fatbin")};
  Linker L({});
  JitLogs Logs;
  std::vector<std::string> Names = {"sass_only.o", "main.o", "lib.o", "const.o"};
  for (size_t I = 0; I < Units.size(); ++I) {
    ModuleSource Source;
    Source.Image = Units[I].data();
    CHECK(takeStatus(L.addImage(Source, Names[I], Logs)) == (I ? Status::Success : Status::NoBinaryForGpu));
  }
  CHECK(Logs.Error.rfind("sass_only.o: ptxforge: ", 0) == 0);
  auto Image = L.complete(Logs);
  REQUIRE(static_cast<bool>(Image));
  checkLinkedKernel(*load(Image->rtrim('\0').str()));

  Linker Missing({});
  JitLogs MissingLogs;
  for (size_t I : {1, 2}) {
    ModuleSource Source;
    Source.Image = Units[I].data();
    REQUIRE(takeStatus(Missing.addImage(Source, Names[I], MissingLogs)) == Status::Success);
  }
  CHECK(takeStatus(Missing.complete(MissingLogs).takeError()) == Status::Unknown);
  CHECK(MissingLogs.Error.find("Undefined reference to 'c_scale' in 'main.o'") != std::string::npos);
}

TEST_CASE("the link keeps what the kernels reach: a function nothing reaches may call what nothing defines") {
  std::string Image;
  JitLogs Logs;
  REQUIRE(link({{"main.ptx", LinkReachMainPtx}, {"lib.ptx", LinkReachLibPtx}}, Image, Logs) == Status::Success);
  CHECK(Logs.Error.empty());
  CHECK(Image.find("unreached") == std::string::npos);
  CHECK(Image.find("malloc") == std::string::npos);
  auto M = load(Image);
  uint64_t Out = zeroedDeviceMemory(4);
  run(*M, "twice", {&Out}, 1);
  CHECK(readBack<int>(Out, 1)[0] == 42);
  CHECK(takeStatus(DeviceMemory::get().free(Out, {MemoryKind::Device})) == Status::Success);

  // One input alone is linked the same way (its text is kept only when it loses nothing).
  std::string Reached = LinkReachLibPtx;
  Reached.insert(Reached.find("ld.param.u32 %r1, [x];"), "call.uni lib_unreached, ();\n");
  JitLogs Alone;
  CHECK(link({{"lib.ptx", LinkReachLibPtx}}, Image, Alone) == Status::Success);
  CHECK(link({{"main.ptx", LinkReachMainPtx}, {"lib.ptx", Reached}}, Image, Alone) == Status::Unknown);
  CHECK(Alone.Error.find("Undefined reference to 'nowhere' in 'lib.ptx'") != std::string::npos);
  CHECK(Alone.Error.find("malloc") == std::string::npos);
}

TEST_CASE("the device runtime's functions are ptxforge's, whatever a linked input (libcudadevrt) defines") {
  // libcudadevrt's PTX defines __cudaCDP2GetLastError over a system call of NVIDIA's driver; a program's call
  // must reach ptxforge's runtime instead, and the input's definition must not need what it calls.
  const char *Main = R"(.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 r) __cudaCDP2GetLastError();
.visible .entry last_error(.param .u64 out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  { .param .b32 b; call.uni (b), __cudaCDP2GetLastError, (); ld.param.b32 %r1, [b]; }
  st.global.u32 [%rd1], %r1;
  ret;
}
)";
  const char *Devrt = R"(.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 r) __cuda_syscall_cnpv2GetLastError();
.visible .func (.param .b32 r) __cudaCDP2GetLastError()
{
  .reg .b32 %r<2>;
  { .param .b32 b; call.uni (b), __cuda_syscall_cnpv2GetLastError, (); ld.param.b32 %r1, [b]; }
  st.param.b32 [r], %r1;
  ret;
}
)";
  std::string Image;
  JitLogs Logs;
  REQUIRE(link({{"main.ptx", Main}, {"cudadevrt.ptx", Devrt}}, Image, Logs) == Status::Success);
  CHECK(Logs.Error.empty());
  CHECK(Image.find("__cuda_syscall") == std::string::npos);
  auto M = load(Image);
  uint64_t Out = zeroedDeviceMemory(4);
  std::memset(reinterpret_cast<void *>(Out), 0xff, 4);
  run(*M, "last_error", {&Out}, 1);
  CHECK(readBack<int>(Out, 1)[0] == 0); // cudaSuccess: no device-side call failed
  CHECK(takeStatus(DeviceMemory::get().free(Out, {MemoryKind::Device})) == Status::Success);
}

TEST_CASE("malformed PTX fails when it is added, with InvalidPtx and its diagnostics") {
  Linker L({});
  JitLogs Logs;
  std::string Bad = input("link_lib.ptx");
  Bad.replace(Bad.find("add.s32"), 7, "add.q32");
  CHECK(takeStatus(L.addPtx(Bad, "bad.ptx", Logs)) == Status::InvalidPtx);
  CHECK(Logs.Error.find("bad.ptx:") != std::string::npos);
}

// Hand-written: both inputs have an internal `helper` and `count` (no linkage), and the first a weak `pick`
// that the second's strong one overrides; the kernel takes helper's address, so renaming covers operands of
// every kind.
namespace {} // namespace

TEST_CASE("internal names that collide stay apart; a strong definition overrides a weak one") {
  std::string Image;
  JitLogs Logs;
  REQUIRE(link({{"first.ptx", LinkCollideFirstPtx}, {"second.ptx", LinkCollideSecondPtx}}, Image, Logs) ==
          Status::Success);
  INFO(Image);
  auto M = load(Image);
  uint64_t Out = zeroedDeviceMemory(16);
  run(*M, "collide", {&Out}, 1);
  std::vector<int> R = readBack<int>(Out, 4);
  CHECK(R[0] == 13);    // first.ptx's helper: 10 + its count (3)
  CHECK(R[1] == 10000); // other() -> second.ptx's helper: 10 * its count (1000)
  CHECK(R[2] == 42);    // the strong pick
  CHECK(R[3] == 1);
  CHECK(takeStatus(DeviceMemory::get().free(Out, {MemoryKind::Device})) == Status::Success);
}

TEST_CASE("each kernel of a link keeps its own input's .target as its PTX version") {
  // CUB dispatches on cudaFuncGetAttributes' ptxVersion, which must be one the program was compiled for, also when
  // the link takes in newer PTX (libcudadevrt's compute_121 in an -rdc program on a 12.1 or newer device).
  const char *Old = ".version 7.0\n.target sm_75\n.address_size 64\n"
                    ".visible .entry old_kernel(.param .u64 p) { ret; }\n";
  const char *New = ".version 8.8\n.target sm_121\n.address_size 64\n"
                    ".visible .entry new_kernel(.param .u64 p) { ret; }\n";
  std::string Image;
  JitLogs Logs;
  REQUIRE(link({{"old.ptx", Old}, {"new.ptx", New}}, Image, Logs) == Status::Success);
  CHECK(Image.find("sm_121") != std::string::npos); // the module's target admits every input's code
  JitOptions Options;
  Options.TargetCc = 121;
  auto M = Module::compile(testContext(), Image, "linked", Options, Logs);
  INFO(Logs.Error);
  REQUIRE(static_cast<bool>(M));
  CHECK((*M)->ptxTarget("old_kernel") == 75);
  CHECK((*M)->ptxTarget("new_kernel") == 121);
  CHECK((*M)->ptxTarget() == 121);
}
