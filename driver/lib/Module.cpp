// Loading a module: select the PTX, run the front end (diagnostics go to the JIT error log), refuse PTX the
// device cannot run, then (at load or, lazily, at first use) take the compiled code from the compute cache or
// compile it with codegen, and register the globals as device memory. Also the kernels' attributes and launch
// checks (driver::Function).
#include "ptxforge/driver/Module.h"
#include "ptxforge/driver/BackgroundJobs.h"
#include "ptxforge/driver/ComputeCache.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Link.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Settings.h"
#include "ptxforge/driver/Status.h"

#include "ptxforge/codegen/SplitModule.h"
#include "ptxforge/ptx/Frontend.h"
#include "ptxforge/ptx/Requirements.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace ptxforge;
using namespace ptxforge::driver;

namespace {

unsigned codegenOptLevel(const JitOptions &O) {
  if (!O.OptLevel)
    return 2;
  return std::min(*O.OptLevel, 3u);
}

std::string formatDiagnostics(const ptx::FrontendResult &R) {
  std::string Out;
  for (const ptx::Diagnostic &D : R.Diags.sorted()) {
    Out += ptx::formatDiagnostic(*R.Source, D);
    Out += '\n';
  }
  return Out;
}

float millisecondsSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - Start).count();
}

/// PTXFORGE_DRIVER_VERBOSE: a compile that fails after the load returned (lazy loading, background compiles)
/// has no JIT log to go to; its log goes to stderr, as the C API prints a failed load's.
bool verboseFailures() {
  static const bool V = std::getenv("PTXFORGE_DRIVER_VERBOSE") != nullptr;
  return V;
}

void printLateFailure(const std::string &Log) {
  if (verboseFailures())
    std::fprintf(stderr, "%s", Log.c_str());
}

std::string ccName(unsigned CC) { return std::to_string(CC / 10) + "." + std::to_string(CC % 10); }

/// One compiled part of a module (the whole module, the shared part of one compiled per kernel, or a kernel)
/// and its code loaded into this process.
struct LoadedPart {
  codegen::CompiledObject Object;
  std::unique_ptr<codegen::CompiledModule> Code; ///< null when Load had nothing to load
  bool FromCache = false;
};

using CompilePart = llvm::function_ref<llvm::Expected<codegen::CompiledObject>()>;
using LoadPart =
    llvm::function_ref<llvm::Expected<std::unique_ptr<codegen::CompiledModule>>(const codegen::CompiledObject &)>;

/// The part Key names from the compute cache, when it holds one this process can load.
std::optional<LoadedPart> cachedPart(const CacheKeyInputs &Key, LoadPart Load) {
  ComputeCache &Cache = ComputeCache::global();
  if (!Cache.enabled())
    return std::nullopt;
  if (std::optional<std::string> Bytes = Cache.lookup(computeCacheKey(Key))) {
    auto Object = codegen::CompiledObject::deserialize(*Bytes);
    if (!Object)
      llvm::consumeError(Object.takeError());
    else if (auto Code = Load(*Object))
      return LoadedPart{std::move(*Object), std::move(*Code), true};
    else
      llvm::consumeError(Code.takeError());
  }
  return std::nullopt;
}

/// The part Key names, compiled (and stored in the compute cache), loaded by Load. Compilation errors carry
/// InvalidPtx, loading errors InvalidImage.
llvm::Expected<LoadedPart> compilePart(const CacheKeyInputs &Key, CompilePart Compile, LoadPart Load) {
  ComputeCache &Cache = ComputeCache::global();
  std::optional<CacheKey> Hash;
  if (Cache.enabled())
    Hash = computeCacheKey(Key);
  auto Object = Compile();
  if (!Object)
    return makeError(Status::InvalidPtx, llvm::toString(Object.takeError()));
  if (Hash)
    Cache.store(*Hash, Object->serialize());
  auto Code = Load(*Object);
  if (!Code)
    return makeError(Status::InvalidImage, "the host code cannot be loaded: " + llvm::toString(Code.takeError()));
  return LoadedPart{std::move(*Object), std::move(*Code), false};
}

