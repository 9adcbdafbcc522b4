// `ptxforge-opt`: LLVM's `opt` for ptxforge's passes. Reads LLVM IR (text or bitcode), runs the -passes pipeline
// (LLVM's passes and ptxforge's by their codegen/lib/passes/Passes.def names) for this host or -mcpu, and writes
// the result. The logic is codegen::runPassPipeline; LLVM's own options (-print-after=..., -pass-remarks-missed=...)
// are accepted as `opt` accepts them.
#include "ptxforge/codegen/CompiledObject.h"
#include "ptxforge/codegen/Optimize.h"

#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;

namespace {
cl::opt<std::string> Input(cl::Positional, cl::desc("<input .ll or .bc>"), cl::init("-"));
cl::opt<std::string> Output("o", cl::desc("output file ('-': standard output)"), cl::init("-"));
cl::opt<std::string> Passes("passes", cl::desc("the pipeline, e.g. 'function(ptxforge-unmask-full-vectors)'"),
                            cl::Required);
cl::opt<bool> Text("S", cl::desc("write LLVM IR as text (default: bitcode)"));
cl::opt<std::string> Cpu("mcpu", cl::desc("target CPU (default: this host's), e.g. x86-64-v4"), cl::init("native"));

int fail(Error E) {
  WithColor::error(errs(), "ptxforge-opt") << toString(std::move(E)) << '\n';
  return 1;
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "ptxforge-opt: run LLVM and ptxforge passes over LLVM IR\n");
  LLVMContext Context;
  SMDiagnostic Diag;
  std::unique_ptr<Module> M = parseIRFile(Input, Diag, Context);
  if (!M) {
    Diag.print("ptxforge-opt", errs());
    return 1;
  }
  ptxforge::codegen::CompileOptions CO;
  CO.TargetCpu = Cpu;
  auto TM = ptxforge::codegen::createTargetMachine(CO);
  if (!TM)
    return fail(TM.takeError());
  if (Error E = ptxforge::codegen::prepareModule(*M, **TM))
    return fail(std::move(E));
  if (Error E = ptxforge::codegen::runPassPipeline(*M, **TM, Passes))
    return fail(std::move(E));
  std::error_code EC;
  ToolOutputFile Out(Output, EC, Text ? sys::fs::OF_Text : sys::fs::OF_None);
  if (EC)
    return fail(errorCodeToError(EC));
  if (Text)
    M->print(Out.os(), nullptr);
  else
    WriteBitcodeToFile(*M, Out.os());
  Out.keep();
  return 0;
}
