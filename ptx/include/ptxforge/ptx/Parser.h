// Stage 2 of the pipeline: source text -> `ptx::Module`. Syntax errors and name errors become diagnostics.
#pragma once

#include "ptxforge/ptx/Diagnostics.h"
#include "ptxforge/ptx/Module.h"

#include <memory>

namespace ptxforge::ptx {

struct ParseOptions {
  /// Worker threads for parsing functions in parallel; 0 = one per core (at most the chunk count).
  unsigned Threads = 0;
};

/// Parses a whole module. Always returns a Module (possibly partial); check Diags.hasErrors().
std::unique_ptr<Module> parseModule(const SourceBuffer &Source, DiagnosticEngine &Diags,
                                    const ParseOptions &Options = {});

} // namespace ptxforge::ptx
