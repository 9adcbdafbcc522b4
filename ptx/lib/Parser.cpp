// Source text -> ptx::Module. The text is cut into chunks of whole top-level items (a cheap scan for braces
// and semicolons at depth 0), chunks are parsed in parallel by ANTLR parsers whose actions build IR directly,
// and the chunk results are merged in source order. SLL prediction with bail-out first; only a chunk that
// fails is re-parsed with full LL and error recovery to collect located diagnostics.
#include "ptxforge/ptx/Parser.h"

#include "ParseActions.h"
#include "PtxParser.h"
#include "TokenSource.h"

#include "antlr4-runtime.h"

#include <atomic>
#include <thread>

using namespace ptxforge::ptx;
using namespace ptxforge::ptx::detail;

namespace {

/// Chunks aim at this size: small enough to balance two threads on a 2 MB module, large enough that the
/// per-parser setup is noise.
constexpr size_t ChunkTarget = 48 * 1024;
/// A syntax-error storm in one chunk stops after this many reports (garbage input stays linear and quiet).
constexpr unsigned MaxSyntaxErrorsPerChunk = 20;

struct Chunk {
  size_t Begin, End;
};

/// Cuts Text at top-level item boundaries: after a `;` at brace depth 0 or a `}` that closes a function body.
/// The `}` of a variable's initializer (`= {...}`) is no boundary: its declaration goes on to its `;`.
std::vector<Chunk> splitIntoChunks(llvm::StringRef Text) {
  std::vector<Chunk> Chunks;
  size_t N = Text.size(), Start = 0, I = 0;
  long Depth = 0;
  char Last = 0;       ///< the last character outside comments and whitespace
  bool InInit = false; ///< the outermost open brace began an initializer
  while (I < N) {
    char C = Text[I];
    if (C == '/' && I + 1 < N && Text[I + 1] == '/') {
      size_t E = Text.find('\n', I);
      I = E == llvm::StringRef::npos ? N : E;
      continue;
    }
    if (C == '/' && I + 1 < N && Text[I + 1] == '*') {
      size_t E = Text.find("*/", I + 2);
      I = E == llvm::StringRef::npos ? N : E + 2;
      continue;
    }
    if (C == '"') {
      ++I;
      while (I < N && Text[I] != '"' && Text[I] != '\n') {
        if (Text[I] == '\\')
          ++I;
        ++I;
      }
      ++I;
      continue;
    }
    ++I;
    bool Boundary = false;
    if (C == '{') {
      if (Depth++ == 0)
        InInit = Last == '=';
    } else if (C == '}') {
      if (Depth > 0 && --Depth == 0)
        Boundary = !InInit;
    } else if (C == ';' && Depth == 0) {
      Boundary = true;
    }
    if (C != ' ' && C != '\t' && C != '\n' && C != '\r')
      Last = C;
    if (Boundary && I - Start >= ChunkTarget) {
      Chunks.push_back({Start, I});
      Start = I;
    }
  }
  if (Start < N || Chunks.empty())
    Chunks.push_back({Start, N});
  return Chunks;
}

std::string describeToken(antlr4::Token *T, llvm::StringRef Src) {
  if (!T || T->getType() == antlr4::Token::EOF)
    return "end of input";
  size_t B = T->getStartIndex(), E = T->getStopIndex();
  llvm::StringRef S = (B < Src.size() && E >= B) ? Src.slice(B, std::min(E + 1, B + 40)) : "";
  return "'" + S.str() + "'";
}

/// Turns ANTLR's syntax errors into located diagnostics in our wording.
class ErrorListener : public antlr4::BaseErrorListener {
public:
  ErrorListener(llvm::StringRef Src, DiagnosticEngine &Diags) : Src(Src), Diags(Diags) {}
  unsigned Count = 0;

