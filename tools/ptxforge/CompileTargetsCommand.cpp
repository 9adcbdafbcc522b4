// The host targets of `ptxforge compile` (declared in CompileTargets.h): host code for this CPU
// (--emit=llvm|asm|obj: the module lowered to LLVM IR as `ptxforge run` JIT-compiles it, optimized with codegen's -O
// pipeline, and compiled by the TargetMachine codegen's compileObject uses). The GPU architectures of -arch, -code
// and -gencode are fatbin's (ptxforge/fatbin/Targets.h). Part of the compile command; the name ends in Command.cpp
// because tools/ptxforge/CMakeLists.txt builds *Command.cpp.
#include "CompileTargets.h"

#include "ptxforge/codegen/CompiledObject.h"
#include "ptxforge/codegen/Lowering.h"
#include "ptxforge/codegen/Optimize.h"
#include "ptxforge/driver/Settings.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace llvm;
using namespace ptxforge;

namespace ptxforge::tools {

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
  case HostOutput::LLVM:
    return "LLVM IR";
  case HostOutput::Asm:
    return "host assembly";
  case HostOutput::Obj:
    return "host object file";
  }
  return "";
}

std::string hostTargetTriple() { return sys::getProcessTriple(); }

Expected<std::string> emitHostCode(const ptx::VerifiedModule &M, const ptx::SourceBuffer &Source, HostOutput Kind,
                                   unsigned OptLevel) {
  codegen::CompileOptions CO = driver::processSettings().Compile;
  CO.OptLevel = OptLevel;
  codegen::LoweringOptions LO = CO.Lowering;
  LO.ModuleName = sys::path::filename(Source.name()).str();
  auto LM = codegen::lowerToLLVM(M, &Source, LO);
  if (!LM)
    return LM.takeError();
  auto TM = codegen::createTargetMachine(CO);
  if (!TM)
    return TM.takeError();
  Module &Mod = *LM->Module;
  if (Error E = codegen::prepareModule(Mod, **TM))
    return E;
  // -O0 shows the IR as lowered; the JIT's -O0 (optimizeModule) would already inline the thread functions.
  if (OptLevel > 0)
    if (Error E = codegen::optimizeModule(Mod, **TM, CO))
      return E;
  if (Kind != HostOutput::LLVM)
    return codegen::emitMachineCode(Mod, **TM, Kind == HostOutput::Asm);
  std::string Out;
  raw_string_ostream OS(Out);
  Mod.print(OS, nullptr);
  return Out;
}

} // namespace ptxforge::tools
