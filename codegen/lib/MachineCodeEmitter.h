// Private to codegen/lib: the code generator behind emitMachineCode and compileObject.
#pragma once

#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>

namespace ptxforge::codegen::detail {

/// The code generator of one TargetMachine. A module with a function that optimizeModule left unoptimized (past
/// CompileOptions::FunctionSizeBudget) is past the optimizing code generator's budget too, and gets -O0 code
/// generation from a twin of TM, made at the first such module and kept beside TM for the next ones.
class MachineCodeEmitter {
public:
  explicit MachineCodeEmitter(llvm::TargetMachine &TM) : TM(TM) {}
  /// M compiled: an object file, or with Assembly its assembly listing.
  llvm::Expected<std::string> emit(llvm::Module &M, bool Assembly);

private:
  /// TM, or for a module with an unoptimized function its -O0 twin.
  llvm::Expected<llvm::TargetMachine &> emitterFor(const llvm::Module &M);

  llvm::TargetMachine &TM;
  std::unique_ptr<llvm::TargetMachine> Unoptimized;
};

} // namespace ptxforge::codegen::detail
