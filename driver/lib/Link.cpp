// cuLink* inputs and the one-input "link".
#include "ptxforge/driver/Link.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Status.h"

#include "ptxforge/ptx/Frontend.h"

using namespace ptxforge;
using namespace ptxforge::driver;

llvm::Error Linker::addPtx(llvm::StringRef Text, std::string Name, JitLogs &Logs) {
  Inputs.push_back({Text.take_until([](char C) { return C == 0; }).str(), std::move(Name)});
  return llvm::Error::success();
}

llvm::Error Linker::addImage(const ModuleSource &Source, JitLogs &Logs) {
  unsigned CC = Options.TargetCc.value_or(deviceProperties().computeCapability());
  auto Selected = selectPtx(Source, CC, Logs);
  if (!Selected)
    return Selected.takeError();
  if (!Selected->Empty)
    Inputs.push_back({std::move(Selected->Text), std::move(Selected->Name)});
  return llvm::Error::success();
}

llvm::Expected<llvm::StringRef> Linker::complete(JitLogs &Logs) {
  if (Inputs.empty()) {
    Logs.Error = "ptxforge: nothing to link\n";
    return makeError(Status::InvalidValue, "no inputs");
  }
  if (Inputs.size() > 1) {
    Logs.Error = "ptxforge: linking " + std::to_string(Inputs.size()) +
                 " PTX inputs into one module is not supported yet (load them as separate modules)\n";
    return makeError(Status::NotSupported, "several link inputs");
  }
  auto Front = ptx::runFrontend(std::make_unique<ptx::SourceBuffer>(Inputs[0].Name, Inputs[0].Ptx));
  if (!Front->ok()) {
    for (const ptx::Diagnostic &D : Front->Diags.sorted())
      Logs.Error += ptx::formatDiagnostic(*Front->Source, D) + "\n";
    return makeError(Status::InvalidPtx, "the PTX has errors");
  }
  Output = Inputs[0].Ptx;
  Output.push_back('\0');
  return llvm::StringRef(Output.data(), Output.size());
}
