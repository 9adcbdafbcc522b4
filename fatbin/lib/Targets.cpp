// GPU architectures as nvcc's target flags name them (-arch, -code, -gencode) and compute capabilities as
// PTXFORGE_DEVICE_CC spells them: see Targets.h.
#include "ptxforge/fatbin/Targets.h"

#include "ptxforge/fatbin/Format.h"
#include "ptxforge/ptx/Architectures.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace ptxforge::fatbin {
namespace {

Error makeError(const Twine &Msg) { return createStringError(inconvertibleErrorCode(), Msg); }

} // namespace

Expected<unsigned> parseComputeCapability(StringRef Text) {
  StringRef T = Text.trim();
  // sm_90a and compute_90a name targets of a 9.0 device: the suffix says what code may use, not another device.
  if (T.consume_front("sm_") || T.consume_front("compute_")) {
    if (T.ends_with("a") || T.ends_with("f"))
      T = T.drop_back();
    if (T.contains('.'))
      T = ""; // sm_9.0 is no spelling
  }
  unsigned Major = 0, Minor = 0;
  auto [Left, Right] = T.split('.');
  bool Ok;
  if (T.contains('.')) {
    Ok = !Left.getAsInteger(10, Major) && !Right.getAsInteger(10, Minor) && Minor < 10 && !Right.empty();
  } else {
    unsigned V = 0;
    Ok = !T.getAsInteger(10, V) && V >= 10;
    Major = V / 10;
    Minor = V % 10;
  }
  if (!Ok || Major < 3 || Major > 99)
    return makeError("'" + Text + "' is not a compute capability (expected e.g. 9.0, 90 or sm_90)");
  return Major * 10 + Minor;
}

namespace {

/// The architectures that take the `a` (arch-specific) and `f` (family-specific) suffixes (SupportedArchs: all).
constexpr unsigned ArchSpecificArchs[] = {90, 100, 103, 110, 120, 121};
constexpr unsigned FamilyArchs[] = {100, 103, 110, 120, 121};

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

Expected<std::vector<Gencode>> archGencodes(StringRef Arch, StringRef Code, unsigned NativeCC) {
  std::vector<Gencode> Out;
  if (!Code.empty() && Arch.empty())
    return makeError("-arch option not specified (-code needs -arch=compute_XX)");
  if (Arch.empty())
    return Out;
  if (Arch == "all" || Arch == "all-major" || Arch == "native") {
    if (!Code.empty())
      return makeError("Value of -arch option ('" + Arch + "') must be a virtual code architecture");
    if (Arch == "native") {
      // The default device, which no `.target` names (ptx/Architectures.h), runs the newest architecture's PTX,
      // as a GPU newer than the toolkit JIT-compiles it.
      if (const ptx::Architecture *Native = ptx::findArchitecture(NativeCC); Native && !Native->PtxVersion) {
        GpuArch Newest{SupportedArchs[std::size(SupportedArchs) - 1], 0, true};
        Out.push_back(Gencode{Newest, {Newest}});
        return Out;
      }
      if (!isSupported(NativeCC, 0))
        return makeError("-arch=native: compute capability " + Twine(NativeCC / 10) + "." + Twine(NativeCC % 10) +
                         " is not a supported architecture");
      Out.push_back(realArchShorthand(NativeCC, 0, false));
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

} // namespace ptxforge::fatbin
