// A loaded module: where its PTX came from (a .ptx file, PTX text, a fatbinary container or file), the
// compiled host code (the whole module's, or per kernel when loaded lazily), its kernels (driver::Function)
// and its globals (registered as device memory).
#pragma once

#include "ptxforge/codegen/CompiledModule.h"
#include "ptxforge/codegen/CompiledObject.h"
#include "ptxforge/codegen/Launch.h"
#include "ptxforge/driver/BackgroundJobs.h"
#include "ptxforge/driver/Settings.h"
#include "ptxforge/driver/Status.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ptxforge::driver {

class Context;
class Module;
struct CacheKeyInputs;

/// The JIT options of cuModuleLoadDataEx / cuLinkCreate that change what is compiled.
struct JitOptions {
  std::optional<unsigned> OptLevel; ///< CU_JIT_OPTIMIZATION_LEVEL (0-4)
  std::optional<unsigned> TargetCc; ///< CU_JIT_TARGET: major*10+minor; default the context's device
  bool Verbose = false;             ///< CU_JIT_LOG_VERBOSE
  /// The caller takes an error log (CU_JIT_ERROR_LOG_BUFFER): a lazy load lowers the module at once (the
  /// kernels still compile at their first use), so that what cannot be lowered reaches that log, as NVIDIA's
  /// JIT reports it at the load.
  bool ErrorLog = false;
  /// How codegen compiles (its OptLevel is OptLevel's); unset: the process's settings (processSettings()).
  std::optional<codegen::CompileOptions> Codegen;
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

/// A kernel's host code: the code it is in and its KernelInfo there (which launchKernel needs).
struct KernelCode {
  const codegen::CompiledModule *Code = nullptr;
  const codegen::KernelInfo *Kernel = nullptr;
};

/// A kernel of a module and the attributes cuFuncSetAttribute changes.
class Function {
public:
  /// Code is the kernel's code, or empty when its module compiles each kernel at its first use.
  Function(Module &Parent, const codegen::KernelInfo &Info, KernelCode Code);

  Module &module() const { return Parent; }
  const codegen::KernelInfo &info() const { return Info; }
  llvm::StringRef name() const { return Info.Name; }

  /// The kernel's host code; a lazily loaded module compiles the kernel (or takes it from the compute cache)
  /// at the first call, alone. Thread-safe; a failure is kept and returned again.
  [[nodiscard]] llvm::Expected<KernelCode> code();
  /// The code once compiled, else null.
  const KernelCode *compiledCode() const { return Ready.load(std::memory_order_acquire) ? &Code : nullptr; }
  /// Whether the kernel's code came from the compute cache (for a module compiled whole: whether the module's
  /// did).
  bool fromComputeCache() const { return FromCache; }
  /// Tiered JIT: where the optimized code appears when the kernel's code() is its quick code (see
  /// codegen::TierUp); null otherwise.
  const codegen::TierUp *upgrade() const {
    return OptimizeJob || HotStarted.load(std::memory_order_acquire) ? &Upgrade : nullptr;
  }
  /// The hot tier: a launch of the kernel ran Seconds, on fibers (without a block function) or not. The hot tier
  /// compiles the kernel again, in the background, once its runs have taken as long as that compile is expected
  /// to (a JIT's hot tier; the rent-or-buy rule keeps the total within twice the better choice made in
  /// hindsight), where its optimized code left out
  /// - its region split, its barriers and collectives being past the region budget
  ///   (codegen::KernelInfo::DeferredRegionCuts): counting runs on fibers;
  /// - its resume loops (codegen::KernelInfo::DeferredResumeLoops): counting runs once its profile says one
  ///   would have run.
  /// Launches take the code up through upgrade().
  void noteRun(double Seconds, bool OnFibers);
  /// Where launches count what the hot tier reads.
  codegen::KernelProfile *profile() { return &Profile; }
  /// Whether the hot tier's code is in (launches take it up through upgrade()).
  bool onHotCode() const { return HotIn.load(std::memory_order_acquire); }

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

  /// Checks a launch configuration against the device's and this kernel's limits (InvalidValue), its cluster
  /// shape against the kernel's cluster directives and attributes (InvalidClusterSize).
  [[nodiscard]] llvm::Error checkLaunch(const codegen::LaunchConfig &Config) const;

