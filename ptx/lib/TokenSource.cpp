// The hand-written PTX lexer: ANTLR's generated lexer tops out near 13 MB/s on PTX, this one near 100 MB/s.
// It must produce exactly the tokens grammar/PtxLexer.g4 defines (a unit test compares the two on the corpus).
#include "TokenSource.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace ptxforge::ptx;
using namespace ptxforge::ptx::detail;
using T = ptxforge_grammar::PtxLexer;

static bool isIdentStart(char C) { return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') || C == '_' || C == '$'; }
static bool isDigit(char C) { return C >= '0' && C <= '9'; }
static bool isIdentChar(char C) { return isIdentStart(C) || isDigit(C); }
static bool isHex(char C) { return isDigit(C) || (C >= 'a' && C <= 'f') || (C >= 'A' && C <= 'F'); }
static bool isModifierChar(char C) { return isIdentChar(C) && C != '$'; }

PtxTokenSource::PtxTokenSource(llvm::StringRef Text, uint32_t BaseOffset, DiagnosticEngine &Diags)
    : Text(Text), Base(BaseOffset), Diags(Diags) {}

PtxTokenSource::RawToken PtxTokenSource::make(size_t Type, size_t Begin, size_t End) {
  Pos = End;
  return RawToken{Type, Base + Begin, Base + End};
}

static size_t directiveType(llvm::StringRef W) {
  return llvm::StringSwitch<size_t>(W)
      .Case("version", T::VERSION)
      .Case("target", T::TARGET)
      .Case("address_size", T::ADDRESS_SIZE)
      .Case("visible", T::VISIBLE)
      .Case("extern", T::EXTERN)
      .Case("weak", T::WEAK)
      .Case("common", T::COMMON)
      .Case("entry", T::ENTRY)
      .Case("func", T::FUNC)
      .Case("alias", T::ALIAS)
      .Case("reg", T::REG)
      .Case("param", T::PARAM)
      .Case("local", T::LOCAL)
      .Case("shared", T::SHARED)
      .Case("global", T::GLOBAL)
      .Case("const", T::CONST)
      .Case("tex", T::TEX)
      .Case("align", T::ALIGN)
      .Case("ptr", T::PTR)
      .Case("attribute", T::ATTRIBUTE)
      .Case("file", T::FILE)
      .Case("loc", T::LOC)
      .Case("section", T::SECTION)
      .Case("pragma", T::PRAGMA)
      .Case("callprototype", T::CALLPROTOTYPE)
      .Case("calltargets", T::CALLTARGETS)
      .Case("branchtargets", T::BRANCHTARGETS)
      .Cases({"maxntid", "reqntid", "minnctapersm", "maxnctapersm", "maxnreg"}, T::PERF)
      .Cases({"maxclusterrank", "reqnctapercluster", "explicitcluster", "noreturn", "blocksareclusters"}, T::PERF)
      .Cases({"v2", "v4", "v8", "v16"}, T::VECTOR)
      .Cases({"pred", "b1", "b8", "b16", "b32", "b64", "b128"}, T::TYPE)
      .Cases({"u4", "u8", "u16", "u32", "u64", "s4", "s8", "s16", "s32"}, T::TYPE)
      .Cases({"s64", "f16", "bf16", "tf32", "f32", "f64", "e4m3", "e5m2", "e2m3"}, T::TYPE)
      .Cases({"e3m2", "e2m1", "ue8m0", "f16x2", "bf16x2", "e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2"}, T::TYPE)
      .Cases({"e2m1x2", "ue8m0x2", "ue4m3", "s16x2", "u16x2", "texref", "samplerref", "surfref"}, T::TYPE)
      .Default(T::DOT_IDENT);
}

size_t PtxTokenSource::lexNumber(size_t B, size_t &Type) {
  size_t N = Text.size(), P = B;
  auto hexRun = [&](size_t From, size_t Count) {
    for (size_t I = 0; I < Count; ++I)
      if (From + I >= N || !isHex(Text[From + I]))
        return false;
    return true;
  };
  if (Text[P] == '0' && P + 1 < N) {
    char C = Text[P + 1];
    if ((C == 'f' || C == 'F') && hexRun(P + 2, 8)) {
      Type = T::FLOAT;
      return P + 10;
    }
    if ((C == 'd' || C == 'D') && hexRun(P + 2, 16)) {
      Type = T::FLOAT;
      return P + 18;
    }
    if ((C == 'x' || C == 'X') && P + 2 < N && isHex(Text[P + 2])) {
      P += 2;
      while (P < N && isHex(Text[P]))
        ++P;
      Type = T::INT;
      return (P < N && Text[P] == 'U') ? P + 1 : P;
    }
    if ((C == 'b' || C == 'B') && P + 2 < N && (Text[P + 2] == '0' || Text[P + 2] == '1')) {
      P += 2;
      while (P < N && (Text[P] == '0' || Text[P] == '1'))
        ++P;
      Type = T::INT;
      return (P < N && Text[P] == 'U') ? P + 1 : P;
    }
  }
  while (P < N && isDigit(Text[P]))
    ++P;
  auto exponent = [&](size_t From) -> size_t {
    if (From < N && (Text[From] == 'e' || Text[From] == 'E')) {
      size_t Q = From + 1;
      if (Q < N && (Text[Q] == '+' || Text[Q] == '-'))
        ++Q;
      if (Q < N && isDigit(Text[Q])) {
        while (Q < N && isDigit(Text[Q]))
          ++Q;
        return Q;
      }
    }
    return From;
  };
  if (P < N && Text[P] == '.') {
    ++P;
    while (P < N && isDigit(Text[P]))
      ++P;
    Type = T::FLOAT;
    return exponent(P);
  }
  size_t E = exponent(P);
  if (E != P) {
    Type = T::FLOAT;
    return E;
  }
  Type = T::INT;
  return (P < N && Text[P] == 'U') ? P + 1 : P;
}

PtxTokenSource::RawToken PtxTokenSource::endOfInput() {
  Pos = Text.size();
  return RawToken{antlr4::Token::EOF, Base + Text.size(), Base + Text.size()};
}

std::unique_ptr<antlr4::Token> PtxTokenSource::nextToken() {
  RawToken R = lexOne();
  auto Tok = std::make_unique<antlr4::CommonToken>(R.Type);
  Tok->setStartIndex(R.Begin);
  Tok->setStopIndex(R.End - 1);
  Tok->setTokenIndex(Index++);
  return Tok;
}

/// An end of input forced by a limit is placed where lexing stopped: the parser's "unexpected end of input"
/// then lands on the limit's diagnostic (and is dropped as its duplicate) instead of at the end of the file.
static PtxTokenSource::RawToken stopAt(PtxTokenSource::RawToken Eof, size_t At) {
  Eof.Begin = At;
  Eof.End = At + 1;
  return Eof;
}

PtxTokenSource::RawToken PtxTokenSource::lexOne() {
  size_t N = Text.size();
  // Skip whitespace and comments.
  while (Pos < N) {
    char C = Text[Pos];
    if (C == ' ' || C == '\t' || C == '\n' || C == '\r' || C == '\f') {
      ++Pos;
    } else if (C == '/' && Pos + 1 < N && Text[Pos + 1] == '/') {
      size_t E = Text.find('\n', Pos);
      Pos = E == llvm::StringRef::npos ? N : E;
    } else if (C == '/' && Pos + 1 < N && Text[Pos + 1] == '*') {
      size_t E = Text.find("*/", Pos + 2);
      if (E == llvm::StringRef::npos) {
        Diags.error(SourceLoc{Base + uint32_t(Pos)}, "unterminated comment");
        Pos = N;
      } else {
        Pos = E + 2;
      }
    } else {
      break;
    }
  }
  if (Pos >= N)
    return endOfInput();
  if (Index >= MaxTokens) {
    Diags.error(SourceLoc{Base + uint32_t(Pos)},
                "top-level item too large (more than " + std::to_string(MaxTokens) + " tokens)");
    return stopAt(endOfInput(), Base + Pos);
  }

  size_t B = Pos;
  char C = Text[B];

  if (AfterSection) {
    // Section mode of PtxLexer.g4: a name, then a verbatim `{...}` body.
    if (C == '.' && !SectionNameSeen && B + 1 < N && isIdentStart(Text[B + 1]) && Text[B + 1] != '$') {
      size_t P = B + 1;
      while (P < N && (isIdentChar(Text[P]) || Text[P] == '.'))
        ++P;
      SectionNameSeen = true;
      return make(T::SECTION_NAME, B, P);
    }
    AfterSection = false;
    if (C == '{') {
      size_t E = Text.find('}', B);
      if (E == llvm::StringRef::npos) {
        Diags.error(SourceLoc{Base + uint32_t(B)}, "unterminated '.section' body");
        return make(T::ERROR_CHAR, B, B + 1);
      }
      return make(T::SECTION_BODY, B, E + 1);
    }
    return make(T::ERROR_CHAR, B, B + 1);
  }

  if (C == '.' && B + 1 < N && isIdentStart(Text[B + 1]) && Text[B + 1] != '$') {
    size_t P = B + 1;
    while (P < N && isIdentChar(Text[P]))
      ++P;
    size_t Type = directiveType(Text.slice(B + 1, P));
    if (Type == T::SECTION) {
      AfterSection = true;
      SectionNameSeen = false;
    }
    return make(Type, B, P);
  }
  if (C == '%') {
    size_t P = B + 1;
    while (P < N && isIdentChar(Text[P]))
      ++P;
    if (P == B + 1)
      return make(T::PERCENT, B, B + 1); // the remainder operator of a constant expression
    // A component (`%tid.x`) or a video instruction's byte/half selector (`%r1.b0`, `%r2.h10`, `%r3.b3210`).
    if (P + 1 < N && Text[P] == '.' && Text[P + 1] >= 'a' && Text[P + 1] <= 'z') {
      P += 2;
      while (P < N && isDigit(Text[P]))
        ++P;
    }
    return make(T::IDENT, B, P);
  }
  if (isIdentStart(C)) {
    size_t P = B + 1;
    while (P < N && isIdentChar(Text[P]))
      ++P;
    // An identifier followed by `.mod` parts is an opcode token (no `$` in opcode names).
    if (C != '$' && P < N && Text[P] == '.' && P + 1 < N && isModifierChar(Text[P + 1]) &&
        Text.slice(B, P).find('$') == llvm::StringRef::npos) {
      while (P < N && Text[P] == '.' && P + 1 < N && (isModifierChar(Text[P + 1]) || Text[P + 1] == ':')) {
        ++P;
        while (P < N && (isModifierChar(Text[P]) || Text[P] == ':'))
          ++P;
      }
      return make(T::OPCODE, B, P);
    }
    return make(T::IDENT, B, P);
  }
  if (isDigit(C)) {
    size_t Type;
    size_t E = lexNumber(B, Type);
    return make(Type, B, E);
  }
  if (C == '"') {
    size_t P = B + 1;
    while (P < N && Text[P] != '"' && Text[P] != '\n' && Text[P] != '\r') {
      if (Text[P] == '\\' && P + 1 < N && Text[P + 1] != '\n' && Text[P + 1] != '\r')
        ++P;
      ++P;
    }
    if (P < N && Text[P] == '"') {
      // Only comments may hold non-ASCII bytes (ptxas rejects them even there).
      for (size_t Q = B + 1; Q < P; ++Q) {
        unsigned char U = static_cast<unsigned char>(Text[Q]);
        if (U == 0 || U >= 0x80) {
          Diags.error(SourceLoc{Base + uint32_t(Q)},
                      U == 0 ? std::string("NUL byte in PTX source")
                             : "non-ASCII byte 0x" + llvm::utohexstr(U, true) + " outside a comment");
          break;
        }
      }
      return make(T::STRING, B, P + 1);
    }
    Diags.error(SourceLoc{Base + uint32_t(B)}, "unterminated string");
    return make(T::ERROR_CHAR, B, B + 1);
  }
  size_t Type;
  if (C == '{' || C == '(' || C == '[') {
    // The parser recurses once per nesting level: stop deep nesting before it exhausts the stack.
    if (++Depth > MaxDepth) {
      Diags.error(SourceLoc{Base + uint32_t(B)}, "nesting deeper than " + std::to_string(MaxDepth) + " levels");
      return stopAt(endOfInput(), Base + B);
    }
  } else if ((C == '}' || C == ')' || C == ']') && Depth > 0) {
    --Depth;
  }
  switch (C) {
  case '{':
    Type = T::LBRACE;
    break;
  case '}':
    Type = T::RBRACE;
    break;
  case '(':
    Type = T::LPAREN;
    break;
  case ')':
    Type = T::RPAREN;
    break;
  case '[':
    Type = T::LBRACK;
    break;
  case ']':
    Type = T::RBRACK;
    break;
  case '<':
  case '>':
  case '=':
  case '!':
  case '|':
  case '&':
    return lexOperator(B);
  case '*':
    Type = T::STAR;
    break;
  case '/':
    Type = T::SLASH;
    break;
  case '^':
    Type = T::CARET;
    break;
  case '~':
    Type = T::TILDE;
    break;
  case '?':
    Type = T::QUESTION;
    break;
  case ',':
    Type = T::COMMA;
    break;
  case ';':
    Type = T::SEMI;
    break;
  case ':':
    Type = T::COLON;
    break;
  case '@':
    Type = T::AT;
    break;
  case '+':
    Type = T::PLUS;
    break;
  case '-':
    Type = T::MINUS;
    break;
  default: {
    unsigned char U = static_cast<unsigned char>(C);
    if (U == 0)
      Diags.error(SourceLoc{Base + uint32_t(B)}, "NUL byte in PTX source");
    else if (U >= 0x80)
      Diags.error(SourceLoc{Base + uint32_t(B)}, "non-ASCII byte 0x" + llvm::utohexstr(U, true) + " outside a comment");
    else
      Diags.error(SourceLoc{Base + uint32_t(B)}, std::string("unexpected character '") + C + "'");
    // One token for a run of bad bytes keeps binary garbage cheap.
    size_t P = B + 1;
    while (P < N && (static_cast<unsigned char>(Text[P]) >= 0x80 || Text[P] == 0) && P - B < 4096)
      ++P;
    return make(T::ERROR_CHAR, B, P);
  }
  }
  return make(Type, B, B + 1);
}

PtxTokenSource::RawToken PtxTokenSource::lexOperator(size_t B) {
  // The one- and two-character operators starting with these, longest match first (`<<` before `<`).
  char C = Text[B], D = B + 1 < Text.size() ? Text[B + 1] : 0;
  auto Two = [&](size_t Type) { return make(Type, B, B + 2); };
  switch (C) {
  case '<':
    return D == '<' ? Two(T::SHL) : D == '=' ? Two(T::LE) : make(T::LT, B, B + 1);
  case '>':
    return D == '>' ? Two(T::SHR) : D == '=' ? Two(T::GE) : make(T::GT, B, B + 1);
  case '=':
    return D == '=' ? Two(T::EQEQ) : make(T::EQ, B, B + 1);
  case '!':
    return D == '=' ? Two(T::NE) : make(T::BANG, B, B + 1);
  case '|':
    return D == '|' ? Two(T::OROR) : make(T::PIPE, B, B + 1);
  default:
    return D == '&' ? Two(T::ANDAND) : make(T::AMP, B, B + 1);
  }
}

void PtxTokenSource::lexAll(std::vector<PtxToken> &Out, const char *WholeSource) {
  Out.reserve(Text.size() / 4 + 16);
  for (;;) {
    RawToken R = lexOne();
    bool Eof = R.Type == antlr4::Token::EOF;
    Out.emplace_back(Eof ? UINT32_MAX : R.Type, static_cast<uint32_t>(R.Begin), static_cast<uint32_t>(R.End - 1),
                     static_cast<uint32_t>(Out.size()), WholeSource);
    ++Index;
    if (Eof)
      break;
  }
}
