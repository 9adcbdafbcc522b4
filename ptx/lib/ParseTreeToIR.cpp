// The IR builder behind the grammar actions: turns the token stream of one chunk into module items, resolving
// registers and scoped local names on the fly. Labels, globals and functions are resolved by the verifier,
// after all chunks are merged.
#include "ParseActions.h"

#include "ConstantExpression.h"
#include "Literals.h"
#include "ptxforge/ptx/Opcode.h"

#include "antlr4-runtime.h"
#include "llvm/ADT/StringSwitch.h"

using namespace ptxforge::ptx;
using namespace ptxforge::ptx::detail;

namespace {

/// More registers than this in one function is input meant to exhaust memory (ptxas itself gives up far earlier).
constexpr uint64_t MaxRegistersPerFunction = 1u << 24;
/// Array sizes and initializer nesting beyond these are rejected instead of allocated.
constexpr uint64_t MaxVariableBytes = uint64_t(1) << 40;
constexpr unsigned MaxNesting = 256;

struct Scope {
  llvm::StringMap<RegId> Regs;                           ///< plain register names
  llvm::StringMap<std::pair<RegId, uint32_t>> RegRanges; ///< `%r<N>` prefixes: first id, count
  llvm::StringMap<uint32_t> Locals;                      ///< local variables (index into Function::Locals)
};

/// A parsed opcode token, cached per spelling (a module repeats few distinct ones).
struct ParsedOpcode {
  bool Valid = false; ///< opcode and every qualifier known
  bool OpKnown = false;
  Opcode Op = Opcode::Ret;
  size_t BadOffset = 0, BadLength = 0; ///< the first unknown `.part`
  llvm::SmallVector<Qualifier, 5> Qualifiers;
};

struct Group {
  char Open;
  llvm::SmallVector<Operand, 4> Elements;
  Operand Addr; ///< '[' groups: base and offset
  SourceLoc Loc;
};

enum class DeclMode { Module, Body, Params, Returns, Prototype };

} // namespace

struct ParseActions::Impl {
  llvm::StringRef Src;
  DiagnosticEngine &Diags;
  ChunkResult &Out;

  Linkage PendingLinkage = Linkage::None;

  // Declaration under construction.
  StateSpace DeclSpace = StateSpace::None;
  VariableDecl Attr; ///< attributes shared by the names of one declaration
  bool InPtr = false;
  bool DeclIsRegister = false;
  std::vector<VariableDecl> *DeclTarget = nullptr; ///< where declared variables go
  VariableDecl *LastDecl = nullptr;
  RegisterDecl *LastReg = nullptr;
  std::vector<Initializer *> InitStack;

  // Function under construction.
  std::unique_ptr<Function> Fn;
  Signature *CurSig = nullptr;
  std::vector<VariableDecl> *CurParams = nullptr;
  std::vector<Scope> Scopes;
  llvm::StringMap<uint32_t> LabelIndex;
  uint64_t RegisterCount = 0;

  // Target lists and prototypes.
  TargetList *CurTargets = nullptr;

  // Instruction under construction.
  Instruction Inst;
  bool InstValid = false;
  std::vector<Group> Groups;
  llvm::StringMap<ParsedOpcode> OpcodeCache;

  ConstExprEvaluator Expr;

  Impl(llvm::StringRef Src, DiagnosticEngine &Diags, ChunkResult &Out)
      : Src(Src), Diags(Diags), Out(Out), Expr(Diags) {}

  static SourceLoc loc(Tok T) { return SourceLoc{static_cast<uint32_t>(T->getStartIndex())}; }
  llvm::StringRef text(Tok T) const {
    size_t B = T->getStartIndex(), E = T->getStopIndex();
    if (T->getType() == antlr4::Token::EOF || B >= Src.size() || E < B)
      return llvm::StringRef();
    // Tokens conjured by error recovery carry text not in the source; use theirs.
    llvm::StringRef S = Src.slice(B, E + 1);
    return S;
  }
  StringPool &saver() { return Fn ? Fn->strings() : *Out.Saver; }
  llvm::StringRef save(llvm::StringRef S) { return saver().save(S); }

