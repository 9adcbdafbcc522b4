// Loading a module: select the PTX, run the front end (diagnostics go to the JIT error log), refuse PTX the
// device cannot run, then (at load or, lazily, at first use) take the compiled code from the compute cache or
// compile it with codegen, and register the globals as device memory. Also the kernels' attributes and launch
// checks (driver::Function).
#include "ptxforge/driver/Module.h"
#include "ptxforge/driver/ComputeCache.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Status.h"

#include "ptxforge/ptx/Frontend.h"
#include "ptxforge/ptx/Requirements.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <chrono>
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

std::string ccName(unsigned CC) { return std::to_string(CC / 10) + "." + std::to_string(CC % 10); }

/// The object for a verified module: from the compute cache when it holds one for the same PTX, options,
/// device and host, else compiled (and stored). Bytes the cache verified but codegen refuses (another object
/// format) are recompiled and overwritten.
llvm::Expected<codegen::CompiledObject> compileThroughCache(const ptx::FrontendResult &Front,
                                                            const codegen::CompileOptions &CO, unsigned CC,
                                                            bool UseCache, bool &Hit) {
  ComputeCache &Cache = ComputeCache::global();
  UseCache = UseCache && Cache.enabled();
  CacheKey Key;
  if (UseCache) {
    Key = computeCacheKey({Front.Source->text(), CC, "O" + std::to_string(CO.OptLevel) + " cpu=" + CO.TargetCpu});
    if (std::optional<std::string> Bytes = Cache.lookup(Key)) {
      auto Object = codegen::CompiledObject::deserialize(*Bytes);
      if (Object) {
        Hit = true;
        return Object;
      }
      llvm::consumeError(Object.takeError());
    }
  }
  auto Object = codegen::compilePTXObject(*Front.Verified, Front.Source.get(), CO);
  if (Object && UseCache)
    Cache.store(Key, Object->serialize());
  return Object;
}

} // namespace

struct Module::PendingCompile {
  std::unique_ptr<ptx::FrontendResult> Front;
  std::string Name;
  codegen::CompileOptions Options;
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
  unsigned CC = Options.TargetCc.value_or(deviceProperties().computeCapability());
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
  unsigned CC = Options.TargetCc.value_or(deviceProperties().computeCapability());
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

  std::unique_ptr<Module> M(new Module(Ctx));
  M->PtxTarget = PM.Tgt.Sm;
  M->BinaryVersion = CC;
  M->KernelCount = static_cast<size_t>(
      std::count_if(PM.Functions.begin(), PM.Functions.end(), [](const auto &F) { return F->IsEntry && F->HasBody; }));
  std::string Target = ptx::smName(PM.Tgt.Sm, PM.Tgt.Suffix);
  auto P = std::make_unique<PendingCompile>();
  P->Front = std::move(Front);
  P->Name = Name;
  P->Options.OptLevel = codegenOptLevel(Options);
  unsigned OptLevel = P->Options.OptLevel;
  M->Pending = std::move(P);
  if (Mode == ModuleLoading::Eager) {
    if (llvm::Error E = M->materialize()) {
      Logs.Error = M->FailureLog;
      return E;
    }
  }

