// Diagnostic collection and compiler-style printing.
#include "ptxforge/ptx/Diagnostics.h"

#include <algorithm>

using namespace ptxforge::ptx;

void DiagnosticEngine::report(Severity Level, SourceLoc Loc, std::string Message) {
  std::scoped_lock L(Lock);
  if (Level == Severity::Error)
    ++Errors;
  if (Diags.size() < MaxRecorded)
    Diags.push_back({Level, Loc, std::move(Message)});
}

size_t DiagnosticEngine::errorCount() const {
  std::scoped_lock L(Lock);
  return Errors;
}

std::vector<Diagnostic> DiagnosticEngine::sorted() const {
  std::scoped_lock L(Lock);
  std::vector<Diagnostic> Out = Diags;
  std::stable_sort(Out.begin(), Out.end(),
                   [](const Diagnostic &A, const Diagnostic &B) { return A.Loc.Offset < B.Loc.Offset; });
  return Out;
}

void DiagnosticEngine::clear() {
  std::scoped_lock L(Lock);
  Diags.clear();
  Errors = 0;
}

const char *ptxforge::ptx::severityName(Severity S) {
  switch (S) {
  case Severity::Note:
    return "note";
  case Severity::Warning:
    return "warning";
  case Severity::Error:
    return "error";
  }
  return "error";
}

std::string ptxforge::ptx::formatDiagnostic(const SourceBuffer &Source, const Diagnostic &D) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  if (!D.Loc.isValid()) {
    OS << Source.name() << ": " << severityName(D.Level) << ": " << D.Message;
    return Out;
  }
  LineColumn LC = Source.lineColumn(D.Loc);
  OS << Source.name() << ':' << LC.Line << ':' << LC.Column << ": " << severityName(D.Level) << ": " << D.Message
     << '\n';
  llvm::StringRef Line = Source.lineText(D.Loc);
  // Long lines (minified or hostile input) are shown around the column only.
  size_t From = LC.Column > 80 ? LC.Column - 60 : 0;
  llvm::StringRef Shown = Line.substr(From, 160);
  for (char C : Shown)
    OS << ((static_cast<unsigned char>(C) < 0x20 && C != '\t') || static_cast<unsigned char>(C) >= 0x7f ? '?' : C);
  OS << '\n';
  for (size_t I = From; I + 1 < LC.Column && I < From + 160; ++I)
    OS << (Line[I] == '\t' ? '\t' : ' ');
  OS << '^';
  return Out;
}

void DiagnosticEngine::print(const SourceBuffer &Source, llvm::raw_ostream &OS) const {
  for (const Diagnostic &D : sorted())
    OS << formatDiagnostic(Source, D) << '\n';
  size_t Dropped = errorCount() > MaxRecorded ? errorCount() - MaxRecorded : 0;
  if (Dropped)
    OS << Source.name() << ": note: " << Dropped << " more errors not shown\n";
}
