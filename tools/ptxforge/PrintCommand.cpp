// `ptxforge print FILE`: the IR printed back as PTX (after verification).
#include "Commands.h"
#include "FrontendCommands.h"

#include "ptxforge/ptx/Printer.h"

#include "llvm/Support/raw_ostream.h"

using namespace ptxforge;
using namespace ptxforge::tools;

void ptxforge::tools::addPrintCommand(CLI::App &App, Runner &Run) {
  auto *Cmd = App.add_subcommand("print", "Parse, verify and print the module back as PTX");
  auto File = std::make_shared<std::string>();
  auto Output = std::make_shared<std::string>("-");
  Cmd->add_option("file", *File, "PTX file ('-' for standard input)")->required();
  Cmd->add_option("-o,--output", *Output, "output file (default: standard output)");
  Cmd->callback([&Run, File, Output] {
    Run = [File, Output] {
      auto R = loadPtx(*File);
      if (!R || !R->ok())
        return int(ExitInputError);
      std::error_code EC;
      llvm::raw_fd_ostream OS(*Output, EC);
      if (EC) {
        llvm::errs() << "ptxforge: error: cannot write '" << *Output << "': " << EC.message() << '\n';
        return int(ExitInputError);
      }
      ptx::printModule(*R->module(), OS);
      return int(ExitOk);
    };
  });
}
