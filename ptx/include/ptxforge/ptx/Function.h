// A `.entry` kernel or `.func` device function: signature, declarations and body statements in source order.
#pragma once

#include "ptxforge/ptx/Instruction.h"
#include "ptxforge/ptx/Variable.h"

#include "ptxforge/ptx/StringPool.h"
#include "llvm/Support/Allocator.h"

#include <memory>
#include <string>
#include <vector>

namespace ptxforge::ptx {

/// Performance-tuning directives (`.maxntid 256,1,1`, `.minnctapersm 2`, ...).
enum class PerfDirectiveKind : uint8_t {
  Maxntid,
  Reqntid,
  Minnctapersm,
  Maxnctapersm,
  Maxnreg,
  Maxclusterrank,
  Reqnctapercluster,
  Explicitcluster,
  Noreturn,
  Blocksareclusters
};
llvm::StringRef spell(PerfDirectiveKind K);

struct PerfDirective {
  PerfDirectiveKind Kind;
  llvm::SmallVector<uint64_t, 3> Values;
  SourceLoc Loc;
};

struct Label {
  llvm::StringRef Name;
  SourceLoc Loc;
};

/// `.loc file line col [, function_name label, inlined_at file line col]`
struct LocDirective {
  uint32_t File = 0, Line = 0, Column = 0;
  llvm::StringRef FunctionName;
  bool HasInlinedAt = false;
  uint32_t InlinedFile = 0, InlinedLine = 0, InlinedColumn = 0;
  SourceLoc Loc;
};

/// `.pragma "a", "b";`
struct PragmaDirective {
  llvm::SmallVector<llvm::StringRef, 1> Strings; ///< without quotes, escapes kept as written
  SourceLoc Loc;
};

/// A function signature: return parameters and parameters (`.callprototype` uses one too).
struct Signature {
  std::vector<VariableDecl> Returns;
  std::vector<VariableDecl> Params;
};

/// `label: .branchtargets L1, L2;` / `label: .calltargets f, g;` / `label: .callprototype (...) _ (...);`
struct TargetList {
  enum class Kind : uint8_t { BranchTargets, CallTargets, CallPrototype };
  Kind K;
  uint32_t LabelIndex = 0; ///< the label naming it
  llvm::SmallVector<llvm::StringRef, 4> Names;
  Signature Prototype; ///< CallPrototype
  bool PrototypeNoReturn = false;
  SourceLoc Loc;
};

enum class StatementKind : uint8_t {
  Instruction,
  Label,
  ScopeBegin,
  ScopeEnd,
  Register,
  Variable,
  Pragma,
  Loc,
  TargetList
};

/// One body statement: a kind and an index into that kind's table in the Function.
struct Statement {
  StatementKind Kind;
  uint32_t Index;
};

class Function {
public:
  Function();
  Function(const Function &) = delete;
  Function &operator=(const Function &) = delete;

  llvm::StringRef Name;
  bool IsEntry = false;
  Linkage Link = Linkage::None;
  Signature Sig;
  std::vector<PerfDirective> Perf;
  std::vector<PragmaDirective> HeaderPragmas; ///< `.pragma` between the signature and the body
  bool HasBody = false;                       ///< false for a prototype declaration `...;`
  SourceLoc Loc;                              ///< the `.entry`/`.func` keyword

  std::vector<Statement> Body;
  std::vector<Instruction> Instructions;
  std::vector<Label> Labels;
  std::vector<RegisterDecl> RegisterDecls;
  std::vector<RegisterInfo> Registers; ///< indexed by RegId
  std::vector<VariableDecl> Locals;    ///< `.local/.shared/.param/...` declared in the body
  std::vector<PragmaDirective> Pragmas;
  std::vector<LocDirective> Locs;
  std::vector<TargetList> TargetLists;

  /// Owns the names this function's declarations and operands point to.
  StringPool &strings() { return Saver; }
  /// Owns arrays of operands (vector elements, lists).
  llvm::BumpPtrAllocator &arena() { return *Arena; }

  /// The name a register prints as (`%r7` for the 8th of `%r<42>`).
  std::string registerName(RegId R) const;

private:
  std::unique_ptr<llvm::BumpPtrAllocator> Arena;
  StringPool Saver;
};

} // namespace ptxforge::ptx
