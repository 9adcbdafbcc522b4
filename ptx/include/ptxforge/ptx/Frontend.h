// The front half of the pipeline in one call: source text -> parse -> verify, with diagnostics collected.
#pragma once

#include "ptxforge/ptx/Parser.h"
#include "ptxforge/ptx/Verifier.h"

namespace ptxforge::ptx {

struct FrontendResult {
  std::unique_ptr<SourceBuffer> Source;
  DiagnosticEngine Diags;
  std::unique_ptr<Module> Parsed;         ///< set when verification failed (for partial reports)
  std::optional<VerifiedModule> Verified; ///< set when the module is clean

  bool ok() const { return Verified.has_value(); }
  const Module *module() const { return Verified ? &Verified->module() : Parsed.get(); }
};

/// Parses and verifies Source (always returns a result; failures are in Diags).
std::unique_ptr<FrontendResult> runFrontend(std::unique_ptr<SourceBuffer> Source, const ParseOptions &Options = {});

} // namespace ptxforge::ptx
