// The device an application compiles for and runs kernels on: the host CPU behind the driver core, with a
// compute capability, device memory, streams, and the compiler entry point (Program -> Executable).
#pragma once

#include "ptxforge/api/Executable.h"
#include "ptxforge/api/Expected.h"
#include "ptxforge/api/Export.h"
#include "ptxforge/api/Memory.h"
#include "ptxforge/api/ObjectCode.h"
#include "ptxforge/api/Program.h"
#include "ptxforge/api/Stream.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace ptxforge {

struct DeviceOptions {
  /// The compute capability modules are compiled for and checked against; default: PTXFORGE_DEVICE_CC, else
  /// 13.0 (driver::DefaultComputeCapability). (Block, grid and shared-memory limits are those of the process's device, PTXFORGE_DEVICE_CC.)
  std::optional<ComputeCapability> CC;
  /// Threads one launch runs its blocks on; 0: one per core.
  unsigned Workers = 0;
};

struct CompileOptions {
  /// The virtual compute capability to compile for; default: the device's. The module must be able to run on
  /// it (Program::checkTarget), else the compile fails with UnsupportedTarget and the reasons as diagnostics.
  std::optional<ComputeCapability> Target;
  /// LLVM optimisation level for the host code, 0-3 (as -O).
  unsigned OptLevel = 2;
  /// The CPU to compile for, as ObjectOptions::Cpu; it must be one this machine runs. Empty: this machine's.
  /// (No environment variable changes how the embedding API compiles: PTXFORGE_JIT_CPU and the other JIT
  /// variables configure libcuda.so.1 and the CLI.)
  std::string Cpu;
};

/// A device. Copies share it; its memory, streams and executables keep it alive. Every method is thread-safe.
/// Several devices in one process share the device memory range (a buffer of one is a valid pointer for the
/// kernels of another) but not streams or errors.
class PTXFORGE_API Device {
public:
  static Expected<Device> create(const DeviceOptions &Options = {});

  ComputeCapability computeCapability() const;
  /// "ptxforge CPU (sm_130)"
  std::string name() const;
  /// Bytes of device memory (the host's RAM unless PTXFORGE_DEVICE_MEMORY says otherwise), and in use.
  uint64_t totalMemory() const;
  uint64_t usedMemory() const;

  /// Compiles P to host code for Options.Target (see CompileOptions).
  Expected<Executable> compile(const Program &P, const CompileOptions &Options = {}) const;

  /// Loads host code compiled ahead of time (its compute capability is the executable's target): NotSupported
  /// when this CPU lacks a feature the code uses.
  Expected<Executable> load(const ObjectCode &Object) const;

  /// A zero-filled buffer of Bytes (> 0) bytes.
  Expected<DeviceBuffer> allocate(size_t Bytes) const;
  /// Synchronous copies between host memory and device memory (any device address: a buffer, a part of one, a
  /// global variable). Ranges outside device memory fail with InvalidArgument.
  Expected<void> copyToDevice(DevicePtr Destination, const void *Source, size_t Size) const;
  Expected<void> copyToHost(void *Destination, DevicePtr Source, size_t Size) const;

  /// The stream Kernel::run uses; work on it is ordered with the synchronous copies.
  Stream defaultStream() const;
  /// A new stream, independent of the others (no implicit ordering with the default stream).
  Expected<Stream> createStream() const;
  /// Waits until every stream of the device is idle (errors stay with their streams).
  void synchronize() const;

  struct Impl;

private:
  explicit Device(std::shared_ptr<Impl> I) : I(std::move(I)) {}
  std::shared_ptr<Impl> I;
};

} // namespace ptxforge
