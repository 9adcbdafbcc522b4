// The subcommands of the `ptxforge` tool. Each file <Name>Command.cpp adds one CLI11 subcommand; when it is
// the one chosen, its callback stores the work to run in `Runner` so main() owns the exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace ptxforge::tools {

/// Exit statuses shared by every subcommand: 0 success, 1 errors in the input, 2 usage errors.
enum ExitStatus : int { ExitOk = 0, ExitInputError = 1, ExitUsage = 2 };

using Runner = std::function<int()>;

void addParseCommand(CLI::App &App, Runner &Run);
void addPrintCommand(CLI::App &App, Runner &Run);
void addCheckCommand(CLI::App &App, Runner &Run);
void addObjdumpCommand(CLI::App &App, Runner &Run);
void addRunCommand(CLI::App &App, Runner &Run);
void addCompileCommand(CLI::App &App, Runner &Run);
void addCacheCommand(CLI::App &App, Runner &Run);
void addExecCommand(CLI::App &App, Runner &Run);

} // namespace ptxforge::tools
