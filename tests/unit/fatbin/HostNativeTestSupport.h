// Helpers of the host-native tests: the bundled example compiled to CompiledObjects (once per target CPU), and
// error text for checks.
#pragma once

#include "FatbinTestSupport.h"

#include "ptxforge/codegen/CompiledObject.h"
#include "ptxforge/ptx/Frontend.h"

#include <map>
#include <memory>
#include <string>

namespace ptxforge::fatbin::test {

/// examples/saxpy.ptx (kernels saxpy and warp_sum, `.target sm_80`).
inline const std::string &saxpyPtx() {
  static const std::string Text = readText(std::string(PTXFORGE_SOURCE_DIR) + "/examples/saxpy.ptx");
  return Text;
}

/// saxpyPtx() compiled at -O2 for Cpu ("host", "x86-64-v3", ...).
inline const codegen::CompiledObject &saxpyObject(const std::string &Cpu) {
  static std::map<std::string, codegen::CompiledObject> Done;
  auto It = Done.find(Cpu);
  if (It != Done.end())
    return It->second;
  auto Front = ptx::runFrontend(std::make_unique<ptx::SourceBuffer>("saxpy.ptx", saxpyPtx()));
  REQUIRE(Front->ok());
  codegen::CompileOptions O;
  O.TargetCpu = Cpu;
  return Done.emplace(Cpu, take(codegen::compilePTXObject(*Front->Verified, Front->Source.get(), O))).first->second;
}

/// The message of E, empty for success.
inline std::string errorText(llvm::Error E) { return E ? llvm::toString(std::move(E)) : std::string(); }

} // namespace ptxforge::fatbin::test
