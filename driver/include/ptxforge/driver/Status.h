// The driver core's error vocabulary. Core functions fail with a DriverError carrying a Status and a message;
// only the C shell (capi/CudaApi.cpp) turns a Status into a CUresult, so the core never sees CUresult.
#pragma once

#include "llvm/Support/Error.h"

#include <string>

namespace ptxforge::driver {

/// What went wrong, in the driver API's terms (each has one CUresult in the shell).
enum class Status {
  Success,
  InvalidValue,
  OutOfMemory,
  NotInitialized,
  NoDevice,
  InvalidDevice,
  InvalidImage,
  InvalidContext,
  ContextIsDestroyed,
  NoBinaryForGpu,
  InvalidPtx,
  UnsupportedPtxVersion,
  JitCompilationDisabled,
  FileNotFound,
  InvalidHandle,
  NotFound,
  NotReady,
  IllegalAddress,
  LaunchOutOfResources,
  LaunchFailed,
  LaunchTimeout,
  Assert,
  IllegalInstruction,
  MisalignedAddress,
  CooperativeLaunchTooLarge,
  InvalidClusterSize,
  NotSupported,
  NotPermitted,
  IllegalState,
  // Stream capture and graphs.
  StreamCaptureUnsupported,
  StreamCaptureInvalidated,
  StreamCaptureMerge,
  StreamCaptureUnmatched,
  StreamCaptureUnjoined,
  StreamCaptureIsolation,
  StreamCaptureImplicit,
  CapturedEvent,
  StreamCaptureWrongThread,
  GraphExecUpdateFailure,
  Unknown,
};

/// A failure of the driver core: a Status and a message for logs.
class DriverError : public llvm::ErrorInfo<DriverError> {
public:
  static char ID;
  DriverError(Status S, std::string Message) : S(S), Message(std::move(Message)) {}
  Status status() const { return S; }
  const std::string &text() const { return Message; }
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override;

private:
  Status S;
  std::string Message;
};

/// An Error with status S (never call it with Success).
[[nodiscard]] llvm::Error makeError(Status S, const llvm::Twine &Message = "");

/// Consumes E: Success when E holds no error, the DriverError's status, Unknown for any other error. The
/// message goes to *Message when given.
Status takeStatus(llvm::Error E, std::string *Message = nullptr);

/// "invalid value" and the like, for logs and tests.
const char *describe(Status S);

} // namespace ptxforge::driver
