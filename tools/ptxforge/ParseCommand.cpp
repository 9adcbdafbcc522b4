// `ptxforge parse FILE...`: parse and verify; diagnostics on stderr; 0 clean, 1 errors.
// `ptxforge parse --verify-diagnostics FILE...`: like clang's -verify, the file states the diagnostics it
// expects in comments (`// expected-error {{text}}`, `expected-warning@+1`, `expected-note@3`, `@*` any line);
// matched diagnostics print nothing, unexpected ones and unseen expectations print with file:line, and the
// exit status is 0 exactly when everything matched.
#include "Commands.h"
#include "FrontendCommands.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace ptxforge;
using namespace ptxforge::tools;

std::unique_ptr<ptx::FrontendResult> ptxforge::tools::loadPtx(const std::string &Path, unsigned Threads) {
  auto Source = ptx::SourceBuffer::fromFile(Path);
  if (!Source) {
    llvm::errs() << "ptxforge: error: " << llvm::toString(Source.takeError()) << '\n';
    return nullptr;
  }
  return loadPtx(std::move(*Source), Threads);
}

std::unique_ptr<ptx::FrontendResult> ptxforge::tools::loadPtx(std::unique_ptr<ptx::SourceBuffer> Source,
                                                              unsigned Threads) {
  ptx::ParseOptions Options;
  Options.Threads = Threads;
  auto R = ptx::runFrontend(std::move(Source), Options);
  R->Diags.print(*R->Source, llvm::errs());
  return R;
}

