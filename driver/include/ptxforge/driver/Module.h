// A loaded module: where its PTX came from (a .ptx file, PTX text, a fatbinary container or file), the
// compiled host code, its kernels (driver::Function) and its globals (registered as device memory).
#pragma once

#include "ptxforge/codegen/CompiledModule.h"
#include "ptxforge/codegen/CompiledObject.h"
#include "ptxforge/codegen/Launch.h"
#include "ptxforge/driver/Status.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ptxforge::driver {

class Context;
class Module;

/// The JIT options of cuModuleLoadDataEx / cuLinkCreate that change what is compiled.
struct JitOptions {
  std::optional<unsigned> OptLevel; ///< CU_JIT_OPTIMIZATION_LEVEL (0-4)
  std::optional<unsigned> TargetCc; ///< CU_JIT_TARGET: major*10+minor; default the context's device
  bool Verbose = false;             ///< CU_JIT_LOG_VERBOSE
};

/// What a load reports back through the JIT log options.
struct JitLogs {
  std::string Info, Error;
  float WallMilliseconds = 0;
};

/// Where a module's PTX comes from.
struct ModuleSource {
  enum class Kind {
    File,  ///< a path: PTX text, a fatbinary, or an ELF file with a `.nv_fatbin` section
    Image, ///< a pointer handed to cuModuleLoadData*: PTX text, a fatbinary container, or an ELF image
  };
  Kind K = Kind::Image;
  std::string Path;
  const void *Image = nullptr;
};

/// A kernel of a module and the attributes cuFuncSetAttribute changes.
class Function {
public:
  Function(Module &Parent, const codegen::KernelInfo &Info);

  Module &module() const { return Parent; }
  const codegen::KernelInfo &info() const { return Info; }
  llvm::StringRef name() const { return Info.Name; }

  /// Largest block the kernel can be launched with (its .maxntid/.reqntid, else the device limit).
  unsigned maxThreadsPerBlock() const;
  uint64_t staticSharedBytes() const { return Info.StaticSharedBytes; }
  unsigned maxDynamicSharedBytes() const { return MaxDynamicShared; }
  /// Accepts up to the device's opt-in limit minus the static shared memory.
  [[nodiscard]] llvm::Error setMaxDynamicSharedBytes(int Bytes);
  int preferredCarveout() const { return Carveout; }
  [[nodiscard]] llvm::Error setPreferredCarveout(int Percent);
  int cacheConfig() const { return CacheConfig; }
  void setCacheConfig(int C) { CacheConfig = C; }
  unsigned constBytes() const;
  unsigned localBytes() const;
  unsigned numRegisters() const;

  /// Blocks of BlockSize threads with DynamicShared bytes each that one multiprocessor holds (the GPU
  /// generation's occupancy rules; 0 for impossible blocks).
  int activeBlocksPerMultiprocessor(int BlockSize, uint64_t DynamicShared) const;
  /// The block size (up to Limit, 0: none) with the most resident threads, and the grid that fills the device.
  struct BlockSuggestion {
    int MinGridSize = 0, BlockSize = 0;
  };
  BlockSuggestion suggestBlockSize(llvm::function_ref<uint64_t(int)> DynamicShared, int Limit) const;

  /// Checks a launch configuration against the device's and this kernel's limits (InvalidValue).
  [[nodiscard]] llvm::Error checkLaunch(const codegen::LaunchConfig &Config) const;
  /// The parameter buffer from cuLaunchKernel's kernelParams: one pointer per parameter.
  [[nodiscard]] llvm::Expected<std::vector<char>> packParams(void *const *KernelParams) const;
  /// The parameter buffer from cuLaunchKernel's `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE).
  [[nodiscard]] llvm::Expected<std::vector<char>> packParams(const void *Buffer, size_t Size) const;

private:
  Module &Parent;
  const codegen::KernelInfo &Info;
  unsigned MaxDynamicShared;
  int Carveout = -1;
  int CacheConfig = 0;
};

/// NVIDIA's CUDA_MODULE_LOADING: Lazy (the default; also what DEFAULT means since CUDA 12.2) compiles a
/// module's code at the first cuModuleGetFunction, cuModuleEnumerateFunctions or cuModuleGetGlobal on it;
/// EAGER compiles at load. ptxforge compiles a lazy module whole, at its first use (not one function at a time).
enum class ModuleLoading { Lazy, Eager };
/// Reads CUDA_MODULE_LOADING (EAGER, LAZY or DEFAULT, any case; anything else is the default).
ModuleLoading moduleLoadingMode();

