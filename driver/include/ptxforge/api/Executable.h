// A program compiled to host code for one compute capability (Device::compile), its kernels and their
// parameter layouts (what a launch's arguments must look like), and its `.global`/`.const` variables.
#pragma once

#include "ptxforge/api/Expected.h"
#include "ptxforge/api/Export.h"
#include "ptxforge/api/Launch.h"
#include "ptxforge/api/Memory.h"
#include "ptxforge/api/Program.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ptxforge {

/// One `.param` of a kernel: its declaration, and where its bytes go in the parameter buffer.
struct Parameter {
  std::string Name;
  std::string Type;         ///< the element type without dot: "u64", "f32", "b8"
  unsigned VectorWidth = 1; ///< 2 or 4 for `.v2`/`.v4`
  uint64_t ArrayLength = 0; ///< elements of an array parameter (`.b8 p[16]`: 16); 0 when not an array
  bool IsPointer = false;   ///< declared with `.ptr`
  std::string PointerSpace; ///< "global", "shared", ... for `.ptr.global`; empty when generic or not a pointer
  uint64_t Offset = 0, Size = 0, Align = 1;
};

class Executable;

/// A kernel of an Executable (which it keeps alive). Copyable; thread-safe.
class PTXFORGE_API Kernel {
public:
  const std::string &name() const;
  const std::vector<Parameter> &parameters() const;
  /// Bytes of the parameter buffer (the last parameter's end, aligned).
  uint64_t parameterBytes() const;
  uint64_t staticSharedBytes() const;
  /// Largest block it can be launched with (its `.maxntid`/`.reqntid`, else the device's limit).
  unsigned maxThreadsPerBlock() const;
  /// Whether it synchronises its threads (barriers or warp collectives). Most such kernels still run as
  /// vectorized block functions, split at each barrier; only what the split cannot take (collectives in a
  /// callee, named or counted barriers, ...) runs each thread as a fiber.
  bool synchronizesThreads() const;
  /// The former name of synchronizesThreads(), which it returns.
  [[deprecated("use synchronizesThreads()")]] bool usesBarriers() const;

  /// Launches on the device's default stream and waits: Success, or why the launch or the kernel failed
  /// (InvalidLaunch, InvalidArgument, IllegalAddress, Trap, ...). A failed kernel leaves the device usable.
  Expected<void> run(const LaunchConfig &Config, const Arguments &Args) const;

  struct Impl;
  const Impl &impl() const { return *I; }

private:
  friend class Executable;
  explicit Kernel(std::shared_ptr<const Impl> I) : I(std::move(I)) {}
  std::shared_ptr<const Impl> I;
};

/// A `.global` or `.const` variable of an executable: device memory the host may read and write.
struct GlobalVariable {
  DevicePtr Address = 0;
  uint64_t Size = 0;
};

/// Host code for one program and compute capability. Copies share it; it is unloaded when the last copy (and
/// the last Kernel of it) goes, after the device's queued work finished. Thread-safe.
class PTXFORGE_API Executable {
public:
  const Program &program() const;
  /// The compute capability it was compiled for.
  ComputeCapability target() const;
  /// Its kernels, in the order of the PTX.
  std::vector<Kernel> kernels() const;
  /// The kernel called Name (NotFound otherwise).
  Expected<Kernel> kernel(std::string_view Name) const;
  /// The `.global`/`.const` variable called Name (NotFound otherwise).
  Expected<GlobalVariable> global(std::string_view Name) const;

  struct Impl;
  const Impl &impl() const { return *I; }

private:
  friend class Device;
  explicit Executable(std::shared_ptr<Impl> I) : I(std::move(I)) {}
  std::shared_ptr<Impl> I;
};

} // namespace ptxforge