  Logs.WallMilliseconds = millisecondsSince(Start);
  if (Options.Verbose) {
    std::string What = std::to_string(M->KernelCount) + " kernel(s) of " + Name + " (" + Target +
                       ") for compute capability " + ccName(CC) + " at -O" + std::to_string(OptLevel);
    if (Mode == ModuleLoading::Lazy)
      Logs.Info = "ptxforge: loaded " + What + "; compiling at first use (CUDA_MODULE_LOADING=LAZY)\n";
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
  if (llvm::Error E = M->install(Object)) {
    std::string Why;
    Status S = takeStatus(std::move(E), &Why);
    Logs.Error = (Name + ": error: " + Why + "\n").str();
    return makeError(S, Why);
  }
  M->Ready.store(true, std::memory_order_release);
  return M;
}

llvm::Error Module::install(const codegen::CompiledObject &Object) {
  auto Loaded = codegen::CompiledModule::load(Object);
  if (!Loaded)
    return makeError(Status::InvalidImage, "the host code cannot be loaded: " + llvm::toString(Loaded.takeError()));
  Code = std::move(*Loaded);
  PtxTarget = Object.Facts.TargetSm;
  for (const codegen::PtxFacts::Global &V : Object.Facts.Globals) {
    uint64_t Size = 0;
    void *Address = Code->globalAddress(V.Name, &Size);
    if (!Address)
      continue;
    if (V.Const)
      ConstBytes += static_cast<unsigned>(Size);
    uint64_t A = reinterpret_cast<uint64_t>(Address);
    if (auto E = DeviceMemory::get().addExternal(A, Size, MemoryKind::ModuleGlobal, &Ctx))
      return E;
    Globals.push_back({V.Name, Global{A, Size}});
  }
  for (const codegen::PtxFacts::Kernel &K : Object.Facts.Kernels)
    Stats.push_back({K.Name, K.LocalBytes, K.Registers});
  // Function handles become valid as the module materializes (a lazy module has none before).
  Driver &D = Driver::get();
  for (const codegen::KernelInfo &K : Code->kernels()) {
    Functions.push_back(std::make_unique<Function>(*this, K));
    D.Functions.add(Functions.back().get());
  }
  return llvm::Error::success();
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
  const PendingCompile &P = *Pending;
  auto Fail = [&](Status S, std::string Log) {
    Failure = S;
    FailureLog = std::move(Log);
    return makeError(S, FailureLog);
  };
  bool Hit = false;
  auto Object = compileThroughCache(*P.Front, P.Options, BinaryVersion, /*UseCache=*/true, Hit);
  if (!Object)
    return Fail(Status::InvalidPtx, P.Name + ": error: " + llvm::toString(Object.takeError()) + "\n");
  llvm::Error Installed = install(*Object);
  if (Installed && Hit && !Code) {
    // A cached object this process cannot link (nothing was installed): compile afresh, bypassing the cache.
    llvm::consumeError(std::move(Installed));
    Hit = false;
    Object = compileThroughCache(*P.Front, P.Options, BinaryVersion, /*UseCache=*/false, Hit);
    if (!Object)
      return Fail(Status::InvalidPtx, P.Name + ": error: " + llvm::toString(Object.takeError()) + "\n");
    Installed = install(*Object);
  }
  if (Installed) {
    std::string Why;
    Status S = takeStatus(std::move(Installed), &Why);
    return Fail(S, P.Name + ": error: " + Why + "\n");
  }
  FromCache = Hit;
  Pending.reset(); // the IR is no longer needed
  Ready.store(true, std::memory_order_release);
  return llvm::Error::success();
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
  Driver &D = Driver::get();
  D.Modules.remove(this);
  for (const auto &F : Functions)
    D.Functions.remove(F.get());
  for (const NamedGlobal &G : Globals)
    DeviceMemory::get().removeExternal(G.G.Address);
}

Function *Module::function(llvm::StringRef Name) {
  if (llvm::Error E = materialize()) {
    llvm::consumeError(std::move(E));
    return nullptr;
  }
  for (const auto &F : Functions)
    if (F->name() == Name)
      return F.get();
  return nullptr;
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

unsigned Module::registerCount(llvm::StringRef Kernel) const {
  for (const KernelStats &S : Stats)
    if (S.Name == Kernel)
      return S.Registers;
  return 32;
}

Function::Function(Module &Parent, const codegen::KernelInfo &Info) : Parent(Parent), Info(Info) {
  const DeviceProperties &P = deviceProperties();
  uint64_t Static = Info.StaticSharedBytes;
  MaxDynamicShared = Static >= P.SharedMemoryPerBlock ? 0 : static_cast<unsigned>(P.SharedMemoryPerBlock - Static);
}

unsigned Function::maxThreadsPerBlock() const {
  auto Product = [](const uint32_t D[3]) {
    uint64_t N = 1;
    for (int I = 0; I < 3; ++I)
      N *= D[I] ? D[I] : 1;
    return N;
  };
  uint64_t Limit = deviceProperties().MaxThreadsPerBlock;
  if (Info.ReqNtid[0])
    Limit = std::min(Limit, Product(Info.ReqNtid));
  else if (Info.MaxNtid[0])
    Limit = std::min(Limit, Product(Info.MaxNtid));
  return static_cast<unsigned>(Limit);
}

llvm::Error Function::setMaxDynamicSharedBytes(int Bytes) {
  const DeviceProperties &P = deviceProperties();
  if (Bytes < 0 || uint64_t(Bytes) + Info.StaticSharedBytes > P.SharedMemoryPerBlockOptin)
    return makeError(Status::InvalidValue, "more shared memory than the device offers per block");
  MaxDynamicShared = static_cast<unsigned>(Bytes);
  return llvm::Error::success();
}

llvm::Error Function::setPreferredCarveout(int Percent) {
  if (Percent < -1 || Percent > 100)
    return makeError(Status::InvalidValue, "carveout is a percentage (or -1)");
  Carveout = Percent;
  return llvm::Error::success();
}

unsigned Function::constBytes() const { return Parent.constBytes(); }
unsigned Function::localBytes() const { return Parent.localBytes(Info.Name); }
unsigned Function::numRegisters() const {
  // ptxas fits a kernel's registers to its launch bound (.maxntid/.reqntid, else the device's block limit), so a
  // block of maxThreadsPerBlock() threads always gets its registers; the count from the PTX is an estimate
  // (CUB's kernels declare thousands) that would otherwise make the occupancy of launchable blocks 0.
  const DeviceProperties &P = deviceProperties();
  unsigned Bound = (maxThreadsPerBlock() + P.WarpSize - 1) / P.WarpSize * P.WarpSize;
  return std::max(1u, std::min(Parent.registerCount(Info.Name), P.RegistersPerMultiprocessor / Bound));
}

int Function::activeBlocksPerMultiprocessor(int BlockSize, uint64_t DynamicShared) const {
  const DeviceProperties &P = deviceProperties();
  if (BlockSize <= 0 || unsigned(BlockSize) > maxThreadsPerBlock())
    return 0;
  unsigned Warps = (unsigned(BlockSize) + P.WarpSize - 1) / P.WarpSize;
  unsigned ByThreads = P.MaxThreadsPerMultiprocessor / (Warps * P.WarpSize);
  unsigned ByRegisters = P.RegistersPerMultiprocessor / std::max(1u, numRegisters() * Warps * P.WarpSize);
  uint64_t Shared = staticSharedBytes() + DynamicShared;
  unsigned ByShared = P.MaxBlocksPerMultiprocessor;
  if (Shared)
    ByShared = static_cast<unsigned>(P.SharedMemoryPerMultiprocessor / (Shared + P.ReservedSharedMemoryPerBlock));
  return static_cast<int>(std::min({P.MaxBlocksPerMultiprocessor, ByThreads, ByRegisters, ByShared}));
}

Function::BlockSuggestion Function::suggestBlockSize(llvm::function_ref<uint64_t(int)> DynamicShared, int Limit) const {
  int Max = static_cast<int>(maxThreadsPerBlock());
  if (Limit > 0)
    Max = std::min(Max, Limit);
  BlockSuggestion Best;
  int BestThreads = -1, BestBlocks = 0;
  for (int B = Max; B > 0; B -= (B % 32 ? B % 32 : 32)) {
    int Blocks = activeBlocksPerMultiprocessor(B, DynamicShared(B));
    if (Blocks * B > BestThreads) {
      Best.BlockSize = B;
      BestThreads = Blocks * B;
      BestBlocks = Blocks;
    }
  }
  Best.MinGridSize = BestBlocks * static_cast<int>(deviceProperties().MultiprocessorCount);
  return Best;
}

llvm::Error Function::checkLaunch(const codegen::LaunchConfig &C) const {
  const DeviceProperties &P = deviceProperties();
  const codegen::Dim3 &B = C.Block, &G = C.Grid;
  if (!B.X || !B.Y || !B.Z || B.X > P.MaxBlockDim[0] || B.Y > P.MaxBlockDim[1] || B.Z > P.MaxBlockDim[2])
    return makeError(Status::InvalidValue, "block dimensions out of range");
  if (B.count() > maxThreadsPerBlock())
    return makeError(Status::InvalidValue, "too many threads per block");
  if (Info.ReqNtid[0] &&
      (B.X != Info.ReqNtid[0] || B.Y != std::max(1u, Info.ReqNtid[1]) || B.Z != std::max(1u, Info.ReqNtid[2])))
    return makeError(Status::InvalidValue, "the block does not match the kernel's .reqntid");
  if (!G.X || !G.Y || !G.Z || G.X > P.MaxGridDim[0] || G.Y > P.MaxGridDim[1] || G.Z > P.MaxGridDim[2])
    return makeError(Status::InvalidValue, "grid dimensions out of range");
  if (C.DynamicSharedBytes > MaxDynamicShared ||
      Info.StaticSharedBytes + C.DynamicSharedBytes > P.SharedMemoryPerBlockOptin)
    return makeError(Status::InvalidValue, "more dynamic shared memory than the kernel allows");
  return llvm::Error::success();
}

llvm::Expected<std::vector<char>> Function::packParams(void *const *KernelParams) const {
  std::vector<char> Buffer(Info.ParamBytes);
  if (Info.Params.empty())
    return Buffer;
  if (!KernelParams)
    return makeError(Status::InvalidValue, "the kernel has parameters but none were passed");
  for (size_t I = 0; I < Info.Params.size(); ++I) {
    const codegen::ParamInfo &P = Info.Params[I];
    if (!KernelParams[I])
      return makeError(Status::InvalidValue, "kernelParams[" + llvm::Twine(I) + "] is null");
    std::memcpy(Buffer.data() + P.Offset, KernelParams[I], P.Size);
  }
  return Buffer;
}

llvm::Expected<std::vector<char>> Function::packParams(const void *Data, size_t Size) const {
  std::vector<char> Buffer(Info.ParamBytes);
  if (!Info.ParamBytes)
    return Buffer;
  if (!Data || Size < Info.ParamBytes)
    return makeError(Status::InvalidValue, "the parameter buffer is smaller than the kernel's parameters");
  std::memcpy(Buffer.data(), Data, Info.ParamBytes);
  return Buffer;
}
