// Loading a module: select the PTX, run the front end (diagnostics go to the JIT error log), refuse PTX the
// device cannot run, compile with codegen, and register the globals as device memory. Also the kernels'
// attributes and launch checks (driver::Function).
#include "ptxforge/driver/Module.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Status.h"

#include "ptxforge/ptx/Frontend.h"
#include "ptxforge/ptx/Requirements.h"

#include "llvm/ADT/StringExtras.h"

#include <chrono>
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

unsigned countRegisters(const ptx::Function &F) {
  unsigned Words = 0;
  for (const ptx::RegisterInfo &R : F.Registers) {
    if (R.Type == ptx::ScalarType::Pred)
      continue;
    Words += std::max(1u, ptx::bitWidth(R.Type) / 32) * std::max<unsigned>(1, R.VectorWidth);
  }
  return std::clamp(Words, 1u, 255u);
}

} // namespace

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
    Logs.WallMilliseconds = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - Start).count();
    return M;
  }
  return compile(Ctx, std::move(Selected->Text), std::move(Selected->Name), Options, Logs);
}

llvm::Expected<std::unique_ptr<Module>> Module::compile(Context &Ctx, std::string Ptx, std::string Name,
                                                        const JitOptions &Options, JitLogs &Logs) {
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
    Logs.Error = Name + ": error: the module cannot run on compute capability " + std::to_string(CC / 10) + "." +
                 std::to_string(CC % 10) + ": " + llvm::join(Reasons, "; ") + "\n";
    return makeError(Status::InvalidPtx, "the PTX needs a newer device");
  }
  codegen::CompileOptions CO;
  CO.OptLevel = codegenOptLevel(Options);
  auto Code = codegen::compilePTX(*Front->Verified, Front->Source.get(), CO);
  if (!Code) {
    Logs.Error = Name + ": error: " + llvm::toString(Code.takeError()) + "\n";
    return makeError(Status::InvalidPtx, "the PTX could not be compiled");
  }

  std::unique_ptr<Module> M(new Module(Ctx));
  M->Code = std::move(*Code);
  M->PtxTarget = PM.Tgt.Sm;
  M->BinaryVersion = CC;
  for (const ptx::VariableDecl &V : PM.Globals) {
    if (V.Space != ptx::StateSpace::Global && V.Space != ptx::StateSpace::Const)
      continue;
    uint64_t Size = 0;
    void *Address = M->Code->globalAddress(V.Name, &Size);
    if (!Address)
      continue;
    if (V.Space == ptx::StateSpace::Const)
      M->ConstBytes += static_cast<unsigned>(Size);
    uint64_t A = reinterpret_cast<uint64_t>(Address);
    if (auto E = DeviceMemory::get().addExternal(A, Size, MemoryKind::ModuleGlobal, &Ctx))
      return E;
    M->Globals.push_back({V.Name.str(), Global{A, Size}});
  }
  for (const auto &F : PM.Functions) {
    if (!F->IsEntry || !F->HasBody)
      continue;
    KernelStats S;
    S.Name = F->Name.str();
    for (const ptx::VariableDecl &L : F->Locals)
      if (L.Space == ptx::StateSpace::Local)
        S.LocalBytes += static_cast<unsigned>(L.sizeInBytes());
    S.Registers = countRegisters(*F);
    M->Stats.push_back(std::move(S));
  }
  for (const codegen::KernelInfo &K : M->Code->kernels())
    M->Functions.push_back(std::make_unique<Function>(*M, K));

  Logs.WallMilliseconds = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - Start).count();
  if (Options.Verbose)
    Logs.Info = "ptxforge: compiled " + std::to_string(M->Functions.size()) + " kernel(s) of " + Name + " (" +
                ptx::smName(PM.Tgt.Sm, PM.Tgt.Suffix) + ") for compute capability " + std::to_string(CC / 10) + "." +
                std::to_string(CC % 10) + " at -O" + std::to_string(CO.OptLevel) + " in " +
                std::to_string(static_cast<int>(Logs.WallMilliseconds)) + " ms\n";
  return M;
}

Module::~Module() {
  Driver &D = Driver::get();
  D.Modules.remove(this);
  for (const auto &F : Functions)
    D.Functions.remove(F.get());
  for (const NamedGlobal &G : Globals)
    DeviceMemory::get().removeExternal(G.G.Address);
}

Function *Module::function(llvm::StringRef Name) const {
  for (const auto &F : Functions)
    if (F->name() == Name)
      return F.get();
  return nullptr;
}

std::optional<Module::Global> Module::global(llvm::StringRef Name) const {
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
unsigned Function::numRegisters() const { return Parent.registerCount(Info.Name); }

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
