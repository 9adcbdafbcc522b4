// The targets of `ptxforge compile` (declared in CompileTargets.h): the GPU architectures nvcc's target flags name
// (-arch, -code, -gencode; the fatbinary and --emit=ptx outputs), and host code for this CPU (--emit=llvm|asm|obj:
// the module lowered to LLVM IR as `ptxforge run` JIT-compiles it, optimized with LLVM's -O pipeline, and
// compiled by the host's TargetMachine). Part of the compile command; the name ends in Command.cpp because
// tools/ptxforge/CMakeLists.txt builds *Command.cpp.
#include "CompileTargets.h"

#include "ptxforge/codegen/Lowering.h"
#include "ptxforge/fatbin/Format.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdlib>
#include <mutex>

using namespace llvm;
using namespace ptxforge;
using fatbin::EntryFlag;

namespace ptxforge::tools {
namespace {

Error makeError(const Twine &Msg) { return createStringError(inconvertibleErrorCode(), Msg); }

} // namespace

// GPU architectures (-arch, -code, -gencode).

namespace {

/// The architectures that take the `a` (arch-specific) and `f` (family-specific) suffixes (SupportedArchs: all).
constexpr unsigned ArchSpecificArchs[] = {90, 100, 103, 110, 120, 121};
constexpr unsigned FamilyArchs[] = {100, 103, 110, 120, 121};

/// The compute capability `-arch=native` means: the device ptxforge emulates.
constexpr unsigned DefaultDeviceCC = 90;

bool isSupported(unsigned Number, char Suffix) {
  auto In = [&](const auto &List) { return is_contained(List, Number); };
  return Suffix == 'a' ? In(ArchSpecificArchs) : Suffix == 'f' ? In(FamilyArchs) : In(SupportedArchs);
}

/// `compute_90`, `sm_100f`; nothing for other spellings and for architectures nvcc 13 does not support.
std::optional<GpuArch> parseArch(StringRef S) {
  GpuArch A;
  if (S.consume_front("compute_"))
    A.Virtual = true;
  else if (!S.consume_front("sm_"))
    return std::nullopt;
  if (S.ends_with("a") || S.ends_with("f")) {
    A.Suffix = S.back();
    S = S.drop_back();
  }
  if (S.empty() || S.front() == '0' || S.find_first_not_of("0123456789") != StringRef::npos ||
      S.getAsInteger(10, A.Number) || !isSupported(A.Number, A.Suffix))
    return std::nullopt;
  return A;
}

Expected<GpuArch> parseArchOrFail(StringRef S) {
  if (auto A = parseArch(S))
    return *A;
  return makeError("Unsupported gpu architecture '" + S + "'");
}

/// nvcc's rule for one arch/code pair: a PTX code must be the virtual architecture itself; SASS may be built
/// for a later one. ptxforge also keeps `a` and `f` code within what that PTX may run on.
bool isCompatibleCode(const GpuArch &Arch, const GpuArch &Code) {
  if (Code.Virtual)
    return Code.sameTarget(Arch);
  if (Arch.Suffix == 'a')
    return Code.sameTarget(Arch);
  if (Arch.Suffix == 'f')
    return Code.major() == Arch.major() && Code.Number >= Arch.Number && Code.Suffix != 0;
  return Code.Number >= Arch.Number;
}

/// The comma-separated names of a `code=` value: `sm_75`, `[sm_75,compute_75]`, `"sm_75,compute_75"`.
std::vector<std::string> splitArchList(StringRef List) {
  std::vector<std::string> Out;
  for (StringRef Name : split(List, ',')) {
    std::string Clean;
    for (char C : Name)
      if (C != '[' && C != ']' && C != '"' && C != '\'' && C != ' ')
        Clean += C;
    Out.push_back(Clean);
  }
  return Out;
}

Expected<Gencode> makeGencode(GpuArch Arch, StringRef ArchSpelling, const std::vector<std::string> &CodeNames,
                              StringRef ArchOption) {
  if (!Arch.Virtual)
    return makeError("Value of " + ArchOption + " option ('" + ArchSpelling + "') must be a virtual code architecture");
  Gencode G;
  G.Arch = Arch;
  for (const std::string &Name : CodeNames) {
    auto Code = parseArchOrFail(Name);
    if (!Code)
      return Code.takeError();
    if (!isCompatibleCode(Arch, *Code))
      return makeError("Incompatible code generation requested: arch='" + Arch.name() + "', code='" + Name + "'");
    if (none_of(G.Codes, [&](const GpuArch &C) { return C.sameTarget(*Code) && C.Virtual == Code->Virtual; }))
      G.Codes.push_back(*Code);
  }
  return G;
}

/// `-arch=sm_XX` alone: `-gencode arch=compute_XX,code=[sm_XX,compute_XX]`.
Gencode realArchShorthand(unsigned Number, char Suffix, bool FromAll) {
  Gencode G;
  G.Arch = {Number, Suffix, true};
  G.Codes = {{Number, Suffix, false}, {Number, Suffix, true}};
  G.FromAll = FromAll;
  return G;
}

} // namespace

uint64_t GpuArch::entryFlags() const {
  return Suffix == 'a'   ? fatbin::flagBits(EntryFlag::ArchSpecific)
         : Suffix == 'f' ? fatbin::flagBits(EntryFlag::FamilySpecific)
                         : 0;
}

std::string Gencode::spelling() const {
  std::string S = "-gencode arch=" + Arch.name() + ",code=";
  std::vector<std::string> Names;
  for (const GpuArch &C : Codes)
    Names.push_back(C.name());
  return S + (Codes.size() == 1 ? Names[0] : "[" + join(Names, ",") + "]");
}

Expected<Gencode> parseGencode(StringRef Value) {
  std::string ArchName;
  std::vector<std::string> Codes;
  bool HasArch = false, HasCode = false;
  std::string *Last = nullptr; // the key a bare name after a comma belongs to (`code=sm_75,compute_75`)
  std::string CodeList;
  for (StringRef Part : split(Value, ',')) {
    StringRef P = Part.trim();
    if (P.consume_front("arch=")) {
      HasArch = true;
      ArchName = splitArchList(P).front();
      Last = nullptr;
    } else if (P.consume_front("code=")) {
      HasCode = true;
      CodeList = P.str();
      Last = &CodeList;
    } else if (Last && !P.empty()) {
      *Last += "," + P.str();
    } else {
      return makeError("Option '--generate-code " + Value + "': unexpected '" + Part + "'");
    }
  }
  if (!HasArch)
    return makeError("Option '--generate-code " + Value + "', missing arch");
  if (!HasCode)
    return makeError("Option '--generate-code " + Value + "', missing code");
  auto Arch = parseArchOrFail(ArchName);
  if (!Arch)
    return Arch.takeError();
  for (const std::string &C : splitArchList(CodeList))
    if (!C.empty())
      Codes.push_back(C);
  if (Codes.empty())
    return makeError("Option '--generate-code " + Value + "', missing code");
  return makeGencode(*Arch, ArchName, Codes, "-arch");
}

Expected<unsigned> deviceComputeCapability() {
  const char *Env = std::getenv("PTXFORGE_DEVICE_CC");
  if (!Env || !*Env)
    return DefaultDeviceCC;
  StringRef S(Env);
  unsigned Major = 0, Minor = 0, CC = 0;
  auto [MajorText, MinorText] = S.split('.');
  bool Ok = S.contains('.') ? !MajorText.getAsInteger(10, Major) && !MinorText.getAsInteger(10, Minor) && Minor < 10
                            : !S.getAsInteger(10, CC);
  if (S.contains('.'))
    CC = Major * 10 + Minor;
  if (!Ok || !isSupported(CC, 0))
    return makeError("-arch=native: PTXFORGE_DEVICE_CC='" + S +
                     "' is not a supported compute capability (write it as 9.0 or 90)");
  return CC;
}

Expected<std::vector<Gencode>> archGencodes(StringRef Arch, StringRef Code) {
  std::vector<Gencode> Out;
  if (!Code.empty() && Arch.empty())
    return makeError("-arch option not specified (-code needs -arch=compute_XX)");
  if (Arch.empty())
    return Out;
  if (Arch == "all" || Arch == "all-major" || Arch == "native") {
    if (!Code.empty())
      return makeError("Value of -arch option ('" + Arch + "') must be a virtual code architecture");
    if (Arch == "native") {
      auto CC = deviceComputeCapability();
      if (!CC)
        return CC.takeError();
      Out.push_back(realArchShorthand(*CC, 0, false));
      return Out;
    }
    unsigned LastMajor = 0;
    for (unsigned N : SupportedArchs) {
      if (Arch == "all-major" && N / 10 == LastMajor)
        continue;
      LastMajor = N / 10;
      Out.push_back(realArchShorthand(N, 0, true));
    }
    return Out;
  }
  auto A = parseArchOrFail(Arch);
  if (!A)
    return A.takeError();
  if (!Code.empty()) {
    auto G = makeGencode(*A, Arch, splitArchList(Code), "-arch");
    if (!G)
      return G.takeError();
    Out.push_back(std::move(*G));
  } else if (A->Virtual) {
    Gencode G;
    G.Arch = *A;
    G.Codes = {*A};
    Out.push_back(G);
  } else {
    Out.push_back(realArchShorthand(A->Number, A->Suffix, false));
  }
  return Out;
}

// Host code (--emit=llvm|asm|obj).

namespace {

void initializeHostTarget() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
    InitializeNativeTargetAsmParser();
  });
}

