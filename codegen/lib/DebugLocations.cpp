// See DebugLocations.h.
#include "DebugLocations.h"

#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Module.h"

using namespace ptxforge::codegen;

std::unique_ptr<llvm::DIBuilder> detail::beginDebugInfo(llvm::Module &M, llvm::StringRef FileName) {
  auto DI = std::make_unique<llvm::DIBuilder>(M);
  llvm::DIFile *File = DI->createFile(FileName, "");
  DI->createCompileUnit(llvm::DISourceLanguageName(llvm::dwarf::DW_LANG_C), File, "ptxforge", /*isOptimized=*/true, "",
                        0, "", llvm::DICompileUnit::LineTablesOnly, 0,
                        /*SplitDebugInlining=*/true, /*DebugInfoForProfiling=*/false,
                        llvm::DICompileUnit::DebugNameTableKind::None);
  M.addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
  M.addModuleFlag(llvm::Module::Warning, "Dwarf Version", 4);
  return DI;
}

namespace {
llvm::DISubprogram *makeSubprogram(llvm::DIBuilder &DI, llvm::DIFile *File, llvm::Function &F, unsigned Line) {
  llvm::DISubprogram *SP = DI.createFunction(File, F.getName(), F.getName(), File, Line,
                                             DI.createSubroutineType(DI.getOrCreateTypeArray({})), Line,
                                             llvm::DINode::FlagZero, llvm::DISubprogram::SPFlagDefinition);
  F.setSubprogram(SP);
  return SP;
}

/// L with its outermost location inlined at Root.
llvm::DILocation *reroot(llvm::LLVMContext &C, llvm::DILocation *L, llvm::DILocation *Root) {
  llvm::DILocation *At = L->getInlinedAt() ? reroot(C, L->getInlinedAt(), Root) : Root;
  return llvm::DILocation::get(C, L->getLine(), L->getColumn(), L->getScope(), At);
}
} // namespace

llvm::DISubprogram *detail::attachSubprogram(llvm::DIBuilder &DI, llvm::Function &F, unsigned Line) {
  llvm::DICompileUnit *CU = *F.getParent()->debug_compile_units_begin();
  return makeSubprogram(DI, CU->getFile(), F, Line);
}

void detail::repairDebugLocations(llvm::Module &M) {
  if (M.debug_compile_units().empty())
    return;
  llvm::DICompileUnit *CU = *M.debug_compile_units_begin();
  llvm::DIBuilder DI(M, /*AllowUnresolved=*/false, CU);
  llvm::LLVMContext &C = M.getContext();
  for (llvm::Function &F : M) {
    if (F.isDeclaration())
      continue;
    llvm::DISubprogram *SP = F.getSubprogram();
    if (!SP) {
      SP = makeSubprogram(DI, CU->getFile(), F, 0);
      DI.finalizeSubprogram(SP);
    }
    llvm::DILocation *Root = llvm::DILocation::get(C, 0, 0, SP);
    for (llvm::BasicBlock &BB : F)
      for (llvm::Instruction &I : BB) {
        llvm::DILocation *L = I.getDebugLoc().get();
        if (!L)
          I.setDebugLoc(Root);
        else if (L->getInlinedAtScope()->getSubprogram() != SP)
          I.setDebugLoc(reroot(C, L, Root));
      }
  }
}
