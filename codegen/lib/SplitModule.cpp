// Cutting a lowered module into a shared part and per-kernel parts: which definitions each part needs is the
// closure of its roots over references (calls, taken addresses, initializers), and CloneModule keeps those
// definitions and turns every other global into a declaration.
#include "ptxforge/codegen/SplitModule.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

using namespace ptxforge;
using namespace ptxforge::codegen;

namespace {

/// The global values V's definition refers to, also through constant expressions and aggregates.
void addReferences(const llvm::GlobalValue &V, llvm::SmallVectorImpl<const llvm::GlobalValue *> &Out) {
  llvm::SmallVector<const llvm::Constant *, 16> Work;
  llvm::SmallPtrSet<const llvm::Constant *, 16> Seen;
  auto visit = [&](const llvm::Value *Op) {
    if (const auto *G = llvm::dyn_cast<llvm::GlobalValue>(Op))
      Out.push_back(G);
    else if (const auto *C = llvm::dyn_cast<llvm::Constant>(Op); C && Seen.insert(C).second)
      Work.push_back(C);
  };
  if (const auto *F = llvm::dyn_cast<llvm::Function>(&V)) {
    for (const llvm::BasicBlock &BB : *F)
      for (const llvm::Instruction &I : BB)
        for (const llvm::Use &U : I.operands())
          visit(U.get());
  } else if (const auto *GV = llvm::dyn_cast<llvm::GlobalVariable>(&V); GV && GV->hasInitializer()) {
    visit(GV->getInitializer());
  }
  while (!Work.empty())
    for (const llvm::Use &U : Work.pop_back_val()->operands())
      visit(U.get());
}

} // namespace

ModuleSplit::ModuleSplit(LoweredModule W) : Whole(std::move(W)) {
  for (const llvm::GlobalVariable &G : Whole.Module->globals())
    if (!G.isDeclaration() && !G.hasLocalLinkage())
      SharedRoots.insert(&G);
  for (const llvm::Function &F : *Whole.Module)
    if (!F.isDeclaration() && F.hasAddressTaken())
      SharedRoots.insert(&F);
}

ModuleSplit::~ModuleSplit() = default;

LoweredModule ModuleSplit::part(const ValueSet &Roots, const ValueSet &Stop) const {
  ValueSet Defined;
  llvm::SmallVector<const llvm::GlobalValue *, 32> Work;
  for (const llvm::GlobalValue *R : Roots)
    if (!Stop.contains(R))
      Work.push_back(R);
  while (!Work.empty()) {
    const llvm::GlobalValue *V = Work.pop_back_val();
    if (V->isDeclaration() || Stop.contains(V) || !Defined.insert(V).second)
      continue;
    addReferences(*V, Work);
  }
  llvm::ValueToValueMapTy VMap;
  std::unique_ptr<llvm::Module> Part =
      llvm::CloneModule(*Whole.Module, VMap, [&](const llvm::GlobalValue *V) { return Defined.contains(V); });
  // What only this part defines is private to it: a `.func` compiled into several kernels' parts must not
  // clash when they are loaded next to each other, and being internal lets LLVM inline and drop it.
  for (const llvm::GlobalValue *V : Defined)
    if (!Roots.contains(V)) {
      llvm::Value *Copy = VMap[V];
      llvm::cast<llvm::GlobalValue>(Copy)->setLinkage(llvm::GlobalValue::InternalLinkage);
    }
  // Declarations nothing in the part uses (every other kernel's functions) would only slow its compilation.
  for (llvm::Function &F : llvm::make_early_inc_range(*Part))
    if (F.isDeclaration() && F.use_empty())
      F.eraseFromParent();
  for (llvm::GlobalVariable &G : llvm::make_early_inc_range(Part->globals()))
    if (G.isDeclaration() && G.use_empty())
      G.eraseFromParent();
  LoweredModule Out;
  Out.Module = std::move(Part);
  return Out;
}

LoweredModule ModuleSplit::sharedPart() const {
  LoweredModule Out = part(SharedRoots, {});
  Out.Globals = Whole.Globals;
  return Out;
}

llvm::Expected<LoweredModule> ModuleSplit::kernelPart(llvm::StringRef Name) const {
  for (const KernelInfo &K : Whole.Kernels) {
    if (K.Name != Name)
      continue;
    ValueSet Roots;
    for (const std::string &Symbol : {K.Symbol, K.BlockSymbol})
      if (const llvm::Function *F = Symbol.empty() ? nullptr : Whole.Module->getFunction(Symbol))
        Roots.insert(F);
    LoweredModule Out = part(Roots, SharedRoots);
    Out.Kernels.push_back(K);
    return Out;
  }
  return llvm::createStringError(std::errc::invalid_argument, "the module has no kernel '%s'", Name.str().c_str());
}
