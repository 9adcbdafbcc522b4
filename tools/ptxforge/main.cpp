// `ptxforge`: the command-line driver. Subcommands live in <Name>Command.cpp; this file wires them up and owns
// the exit status (0 ok, 1 input errors, 2 usage errors).
#include "ArgTable.h"
#include "Commands.h"

#include "ptxforge/driver/Settings.h"
#include "ptxforge/ptx/Verifier.h"

#include "llvm/Config/llvm-config.h"

#include <iostream>

using namespace ptxforge::tools;

int main(int argc, char **argv) {
  CLI::App App{"ptxforge: run CUDA kernels on CPUs from their PTX", "ptxforge"};
  // The library's ptxforge::version() and PTXFORGE_VERSION_STRING carry the same project version.
  App.set_version_flag("--version", std::string("ptxforge ") + PTXFORGE_VERSION + " (PTX ISA up to " +
                                        std::to_string(ptxforge::ptx::MaxSupportedPtxVersion / 10) + "." +
                                        std::to_string(ptxforge::ptx::MaxSupportedPtxVersion % 10) + ", LLVM " +
                                        LLVM_VERSION_STRING + ")");
  App.require_subcommand(1);
  Runner Run;
  addParseCommand(App, Run);
  addPrintCommand(App, Run);
  addCheckCommand(App, Run);
  addObjdumpCommand(App, Run);
  addRunCommand(App, Run);
  addCompileCommand(App, Run);
  addCacheCommand(App, Run);
  addExecCommand(App, Run);

  std::vector<std::string> Args(argv + 1, argv + argc);
  if (Args.empty() || Args.front() != "exec") // `exec` hands its arguments to the program untouched
    Args = mapSingleDashFlags(Args);
  std::reverse(Args.begin(), Args.end()); // CLI11 parses a reversed vector
  try {
    App.parse(Args);
  } catch (const CLI::CallForHelp &E) {
    return App.exit(E) == 0 ? ExitOk : ExitUsage;
  } catch (const CLI::CallForAllHelp &E) {
    return App.exit(E) == 0 ? ExitOk : ExitUsage;
  } catch (const CLI::CallForVersion &E) {
    App.exit(E);
    return ExitOk;
  } catch (const CLI::ParseError &E) {
    App.exit(E);
    return ExitUsage;
  }
  // The environment's codegen settings (PTXFORGE_JIT_CPU, ...), read here once, at the CLI's edge; commands take
  // their options from them.
  (void)ptxforge::driver::processSettings();
  return Run ? Run() : ExitUsage;
}
