// The subcommands of the `ptxforge` tool. Each file <Name>Command.cpp adds one CLI11 subcommand; when it is
// the one chosen, its callback stores the work to run in `Runner` so main() owns the exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace ptxforge::tools {

/// Exit statuses shared by every subcommand: 0 success, 1 errors in the input, 2 usage errors.
enum ExitStatus : int { ExitOk = 0, ExitInputError = 1, ExitUsage = 2 };

using Runner = std::function<int()>;

/// The options more than one subcommand takes, registered in one place.
/// The positional input files of a subcommand that needs one or more (compile, objdump).
inline CLI::Option *addInputs(CLI::App &Cmd, std::vector<std::string> &Inputs, const std::string &What) {
  return Cmd.add_option("inputs", Inputs, What)->required();
}
/// A repeatable option with one value per occurrence, so that `--opt VALUE INPUT` leaves INPUT to the
/// positional inputs (nvcc's -gencode, -I, -D, -Xptxas; cuobjdump's -xptx, -xelf).
inline CLI::Option *addRepeatedOption(CLI::App &Cmd, const std::string &Names, std::vector<std::string> &Values,
                                      const std::string &Help) {
  return Cmd.add_option(Names, Values, Help)->allow_extra_args(false);
}
/// --memcheck (`run`, `exec`): sets PTXFORGE_MEMCHECK=1 when given, which the libraries read with their other
/// settings when they start (driver::processSettings; for `exec`, in the program's process).
inline CLI::Option *addMemcheckFlag(CLI::App &Cmd) {
  return Cmd.add_flag_callback(
      "--memcheck", [] { setenv("PTXFORGE_MEMCHECK", "1", 1); },
      "check every memory access and barrier of the kernels as compute-sanitizer does (PTXFORGE_MEMCHECK=1): "
      "out-of-bounds and uninitialized accesses, shared-memory races, divergent barriers, reported on stdout");
}

void addParseCommand(CLI::App &App, Runner &Run);
void addPrintCommand(CLI::App &App, Runner &Run);
void addCheckCommand(CLI::App &App, Runner &Run);
void addObjdumpCommand(CLI::App &App, Runner &Run);
void addRunCommand(CLI::App &App, Runner &Run);
void addCompileCommand(CLI::App &App, Runner &Run);
void addCacheCommand(CLI::App &App, Runner &Run);
void addExecCommand(CLI::App &App, Runner &Run);

} // namespace ptxforge::tools
