// Per-kernel compilation (the driver's lazy module loading): a lowered module cut into parts compiled one at a
// time, so the first use of one kernel of a large module (CUB's 41) pays for that kernel only.
#pragma once

#include "ptxforge/codegen/Lowering.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace llvm {
class GlobalValue;
}

namespace ptxforge::codegen {

/// A LoweredModule cut into parts that, loaded together, behave as the whole module:
/// - the shared part defines what must exist once per loaded module: every `.global`/`.const` variable (the
///   address cuModuleGetGlobal gives is the one every kernel uses, and initialised data is initialised once)
///   and every function whose address is taken (a function pointer means the same function in every kernel);
/// - a kernel's part defines the kernel and what it reaches (a `.func` called by several kernels is compiled
///   into each, privately) and only declares what the shared part defines; CompiledModule::load with the
///   shared part's code as Imports resolves those declarations.
/// The parts live in the whole module's LLVMContext (their Context is null): build and compile them one at a
/// time, while this ModuleSplit lives.
class ModuleSplit {
public:
  explicit ModuleSplit(LoweredModule Whole);
  ~ModuleSplit();
  ModuleSplit(const ModuleSplit &) = delete;
  ModuleSplit &operator=(const ModuleSplit &) = delete;

  /// Every kernel of the module, as lowering described it (the parts' KernelInfos are copies).
  const std::vector<KernelInfo> &kernels() const { return Whole.Kernels; }
  /// False when nothing is shared (no module-scope variable, no address-taken function): no shared part.
  bool hasSharedPart() const { return !SharedRoots.empty(); }
  /// The shared part, with every module-scope variable in Globals and no kernels.
  LoweredModule sharedPart() const;
  /// The part of the kernel called Name (its KernelInfo alone in Kernels, no Globals).
  llvm::Expected<LoweredModule> kernelPart(llvm::StringRef Name) const;

private:
  using ValueSet = llvm::SmallPtrSet<const llvm::GlobalValue *, 32>;
  LoweredModule part(const ValueSet &Roots, const ValueSet &Stop) const;

  LoweredModule Whole;
  ValueSet SharedRoots;
};

} // namespace ptxforge::codegen
