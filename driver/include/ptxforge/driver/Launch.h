// Launching a kernel on a stream: the configuration is checked now (so bad configurations fail at the call),
// the kernel runs later on the stream's worker under the fault guard; what goes wrong there becomes the
// process's sticky error, reported by the next synchronizing call.
#pragma once

#include "ptxforge/driver/Module.h"
#include "ptxforge/driver/Status.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace ptxforge::driver {

class Context;
class Stream;

/// How a launch runs its blocks.
enum class LaunchKind {
  Normal,
  /// cuLaunchCooperativeKernel: every block is resident at once (each runs on a worker of its own), so blocks
  /// may wait for each other (grid-wide barriers in global memory). A grid larger than the device holds at once
  /// (occupancy per multiprocessor x multiprocessors) fails with CooperativeLaunchTooLarge, as on the GPU.
  Cooperative,
};

/// Dynamic parallelism's device-side cudaDeviceGetAttribute: the attribute's value (a CUdevice_attribute) for the
/// device, or nothing for an unknown one. Set by the C API at cuInit (it knows the attributes); null: none.
extern std::optional<int> (*DeviceAttributeQuery)(int Attribute);

/// Queues F with Config and the packed parameter buffer on S (null: the legacy default stream).
[[nodiscard]] llvm::Error launch(Context &Ctx, Stream *S, Function &F, const codegen::LaunchConfig &Config,
                                 std::vector<char> Params, LaunchKind Kind = LaunchKind::Normal);

} // namespace ptxforge::driver