/// A TargetMachine for this CPU (its triple, CPU name and features, as the JIT of `ptxforge run` uses), but for
/// objects that link like a C compiler's: position-independent code, the small code model (detectHost picks the
/// JIT's large one on x86-64).
Expected<std::unique_ptr<TargetMachine>> hostTargetMachine(unsigned OptLevel) {
  initializeHostTarget();
  auto JTMB = orc::JITTargetMachineBuilder::detectHost();
  if (!JTMB)
    return JTMB.takeError();
  JTMB->setCodeGenOptLevel(OptLevel == 0   ? CodeGenOptLevel::None
                           : OptLevel == 1 ? CodeGenOptLevel::Less
                           : OptLevel == 2 ? CodeGenOptLevel::Default
                                           : CodeGenOptLevel::Aggressive);
  JTMB->setRelocationModel(Reloc::PIC_);
  JTMB->setCodeModel(CodeModel::Small);
  return JTMB->createTargetMachine();
}

/// LLVM's -O<Level> pipeline (1-3: PassBuilder's default per-module pipeline, as `opt -O<Level>`), tuned for TM.
void runOptPipeline(Module &M, TargetMachine &TM, unsigned Level) {
  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  PassBuilder PB(&TM);
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  OptimizationLevel OL = Level <= 1 ? OptimizationLevel::O1 : Level == 2 ? OptimizationLevel::O2 : OptimizationLevel::O3;
  ModulePassManager MPM = PB.buildPerModuleDefaultPipeline(OL);
  MPM.run(M, MAM);
}

} // namespace

