// `ptxforge compile`: the nvcc-like driver. It speaks nvcc's target flags (-arch, -code, -gencode), checks that
// the module can be compiled for each requested architecture, and writes a fatbinary whose PTX entries hold the
// module re-targeted to each compute_XX (with --emit=ptx, the PTX text itself; with --emit=llvm|asm|obj, host
// code). Inputs are PTX files and fatbinaries (or CUDA executables) to repackage. The architecture names and the
// host code are CompileTargetsCommand.cpp's.
#include "Commands.h"
#include "CompileTargets.h"

#include "ptxforge/driver/Device.h"
#include "ptxforge/fatbin/Listing.h"
#include "ptxforge/fatbin/Reader.h"
#include "ptxforge/fatbin/Writer.h"
#include "ptxforge/ptx/Frontend.h"
#include "ptxforge/ptx/Requirements.h"
#include "ptxforge/support/InputFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace llvm;
using namespace ptxforge;
using fatbin::Compression;
using fatbin::EntryFlag;

namespace ptxforge::tools {
namespace {

// nvcc's words for usage errors ("nvcc fatal   : ..."), ptxforge's for the rest.
raw_ostream &fatal() { return errs() << "ptxforge compile: fatal: "; }
raw_ostream &error() { return errs() << "ptxforge compile: error: "; }
raw_ostream &warning() { return errs() << "ptxforge compile: warning: "; }
/// `-v`: what the driver does, one step a line, marked like nvcc's `#$` command lines.
raw_ostream &step() { return errs() << "#$ "; }

Error makeError(const Twine &Msg) { return createStringError(inconvertibleErrorCode(), Msg); }

/// What the command line asks for once checked.
struct Settings {
  std::vector<Gencode> Gencodes; ///< empty: each input keeps its own target
  Compression Compress = Compression::Zstd;
  std::string CompressMode = "default";
  std::string PtxasOptions; ///< stored in every PTX entry (cuobjdump's "ptxasOptions")
  bool EmitPtx = false;
  std::optional<HostOutput> Host; ///< --emit=llvm|asm|obj
  unsigned OptLevel = 3;
  std::vector<std::string> HostNative; ///< --host-native: ISA levels of the host-native entries
};

struct CompileOptions {
  std::vector<std::string> Inputs;
  std::string Arch, Code;
  std::vector<std::string> Gencodes;
  bool GencodeBeforeArch = false; ///< -gencode came first on the command line: its entries come first
  bool Fatbin = false;
  std::string Emit;
  std::string Output;
  std::string OptLevel;
  bool Verbose = false;
  std::vector<std::string> PtxasOptions;
  std::string CompressMode;
  bool NoCompress = false;
  std::string HostNative;
  std::vector<std::string> IncludeDirs, Defines;
};

Expected<Settings> resolveSettings(const CompileOptions &O) {
  Settings S;
  unsigned NativeCC = 0; // -arch=native: the emulated device's
  if (O.Arch == "native") {
    auto CC = driver::deviceComputeCapabilityFromEnvironment();
    if (!CC)
      return makeError("-arch=native: " + toString(CC.takeError()));
    NativeCC = *CC;
  }
  auto FromArch = fatbin::archGencodes(O.Arch, O.Code, NativeCC);
  if (!FromArch)
    return FromArch.takeError();
  std::vector<Gencode> FromGencode;
  for (const std::string &V : O.Gencodes) {
    auto G = fatbin::parseGencode(V);
    if (!G)
      return G.takeError();
    FromGencode.push_back(std::move(*G));
  }
  // Entries follow the command line's order of -arch and -gencode.
  S.Gencodes = O.GencodeBeforeArch ? FromGencode : *FromArch;
  append_range(S.Gencodes, O.GencodeBeforeArch ? *FromArch : FromGencode);

  S.Host = parseHostOutput(O.Emit);
  if (!O.Emit.empty() && O.Emit != "ptx" && O.Emit != "fatbin" && !S.Host)
    return makeError("Unknown value '" + O.Emit +
                     "' for option '--emit' (expected ptx or fatbin) or host code (llvm, asm or obj)");
  S.EmitPtx = O.Emit == "ptx";
  if ((S.EmitPtx || S.Host) && O.Fatbin)
    return makeError("--emit=" + O.Emit + " and --fatbin ask for different outputs");
  if (!O.HostNative.empty()) {
    if (S.EmitPtx || S.Host)
      return makeError("--host-native adds fatbin entries; --emit=" + O.Emit + " writes no fatbin");
    auto Levels = parseHostNativeLevels(O.HostNative);
    if (!Levels)
      return Levels.takeError();
    S.HostNative = std::move(*Levels);
  }

  if (!O.CompressMode.empty()) {
    if (!is_contained({"default", "size", "speed", "balance", "none"}, O.CompressMode))
      return makeError("Unknown value '" + O.CompressMode +
                       "' for option '--compress-mode' (expected default, size, speed, balance or none)");
    S.CompressMode = O.CompressMode;
  }
  if (O.NoCompress)
    S.CompressMode = "none";
  S.Compress = S.CompressMode == "none" ? Compression::None : Compression::Zstd;

  if (!O.OptLevel.empty()) {
    if (O.OptLevel.size() != 1 || O.OptLevel[0] < '0' || O.OptLevel[0] > '3')
      return makeError("Unsupported optimization level '-O" + O.OptLevel + "' (ptxforge takes -O0 to -O3)");
    S.OptLevel = unsigned(O.OptLevel[0] - '0');
  }

  std::vector<std::string> Ptxas;
  for (const std::string &V : O.PtxasOptions)
    for (StringRef Opt : split(V, ','))
      if (!Opt.trim().empty())
        Ptxas.push_back(Opt.trim().str());
  S.PtxasOptions = join(Ptxas, " ");
  return S;
}

/// A module run through the front end, and what it needs.
struct LoadedModule {
  std::unique_ptr<ptx::FrontendResult> Front;
  ptx::ModuleRequirements Needs;

