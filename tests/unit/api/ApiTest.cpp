// The C++ embedding API: diagnostics as values, requirements and target checks, parameter layouts, launches
// with typed arguments, and failures (bad arguments, bad configurations, faulting kernels) that come back as
// Errors while the device stays usable.
#include "TestKernels.h"

#include "ptxforge/ptxforge.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <thread>

using namespace ptxforge;
using namespace ptxforge::testing;

namespace {

Device &device() {
  static Device D = [] {
    auto R = Device::create();
    REQUIRE_MESSAGE(R.ok(), R.error().toString());
    return *R;
  }();
  return D;
}

/// ApiKernelsPtx compiled once for the whole binary.
const Executable &kernels() {
  static Executable X = [] {
    auto P = Program::fromText(ApiKernelsPtx, "kernels.ptx");
    REQUIRE_MESSAGE(P.ok(), P.error().toString());
    auto E = device().compile(*P);
    REQUIRE_MESSAGE(E.ok(), E.error().toString());
    return *E;
  }();
  return X;
}

Kernel kernel(const char *Name) {
  auto K = kernels().kernel(Name);
  REQUIRE_MESSAGE(K.ok(), K.error().toString());
  return *K;
}

/// Runs saxpy over N elements (a = 2, x = i, y = 1) on S (the default stream when null) and checks y.
void checkSaxpy(Stream *S = nullptr) {
  const uint32_t N = 300;
  std::vector<float> X(N), Y(N, 1.0f);
  for (uint32_t I = 0; I < N; ++I)
    X[I] = float(I);
  auto BX = device().allocate(N * 4), BY = device().allocate(N * 4);
  REQUIRE(BX.ok());
  REQUIRE(BY.ok());
  REQUIRE(BX->write(X).ok());
  REQUIRE(BY->write(Y).ok());
  LaunchConfig C{{(N + 63) / 64}, {64}};
  Arguments A = Arguments::of(*BX, *BY, 2.0f, N);
  if (S) {
    REQUIRE(S->launch(kernel("saxpy"), C, A).ok());
    auto Done = S->synchronize();
    REQUIRE_MESSAGE(Done.ok(), Done.error().toString());
  } else {
    auto Ran = kernel("saxpy").run(C, A);
    REQUIRE_MESSAGE(Ran.ok(), Ran.error().toString());
  }
  auto Out = BY->read<float>(N);
  REQUIRE(Out.ok());
  for (uint32_t I = 0; I < N; ++I)
    REQUIRE((*Out)[I] == 2.0f * float(I) + 1.0f);
}

} // namespace

TEST_CASE("invalid PTX fails with diagnostics as values") {
  auto P = Program::fromText(BrokenPtx, "broken.ptx");
  REQUIRE_FALSE(P.ok());
  CHECK(P.error().code() == ErrorCode::InvalidPtx);
  const std::vector<Diagnostic> &Ds = P.error().diagnostics();
  REQUIRE(!Ds.empty());
  for (const Diagnostic &D : Ds) {
    CHECK(D.File == "broken.ptx");
    CHECK(D.Level == Severity::Error);
    CHECK(D.Line >= 7);
    CHECK(D.Line <= 8);
    CHECK(D.Column >= 1);
    CHECK(!D.SourceLine.empty());
    CHECK(!D.Message.empty());
  }
  CHECK(Ds.front().toString().rfind("broken.ptx:", 0) == 0);
  CHECK(Ds.front().format().find('^') != std::string::npos);
  CHECK(P.error().toString().find("invalid PTX: broken.ptx:") == 0);
}

TEST_CASE("garbage, empty and unreadable inputs are errors, never crashes") {
  for (const char *Text : {"", "\x01\x02\xff garbage {{{", ".version 8.0\n.target sm_70\n.entry"}) {
    auto P = Program::fromText(Text);
    REQUIRE_FALSE(P.ok());
    CHECK(P.error().code() == ErrorCode::InvalidPtx);
  }
  auto F = Program::fromFile("/nonexistent/k.ptx");
  REQUIRE_FALSE(F.ok());
  CHECK(F.error().code() == ErrorCode::FileError);
  CHECK(F.error().message().find("/nonexistent/k.ptx") != std::string::npos);
}

TEST_CASE("a PTX ISA newer than ptxforge knows is UnsupportedPtxVersion") {
  std::string Ptx = ApiKernelsPtx;
  Ptx.replace(Ptx.find(".version 8.0"), 12, ".version 9.9");
  auto P = Program::fromText(Ptx);
  REQUIRE_FALSE(P.ok());
  CHECK(P.error().code() == ErrorCode::UnsupportedPtxVersion);
  CHECK(maxPtxVersion() == 91);
}

