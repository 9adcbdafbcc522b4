// Reading an input file whole, safely: only a regular file (a FIFO, a device such as /dev/zero or a directory
// is refused at once instead of blocking or reading without end), never more than a caller's bound, and
// opened without blocking. Every reader of user-named files (PTX sources, fatbinaries, cache entries, the
// CLI's data files) goes through here.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>

namespace ptxforge::support {

/// The default bound: offsets into source text are 32-bit (ptx::SourceLoc), and no fatbinary comes near it.
constexpr uint64_t DefaultMaxInputBytes = UINT32_MAX - 1;

/// Why a read failed, for callers that map it to their own error codes.
enum class ReadFailure {
  Missing,    ///< the path does not exist
  NotRegular, ///< a directory, FIFO, socket or device
  TooLarge,   ///< more bytes than the bound
  IoError,    ///< anything else (permissions, read errors)
};

/// An llvm::Error payload: the message names the file and the reason.
class InputFileError : public llvm::ErrorInfo<InputFileError> {
public:
  static char ID;
  InputFileError(ReadFailure Kind, std::string Message) : Kind(Kind), Message(std::move(Message)) {}
  ReadFailure kind() const { return Kind; }
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override;

private:
  ReadFailure Kind;
  std::string Message;
};

/// The whole contents of Path ("-" is standard input, which may be a pipe but obeys the same bound).
[[nodiscard]] llvm::Expected<std::string> readInputFile(llvm::StringRef Path, uint64_t MaxBytes = DefaultMaxInputBytes);

/// The same from a descriptor the caller opened (with O_NONBLOCK, so opening a FIFO did not block); Name is
/// only for messages. The descriptor stays open.
[[nodiscard]] llvm::Expected<std::string> readInputFile(int Fd, llvm::StringRef Name,
                                                        uint64_t MaxBytes = DefaultMaxInputBytes);

/// readInputFile as a MemoryBuffer (null-terminated, no copy), for readers that take one.
[[nodiscard]] llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFileBuffer(llvm::StringRef Path, uint64_t MaxBytes = DefaultMaxInputBytes);

} // namespace ptxforge::support
