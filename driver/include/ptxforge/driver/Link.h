// cuLink*: collecting PTX inputs (text, files, fatbinaries) for one module. ptxforge does not link separately
// compiled device code yet, so a link of one PTX input yields that PTX as its "cubin" (which cuModuleLoadData
// accepts), and a link of several fails with NotSupported.
#pragma once

#include "ptxforge/driver/Module.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace ptxforge::driver {

class Linker {
public:
  explicit Linker(JitOptions Options) : Options(std::move(Options)) {}

  /// PTX text (up to its NUL or Size bytes).
  [[nodiscard]] llvm::Error addPtx(llvm::StringRef Text, std::string Name, JitLogs &Logs);
  /// A fatbinary, file or in-memory image: its best PTX entry for the device.
  [[nodiscard]] llvm::Error addImage(const ModuleSource &Source, JitLogs &Logs);
  /// Checks the inputs (front end diagnostics go to Logs.Error) and returns the linked image.
  [[nodiscard]] llvm::Expected<llvm::StringRef> complete(JitLogs &Logs);

  const JitOptions &options() const { return Options; }

private:
  JitOptions Options;
  struct Input {
    std::string Ptx, Name;
  };
  std::vector<Input> Inputs;
  std::string Output; ///< PTX text with its NUL, owned until the linker is destroyed
};

} // namespace ptxforge::driver