TEST_CASE("a program from a file, its kernels and version") {
  std::string Path = std::string(PTXFORGE_SOURCE_DIR) + "/examples/saxpy.ptx";
  auto P = Program::fromFile(Path);
  REQUIRE_MESSAGE(P.ok(), P.error().toString());
  CHECK(P->name() == Path);
  CHECK(P->ptxVersion() == 80);
  CHECK(P->targetSm() == 80);
  CHECK(P->targetName() == "sm_80");
  std::vector<std::string> Names = P->kernelNames();
  REQUIRE(Names.size() >= 2);
  CHECK(Names[0] == "saxpy");
  CHECK(Names[1] == "warp_sum");
}

TEST_CASE("requirements and target checks") {
  auto P = Program::fromText(Sm80Ptx, "sum.ptx");
  REQUIRE(P.ok());
  Requirements R = P->requirements();
  CHECK(R.MinSm == 80);
  REQUIRE(R.Functions.size() == 1);
  CHECK(R.Functions[0].Name == "sum");
  CHECK(R.Functions[0].IsKernel);
  REQUIRE(R.Functions[0].SmSetBy.size() == 1);
  CHECK(R.Functions[0].SmSetBy[0].Instruction == "redux.sync.add.u32");
  CHECK(R.Functions[0].SmSetBy[0].Line == 10);
  CHECK(R.Functions[0].SmSetBy[0].Sm == 80);

  CHECK(P->canRunOn({8, 0}));
  CHECK(P->canRunOn({9, 0}));
  std::vector<Diagnostic> Why = P->checkTarget({7, 5});
  REQUIRE(Why.size() == 2);
  CHECK(Why[0].Message.find("'.target sm_80' is higher than sm_75") != std::string::npos);
  CHECK(Why[1].Message.find("'redux.sync.add.u32' at sum.ptx:10:3 in 'sum' requires sm_80") != std::string::npos);

  CompileOptions O;
  O.Target = ComputeCapability{7, 5};
  auto X = device().compile(*P, O);
  REQUIRE_FALSE(X.ok());
  CHECK(X.error().code() == ErrorCode::UnsupportedTarget);
  CHECK(X.error().diagnostics().size() == 2);
  O.Target = ComputeCapability{8, 6};
  auto Y = device().compile(*P, O);
  REQUIRE_MESSAGE(Y.ok(), Y.error().toString());
  CHECK(Y->target().value() == 86);
  O.OptLevel = 7;
  CHECK(device().compile(*P, O).error().code() == ErrorCode::InvalidArgument);
  O.OptLevel = 2;
  O.Target = ComputeCapability{99, 0};
  CHECK(device().compile(*P, O).error().message() == "unknown compute capability 99.0");
}

TEST_CASE("kernels and their parameter layouts") {
  std::vector<Kernel> Ks = kernels().kernels();
  REQUIRE(Ks.size() == 4);
  CHECK(Ks[0].name() == "saxpy");
  CHECK(kernels().kernel("nope").error().code() == ErrorCode::NotFound);

  Kernel L = kernel("layout");
  const std::vector<Parameter> &Ps = L.parameters();
  REQUIRE(Ps.size() == 4);
  CHECK(Ps[0].Name == "a");
  CHECK(Ps[0].Type == "u8");
  CHECK(Ps[0].Offset == 0);
  CHECK(Ps[0].Size == 1);
  CHECK(Ps[1].Type == "u64");
  CHECK(Ps[1].Offset == 8);
  CHECK(Ps[1].Align == 8);
  CHECK(Ps[2].Type == "b8");
  CHECK(Ps[2].ArrayLength == 12);
  CHECK(Ps[2].Offset == 16);
  CHECK(Ps[2].Size == 12);
  CHECK(Ps[2].Align == 16);
  CHECK(Ps[3].Type == "f32");
  CHECK(Ps[3].VectorWidth == 2);
  CHECK(Ps[3].Offset == 32);
  CHECK(Ps[3].Size == 8);
  CHECK(L.parameterBytes() >= 40);

  const std::vector<Parameter> &Store = kernel("store").parameters();
  CHECK(Store[0].IsPointer);
  CHECK(Store[0].PointerSpace == "global");
  CHECK(kernel("store").maxThreadsPerBlock() == 1024);
  CHECK_FALSE(kernel("saxpy").synchronizesThreads());
}

