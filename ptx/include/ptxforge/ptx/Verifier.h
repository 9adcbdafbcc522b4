// Stage 3 of the pipeline: only the verifier turns a ptx::Module into a VerifiedModule. It resolves names and
// checks everything ptxas would reject, reporting each problem as a located diagnostic.
#pragma once

#include "ptxforge/ptx/Diagnostics.h"
#include "ptxforge/ptx/Module.h"

#include <memory>
#include <optional>

namespace ptxforge::ptx {

/// The highest PTX ISA version ptxforge accepts (as major*10+minor).
constexpr unsigned MaxSupportedPtxVersion = 91;

/// A module that passed verification: names resolved, every instruction legal for its `.target`/`.version`.
class VerifiedModule {
public:
  const Module &module() const { return *M; }
  /// Passes may transform the module; they must keep it valid (`--verify-each` re-checks).
  Module &module() { return *M; }
  std::unique_ptr<Module> release() { return std::move(M); }

private:
  explicit VerifiedModule(std::unique_ptr<Module> M) : M(std::move(M)) {}
  friend std::optional<VerifiedModule> verifyModule(std::unique_ptr<Module> &, DiagnosticEngine &);
  std::unique_ptr<Module> M;
};

/// Resolves and checks M; takes it on success. On errors (reported to Diags) returns nothing and leaves M.
std::optional<VerifiedModule> verifyModule(std::unique_ptr<Module> &M, DiagnosticEngine &Diags);

/// Resolves names and checks M in place, reporting problems; true when clean. verifyModule builds on it.
bool checkModule(Module &M, DiagnosticEngine &Diags);

} // namespace ptxforge::ptx
