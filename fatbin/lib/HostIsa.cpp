// Mapping the host CPU's feature flags to x86-64 psABI levels, as the levels are defined (each level
// requires all features of the ones below it).
#include "ptxforge/fatbin/HostIsa.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace llvm;

namespace ptxforge::fatbin {

/// The features each level adds, in LLVM's spelling (sahf is LAHF/SAHF, bmi is BMI1).
static const std::vector<StringRef> LevelFeatures[] = {
    {},
    {"cx16", "sahf", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3"},
    {"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave"},
    {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"},
};

std::vector<std::string> isaLevelsFromFeatures(const StringMap<bool> &Features) {
  std::vector<std::string> Levels;
  for (size_t I = 0; I < std::size(X86IsaLevels); ++I) {
    bool HasAll = all_of(LevelFeatures[I], [&](StringRef F) { return Features.lookup(F); });
    if (!HasAll)
      break;
    Levels.push_back(X86IsaLevels[I].str());
  }
  std::reverse(Levels.begin(), Levels.end());
  return Levels;
}

std::vector<std::string> hostIsaLevels() {
  if (Triple(sys::getProcessTriple()).getArch() != Triple::x86_64)
    return {};
  StringMap<bool> Features = sys::getHostCPUFeatures();
  return isaLevelsFromFeatures(Features);
}

} // namespace ptxforge::fatbin