  /// Thread-block clusters: CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED (clusters of up to 16 blocks
  /// instead of 8), CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE (a hint) and the required cluster
  /// shape (REQUIRED_CLUSTER_WIDTH/HEIGHT/DEPTH: the kernel's .reqnctapercluster, else settable).
  bool nonPortableClusterSizeAllowed() const { return NonPortableClusters; }
  [[nodiscard]] llvm::Error setNonPortableClusterSizeAllowed(int Value);
  int clusterSchedulingPolicy() const { return ClusterPolicy; }
  [[nodiscard]] llvm::Error setClusterSchedulingPolicy(int Policy);
  unsigned requiredClusterDim(unsigned Dim) const { return Dim < 3 ? RequiredCluster[Dim] : 0; }
  [[nodiscard]] llvm::Error setRequiredClusterDim(unsigned Dim, int Value);
  /// The largest cluster the kernel may be launched with: .maxclusterrank, else 8 or 16 blocks.
  unsigned maxClusterSize() const;
  /// The cluster shape a launch of Config gets: its attribute's, else the required one; (0,0,0): none.
  codegen::Dim3 clusterShape(const codegen::LaunchConfig &Config) const;
  /// Clusters of Config's shape that the device holds at once (0 without a shape, or where one block cannot
  /// be resident); InvalidClusterSize for a shape the kernel cannot be launched with.
  llvm::Expected<int> maxActiveClusters(const codegen::LaunchConfig &Config) const;
  /// The largest cluster of Config's blocks that can run: 8, or 16 with non-portable sizes allowed (0 where one
  /// block cannot be resident).
  llvm::Expected<int> maxPotentialClusterSize(const codegen::LaunchConfig &Config) const;
  /// The parameter buffer from cuLaunchKernel's kernelParams: one pointer per parameter.
  [[nodiscard]] llvm::Expected<std::vector<char>> packParams(void *const *KernelParams) const;
  /// The parameter buffer from cuLaunchKernel's `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE).
  [[nodiscard]] llvm::Expected<std::vector<char>> packParams(const void *Buffer, size_t Size) const;

private:
  friend class Module;
  Module &Parent;
  const codegen::KernelInfo &Info;
  /// Set once, under the module's lock: the kernel's own code when it was compiled alone, and the outcome.
  std::unique_ptr<codegen::CompiledModule> OwnCode;
  KernelCode Code;
  std::atomic<bool> Ready{false};
  bool FromCache = false;
  /// Tiered JIT: the background compile of the optimized code, that code, and its block function.
  BackgroundJobs::Handle OptimizeJob;
  std::unique_ptr<codegen::CompiledModule> Optimized;
  codegen::TierUp Upgrade;
  /// The hot tier (noteRun): the optimized code's deferred cuts and resume loops (0: none), the time it ran for
  /// them since, its profile, and the compile of the hot code, which HotCode holds.
  std::atomic<uint32_t> DeferredCuts{0};
  std::atomic<uint32_t> DeferredResumeLoops{0};
  std::atomic<uint64_t> HotMicroseconds{0};
  codegen::KernelProfile Profile;
  std::atomic<bool> HotStarted{false};
  BackgroundJobs::Handle HotJob;
  std::unique_ptr<codegen::CompiledModule> HotCode;
  std::atomic<bool> HotIn{false};
  std::optional<Status> Failure;
  std::string FailureLog;
  unsigned MaxDynamicShared;
  int Carveout = -1;
  int CacheConfig = 0;
  bool NonPortableClusters = false;
  int ClusterPolicy = 0;
  uint32_t RequiredCluster[3] = {0, 0, 0};
  [[nodiscard]] llvm::Error checkClusterShape(const codegen::LaunchConfig &C, bool WholeGrid) const;
};

/// NVIDIA's CUDA_MODULE_LOADING: Lazy (the default; also what DEFAULT means since CUDA 12.2) compiles one
/// kernel at a time, at its first cuModuleGetFunction or launch (with the functions it reaches); the module's
/// variables (and address-taken functions) are compiled once for all its kernels, at the first use of the
/// module. EAGER compiles the whole module at load.
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
  [[nodiscard]] static llvm::Expected<std::unique_ptr<Module>> fromObject(Context &Ctx,
                                                                          const codegen::CompiledObject &Object,
                                                                          llvm::StringRef Name,
                                                                          unsigned ComputeCapability, JitLogs &Logs);
  ~Module();

