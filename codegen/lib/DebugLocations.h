// Private to codegen/lib: the PTX file:line:col of every instruction the lowering emits, as LLVM debug locations
// (line tables only). They go through optimization and code generation into the object's DWARF line table, where
// a faulting kernel's PC finds its PTX instruction (CompiledModule::sourceLocation).
#pragma once

#include "llvm/IR/DIBuilder.h"

#include <memory>

namespace ptxforge::codegen::detail {

/// Gives M a compile unit for the PTX file FileName ("<ptx image>" for a module from memory) and returns the
/// builder the lowering makes its subprograms with; finalize() it once the functions are built.
std::unique_ptr<llvm::DIBuilder> beginDebugInfo(llvm::Module &M, llvm::StringRef FileName);

/// Attaches a subprogram for F (its PTX declaration at Line) and returns it.
llvm::DISubprogram *attachSubprogram(llvm::DIBuilder &DI, llvm::Function &F, unsigned Line);

/// Makes M's debug locations consistent after ptxforge's own IR rewrites, which build functions and calls
/// without them and move code between functions: every defined function gets a subprogram, every instruction a
/// location whose chain of inlined-at locations ends in its function (code moved from another function keeps its
/// PTX line, as if inlined at line 0), and an instruction without one gets line 0. Line 0 is what the line table
/// says for code no PTX instruction made (thread loops, dispatchers): without it, such code would take the line
/// of whatever instruction precedes it. Nothing happens in a module without a compile unit.
void repairDebugLocations(llvm::Module &M);

} // namespace ptxforge::codegen::detail
