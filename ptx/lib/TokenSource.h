// The hand-written PTX lexer feeding the ANTLR parser (tokens of grammar/PtxLexer.g4). Private to ptx/lib:
// together with ParseTreeToIR.cpp the only code that sees ANTLR types.
#pragma once

#include "PtxLexer.h"
#include "ptxforge/ptx/Diagnostics.h"

#include "antlr4-runtime.h"

namespace ptxforge::ptx::detail {

class PtxTokenSource : public antlr4::TokenSource {
public:
  /// Lexes Text, a slice of the whole source starting at byte BaseOffset; bad bytes are reported to Diags.
  PtxTokenSource(llvm::StringRef Text, uint32_t BaseOffset, DiagnosticEngine &Diags);

  std::unique_ptr<antlr4::Token> nextToken() override;
  size_t getLine() const override { return 0; }
  size_t getCharPositionInLine() override { return 0; }
  antlr4::CharStream *getInputStream() override { return nullptr; }
  std::string getSourceName() override { return "ptx"; }
  antlr4::TokenFactory<antlr4::CommonToken> *getTokenFactory() override { return nullptr; }

private:
  /// Nesting and size limits: beyond them the input is hostile, not PTX (ptxas fails on far less).
  static constexpr unsigned MaxDepth = 256;
  static constexpr size_t MaxTokens = 4u << 20;

  std::unique_ptr<antlr4::Token> endOfInput();
  std::unique_ptr<antlr4::Token> make(size_t Type, size_t Begin, size_t End);
  size_t lexDotWord(size_t Begin);
  size_t lexNumber(size_t Begin, size_t &Type);

  llvm::StringRef Text;
  uint32_t Base;
  DiagnosticEngine &Diags;
  size_t Pos = 0;
  size_t Index = 0;
  unsigned Depth = 0;
  bool AfterSection = false; ///< after `.section NAME`, a `{` starts a verbatim body
  bool SectionNameSeen = false;
};

} // namespace ptxforge::ptx::detail
