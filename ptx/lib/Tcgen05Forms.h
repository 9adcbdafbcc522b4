// The tcgen05 forms the PTX ISA defines, beyond the opcode table's modifier list (which tcgen05 shares across all
// its operations): the pairings of modifiers each operation requires or forbids.
#pragma once

#include "ptxforge/ptx/Instruction.h"

#include <string>

namespace ptxforge::ptx {

/// Why the tcgen05 instruction I is not a form the ISA defines ("" when it is), for the operations whose forms the
/// verifier checks: shift, cp, ld (.red), mma.ws and mma's block scaling.
std::string tcgen05FormError(const Instruction &I);

} // namespace ptxforge::ptx