  std::optional<uint64_t> integer(Tok T, bool Negative = false) {
    IntLiteral L;
    if (!parseIntLiteral(text(T), L)) {
      Diags.error(loc(T), "integer literal '" + text(T).str() + "' does not fit in 64 bits");
      return std::nullopt;
    }
    return Negative ? uint64_t(0) - L.Value : L.Value;
  }

  // ---- registers and scoped names -------------------------------------------------------------------
  std::optional<RegId> lookupRegister(llvm::StringRef Name) const {
    for (auto S = Scopes.rbegin(); S != Scopes.rend(); ++S) {
      auto It = S->Regs.find(Name);
      if (It != S->Regs.end())
        return It->second;
    }
    // `%r17` -> prefix `%r`, index 17 (leading zeros would name another register: `%r07` is not `%r7`).
    size_t D = Name.size();
    while (D > 0 && Name[D - 1] >= '0' && Name[D - 1] <= '9')
      --D;
    if (D == Name.size() || D == 0)
      return std::nullopt;
    llvm::StringRef Digits = Name.substr(D);
    if (Digits.size() > 1 && Digits[0] == '0')
      return std::nullopt;
    uint64_t N;
    if (Digits.size() > 10 || Digits.getAsInteger(10, N))
      return std::nullopt;
    llvm::StringRef Prefix = Name.substr(0, D);
    for (auto S = Scopes.rbegin(); S != Scopes.rend(); ++S) {
      auto It = S->RegRanges.find(Prefix);
      if (It != S->RegRanges.end())
        return N < It->second.second ? std::optional<RegId>(It->second.first + RegId(N)) : std::nullopt;
    }
    return std::nullopt;
  }

  std::optional<SymbolRef> lookupLocalName(llvm::StringRef Name) const {
    for (auto S = Scopes.rbegin(); S != Scopes.rend(); ++S) {
      auto It = S->Locals.find(Name);
      if (It != S->Locals.end())
        return SymbolRef{SymbolKind::LocalVariable, It->second};
    }
    if (!Fn)
      return std::nullopt;
    for (uint32_t I = 0; I < Fn->Sig.Params.size(); ++I)
      if (Fn->Sig.Params[I].Name == Name && Fn->Sig.Params[I].Space != StateSpace::Reg)
        return SymbolRef{SymbolKind::Param, I};
    for (uint32_t I = 0; I < Fn->Sig.Returns.size(); ++I)
      if (Fn->Sig.Returns[I].Name == Name && Fn->Sig.Returns[I].Space != StateSpace::Reg)
        return SymbolRef{SymbolKind::ReturnParam, I};
    return std::nullopt;
  }

  void declareRegister(llvm::StringRef Name, uint64_t Count, bool Parameterized, ScalarType Ty, unsigned Vec,
                       SourceLoc L) {
    if (!Fn || Scopes.empty())
      return;
    uint64_t N = Parameterized ? Count : 1;
    if (RegisterCount + N > MaxRegistersPerFunction) {
      Diags.error(L, "too many registers: " + std::to_string(RegisterCount + N) + " in one function (limit " +
                         std::to_string(MaxRegistersPerFunction) + ")");
      return;
    }
    Scope &S = Scopes.back();
    if (S.Regs.count(Name) || S.RegRanges.count(Name)) {
      Diags.error(L, "redefinition of register '" + Name.str() + "'");
      return;
    }
    RegisterDecl D;
    D.Name = save(Name);
    D.Type = Ty;
    D.VectorWidth = static_cast<uint8_t>(Vec);
    D.Count = Parameterized ? static_cast<uint32_t>(Count) : 0;
    D.First = static_cast<RegId>(RegisterCount);
    D.Loc = L;
    uint32_t DeclIdx = static_cast<uint32_t>(Fn->RegisterDecls.size());
    Fn->Registers.resize(RegisterCount + N, RegisterInfo{Ty, static_cast<uint8_t>(Vec), DeclIdx});
    RegisterCount += N;
    if (Parameterized)
      S.RegRanges[D.Name] = {D.First, D.Count};
    else
      S.Regs[D.Name] = D.First;
    if (Fn->HasBody)
      statement(StatementKind::Register, Fn->RegisterDecls.size());
    Fn->RegisterDecls.push_back(D);
    LastReg = &Fn->RegisterDecls.back();
  }

