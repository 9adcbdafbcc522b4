// Compiler-style diagnostics: `file:line:col: error: message`, the source line and a caret. Diagnostics are
// values (collected, sorted, printed), never exceptions or aborts.
#pragma once

#include "ptxforge/ptx/SourceBuffer.h"

#include "llvm/Support/raw_ostream.h"

#include <mutex>
#include <string>
#include <vector>

namespace ptxforge::ptx {

enum class Severity : uint8_t { Note, Warning, Error };
/// "note", "warning", "error": how diagnostics spell S.
const char *severityName(Severity S);

struct Diagnostic {
  Severity Level = Severity::Error;
  SourceLoc Loc;
  std::string Message;
};

/// Collects diagnostics from any stage (thread-safe: chunks are parsed in parallel).
class DiagnosticEngine {
public:
  /// Stops recording errors past this many (the count keeps growing), so garbage input stays cheap.
  static constexpr size_t MaxRecorded = 200;

  void report(Severity Level, SourceLoc Loc, std::string Message);
  void error(SourceLoc Loc, std::string Message) { report(Severity::Error, Loc, std::move(Message)); }
  void warning(SourceLoc Loc, std::string Message) { report(Severity::Warning, Loc, std::move(Message)); }

  size_t errorCount() const;
  bool hasErrors() const { return errorCount() != 0; }
  /// Diagnostics sorted by location (stable for equal locations).
  std::vector<Diagnostic> sorted() const;
  void clear();

  /// Prints every diagnostic as `file:line:col: error: message`, the line and a caret.
  void print(const SourceBuffer &Source, llvm::raw_ostream &OS) const;

private:
  mutable std::mutex Lock;
  std::vector<Diagnostic> Diags;
  size_t Errors = 0;
};

/// Formats one diagnostic the compiler way (no trailing newline after the caret line).
std::string formatDiagnostic(const SourceBuffer &Source, const Diagnostic &D);

} // namespace ptxforge::ptx
