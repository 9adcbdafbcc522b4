// Which device and context runtime calls use (Programming Guide, "Interoperability between Runtime and Driver
// APIs"): the context the calling thread has current, whoever made it current (cuCtxCreate, cuCtxSetCurrent),
// else the primary context of the thread's device (cudaSetDevice, default 0), which the runtime retains once
// for the process and makes current. Everything runs on libcuda.so.1's state, so both APIs see the same
// contexts, memory, streams and modules.
#pragma once

#include "ptxforge/runtime/RuntimeAbi.h"

namespace ptxforge::runtime {

/// Initialises the driver (cuInit) once; cudaErrorNoDevice when it fails.
cudaError_t initDriver();

/// The context runtime work goes to on this thread, made current when it is the primary context.
cudaError_t ensureContext(CUcontext *Out = nullptr);

/// cudaSetDevice: checks D and makes its primary context current on the calling thread.
cudaError_t setDevice(int D);
/// cudaGetDevice: the current context's device, else the thread's device.
cudaError_t getDevice(int *D);
/// A valid device ordinal (cudaErrorInvalidDevice otherwise), with the driver initialised.
cudaError_t checkDevice(int D);
/// Device D's primary context, retained by the runtime (once) and not made current.
cudaError_t primaryContext(int D, CUcontext *Out);

/// cudaDeviceReset: waits for the work, then resets the primary context of the thread's device (its modules,
/// memory, streams and events go); the next runtime call starts a fresh one.
cudaError_t resetDevice();

} // namespace ptxforge::runtime
