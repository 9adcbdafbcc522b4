// See Passes.h: the lowering's memory-class marks become alias scopes.
//
// Before (as lowered):
//   %v = load float, ptr addrspace(1) %p, !ptxforge.access !{i32 1}           ; a .global access
//   store float %v, ptr %slot, !ptxforge.access !{i32 3}                      ; ptxforge's own memory
// After:
//   %v = load float, ptr addrspace(1) %p, !alias.scope !{!global}, !noalias !{!shared, !internal}
//   store float %v, ptr %slot, !alias.scope !{!internal}, !noalias !{!shared, !global}
#include "Passes.h"

#include "llvm/Analysis/ScopedNoAliasAA.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"

using namespace llvm;
using namespace ptxforge::codegen::passes;

namespace {
constexpr const char *AccessKind = "ptxforge.access";
constexpr const char *ReadOnlyKind = "ptxforge.readonly";
constexpr llvm::StringLiteral GlobalScopeName = "ptx.global"; // isGlobalAccess finds the scope by it
constexpr llvm::StringLiteral InternalScopeName = "ptxforge.internal";

/// Whether I's alias scopes include the one named Name (addMemoryScopes names each of its scopes).
bool inScope(const Instruction &I, StringRef Name) {
  const MDNode *Scopes = I.getMetadata(LLVMContext::MD_alias_scope);
  if (!Scopes)
    return false;
  for (const MDOperand &Op : Scopes->operands())
    if (const auto *N = dyn_cast<MDNode>(Op); N && AliasScopeNode(N).getName() == Name)
      return true;
  return false;
}

void appendScopes(Instruction &I, unsigned Kind, MDNode *Scopes) {
  I.setMetadata(Kind, MDNode::concatenate(I.getMetadata(Kind), Scopes));
}
} // namespace

void ptxforge::codegen::passes::markAccess(Instruction *I, MemoryClass C) {
  LLVMContext &Ctx = I->getContext();
  I->setMetadata(
      AccessKind,
      MDNode::get(Ctx, {ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(Ctx), static_cast<uint32_t>(C)))}));
}

MDNode *ptxforge::codegen::passes::threadAccessGroup(Module &M) {
  NamedMDNode *N = M.getOrInsertNamedMetadata("ptxforge.thread.accesses");
  if (N->getNumOperands() == 0)
    N->addOperand(MDNode::getDistinct(M.getContext(), {}));
  return N->getOperand(0);
}

void ptxforge::codegen::passes::markThreadParallel(Instruction *I) {
  I->setMetadata(LLVMContext::MD_access_group, threadAccessGroup(*I->getModule()));
}

void ptxforge::codegen::passes::markReadOnlyLoad(LoadInst *L) {
  L->setMetadata(ReadOnlyKind, MDNode::get(L->getContext(), {}));
}

bool ptxforge::codegen::passes::isGlobalAccess(const Instruction &I) { return inScope(I, GlobalScopeName); }

bool ptxforge::codegen::passes::isInternalAccess(const Instruction &I) { return inScope(I, InternalScopeName); }

void ptxforge::codegen::passes::addMemoryScopes(Module &M) {
  LLVMContext &Ctx = M.getContext();
  MDBuilder MDB(Ctx);
  // Two domains: a pair of accesses is disjoint when either says so.
  MDNode *ReadOnlyDomain = MDB.createAnonymousAliasScopeDomain("ptx.readonly");
  MDNode *SpaceDomain = MDB.createAnonymousAliasScopeDomain("ptx.space");
  MDNode *ReadOnly = MDNode::get(Ctx, {MDB.createAnonymousAliasScope(ReadOnlyDomain, "ptx.nc")});
  Metadata *Shared = MDB.createAnonymousAliasScope(SpaceDomain, "ptx.shared");
  Metadata *Global = MDB.createAnonymousAliasScope(SpaceDomain, GlobalScopeName);
  Metadata *Internal = MDB.createAnonymousAliasScope(SpaceDomain, InternalScopeName);
  // Per MemoryClass: the access's own scope (none for OtherPtx: it may be anything but ptxforge's memory) and
  // the scopes it is disjoint from.
  MDNode *Own[] = {MDNode::get(Ctx, {Shared}), MDNode::get(Ctx, {Global}), nullptr, MDNode::get(Ctx, {Internal})};
  MDNode *Others[] = {MDNode::get(Ctx, {Global, Internal}), MDNode::get(Ctx, {Shared, Internal}),
                      MDNode::get(Ctx, {Internal}), MDNode::get(Ctx, {Shared, Global})};
  bool AnyReadOnly = false;
  // Cloning a function or block for the block and region loops copies distinct metadata, access groups too:
  // every access the lowering put in the threads' group goes back to the one group the thread loops name.
  MDNode *Group = threadAccessGroup(M);
  for (Function &F : M)
    for (Instruction &I : instructions(F)) {
      if (I.hasMetadata(LLVMContext::MD_access_group))
        I.setMetadata(LLVMContext::MD_access_group, Group);
      if (MDNode *A = I.getMetadata(AccessKind)) {
        I.setMetadata(AccessKind, nullptr);
        uint64_t C = mdconst::extract<ConstantInt>(A->getOperand(0))->getZExtValue();
        if (Own[C])
          appendScopes(I, LLVMContext::MD_alias_scope, Own[C]);
        appendScopes(I, LLVMContext::MD_noalias, Others[C]);
      }
      if (I.getMetadata(ReadOnlyKind)) {
        I.setMetadata(ReadOnlyKind, nullptr);
        appendScopes(I, LLVMContext::MD_alias_scope, ReadOnly);
        AnyReadOnly = true;
      }
    }
  if (!AnyReadOnly)
    return;
  for (Function &F : M)
    for (Instruction &I : instructions(F))
      if (isa<StoreInst>(I) || isa<AtomicRMWInst>(I) || isa<AtomicCmpXchgInst>(I) || isa<AnyMemIntrinsic>(I))
        appendScopes(I, LLVMContext::MD_noalias, ReadOnly);
}

PreservedAnalyses MemoryScopesPass::run(Module &M, ModuleAnalysisManager &) {
  addMemoryScopes(M);
  return PreservedAnalyses::none();
}