namespace {

/// One `expected-<kind>[@line] [count] {{text}}` directive.
struct Expectation {
  ptx::Severity Level = ptx::Severity::Error;
  unsigned Line = 0;    ///< the line it refers to; 0 with AnyLine
  bool AnyLine = false; ///< `@*`
  unsigned DirectiveLine = 0;
  std::string Text;
  unsigned Count = 1; ///< how many diagnostics it must match
  unsigned Seen = 0;
};

/// Reads the expectations of Text. Malformed directives are reported to Problems as `file:line: ...`.
std::vector<Expectation> readExpectations(const ptx::SourceBuffer &Source, std::vector<std::string> &Problems) {
  std::vector<Expectation> Out;
  llvm::StringRef Text = Source.text();
  unsigned LineCount = static_cast<unsigned>(Text.count('\n')) + 1;
  unsigned LineNo = 0;
  while (!Text.empty()) {
    ++LineNo;
    auto [Line, Rest] = Text.split('\n');
    Text = Rest;
    for (size_t P = Line.find("expected-"); P != llvm::StringRef::npos; P = Line.find("expected-", P + 1)) {
      llvm::StringRef S = Line.substr(P + 9);
      Expectation E;
      E.DirectiveLine = E.Line = LineNo;
      if (S.consume_front("error"))
        E.Level = ptx::Severity::Error;
      else if (S.consume_front("warning"))
        E.Level = ptx::Severity::Warning;
      else if (S.consume_front("note"))
        E.Level = ptx::Severity::Note;
      else
        continue; // `expected-` in ordinary prose (or clang's `expected-no-diagnostics`)
      auto problem = [&](const std::string &What) {
        Problems.push_back(Source.name().str() + ":" + std::to_string(LineNo) + ": error: " + What);
      };
      if (S.consume_front("@")) {
        if (S.consume_front("*")) {
          E.AnyLine = true;
          E.Line = 0;
        } else {
          bool Plus = S.consume_front("+"), Minus = !Plus && S.consume_front("-");
          size_t Digits = S.find_first_not_of("0123456789");
          llvm::StringRef Num = S.substr(0, Digits);
          S = S.substr(Num.size());
          unsigned N = 0;
          if (Num.empty() || Num.getAsInteger(10, N)) {
            problem("malformed line in expectation (write @+N, @-N, @N or @*)");
            continue;
          }
          long L = Plus ? long(LineNo) + N : Minus ? long(LineNo) - long(N) : long(N);
          if (L < 1 || L > long(LineCount)) {
            problem("expectation refers to line " + std::to_string(L) + ", outside the file");
            continue;
          }
          E.Line = static_cast<unsigned>(L);
        }
      }
      S = S.ltrim(" \t");
      if (!S.empty() && S[0] >= '0' && S[0] <= '9') {
        size_t Digits = S.find_first_not_of("0123456789");
        S.substr(0, Digits).getAsInteger(10, E.Count);
        S = S.substr(std::min(Digits, S.size())).ltrim(" \t");
        if (E.Count == 0) {
          problem("expectation count must be positive");
          continue;
        }
      }
      if (!S.consume_front("{{")) {
        problem("expected '{{' after 'expected-" + std::string(severityName(E.Level)) + "'");
        continue;
      }
      size_t End = S.find("}}");
      if (End == llvm::StringRef::npos) {
        problem("missing '}}' in expectation");
        continue;
      }
      E.Text = S.substr(0, End).str();
      Out.push_back(std::move(E));
    }
  }
  return Out;
}

/// Verifies one file; returns true when its diagnostics are exactly those it expects.
bool verifyFile(const std::string &Path, unsigned Threads) {
  auto Loaded = ptx::SourceBuffer::fromFile(Path);
  if (!Loaded) {
    llvm::errs() << "ptxforge: error: " << llvm::toString(Loaded.takeError()) << '\n';
    return false;
  }
  // The expectations are read from a copy: the front end takes the buffer.
  auto Source = std::make_unique<ptx::SourceBuffer>((*Loaded)->name().str(), (*Loaded)->text().str());
  std::vector<std::string> Problems;
  std::vector<Expectation> Expected = readExpectations(*Source, Problems);

  ptx::ParseOptions Options;
  Options.Threads = Threads;
  auto R = ptx::runFrontend(std::move(*Loaded), Options);
  std::vector<ptx::Diagnostic> Diags = R->Diags.sorted();

  auto matches = [&](Expectation &E, const ptx::Diagnostic &D, unsigned Line) {
    return E.Level == D.Level && (E.AnyLine || E.Line == Line) && llvm::StringRef(D.Message).contains(E.Text);
  };
  std::vector<const ptx::Diagnostic *> Unexpected;
  for (const ptx::Diagnostic &D : Diags) {
    unsigned Line = D.Loc.isValid() ? R->Source->lineColumn(D.Loc).Line : 0;
    // Line-specific expectations first, so an `@*` one does not steal a diagnostic another names.
    Expectation *Match = nullptr;
    for (int Pass = 0; Pass < 2 && !Match; ++Pass)
      for (Expectation &E : Expected)
        if (E.AnyLine == (Pass == 1) && E.Seen < E.Count && matches(E, D, Line)) {
          Match = &E;
          break;
        }
    if (Match)
      ++Match->Seen;
    else
      Unexpected.push_back(&D);
  }

  llvm::raw_ostream &OS = llvm::errs();
  for (const std::string &P : Problems)
    OS << P << '\n';
  for (const ptx::Diagnostic *D : Unexpected) {
    ptx::Diagnostic Shown = *D;
    Shown.Message = "unexpected " + std::string(severityName(D->Level)) + ": " + D->Message;
    OS << ptx::formatDiagnostic(*R->Source, Shown) << '\n';
  }
  size_t Unseen = 0;
  for (const Expectation &E : Expected) {
    if (E.Seen >= E.Count)
      continue;
    ++Unseen;
    OS << R->Source->name() << ':' << (E.AnyLine ? E.DirectiveLine : E.Line) << ": error: expected "
       << severityName(E.Level) << " not seen: {{" << E.Text << "}}";
    if (E.Count > 1)
      OS << " (seen " << E.Seen << " of " << E.Count << " times)";
    if (E.AnyLine)
      OS << " (on any line)";
    else if (E.DirectiveLine != E.Line)
      OS << " (expectation at line " << E.DirectiveLine << ')';
    OS << '\n';
  }
  size_t Dropped = 0;
  // Errors past DiagnosticEngine::MaxRecorded are counted but not kept: they cannot be matched.
  size_t RecordedErrors = std::count_if(Diags.begin(), Diags.end(),
                                        [](const ptx::Diagnostic &D) { return D.Level == ptx::Severity::Error; });
  if (R->Diags.errorCount() > RecordedErrors)
    Dropped = R->Diags.errorCount() - RecordedErrors;
  if (Dropped)
    OS << R->Source->name() << ": error: " << Dropped << " more errors were not recorded (the limit is "
       << ptx::DiagnosticEngine::MaxRecorded << " diagnostics) and cannot be verified\n";
  return Problems.empty() && Unexpected.empty() && Unseen == 0 && Dropped == 0;
}

} // namespace

void ptxforge::tools::addParseCommand(CLI::App &App, Runner &Run) {
  auto *Cmd = App.add_subcommand("parse", "Parse and verify PTX files; print diagnostics (exit 1 on errors)");
  auto Files = std::make_shared<std::vector<std::string>>();
  auto Threads = std::make_shared<unsigned>(0);
  auto Verify = std::make_shared<bool>(false);
  Cmd->add_option("files", *Files, "PTX files ('-' for standard input)")->required();
  Cmd->add_option("-j,--threads", *Threads, "parser threads (default: one per core)");
  Cmd->add_flag("--verify-diagnostics", *Verify,
                "check the diagnostics against '// expected-error {{text}}' comments in the file "
                "('expected-warning', '@+N', '@-N', '@N', '@*'); exit 0 iff all match");
  Cmd->callback([&Run, Files, Threads, Verify] {
    Run = [Files, Threads, Verify] {
      int Status = ExitOk;
      for (const std::string &F : *Files) {
        if (*Verify) {
          if (!verifyFile(F, *Threads))
            Status = ExitInputError;
          continue;
        }
        auto R = loadPtx(F, *Threads);
        if (!R || !R->ok())
          Status = ExitInputError;
      }
      return Status;
    };
  });
}