  void syntaxError(antlr4::Recognizer *, antlr4::Token *Offending, size_t, size_t, const std::string &Msg,
                   std::exception_ptr) override {
    ++Count;
    SourceLoc L{Offending && Offending->getType() != antlr4::Token::EOF
                    ? static_cast<uint32_t>(Offending->getStartIndex())
                    : static_cast<uint32_t>(std::min<size_t>(Offending ? Offending->getStartIndex() : 0,
                                                             Src.empty() ? 0 : Src.size() - 1))};
    std::string Message;
    llvm::StringRef M(Msg);
    if (M.starts_with("missing ")) {
      llvm::StringRef What = M.drop_front(8).split(" at ").first;
      Message = "expected " + readable(What) + " before " + describeToken(Offending, Src);
    } else {
      Message = "unexpected " + describeToken(Offending, Src);
      size_t E = M.find("expecting ");
      if (E != llvm::StringRef::npos) {
        llvm::StringRef Exp = M.substr(E + 10);
        if (std::count(Exp.begin(), Exp.end(), ',') < 4)
          Message += ", expected " + readable(Exp);
      }
    }
    Diags.error(L, Message);
    if (Count >= MaxSyntaxErrorsPerChunk)
      throw antlr4::ParseCancellationException("too many errors");
  }

private:
  static std::string readable(llvm::StringRef S) {
    std::string Out = S.str();
    static const std::pair<const char *, const char *> Names[] = {
        {"IDENT", "an identifier"}, {"OPCODE", "an instruction"}, {"INT", "an integer"},     {"FLOAT", "a number"},
        {"STRING", "a string"},     {"TYPE", "a type"},           {"<EOF>", "end of input"}, {"SEMI", "';'"}};
    for (auto [From, To] : Names)
      for (size_t P = Out.find(From); P != std::string::npos; P = Out.find(From, P + std::strlen(To)))
        Out.replace(P, std::strlen(From), To);
    return Out;
  }
  llvm::StringRef Src;
  DiagnosticEngine &Diags;
};

/// Error recovery that conjures missing tokens itself: ANTLR's own asks the token source for a token factory,
/// which PtxTokenSource does not have. The conjured token has no text and sits where the syntax error is
/// reported (ErrorListener's location), so what the actions say about it is dropped as a duplicate.
class RecoveryStrategy : public antlr4::DefaultErrorStrategy {
public:
  explicit RecoveryStrategy(size_t SrcSize) : SrcSize(SrcSize) {}

protected:
  antlr4::Token *getMissingSymbol(antlr4::Parser *P) override {
    antlr4::Token *Cur = P->getCurrentToken();
    size_t At = std::min<size_t>(Cur ? Cur->getStartIndex() : 0, SrcSize ? SrcSize - 1 : 0);
    auto T = std::make_unique<antlr4::CommonToken>(getExpectedTokens(P).getMinElement(), "");
    T->setStartIndex(At);
    T->setStopIndex(At - 1); // stop before start: empty text for the actions (wraps at 0, still empty)
    Conjured.push_back(std::move(T));
    return Conjured.back().get();
  }

private:
  size_t SrcSize;
  std::vector<std::unique_ptr<antlr4::Token>> Conjured;
};

/// Parses one chunk; returns false on syntax errors (its IR is then incomplete and dropped).
bool parseChunk(llvm::StringRef Src, Chunk C, ChunkResult &Out, DiagnosticEngine &Diags, bool Full) {
  PtxTokenSource Tokens(Src.slice(C.Begin, C.End), static_cast<uint32_t>(C.Begin), Diags);
  PtxTokenStream Stream(Tokens, Src.data());
  ptxforge_grammar::PtxParser Parser(&Stream);
  ParseActions Actions(Src, Diags, Out);
  Parser.B = &Actions;
  Parser.setBuildParseTree(false);
  Parser.removeErrorListeners();
  ErrorListener Listener(Src, Diags);
  if (!Full) {
    Parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::SLL);
    Parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  } else {
    Parser.setErrorHandler(std::make_shared<RecoveryStrategy>(Src.size()));
    Parser.addErrorListener(&Listener);
  }
  try {
    Parser.chunk();
  } catch (antlr4::ParseCancellationException &) {
    if (!Full)
      return false;
  } catch (std::exception &E) {
    Diags.error(SourceLoc{static_cast<uint32_t>(C.Begin)}, std::string("parser failure: ") + E.what());
    return false;
  }
  return Listener.Count == 0;
}

/// Copies From's diagnostics. OnePerLocation (for chunks with syntax errors) keeps only the first at each
/// location: the lexer's report of a bad byte or unterminated string rather than the parser's complaint about
/// the token it made of it, and the syntax error rather than what the actions say about a conjured token.
void copyDiagnostics(const DiagnosticEngine &From, DiagnosticEngine &To, bool OnePerLocation = false) {
  std::vector<Diagnostic> Kept = From.sorted();
  size_t KeptErrors =
      std::count_if(Kept.begin(), Kept.end(), [](const Diagnostic &D) { return D.Level == Severity::Error; });
  OnePerLocation &= KeptErrors == From.errorCount(); // else the count below would not add up
  for (size_t I = 0; I < Kept.size(); ++I)
    if (!OnePerLocation || I == 0 || Kept[I].Loc.Offset != Kept[I - 1].Loc.Offset)
      To.report(Kept[I].Level, Kept[I].Loc, Kept[I].Message);
  // Errors From counted past its recording limit still count. From kept MaxRecorded diagnostics, so To is
  // full now too: these are counted, never recorded.
  for (size_t I = KeptErrors; I < From.errorCount(); ++I)
    To.report(Severity::Error, SourceLoc(), "error past the recording limit");
}