/// The part Key names, from the compute cache when it holds it, else compiled (and stored). A cached object
/// this process cannot load (another object format) is compiled afresh and overwritten.
llvm::Expected<LoadedPart> loadPart(const CacheKeyInputs &Key, CompilePart Compile, LoadPart Load) {
  if (std::optional<LoadedPart> Cached = cachedPart(Key, Load))
    return std::move(*Cached);
  return compilePart(Key, Compile, Load);
}

} // namespace

struct Module::PendingCompile {
  std::unique_ptr<ptx::FrontendResult> Front;
  std::string Name;
  codegen::CompileOptions Options;
  bool PerKernel = false; ///< lazy loading: the shared part at materialize(), each kernel at its first use
  /// The lowered module, cut into parts; made at the first part compiled (none when the cache has them all).
  /// Tiered JIT: QuickSplit is lowered without block functions (a fraction of the lowering's time: cub_big
  /// 0.8 s instead of 4 s) and serves the shared part and the quick code, under the module's MaterializeLock;
  /// Split, the full lowering in an LLVMContext of its own, serves the background compiles, one at a time under
  /// OptimizeLock, so that they never hold up another kernel's first use.
  std::unique_ptr<codegen::ModuleSplit> Split, QuickSplit;
  size_t KernelsLeft = 0;
  /// Of KernelsLeft, those whose optimized code is in but which may still go hot (Module::optimizedCodeIn).
  size_t WaitingForHotTier = 0;

  CacheKeyInputs key(unsigned CC, llvm::StringRef Part) const {
    std::string Code = Options.codeKey(); // PTXFORGE_JIT_TIER=0: no block functions, other code, another entry
    return {Front->Source->text(), CC, Part.empty() ? Code : Code + " " + Part.str()};
  }
  /// Kernel Name's part, compiled (Quick: without block functions, the tiered JIT's quick code). Cancel: a
  /// background compile's flag (BackgroundJobs::CancelFlag), which stops the lowering and the compile.
  llvm::Expected<codegen::CompiledObject> compileKernel(llvm::StringRef Name, bool Quick,
                                                        const codegen::CancelToken *Cancel = nullptr) {
    auto S = split(Quick, Cancel);
    if (!S)
      return S.takeError();
    auto Part = (*S)->kernelPart(Name);
    if (!Part)
      return Part.takeError();
    codegen::CompileOptions O = Quick ? codegen::quickCode(Options) : Options;
    O.Cancel = Cancel;
    return codegen::compileObject(std::move(*Part), O);
  }
  /// Kernel Name's hot tier: its region split past the budget (LoweringOptions::HotKernels), from a lowering of
  /// its own that gives no other kernel a block function.
  llvm::Expected<codegen::CompiledObject> compileHotKernel(llvm::StringRef Name, const codegen::CancelToken *Cancel) {
    codegen::CompileOptions O = Options;
    O.Lowering.HotKernels = {Name.str()};
    O.Lowering.Cancel = O.Cancel = Cancel;
    auto Lowered = codegen::lowerToLLVM(*Front->Verified, Front->Source.get(), O.Lowering);
    if (!Lowered)
      return Lowered.takeError();
    codegen::ModuleSplit Hot(std::move(*Lowered));
    auto Part = Hot.kernelPart(Name);
    if (!Part)
      return Part.takeError();
    return codegen::compileObject(std::move(*Part), O);
  }
  llvm::Expected<codegen::ModuleSplit *> split(bool Quick, const codegen::CancelToken *Cancel = nullptr) {
    std::unique_ptr<codegen::ModuleSplit> &S = Quick ? QuickSplit : Split;
    if (!S) {
      codegen::LoweringOptions LO = Options.Lowering;
      LO.BlockFunctions &= !Quick;
      LO.Cancel = Cancel;
      auto Lowered = codegen::lowerToLLVM(*Front->Verified, Front->Source.get(), LO);
      if (!Lowered)
        return Lowered.takeError();
      S = std::make_unique<codegen::ModuleSplit>(std::move(*Lowered));
    }
    return S.get();
  }
};

Module::Module(Context &Ctx) : Ctx(Ctx) {}

