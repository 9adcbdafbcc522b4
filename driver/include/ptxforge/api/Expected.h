// Results without exceptions: an operation of the embedding API returns Expected<T> (a value or an Error) and
// never lets an exception out. An Error is a code, a message, and for PTX problems the diagnostics that explain
// it. Self-contained (no LLVM headers), so applications compile against the installed headers alone.
#pragma once

#include "ptxforge/api/Diagnostic.h"
#include "ptxforge/api/Export.h"

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace ptxforge {

/// What went wrong. The numbers are those of the C API's ptxforge_status and stay stable.
enum class ErrorCode : int {
  Success = 0,
  InvalidArgument = 1,       ///< a null, out-of-range or mismatched argument (e.g. an argument's size)
  FileError = 2,             ///< a file could not be read or written
  InvalidPtx = 3,            ///< the PTX has errors (see the diagnostics)
  UnsupportedPtxVersion = 4, ///< a `.version` newer than ptxforge knows
  UnsupportedTarget = 5,     ///< the module cannot run on the compute capability asked for (see the diagnostics)
  CompileFailed = 6,         ///< valid PTX that code generation cannot handle (the message names the instruction)
  NotFound = 7,              ///< no kernel or global of that name
  OutOfMemory = 8,           ///< device memory exhausted
  InvalidLaunch = 9,         ///< grid, block or shared memory outside the device's or the kernel's limits
  IllegalAddress = 10,       ///< the kernel loaded or stored outside mapped memory (a bad pointer)
  MisalignedAddress = 11,    ///< the kernel accessed memory at a misaligned address
  IllegalInstruction = 12,   ///< e.g. `bar.sync` with a thread count that is not a multiple of 32
  Trap = 13,                 ///< the kernel executed `trap` or `brkpt`
  Assert = 14,               ///< a device-side `assert` failed
  Deadlock = 15,             ///< a barrier or warp collective that can never complete
  NotSupported = 16,         ///< an operation this build or host cannot do
  Internal = 17,             ///< a bug in ptxforge (the message says where); the API stays usable
};

/// "invalid PTX" and the like.
PTXFORGE_API const char *describe(ErrorCode Code);

/// A failure: its code, a message, and the diagnostics of a PTX problem (empty for other failures).
class Error {
public:
  Error(ErrorCode Code, std::string Message, std::vector<Diagnostic> Diags = {})
      : Code(Code), Message(std::move(Message)), Diags(std::move(Diags)) {}

  ErrorCode code() const { return Code; }
  const std::string &message() const { return Message; }
  const std::vector<Diagnostic> &diagnostics() const { return Diags; }
  /// "invalid PTX: k.ptx: 2 errors", then the formatted diagnostics.
  PTXFORGE_API std::string toString() const;

private:
  ErrorCode Code;
  std::string Message;
  std::vector<Diagnostic> Diags;
};

/// A T or an Error. Test it before use; value() on an error, or error() on a value, aborts (a program bug,
/// not a run-time condition).
template <class T> class [[nodiscard]] Expected {
public:
  Expected(T Value) : Storage(std::in_place_index<0>, std::move(Value)) {}
  Expected(Error E) : Storage(std::in_place_index<1>, std::move(E)) {}

  bool ok() const { return Storage.index() == 0; }
  explicit operator bool() const { return ok(); }

  T &value() & { return check(std::get_if<0>(&Storage)); }
  const T &value() const & { return check(std::get_if<0>(&Storage)); }
  T &&value() && { return std::move(check(std::get_if<0>(&Storage))); }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

  const Error &error() const { return check(std::get_if<1>(&Storage)); }

private:
  template <class U> static U &check(U *P) {
    if (!P)
      std::abort();
    return *P;
  }
  std::variant<T, Error> Storage;
};

/// Success or an Error.
template <> class [[nodiscard]] Expected<void> {
public:
  Expected() = default;
  Expected(Error E) : Failure(std::move(E)) {}

  bool ok() const { return !Failure; }
  explicit operator bool() const { return ok(); }
  const Error &error() const {
    if (!Failure)
      std::abort();
    return *Failure;
  }

private:
  std::optional<Error> Failure;
};

} // namespace ptxforge
