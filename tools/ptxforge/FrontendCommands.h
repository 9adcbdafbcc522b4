// Helpers shared by the front-end subcommands (parse, print, check).
#pragma once

#include "ptxforge/ptx/Frontend.h"

#include <string>

namespace ptxforge::tools {

/// Reads and runs the front end on Path; prints diagnostics to stderr. Null when the file cannot be read.
std::unique_ptr<ptx::FrontendResult> loadPtx(const std::string &Path, unsigned Threads = 0);

} // namespace ptxforge::tools
