// Stage 5a of the pipeline: host object code. A LoweredModule optimized and compiled ahead of time into a
// relocatable object (ELF on Linux) for one target CPU, plus everything loading and launching needs that the
// object itself does not say: the kernels' and globals' metadata, the PTX facts the driver reports, and the CPU
// the code was compiled for. It is what fatbinary host-native entries and the compute cache store
// (serialize/deserialize), and what CompiledModule::load JIT-links; compiling PTX at run time goes through it too.
#pragma once

#include "ptxforge/codegen/CompiledModule.h"
#include "ptxforge/codegen/Lowering.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ptxforge::codegen {

/// What the driver reports about a module's PTX (cuFuncGetAttribute, cuModuleGetGlobal's memory kind) that its
/// host code no longer shows, so a module loaded from an object answers as one compiled from its PTX.
struct PtxFacts {
  struct Kernel {
    std::string Name;
    uint32_t LocalBytes = 0; ///< `.local` bytes the kernel declares
    uint32_t Registers = 0;  ///< 32-bit registers its PTX declares (1-255), as NVIDIA's NUM_REGS approximates
    uint32_t TargetSm = 0;   ///< the `.target` its PTX was written for (a linked input's: ptx::kernelTargetPragmas)
  };
  struct Global {
    std::string Name;
    bool Const = false; ///< `.const` (counts toward CONST_SIZE_BYTES), else `.global`
  };
  uint32_t TargetSm = 0;   ///< the `.target` sm number (75 for sm_75)
  char TargetSuffix = 0;   ///< 'a', 'f' or 0
  uint32_t PtxVersion = 0; ///< the `.version`, major*10+minor
  std::vector<Kernel> Kernels;
  std::vector<Global> Globals;

  const Kernel *kernel(llvm::StringRef Name) const;
  const Global *global(llvm::StringRef Name) const;
};

/// The facts of a verified module.
PtxFacts describePtx(const ptx::Module &M);

/// Host object code and what loading it needs. Plain data: build one with compileObject or deserialize.
class CompiledObject {
public:
  /// Bumped whenever the serialized layout or the meaning of a field changes; older bytes are refused.
  /// 2: block functions run a range of blocks; 3: ptxrt_region_release takes the span of live threads; 4: KernelInfo
  /// says whether the kernel may spin (MaySpin); 8: a matrix batch's descriptor lists the fragment loads it took
  /// over (exec/MmaBatch.cpp).
  static constexpr uint32_t FormatVersion = 9;

  std::string ObjectCode; ///< a relocatable object file for TargetTriple
  std::vector<KernelInfo> Kernels;
  std::vector<GlobalInfo> Globals;
  PtxFacts Facts;
  std::string TargetTriple;   ///< "x86_64-pc-linux-gnu"
  std::string TargetCpu;      ///< the LLVM CPU name compiled for: "znver4", "x86-64-v3"
  std::string TargetFeatures; ///< the explicit LLVM feature string ("+avx2,+fma,-avx512f,..."), may be empty
  unsigned OptLevel = 2;

  /// The bytes of this object: a versioned, checksummed container (see CompiledObject.cpp for the layout).
  std::string serialize() const;
  /// Reads bytes serialize() wrote. Truncated, corrupt or other-version bytes are an error, never a crash.
  static llvm::Expected<CompiledObject> deserialize(llvm::StringRef Bytes);
  /// Whether Bytes carry the magic of serialized objects and another FormatVersion than this build reads: code
  /// made by an older or newer ptxforge, which a loader can replace by the PTX beside it.
  static bool isOtherVersion(llvm::StringRef Bytes);

  /// The CPU features the code may use ("avx2", ...), implied by TargetCpu and TargetFeatures.
  std::vector<std::string> requiredFeatures() const;
  /// Fails, naming what is missing, unless this process's CPU can run the code (same architecture, every
  /// required feature present).
  llvm::Error checkRunsOnHost() const;
};

/// Optimizes LM at Options.OptLevel (optimizeModule, Optimize.h) and compiles it for Options.TargetCpu. Facts stay
/// empty (LM has no PTX).
llvm::Expected<CompiledObject> compileObject(LoweredModule LM, const CompileOptions &Options = {});

/// The whole pipeline from a verified module to an object: lower, compile, and record the module's PtxFacts.
llvm::Expected<CompiledObject> compilePTXObject(const ptx::VerifiedModule &M, const ptx::SourceBuffer *Source,
                                                const CompileOptions &Options = {});

/// A TargetMachine for Options.TargetCpu (this process's triple) set up as compileObject uses it:
/// position-independent code, the small code model. Also for emitting assembly or IR for the same target.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const CompileOptions &Options);

/// Gives M TM's data layout and triple and checks it with LLVM's verifier (a failure is a lowering bug).
llvm::Error prepareModule(llvm::Module &M, llvm::TargetMachine &TM);

/// M compiled by TM: an object file, or with Assembly its assembly listing.
llvm::Expected<std::string> emitMachineCode(llvm::Module &M, llvm::TargetMachine &TM, bool Assembly);

} // namespace ptxforge::codegen