  void statement(StatementKind K, size_t Index) { Fn->Body.push_back(Statement{K, static_cast<uint32_t>(Index)}); }

  // ---- opcodes ------------------------------------------------------------------------------------
  const ParsedOpcode &parseOpcode(Tok T) {
    llvm::StringRef Spelling = text(T);
    auto [It, Inserted] = OpcodeCache.try_emplace(Spelling);
    ParsedOpcode &P = It->second;
    if (!Inserted)
      return P;
    size_t Pos = std::min(Spelling.find('.'), Spelling.size());
    auto Op = lookupOpcode(Spelling.substr(0, Pos));
    if (!Op)
      return P;
    P.OpKnown = true;
    P.Op = *Op;
    while (Pos < Spelling.size()) {
      size_t Next = std::min(Spelling.find('.', Pos + 1), Spelling.size());
      llvm::StringRef Part = Spelling.slice(Pos + 1, Next);
      if (auto Ty = lookupType(Part)) {
        P.Qualifiers.push_back(Qualifier::type(*Ty));
      } else if (Part == "v2" || Part == "v4" || Part == "v8" || Part == "v16") {
        P.Qualifiers.push_back(Qualifier::vector(Part == "v2" ? 2 : Part == "v4" ? 4 : Part == "v8" ? 8 : 16));
      } else if (auto M = lookupModifier(Part)) {
        P.Qualifiers.push_back(Qualifier::modifier(*M));
      } else {
        P.BadOffset = Pos;
        P.BadLength = Next - Pos;
        return P;
      }
      Pos = Next;
    }
    P.Valid = true;
    return P;
  }
};

ChunkResult::ChunkResult() { reset(); }

void ChunkResult::reset() {
  Arena = std::make_unique<llvm::BumpPtrAllocator>();
  Saver = std::make_unique<StringPool>(*Arena);
  Version.reset();
  VersionLoc = SourceLoc();
  Tgt.reset();
  AddressSize.reset();
  static_cast<ModuleItems &>(*this) = ModuleItems();
}

ParseActions::ParseActions(llvm::StringRef WholeSource, DiagnosticEngine &Diags, ChunkResult &Out)
    : I(std::make_unique<Impl>(WholeSource, Diags, Out)) {}
ParseActions::~ParseActions() = default;

// ---- module header ----------------------------------------------------------------------------------

void ParseActions::version(Tok V) {
  llvm::StringRef S = I->text(V);
  auto [Maj, Min] = S.split('.');
  unsigned A, B;
  if (Maj.getAsInteger(10, A) || Min.getAsInteger(10, B) || Min.size() != 1 || A > 99) {
    I->Diags.error(I->loc(V), "malformed PTX ISA version '" + S.str() + "'");
    return;
  }
  if (I->Out.Version) {
    I->Diags.error(I->loc(V), "duplicate '.version' directive");
    return;
  }
  I->Out.Version = PtxVersion{A, B};
  I->Out.VersionLoc = I->loc(V);
}

void ParseActions::target(Tok T) {
  llvm::StringRef S = I->text(T);
  if (!I->Out.Tgt) {
    I->Out.Tgt.emplace();
    I->Out.Tgt->Loc = I->loc(T);
  }
  Target &Tg = *I->Out.Tgt;
  if (S.consume_front("sm_")) {
    char Suffix = 0;
    if (S.consume_back("a"))
      Suffix = 'a';
    else if (S.consume_back("f"))
      Suffix = 'f';
    unsigned N;
    if (S.getAsInteger(10, N) || N < 10 || N > 1300) {
      I->Diags.error(I->loc(T), "unknown target '" + I->text(T).str() + "'");
      return;
    }
    if (Tg.Sm) {
      I->Diags.error(I->loc(T), "more than one sm_XX in '.target'");
      return;
    }
    Tg.Sm = N;
    Tg.Suffix = Suffix;
    return;
  }
  if (S == "texmode_independent")
    Tg.TexmodeIndependent = true;
  else if (S == "texmode_unified")
    Tg.TexmodeUnified = true;
  else if (S == "debug")
    Tg.Debug = true;
  else if (S == "map_f64_to_f32")
    Tg.MapF64ToF32 = true;
  else
    I->Diags.error(I->loc(T), "unknown target '" + S.str() + "'");
}