  const ptx::Module &module() const { return *Front->module(); }
  const ptx::SourceBuffer &source() const { return *Front->Source; }
};

/// Runs the front end on Text, prints its diagnostics; null when the module has errors.
std::unique_ptr<LoadedModule> loadModule(std::string Name, std::string Text) {
  auto Front = ptx::runFrontend(std::make_unique<ptx::SourceBuffer>(std::move(Name), std::move(Text)));
  Front->Diags.print(*Front->Source, errs());
  if (!Front->ok())
    return nullptr;
  auto L = std::make_unique<LoadedModule>();
  L->Needs = ptx::computeRequirements(*Front->module());
  L->Front = std::move(Front);
  return L;
}

/// Whether code built for a `.target` (Sm, Suffix) may be re-targeted to T (ptx::targetAllows).
bool canRetarget(unsigned Sm, char Suffix, const GpuArch &T) {
  return ptx::targetAllows(Sm, Suffix, T.Number, T.Suffix);
}

/// Why the module cannot be compiled for T (empty when it can).
std::vector<std::string> whyCannotCompile(const LoadedModule &L, const GpuArch &T) {
  return ptx::reasonsCannotCompile(L.module(), L.Needs, T.Number, T.Suffix, T.name(), &L.source());
}

/// The [begin, end) byte range of the first token made of TokenChars at or after From on the line holding Loc.
std::optional<std::pair<size_t, size_t>> findOnLine(const ptx::SourceBuffer &S, ptx::SourceLoc Loc, StringRef Directive,
                                                    StringRef TokenStart, function_ref<bool(char)> IsTokenChar) {
  if (!Loc.isValid())
    return std::nullopt;
  StringRef Line = S.lineText(Loc);
  size_t LineStart = Loc.Offset - (S.lineColumn(Loc).Column - 1);
  size_t From = Line.find(Directive);
  From = From == StringRef::npos ? 0 : From + Directive.size();
  size_t Begin = TokenStart.empty() ? Line.find_first_not_of(" \t", From) : Line.find(TokenStart, From);
  if (Begin == StringRef::npos)
    return std::nullopt;
  size_t End = Begin;
  while (End < Line.size() && IsTokenChar(Line[End]))
    ++End;
  if (End == Begin)
    return std::nullopt;
  return std::make_pair(LineStart + Begin, LineStart + End);
}

/// The module's text for T: the `.target` architecture replaced and, where T needs a later PTX ISA than the
/// module declares, `.version` raised to the first one that knows T (PTX requires it). Every other byte is
/// kept; nvcc would regenerate the PTX from source, which does not change what the code does.
Expected<std::string> retargetText(const LoadedModule &L, const GpuArch &T, std::string &Change) {
  const ptx::Module &M = L.module();
  std::string Text = L.source().text().str();
  struct Edit {
    size_t Begin, End;
    std::string With;
  };
  std::vector<Edit> Edits;
  std::vector<std::string> Changes;
  std::string NewSm = ptx::smName(T.Number, T.Suffix);
  if (M.Tgt.Sm != T.Number || M.Tgt.Suffix != T.Suffix) {
    auto R = findOnLine(L.source(), M.Tgt.Loc, ".target", "sm_", [](char C) { return isAlnum(C) || C == '_'; });
    if (!R)
      return makeError("cannot find the architecture of '.target' to rewrite");
    Edits.push_back({R->first, R->second, NewSm});
    Changes.push_back(".target " + ptx::smName(M.Tgt.Sm, M.Tgt.Suffix) + " -> " + NewSm);
  }
  unsigned NeedPtx = ptx::ptxVersionForTarget(T.Number, T.Suffix);
  if (M.Version.value() < NeedPtx) {
    auto R = findOnLine(L.source(), M.VersionLoc, ".version", "", [](char C) { return isDigit(C) || C == '.'; });
    if (!R)
      return makeError("cannot find the number of '.version' to rewrite");
    Edits.push_back({R->first, R->second, ptx::ptxVersionName(NeedPtx)});
    Changes.push_back(".version " + ptx::ptxVersionName(M.Version.value()) + " -> " + ptx::ptxVersionName(NeedPtx));
  }
  sort(Edits, [](const Edit &A, const Edit &B) { return A.Begin > B.Begin; });
  for (const Edit &E : Edits)
    Text.replace(E.Begin, E.End - E.Begin, E.With);
  Change = Changes.empty() ? "unchanged" : join(Changes, ", ");
  return Text;
}

/// What one input offers to compile: a PTX file is one module; a fatbinary offers each of its PTX entries,
/// the best one for each requested architecture, and its NVIDIA SASS for the architectures it was built for.
class InputModules {
public:
  static std::unique_ptr<InputModules> fromPtx(std::unique_ptr<LoadedModule> M) {
    auto I = std::unique_ptr<InputModules>(new InputModules());
    I->Ptx = std::move(M);
    return I;
  }
  static std::unique_ptr<InputModules> fromFatbin(fatbin::FatbinaryFile File, std::string Path) {
    auto I = std::unique_ptr<InputModules>(new InputModules());
    I->Path = std::move(Path);
    I->File = std::make_unique<fatbin::FatbinaryFile>(std::move(File));
    return I;
  }

