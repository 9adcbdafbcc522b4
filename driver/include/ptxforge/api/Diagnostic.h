// A diagnostic about a PTX module as a plain value: where (file, line, column), how bad, and what. The front end
// and the compatibility checks report through these; they never throw or abort.
#pragma once

#include "ptxforge/api/Export.h"

#include <string>
#include <vector>

namespace ptxforge {

enum class Severity { Note, Warning, Error };

struct Diagnostic {
  std::string File;    ///< the module's name (the path, or the name given with the text)
  unsigned Line = 0;   ///< 1-based; 0 when the diagnostic is about the module as a whole
  unsigned Column = 0; ///< 1-based, in bytes; 0 when Line is 0
  Severity Level = Severity::Error;
  std::string Message;    ///< lower-case, no final period: "unknown opcode 'ad.s32'"
  std::string SourceLine; ///< the text of line Line (without its newline), for carets; empty when Line is 0

  /// `file:line:col: error: message` (`file: error: message` when Line is 0).
  PTXFORGE_API std::string toString() const;
  /// toString(), then the source line and a caret under Column, as compilers print them.
  PTXFORGE_API std::string format() const;
};

/// "note", "warning", "error".
PTXFORGE_API const char *describe(Severity S);

/// Every diagnostic formatted (format()), one after another, each ending in a newline.
PTXFORGE_API std::string formatDiagnostics(const std::vector<Diagnostic> &Diags);

} // namespace ptxforge