void ParseActions::addressSize(Tok N) {
  auto V = I->integer(N);
  if (!V)
    return;
  if (*V != 32 && *V != 64) {
    I->Diags.error(I->loc(N), "'.address_size' must be 32 or 64");
    return;
  }
  I->Out.AddressSize = static_cast<unsigned>(*V);
}

void ParseActions::file(Tok Kw, Tok Index, Tok Path, Tok Stamp, Tok Size) {
  FileDirective F;
  F.Loc = I->loc(Kw);
  auto Idx = I->integer(Index);
  F.Index = Idx && *Idx <= UINT32_MAX ? static_cast<uint32_t>(*Idx) : 0;
  llvm::StringRef P = I->text(Path);
  F.Path = I->Out.Saver->save(P.size() >= 2 ? P.slice(1, P.size() - 1) : P);
  if (Stamp && Size) {
    F.HasTimestamp = true;
    F.Timestamp = I->integer(Stamp).value_or(0);
    F.Size = I->integer(Size).value_or(0);
  }
  I->Out.Order.push_back({TopLevelKind::File, static_cast<uint32_t>(I->Out.Files.size())});
  I->Out.Files.push_back(F);
}

void ParseActions::section(Tok Kw, Tok Name, Tok Body) {
  DebugSection S;
  S.Loc = I->loc(Kw);
  S.Name = I->Out.Saver->save(I->text(Name));
  llvm::StringRef B = I->text(Body);
  S.Body = I->Out.Saver->save(B.size() >= 2 ? B.slice(1, B.size() - 1) : B);
  I->Out.Order.push_back({TopLevelKind::Section, static_cast<uint32_t>(I->Out.Sections.size())});
  I->Out.Sections.push_back(S);
}

void ParseActions::alias(Tok Kw, Tok A, Tok B) {
  I->Out.Order.push_back({TopLevelKind::Alias, static_cast<uint32_t>(I->Out.Aliases.size())});
  I->Out.Aliases.push_back({I->Out.Saver->save(I->text(A)), I->Out.Saver->save(I->text(B)), I->loc(Kw)});
}

void ParseActions::linkage(Tok L) {
  llvm::StringRef S = I->text(L);
  Linkage New = llvm::StringSwitch<Linkage>(S)
                    .Case(".visible", Linkage::Visible)
                    .Case(".extern", Linkage::Extern)
                    .Case(".weak", Linkage::Weak)
                    .Case(".common", Linkage::Common)
                    .Default(Linkage::None);
  if (I->PendingLinkage != Linkage::None)
    I->Diags.error(I->loc(L), "more than one linkage directive ('" + S.str() + "')");
  I->PendingLinkage = New;
}

static llvm::StringRef unquote(llvm::StringRef S) { return S.size() >= 2 ? S.slice(1, S.size() - 1) : S; }

void ParseActions::pragma(Tok Kw, Tok S) {
  PragmaDirective P;
  P.Loc = I->loc(Kw);
  P.Strings.push_back(I->save(unquote(I->text(S))));
  if (I->Fn && I->Fn->HasBody) {
    I->statement(StatementKind::Pragma, I->Fn->Pragmas.size());
    I->Fn->Pragmas.push_back(P);
  } else if (I->Fn) {
    I->Fn->HeaderPragmas.push_back(P);
  } else {
    I->Out.Order.push_back({TopLevelKind::Pragma, static_cast<uint32_t>(I->Out.Pragmas.size())});
    I->Out.Pragmas.push_back(P);
  }
}

void ParseActions::pragmaMore(Tok S) {
  PragmaDirective *P = nullptr;
  if (I->Fn && I->Fn->HasBody && !I->Fn->Pragmas.empty())
    P = &I->Fn->Pragmas.back();
  else if (I->Fn && !I->Fn->HeaderPragmas.empty())
    P = &I->Fn->HeaderPragmas.back();
  else if (!I->Out.Pragmas.empty())
    P = &I->Out.Pragmas.back();
  if (P)
    P->Strings.push_back(I->save(unquote(I->text(S))));
}

#include "ParseDeclarations.inc"
#include "ParseInstructions.inc"
// Uses pushOperand from the instructions.
#include "ParseExpressions.inc"
