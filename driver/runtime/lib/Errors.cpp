#include "ptxforge/runtime/Errors.h"

namespace ptxforge::runtime {

namespace {
thread_local cudaError_t LastError = cudaSuccess;

struct ErrorEntry {
  cudaError_t Code;
  const char *Name, *Text;
};
constexpr ErrorEntry Errors[] = {
#define CUDART_ERROR(Name, Value, Text) {Name, #Name, Text},
#include "ptxforge/runtime/RuntimeErrors.def"
#undef CUDART_ERROR
};

const ErrorEntry *find(cudaError_t E) {
  for (const ErrorEntry &Entry : Errors)
    if (Entry.Code == E)
      return &Entry;
  return nullptr;
}
} // namespace

cudaError_t fromDriver(CUresult R) {
  switch (R) {
  case CUDA_SUCCESS:
    return cudaSuccess;
  case CUDA_ERROR_INVALID_VALUE:
    return cudaErrorInvalidValue;
  case CUDA_ERROR_OUT_OF_MEMORY:
    return cudaErrorMemoryAllocation;
  case CUDA_ERROR_NOT_INITIALIZED:
    return cudaErrorInitializationError;
  case CUDA_ERROR_DEINITIALIZED:
    return cudaErrorCudartUnloading;
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
    return cudaErrorNoKernelImageForDevice;
  case CUDA_ERROR_INVALID_CONTEXT:
    return cudaErrorDeviceUninitialized;
  case CUDA_ERROR_NOT_FOUND:
    return cudaErrorSymbolNotFound;
  case CUDA_ERROR_INVALID_HANDLE:
    return cudaErrorInvalidResourceHandle;
  case CUDA_ERROR_LAUNCH_FAILED:
    return cudaErrorLaunchFailure;
  case CUDA_ERROR_LAUNCH_TIMEOUT:
    return cudaErrorLaunchTimeout;
  default:
    // From 100 on, the runtime's codes are the driver's numbers (cudaErrorNoDevice = CUDA_ERROR_NO_DEVICE...).
    if (find(static_cast<cudaError_t>(R)))
      return static_cast<cudaError_t>(R);
    return cudaErrorUnknown;
  }
}

const char *errorName(cudaError_t E) {
  const ErrorEntry *Entry = find(E);
  return Entry ? Entry->Name : nullptr;
}

const char *errorString(cudaError_t E) {
  const ErrorEntry *Entry = find(E);
  if (!Entry)
    return nullptr;
  if (Entry->Text)
    return Entry->Text;
  const char *Text = nullptr;
  if (cuGetErrorString(static_cast<CUresult>(E), &Text) == CUDA_SUCCESS && Text)
    return Text;
  return "unknown error";
}

cudaError_t lastError() { return LastError; }

cudaError_t takeLastError() {
  cudaError_t E = LastError;
  LastError = cudaSuccess;
  return E;
}

cudaError_t record(cudaError_t E) {
  if (E != cudaSuccess)
    LastError = E;
  return E;
}

} // namespace ptxforge::runtime
