// `ptxforge parse FILE...`: parse and verify; diagnostics on stderr; 0 clean, 1 errors.
#include "Commands.h"
#include "FrontendCommands.h"

#include "llvm/Support/raw_ostream.h"

using namespace ptxforge;
using namespace ptxforge::tools;

std::unique_ptr<ptx::FrontendResult> ptxforge::tools::loadPtx(const std::string &Path, unsigned Threads) {
  auto Source = ptx::SourceBuffer::fromFile(Path);
  if (!Source) {
    llvm::errs() << "ptxforge: error: " << llvm::toString(Source.takeError()) << '\n';
    return nullptr;
  }
  ptx::ParseOptions Options;
  Options.Threads = Threads;
  auto R = ptx::runFrontend(std::move(*Source), Options);
  R->Diags.print(*R->Source, llvm::errs());
  return R;
}

void ptxforge::tools::addParseCommand(CLI::App &App, Runner &Run) {
  auto *Cmd = App.add_subcommand("parse", "Parse and verify PTX files; print diagnostics (exit 1 on errors)");
  auto Files = std::make_shared<std::vector<std::string>>();
  auto Threads = std::make_shared<unsigned>(0);
  Cmd->add_option("files", *Files, "PTX files ('-' for standard input)")->required();
  Cmd->add_option("-j,--threads", *Threads, "parser threads (default: one per core)");
  Cmd->callback([&Run, Files, Threads] {
    Run = [Files, Threads] {
      int Status = ExitOk;
      for (const std::string &F : *Files) {
        auto R = loadPtx(F, *Threads);
        if (!R || !R->ok())
          Status = ExitInputError;
      }
      return Status;
    };
  });
}