  bool isFatbin() const { return File != nullptr; }
  const fatbin::Fatbinary &fatbinary() const { return File->fatbinary(); }
  /// The PTX file's module (PTX inputs only).
  const LoadedModule &ptxModule() const { return *Ptx; }

  /// The module to compile for T. Null when the fatbinary has no PTX that can be re-targeted to T (NoEntry says
  /// why) or when that PTX does not parse (its diagnostics are printed; NoEntry is left empty).
  const LoadedModule *moduleFor(const GpuArch &T, std::string &NoEntry) {
    if (Ptx)
      return Ptx.get();
    const fatbin::Entry *Best = nullptr;
    std::vector<std::string> Have;
    for (const fatbin::Entry *E : fatbinary().entries()) {
      if (!E->isPtx())
        continue;
      Have.push_back(E->archName());
      char Suffix = E->Header.isArchSpecific() ? 'a' : E->Header.isFamilySpecific() ? 'f' : 0;
      if (!canRetarget(E->arch(), Suffix, T))
        continue;
      bool SameSuffix = (E->Header.Flags & T.entryFlags()) == T.entryFlags();
      if (!Best || E->arch() > Best->arch() || (E->arch() == Best->arch() && SameSuffix))
        Best = E;
    }
    if (!Best) {
      NoEntry = Path + ": no PTX entry can be compiled for " + T.name() + " (" +
                (Have.empty() ? "it holds no PTX" : "it holds PTX for " + join(Have, ", ")) + ")";
      return nullptr;
    }
    auto [It, New] = Parsed.try_emplace(Best);
    if (New) {
      auto Text = Best->ptxText();
      if (!Text) {
        error() << Path << ": " << toString(Text.takeError()) << "\n";
        return nullptr;
      }
      std::string Name = Path + ":" + entryFileName(Best);
      It->second = loadModule(Name, std::move(*Text));
    }
    return It->second.get();
  }

  /// The NVIDIA SASS entry built for exactly Sm (fatbinary inputs only), to copy.
  const fatbin::Entry *sassFor(const GpuArch &Sm) const {
    if (!File)
      return nullptr;
    for (const fatbin::Entry *E : fatbinary().entries())
      if (E->isElf() && E->arch() == Sm.Number &&
          (E->Header.Flags & (fatbin::flagBits(EntryFlag::ArchSpecific) |
                              fatbin::flagBits(EntryFlag::FamilySpecific))) == Sm.entryFlags())
        return E;
    return nullptr;
  }

private:
  InputModules() = default;

  /// cuobjdump's name for the entry ("k.1.sm_75.ptx"), so diagnostics say which entry they are about.
  std::string entryFileName(const fatbin::Entry *E) const {
    for (const fatbin::NamedEntry &N : fatbin::nameEntries(fatbinary(), fatbin::listingStem(Path)))
      if (N.E == E)
        return N.FileName;
    return E->archName() + ".ptx";
  }

