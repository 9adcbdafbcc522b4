// GPU targets: the architectures nvcc's target flags name (-arch, -code, -gencode: `compute_90`, `sm_100f`), the
// `-gencode` plan those flags make for a fatbinary, and compute capabilities as a device's is spelled
// (PTXFORGE_DEVICE_CC: `9.0`, `90`, `sm_90`). One parser for each, used by the driver and the CLI alike.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ptxforge::fatbin {

/// A device's compute capability as major*10+minor (90 for 9.0, 103 for 10.3) from any of its spellings: "9.0",
/// "90", "10.3", "103", or an architecture of it, "sm_90", "sm_90a", "compute_90", "sm_100f" (the suffix names
/// what code may use, the device is the same). Surrounding blanks are ignored; anything else is an error naming
/// the text.
llvm::Expected<unsigned> parseComputeCapability(llvm::StringRef Text);

/// The architectures nvcc 13 accepts (`nvcc --list-gpu-arch`).
constexpr unsigned SupportedArchs[] = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};

/// One architecture as nvcc spells it: compute_90 (virtual, PTX) or sm_90a (real, SASS).
struct GpuArch {
  unsigned Number = 0;
  char Suffix = 0; ///< 'a' (arch-specific), 'f' (family-specific) or 0
  bool Virtual = false;

  std::string name() const {
    return (Virtual ? "compute_" : "sm_") + std::to_string(Number) + (Suffix ? std::string(1, Suffix) : "");
  }
  GpuArch virtualArch() const { return {Number, Suffix, true}; }
  unsigned major() const { return Number / 10; }
  bool sameTarget(const GpuArch &O) const { return Number == O.Number && Suffix == O.Suffix; }
  /// The target bits of a fatbinary entry built for this architecture.
  uint64_t entryFlags() const;
};

/// One `-gencode arch=compute_XX,code=[...]`, after -arch's shorthands are expanded.
struct Gencode {
  GpuArch Arch;               ///< virtual: what the module must be valid for
  std::vector<GpuArch> Codes; ///< what the fatbinary should hold
  /// From -arch=all or all-major: an architecture the module cannot be compiled for is skipped with a
  /// warning instead of failing the compilation.
  bool FromAll = false;

  std::string spelling() const;
};

/// `-gencode arch=compute_75,code=[sm_75,compute_75]` (also `code=sm_75,compute_75`, quoted, or with the keys in
/// the other order). Errors are nvcc's usage errors.
llvm::Expected<Gencode> parseGencode(llvm::StringRef Value);

/// -arch (with -code) as gencodes: sm_XX alone is arch=compute_XX,code=[sm_XX,compute_XX], compute_XX alone PTX
/// only; all, all-major and native (NativeCC: the device's compute capability, major*10+minor) as nvcc expands
/// them. Empty when Arch is.
llvm::Expected<std::vector<Gencode>> archGencodes(llvm::StringRef Arch, llvm::StringRef Code, unsigned NativeCC);

} // namespace ptxforge::fatbin
