// Launching a kernel on a stream: the configuration is checked now (so bad configurations fail at the call),
// the kernel runs later on the stream's worker under the fault guard; what goes wrong there becomes the
// process's sticky error, reported by the next synchronizing call.
#pragma once

#include "ptxforge/driver/Module.h"
#include "ptxforge/driver/Status.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace ptxforge::driver {

class Context;
class Stream;

/// Queues F with Config and the packed parameter buffer on S (null: the legacy default stream).
[[nodiscard]] llvm::Error launch(Context &Ctx, Stream *S, Function &F, const codegen::LaunchConfig &Config,
                                 std::vector<char> Params);

} // namespace ptxforge::driver
