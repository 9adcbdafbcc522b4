// The hand-written PTX lexer feeding the ANTLR parser (tokens of grammar/PtxLexer.g4). Private to ptx/lib:
// together with ParseTreeToIR.cpp the only code that sees ANTLR types.
#pragma once

#include "PtxLexer.h"
#include "ptxforge/ptx/Diagnostics.h"

#include "antlr4-runtime.h"

namespace ptxforge::ptx::detail {

/// A token stored by value in PtxTokenStream's array: no heap allocation per token, and no RTTI walk in
/// ANTLR's BufferedTokenStream (together a quarter of the parse time with CommonToken).
class PtxToken final : public antlr4::Token {
public:
  PtxToken(size_t Type, uint32_t Start, uint32_t Stop, uint32_t Index, const char *Source)
      : Type(static_cast<uint32_t>(Type)), Start(Start), Stop(Stop), Index(Index), Source(Source) {}
  std::string getText() const override {
    return Type == UINT32_MAX || Stop < Start ? std::string() : std::string(Source + Start, Stop - Start + 1);
  }
  size_t getType() const override { return Type == UINT32_MAX ? EOF : Type; }
  size_t getLine() const override { return 0; }
  size_t getCharPositionInLine() const override { return 0; }
  size_t getChannel() const override { return DEFAULT_CHANNEL; }
  size_t getTokenIndex() const override { return Index; }
  size_t getStartIndex() const override { return Start; }
  size_t getStopIndex() const override { return Stop; }
  antlr4::TokenSource *getTokenSource() const override { return nullptr; }
  antlr4::CharStream *getInputStream() const override { return nullptr; }
  std::string toString() const override { return getText(); }

private:
  uint32_t Type, Start, Stop, Index;
  const char *Source; ///< the whole source (Start/Stop are offsets into it)
};

class PtxTokenSource : public antlr4::TokenSource {
public:
  /// Lexes Text, a slice of the whole source starting at byte BaseOffset; bad bytes are reported to Diags.
  PtxTokenSource(llvm::StringRef Text, uint32_t BaseOffset, DiagnosticEngine &Diags);

  struct RawToken {
    size_t Type, Begin, End; ///< absolute offsets, End exclusive
  };

  std::unique_ptr<antlr4::Token> nextToken() override;
  /// Lexes everything into Out (ending with EOF); WholeSource is the text Start/Stop offsets refer to.
  void lexAll(std::vector<PtxToken> &Out, const char *WholeSource);
  size_t getLine() const override { return 0; }
  size_t getCharPositionInLine() override { return 0; }
  antlr4::CharStream *getInputStream() override { return nullptr; }
  std::string getSourceName() override { return "ptx"; }
  antlr4::TokenFactory<antlr4::CommonToken> *getTokenFactory() override { return nullptr; }

private:
  /// Nesting and size limits: beyond them the input is hostile, not PTX (ptxas fails on far less).
  static constexpr unsigned MaxDepth = 256;
  static constexpr size_t MaxTokens = 4u << 20;

  RawToken lexOne();
  RawToken endOfInput();
  RawToken make(size_t Type, size_t Begin, size_t End);
  size_t lexDotWord(size_t Begin);
  size_t lexNumber(size_t Begin, size_t &Type);
  RawToken lexOperator(size_t Begin);

  llvm::StringRef Text;
  uint32_t Base;
  DiagnosticEngine &Diags;
  size_t Pos = 0;
  size_t Index = 0;
  unsigned Depth = 0;
  bool AfterSection = false; ///< after `.section NAME`, a `{` starts a verbatim body
  bool SectionNameSeen = false;
};

/// ANTLR's TokenStream over an array of tokens lexed up front (a chunk is at most a few hundred KB).
class PtxTokenStream final : public antlr4::TokenStream {
public:
  PtxTokenStream(PtxTokenSource &Source, const char *WholeSource) : Source(Source) {
    Source.lexAll(Tokens, WholeSource);
  }
  antlr4::Token *LT(ssize_t K) override {
    if (K == 0)
      return nullptr;
    if (K < 0)
      return static_cast<ssize_t>(Pos) + K >= 0 ? &Tokens[Pos + K] : nullptr;
    size_t I = std::min(Pos + static_cast<size_t>(K) - 1, Tokens.size() - 1);
    return &Tokens[I];
  }
  size_t LA(ssize_t K) override {
    antlr4::Token *T = LT(K);
    return T ? T->getType() : antlr4::Token::INVALID_TYPE;
  }
  antlr4::Token *get(size_t I) const override {
    return const_cast<PtxToken *>(&Tokens[std::min(I, Tokens.size() - 1)]);
  }
  antlr4::TokenSource *getTokenSource() const override { return &Source; }
  std::string getText(const antlr4::misc::Interval &) override { return std::string(); }
  std::string getText() override { return std::string(); }
  std::string getText(antlr4::RuleContext *) override { return std::string(); }
  std::string getText(antlr4::Token *, antlr4::Token *) override { return std::string(); }
  void consume() override {
    if (Pos + 1 < Tokens.size())
      ++Pos;
  }
  ssize_t mark() override { return -1; }
  void release(ssize_t) override {}
  size_t index() override { return Pos; }
  void seek(size_t I) override { Pos = std::min(I, Tokens.size() - 1); }
  size_t size() override { return Tokens.size(); }
  std::string getSourceName() const override { return "ptx"; }

private:
  PtxTokenSource &Source;
  std::vector<PtxToken> Tokens;
  size_t Pos = 0;
};

} // namespace ptxforge::ptx::detail
