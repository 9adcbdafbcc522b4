// `ptxforge exec PROGRAM [ARGS...]`: runs an unmodified CUDA program on the CPU. The program's loader finds
// ptxforge's libcudart.so.13 and libcuda.so.1 first because the library directory leads LD_LIBRARY_PATH;
// the process is replaced (execvp), so the program's exit status is the command's.
#include "Commands.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ptxforge::tools;

namespace {

struct ExecOptions {
  std::string LibDir;
};

bool holdsLibraries(llvm::StringRef Dir) {
  for (const char *Lib : {"libcudart.so.13", "libcuda.so.1"}) {
    llvm::SmallString<256> Path(Dir);
    llvm::sys::path::append(Path, Lib);
    if (llvm::sys::fs::exists(Path))
      return true;
  }
  return false;
}

/// Where the libraries are beside this ptxforge binary: <prefix>/lib in a build tree, <prefix>/<libdir>/ptxforge
/// when installed (kept out of the loader's default path, so as not to shadow NVIDIA's libraries).
std::string defaultLibDir() {
  std::string Self = llvm::sys::fs::getMainExecutable("ptxforge", reinterpret_cast<void *>(&defaultLibDir));
  llvm::StringRef Prefix = llvm::sys::path::parent_path(llvm::sys::path::parent_path(Self));
  llvm::SmallString<256> Build(Prefix), Installed(Prefix);
  llvm::sys::path::append(Build, "lib");
  llvm::sys::path::append(Installed, PTXFORGE_INSTALL_LIBDIR);
  return std::string(holdsLibraries(Installed) && !holdsLibraries(Build) ? Installed : Build);
}

int execProgram(const ExecOptions &Options, const std::vector<std::string> &Command) {
  if (Command.empty()) {
    std::cerr << "ptxforge exec: no program given (ptxforge exec PROGRAM [ARGS...])\n";
    return ExitUsage;
  }
  std::string LibDir = Options.LibDir.empty() ? defaultLibDir() : Options.LibDir;
  if (!holdsLibraries(LibDir)) {
    std::cerr << "ptxforge exec: " << LibDir
              << " holds neither libcudart.so.13 nor libcuda.so.1 (--libdir says where)\n";
    return ExitUsage;
  }
  std::string Path = LibDir;
  if (const char *Old = std::getenv("LD_LIBRARY_PATH"); Old && *Old)
    Path += std::string(":") + Old;
  setenv("LD_LIBRARY_PATH", Path.c_str(), 1);

  std::vector<char *> Argv;
  for (const std::string &A : Command)
    Argv.push_back(const_cast<char *>(A.c_str()));
  Argv.push_back(nullptr);
  execvp(Argv[0], Argv.data());
  int Error = errno;
  std::cerr << "ptxforge exec: cannot run " << Command[0] << ": " << std::strerror(Error) << "\n";
  return Error == ENOENT ? 127 : 126; // the shell's statuses for "not found" and "not executable"
}

} // namespace

void ptxforge::tools::addExecCommand(CLI::App &App, Runner &Run) {
  auto Options = std::make_shared<ExecOptions>();
  CLI::App *Sub = App.add_subcommand(
      "exec", "Run a CUDA program (built with -cudart shared) on the CPU through ptxforge's libcudart.so.13 and "
              "libcuda.so.1: ptxforge exec PROGRAM [ARGS...]");
  Sub->add_option("--libdir", Options->LibDir,
                  "Directory holding ptxforge's libcudart.so.13 and libcuda.so.1 (default: beside ptxforge, in ../lib "
                  "or, installed, ../" PTXFORGE_INSTALL_LIBDIR ")");
  addMemcheckFlag(*Sub);
  Sub->prefix_command(); // PROGRAM and everything after it belong to the program
  Sub->callback([&Run, Sub, Options] {
    std::vector<std::string> Command = Sub->remaining();
    Run = [Options, Command] { return execProgram(*Options, Command); };
  });
}
