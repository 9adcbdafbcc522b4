// DriverError and the Status descriptions.
#include "ptxforge/driver/Status.h"

using namespace ptxforge::driver;

char DriverError::ID = 0;

void DriverError::log(llvm::raw_ostream &OS) const {
  OS << describe(S);
  if (!Message.empty())
    OS << ": " << Message;
}

std::error_code DriverError::convertToErrorCode() const { return llvm::inconvertibleErrorCode(); }

llvm::Error ptxforge::driver::makeError(Status S, const llvm::Twine &Message) {
  return llvm::make_error<DriverError>(S, Message.str());
}

Status ptxforge::driver::takeStatus(llvm::Error E, std::string *Message) {
  if (!E)
    return Status::Success;
  Status Result = Status::Unknown;
  llvm::handleAllErrors(
      std::move(E),
      [&](const DriverError &D) {
        Result = D.status();
        if (Message)
          *Message = D.text();
      },
      [&](const llvm::ErrorInfoBase &Other) {
        if (Message)
          *Message = Other.message();
      });
  return Result;
}

const char *ptxforge::driver::describe(Status S) {
  switch (S) {
  case Status::Success:
    return "success";
  case Status::InvalidValue:
    return "invalid value";
  case Status::OutOfMemory:
    return "out of memory";
  case Status::NotInitialized:
    return "not initialized";
  case Status::NoDevice:
    return "no device";
  case Status::InvalidDevice:
    return "invalid device";
  case Status::InvalidImage:
    return "invalid image";
  case Status::InvalidContext:
    return "invalid context";
  case Status::ContextIsDestroyed:
    return "context is destroyed";
  case Status::NoBinaryForGpu:
    return "no binary for the device";
  case Status::InvalidPtx:
    return "invalid PTX";
  case Status::UnsupportedPtxVersion:
    return "unsupported PTX version";
  case Status::JitCompilationDisabled:
    return "PTX JIT compilation disabled";
  case Status::FileNotFound:
    return "file not found";
  case Status::InvalidHandle:
    return "invalid handle";
  case Status::NotFound:
    return "not found";
  case Status::NotReady:
    return "not ready";
  case Status::IllegalAddress:
    return "illegal address";
  case Status::LaunchOutOfResources:
    return "launch out of resources";
  case Status::LaunchFailed:
    return "launch failed";
  case Status::LaunchTimeout:
    return "launch timed out";
  case Status::Assert:
    return "device-side assert";
  case Status::IllegalInstruction:
    return "illegal instruction";
  case Status::MisalignedAddress:
    return "misaligned address";
  case Status::CooperativeLaunchTooLarge:
    return "cooperative launch too large";
  case Status::InvalidClusterSize:
    return "invalid cluster size";
  case Status::NotSupported:
    return "not supported";
  case Status::NotPermitted:
    return "not permitted";
  case Status::IllegalState:
    return "illegal state";
  case Status::StreamCaptureUnsupported:
    return "operation not permitted when stream is capturing";
  case Status::StreamCaptureInvalidated:
    return "capture was invalidated";
  case Status::StreamCaptureMerge:
    return "would merge two independent captures";
  case Status::StreamCaptureUnmatched:
    return "capture was not begun in this stream";
  case Status::StreamCaptureUnjoined:
    return "a forked stream was not joined back";
  case Status::StreamCaptureIsolation:
    return "a dependency outside the capture";
  case Status::StreamCaptureImplicit:
    return "implicit dependency on a capturing stream";
  case Status::CapturedEvent:
    return "the event was last recorded in a capturing stream";
  case Status::StreamCaptureWrongThread:
    return "the capture was begun in another thread";
  case Status::GraphExecUpdateFailure:
    return "the graph update was not performed";
  case Status::Unknown:
    return "unknown error";
  }
  return "unknown error";
}