TEST_CASE("launches with typed arguments, on the default stream and on a stream") {
  checkSaxpy();
  auto S = device().createStream();
  REQUIRE(S.ok());
  checkSaxpy(&*S);
}

TEST_CASE("argument and configuration mistakes fail the launch call") {
  Kernel K = kernel("store");
  auto B = device().allocate(4);
  REQUIRE(B.ok());
  auto Few = K.run({{1}, {1}}, Arguments::of(*B));
  CHECK(Few.error().code() == ErrorCode::InvalidArgument);
  CHECK(Few.error().message() == "kernel 'store' takes 2 argument(s), 1 given");
  auto Wide = K.run({{1}, {1}}, Arguments::of(*B, 1.0));
  CHECK(Wide.error().code() == ErrorCode::InvalidArgument);
  CHECK(Wide.error().message() == "argument 1 of 'store' ('v', .u32) takes 4 bytes, 8 given");
  CHECK(K.run({{1}, {2048}}, Arguments::of(*B, 1u)).error().code() == ErrorCode::InvalidLaunch);
  CHECK(K.run({{0}, {1}}, Arguments::of(*B, 1u)).error().code() == ErrorCode::InvalidLaunch);
  CHECK(K.run({{1}, {1}, 1u << 30}, Arguments::of(*B, 1u)).error().code() == ErrorCode::InvalidLaunch);
  // Nothing ran: the buffer is still zero.
  CHECK((*B->read<uint32_t>(1))[0] == 0);
  REQUIRE(K.run({{1}, {1}}, Arguments::of(*B, 42u)).ok());
  CHECK((*B->read<uint32_t>(1))[0] == 42);
}

TEST_CASE("a faulting kernel is an error value and the device keeps working") {
  Kernel Store = kernel("store");
  auto Null = Store.run({{1}, {32}}, Arguments::of(DevicePtr(0), 1u));
  REQUIRE_FALSE(Null.ok());
  CHECK(Null.error().code() == ErrorCode::IllegalAddress);
  CHECK(Null.error().message().find("kernel 'store'") == 0);
  auto Trap = kernel("stop").run({{2}, {32}}, Arguments());
  CHECK(Trap.error().code() == ErrorCode::Trap);
  checkSaxpy();

  // On a stream: the failure is reported by synchronize(), the launches queued behind it are skipped, and
  // the stream works again afterwards.
  auto S = device().createStream();
  REQUIRE(S.ok());
  auto B = device().allocate(4);
  REQUIRE(B.ok());
  REQUIRE(S->launch(Store, {{1}, {1}}, Arguments::of(DevicePtr(0), 1u)).ok());
  REQUIRE(S->launch(Store, {{1}, {1}}, Arguments::of(*B, 9u)).ok());
  auto Sync = S->synchronize();
  REQUIRE_FALSE(Sync.ok());
  CHECK(Sync.error().code() == ErrorCode::IllegalAddress);
  CHECK((*B->read<uint32_t>(1))[0] == 0);
  CHECK(S->synchronize().ok());
  REQUIRE(S->launch(Store, {{1}, {1}}, Arguments::of(*B, 9u)).ok());
  REQUIRE(S->synchronize().ok());
  CHECK((*B->read<uint32_t>(1))[0] == 9);
}

TEST_CASE("memory helpers check their ranges") {
  auto B = device().allocate(16);
  REQUIRE(B.ok());
  CHECK(B->size() == 16);
  CHECK((*B->read<uint8_t>(16))[15] == 0);
  uint32_t V[5] = {1, 2, 3, 4, 5};
  CHECK(B->write(V, sizeof V).error().code() == ErrorCode::InvalidArgument);
  CHECK(B->write(V, 4, 14).error().code() == ErrorCode::InvalidArgument);
  REQUIRE(B->write(V, 8, 8).ok());
  CHECK((*B->read<uint32_t>(4))[3] == 2);
  REQUIRE(B->fill(0xab).ok());
  CHECK((*B->read<uint8_t>(16))[0] == 0xab);
  uint32_t Host = 0;
  CHECK(device().copyToHost(&Host, B->address() + 12, 8).error().code() == ErrorCode::InvalidArgument);
  CHECK(device().copyToDevice(reinterpret_cast<DevicePtr>(&Host), V, 4).error().code() == ErrorCode::InvalidArgument);
  CHECK(device().allocate(0).error().code() == ErrorCode::InvalidArgument);
  DeviceBuffer Moved = std::move(*B);
  CHECK(B->read<uint8_t>(1).error().code() == ErrorCode::InvalidArgument);
  CHECK(Moved.size() == 16);
}