ModuleLoading ptxforge::driver::moduleLoadingMode() {
  const char *V = std::getenv("CUDA_MODULE_LOADING");
  return V && llvm::StringRef(V).trim().equals_insensitive("EAGER") ? ModuleLoading::Eager : ModuleLoading::Lazy;
}

llvm::Expected<std::unique_ptr<Module>> Module::load(Context &Ctx, const ModuleSource &Source,
                                                     const JitOptions &Options, JitLogs &Logs) {
  if (auto E = Driver::get().checkSticky())
    return E;
  unsigned CC = Options.TargetCc.value_or(deviceProperties(Ctx.device()).computeCapability());
  auto Start = std::chrono::steady_clock::now();
  auto Selected = selectPtx(Source, CC, Logs);
  if (!Selected)
    return Selected.takeError();
  if (Selected->Empty) {
    std::unique_ptr<Module> M(new Module(Ctx));
    M->BinaryVersion = CC;
    M->Ready.store(true, std::memory_order_release); // nothing to compile
    Logs.WallMilliseconds = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - Start).count();
    return M;
  }
  if (!Selected->Object.empty()) {
    auto Object = codegen::CompiledObject::deserialize(Selected->Object);
    if (!Object) {
      Logs.Error = Selected->Name + ": error: " + llvm::toString(Object.takeError()) + "\n";
      return makeError(Status::InvalidImage, "the host-native entry is corrupt");
    }
    auto M = fromObject(Ctx, *Object, Selected->Name, CC, Logs);
    Logs.WallMilliseconds = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - Start).count();
    if (M && Options.Verbose)
      Logs.Info = "ptxforge: loaded host-native code " + Selected->Name + " (" + Object->TargetCpu + ")\n";
    return M;
  }
  return fromPtx(Ctx, std::move(Selected->Text), std::move(Selected->Name), Options, Logs, moduleLoadingMode());
}

llvm::Expected<std::unique_ptr<Module>> Module::compile(Context &Ctx, std::string Ptx, std::string Name,
                                                        const JitOptions &Options, JitLogs &Logs) {
  return fromPtx(Ctx, std::move(Ptx), std::move(Name), Options, Logs, ModuleLoading::Eager);
}

