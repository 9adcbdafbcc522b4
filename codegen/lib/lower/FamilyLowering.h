// Private to codegen/lib/lower: what each instruction family's file (one per family, see FunctionLowering.h)
// opens with, the lowering's interface and the PTX names every family spells out.
#pragma once

#include "../FunctionLowering.h"

using namespace ptxforge;
using namespace ptxforge::codegen::detail;
using ptx::Modifier;
using ptx::Opcode;
using ptx::ScalarType;
using ptx::StateSpace;

namespace ptxforge::codegen::detail {
/// The matrix helpers' element-type code (exec/WarpCollectives.cpp ElemType, exec/WarpgroupHelpers.cpp), 0 for
/// types no matrix instruction takes.
unsigned matrixElementCode(ptx::ScalarType T);
} // namespace ptxforge::codegen::detail
