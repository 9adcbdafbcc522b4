// The actions the generated PTX parser calls (grammar/PtxParser.g4): they build one chunk's IR directly, so no
// parse tree is ever kept. Private to ptx/lib; with TokenSource the only code that sees ANTLR types.
#pragma once

#include "ptxforge/ptx/Diagnostics.h"
#include "ptxforge/ptx/Module.h"

#include "llvm/ADT/StringMap.h"

#include <optional>

namespace antlr4 {
class Token;
}

namespace ptxforge::ptx::detail {

/// What one chunk of the source (some top-level items) turned into.
struct ChunkResult : ModuleItems {
  ChunkResult();
  /// Drops everything (a chunk re-parsed after a failed fast attempt starts over).
  void reset();
  std::unique_ptr<llvm::BumpPtrAllocator> Arena;
  std::unique_ptr<StringPool> Saver;
  std::optional<PtxVersion> Version;
  SourceLoc VersionLoc;
  std::optional<Target> Tgt;
  std::optional<unsigned> AddressSize;
};

class ParseActions {
public:
  using Tok = antlr4::Token *;
  ParseActions(llvm::StringRef WholeSource, DiagnosticEngine &Diags, ChunkResult &Out);
  ~ParseActions();

  // Module header and top-level directives.
  void version(Tok V);
  void target(Tok T);
  void addressSize(Tok N);
  void file(Tok Kw, Tok Index, Tok Path, Tok Stamp, Tok Size);
  void section(Tok Kw, Tok Name, Tok Body);
  void alias(Tok Kw, Tok A, Tok B);
  void linkage(Tok L);
  void pragma(Tok Kw, Tok S);
  void pragmaMore(Tok S);

  // Declarations.
  void beginDecl(Tok Space);
  void endDecl();
  void align(Tok N);
  void declType(Tok T);
  void declVector(Tok V);
  void ptr(Tok P);
  void ptrSpace(Tok S);
  void attribute(Tok A);
  void unknownAttribute(Tok D);
  void declName(Tok Name, Tok Count);
  void declDim(Tok Bracket, Tok Size);
  void beginInit();
  void endInit();
  void initListBegin(Tok Brace);
  void initListEnd();
  void initExpr();
  /// `sym`, `generic(sym)`, with the folded offset expression when HasOffset.
  void initSymbol(Tok Wrapper, Tok Sym, bool HasOffset);

  // Functions.
  void beginFunction(Tok Kw);
  void beginReturns();
  void beginParams();
  void functionName(Tok N);
  void beginParam(Tok Space);
  void paramName(Tok N);
  void endParam();
  void perf(Tok P);
  void perfValue(Tok V);
  void beginBody();
  void endFunction(bool WithBody);

  // Body statements.
  void label(Tok L);
  void scopeBegin(Tok Brace);
  void scopeEnd(Tok Brace);
  void loc(Tok Kw, Tok File, Tok Line, Tok Col);
  void locFunctionName(Tok Kw, Tok Label);
  void locInlinedAt(Tok Kw, Tok File, Tok Line, Tok Col);
  void beginTargets(Tok Kw);
  void targetName(Tok N);
  void endTargets();
  void beginPrototype(Tok Kw);
  void prototypeName(Tok N);
  void prototypePerf(Tok P);
  void endPrototype();

  // Instructions and operands.
  void beginInstruction(Tok At, Tok Bang, Tok Guard, Tok Op);
  void endInstruction(Tok Semi);
  void operandName(Tok Prefix, Tok Name, Tok Name2);
  void operandExpr();
  /// A parenthesised immediate `(4)` followed by an operator: it becomes the expression's first operand.
  void exprFromOperand();
  void groupBegin(Tok Open);
  void groupEnd(Tok Close);
  /// `[base]`, `[base+expr]` or `[expr]`: the offset is the folded expression when HasOffset.
  void addressBase(Tok Base, bool HasOffset);

  // Constant expressions (ConstantExpression.h), folded as they are parsed.
  void exprBegin();
  void exprInt(Tok I);
  void exprFloat(Tok F);
  void exprUnary(Tok Op);
  void exprCast(Tok Type);
  void exprBinary(Tok Op);
  void exprReduce();
  void exprEnd();
  void exprTernary(Tok Question);

private:
  struct Impl;
  std::unique_ptr<Impl> I;
};

} // namespace ptxforge::ptx::detail
