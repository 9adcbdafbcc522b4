// Writes a ptx::Module back as PTX text that ptxas accepts; printing is a fixed point (print . parse . print
// == print).
#pragma once

#include "ptxforge/ptx/Module.h"

#include "llvm/Support/raw_ostream.h"

namespace ptxforge::ptx {

void printModule(const Module &M, llvm::raw_ostream &OS);
void printInstruction(const Function &F, const Instruction &I, llvm::raw_ostream &OS);
/// `add.rn.f32` (opcode and qualifiers, no operands).
std::string instructionName(const Instruction &I);

} // namespace ptxforge::ptx