std::optional<HostOutput> parseHostOutput(StringRef Emit) {
  if (Emit == "llvm")
    return HostOutput::LLVM;
  if (Emit == "asm")
    return HostOutput::Asm;
  if (Emit == "obj")
    return HostOutput::Obj;
  return std::nullopt;
}

const char *hostOutputName(HostOutput Kind) {
  switch (Kind) {
  case HostOutput::LLVM: return "LLVM IR";
  case HostOutput::Asm: return "host assembly";
  case HostOutput::Obj: return "host object file";
  }
  return "";
}

std::string hostTargetTriple() {
  auto JTMB = orc::JITTargetMachineBuilder::detectHost();
  if (!JTMB) {
    consumeError(JTMB.takeError());
    return "unknown";
  }
  return JTMB->getTargetTriple().str();
}

Expected<std::string> emitHostCode(const ptx::VerifiedModule &M, const ptx::SourceBuffer &Source, HostOutput Kind,
                                   unsigned OptLevel) {
  codegen::LoweringOptions LO;
  LO.ModuleName = sys::path::filename(Source.name()).str();
  auto LM = codegen::lowerToLLVM(M, &Source, LO);
  if (!LM)
    return LM.takeError();
  auto TM = hostTargetMachine(OptLevel);
  if (!TM)
    return TM.takeError();
  Module &Mod = *LM->Module;
  Mod.setDataLayout((*TM)->createDataLayout());
  Mod.setTargetTriple((*TM)->getTargetTriple());
  std::string Broken;
  raw_string_ostream BrokenOS(Broken);
  if (verifyModule(Mod, &BrokenOS))
    return makeError("the lowered LLVM IR does not verify (a ptxforge bug):\n" + Broken);
  if (OptLevel > 0)
    runOptPipeline(Mod, **TM, OptLevel);

  std::string Out;
  if (Kind == HostOutput::LLVM) {
    raw_string_ostream OS(Out);
    Mod.print(OS, nullptr);
    return Out;
  }
  SmallVector<char, 0> Buffer;
  raw_svector_ostream OS(Buffer);
  legacy::PassManager PM;
  PM.add(new TargetLibraryInfoWrapperPass((*TM)->getTargetTriple()));
  if ((*TM)->addPassesToEmitFile(PM, OS, nullptr,
                                 Kind == HostOutput::Asm ? CodeGenFileType::AssemblyFile : CodeGenFileType::ObjectFile))
    return makeError(Twine("the host target (") + (*TM)->getTargetTriple().str() + ") cannot emit " +
                     hostOutputName(Kind));
  PM.run(Mod);
  return std::string(Buffer.begin(), Buffer.end());
}

} // namespace ptxforge::tools
