// What `ptxforge compile` compiles for (CompileTargetsCommand.cpp): the GPU architectures nvcc's target flags name
// (-arch, -code, -gencode), host code for this CPU (--emit=llvm|asm|obj), and host-native fatbinary entries
// (--host-native, CompileHostNativeCommand.cpp).
#pragma once

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

/// The architectures nvcc 13 accepts (`nvcc --list-gpu-arch`).
constexpr unsigned SupportedArchs[] = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};

/// One architecture as nvcc spells it: compute_90 (virtual, PTX) or sm_90a (real, SASS).
struct GpuArch {
  unsigned Number = 0;
  char Suffix = 0; ///< 'a' (arch-specific), 'f' (family-specific) or 0
  bool Virtual = false;

  std::string name() const {
    return (Virtual ? "compute_" : "sm_") + std::to_string(Number) + (Suffix ? std::string(1, Suffix) : "");
  }
  GpuArch virtualArch() const { return {Number, Suffix, true}; }
  unsigned major() const { return Number / 10; }
  bool sameTarget(const GpuArch &O) const { return Number == O.Number && Suffix == O.Suffix; }
  /// The target bits of a fatbinary entry built for this architecture.
  uint64_t entryFlags() const;
};

/// One `-gencode arch=compute_XX,code=[...]`, after -arch's shorthands are expanded.
struct Gencode {
  GpuArch Arch;               ///< virtual: what the module must be valid for
  std::vector<GpuArch> Codes; ///< what the fatbinary should hold
  /// From -arch=all or all-major: an architecture the module cannot be compiled for is skipped with a
  /// warning instead of failing the compilation.
  bool FromAll = false;

  std::string spelling() const;
};

/// `-gencode arch=compute_75,code=[sm_75,compute_75]` (also `code=sm_75,compute_75`, quoted, or with the keys in
/// the other order). Errors are nvcc's usage errors.
llvm::Expected<Gencode> parseGencode(llvm::StringRef Value);

/// -arch (with -code) as gencodes: sm_XX alone is arch=compute_XX,code=[sm_XX,compute_XX], compute_XX alone PTX
/// only; all, all-major and native as nvcc expands them. Empty when Arch is.
llvm::Expected<std::vector<Gencode>> archGencodes(llvm::StringRef Arch, llvm::StringRef Code);

/// The compute capability of the device ptxforge emulates: PTXFORGE_DEVICE_CC ("9.0" or "90"), else 9.0.
llvm::Expected<unsigned> deviceComputeCapability();

/// Host code `--emit` can ask for.
enum class HostOutput { LLVM, Asm, Obj };

/// `llvm`, `asm`, `obj`; nothing for other values.
std::optional<HostOutput> parseHostOutput(llvm::StringRef Emit);
/// What the output holds, for -v: "LLVM IR", "host assembly", "host object file".
const char *hostOutputName(HostOutput Kind);

/// Host code for M: the lowered module (lowerToLLVM) for this CPU's target triple and data layout, after LLVM's
/// -O<OptLevel> pipeline when OptLevel > 0, as LLVM IR text, assembly or an ELF/Mach-O object file. Errors:
/// instructions the lowering does not support, and IR that fails LLVM's verifier (a ptxforge bug).
llvm::Expected<std::string> emitHostCode(const ptx::VerifiedModule &M, const ptx::SourceBuffer &Source,
                                         HostOutput Kind, unsigned OptLevel);

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