llvm::Expected<std::unique_ptr<Module>> Module::fromPtx(Context &Ctx, std::string Ptx, std::string Name,
                                                        const JitOptions &Options, JitLogs &Logs, ModuleLoading Mode) {
  auto Start = std::chrono::steady_clock::now();
  unsigned CC = Options.TargetCc.value_or(deviceProperties(Ctx.device()).computeCapability());
  auto Front = ptx::runFrontend(std::make_unique<ptx::SourceBuffer>(Name, std::move(Ptx)));
  if (!Front->ok()) {
    Logs.Error = formatDiagnostics(*Front) + "ptxforge: PTX JIT compilation of " + Name + " failed\n";
    const ptx::Module *M = Front->module();
    if (M && M->Version.value() > ptx::MaxSupportedPtxVersion)
      return makeError(Status::UnsupportedPtxVersion, "PTX ISA " + ptx::ptxVersionName(M->Version.value()));
    return makeError(Status::InvalidPtx, "the PTX has errors");
  }
  const ptx::Module &PM = Front->Verified->module();
  ptx::ModuleRequirements Req = ptx::computeRequirements(PM);
  std::vector<std::string> Reasons = ptx::reasonsCannotRun(PM, Req, CC, Front->Source.get());
  if (!Reasons.empty()) {
    Logs.Error = Name + ": error: the module cannot run on compute capability " + ccName(CC) + ": " +
                 llvm::join(Reasons, "; ") + "\n";
    return makeError(Status::InvalidPtx, "the PTX needs a newer device");
  }
  // A module is a whole program here, as for ptxas: a function it uses must be defined in it. Checked at the
  // load (lazy or not), where NVIDIA's JIT fails too, and in its words.
  if (std::vector<std::string> Missing = unresolvedExternFunctions(PM); !Missing.empty()) {
    for (const std::string &F : Missing)
      Logs.Error += "ptxas fatal   : Unresolved extern function '" + F + "'\n";
    return makeError(Status::InvalidPtx, "unresolved extern function '" + Missing.front() + "'");
  }

  std::unique_ptr<Module> M(new Module(Ctx));
  M->PtxTarget = PM.Tgt.Sm;
  M->BinaryVersion = CC;
  M->KernelCount = static_cast<size_t>(
      std::count_if(PM.Functions.begin(), PM.Functions.end(), [](const auto &F) { return F->IsEntry && F->HasBody; }));
  std::string Target = ptx::smName(PM.Tgt.Sm, PM.Tgt.Suffix);
  auto P = std::make_unique<PendingCompile>();
  P->Front = std::move(Front);
  P->Name = Name;
  P->Options = Options.Codegen.value_or(processSettings().Compile);
  P->Options.OptLevel = codegenOptLevel(Options);
  if (processSettings().Tier == JitTier::Quick)
    P->Options = codegen::quickCode(P->Options);
  P->PerKernel = Mode == ModuleLoading::Lazy;
  P->KernelsLeft = M->KernelCount;
  unsigned OptLevel = P->Options.OptLevel;
  M->Pending = std::move(P);
  if (Mode == ModuleLoading::Eager || Options.ErrorLog) {
    if (llvm::Error E = M->materialize()) {
      Logs.Error = M->FailureLog;
      return E;
    }
  }
  M->Returned = true;

  Logs.WallMilliseconds = millisecondsSince(Start);
  if (Options.Verbose) {
    std::string What = std::to_string(M->KernelCount) + " kernel(s) of " + Name + " (" + Target +
                       ") for compute capability " + ccName(CC) + " at -O" + std::to_string(OptLevel);
    if (Mode == ModuleLoading::Lazy)
      Logs.Info = "ptxforge: loaded " + What + "; compiling each kernel at its first use (CUDA_MODULE_LOADING=LAZY)\n";
    else
      Logs.Info = "ptxforge: " + std::string(M->FromCache ? "took " : "compiled ") + What +
                  (M->FromCache ? " from the compute cache" : "") + " in " +
                  std::to_string(static_cast<int>(Logs.WallMilliseconds)) + " ms\n";
  }
  return M;
}

llvm::Expected<std::unique_ptr<Module>> Module::fromObject(Context &Ctx, const codegen::CompiledObject &Object,
                                                           llvm::StringRef Name, unsigned CC, JitLogs &Logs) {
  std::unique_ptr<Module> M(new Module(Ctx));
  M->BinaryVersion = CC;
  M->KernelCount = Object.Kernels.size();
  llvm::Error E = llvm::Error::success();
  if (auto Loaded = codegen::CompiledModule::load(Object, nullptr, processSettings().Compile.Perf))
    E = M->install(Object, std::move(*Loaded));
  else
    E = makeError(Status::InvalidImage, "the host code cannot be loaded: " + llvm::toString(Loaded.takeError()));
  if (E) {
    std::string Why;
    Status S = takeStatus(std::move(E), &Why);
    Logs.Error = (Name + ": error: " + Why + "\n").str();
    return makeError(S, Why);
  }
  M->Ready.store(true, std::memory_order_release);
  return M;
}

llvm::Error Module::install(const codegen::CompiledObject &Object, std::unique_ptr<codegen::CompiledModule> Loaded) {
  Code = std::move(Loaded);
  if (auto E = adoptFacts(Object.Facts))
    return E;
  for (const codegen::KernelInfo &K : Code->kernels())
    addFunction(K, {Code.get(), &K});
  return llvm::Error::success();
}

llvm::Error Module::adoptFacts(const codegen::PtxFacts &Facts) {
  PtxTarget = Facts.TargetSm;
  for (const codegen::PtxFacts::Kernel &K : Facts.Kernels)
    Stats.push_back({K.Name, K.LocalBytes, K.Registers, K.TargetSm});
  for (const codegen::PtxFacts::Global &V : Facts.Globals) {
    uint64_t Size = 0;
    void *Address = Code ? Code->globalAddress(V.Name, &Size) : nullptr;
    if (!Address)
      continue;
    if (V.Const)
      ConstBytes += static_cast<unsigned>(Size);
    uint64_t A = reinterpret_cast<uint64_t>(Address);
    if (auto E = DeviceMemory::get().addExternal(A, Size, MemoryKind::ModuleGlobal, &Ctx))
      return E;
    Globals.push_back({V.Name, Global{A, Size}});
  }
  return llvm::Error::success();
}

