// The arithmetic of one warp's matrix product (mma.sync, wmma.mma, exec/WarpCollectives.cpp): D = A * B + C on
// decoded matrices, each element summed in k order from C in double and rounded once by the caller. A whole
// product is one call, vectorized across a row of D where the CPU allows, so that a warp's mma costs a few
// hundred cycles instead of a scalar loop per element.
#pragma once

#include <cstdint>

namespace ptxforge::codegen::exec {

/// D = A * B + C: A row-major M x K, B row-major K x N, C and D row-major M x N (D may be C). Each D element is
/// ((C + a0 b0) + a1 b1) + ... in double, a product rounded before its sum; ExactProducts says every product is
/// exact in double (f16, bf16, tf32 and integer inputs), which lets a fused multiply-add stand for the two
/// steps. The result is the same on every host, vectorized or not.
void multiplyMatrices(unsigned M, unsigned N, unsigned K, const double *A, const double *B, const double *C, double *D,
                      bool ExactProducts);

/// Count f16 values (bit patterns) as doubles, exactly.
void halvesToDoubles(const uint16_t *In, unsigned Count, double *Out);

} // namespace ptxforge::codegen::exec
