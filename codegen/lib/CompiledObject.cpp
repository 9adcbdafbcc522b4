// Ahead-of-time host code: the TargetMachine for a CPU or x86-64 ISA level, LLVM's -O pipeline, object emission
// into memory, the module facts the driver reports, and the serialized form of a CompiledObject.
//
// Serialized layout (little endian):
//   header  8 bytes magic "PTXFOBJ\0", u32 FormatVersion, u32 flags (none yet: must be 0), u64 payload size,
//           u64 xxh3 of payload
//   payload target triple, CPU, features (strings), u32 opt level; kernels; globals; PtxFacts; the object code
// A string is a u64 length and its bytes; a list a u32 count and its elements. Every read is checked against the
// bytes left, and the checksum covers the whole payload, so cut or flipped bytes fail before any field is used.
#include "ptxforge/codegen/CompiledObject.h"
#include "ptxforge/codegen/Optimize.h"

#include "DebugLocations.h"
#include "MachineCodeEmitter.h"
#include "passes/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/PassTimingInfo.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/TargetParser/X86TargetParser.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>

using namespace ptxforge;
using namespace ptxforge::codegen;

namespace {

llvm::Error makeError(const llvm::Twine &Msg) { return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg); }

void initializeNativeTarget() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

bool isHostCpu(llvm::StringRef Cpu) { return Cpu.empty() || Cpu == "host" || Cpu == "native"; }

