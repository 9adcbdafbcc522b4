// Between lowering and host code: the LLVM optimisation pipeline every ptxforge compile goes through (LLVM's
// -O pipeline plus ptxforge's own passes at the extension points where they pay off). The JIT, object
// emission and `ptxforge compile --emit=llvm` all use it, so what a user inspects is what runs.
#pragma once

#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

namespace ptxforge::codegen {

struct CancelToken;

/// Optimises M for TM at -O`Level` (0-3). Once Cancel (when given) is requested the remaining passes are skipped
/// and the result is compileCancelled(): M is then only fit to be thrown away.
llvm::Error optimizeModule(llvm::Module &M, llvm::TargetMachine &TM, unsigned Level,
                           const CancelToken *Cancel = nullptr);

} // namespace ptxforge::codegen
