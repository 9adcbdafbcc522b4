// The host ISA levels (x86-64 psABI micro-architecture levels) host-native entries are built for, and
// which of them this CPU runs.
#pragma once

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace ptxforge::fatbin {

/// The levels of the x86-64 psABI, from the baseline up; the names match LLVM's -march spellings.
constexpr llvm::StringLiteral X86IsaLevels[] = {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};

/// The ISA levels a CPU with these LLVM feature flags ("avx2" -> true) runs, most capable first.
std::vector<std::string> isaLevelsFromFeatures(const llvm::StringMap<bool> &Features);

/// The ISA levels this host runs, most capable first (empty on hosts that are not x86-64).
std::vector<std::string> hostIsaLevels();

} // namespace ptxforge::fatbin