void parseChunkWithFallback(llvm::StringRef Src, Chunk C, ChunkResult &Out, DiagnosticEngine &Diags) {
  DiagnosticEngine Local;
  if (parseChunk(Src, C, Out, Local, /*Full=*/false)) {
    copyDiagnostics(Local, Diags);
    return;
  }
  Out.reset();
  DiagnosticEngine Retry;
  if (!parseChunk(Src, C, Out, Retry, /*Full=*/true)) {
    // Keep the diagnostics but not half-built items; the header directives are whole (else the verifier would
    // add a bogus "missing '.version'" to every syntax error in the chunk that holds them).
    auto Version = Out.Version;
    auto VersionLoc = Out.VersionLoc;
    auto Tgt = Out.Tgt;
    auto AddressSize = Out.AddressSize;
    Out.reset();
    Out.Version = Version;
    Out.VersionLoc = VersionLoc;
    Out.Tgt = Tgt;
    Out.AddressSize = AddressSize;
    if (!Retry.hasErrors())
      Retry.error(SourceLoc{static_cast<uint32_t>(C.Begin)}, "syntax error");
  }
  copyDiagnostics(Retry, Diags, /*OnePerLocation=*/true);
}

void merge(Module &M, ChunkResult &R, DiagnosticEngine &Diags) {
  if (R.Version) {
    if (M.Version.Major)
      Diags.error(R.VersionLoc, "duplicate '.version' directive");
    else {
      M.Version = *R.Version;
      M.VersionLoc = R.VersionLoc;
    }
  }
  if (R.Tgt) {
    if (M.Tgt.Loc.isValid())
      Diags.error(R.Tgt->Loc, "duplicate '.target' directive");
    else
      M.Tgt = *R.Tgt;
  }
  if (R.AddressSize) {
    M.AddressSize = *R.AddressSize;
    M.HasAddressSize = true;
  }
  size_t G = M.Globals.size(), F = M.Functions.size(), Fi = M.Files.size(), S = M.Sections.size(), P = M.Pragmas.size(),
         A = M.Aliases.size();
  for (TopLevelItem Item : R.Order) {
    size_t Base = 0;
    switch (Item.Kind) {
    case TopLevelKind::Variable:
      Base = G;
      break;
    case TopLevelKind::Function:
      Base = F;
      break;
    case TopLevelKind::File:
      Base = Fi;
      break;
    case TopLevelKind::Section:
      Base = S;
      break;
    case TopLevelKind::Pragma:
      Base = P;
      break;
    case TopLevelKind::Alias:
      Base = A;
      break;
    }
    M.Order.push_back({Item.Kind, static_cast<uint32_t>(Item.Index + Base)});
  }
  std::move(R.Globals.begin(), R.Globals.end(), std::back_inserter(M.Globals));
  std::move(R.Functions.begin(), R.Functions.end(), std::back_inserter(M.Functions));
  std::move(R.Files.begin(), R.Files.end(), std::back_inserter(M.Files));
  std::move(R.Sections.begin(), R.Sections.end(), std::back_inserter(M.Sections));
  std::move(R.Pragmas.begin(), R.Pragmas.end(), std::back_inserter(M.Pragmas));
  std::move(R.Aliases.begin(), R.Aliases.end(), std::back_inserter(M.Aliases));
  M.adoptArena(std::move(R.Arena));
}

} // namespace

std::unique_ptr<Module> ptxforge::ptx::parseModule(const SourceBuffer &Source, DiagnosticEngine &Diags,
                                                   const ParseOptions &Options) {
  auto M = std::make_unique<Module>();
  M->SourceName = Source.name().str();
  llvm::StringRef Text = Source.text();
  std::vector<Chunk> Chunks = splitIntoChunks(Text);
  std::vector<ChunkResult> Results(Chunks.size());

  unsigned Threads = Options.Threads ? Options.Threads : std::max(1u, std::thread::hardware_concurrency());
  Threads = std::min<unsigned>(Threads, Chunks.size());
  std::atomic<size_t> Next{0};
  auto Work = [&] {
    for (size_t I = Next++; I < Chunks.size(); I = Next++)
      parseChunkWithFallback(Text, Chunks[I], Results[I], Diags);
  };
  if (Threads <= 1) {
    Work();
  } else {
    std::vector<std::thread> Pool;
    for (unsigned T = 1; T < Threads; ++T)
      Pool.emplace_back(Work);
    Work();
    for (std::thread &T : Pool)
      T.join();
  }
  for (ChunkResult &R : Results)
    merge(*M, R, Diags);
  return M;
}
