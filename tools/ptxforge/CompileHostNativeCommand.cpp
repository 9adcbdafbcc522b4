// `ptxforge compile --host-native=LEVELS`: the fatbinary's host-native entries, ptxforge's counterpart of the SASS
// nvcc builds for `sm_XX` codes. Each one is a serialized codegen::CompiledObject compiled from the PTX that the
// fatbinary holds (or would hold) for one compute capability, for one x86-64 ISA level, so a loader on any CPU of
// that level runs it without compiling. Part of the compile command; the name ends in Command.cpp because
// tools/ptxforge/CMakeLists.txt builds *Command.cpp.
#include "CompileTargets.h"

#include "ptxforge/codegen/CompiledObject.h"
#include "ptxforge/driver/Settings.h"
#include "ptxforge/fatbin/HostIsa.h"
#include "ptxforge/ptx/Frontend.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace ptxforge;

namespace ptxforge::tools {

Expected<std::vector<std::string>> parseHostNativeLevels(StringRef Value) {
  std::vector<std::string> Levels;
  for (StringRef Part : split(Value, ',')) {
    Part = Part.trim();
    std::string Level = Part.str();
    if (Part == "native") {
      std::vector<std::string> Host = fatbin::hostIsaLevels();
      if (Host.empty())
        return createStringError(inconvertibleErrorCode(),
                                 "--host-native=native: this host is not x86-64, which host-native entries are for");
      Level = Host.front();
    } else if (!is_contained(fatbin::X86IsaLevels, Part)) {
      return createStringError(inconvertibleErrorCode(),
                               "Unknown value '" + Part + "' for option '--host-native' (expected " +
                                   join(ArrayRef(fatbin::X86IsaLevels), ", ") + " or native, comma-separated)");
    }
    if (!is_contained(Levels, Level))
      Levels.push_back(std::move(Level));
  }
  return Levels;
}

namespace {

Expected<std::string> compileHostNative(StringRef Name, StringRef PtxText, StringRef IsaLevel, unsigned OptLevel) {
  auto Front = ptx::runFrontend(std::make_unique<ptx::SourceBuffer>(Name.str(), PtxText.str()));
  if (!Front->ok()) {
    std::string Diags;
    raw_string_ostream OS(Diags);
    Front->Diags.print(*Front->Source, OS);
    return createStringError(inconvertibleErrorCode(), "the PTX does not compile:\n" + Diags);
  }
  codegen::CompileOptions CO = driver::processSettings().Compile;
  CO.OptLevel = OptLevel;
  CO.TargetCpu = IsaLevel.str();
  auto Object = codegen::compilePTXObject(*Front->Verified, Front->Source.get(), CO);
  if (!Object)
    return Object.takeError();
  return Object->serialize();
}

} // namespace

Error HostNativeCompiler::add(fatbin::FatbinWriter &W, StringRef PtxText, StringRef From, uint32_t Arch,
                              StringRef Level) {
  auto [It, New] = Done.try_emplace(Level.str() + '\0' + PtxText.str());
  if (New) {
    auto Bytes = compileHostNative(From, PtxText, Level, OptLevel);
    if (!Bytes) {
      Done.erase(It);
      return Bytes.takeError();
    }
    It->second = std::move(*Bytes);
  }
  if (Verbose)
    errs() << "#$ host " << fatbin::archName(Arch, 0) << " " << Level << ": " << From << " compiled at -O" << OptLevel
           << (New ? "" : " (the same code as above)") << "\n";
  W.addHostNative(arrayRefFromStringRef(It->second), Arch, Level, Compress);
  return Error::success();
}

} // namespace ptxforge::tools
