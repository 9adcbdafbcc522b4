// What the process's environment configures in the libraries below the edges (codegen's compile and launch
// options, fatbinary selection), read in one place: libcuda's initialisation (cuInit), the embedding API's device
// creation and the CLI take their options from processSettings(); the libraries themselves never read the
// environment. README.md's table lists every variable and which layer reads it.
#pragma once

#include "ptxforge/codegen/CompiledModule.h"
#include "ptxforge/codegen/Launch.h"
#include "ptxforge/fatbin/Selection.h"

#include <cstdint>
#include <string>

namespace ptxforge::driver {

/// PTXFORGE_JIT_TIER: which code the driver's JIT makes. Tiered (the default: a kernel starts on its quick code
/// and moves to the optimized code when that is compiled), Quick ("0": the quick code only, codegen::quickCode,
/// never upgraded: blocks run their threads in a loop or as fibers; for testing that path over the whole corpus),
/// Optimized
/// ("2": the optimized code up front).
enum class JitTier { Tiered, Quick, Optimized };

struct Settings {
  /// PTXFORGE_JIT_CPU (TargetCpu), PTXFORGE_STREAMING_STORES (StreamingStoreBytes; unset: half of the host's
  /// last-level cache), PTXFORGE_LOOP_CUTS=0 (Lowering.LoopCuts), PTXFORGE_JIT_TIER=0 (codegen::quickCode's
  /// options), PTXFORGE_PERF_MAP=1|objects (Perf). OptLevel stays at its default but for the quick code.
  codegen::CompileOptions Compile;
  JitTier Tier = JitTier::Tiered; ///< PTXFORGE_JIT_TIER
  unsigned Workers = 0;           ///< PTXFORGE_WORKERS: threads per launch (0: one per CPU of the affinity mask)
  bool PinWorkers = true;         ///< PTXFORGE_PIN_WORKERS=0 clears it
  /// PTXFORGE_LAUNCH_TIMEOUT: seconds a launch may run before the watchdog stops it (0: no watchdog). A value
  /// that is not a non-negative number leaves it 0 and sets LaunchTimeoutInvalid (warned about once).
  double LaunchTimeoutSeconds = 0;
  bool LaunchTimeoutInvalid = false;
  /// PTXFORGE_LLVM_ARGS: LLVM's own options, a debugging switch with process-wide effect (see
  /// codegen::setProcessLLVMOptions); empty when unset.
  std::string LLVMArgs;
  /// PTXFORGE_DRIVER_VERBOSE (set, any value): libcuda reports failures, unsupported calls and the export
  /// tables' requests and calls on stderr.
  bool Verbose = false;
  /// PTXFORGE_MEMCHECK (a nonzero integer): the compute-sanitizer-like checks of codegen's Memcheck.h. Sets
  /// Compile.Lowering.Memcheck and runs quick code only (Tier Quick, no block functions: the checks name each
  /// access's thread, and barriers stay calls).
  bool Memcheck = false;
  fatbin::JitPolicy Jit; ///< CUDA_FORCE_PTX_JIT, CUDA_DISABLE_PTX_JIT (set when a nonzero integer)

  /// Reads the variables now.
  static Settings fromEnvironment();
  /// Config with this process's launch worker settings (Workers when Config has none, PinWorkers) and watchdog.
  codegen::LaunchConfig launchConfig(codegen::LaunchConfig Config) const;
};

/// The process's settings, read from the environment at the first call and fixed afterwards. The first call
/// also hands a set PTXFORGE_LLVM_ARGS to LLVM (codegen::setProcessLLVMOptions; a bad one is reported on stderr):
/// nothing touches LLVM's process-global options unless it is set.
const Settings &processSettings();

/// Memcheck mode's findings for the whole process (Settings::Memcheck): launches add to it and print what they
/// found on stdout as they end; the process's exit prints the error summary, as compute-sanitizer does.
codegen::MemcheckLog &memcheckFindings();
/// Prints the findings not yet printed (stdout, like the sanitizer).
void printMemcheckFindings();

/// CUDA_FORCE_PTX_JIT and CUDA_DISABLE_PTX_JIT as they are now: the loader reads them at every load (tests and
/// programs may set them between loads), Settings::fromEnvironment through this too.
fatbin::JitPolicy jitPolicyFromEnvironment();

/// Half the last-level cache that CPU 0 shares, as sysfs tells it (glibc's sysconf can give the whole package's:
/// 320 MiB on a VM whose L3 slice is 32 MiB); codegen::DefaultStreamingStoreBytes when sysfs does not say.
uint64_t hostStreamingStoreBytes();

} // namespace ptxforge::driver
