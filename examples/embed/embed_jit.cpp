// Embedding ptxforge in a C++ application: JIT-compile PTX with an error and print the diagnostics, then
// compile the corrected PTX, launch its kernel and check what it computed. Exits 0 when all of that works.
#include "saxpy_ptx.h"

#include <ptxforge/ptxforge.hpp>

#include <cstdio>
#include <vector>

int main() {
  std::printf("ptxforge %s (headers %s)\n", ptxforge::version(), PTXFORGE_VERSION_STRING);

  // 1. Invalid PTX: the load fails, and the error carries every diagnostic (file, line, column, message).
  auto Broken = ptxforge::Program::fromText(BrokenPtx, "broken.ptx");
  if (Broken) {
    std::fprintf(stderr, "broken.ptx was accepted\n");
    return 1;
  }
  std::printf("%s: %s\n", ptxforge::describe(Broken.error().code()), Broken.error().message().c_str());
  for (const ptxforge::Diagnostic &D : Broken.error().diagnostics())
    std::printf("%s\n", D.format().c_str());

  // 2. The corrected PTX: load, compile for the device, look the kernel up.
  auto Program = ptxforge::Program::fromText(SaxpyPtx, "saxpy.ptx");
  auto Device = ptxforge::Device::create();
  if (!Program || !Device) {
    std::fprintf(stderr, "%s\n", (!Program ? Program.error() : Device.error()).toString().c_str());
    return 1;
  }
  auto Exe = Device->compile(*Program);
  if (!Exe) {
    std::fprintf(stderr, "%s\n", Exe.error().toString().c_str());
    return 1;
  }
  auto Saxpy = Exe->kernel("saxpy");
  if (!Saxpy)
    return std::fprintf(stderr, "%s\n", Saxpy.error().toString().c_str()), 1;
  std::printf("kernel %s (%s):", Saxpy->name().c_str(), Device->name().c_str());
  for (const ptxforge::Parameter &P : Saxpy->parameters())
    std::printf(" %s .%s @%llu", P.Name.c_str(), P.Type.c_str(), (unsigned long long)P.Offset);
  std::printf("\n");

  // 3. Memory, launch, result.
  const uint32_t N = 1000;
  std::vector<float> X(N), Y(N);
  for (uint32_t I = 0; I < N; ++I) {
    X[I] = float(I);
    Y[I] = 1.0f;
  }
  auto DX = Device->allocate(N * sizeof(float));
  auto DY = Device->allocate(N * sizeof(float));
  if (!DX || !DY || !DX->write(X) || !DY->write(Y))
    return std::fprintf(stderr, "device memory failed\n"), 1;
  ptxforge::LaunchConfig Config{{(N + 127) / 128}, {128}};
  auto Ran = Saxpy->run(Config, ptxforge::Arguments::of(*DX, *DY, 2.0f, N));
  if (!Ran)
    return std::fprintf(stderr, "%s\n", Ran.error().toString().c_str()), 1;
  auto Result = DY->read<float>(N);
  if (!Result)
    return std::fprintf(stderr, "%s\n", Result.error().toString().c_str()), 1;
  for (uint32_t I = 0; I < N; ++I)
    if ((*Result)[I] != 2.0f * float(I) + 1.0f)
      return std::fprintf(stderr, "y[%u] = %g, expected %g\n", I, (*Result)[I], 2.0f * float(I) + 1.0f), 1;
  std::printf("saxpy over %u elements: ok (y[999] = %g)\n", N, (*Result)[N - 1]);
  return 0;
}
