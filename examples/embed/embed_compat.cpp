// The compatibility-testing use: compile one PTX module for several compute capabilities and report which can
// run it and why the others cannot; run its `saxpy` kernel on each that can (a smoke test per target).
//   embed_compat [FILE.ptx] [CC...]        (defaults: examples/saxpy.ptx, 7.0 7.5 8.0 8.6 9.0)
// Exits 0 when every target was judged and every compiled one ran correctly.
#include <ptxforge/ptxforge.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

/// Runs saxpy (x, y, a, n) over a few elements and checks y. True when the module has no saxpy kernel.
bool smokeTest(const ptxforge::Device &D, const ptxforge::Executable &X) {
  auto K = X.kernel("saxpy");
  if (!K)
    return true;
  const uint32_t N = 256;
  std::vector<float> Xs(N, 1.0f), Ys(N, 2.0f);
  auto BX = D.allocate(N * 4), BY = D.allocate(N * 4);
  if (!BX || !BY || !BX->write(Xs) || !BY->write(Ys))
    return false;
  auto Ran = K->run({{N / 64}, {64}}, ptxforge::Arguments::of(*BX, *BY, 3.0f, N));
  auto Out = BY->read<float>(N);
  if (!Ran || !Out) {
    std::printf("    launch failed: %s\n", (!Ran ? Ran.error() : Out.error()).toString().c_str());
    return false;
  }
  for (float V : *Out)
    if (V != 5.0f)
      return false;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string File = argc > 1 ? argv[1] : PTXFORGE_EXAMPLE_DIR "/saxpy.ptx";
  std::vector<ptxforge::ComputeCapability> Targets;
  for (int I = 2; I < argc; ++I) {
    unsigned Major = 0, Minor = 0;
    if (std::sscanf(argv[I], "%u.%u", &Major, &Minor) != 2)
      return std::fprintf(stderr, "usage: embed_compat [FILE.ptx] [MAJOR.MINOR...]\n"), 2;
    Targets.push_back({Major, Minor});
  }
  if (Targets.empty())
    Targets = {{7, 0}, {7, 5}, {8, 0}, {8, 6}, {9, 0}};

  auto Program = ptxforge::Program::fromFile(File);
  if (!Program)
    return std::fprintf(stderr, "%s\n", Program.error().toString().c_str()), 1;
  ptxforge::Requirements R = Program->requirements();
  std::printf("%s: PTX ISA %u.%u, .target %s; needs sm_%u and PTX ISA %u.%u\n", File.c_str(),
              Program->ptxVersion() / 10, Program->ptxVersion() % 10, Program->targetName().c_str(), R.MinSm,
              R.MinPtx / 10, R.MinPtx % 10);
  for (const ptxforge::FunctionRequirements &F : R.Functions)
    for (const ptxforge::RequirementSource &S : F.SmSetBy)
      std::printf("  %s needs sm_%u: '%s' at line %u\n", F.Name.c_str(), S.Sm, S.Instruction.c_str(), S.Line);

  auto Device = ptxforge::Device::create();
  if (!Device)
    return std::fprintf(stderr, "%s\n", Device.error().toString().c_str()), 1;
  bool AllGood = true;
  for (ptxforge::ComputeCapability CC : Targets) {
    ptxforge::CompileOptions Options;
    Options.Target = CC;
    auto Exe = Device->compile(*Program, Options);
    if (!Exe) {
      // Refused targets are an answer, not a failure of this program; anything else is.
      bool Refused = Exe.error().code() == ptxforge::ErrorCode::UnsupportedTarget;
      AllGood &= Refused;
      std::printf("%s: cannot run (%s)\n", CC.name().c_str(), ptxforge::describe(Exe.error().code()));
      for (const ptxforge::Diagnostic &D : Exe.error().diagnostics())
        std::printf("    %s\n", D.Message.c_str());
      continue;
    }
    bool Ok = smokeTest(*Device, *Exe);
    AllGood &= Ok;
    std::printf("%s: can run (%zu kernel(s) compiled%s)\n", CC.name().c_str(), Exe->kernels().size(),
                Ok ? ", saxpy checked" : ", saxpy WRONG");
  }
  return AllGood ? 0 : 1;
}
