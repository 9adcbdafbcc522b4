// libFuzzer target: any bytes through parse + verify + print must give diagnostics, never a crash or a hang.
#include "ptxforge/ptx/Frontend.h"
#include "ptxforge/ptx/Printer.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

using namespace ptxforge::ptx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  auto Source = std::make_unique<SourceBuffer>("fuzz.ptx", std::string(reinterpret_cast<const char *>(Data), Size));
  ParseOptions Options;
  Options.Threads = 1;
  auto R = runFrontend(std::move(Source), Options);
  std::string Sink;
  llvm::raw_string_ostream OS(Sink);
  R->Diags.print(*R->Source, OS);
  if (R->ok()) {
    // A verified module must print, and the print must parse cleanly again.
    std::string Printed;
    llvm::raw_string_ostream POS(Printed);
    printModule(*R->module(), POS);
    auto Again = runFrontend(std::make_unique<SourceBuffer>("printed.ptx", Printed), Options);
    if (!Again->ok()) {
      Again->Diags.print(*Again->Source, llvm::errs());
      __builtin_trap();
    }
  }
  return 0;
}
