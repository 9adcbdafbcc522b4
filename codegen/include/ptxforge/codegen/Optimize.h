// Between lowering and host code: the LLVM optimisation pipeline every ptxforge compile goes through (LLVM's
// -O pipeline plus ptxforge's own passes at the extension points where they pay off). The JIT, object
// emission and `ptxforge compile --emit=llvm` all use it, so what a user inspects is what runs.
#pragma once

#include "ptxforge/codegen/CompiledModule.h"

#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

namespace ptxforge::codegen {

/// Optimises M for TM at -O`Options.OptLevel` (0-3) with Options' tuning (StreamingStoreBytes). Changes no
/// process-global LLVM option.
llvm::Error optimizeModule(llvm::Module &M, llvm::TargetMachine &TM, const CompileOptions &Options);

/// Runs Pipeline, in LLVM's -passes syntax ("ptxforge-region-blocks,function(ptxforge-unmask-full-vectors)"),
/// over M for TM: LLVM's passes and ptxforge's own by their names in codegen/lib/passes/Passes.def. What
/// ptxforge-opt runs; an error when the pipeline does not parse.
llvm::Error runPassPipeline(llvm::Module &M, llvm::TargetMachine &TM, llvm::StringRef Pipeline);

/// A debugging switch for whoever tunes the code generator (PTXFORGE_LLVM_ARGS): parses Args, LLVM's own options
/// as clang's -mllvm passes them ("-pass-remarks-missed=loop-vectorize", "-time-passes"), into LLVM's option
/// registry. That registry is process-global: the options apply to every later compile of every user of this
/// libLLVM in the process, not only ptxforge's. Nothing calls it unless asked to. Afterwards ptxforge's compiles
/// also run LLVM's pass instrumentation and keep its optimization remarks. Fails with LLVM's complaint when Args
/// holds an unknown or malformed option (what was parsed before it stays set).
llvm::Error setProcessLLVMOptions(llvm::StringRef Args);

} // namespace ptxforge::codegen
