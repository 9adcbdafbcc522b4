// The targets of `ptxforge compile` (declared in CompileTargets.h): the GPU architectures nvcc's target flags name
// (-arch, -code, -gencode; the fatbinary and --emit=ptx outputs), and host code for this CPU (--emit=llvm|asm|obj:
// the module lowered to LLVM IR as `ptxforge run` JIT-compiles it, optimized with codegen's -O pipeline, and
// compiled by the TargetMachine codegen's compileObject uses). Part of the compile command; the name ends in Command.cpp because
// tools/ptxforge/CMakeLists.txt builds *Command.cpp.
#include "CompileTargets.h"

#include "ptxforge/codegen/CompiledObject.h"
#include "ptxforge/codegen/Lowering.h"
#include "ptxforge/codegen/Optimize.h"
#include "ptxforge/fatbin/Format.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <cstdlib>

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

std::string hostTargetTriple() { return sys::getProcessTriple(); }

Expected<std::string> emitHostCode(const ptx::VerifiedModule &M, const ptx::SourceBuffer &Source, HostOutput Kind,
                                   unsigned OptLevel) {
  codegen::LoweringOptions LO;
  LO.ModuleName = sys::path::filename(Source.name()).str();
  auto LM = codegen::lowerToLLVM(M, &Source, LO);
  if (!LM)
    return LM.takeError();
  codegen::CompileOptions CO;
  CO.OptLevel = OptLevel;
  auto TM = codegen::createTargetMachine(CO);
  if (!TM)
    return TM.takeError();
  Module &Mod = *LM->Module;
  if (Error E = codegen::prepareModule(Mod, **TM))
    return E;
  // -O0 shows the IR as lowered; the JIT's -O0 (optimizeModule) would already inline the thread functions.
  if (OptLevel > 0)
    if (Error E = codegen::optimizeModule(Mod, **TM, OptLevel))
      return E;
  if (Kind != HostOutput::LLVM)
    return codegen::emitMachineCode(Mod, **TM, Kind == HostOutput::Asm);
  std::string Out;
  raw_string_ostream OS(Out);
  Mod.print(OS, nullptr);
  return Out;
}

} // namespace ptxforge::tools
