// The `ptx::Module` IR: header directives, module-scope variables and functions in source order.
#pragma once

#include "ptxforge/ptx/Function.h"

#include "llvm/ADT/StringMap.h"

#include <memory>
#include <vector>

namespace ptxforge::ptx {

/// `.version major.minor`
struct PtxVersion {
  unsigned Major = 0, Minor = 0;
  unsigned value() const { return Major * 10 + Minor; } ///< 9.0 -> 90, as OpcodeTable.def writes versions
};

/// `.target sm_90a, texmode_independent, debug, map_f64_to_f32`
struct Target {
  unsigned Sm = 0; ///< 90 for sm_90
  char Suffix = 0; ///< 'a' (arch-specific), 'f' (family) or 0
  bool TexmodeIndependent = false, TexmodeUnified = false, Debug = false, MapF64ToF32 = false;
  SourceLoc Loc;
};

struct FileDirective {
  uint32_t Index = 0;
  llvm::StringRef Path;
  bool HasTimestamp = false;
  uint64_t Timestamp = 0, Size = 0;
  SourceLoc Loc;
};

/// `.section .debug_xxx { ... }`: kept verbatim, never interpreted.
struct DebugSection {
  llvm::StringRef Name;
  llvm::StringRef Body;
  SourceLoc Loc;
};

enum class TopLevelKind : uint8_t { Variable, Function, File, Section, Pragma, Alias };

/// `.alias alias, aliasee;`
struct AliasDirective {
  llvm::StringRef Alias, Aliasee;
  SourceLoc Loc;
};

struct TopLevelItem {
  TopLevelKind Kind;
  uint32_t Index;
};

/// A module's top-level items; a chunk of a module being parsed holds them too (ParseActions.h: ChunkResult).
struct ModuleItems {
  std::vector<VariableDecl> Globals;
  std::vector<std::unique_ptr<Function>> Functions;
  std::vector<FileDirective> Files;
  std::vector<DebugSection> Sections;
  std::vector<PragmaDirective> Pragmas;
  std::vector<AliasDirective> Aliases;
  std::vector<TopLevelItem> Order; ///< source order of the above, for printing
};

class Module : public ModuleItems {
public:
  Module();
  ~Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  std::string SourceName;
  PtxVersion Version;
  SourceLoc VersionLoc;
  Target Tgt;
  unsigned AddressSize = 64;
  bool HasAddressSize = false;

  StringPool &strings() { return Saver; }
  /// Keeps the allocator of a parse chunk alive (its strings are referenced by the items moved in).
  void adoptArena(std::unique_ptr<llvm::BumpPtrAllocator> A) { Arenas.push_back(std::move(A)); }

  /// Functions with a body or prototype of that name (first match).
  Function *findFunction(llvm::StringRef Name) const;
  const VariableDecl *findGlobal(llvm::StringRef Name) const;

private:
  std::vector<std::unique_ptr<llvm::BumpPtrAllocator>> Arenas;
  std::unique_ptr<llvm::BumpPtrAllocator> OwnArena;
  StringPool Saver;
};

/// A kernel keeps the `.target` of the translation unit that defined it when ptxforge's linker merges several
/// (cuLinkComplete): NVIDIA's JIT linker does, and CUB dispatches on a kernel's PTX version (cudaFuncGetAttributes'
/// ptxVersion must be one the program was compiled for). The merged module's `.target` is the newest of its
/// inputs'; each kernel whose input had another one carries it in a module-level pragma,
/// `.pragma "ptxforge.kernel_target NAME 75";`, which survives printing and parsing.
void addKernelTargetPragma(Module &M, llvm::StringRef Kernel, unsigned Sm);
/// The `.target` sm number of each kernel named by such a pragma.
llvm::StringMap<unsigned> kernelTargetPragmas(const Module &M);

} // namespace ptxforge::ptx
