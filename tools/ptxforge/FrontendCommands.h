// Helpers shared by the front-end subcommands (parse, print, check).
#pragma once

#include "ptxforge/ptx/Frontend.h"

#include <string>

namespace ptxforge::tools {

/// Reads and runs the front end on Path; prints diagnostics to stderr. Null when the file cannot be read.
std::unique_ptr<ptx::FrontendResult> loadPtx(const std::string &Path, unsigned Threads = 0);
/// The same for text already in memory (e.g. a PTX entry taken out of a fatbin).
std::unique_ptr<ptx::FrontendResult> loadPtx(std::unique_ptr<ptx::SourceBuffer> Source, unsigned Threads = 0);

} // namespace ptxforge::tools
