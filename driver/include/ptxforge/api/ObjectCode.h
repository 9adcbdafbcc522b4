// Ahead-of-time compilation: a Program compiled to host object code for one compute capability and one CPU
// (this one, or an x86-64 ISA level every CPU of that level runs), without a device. It is what ptxforge's
// fatbinary host-native entries and compute cache hold; Device::load runs it without compiling again.
#pragma once

#include "ptxforge/api/Expected.h"
#include "ptxforge/api/Export.h"
#include "ptxforge/api/Program.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ptxforge {

struct ObjectOptions {
  /// The virtual compute capability (the module must be able to run on it, else UnsupportedTarget).
  ComputeCapability Target;
  unsigned OptLevel = 2; ///< 0-3
  /// The CPU: "" or "host" for this machine's CPU and all its features; an x86-64 psABI level ("x86-64",
  /// "x86-64-v2", "x86-64-v3", "x86-64-v4"); or any LLVM CPU name ("znver4").
  std::string Cpu;
};

/// Host code compiled from a Program (which it keeps). Immutable; copies share it.
class PTXFORGE_API ObjectCode {
public:
  static Expected<ObjectCode> compile(const Program &P, const ObjectOptions &Options);

  const Program &program() const;
  ComputeCapability target() const;
  /// The LLVM CPU compiled for ("x86-64-v3", or this host's name, "znver4").
  const std::string &cpu() const;
  /// The CPU features the code uses ("avx2", ...).
  std::vector<std::string> requiredFeatures() const;
  /// NotSupported, naming what is missing, unless this machine can run the code.
  Expected<void> checkRunsOnHost() const;

  /// The relocatable ELF object file.
  const std::string &objectFile() const;
  /// The serialized form (object, kernel and global metadata, target CPU; versioned and checksummed): the
  /// payload of a fatbinary host-native entry and of a compute cache entry.
  std::string serialize() const;
  /// A fatbinary holding the PTX (for targets and CPUs without host code) and this code as a host-native
  /// entry for target() and cpu(); cpu() must be an x86-64 ISA level (NotSupported otherwise). libcuda.so.1
  /// (cuModuleLoadData) and `ptxforge run` load it.
  Expected<std::vector<uint8_t>> fatbinary() const;

  struct Impl;
  const Impl &impl() const { return *I; }

private:
  friend struct Impl;
  explicit ObjectCode(std::shared_ptr<const Impl> I) : I(std::move(I)) {}
  std::shared_ptr<const Impl> I;
};

} // namespace ptxforge
