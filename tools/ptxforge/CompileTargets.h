// What `ptxforge compile` compiles for (CompileTargetsCommand.cpp): host code for this CPU (--emit=llvm|asm|obj)
// and host-native fatbinary entries (--host-native, CompileHostNativeCommand.cpp). The GPU architectures nvcc's
// target flags name (-arch, -code, -gencode) are fatbin's (ptxforge/fatbin/Targets.h).
#pragma once

#include "ptxforge/fatbin/Targets.h"
#include "ptxforge/fatbin/Writer.h"
#include "ptxforge/ptx/SourceBuffer.h"
#include "ptxforge/ptx/Verifier.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ptxforge::tools {

using fatbin::Gencode;
using fatbin::GpuArch;

/// Host code `--emit` can ask for.
enum class HostOutput { LLVM, Asm, Obj };

/// `llvm`, `asm`, `obj`; nothing for other values.
std::optional<HostOutput> parseHostOutput(llvm::StringRef Emit);
/// What the output holds, for -v: "LLVM IR", "host assembly", "host object file".
const char *hostOutputName(HostOutput Kind);

/// Host code for M: the lowered module (lowerToLLVM) for this CPU's target triple and data layout, after LLVM's
/// -O<OptLevel> pipeline when OptLevel > 0, as LLVM IR text, assembly or an ELF/Mach-O object file. Errors:
/// instructions the lowering does not support, and IR that fails LLVM's verifier (a ptxforge bug).
llvm::Expected<std::string> emitHostCode(const ptx::VerifiedModule &M, const ptx::SourceBuffer &Source, HostOutput Kind,
                                         unsigned OptLevel);

/// The host target triple emitHostCode compiles for (for -v).
std::string hostTargetTriple();

/// `--host-native=x86-64-v3,x86-64-v4|native`: the x86-64 ISA levels host-native entries are built for, in the
/// order given, duplicates dropped; `native` is the highest level this CPU runs. Errors are usage errors.
llvm::Expected<std::vector<std::string>> parseHostNativeLevels(llvm::StringRef Value);

/// Adds host-native entries to fatbinaries (CompileHostNativeCommand.cpp). Payloads are kept by PTX text and ISA
/// level, so sm_80 and sm_86 from one compute_80 PTX, or one PTX entry for several levels' repeats, compile once.
class HostNativeCompiler {
public:
  HostNativeCompiler(unsigned OptLevel, fatbin::Compression Compress, bool Verbose)
      : OptLevel(OptLevel), Compress(Compress), Verbose(Verbose) {}

  /// Compiles PtxText (From names it in diagnostics) for Level at -O<OptLevel> into a serialized
  /// codegen::CompiledObject and adds it to W as host code for compute capability Arch.
  llvm::Error add(fatbin::FatbinWriter &W, llvm::StringRef PtxText, llvm::StringRef From, uint32_t Arch,
                  llvm::StringRef Level);

private:
  unsigned OptLevel;
  fatbin::Compression Compress;
  bool Verbose;
  std::map<std::string, std::string> Done;
};

} // namespace ptxforge::tools