  std::unique_ptr<LoadedModule> Ptx;
  std::string Path;
  std::unique_ptr<fatbin::FatbinaryFile> File;
  std::map<const fatbin::Entry *, std::unique_ptr<LoadedModule>> Parsed;
};

/// One entry of the fatbinary being built.
struct PlannedEntry {
  GpuArch Arch;                        ///< compute_XX for PTX, sm_XX for a copied SASS or a host-native entry
  std::string PtxText;                 ///< PTX entries, and the PTX a host-native entry is compiled from
  uint64_t ExtraFlags = 0;             ///< the module's debug bit
  const fatbin::Entry *Copy = nullptr; ///< SASS entries copied from a fatbinary input
  std::string IsaLevel;                ///< host-native entries: the x86-64 ISA level compiled for
};

/// The entries for the requested gencodes, in nvcc's order (each code of each gencode in turn, SASS before
/// the PTX an `sm_XX` code brings along). Returns false after printing errors.
bool planEntries(InputModules &In, StringRef InputName, const Settings &S, bool Verbose,
                 std::vector<PlannedEntry> &Out) {
  bool Ok = true;
  std::vector<std::string> SkippedByAll, SassWarnings;
  enum class Verdict { Compiles, Skipped, Failed };
  std::map<std::string, Verdict> Checked; // by virtual arch name
  // Whether the module compiles for Arch. With Quiet (-arch=all), an architecture the input cannot serve is
  // skipped without an error; a module that does not parse fails either way.
  auto check = [&](const GpuArch &Arch, bool Quiet) {
    auto [It, New] = Checked.try_emplace(Arch.name(), Verdict::Failed);
    if (!New && !(It->second == Verdict::Skipped && !Quiet)) // a skip is no answer for an explicit request
      return It->second;
    std::string NoEntry;
    const LoadedModule *L = In.moduleFor(Arch, NoEntry);
    std::vector<std::string> Reasons;
    if (L)
      Reasons = whyCannotCompile(*L, Arch);
    if (L && Reasons.empty())
      It->second = Verdict::Compiles;
    else if (Quiet && (L || !NoEntry.empty()))
      It->second = Verdict::Skipped;
    else if (!NoEntry.empty())
      error() << NoEntry << "\n";
    else if (L) {
      error() << L->source().name() << " cannot be compiled for " << Arch.name() << ":\n";
      for (const std::string &R : Reasons)
        errs() << "  " << R << "\n";
    }
    return It->second;
  };
  // The PTX entry for Arch, or with Levels the host-native entries for Code compiled from that PTX.
  auto addPtx = [&](const GpuArch &Arch, const GpuArch &Code = {}, ArrayRef<std::string> Levels = {}) {
    auto Planned = [&](const PlannedEntry &P) {
      return !P.Copy && P.IsaLevel.empty() == Levels.empty() &&
             (Levels.empty() ? P.Arch.sameTarget(Arch) : P.Arch.Number == Code.Number);
    };
    if (any_of(Out, Planned))
      return true;
    std::string NoEntry;
    const LoadedModule *L = In.moduleFor(Arch, NoEntry); // check() has found it
    std::string Change;
    auto Text = retargetText(*L, Arch, Change);
    if (!Text) {
      error() << L->source().name() << ": " << toString(Text.takeError()) << "\n";
      return false;
    }
    if (Verbose)
      step() << "ptx " << Arch.name() << " from " << L->source().name() << ": " << Change << "\n";
    PlannedEntry P;
    P.Arch = Levels.empty() ? Arch : Code;
    P.PtxText = std::move(*Text);
    P.ExtraFlags = L->module().Tgt.Debug ? fatbin::flagBits(EntryFlag::Debug) : 0;
    for (const std::string &Level : Levels) {
      Out.push_back(P);
      Out.back().IsaLevel = Level;
    }
    if (Levels.empty())
      Out.push_back(std::move(P));
    return true;
  };

  for (const Gencode &G : S.Gencodes) {
    Verdict V = check(G.Arch, G.FromAll);
    if (V == Verdict::Skipped)
      SkippedByAll.push_back(G.Arch.name());
    if (V != Verdict::Compiles) {
      Ok &= V == Verdict::Skipped;
      continue;
    }
    for (const GpuArch &Code : G.Codes) {
      GpuArch Ptx = Code.virtualArch();
      if (check(Ptx, false) != Verdict::Compiles) {
        Ok = false;
        continue;
      }
      if (!Code.Virtual) {
        if (const fatbin::Entry *E = In.sassFor(Code)) {
          if (none_of(Out, [&](const PlannedEntry &P) { return P.Copy == E; })) {
            PlannedEntry P;
            P.Arch = Code;
            P.Copy = E;
            Out.push_back(P);
            if (Verbose)
              step() << "elf " << Code.name() << ": copied from " << InputName << "\n";
          }
        } else if (!S.EmitPtx && S.HostNative.empty() && !is_contained(SassWarnings, Code.name())) {
          SassWarnings.push_back(Code.name());
          errs() << "ptxforge: warning: " << Code.name()
                 << ": NVIDIA SASS cannot be generated; the fatbin holds PTX for " << Ptx.name()
                 << " instead (--host-native=LEVELS adds host code for it)\n";
        }
      }
      // Host-native entries stand where nvcc puts SASS: an sm_XX code gets them instead of PTX, and a
      // compute_XX code gets them beside its PTX.
      if (!S.HostNative.empty() && !addPtx(Ptx, Code, S.HostNative))
        Ok = false;
      if ((Code.Virtual || S.HostNative.empty()) && !addPtx(Ptx))
        Ok = false;
    }
  }
  if (!SkippedByAll.empty())
    warning() << InputName << ": -arch=all: skipped " << join(SkippedByAll, ", ")
              << ", which cannot run this module ('ptxforge check' says why)\n";
  if (Ok && Out.empty()) {
    error() << InputName << ": no requested architecture can run this module\n";
    Ok = false;
  }
  return Ok;
}

/// Serializes the planned entries as one container.
Expected<std::vector<uint8_t>> writePlanned(const std::vector<PlannedEntry> &Plan, const Settings &S, bool Verbose) {
  fatbin::FatbinWriter W;
  HostNativeCompiler Host(S.OptLevel, S.Compress, Verbose);
  for (const PlannedEntry &P : Plan) {
    if (P.Copy) {
      W.addCopy(*P.Copy);
      continue;
    }
    if (!P.IsaLevel.empty()) {
      if (Error E =
              Host.add(W, P.PtxText, "compute_" + std::to_string(P.Arch.Number) + " PTX", P.Arch.Number, P.IsaLevel))
        return E;
      continue;
    }
    fatbin::EntryDesc D;
    D.Arch = P.Arch.Number;
    D.TargetFlags = P.Arch.entryFlags() | P.ExtraFlags;
    D.Options = S.PtxasOptions;
    D.Compress = S.Compress;
    W.addPtx(P.PtxText, std::move(D));
  }
  return W.write();
}

/// A fatbinary input with no target flags: every container and entry as it was, PTX entries stored again with
/// the requested compression (and -Xptxas options, where given), each followed by host-native entries compiled
/// from it with --host-native (unless the container has them already); other entries copied byte for byte.
Expected<std::vector<uint8_t>> repackage(const fatbin::Fatbinary &F, const Settings &S, bool Verbose) {
  std::vector<uint8_t> Out;
  constexpr uint64_t KeptFlags = fatbin::flagBits(EntryFlag::ArchSpecific) |
                                 fatbin::flagBits(EntryFlag::FamilySpecific) | fatbin::flagBits(EntryFlag::Debug);
  HostNativeCompiler Host(S.OptLevel, S.Compress, Verbose);
  for (const fatbin::Container &C : F.Containers) {
    fatbin::FatbinWriter W;
    for (const fatbin::Entry &E : C.Entries) {
      if (!E.isPtx()) {
        W.addCopy(E);
        if (Verbose)
          step() << fatbin::kindName(E.kind()) << " " << E.archName() << ": copied\n";
        continue;
      }
      auto Text = E.ptxText();
      if (!Text)
        return Text.takeError();
      fatbin::EntryDesc D;
      D.Arch = E.arch();
      D.TargetFlags = E.Header.Flags & KeptFlags;
      D.Name = E.Name.str();
      D.Options = S.PtxasOptions.empty() ? E.Options.str() : S.PtxasOptions;
      D.Compress = S.Compress;
      D.Version = fatbin::CodeVersion{E.Header.MajorVersion, E.Header.MinorVersion};
      W.addPtx(*Text, std::move(D));
      if (Verbose)
        step() << "ptx " << E.archName() << ": stored again\n";
      for (const std::string &Level : S.HostNative) {
        bool Have = any_of(C.Entries, [&](const fatbin::Entry &H) {
          return H.isHostNative() && H.arch() == E.arch() && H.Options == Level;
        });
        if (!Have)
          if (Error Err = Host.add(W, *Text, "PTX " + E.archName(), E.arch(), Level))
            return Err;
      }
    }
    auto Bytes = W.write();
    if (!Bytes)
      return Bytes.takeError();
    Out.resize(alignTo(Out.size(), fatbin::FatbinAlignment), 0);
    Out.insert(Out.end(), Bytes->begin(), Bytes->end());
  }
  return Out;
}

Error writeOutput(StringRef Path, StringRef Bytes) {
  std::error_code EC;
  ToolOutputFile Out(Path, EC, sys::fs::OF_None);
  if (EC)
    return makeError("cannot write '" + Path + "': " + EC.message());
  Out.os() << Bytes;
  Out.os().flush();
  if (Out.os().has_error())
    return makeError("cannot write '" + Path + "': " + Out.os().error().message());
  Out.keep();
  return Error::success();
}

/// Reads Path as a fatbinary (or an ELF file holding one) or as PTX, told apart by the magic number.
/// Null after printing the errors.
std::unique_ptr<InputModules> readInput(const std::string &Path) {
  auto Buf = support::readInputFileBuffer(Path);
  if (!Buf) {
    error() << toString(Buf.takeError()) << "\n";
    return nullptr;
  }
  ArrayRef<uint8_t> Bytes(reinterpret_cast<const uint8_t *>((*Buf)->getBufferStart()), (*Buf)->getBufferSize());
  if (fatbin::identifyImage(Bytes.take_front(4)) != fatbin::ImageFormat::Unknown) {
    auto File = fatbin::FatbinaryFile::fromBuffer(std::move(*Buf));
    if (!File) {
      error() << Path << ": " << toString(File.takeError()) << "\n";
      return nullptr;
    }
    return InputModules::fromFatbin(std::move(*File), Path);
  }
  auto M = loadModule(Path, (*Buf)->getBuffer().str());
  return M ? InputModules::fromPtx(std::move(M)) : nullptr;
}

/// --emit=llvm|asm|obj: host code for the module the first requested architecture gets (a PTX file: the module
/// itself, checked against that architecture; a fatbinary: its PTX entry for it, by default for the emulated
/// device, PTXFORGE_DEVICE_CC).
int compileHost(InputModules &In, const std::string &Path, const std::string &OutPath, const Settings &S,
                bool Verbose) {
  std::optional<GpuArch> Arch;
  if (!S.Gencodes.empty()) {
    Arch = S.Gencodes.front().Arch;
  } else if (In.isFatbin()) {
    auto CC = driver::deviceComputeCapabilityFromEnvironment();
    if (!CC) {
      error() << toString(CC.takeError()) << "\n";
      return ExitInputError;
    }
    Arch = GpuArch{*CC, 0, true};
  }
  std::string NoEntry;
  const LoadedModule *L = In.moduleFor(Arch.value_or(GpuArch{}), NoEntry);
  if (!L) {
    if (!NoEntry.empty())
      error() << NoEntry << "\n";
    return ExitInputError;
  }
  if (Arch) {
    std::vector<std::string> Reasons = whyCannotCompile(*L, *Arch);
    if (!Reasons.empty()) {
      error() << L->source().name() << " cannot be compiled for " << Arch->name() << ":\n";
      for (const std::string &R : Reasons)
        errs() << "  " << R << "\n";
      return ExitInputError;
    }
  }
  if (Verbose)
    step() << "lower " << L->source().name() << " for " << hostTargetTriple()
           << (S.OptLevel ? ", then LLVM's -O" + std::to_string(S.OptLevel) + " pipeline" : "") << "\n";
  auto Code = emitHostCode(*L->Front->Verified, L->source(), *S.Host, S.OptLevel);
  if (!Code) {
    error() << L->source().name() << ": " << toString(Code.takeError()) << "\n";
    return ExitInputError;
  }
  if (Verbose)
    step() << "write " << OutPath << " (" << hostOutputName(*S.Host) << ")\n";
  if (Error E = writeOutput(OutPath, *Code)) {
    error() << toString(std::move(E)) << "\n";
    return ExitInputError;
  }
  return ExitOk;
}

int compileInput(const std::string &Path, const std::string &OutPath, const Settings &S, bool Verbose) {
  if (Verbose)
    step() << "read " << Path << "\n";
  std::unique_ptr<InputModules> In = readInput(Path);
  if (!In)
    return ExitInputError;
  if (S.Host)
    return compileHost(*In, Path, OutPath, S, Verbose);

  std::string Bytes;
  if (In->isFatbin() && S.Gencodes.empty()) {
    if (S.EmitPtx) {
      for (const fatbin::Entry *E : In->fatbinary().entries())
        if (E->isPtx()) {
          auto Text = E->ptxText();
          if (!Text) {
            error() << Path << ": " << toString(Text.takeError()) << "\n";
            return ExitInputError;
          }
          Bytes = std::move(*Text);
          break;
        }
      if (Bytes.empty()) {
        error() << Path << ": holds no PTX to emit\n";
        return ExitInputError;
      }
    } else {
      auto Packed = repackage(In->fatbinary(), S, Verbose);
      if (!Packed) {
        error() << Path << ": " << toString(Packed.takeError()) << "\n";
        return ExitInputError;
      }
      Bytes.assign(Packed->begin(), Packed->end());
    }
  } else {
    Settings Own = S;
    if (Own.Gencodes.empty()) { // a PTX file on its own: PTX for its own target, as written
      const ptx::Module &M = In->ptxModule().module();
      Gencode G;
      G.Arch = {M.Tgt.Sm, M.Tgt.Suffix, true};
      G.Codes = {G.Arch};
      Own.Gencodes.push_back(G);
    }
    std::vector<PlannedEntry> Plan;
    if (!planEntries(*In, Path, Own, Verbose, Plan))
      return ExitInputError;
    if (S.EmitPtx) {
      auto First = find_if(Plan, [](const PlannedEntry &P) { return !P.Copy; });
      Bytes = First->PtxText;
    } else {
      auto Packed = writePlanned(Plan, S, Verbose);
      if (!Packed) {
        error() << Path << ": " << toString(Packed.takeError()) << "\n";
        return ExitInputError;
      }
      Bytes.assign(Packed->begin(), Packed->end());
    }
  }
  if (Verbose)
    step() << "write " << OutPath << " ("
           << (S.EmitPtx ? "PTX text"
                         : "fatbin, PTX " +
                               std::string(S.Compress == Compression::None ? "not compressed" : "compressed with zstd"))
           << ")\n";
  if (Error E = writeOutput(OutPath, Bytes)) {
    error() << toString(std::move(E)) << "\n";
    return ExitInputError;
  }
  return ExitOk;
}

int runCompile(const CompileOptions &O) {
  auto S = resolveSettings(O);
  if (!S) {
    fatal() << toString(S.takeError()) << "\n";
    return ExitUsage;
  }
  if (O.Inputs.size() > 1 && !O.Output.empty()) {
    fatal() << "A single input file is required for a non-link phase when an outputfile is specified\n";
    return ExitUsage;
  }
  if (!O.IncludeDirs.empty())
    warning() << "-I has no effect on PTX or fatbinary input; ignored\n";
  if (!O.Defines.empty())
    warning() << "-D has no effect on PTX or fatbinary input; ignored\n";
  if (O.Verbose) {
    for (const Gencode &G : S->Gencodes)
      step() << G.spelling() << "\n";
    step() << "-O" << S->OptLevel
           << (!S->Host && S->HostNative.empty() ? " (for host-native code; none requested)"
               : !S->Host ? " (host-native code for " + join(S->HostNative, ", ") + ": LLVM's -O" +
                                std::to_string(S->OptLevel) + " pipeline)"
               : S->OptLevel ? " (host code: LLVM's -O" + std::to_string(S->OptLevel) + " pipeline)"
                             : " (host code: the lowered LLVM IR, not optimized)")
           << "\n";
  }

  int Status = ExitOk;
  for (const std::string &Input : O.Inputs) {
    std::string OutPath = O.Output;
    if (OutPath.empty() && S->Host && *S->Host != HostOutput::Obj) {
      OutPath = "-";              // LLVM IR and assembly: standard output
    } else if (OutPath.empty()) { // nvcc's default: the input's stem, in the current directory
      OutPath = (sys::path::stem(Input) + (S->Host ? ".o" : S->EmitPtx ? ".ptx" : ".fatbin")).str();
      if (sys::fs::equivalent(Input, OutPath)) {
        fatal() << "the output '" << OutPath << "' would overwrite the input; name another with -o\n";
        return ExitUsage;
      }
    } else if (OutPath != "-" && sys::fs::equivalent(Input, OutPath)) {
      fatal() << "the output '" << OutPath << "' would overwrite the input\n";
      return ExitUsage;
    }
    if (int St = compileInput(Input, OutPath, *S, O.Verbose))
      Status = St;
  }
  return Status;
}

/// -arch, -code, -gencode: what to build (fatbin/Targets.h plans it as nvcc does).
void addTargetOptions(CLI::App &Cmd, CompileOptions &O) {
  Cmd.add_option("--arch,--gpu-architecture", O.Arch,
                 "compute_XX (PTX only), sm_XX (= -gencode arch=compute_XX,code=[sm_XX,compute_XX]), native "
                 "(PTXFORGE_DEVICE_CC, else 13.0: compute_121 PTX), all, all-major (nvcc -arch)");
  Cmd.add_option("--code,--gpu-code", O.Code, "with -arch=compute_XX: the codes to build, e.g. sm_80,compute_80");
  addRepeatedOption(Cmd, "--gencode,--generate-code", O.Gencodes,
                    "arch=compute_XX,code=[sm_XX,compute_XX] (repeatable; also code=sm_XX, code=compute_XX)");
}

/// What to write, where, and for host code at which optimization level and for which CPUs.
void addOutputOptions(CLI::App &Cmd, CompileOptions &O) {
  Cmd.add_flag("--fatbin", O.Fatbin, "write a fatbinary (the default)");
  Cmd.add_option("--emit", O.Emit,
                 "fatbin (default); ptx: the PTX text for the first architecture; host code: llvm (LLVM IR after "
                 "lowering and the -O pipeline), asm (assembly) or obj (an object file)");
  Cmd.add_option("-o,--output-file", O.Output,
                 "output file ('-' for standard output; default: the input's stem + .fatbin, .ptx or .o; "
                 "standard output for llvm and asm)");
  Cmd.add_option("-O,--optimize", O.OptLevel,
                 "optimization level 0-3 of host code (--host-native, --emit=llvm|asm|obj; default 3; with --emit, "
                 "-O0 is the IR as lowered)");
  Cmd.add_option("--host-native", O.HostNative,
                 "x86-64 ISA levels to precompile for, comma-separated: x86-64, x86-64-v2, x86-64-v3, x86-64-v4, "
                 "or native (this CPU's highest level). Each sm_XX code gets host-native entries (ptxforge's "
                 "SASS: compute capability XX, one per level) instead of PTX, each compute_XX code gets them "
                 "beside its PTX; a repackaged fatbin gets them for each PTX entry. A loader runs the entry for "
                 "its exact compute capability and the best level the CPU has, else JIT-compiles the PTX "
                 "(CUDA_FORCE_PTX_JIT=1 always does)");
}

/// nvcc's other options that a PTX compile keeps or accepts: -v, -Xptxas, compression, -I and -D.
void addNvccOptions(CLI::App &Cmd, CompileOptions &O) {
  Cmd.add_flag("-v,--verbose", O.Verbose, "print each step (nvcc's #$ lines)");
  addRepeatedOption(Cmd, "--Xptxas,--ptxas-options", O.PtxasOptions,
                    "ptxas options, comma-separated: stored in each PTX entry (cuobjdump's ptxasOptions)");
  Cmd.add_option("--compress-mode", O.CompressMode,
                 "default, size, speed, balance (all zstd here) or none (PTX stored as plain text)");
  Cmd.add_flag("--no-compress", O.NoCompress, "store PTX as plain text (= --compress-mode=none)");
  addRepeatedOption(Cmd, "-I,--include-path", O.IncludeDirs, "ignored with a warning (PTX input has no includes)");
  addRepeatedOption(Cmd, "-D,--define-macro", O.Defines, "ignored with a warning (PTX input has no macros)");
}

/// Whether -gencode came before -arch on the command line (its entries then come first, CompileOptions).
bool gencodeBeforeArch(const CLI::App &Cmd) {
  for (const CLI::Option *Opt : Cmd.parse_order()) {
    if (Opt->check_name("--arch"))
      return false;
    if (Opt->check_name("--gencode"))
      return true;
  }
  return false;
}

} // namespace

void addCompileCommand(CLI::App &App, Runner &Run) {
  auto O = std::make_shared<CompileOptions>();
  CLI::App *Cmd = App.add_subcommand(
      "compile", "The nvcc-like driver: PTX files (or fatbinaries to repackage) in, a fatbinary with PTX for each "
                 "requested architecture out (zstd-compressed like CUDA 13). ptxforge makes no NVIDIA SASS: where "
                 "nvcc would, --host-native=LEVELS stores x86-64 code compiled ahead of time (else an sm_XX request "
                 "gets PTX for compute_XX, with a warning). --emit=llvm|asm|obj writes host code instead: the "
                 "kernels lowered as `ptxforge run` lowers them, compiled for this CPU");
  addInputs(*Cmd, O->Inputs, "PTX files, fatbinaries or CUDA executables");
  addTargetOptions(*Cmd, *O);
  addOutputOptions(*Cmd, *O);
  addNvccOptions(*Cmd, *O);
  Cmd->callback([&Run, O, Cmd] {
    O->GencodeBeforeArch = gencodeBeforeArch(*Cmd);
    Run = [O] { return runCompile(*O); };
  });
}

} // namespace ptxforge::tools
