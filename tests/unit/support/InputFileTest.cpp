// Reading input files: only regular files, never more than the bound, and never a wait on a FIFO.
#include "ptxforge/support/InputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ptxforge::support;

namespace {

class TempDir {
public:
  TempDir() {
    llvm::SmallString<128> P;
    REQUIRE(!llvm::sys::fs::createUniqueDirectory("ptxforge-input-test", P));
    Path = std::string(P);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(Path); }
  const std::string &path() const { return Path; }

private:
  std::string Path;
};

/// The failure kind of a read that must fail (and the read's message, for checks on it).
ReadFailure failureOf(llvm::Expected<std::string> R, std::string *Message = nullptr) {
  REQUIRE_FALSE(static_cast<bool>(R));
  ReadFailure Kind = ReadFailure::IoError;
  llvm::handleAllErrors(R.takeError(), [&](const InputFileError &E) {
    Kind = E.kind();
    if (Message)
      *Message = E.message();
  });
  return Kind;
}

/// The contents of a read that must succeed.
std::string contentsOf(llvm::Expected<std::string> R) {
  if (!R)
    FAIL(llvm::toString(R.takeError()));
  return std::move(*R);
}

} // namespace

TEST_CASE("a regular file is read whole, as a string or a null-terminated buffer") {
  TempDir D;
  std::string Path = D.path() + "/a.ptx";
  std::ofstream(Path, std::ios::binary) << std::string("x\0y", 3);
  auto Text = readInputFile(Path);
  REQUIRE(static_cast<bool>(Text));
  CHECK(*Text == std::string("x\0y", 3));
  auto Buffer = readInputFileBuffer(Path);
  REQUIRE(static_cast<bool>(Buffer));
  CHECK((*Buffer)->getBuffer() == llvm::StringRef("x\0y", 3));
  CHECK((*Buffer)->getBufferEnd()[0] == 0);
  CHECK((*Buffer)->getBufferIdentifier() == Path);
}

TEST_CASE("devices, FIFOs and directories are refused at once, never read or waited on") {
  TempDir D;
  auto Start = std::chrono::steady_clock::now();
  std::string Message;
  CHECK(failureOf(readInputFile("/dev/zero"), &Message) == ReadFailure::NotRegular);
  CHECK(Message == "cannot read '/dev/zero': not a regular file");
  CHECK(failureOf(readInputFile("/dev/null")) == ReadFailure::NotRegular);
  std::string Fifo = D.path() + "/fifo";
  REQUIRE(::mkfifo(Fifo.c_str(), 0600) == 0);
  CHECK(failureOf(readInputFile(Fifo)) == ReadFailure::NotRegular); // opening would wait for a writer
  CHECK(failureOf(readInputFile(D.path()), &Message) == ReadFailure::NotRegular);
  CHECK(Message.find("is a directory") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - Start < std::chrono::seconds(5));
  CHECK(failureOf(readInputFile(D.path() + "/missing")) == ReadFailure::Missing);
  CHECK(failureOf(readInputFile(D.path() + "/missing/below")) == ReadFailure::Missing);
}

TEST_CASE("a file over the bound fails, whatever its size says") {
  TempDir D;
  std::string Path = D.path() + "/big";
  std::ofstream(Path, std::ios::binary) << std::string(100, 'a');
  CHECK(contentsOf(readInputFile(Path, 100)).size() == 100);
  std::string Message;
  CHECK(failureOf(readInputFile(Path, 99), &Message) == ReadFailure::TooLarge);
  CHECK(Message == "'" + Path + "' is larger than 99 bytes");
  // /proc files say they are empty; they are read to their end, and the bound still holds.
  CHECK(contentsOf(readInputFile("/proc/self/maps")).find("[stack]") != std::string::npos);
  CHECK(failureOf(readInputFile("/proc/self/maps", 10)) == ReadFailure::TooLarge);
}

TEST_CASE("a descriptor the caller opened is read with the same checks") {
  TempDir D;
  std::string Path = D.path() + "/f";
  std::ofstream(Path, std::ios::binary) << "entry";
  int Fd = ::open(Path.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(Fd >= 0);
  CHECK(contentsOf(readInputFile(Fd, Path)) == "entry");
  ::close(Fd);
  std::string Fifo = D.path() + "/fifo";
  REQUIRE(::mkfifo(Fifo.c_str(), 0600) == 0);
  Fd = ::open(Fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(Fd >= 0);
  CHECK(failureOf(readInputFile(Fd, Fifo)) == ReadFailure::NotRegular);
  ::close(Fd);
}