  Context &context() const { return Ctx; }
  /// Makes a lazily loaded module usable unless that is done: lowers it, compiles (or takes from the compute
  /// cache) the code its kernels share (its variables) and makes the kernels' handles, whose code each
  /// compiles at its first use (Function::code()). Safe to call from any number of threads. A failure is kept:
  /// later calls return it again.
  [[nodiscard]] llvm::Error materialize();
  bool materialized() const { return Ready.load(std::memory_order_acquire); }
  /// The message of a failed materialize() (the JIT error log's text), empty otherwise.
  std::string materializeLog() const;
  /// Whether the module's code (compiled per kernel: the shared part and kernel index) came from the compute
  /// cache (after materialize()).
  bool fromComputeCache() const { return FromCache; }

  /// The kernel called Name with its code (materializing the module and compiling the kernel first); fails
  /// with NotFound, or why the code could not be compiled.
  /// The kernel Name without compiling it (a lazily loaded module compiles it at its first launch or
  /// loadFunction), as cuLibraryGetKernel finds kernels; NotFound when there is none.
  [[nodiscard]] llvm::Expected<Function *> findFunction(llvm::StringRef Name);
  [[nodiscard]] llvm::Expected<Function *> loadFunction(llvm::StringRef Name);
  /// loadFunction(Name), or null.
  Function *function(llvm::StringRef Name);
  /// The kernels once the module is materialized (empty before); their code may not be compiled yet.
  const std::vector<std::unique_ptr<Function>> &functions() const;
  /// The number of kernels, known from the PTX at load.
  size_t functionCount() const { return KernelCount; }
  /// The number of kernels whose code is compiled (or loaded): all once materialized when compiled whole.
  size_t compiledFunctionCount() const;

  struct Global {
    uint64_t Address = 0, Size = 0;
  };
  /// A `.global`/`.const` variable (materializing the module first), or nothing.
  std::optional<Global> global(llvm::StringRef Name);