void Module::addFunction(const codegen::KernelInfo &Info, KernelCode Code) {
  // Function handles become valid as the module materializes (a lazy module has none before).
  Functions.push_back(std::make_unique<Function>(*this, Info, Code));
  Driver::get().Functions.add(Functions.back().get());
}

llvm::Error Module::materialize() {
  if (Ready.load(std::memory_order_acquire))
    return llvm::Error::success();
  std::scoped_lock L(MaterializeLock);
  if (Ready.load(std::memory_order_acquire))
    return llvm::Error::success();
  if (Failure)
    return makeError(*Failure, FailureLog);
  if (!Pending)
    return makeError(Status::InvalidHandle, "the module has no code");
  if (llvm::Error E = Pending->PerKernel ? materializeShared() : materializeWhole()) {
    std::string Why;
    Failure = takeStatus(std::move(E), &Why);
    FailureLog = Pending->Name + ": error: " + Why + "\n";
    if (Returned)
      printLateFailure(FailureLog);
    return makeError(*Failure, FailureLog);
  }
  Ready.store(true, std::memory_order_release);
  return llvm::Error::success();
}

llvm::Error Module::materializeWhole() {
  PendingCompile &P = *Pending;
  auto Part = loadPart(
      P.key(BinaryVersion, ""),
      [&] { return codegen::compilePTXObject(*P.Front->Verified, P.Front->Source.get(), P.Options); },
      [](const codegen::CompiledObject &O) {
        return codegen::CompiledModule::load(O, nullptr, processSettings().Compile.Perf);
      });
  if (!Part)
    return Part.takeError();
  FromCache = Part->FromCache;
  if (auto E = install(Part->Object, std::move(Part->Code)))
    return E;
  Pending.reset(); // the IR is no longer needed
  return llvm::Error::success();
}

// The shared part's cache entry also holds the kernel index (every kernel's KernelInfo in its Kernels, which
// its code does not define) and the module's PTX facts: a warm load needs neither lowering nor the front end's
// module to make the handles.
llvm::Error Module::materializeShared() {
  PendingCompile &P = *Pending;
  auto Compile = [&]() -> llvm::Expected<codegen::CompiledObject> {
    auto Split = P.split(/*Quick=*/processSettings().Tier == JitTier::Tiered);
    if (!Split)
      return Split.takeError();
    codegen::CompiledObject Object;
    if ((*Split)->hasSharedPart()) {
      auto Shared = codegen::compileObject((*Split)->sharedPart(), P.Options);
      if (!Shared)
        return Shared.takeError();
      Object = std::move(*Shared);
    }
    Object.Kernels = (*Split)->kernels();
    Object.Facts = codegen::describePtx(P.Front->Verified->module());
    return Object;
  };
  auto Load = [](const codegen::CompiledObject &O) -> llvm::Expected<std::unique_ptr<codegen::CompiledModule>> {
    if (O.ObjectCode.empty())
      return nullptr;
    codegen::CompiledObject Shared = O;
    Shared.Kernels.clear();
    return codegen::CompiledModule::load(Shared, nullptr, processSettings().Compile.Perf);
  };
  auto Part = loadPart(P.key(BinaryVersion, "part=shared"), Compile, Load);
  if (!Part)
    return Part.takeError();
  Code = std::move(Part->Code);
  Index = std::move(Part->Object.Kernels);
  if (auto E = adoptFacts(Part->Object.Facts))
    return E;
  for (const codegen::KernelInfo &K : Index)
    addFunction(K, {});
  FromCache = Part->FromCache;
  return llvm::Error::success();
}

