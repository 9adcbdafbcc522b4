// Streams: ordered queues of kernel launches, each run by its own worker thread (the driver core's streams),
// so an application can overlap its own work with kernels. A kernel that fails (bad pointer, trap, failed
// assert) fails its stream, not the process: the stream skips its later launches and synchronize() returns
// the error, after which the stream (and every other) works again.
#pragma once

#include "ptxforge/api/Executable.h"
#include "ptxforge/api/Expected.h"
#include "ptxforge/api/Export.h"
#include "ptxforge/api/Launch.h"

#include <memory>

namespace ptxforge {

/// A stream of a Device. Copies share the stream; it is destroyed (after finishing its queued work) when the
/// last copy goes. launch() and synchronize() may be called from any thread.
class PTXFORGE_API Stream {
public:
  /// Checks the configuration and the arguments against the kernel (InvalidLaunch, InvalidArgument) and
  /// queues the launch; the kernel's own failure is reported by synchronize().
  Expected<void> launch(const Kernel &K, const LaunchConfig &Config, const Arguments &Args);
  /// Waits for the queued work. Returns the first failure of a kernel launched since the last synchronize()
  /// (the launches queued after it were skipped) and clears it.
  Expected<void> synchronize();

  struct Impl;

private:
  friend class Device;
  friend struct Impl;
  explicit Stream(std::shared_ptr<Impl> I) : I(std::move(I)) {}
  std::shared_ptr<Impl> I;
};

} // namespace ptxforge
