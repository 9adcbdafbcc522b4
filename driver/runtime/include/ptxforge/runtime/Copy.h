// cudaMemcpy* in runtime terms: a cudaMemcpyKind says which sides are host and device memory (cudaMemcpyDefault:
// the driver looks the pointers up, unified addressing), and symbol copies are checked against the variable's
// registered size. Async copies go on the given stream, the others wait for the legacy stream's earlier work.
#pragma once

#include "ptxforge/runtime/RuntimeAbi.h"

namespace ptxforge::runtime {

/// Count bytes from Src to Dst (cudaErrorInvalidMemcpyDirection for a kind CUDA does not have).
cudaError_t copy(void *Dst, const void *Src, size_t Count, int Kind, bool Async, cudaStream_t Stream);
/// Height rows of Width bytes, DPitch and SPitch bytes apart (cudaErrorInvalidPitchValue when a row is wider).
cudaError_t copy2D(void *Dst, size_t DPitch, const void *Src, size_t SPitch, size_t Width, size_t Height, int Kind,
                   bool Async, cudaStream_t Stream);
/// To (ToSymbol) or from the registered variable Symbol at Offset: Other is the other side, Kind its direction.
cudaError_t symbolCopy(bool ToSymbol, void *Other, const void *Symbol, size_t Count, size_t Offset, int Kind,
                       bool Async, cudaStream_t Stream);

} // namespace ptxforge::runtime