llvm::Expected<KernelCode> Module::compileFunction(Function &F) {
  std::scoped_lock L(MaterializeLock);
  if (F.Ready.load(std::memory_order_acquire))
    return F.Code;
  if (F.Failure)
    return makeError(*F.Failure, F.FailureLog);
  if (!Pending)
    return makeError(Status::InvalidHandle, "the module has no code");
  PendingCompile &P = *Pending;
  auto Compile = [&] { return P.compileKernel(F.name(), /*Quick=*/false); };
  auto Load = [&](const codegen::CompiledObject &O) { return loadKernelCode(O); };
  auto Fail = [&](llvm::Error E) {
    std::string Why;
    F.Failure = takeStatus(std::move(E), &Why);
    F.FailureLog = P.Name + ": error: kernel " + F.name().str() + ": " + Why + "\n";
    printLateFailure(F.FailureLog);
    return makeError(*F.Failure, F.FailureLog);
  };
  CacheKeyInputs Key = P.key(BinaryVersion, "kernel=" + F.name().str());
  // Tiered: without optimized code in the cache, the kernel starts on its quick code (the thread function
  // alone, compiled in a few ms) and a background compile makes the optimized code, which launches take up
  // between blocks (codegen::TierUp) and the cache keeps. (Whether the kernel gets a block function at all
  // only the full lowering tells; one that gets none just compiles its thread function twice.)
  bool Tiered = processSettings().Tier == JitTier::Tiered;
  std::optional<LoadedPart> Part;
  if (Tiered)
    Part = cachedPart(Key, Load);
  bool Quick = Tiered && !Part;
  if (Quick) {
    // The quick code is cached too: a program that ends before its optimized compiles do (they are cancelled at
    // exit) would otherwise compile every kernel's quick code again at each run.
    auto QuickPart = loadPart(
        P.key(BinaryVersion, "kernel=" + F.name().str() + " quick"),
        [&] { return P.compileKernel(F.name(), /*Quick=*/true); }, Load);
    if (!QuickPart)
      return Fail(QuickPart.takeError());
    Part = std::move(*QuickPart);
  }
  if (!Part) {
    auto Loaded = loadPart(Key, Compile, Load);
    if (!Loaded)
      return Fail(Loaded.takeError());
    Part = std::move(*Loaded);
  }
  const codegen::KernelInfo *K = Part->Code ? Part->Code->kernel(F.name()) : nullptr;
  if (!K)
    return Fail(makeError(Status::InvalidImage, "its code does not define it"));
  F.OwnCode = std::move(Part->Code);
  F.Code = {F.OwnCode.get(), K};
  F.FromCache = Part->FromCache;
  if (Quick)
    startOptimizedCompile(F, Key); // before Ready: launches read F.OptimizeJob; the job counts the kernel done
  else
    optimizedCodeIn(F, *F.Code.Code);
  F.Ready.store(true, std::memory_order_release);
  return F.Code;
}

void Module::waitForBackgroundCompiles() const {
  for (const auto &F : Functions) {
    BackgroundJobs::get().wait(F->OptimizeJob);
    BackgroundJobs::get().wait(F->HotJob);
  }
}

void Module::settleBackgroundCompiles() const {
  std::vector<BackgroundJobs::Handle> Jobs;
  for (const auto &F : Functions)
    for (const BackgroundJobs::Handle &H : {F->OptimizeJob, F->HotJob})
      if (H)
        Jobs.push_back(H);
  BackgroundJobs::get().finishOrCancel(Jobs);
}

