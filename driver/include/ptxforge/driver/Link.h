// cuLink*: linking PTX inputs (text, files, fatbinaries) into one module. Each input is parsed and verified
// when it is added (errors surface at cuLinkAddData, as with NVIDIA's driver); cuLinkComplete merges the
// verified modules at the IR level — `.extern` functions and variables resolve against the other inputs'
// `.visible`/`.weak` definitions, internal names that would collide are renamed — and prints the result as one
// PTX module, the "cubin" that cuModuleLoadData then accepts.
#pragma once

#include "ptxforge/driver/Module.h"

#include "ptxforge/ptx/Frontend.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace ptxforge::driver {

/// One verified link input and the name the log calls it by.
struct LinkInput {
  std::unique_ptr<ptx::FrontendResult> Front;
  std::string Name;
};

/// Links verified PTX modules into the text of one module. Unresolved references and multiple definitions
/// fail with Status::Unknown (what NVIDIA's cuLinkComplete returns for them), each named in Log as nvlink
/// words it. The inputs' modules are consumed (their functions move into the result).
[[nodiscard]] llvm::Expected<std::string> linkPtxModules(std::vector<LinkInput> &Inputs, std::string &Log);

/// The functions M uses (calls, takes the address of) that have no body in M and that the device library
/// does not provide. A module loaded whole (cuModuleLoadData) cannot resolve them: ptxas fails with
/// "Unresolved extern function". (An `.extern` variable without a definition only gets ptxas's warning and
/// becomes a definition: ptxforge's lowering defines every variable it declares.)
std::vector<std::string> unresolvedExternFunctions(const ptx::Module &M);

class Linker {
public:
  explicit Linker(JitOptions Options) : Options(std::move(Options)) {}

  /// PTX text (up to its NUL or Size bytes); malformed PTX fails here with InvalidPtx, diagnostics in Logs.
  [[nodiscard]] llvm::Error addPtx(llvm::StringRef Text, std::string Name, JitLogs &Logs);
  /// A fatbinary, file or in-memory image: its best PTX entry for the device, called Name in the log (the
  /// entry's own name when Name is empty). Why an image has nothing to add is appended to the log after Name.
  [[nodiscard]] llvm::Error addImage(const ModuleSource &Source, std::string Name, JitLogs &Logs);
  /// An NVIDIA cubin (Bytes, or the file Source names): NoBinaryForGpu (SASS cannot run here), InvalidImage
  /// when it is no ELF file at all.
  [[nodiscard]] llvm::Error addCubin(const ModuleSource &Source, llvm::StringRef Bytes, JitLogs &Logs);
  /// Links the inputs and returns the linked image (valid until the linker is destroyed).
  [[nodiscard]] llvm::Expected<llvm::StringRef> complete(JitLogs &Logs);

  const JitOptions &options() const { return Options; }

private:
  JitOptions Options;
  std::vector<LinkInput> Inputs;
  std::string Output; ///< PTX text with its NUL, owned until the linker is destroyed
};

} // namespace ptxforge::driver
