// The runtime's error vocabulary: CUresults of the driver calls it makes become cudaError codes (CUDA 13's
// numbering), and each calling thread keeps the last error a runtime call returned (cudaGetLastError).
#pragma once

#include "ptxforge/runtime/RuntimeAbi.h"

namespace ptxforge::runtime {

/// The runtime code NVIDIA's cudart returns for a driver result.
cudaError_t fromDriver(CUresult R);

/// "cudaErrorInvalidValue", or null for a code CUDA 13 does not have.
const char *errorName(cudaError_t E);
/// "invalid argument", or null for a code CUDA 13 does not have.
const char *errorString(cudaError_t E);

/// The calling thread's last error: set by every failing runtime call, read and cleared by cudaGetLastError.
/// A sticky error (a faulted kernel poisons the process) keeps coming back from the calls themselves.
cudaError_t lastError();
cudaError_t takeLastError();
/// Records E as the last error when it is one, and returns it (for `return record(...)` in entry points).
cudaError_t record(cudaError_t E);

} // namespace ptxforge::runtime
