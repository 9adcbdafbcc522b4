// Source text -> verified module, spelled out in order.
#include "ptxforge/ptx/Frontend.h"

using namespace ptxforge::ptx;

std::unique_ptr<FrontendResult> ptxforge::ptx::runFrontend(std::unique_ptr<SourceBuffer> Source,
                                                           const ParseOptions &Options) {
  auto R = std::make_unique<FrontendResult>();
  R->Source = std::move(Source);
  std::unique_ptr<Module> M = parseModule(*R->Source, R->Diags, Options);
  // A module with syntax errors is still checked, so one run reports as much as it can.
  R->Verified = verifyModule(M, R->Diags);
  if (!R->Verified)
    R->Parsed = std::move(M);
  return R;
}
