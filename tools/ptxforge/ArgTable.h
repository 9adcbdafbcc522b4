// nvcc- and cuobjdump-style single-dash long flags (`-arch=sm_80`, `-lptx`) mapped to the long options CLI11
// understands (CLI11 2.1 takes only one-letter names after a single dash).
#pragma once

#include <string>
#include <vector>

namespace ptxforge::tools {

/// Rewrites argv (without argv[0]) by the table; other arguments pass through unchanged.
std::vector<std::string> mapSingleDashFlags(const std::vector<std::string> &Args);

} // namespace ptxforge::tools
