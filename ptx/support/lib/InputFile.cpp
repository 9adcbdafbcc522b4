// Bounded reads of regular files. The descriptor is opened O_NONBLOCK so that a FIFO (which would wait for a
// writer) opens at once and is then refused by its type; the reads grow the buffer as data arrives, so a file
// that lies about its size (/proc files say 0) or grows while read is still held to the bound.
#include "ptxforge/support/InputFile.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ptxforge::support;

char InputFileError::ID = 0;

void InputFileError::log(llvm::raw_ostream &OS) const { OS << Message; }

std::error_code InputFileError::convertToErrorCode() const {
  switch (Kind) {
  case ReadFailure::Missing:
    return std::make_error_code(std::errc::no_such_file_or_directory);
  case ReadFailure::NotRegular:
    return std::make_error_code(std::errc::invalid_argument);
  case ReadFailure::TooLarge:
    return std::make_error_code(std::errc::file_too_large);
  case ReadFailure::IoError:
    break;
  }
  return std::make_error_code(std::errc::io_error);
}

namespace {

llvm::Error fail(ReadFailure Kind, const llvm::Twine &Message) {
  return llvm::make_error<InputFileError>(Kind, Message.str());
}

llvm::Error failErrno(llvm::StringRef Name, int Errno) {
  ReadFailure Kind = Errno == ENOENT || Errno == ENOTDIR ? ReadFailure::Missing
                     : Errno == ENXIO                    ? ReadFailure::NotRegular // a socket
                                                         : ReadFailure::IoError;
  return fail(Kind, "cannot read '" + Name + "': " + std::strerror(Errno));
}

llvm::Error tooLarge(llvm::StringRef Name, uint64_t MaxBytes) {
  return fail(ReadFailure::TooLarge, "'" + Name + "' is larger than " + llvm::Twine(MaxBytes) + " bytes");
}

/// Reads Fd to its end into Out, failing once more than MaxBytes arrived.
llvm::Error readToEnd(int Fd, llvm::StringRef Name, uint64_t SizeHint, uint64_t MaxBytes, std::string &Out) {
  uint64_t Cap = MaxBytes == UINT64_MAX ? MaxBytes : MaxBytes + 1; // room for one byte too many
  Out.resize(static_cast<size_t>(std::min<uint64_t>(SizeHint ? SizeHint + 1 : 64 * 1024, Cap)));
  size_t Done = 0;
  for (;;) {
    if (Done == Out.size()) {
      if (Done > MaxBytes)
        return tooLarge(Name, MaxBytes);
      Out.resize(static_cast<size_t>(std::min<uint64_t>(uint64_t(Out.size()) * 2, Cap)));
    }
    ssize_t N = ::read(Fd, Out.data() + Done, Out.size() - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { // a pipe someone made non-blocking
      struct pollfd P = {Fd, POLLIN, 0};
      ::poll(&P, 1, -1);
      continue;
    }
    if (N < 0)
      return failErrno(Name, errno);
    if (N == 0)
      break;
    Done += static_cast<size_t>(N);
  }
  if (Done > MaxBytes)
    return tooLarge(Name, MaxBytes);
  Out.resize(Done);
  return llvm::Error::success();
}

/// Reads Fd after checking its type: a regular file, or (standard input only) a pipe.
llvm::Expected<std::string> readChecked(int Fd, llvm::StringRef Name, uint64_t MaxBytes, bool AllowPipe) {
  struct stat St;
  if (::fstat(Fd, &St) != 0)
    return failErrno(Name, errno);
  bool Regular = S_ISREG(St.st_mode);
  if (!Regular && !(AllowPipe && (S_ISFIFO(St.st_mode) || S_ISSOCK(St.st_mode))))
    return fail(ReadFailure::NotRegular,
                "cannot read '" + Name + "': " + (S_ISDIR(St.st_mode) ? "is a directory" : "not a regular file"));
  if (Regular && static_cast<uint64_t>(St.st_size) > MaxBytes)
    return tooLarge(Name, MaxBytes);
  std::string Out;
  if (llvm::Error E = readToEnd(Fd, Name, Regular ? static_cast<uint64_t>(St.st_size) : 0, MaxBytes, Out))
    return E;
  return Out;
}

/// A MemoryBuffer that owns the string it shows (std::string keeps a NUL after its last byte).
class StringBuffer final : public llvm::MemoryBuffer {
public:
  StringBuffer(std::string Data, std::string Name) : Data(std::move(Data)), Name(std::move(Name)) {
    init(this->Data.data(), this->Data.data() + this->Data.size(), /*RequiresNullTerminator=*/true);
  }
  llvm::StringRef getBufferIdentifier() const override { return Name; }
  BufferKind getBufferKind() const override { return MemoryBuffer_Malloc; }

private:
  std::string Data;
  std::string Name;
};

} // namespace

llvm::Expected<std::string> ptxforge::support::readInputFile(int Fd, llvm::StringRef Name, uint64_t MaxBytes) {
  return readChecked(Fd, Name, MaxBytes, /*AllowPipe=*/false);
}

llvm::Expected<std::string> ptxforge::support::readInputFile(llvm::StringRef Path, uint64_t MaxBytes) {
  if (Path == "-")
    return readChecked(STDIN_FILENO, "<stdin>", MaxBytes, /*AllowPipe=*/true);
  int Fd = ::open(Path.str().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (Fd < 0)
    return failErrno(Path, errno);
  auto Result = readChecked(Fd, Path, MaxBytes, /*AllowPipe=*/false);
  ::close(Fd);
  return Result;
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> ptxforge::support::readInputFileBuffer(llvm::StringRef Path,
                                                                                           uint64_t MaxBytes) {
  auto Bytes = readInputFile(Path, MaxBytes);
  if (!Bytes)
    return Bytes.takeError();
  return std::make_unique<StringBuffer>(std::move(*Bytes), Path.str());
}