class Module {
public:
  /// Reads, selects (fatbinaries), parses and verifies, and compiles now or at first use as
  /// moduleLoadingMode() says; errors carry InvalidImage, InvalidPtx, UnsupportedPtxVersion, NoBinaryForGpu,
  /// JitCompilationDisabled, FileNotFound... and Logs.Error says why. Compiled code comes from the compute
  /// cache (ComputeCache.h) when it holds this PTX compiled the same way, and goes into it otherwise.
  [[nodiscard]] static llvm::Expected<std::unique_ptr<Module>> load(Context &Ctx, const ModuleSource &Source,
                                                                    const JitOptions &Options, JitLogs &Logs);
  /// Parses, verifies and compiles PTX text now (the last stage of an eager load()).
  [[nodiscard]] static llvm::Expected<std::unique_ptr<Module>> compile(Context &Ctx, std::string Ptx, std::string Name,
                                                                       const JitOptions &Options, JitLogs &Logs);
  /// Loads compiled code (a fatbinary's host-native entry, or what compile() made) into Ctx; on failure
  /// Logs.Error says why, naming the module Name.
  [[nodiscard]] static llvm::Expected<std::unique_ptr<Module>>
  fromObject(Context &Ctx, const codegen::CompiledObject &Object, llvm::StringRef Name, unsigned ComputeCapability,
             JitLogs &Logs);
  ~Module();

  Context &context() const { return Ctx; }
  /// Compiles a lazily loaded module (or takes its code from the compute cache) unless that is done; safe to
  /// call from any number of threads. A failure is kept: later calls return it again.
  [[nodiscard]] llvm::Error materialize();
  bool materialized() const { return Ready.load(std::memory_order_acquire); }
  /// The message of a failed materialize() (the JIT error log's text), empty otherwise.
  std::string materializeLog() const;
  /// Whether the code came from the compute cache (after materialize()).
  bool fromComputeCache() const { return FromCache; }

  /// The kernel called Name (materializing the module first), or null: no such kernel, or compilation failed.
  Function *function(llvm::StringRef Name);
  /// The kernels once the module is materialized; empty before.
  const std::vector<std::unique_ptr<Function>> &functions() const;
  /// The number of kernels, known from the PTX at load.
  size_t functionCount() const { return KernelCount; }

  struct Global {
    uint64_t Address = 0, Size = 0;
  };
  /// A `.global`/`.const` variable (materializing the module first), or nothing.
  std::optional<Global> global(llvm::StringRef Name);

  const codegen::CompiledModule *code() const { return Code.get(); }
  unsigned ptxTarget() const { return PtxTarget; }         ///< the `.target` sm number (75 for sm_75)
  unsigned binaryVersion() const { return BinaryVersion; } ///< the compute capability compiled for
  unsigned constBytes() const { return ConstBytes; }
  /// Local (per-thread) bytes a kernel declares, by kernel name.
  unsigned localBytes(llvm::StringRef Kernel) const;
  unsigned registerCount(llvm::StringRef Kernel) const;

private:
  explicit Module(Context &Ctx);
  static llvm::Expected<std::unique_ptr<Module>> fromPtx(Context &Ctx, std::string Ptx, std::string Name,
                                                         const JitOptions &Options, JitLogs &Logs, ModuleLoading Mode);
  /// Links Object's code into this process and takes its kernels, globals and PTX facts.
  llvm::Error install(const codegen::CompiledObject &Object);

  Context &Ctx;
  /// Until materialized: the verified PTX and how to compile it. Guarded by MaterializeLock.
  struct PendingCompile;
  std::unique_ptr<PendingCompile> Pending;
  mutable std::mutex MaterializeLock;
  std::atomic<bool> Ready{false};
  bool FromCache = false;
  std::optional<Status> Failure; ///< with FailureLog, what materialize() keeps returning
  std::string FailureLog;
  size_t KernelCount = 0;
  std::unique_ptr<codegen::CompiledModule> Code; ///< null for an image without kernels
  std::vector<std::unique_ptr<Function>> Functions;
  struct NamedGlobal {
    std::string Name;
    Global G;
  };
  std::vector<NamedGlobal> Globals;
  struct KernelStats {
    std::string Name;
    unsigned LocalBytes = 0, Registers = 0;
  };
  std::vector<KernelStats> Stats;
  unsigned PtxTarget = 0, BinaryVersion = 0, ConstBytes = 0;
};

/// The PTX a source holds, chosen as NVIDIA's loader would (fatbinary selection, JIT policy from the
/// environment); Empty when the image is a container with no kernels to run (nvcc's dummy modules).
struct SelectedPtx {
  std::string Text;
  std::string Name;
  bool Empty = false;
  /// A host-native entry was chosen: its serialized codegen::CompiledObject (Text is empty).
  std::string Object;
};
[[nodiscard]] llvm::Expected<SelectedPtx> selectPtx(const ModuleSource &Source, unsigned ComputeCapability,
                                                    JitLogs &Logs);

} // namespace ptxforge::driver