  unsigned ptxTarget() const { return PtxTarget; } ///< the `.target` sm number (75 for sm_75)
  /// The `.target` sm number a kernel's PTX was written for: a linked input's own (ptx::kernelTargetPragmas).
  unsigned ptxTarget(llvm::StringRef Kernel) const;
  unsigned binaryVersion() const { return BinaryVersion; } ///< the compute capability compiled for
  /// Tiered JIT: blocks until the optimized code of every kernel that started on its quick code is compiled
  /// (and in the compute cache). Launches never need this; tests and tools that look at the cache do.
  void waitForBackgroundCompiles() const;
  unsigned constBytes() const { return ConstBytes; }
  /// Local (per-thread) bytes a kernel declares, by kernel name.
  unsigned localBytes(llvm::StringRef Kernel) const;
  unsigned registerCount(llvm::StringRef Kernel) const;

private:
  friend class Function; // Function::code() compiles through compileFunction
  explicit Module(Context &Ctx);
  static llvm::Expected<std::unique_ptr<Module>> fromPtx(Context &Ctx, std::string Ptx, std::string Name,
                                                         const JitOptions &Options, JitLogs &Logs, ModuleLoading Mode);
  /// Takes Loaded (Object's code, the whole module's) with its kernels, globals and PTX facts.
  llvm::Error install(const codegen::CompiledObject &Object, std::unique_ptr<codegen::CompiledModule> Loaded);
  /// Registers the globals Facts lists that Code defines, and takes the facts.
  llvm::Error adoptFacts(const codegen::PtxFacts &Facts);
  void addFunction(const codegen::KernelInfo &Info, KernelCode Code);
  llvm::Error materializeWhole();
  llvm::Error materializeShared();
  /// Compiles F alone (F's module is compiled per kernel); Function::code() calls it.
  llvm::Expected<KernelCode> compileFunction(Function &F);
  /// The background compiles of the tiered JIT (optimized code, hot tier): Compile makes F's better code (cache
  /// key Key) in Job into Into, which launches take up between blocks; a failure leaves F where it is, as Stays
  /// says. Then, unless cancelled, Finish runs under MaterializeLock with the new code (null: none).
  using UpgradeCompile = std::function<llvm::Expected<codegen::CompiledObject>(const codegen::CancelToken *)>;
  void startUpgrade(Function &F, BackgroundJobs::Handle &Job, std::unique_ptr<codegen::CompiledModule> &Into,
                    CacheKeyInputs Key, UpgradeCompile Compile, const char *Stays,
                    std::function<void(const codegen::CompiledModule *)> Finish);
  /// F's launches move to K's block function in Code, which outlives them (F holds it).
  static void takeUp(Function &F, const codegen::CompiledModule &Code, const codegen::KernelInfo &K);
  /// Tiered JIT: F runs on its quick code; compiles its optimized code (cache key Key) in the background.
  void startOptimizedCompile(Function &F, CacheKeyInputs Key);
  /// The hot tier: compiles F's region split past the budget, or with its resume loops, in the background
  /// (Function::noteRun).
  void startHotCompile(Function &F);
  /// The kernel's optimized code Code is in: one that left something to the hot tier (its region split or its resume
  /// loops) takes the hot tier's code from the compute cache where it holds it, else lets F's launches start the
  /// hot compile; any other kernel is done. Under MaterializeLock.
  void optimizedCodeIn(Function &F, const codegen::CompiledModule &Code);
  /// A kernel has all the code it will get (under MaterializeLock): the PTX goes once no kernel needs it, the
  /// lowered IR once only kernels waiting for the hot tier do.
  void kernelDone();
  /// Frees the quick and optimized lowerings once only kernels waiting for the hot tier are left.
  void dropLoweringsIfOnlyHotLeft();
  /// Lets each background compile finish for as long as its kernel ran on the code it replaces
  /// (BackgroundJobs::finishOrCancel), cancels the rest (they store nothing unless finished), and waits until
  /// none runs.
  void settleBackgroundCompiles() const;
  /// A kernel's compiled part, JIT-linked against the module's shared part.
  llvm::Expected<std::unique_ptr<codegen::CompiledModule>> loadKernelCode(const codegen::CompiledObject &O) const {
    return codegen::CompiledModule::load(O, Code.get(), processSettings().Compile.Perf);
  }

  Context &Ctx;
  /// Until every kernel is compiled: the verified PTX and how to compile it. Guarded by MaterializeLock.
  struct PendingCompile;
  std::unique_ptr<PendingCompile> Pending;
  mutable std::mutex MaterializeLock;
  std::mutex OptimizeLock; ///< tiered JIT: held by the background compile that uses the full lowering
  std::atomic<bool> Ready{false};
  bool FromCache = false;
  std::optional<Status> Failure; ///< with FailureLog, what materialize() keeps returning
  std::string FailureLog;
  bool Returned = false; ///< load returned the module: later failures are printed (verbose), not logged
  size_t KernelCount = 0;
  /// The whole module's code, or (compiled per kernel) the code its kernels share, which they import; null for
  /// an image without kernels and for a per-kernel module with nothing to share.
  std::unique_ptr<codegen::CompiledModule> Code;
  std::vector<codegen::KernelInfo> Index;           ///< compiled per kernel: every kernel, as lowering described it
  std::vector<std::unique_ptr<Function>> Functions; ///< after Code and Index: destroyed first
  struct NamedGlobal {
    std::string Name;
    Global G;
  };
  std::vector<NamedGlobal> Globals;
  struct KernelStats {
    std::string Name;
    unsigned LocalBytes = 0, Registers = 0, TargetSm = 0;
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
/// PtxText false: the source must be a fatbinary (container or ELF), as cuLinkAddData's CU_JIT_INPUT_FATBINARY
/// takes; PTX text is then an invalid image like any other bytes.
[[nodiscard]] llvm::Expected<SelectedPtx> selectPtx(const ModuleSource &Source, unsigned ComputeCapability,
                                                    JitLogs &Logs, bool PtxText = true);

} // namespace ptxforge::driver