void Module::startUpgrade(Function &F, BackgroundJobs::Handle &Job, std::unique_ptr<codegen::CompiledModule> &Into,
                          CacheKeyInputs Key, UpgradeCompile Compile, const char *Stays,
                          std::function<void(const codegen::CompiledModule *)> Finish) {
  F.Upgrade.Compiling.store(true, std::memory_order_release);
  Job = BackgroundJobs::get().start([this, &F, &Into, Key = std::move(Key), Compile = std::move(Compile), Stays,
                                     Finish = std::move(Finish)](const BackgroundJobs::CancelFlag &Cancel) {
    std::optional<LoadedPart> Part;
    {
      std::scoped_lock L(OptimizeLock); // one background compile at a time
      struct Done {
        codegen::TierUp &U;
        ~Done() { U.Compiling.store(false, std::memory_order_release); }
      } MarkDone{F.Upgrade};
      // Cancelled (the module unloads or the process exits): the code the kernel runs did the work. A compile
      // cancelled midway fails, so the cache gets no entry.
      if (codegen::cancelRequested(&Cancel))
        return;
      // No second cache lookup: the caller's missed a moment ago.
      auto Compiled = compilePart(
          Key, [&] { return Compile(&Cancel); }, [&](const codegen::CompiledObject &O) { return loadKernelCode(O); });
      if (!Compiled && codegen::cancelRequested(&Cancel)) {
        llvm::consumeError(Compiled.takeError());
        return;
      }
      if (!Compiled) {
        // What the kernel runs was compiled from the same PTX; it keeps running on that.
        std::string Why = llvm::toString(Compiled.takeError());
        printLateFailure("ptxforge: kernel '" + F.name().str() + "' " + Stays + ": " + Why + "\n");
      } else {
        Part = std::move(*Compiled);
      }
    }
    std::scoped_lock L(MaterializeLock);
    // New lives on in Into, where launches take it up, or in Part until Finish returns.
    const codegen::CompiledModule *New = Part ? Part->Code.get() : nullptr;
    const codegen::KernelInfo *K = New ? New->kernel(F.name()) : nullptr;
    if (K && New->blockEntry(*K)) {
      Into = std::move(Part->Code);
      takeUp(F, *Into, *K);
    }
    Finish(New);
  });
}

void Module::takeUp(Function &F, const codegen::CompiledModule &Code, const codegen::KernelInfo &K) {
  F.Upgrade.Code.store(&Code, std::memory_order_release);
  F.Upgrade.Block.store(Code.blockEntry(K), std::memory_order_release);
}

void Module::startOptimizedCompile(Function &F, CacheKeyInputs Key) {
  PendingCompile *P = Pending.get(); // lives until the last kernel is done, which this job's own may be
  startUpgrade(
      F, F.OptimizeJob, F.Optimized, std::move(Key),
      [P, &F](const codegen::CancelToken *Cancel) { return P->compileKernel(F.name(), /*Quick=*/false, Cancel); },
      "stays on its quick code",
      [this, &F](const codegen::CompiledModule *Code) {
        if (Code && !BackgroundJobs::get().exiting())
          optimizedCodeIn(F, *Code);
        else
          kernelDone();
      });
}

void Module::kernelDone() {
  if (--Pending->KernelsLeft == 0) {
    Pending.reset(); // every kernel has its code: the PTX and IR are no longer needed
  } else {
    dropLoweringsIfOnlyHotLeft();
  }
}

void Module::dropLoweringsIfOnlyHotLeft() {
  // Hot compiles lower the PTX afresh; the IR of the quick and optimized lowerings (cub_big: hundreds of MB)
  // serves no kernel any more. No background compile uses Split now: each kernel it would serve is done.
  if (Pending->KernelsLeft == Pending->WaitingForHotTier) {
    Pending->Split.reset();
    Pending->QuickSplit.reset();
  }
}

void Module::optimizedCodeIn(Function &F, const codegen::CompiledModule &Code) {
  // Left out of the optimized code for the hot tier: the region split (the kernel runs on fibers), or the resume
  // loops of a region split.
  const codegen::KernelInfo *K = Code.kernel(F.name());
  uint32_t Cuts = 0, ResumeLoops = 0;
  if (K && Code.blockEntry(*K))
    ResumeLoops = K->DeferredResumeLoops;
  else if (K)
    Cuts = K->DeferredRegionCuts;
  if (!Cuts && !ResumeLoops) {
    kernelDone();
    return;
  }
  PendingCompile &P = *Pending;
  if (auto Hot = cachedPart(P.key(BinaryVersion, "kernel=" + F.name().str() + " hot"),
                            [&](const codegen::CompiledObject &O) { return loadKernelCode(O); })) {
    const codegen::KernelInfo *HK = Hot->Code ? Hot->Code->kernel(F.name()) : nullptr;
    if (HK && Hot->Code->blockEntry(*HK)) {
      F.HotCode = std::move(Hot->Code);
      takeUp(F, *F.HotCode, *HK);
      F.HotIn.store(true, std::memory_order_release);
      F.HotStarted.store(true, std::memory_order_release); // launches take it up; no compile
      kernelDone();
      return;
    }
  }
  ++P.WaitingForHotTier;
  F.DeferredCuts.store(Cuts, std::memory_order_release);
  F.DeferredResumeLoops.store(ResumeLoops, std::memory_order_release);
  dropLoweringsIfOnlyHotLeft();
}