/// This CPU's features as an LLVM feature string: every known feature, on or off (as -march=native does).
std::string hostFeatureString() {
  std::vector<std::string> Parts;
  for (const auto &F : llvm::sys::getHostCPUFeatures())
    Parts.push_back((F.second ? "+" : "-") + F.first().str());
  llvm::sort(Parts);
  return llvm::join(Parts, ",");
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

// Facts.

const PtxFacts::Kernel *PtxFacts::kernel(llvm::StringRef Name) const {
  auto It = llvm::find_if(Kernels, [&](const Kernel &K) { return K.Name == Name; });
  return It == Kernels.end() ? nullptr : &*It;
}

const PtxFacts::Global *PtxFacts::global(llvm::StringRef Name) const {
  auto It = llvm::find_if(Globals, [&](const Global &G) { return G.Name == Name; });
  return It == Globals.end() ? nullptr : &*It;
}

PtxFacts ptxforge::codegen::describePtx(const ptx::Module &M) {
  PtxFacts F;
  F.TargetSm = M.Tgt.Sm;
  F.TargetSuffix = M.Tgt.Suffix;
  F.PtxVersion = M.Version.value();
  for (const ptx::VariableDecl &V : M.Globals)
    if (V.Space == ptx::StateSpace::Global || V.Space == ptx::StateSpace::Const)
      F.Globals.push_back({V.Name.str(), V.Space == ptx::StateSpace::Const});
  llvm::StringMap<unsigned> LinkedTargets = ptx::kernelTargetPragmas(M);
  for (const auto &Fn : M.Functions) {
    if (!Fn->IsEntry || !Fn->HasBody)
      continue;
    PtxFacts::Kernel K;
    K.Name = Fn->Name.str();
    K.TargetSm = LinkedTargets.lookup(Fn->Name);
    if (!K.TargetSm)
      K.TargetSm = M.Tgt.Sm;
    for (const ptx::VariableDecl &L : Fn->Locals)
      if (L.Space == ptx::StateSpace::Local)
        K.LocalBytes += static_cast<uint32_t>(L.sizeInBytes());
    K.Registers = countRegisters(*Fn);
    F.Kernels.push_back(std::move(K));
  }
  return F;
}

// Compiling.

namespace {
/// The hot tier's limit (which decides KernelInfo::DeferredRegionCuts) and kernels.
std::string hotKernelsKey(const LoweringOptions &L) {
  std::string Key = " hot-cuts=" + std::to_string(L.HotRegionCutLimit) +
                    " resume=" + std::to_string(static_cast<unsigned>(L.Resume));
  for (size_t I = 0; I < L.HotKernels.size(); ++I)
    Key += (I ? "," : " hot=") + L.HotKernels[I];
  return Key;
}
} // namespace

std::string CompileOptions::codeKey() const {
  return "O" + std::to_string(OptLevel) + " cpu=" + TargetCpu + " stream=" + std::to_string(StreamingStoreBytes) +
         " block-functions=" + std::to_string(Lowering.BlockFunctions) +
         " loop-cuts=" + std::to_string(Lowering.LoopCuts) +
         " region-cuts=" + std::to_string(Lowering.RegionCutBudget) + hotKernelsKey(Lowering) +
         " function-budget=" + std::to_string(FunctionSizeBudget) + " warp=" + std::to_string(WarpVectorize) +
         (FastCodeGen ? " fast-codegen" : "") + (Lowering.Memcheck ? " memcheck" : "");
}

CompileOptions ptxforge::codegen::quickCode(CompileOptions O) {
  O.Lowering.BlockFunctions = false;
  O.OptLevel = std::min(O.OptLevel, 1u);
  O.FastCodeGen = true;
  return O;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>> ptxforge::codegen::createTargetMachine(const CompileOptions &O) {
  initializeNativeTarget();
  llvm::orc::JITTargetMachineBuilder JTMB{llvm::Triple(llvm::sys::getProcessTriple())};
  if (isHostCpu(O.TargetCpu)) {
    JTMB.setCPU(llvm::sys::getHostCPUName().str());
    JTMB.getFeatures().AddFeature(hostFeatureString());
  } else {
    // LLVM only warns (on stderr) about an unknown CPU and compiles for a generic one; a typo must not yield
    // code for another machine than the one named. Ask a subtarget made without a CPU, which does not warn.
    std::string Why;
    const llvm::Target *T = llvm::TargetRegistry::lookupTarget(JTMB.getTargetTriple(), Why);
    if (!T)
      return makeError(Why);
    std::unique_ptr<llvm::MCSubtargetInfo> STI(T->createMCSubtargetInfo(JTMB.getTargetTriple(), "", ""));
    if (!STI || !STI->isCPUStringValid(O.TargetCpu))
      return makeError("unknown target CPU '" + O.TargetCpu + "' for " + JTMB.getTargetTriple().str());
    JTMB.setCPU(O.TargetCpu);
  }
  // What ORC's JITLink linker expects on x86-64 ELF (and what a C compiler's objects are): position-independent
  // code in the small code model, calls to far symbols through stubs the linker makes.
  JTMB.setRelocationModel(llvm::Reloc::PIC_);
  JTMB.setCodeModel(llvm::CodeModel::Small);
  // -O0 gets LLVM's -O0 code generator (fast instruction selection and register allocation, no scheduler): on
  // unoptimized IR the -O1 one spent 5x as long (SelectionDAG and the greedy allocator over every register's
  // loads and stores), which made sweeping the CUDA libraries (scripts/toolkit-check.sh) infeasible.
  JTMB.setCodeGenOptLevel(O.FastCodeGen     ? llvm::CodeGenOptLevel::None
                          : O.OptLevel >= 2 ? llvm::CodeGenOptLevel::Default
                          : O.OptLevel == 1 ? llvm::CodeGenOptLevel::Less
                                            : llvm::CodeGenOptLevel::None);
  return JTMB.createTargetMachine();
}

namespace {
/// True when optimizeModule left a function unoptimized for its size (optnone: the budget, Optimize.cpp). Replay-only
/// functions (passes::isReplayOnly) are optnone too, but small enough for the module's own code generator, which
/// takes its fast path for them.
bool hasUnoptimizedFunction(const llvm::Module &M) {
  for (const llvm::Function &F : M)
    if (!F.isDeclaration() && F.hasFnAttribute(llvm::Attribute::OptimizeNone) && !passes::isReplayOnly(F))
      return true;
  return false;
}
} // namespace

llvm::Expected<llvm::TargetMachine &> ptxforge::codegen::detail::MachineCodeEmitter::emitterFor(const llvm::Module &M) {
  // The greedy register allocator and live-variable analysis are super-linear in one function's size (bar.sync
  // x20,000 on fibers: 18 of 28 CPU seconds); -O0's fast instruction selection and register allocation are
  // linear. The twin is made as createTargetMachine's JITTargetMachineBuilder makes one, so that TM keeps its
  // level (and may be shared).
  if (!hasUnoptimizedFunction(M) || TM.getOptLevel() == llvm::CodeGenOptLevel::None)
    return TM;
  if (!Unoptimized) {
    Unoptimized.reset(TM.getTarget().createTargetMachine(
        TM.getTargetTriple(), TM.getTargetCPU(), TM.getTargetFeatureString(), TM.Options, TM.getRelocationModel(),
        TM.getCodeModel(), llvm::CodeGenOptLevel::None, /*JIT=*/true));
    if (!Unoptimized)
      return makeError("cannot make an unoptimizing code generator for " + TM.getTargetTriple().str());
  }
  return *Unoptimized;
}

llvm::Expected<std::string> ptxforge::codegen::detail::MachineCodeEmitter::emit(llvm::Module &M, bool Assembly) {
  llvm::Expected<llvm::TargetMachine &> For = emitterFor(M);
  if (!For)
    return For.takeError();
  llvm::TargetMachine &Emitter = *For;
  llvm::SmallVector<char, 0> Buffer;
  llvm::raw_svector_ostream OS(Buffer);
  // Optimization moved code between functions and made some without a location: the line table must name
  // exactly the PTX instruction each machine instruction came from, or line 0.
  detail::repairDebugLocations(M);
  llvm::legacy::PassManager PM;
  PM.add(new llvm::TargetLibraryInfoWrapperPass(Emitter.getTargetTriple()));
  if (Emitter.addPassesToEmitFile(PM, OS, nullptr,
                                  Assembly ? llvm::CodeGenFileType::AssemblyFile : llvm::CodeGenFileType::ObjectFile))
    return makeError("the host target (" + Emitter.getTargetTriple().str() + ") cannot emit " +
                     (Assembly ? "assembly" : "object files"));
  PM.run(M);
  // -time-passes (PTXFORGE_LLVM_ARGS): the optimizer's and the code generator's times, per compiled module.
  if (llvm::TimePassesIsEnabled)
    llvm::reportAndResetTimings();
  return std::string(Buffer.begin(), Buffer.end());
}

llvm::Expected<std::string> ptxforge::codegen::emitMachineCode(llvm::Module &M, llvm::TargetMachine &TM,
                                                               bool Assembly) {
  return detail::MachineCodeEmitter(TM).emit(M, Assembly);
}

llvm::Error ptxforge::codegen::prepareModule(llvm::Module &M, llvm::TargetMachine &TM) {
  M.setDataLayout(TM.createDataLayout());
  M.setTargetTriple(TM.getTargetTriple());
  std::string Broken;
  llvm::raw_string_ostream OS(Broken);
  if (llvm::verifyModule(M, &OS))
    return makeError("the lowered LLVM IR does not verify (a ptxforge bug):\n" + Broken);
  return llvm::Error::success();
}

namespace {
/// A TargetMachine of this thread's compiles and its code generator, which keeps the -O0 twin beside it.
struct ThreadTarget {
  std::unique_ptr<llvm::TargetMachine> TM;
  std::unique_ptr<detail::MachineCodeEmitter> Emitter;
};

/// This thread's TargetMachine for Options (what shapes one: the target CPU and the code generation level), made
/// at its first compile and kept for the next, so that neither it nor its -O0 twin is made again per compile (the
/// driver compiles a module kernel by kernel). Per thread, since compiles run on several at once and a
/// TargetMachine is not for concurrent use.
llvm::Expected<ThreadTarget *> threadTarget(const CompileOptions &Options) {
  thread_local llvm::StringMap<ThreadTarget> Targets;
  std::string Key = Options.TargetCpu + "/O" + std::to_string(Options.FastCodeGen ? 0 : std::min(Options.OptLevel, 2u));
  ThreadTarget &T = Targets[Key];
  if (!T.TM) {
    auto TM = createTargetMachine(Options);
    if (!TM)
      return TM.takeError();
    T.TM = std::move(*TM);
    T.Emitter = std::make_unique<detail::MachineCodeEmitter>(*T.TM);
  }
  return &T;
}
} // namespace

llvm::Expected<CompiledObject> ptxforge::codegen::compileObject(LoweredModule LM, const CompileOptions &Options) {
  auto Target = threadTarget(Options);
  if (!Target)
    return Target.takeError();
  llvm::TargetMachine &TM = *(*Target)->TM;
  if (auto E = prepareModule(*LM.Module, TM))
    return E;
  if (auto E = optimizeModule(*LM.Module, TM, Options)) {
    if (cancelRequested(Options.Cancel)) {
      llvm::consumeError(std::move(E));
      return dropCancelled(LM, Options.Cancel);
    }
    return E;
  }
  // Code generation runs to its end once begun: skipping its optional passes (as optimization does) leaves
  // machine IR that later passes crash on. It is the shortest part of a compile.
  auto Code = (*Target)->Emitter->emit(*LM.Module, /*Assembly=*/false);
  if (!Code)
    return Code.takeError();
  if (cancelRequested(Options.Cancel))
    return dropCancelled(LM, Options.Cancel);
  CompiledObject Obj;
  Obj.ObjectCode = std::move(*Code);
  Obj.Kernels = std::move(LM.Kernels);
  Obj.Globals = std::move(LM.Globals);
  Obj.TargetTriple = TM.getTargetTriple().str();
  Obj.TargetCpu = TM.getTargetCPU().str();
  Obj.TargetFeatures = TM.getTargetFeatureString().str();
  Obj.OptLevel = Options.OptLevel;
  return Obj;
}

llvm::Expected<CompiledObject> ptxforge::codegen::compilePTXObject(const ptx::VerifiedModule &M,
                                                                   const ptx::SourceBuffer *Source,
                                                                   const CompileOptions &Options) {
  auto LM = lowerToLLVM(M, Source, Options.Lowering);
  if (!LM)
    return LM.takeError();
  auto Obj = compileObject(std::move(*LM), Options);
  if (!Obj)
    return Obj.takeError();
  Obj->Facts = describePtx(M.module());
  return Obj;
}

// Which CPUs run an object.

std::vector<std::string> CompiledObject::requiredFeatures() const {
  const bool X86 = llvm::Triple(TargetTriple).isX86();
  llvm::StringMap<bool> Enabled;
  // A feature switched on or off, with what it implies (sse4.2 brings sse4.1; no sse2 takes avx away).
  auto set = [&](llvm::StringRef F, bool On) {
    Enabled[F] = On;
    if (X86)
      llvm::X86::updateImpliedFeatures(F, On, Enabled);
  };
  if (X86) {
    llvm::SmallVector<llvm::StringRef, 64> OfCpu;
    llvm::X86::getFeaturesForCPU(TargetCpu, OfCpu);
    for (llvm::StringRef F : OfCpu)
      set(F, true);
  }
  for (llvm::StringRef F : llvm::split(TargetFeatures, ',')) {
    F = F.trim();
    if (F.size() >= 2 && (F[0] == '+' || F[0] == '-'))
      set(F.drop_front(), F[0] == '+');
  }
  std::vector<std::string> Out;
  for (const auto &F : Enabled)
    if (F.second)
      Out.push_back(F.first().str());
  llvm::sort(Out);
  return Out;
}

llvm::Error CompiledObject::checkRunsOnHost() const {
  llvm::Triple Host(llvm::sys::getProcessTriple()), Target(TargetTriple);
  if (Host.getArch() != Target.getArch() || Host.getObjectFormat() != Target.getObjectFormat())
    return makeError("the object code is for " + TargetTriple + ", this machine is " + Host.str());
  // Features this CPU reports as absent are missing; ones it does not report at all (LLVM's pseudo-features
  // such as "64bit", tuning flags) say nothing about it either way.
  llvm::StringMap<bool> HostFeatures = llvm::sys::getHostCPUFeatures();
  std::vector<std::string> Missing;
  for (const std::string &F : requiredFeatures()) {
    auto It = HostFeatures.find(F);
    if (It != HostFeatures.end() && !It->second)
      Missing.push_back(F);
  }
  if (!Missing.empty())
    return makeError("the object code was compiled for " + TargetCpu + " and needs CPU features this machine (" +
                     llvm::sys::getHostCPUName() + ") lacks: " + llvm::join(Missing, ", "));
  return llvm::Error::success();
}

// Serialization.

namespace {

constexpr char Magic[8] = {'P', 'T', 'X', 'F', 'O', 'B', 'J', '\0'};
constexpr size_t HeaderSize = 32;

// A field added to KernelInfo/GlobalInfo/ParamInfo must be written below and FormatVersion bumped. These mirrors
// of the fields serialized today stop compiling when a struct grows, so that cannot be forgotten.
struct ParamFields {
  std::string Name;
  uint64_t Offset, Size, Align;
};
struct GlobalFields {
  std::string Name, Symbol;
  uint64_t Size;
};
struct KernelFields {
  std::string Name, Symbol;
  std::vector<ParamInfo> Params;
  uint64_t ParamBytes, StaticSharedBytes;
  bool Synchronizes;
  std::string BlockSymbol;
  bool ExitInCallee;
  bool MaySpin;
  uint32_t DeferredRegionCuts;
  uint32_t DeferredResumeLoops;
  uint32_t ReqNtid[3], MaxNtid[3];
  uint32_t ReqClusterDim[3], MaxClusterRank;
  bool ExplicitCluster;
};
static_assert(sizeof(ParamInfo) == sizeof(ParamFields),
              "ParamInfo changed: serialize the new field (CompiledObject.cpp)");
static_assert(sizeof(GlobalInfo) == sizeof(GlobalFields),
              "GlobalInfo changed: serialize the new field (CompiledObject.cpp)");
static_assert(sizeof(KernelInfo) == sizeof(KernelFields),
              "KernelInfo changed: serialize the new field (CompiledObject.cpp)");

class ByteWriter {
public:
  std::string Out;
  template <typename T> void num(T V) {
    char Buf[sizeof(T)];
    llvm::support::endian::write<T, llvm::endianness::little>(Buf, V);
    Out.append(Buf, sizeof(T));
  }
  void str(llvm::StringRef S) {
    num<uint64_t>(S.size());
    Out.append(S.data(), S.size());
  }
  void count(size_t N) { num<uint32_t>(static_cast<uint32_t>(N)); }
};

/// Reads what ByteWriter wrote; the first failure sticks and every later read returns zeros.
class ByteReader {
public:
  explicit ByteReader(llvm::StringRef Data) : Data(Data) {}
  template <typename T> T num() {
    if (!take(sizeof(T)))
      return T();
    return llvm::support::endian::read<T, llvm::endianness::little>(Data.data() + Pos - sizeof(T));
  }
  std::string str() {
    uint64_t N = num<uint64_t>();
    if (!take(N))
      return {};
    return Data.substr(Pos - N, N).str();
  }
  /// A list length, refused when even elements of MinBytes each cannot fit in what is left (so a corrupt
  /// count cannot make the reader reserve memory the bytes do not back).
  uint32_t count(size_t MinBytes) {
    uint32_t N = num<uint32_t>();
    if (Failed || uint64_t(N) * MinBytes > Data.size() - Pos)
      return fail("a list longer than the bytes that hold it"), 0;
    return N;
  }
  bool atEnd() const { return Pos == Data.size(); }
  bool failed() const { return Failed; }
  const std::string &why() const { return Why; }

private:
  bool take(uint64_t N) {
    if (Failed)
      return false;
    if (N > Data.size() - Pos)
      return fail("the data ends inside a field");
    Pos += N;
    return true;
  }
  bool fail(const char *Msg) {
    if (!Failed)
      Why = Msg;
    Failed = true;
    return false;
  }
  llvm::StringRef Data;
  size_t Pos = 0;
  bool Failed = false;
  std::string Why;
};

void writePayload(ByteWriter &W, const CompiledObject &O) {
  W.str(O.TargetTriple);
  W.str(O.TargetCpu);
  W.str(O.TargetFeatures);
  W.num<uint32_t>(O.OptLevel);
  W.count(O.Kernels.size());
  for (const KernelInfo &K : O.Kernels) {
    W.str(K.Name);
    W.str(K.Symbol);
    W.count(K.Params.size());
    for (const ParamInfo &P : K.Params) {
      W.str(P.Name);
      W.num<uint64_t>(P.Offset);
      W.num<uint64_t>(P.Size);
      W.num<uint64_t>(P.Align);
    }
    W.num<uint64_t>(K.ParamBytes);
    W.num<uint64_t>(K.StaticSharedBytes);
    W.num<uint8_t>(K.Synchronizes);
    W.str(K.BlockSymbol);
    W.num<uint8_t>(K.ExitInCallee);
    W.num<uint8_t>(K.MaySpin);
    W.num<uint32_t>(K.DeferredRegionCuts);
    W.num<uint32_t>(K.DeferredResumeLoops);
    for (uint32_t V : K.ReqNtid)
      W.num<uint32_t>(V);
    for (uint32_t V : K.MaxNtid)
      W.num<uint32_t>(V);
    for (uint32_t V : K.ReqClusterDim)
      W.num<uint32_t>(V);
    W.num<uint32_t>(K.MaxClusterRank);
    W.num<uint8_t>(K.ExplicitCluster);
  }
  W.count(O.Globals.size());
  for (const GlobalInfo &G : O.Globals) {
    W.str(G.Name);
    W.str(G.Symbol);
    W.num<uint64_t>(G.Size);
  }
  const PtxFacts &F = O.Facts;
  W.num<uint32_t>(F.TargetSm);
  W.num<uint8_t>(static_cast<uint8_t>(F.TargetSuffix));
  W.num<uint32_t>(F.PtxVersion);
  W.count(F.Kernels.size());
  for (const PtxFacts::Kernel &K : F.Kernels) {
    W.str(K.Name);
    W.num<uint32_t>(K.LocalBytes);
    W.num<uint32_t>(K.Registers);
    W.num<uint32_t>(K.TargetSm);
  }
  W.count(F.Globals.size());
  for (const PtxFacts::Global &G : F.Globals) {
    W.str(G.Name);
    W.num<uint8_t>(G.Const);
  }
  W.str(O.ObjectCode);
}

constexpr size_t StrMin = 8; // a string's length field

void readPayload(ByteReader &R, CompiledObject &O) {
  O.TargetTriple = R.str();
  O.TargetCpu = R.str();
  O.TargetFeatures = R.str();
  O.OptLevel = R.num<uint32_t>();
  uint32_t NK = R.count(2 * StrMin + 4);
  for (uint32_t I = 0; I < NK && !R.failed(); ++I) {
    KernelInfo K;
    K.Name = R.str();
    K.Symbol = R.str();
    uint32_t NP = R.count(StrMin + 24);
    for (uint32_t J = 0; J < NP && !R.failed(); ++J) {
      ParamInfo P;
      P.Name = R.str();
      P.Offset = R.num<uint64_t>();
      P.Size = R.num<uint64_t>();
      P.Align = R.num<uint64_t>();
      K.Params.push_back(std::move(P));
    }
    K.ParamBytes = R.num<uint64_t>();
    K.StaticSharedBytes = R.num<uint64_t>();
    K.Synchronizes = R.num<uint8_t>() != 0;
    K.BlockSymbol = R.str();
    K.ExitInCallee = R.num<uint8_t>() != 0;
    K.MaySpin = R.num<uint8_t>() != 0;
    K.DeferredRegionCuts = R.num<uint32_t>();
    K.DeferredResumeLoops = R.num<uint32_t>();
    for (uint32_t &V : K.ReqNtid)
      V = R.num<uint32_t>();
    for (uint32_t &V : K.MaxNtid)
      V = R.num<uint32_t>();
    for (uint32_t &V : K.ReqClusterDim)
      V = R.num<uint32_t>();
    K.MaxClusterRank = R.num<uint32_t>();
    K.ExplicitCluster = R.num<uint8_t>() != 0;
    O.Kernels.push_back(std::move(K));
  }
  uint32_t NG = R.count(2 * StrMin + 8);
  for (uint32_t I = 0; I < NG && !R.failed(); ++I) {
    GlobalInfo G;
    G.Name = R.str();
    G.Symbol = R.str();
    G.Size = R.num<uint64_t>();
    O.Globals.push_back(std::move(G));
  }
  PtxFacts &F = O.Facts;
  F.TargetSm = R.num<uint32_t>();
  F.TargetSuffix = static_cast<char>(R.num<uint8_t>());
  F.PtxVersion = R.num<uint32_t>();
  uint32_t NFK = R.count(StrMin + 8);
  for (uint32_t I = 0; I < NFK && !R.failed(); ++I) {
    PtxFacts::Kernel K;
    K.Name = R.str();
    K.LocalBytes = R.num<uint32_t>();
    K.Registers = R.num<uint32_t>();
    K.TargetSm = R.num<uint32_t>();
    F.Kernels.push_back(std::move(K));
  }
  uint32_t NFG = R.count(StrMin + 1);
  for (uint32_t I = 0; I < NFG && !R.failed(); ++I) {
    PtxFacts::Global G;
    G.Name = R.str();
    G.Const = R.num<uint8_t>() != 0;
    F.Globals.push_back(std::move(G));
  }
  O.ObjectCode = R.str();
}

} // namespace

std::string CompiledObject::serialize() const {
  ByteWriter Payload;
  writePayload(Payload, *this);
  ByteWriter W;
  W.Out.append(Magic, sizeof(Magic));
  W.num<uint32_t>(FormatVersion);
  W.num<uint32_t>(0);
  W.num<uint64_t>(Payload.Out.size());
  W.num<uint64_t>(llvm::xxh3_64bits(Payload.Out));
  W.Out += Payload.Out;
  return std::move(W.Out);
}

bool CompiledObject::isOtherVersion(llvm::StringRef Bytes) {
  if (Bytes.size() < HeaderSize || !Bytes.starts_with(llvm::StringRef(Magic, sizeof(Magic))))
    return false;
  ByteReader Header(Bytes.substr(sizeof(Magic), HeaderSize - sizeof(Magic)));
  return Header.num<uint32_t>() != FormatVersion;
}

llvm::Expected<CompiledObject> CompiledObject::deserialize(llvm::StringRef Bytes) {
  auto Invalid = [](const llvm::Twine &Why) { return makeError("invalid ptxforge object code: " + Why); };
  if (Bytes.size() < HeaderSize)
    return Invalid("shorter than its " + llvm::Twine(HeaderSize) + "-byte header (" + llvm::Twine(Bytes.size()) +
                   " bytes)");
  if (!Bytes.starts_with(llvm::StringRef(Magic, sizeof(Magic))))
    return Invalid("bad magic");
  ByteReader Header(Bytes.substr(sizeof(Magic), HeaderSize - sizeof(Magic)));
  uint32_t Version = Header.num<uint32_t>();
  uint32_t Reserved = Header.num<uint32_t>();
  uint64_t Size = Header.num<uint64_t>();
  uint64_t Checksum = Header.num<uint64_t>();
  if (Version != FormatVersion)
    return Invalid("format version " + llvm::Twine(Version) + ", this ptxforge reads version " +
                   llvm::Twine(FormatVersion) + " (compile it again)");
  if (Reserved != 0)
    return Invalid("unknown header flags 0x" + llvm::utohexstr(Reserved));
  llvm::StringRef Payload = Bytes.drop_front(HeaderSize);
  if (Size != Payload.size())
    return Invalid("the header says " + llvm::Twine(Size) + " bytes follow, " + llvm::Twine(Payload.size()) + " do");
  if (llvm::xxh3_64bits(Payload) != Checksum)
    return Invalid("checksum mismatch (the bytes are corrupt)");
  CompiledObject O;
  ByteReader R(Payload);
  readPayload(R, O);
  if (R.failed())
    return Invalid(R.why());
  if (!R.atEnd())
    return Invalid("bytes left over after the last field");
  return O;
}
