// The API's error vocabulary: names of codes and severities, diagnostic formatting, the mapping from the
// core's errors (driver::Status, codegen::LaunchFault) to ErrorCode, and the version functions.
#include "ApiImpl.h"

#include "ptxforge/codegen/Launch.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Status.h"
#include "ptxforge/ptx/Architectures.h"
#include "ptxforge/ptx/Requirements.h"
#include "ptxforge/ptx/Verifier.h"

using namespace ptxforge;

const char *ptxforge::describe(Severity S) { return ptx::severityName(toPtxSeverity(S)); }

std::string Diagnostic::toString() const {
  std::string Where = File;
  if (Line)
    Where += ":" + std::to_string(Line) + ":" + std::to_string(Column);
  return Where + ": " + ptxforge::describe(Level) + ": " + Message;
}

std::string Diagnostic::format() const {
  std::string Out = toString();
  if (!Line || SourceLine.empty())
    return Out;
  Out += "\n" + SourceLine + "\n";
  // Tabs stay tabs so the caret lines up under the same column in a terminal.
  for (size_t I = 0; I + 1 < Column && I < SourceLine.size(); ++I)
    Out += SourceLine[I] == '\t' ? '\t' : ' ';
  return Out + "^";
}

std::string ptxforge::formatDiagnostics(const std::vector<Diagnostic> &Diags) {
  std::string Out;
  for (const Diagnostic &D : Diags)
    Out += D.format() + "\n";
  return Out;
}

const char *ptxforge::describe(ErrorCode Code) {
  switch (Code) {
  case ErrorCode::Success:
    return "success";
  case ErrorCode::InvalidArgument:
    return "invalid argument";
  case ErrorCode::FileError:
    return "file error";
  case ErrorCode::InvalidPtx:
    return "invalid PTX";
  case ErrorCode::UnsupportedPtxVersion:
    return "unsupported PTX version";
  case ErrorCode::UnsupportedTarget:
    return "unsupported target";
  case ErrorCode::CompileFailed:
    return "compilation failed";
  case ErrorCode::NotFound:
    return "not found";
  case ErrorCode::OutOfMemory:
    return "out of memory";
  case ErrorCode::InvalidLaunch:
    return "invalid launch configuration";
  case ErrorCode::IllegalAddress:
    return "illegal address";
  case ErrorCode::MisalignedAddress:
    return "misaligned address";
  case ErrorCode::IllegalInstruction:
    return "illegal instruction";
  case ErrorCode::Trap:
    return "trap";
  case ErrorCode::Assert:
    return "device-side assert failed";
  case ErrorCode::Deadlock:
    return "deadlock";
  case ErrorCode::NotSupported:
    return "not supported";
  case ErrorCode::Internal:
    return "internal error";
  }
  return "unknown error";
}

std::string Error::toString() const {
  std::string Out = std::string(ptxforge::describe(Code)) + ": " + Message;
  if (!Diags.empty())
    Out += "\n" + formatDiagnostics(Diags);
  return Out;
}

namespace {

ErrorCode fromStatus(driver::Status S) {
  using driver::Status;
  switch (S) {
  case Status::Success:
    return ErrorCode::Success;
  case Status::InvalidValue:
  case Status::InvalidHandle:
  case Status::InvalidContext:
  case Status::ContextIsDestroyed:
  case Status::InvalidDevice:
    return ErrorCode::InvalidArgument;
  case Status::OutOfMemory:
    return ErrorCode::OutOfMemory;
  case Status::InvalidImage:
  case Status::InvalidPtx:
    return ErrorCode::InvalidPtx;
  case Status::UnsupportedPtxVersion:
    return ErrorCode::UnsupportedPtxVersion;
  case Status::NoBinaryForGpu:
    return ErrorCode::UnsupportedTarget;
  case Status::FileNotFound:
    return ErrorCode::FileError;
  case Status::NotFound:
    return ErrorCode::NotFound;
  case Status::IllegalAddress:
    return ErrorCode::IllegalAddress;
  case Status::MisalignedAddress:
    return ErrorCode::MisalignedAddress;
  case Status::IllegalInstruction:
    return ErrorCode::IllegalInstruction;
  case Status::Assert:
    return ErrorCode::Assert;
  case Status::LaunchOutOfResources:
  case Status::CooperativeLaunchTooLarge:
  case Status::InvalidClusterSize:
    return ErrorCode::InvalidLaunch;
  case Status::NotSupported:
  case Status::JitCompilationDisabled:
  case Status::NotPermitted:
    return ErrorCode::NotSupported;
  case Status::LaunchFailed:
  case Status::LaunchTimeout:
    return ErrorCode::Trap;
  case Status::NoDevice:
  case Status::NotInitialized:
  case Status::NotReady:
  case Status::Unknown:
  // Stream capture and graphs, which this API does not offer: reaching one is a bug.
  case Status::IllegalState:
  case Status::StreamCaptureUnsupported:
  case Status::StreamCaptureInvalidated:
  case Status::StreamCaptureMerge:
  case Status::StreamCaptureUnmatched:
  case Status::StreamCaptureUnjoined:
  case Status::StreamCaptureIsolation:
  case Status::StreamCaptureImplicit:
  case Status::CapturedEvent:
  case Status::StreamCaptureWrongThread:
  case Status::GraphExecUpdateFailure:
    return ErrorCode::Internal;
  }
  return ErrorCode::Internal;
}

ErrorCode fromLaunchFault(codegen::LaunchFault F) {
  switch (F) {
  case codegen::LaunchFault::InvalidConfiguration:
    return ErrorCode::InvalidLaunch;
  case codegen::LaunchFault::IllegalAddress:
    return ErrorCode::IllegalAddress;
  case codegen::LaunchFault::MisalignedAddress:
    return ErrorCode::MisalignedAddress;
  case codegen::LaunchFault::Trap:
    return ErrorCode::Trap;
  case codegen::LaunchFault::Deadlock:
    return ErrorCode::Deadlock;
  case codegen::LaunchFault::IllegalInstruction:
    return ErrorCode::IllegalInstruction;
  case codegen::LaunchFault::Assert:
    return ErrorCode::Assert;
  case codegen::LaunchFault::Timeout:
    return ErrorCode::Trap;
  }
  return ErrorCode::Internal;
}

} // namespace

Error ptxforge::toApiError(llvm::Error E, const std::string &Context) {
  ErrorCode Code = ErrorCode::Internal;
  std::string Message;
  llvm::handleAllErrors(
      std::move(E),
      [&](const driver::DriverError &DE) {
        Code = fromStatus(DE.status());
        Message = DE.text().empty() ? driver::describe(DE.status()) : DE.text();
      },
      [&](const codegen::LaunchError &LE) {
        Code = fromLaunchFault(LE.kind());
        Message = LE.message();
      },
      [&](const llvm::ErrorInfoBase &EI) { Message = EI.message(); });
  return Error(Code, Context.empty() ? Message : Context + ": " + Message);
}

std::optional<Error> ptxforge::checkComputeCapability(ComputeCapability CC) {
  if (CC.Minor <= 9 && ptx::isDeviceArchitecture(CC.value()))
    return std::nullopt;
  return Error(ErrorCode::InvalidArgument,
               "unknown compute capability " + std::to_string(CC.Major) + "." + std::to_string(CC.Minor));
}

const char *ptxforge::version() { return PTXFORGE_VERSION_STRING; }

unsigned ptxforge::maxPtxVersion() { return ptx::MaxSupportedPtxVersion; }