void Module::startHotCompile(Function &F) {
  std::scoped_lock L(MaterializeLock);
  PendingCompile *P = Pending.get(); // kept while F waits for its hot tier
  if (!P)
    return;
  startUpgrade(
      F, F.HotJob, F.HotCode, P->key(BinaryVersion, "kernel=" + F.name().str() + " hot"),
      [P, &F](const codegen::CancelToken *Cancel) { return P->compileHotKernel(F.name(), Cancel); },
      F.DeferredCuts.load(std::memory_order_acquire) ? "stays on fibers" : "stays without its resume loops",
      [this, P, &F](const codegen::CompiledModule *) {
        F.HotIn.store(F.HotCode != nullptr, std::memory_order_release);
        --P->WaitingForHotTier;
        kernelDone();
      });
}

size_t Module::compiledFunctionCount() const {
  std::scoped_lock L(MaterializeLock);
  return static_cast<size_t>(
      std::count_if(Functions.begin(), Functions.end(), [](const auto &F) { return F->compiledCode() != nullptr; }));
}

std::string Module::materializeLog() const {
  std::scoped_lock L(MaterializeLock);
  return FailureLog;
}

const std::vector<std::unique_ptr<Function>> &Module::functions() const {
  static const std::vector<std::unique_ptr<Function>> None;
  return materialized() ? Functions : None;
}

Module::~Module() {
  // The jobs use the module's IR and lock, and write into its functions: each finishes (its result cached for a
  // later load) or stops (a cancelled compile at its next function or optimization pass) before the module goes.
  settleBackgroundCompiles();
  // At exit (CUDA's runtime unloads its modules then) the PTX and IR are left to the end of the process: freeing
  // them took longer than everything else exit does (cub_big: several hundred ms).
  if (BackgroundJobs::get().exiting())
    (void)Pending.release();
  Driver &D = Driver::get();
  D.Modules.remove(this);
  for (const auto &F : Functions)
    D.Functions.remove(F.get());
  for (const NamedGlobal &G : Globals)
    DeviceMemory::get().removeExternal(G.G.Address);
}

llvm::Expected<Function *> Module::findFunction(llvm::StringRef Name) {
  if (llvm::Error E = materialize())
    return E;
  for (const auto &F : Functions)
    if (F->name() == Name)
      return F.get();
  return makeError(Status::NotFound, "no kernel '" + Name.str() + "'");
}

llvm::Expected<Function *> Module::loadFunction(llvm::StringRef Name) {
  auto F = findFunction(Name);
  if (!F)
    return F.takeError();
  if (auto Code = (*F)->code(); !Code)
    return Code.takeError();
  return *F;
}

Function *Module::function(llvm::StringRef Name) {
  auto F = loadFunction(Name);
  if (!F) {
    llvm::consumeError(F.takeError());
    return nullptr;
  }
  return *F;
}

std::optional<Module::Global> Module::global(llvm::StringRef Name) {
  if (llvm::Error E = materialize()) {
    llvm::consumeError(std::move(E));
    return std::nullopt;
  }
  for (const NamedGlobal &G : Globals)
    if (G.Name == Name)
      return G.G;
  return std::nullopt;
}

unsigned Module::localBytes(llvm::StringRef Kernel) const {
  for (const KernelStats &S : Stats)
    if (S.Name == Kernel)
      return S.LocalBytes;
  return 0;
}

unsigned Module::ptxTarget(llvm::StringRef Kernel) const {
  for (const KernelStats &S : Stats)
    if (S.Name == Kernel && S.TargetSm)
      return S.TargetSm;
  return PtxTarget;
}

unsigned Module::registerCount(llvm::StringRef Kernel) const {
  for (const KernelStats &S : Stats)
    if (S.Name == Kernel)
      return S.Registers;
  return 32;
}