TEST_CASE("module globals are device memory") {
  auto G = kernels().global("counter");
  REQUIRE(G.ok());
  CHECK(G->Size == 4);
  uint32_t V = 0;
  REQUIRE(device().copyToHost(&V, G->Address, 4).ok());
  CHECK(V == 7);
  CHECK(kernels().global("nope").error().code() == ErrorCode::NotFound);
}

TEST_CASE("streams from several threads") {
  std::vector<std::thread> Threads;
  std::vector<int> Ok(4, 0);
  for (int T = 0; T < 4; ++T)
    Threads.emplace_back([T, &Ok] {
      auto S = device().createStream();
      auto B = device().allocate(4);
      if (!S || !B)
        return;
      bool Good = true;
      for (uint32_t I = 0; I < 5 && Good; ++I)
        Good = S->launch(kernel("store"), {{1}, {1}}, Arguments::of(*B, uint32_t(T * 100 + I))).ok();
      Good = Good && S->synchronize().ok();
      auto V = B->read<uint32_t>(1);
      Ok[T] = Good && V && (*V)[0] == uint32_t(T * 100 + 4);
    });
  for (std::thread &T : Threads)
    T.join();
  for (int T = 0; T < 4; ++T)
    CHECK(Ok[T] == 1);
}

TEST_CASE("compiles from several threads") {
  auto P = Program::fromText(ApiKernelsPtx, "kernels.ptx");
  REQUIRE(P.ok());
  std::vector<std::thread> Threads;
  std::vector<int> Ok(3, 0);
  for (int T = 0; T < 3; ++T)
    Threads.emplace_back([T, &P, &Ok] {
      CompileOptions O;
      O.OptLevel = unsigned(T); // different code, so the compute cache cannot serve them all
      auto X = device().compile(*P, O);
      auto B = device().allocate(4);
      if (!X || !B)
        return;
      auto K = X->kernel("store");
      Ok[T] = K && K->run({{1}, {1}}, Arguments::of(*B, uint32_t(T + 5))).ok() &&
              (*B->read<uint32_t>(1))[0] == uint32_t(T + 5);
    });
  for (std::thread &T : Threads)
    T.join();
  for (int T = 0; T < 3; ++T)
    CHECK(Ok[T] == 1);
}

TEST_CASE("devices, kernels of another device, version") {
  CHECK(std::string(version()) == PTXFORGE_VERSION_STRING);
  DeviceOptions O;
  O.CC = ComputeCapability{7, 5};
  auto D = Device::create(O);
  REQUIRE(D.ok());
  CHECK(D->computeCapability().value() == 75);
  CHECK(D->name() == "ptxforge CPU (sm_75)");
  CHECK(D->totalMemory() > 0);
  auto S = D->createStream();
  REQUIRE(S.ok());
  CHECK(S->launch(kernel("stop"), {{1}, {1}}, Arguments()).error().code() == ErrorCode::InvalidArgument);
  O.CC = ComputeCapability{4, 2};
  CHECK(Device::create(O).error().code() == ErrorCode::InvalidArgument);
  // The default device (13.0) is an entry of the architecture table, as the real ones are; 13.1 is no device.
  O.CC = ComputeCapability{13, 0};
  CHECK(Device::create(O).ok());
  O.CC = ComputeCapability{13, 1};
  CHECK(Device::create(O).error().code() == ErrorCode::InvalidArgument);
}

TEST_CASE("a failed device assert is an error value; the same kernel runs again") {
  auto P = Program::fromFile(std::string(PTXFORGE_SOURCE_DIR) + "/tests/lit/run/Inputs/printf-assert.ptx");
  REQUIRE_MESSAGE(P.ok(), P.error().toString());
  auto X = device().compile(*P);
  REQUIRE_MESSAGE(X.ok(), X.error().toString());
  auto A = X->kernel("_Z1ai"); // assert(x > 0)
  REQUIRE(A.ok());
  auto Failed = A->run({{1}, {2}}, Arguments::of(int32_t(0)));
  REQUIRE_FALSE(Failed.ok());
  CHECK(Failed.error().code() == ErrorCode::Assert);
  CHECK(Failed.error().message().find("Assertion `x > 0` failed") != std::string::npos);
  CHECK(A->run({{1}, {2}}, Arguments::of(int32_t(1))).ok());
}
