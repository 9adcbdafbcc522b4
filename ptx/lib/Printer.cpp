// The PTX printer. Everything is printed from the typed IR (nothing is echoed from the source but `.section`
// bodies), so a fixed point after one round trip shows the IR holds all there is.
#include "ptxforge/ptx/Printer.h"

#include "llvm/Support/Format.h"

#include <cstring>

using namespace ptxforge::ptx;

namespace {

void printInt(uint64_t Bits, bool Negative, IntFormat Format, bool Unsigned, llvm::raw_ostream &OS) {
  if (Negative)
    OS << '-' << (uint64_t(0) - Bits);
  else if (Format != IntFormat::Decimal)
    OS << llvm::format("0x%llX", static_cast<unsigned long long>(Bits));
  else
    OS << Bits;
  if (Unsigned)
    OS << 'U';
}

void printFloatBits(uint64_t Bits, bool F64, llvm::raw_ostream &OS) {
  if (F64)
    OS << llvm::format("0d%016llX", static_cast<unsigned long long>(Bits));
  else
    OS << llvm::format("0f%08X", static_cast<unsigned>(Bits));
}

class Printer {
public:
  Printer(const Module &M, llvm::raw_ostream &OS) : M(M), OS(OS) {}

  void module() {
    OS << "//\n// Printed by ptxforge\n//\n\n";
    OS << ".version " << M.Version.Major << '.' << M.Version.Minor << '\n';
    OS << ".target "
       << "sm_" << M.Tgt.Sm;
    if (M.Tgt.Suffix)
      OS << M.Tgt.Suffix;
    if (M.Tgt.TexmodeIndependent)
      OS << ", texmode_independent";
    if (M.Tgt.TexmodeUnified)
      OS << ", texmode_unified";
    if (M.Tgt.MapF64ToF32)
      OS << ", map_f64_to_f32";
    if (M.Tgt.Debug)
      OS << ", debug";
    OS << '\n';
    if (M.HasAddressSize)
      OS << ".address_size " << M.AddressSize << '\n';
    for (const TopLevelItem &Item : M.Order) {
      OS << '\n';
      switch (Item.Kind) {
      case TopLevelKind::Variable:
        variable(M.Globals[Item.Index], nullptr);
        OS << ";\n";
        break;
      case TopLevelKind::Function:
        function(*M.Functions[Item.Index]);
        break;
      case TopLevelKind::File: {
        const FileDirective &F = M.Files[Item.Index];
        OS << ".file " << F.Index << " \"" << F.Path << '"';
        if (F.HasTimestamp)
          OS << ", " << F.Timestamp << ", " << F.Size;
        OS << '\n';
        break;
      }
      case TopLevelKind::Section: {
        const DebugSection &S = M.Sections[Item.Index];
        OS << ".section " << S.Name << "\n{" << S.Body << "}\n";
        break;
      }
      case TopLevelKind::Pragma:
        pragma(M.Pragmas[Item.Index]);
        OS << '\n';
        break;
      case TopLevelKind::Alias: {
        const AliasDirective &A = M.Aliases[Item.Index];
        OS << ".alias " << A.Alias << ", " << A.Aliasee << ";\n";
        break;
      }
      }
    }
  }

  void pragma(const PragmaDirective &P) {
    OS << ".pragma ";
    for (size_t I = 0; I < P.Strings.size(); ++I)
      OS << (I ? ", " : "") << '"' << P.Strings[I] << '"';
    OS << ';';
  }

  void initializer(const Initializer &In) {
    switch (In.K) {
    case Initializer::Kind::List:
      OS << '{';
      for (size_t I = 0; I < In.Elements.size(); ++I) {
        OS << (I ? ", " : "");
        initializer(In.Elements[I]);
      }
      OS << '}';
      break;
    case Initializer::Kind::Int:
      printInt(In.Bits, In.Negative, IntFormat::Decimal, false, OS);
      break;
    case Initializer::Kind::Float:
      printFloatBits(In.Bits, In.FloatIsF64, OS);
      break;
    case Initializer::Kind::Symbol:
      if (!In.Wrapper.empty())
        OS << In.Wrapper << '(' << In.Name << ')';
      else
        OS << In.Name;
      if (int64_t Off = static_cast<int64_t>(In.Bits))
        OS << (Off < 0 ? "-" : "+") << (Off < 0 ? uint64_t(0) - In.Bits : In.Bits);
      break;
    }
  }

  /// A declaration without its terminator; Reg non-null prints a register declaration instead.
  void variable(const VariableDecl &V, const RegisterDecl *) {
    if (V.Link != Linkage::None)
      OS << '.' << spell(V.Link) << ' ';
    OS << '.' << spell(V.Space);
    if (V.Managed)
      OS << " .attribute(.managed)";
    if (V.Align && !V.IsPtr)
      OS << " .align " << V.Align;
    if (V.VectorWidth > 1)
      OS << " .v" << unsigned(V.VectorWidth);
    OS << " ." << spell(V.Type);
    if (V.IsPtr) {
      OS << " .ptr";
      if (V.PtrSpace != StateSpace::None)
        OS << '.' << spell(V.PtrSpace);
      if (V.PtrAlign)
        OS << ".align " << V.PtrAlign;
      if (V.Align)
        OS << " .align " << V.Align;
    }
    OS << ' ' << V.Name;
    for (uint64_t D : V.Dims) {
      OS << '[';
      if (D)
        OS << D;
      OS << ']';
    }
    if (V.HasInit) {
      OS << " = ";
      initializer(V.Init);
    }
  }

  void registerDecl(const RegisterDecl &R) {
    OS << ".reg ";
    if (R.VectorWidth > 1)
      OS << ".v" << unsigned(R.VectorWidth) << ' ';
    OS << '.' << spell(R.Type) << ' ' << R.Name;
    if (R.Count)
      OS << '<' << R.Count << '>';
    OS << ';';
  }

  void paramList(const std::vector<VariableDecl> &Params) {
    OS << '(';
    for (size_t I = 0; I < Params.size(); ++I) {
      OS << (I ? ",\n\t" : "\n\t");
      variable(Params[I], nullptr);
    }
    OS << (Params.empty() ? ")" : "\n)");
  }

  void function(const Function &F) {
    if (F.Link != Linkage::None)
      OS << '.' << spell(F.Link) << ' ';
    OS << (F.IsEntry ? ".entry " : ".func ");
    if (!F.Sig.Returns.empty()) {
      paramList(F.Sig.Returns);
      OS << ' ';
    }
    OS << F.Name;
    paramList(F.Sig.Params);
    OS << '\n';
    for (const PerfDirective &P : F.Perf) {
      OS << '.' << spell(P.Kind);
      for (size_t I = 0; I < P.Values.size(); ++I)
        OS << (I ? ", " : " ") << P.Values[I];
      OS << '\n';
    }
    for (const PragmaDirective &P : F.HeaderPragmas) {
      pragma(P);
      OS << '\n';
    }
    if (!F.HasBody) {
      OS << ";\n";
      return;
    }
    OS << "{\n";
    unsigned Depth = 1;
    for (const Statement &S : F.Body) {
      auto indent = [&] {
        for (unsigned I = 0; I < Depth; ++I)
          OS << '\t';
      };
      switch (S.Kind) {
      case StatementKind::Instruction:
        indent();
        printInstruction(F, F.Instructions[S.Index], OS);
        OS << '\n';
        break;
      case StatementKind::Label:
        OS << F.Labels[S.Index].Name << ":\n";
        break;
      case StatementKind::ScopeBegin:
        indent();
        OS << "{\n";
        ++Depth;
        break;
      case StatementKind::ScopeEnd:
        Depth = Depth > 1 ? Depth - 1 : 1;
        indent();
        OS << "}\n";
        break;
      case StatementKind::Register:
        indent();
        registerDecl(F.RegisterDecls[S.Index]);
        OS << '\n';
        break;
      case StatementKind::Variable:
        indent();
        variable(F.Locals[S.Index], nullptr);
        OS << ";\n";
        break;
      case StatementKind::Pragma:
        indent();
        pragma(F.Pragmas[S.Index]);
        OS << '\n';
        break;
      case StatementKind::Loc: {
        const LocDirective &L = F.Locs[S.Index];
        indent();
        OS << ".loc " << L.File << ' ' << L.Line << ' ' << L.Column;
        if (!L.FunctionName.empty()) {
          OS << ", function_name " << L.FunctionName;
          if (L.HasInlinedAt)
            OS << ", inlined_at " << L.InlinedFile << ' ' << L.InlinedLine << ' ' << L.InlinedColumn;
        }
        OS << '\n';
        break;
      }
      case StatementKind::TargetList:
        targetList(F.TargetLists[S.Index]);
        break;
      }
    }
    OS << "}\n";
  }

  void targetList(const TargetList &T) {
    OS << '\t';
    switch (T.K) {
    case TargetList::Kind::BranchTargets:
    case TargetList::Kind::CallTargets:
      OS << (T.K == TargetList::Kind::BranchTargets ? ".branchtargets " : ".calltargets ");
      for (size_t I = 0; I < T.Names.size(); ++I)
        OS << (I ? ", " : "") << T.Names[I];
      break;
    case TargetList::Kind::CallPrototype:
      OS << ".callprototype ";
      if (!T.Prototype.Returns.empty()) {
        paramList(T.Prototype.Returns);
        OS << ' ';
      }
      OS << '_';
      paramList(T.Prototype.Params);
      if (T.PrototypeNoReturn)
        OS << " .noreturn";
      break;
    }
    OS << ";\n";
  }

private:
  const Module &M;
  llvm::raw_ostream &OS;
};

void printOperand(const Function &F, const Operand &Op, llvm::raw_ostream &OS) {
  static const char Components[] = {0, 'x', 'y', 'z', 'w'};
  auto elements = [&](char Open, char Close) {
    OS << Open;
    for (size_t I = 0; I < Op.Elements.size(); ++I) {
      OS << (I ? ", " : "");
      printOperand(F, Op.Elements[I], OS);
    }
    OS << Close;
  };
  switch (Op.Kind) {
  case OperandKind::Register:
    if (Op.Negated) // `!p` for a predicate, `-r` for vmad's negated operands
      OS << (Op.Reg < F.Registers.size() && F.Registers[Op.Reg].Type != ScalarType::Pred ? "-" : "!");
    OS << F.registerName(Op.Reg);
    if (Op.Component)
      OS << '.' << Components[Op.Component];
    if (Op.SelKind) {
      OS << '.' << Op.SelKind;
      for (int K = Op.SelCount - 1; K >= 0; --K)
        OS << static_cast<char>('0' + ((Op.SelDigits >> (4 * K)) & 0xf));
    }
    break;
  case OperandKind::RegPair:
    OS << (Op.Reg == NoReg ? std::string("_") : F.registerName(Op.Reg)) << '|' << F.registerName(Op.Reg2);
    break;
  case OperandKind::Special:
    OS << spell(Op.Sreg);
    if (Op.Component)
      OS << '.' << Components[Op.Component];
    break;
  case OperandKind::Immediate:
    switch (Op.ImmKind) {
    case ImmediateKind::Int:
      printInt(Op.Bits, Op.Negated, Op.Format, Op.UnsignedSuffix, OS);
      break;
    case ImmediateKind::F32Bits:
      printFloatBits(Op.Bits, false, OS);
      break;
    case ImmediateKind::F64Bits:
      printFloatBits(Op.Bits, true, OS);
      break;
    case ImmediateKind::Decimal: {
      char Buf[64];
      snprintf(Buf, sizeof Buf, "%.17g", Op.Decimal);
      OS << Buf;
      if (!strpbrk(Buf, ".eEn"))
        OS << ".0";
      break;
    }
    }
    break;
  case OperandKind::Symbol:
    OS << (Op.Negated ? "!" : "") << Op.Name;
    break;
  case OperandKind::Address:
    OS << '[';
    if (Op.Reg != NoReg)
      OS << F.registerName(Op.Reg);
    else if (!Op.Name.empty())
      OS << Op.Name;
    if (Op.Reg != NoReg || !Op.Name.empty()) {
      if (Op.Bits)
        OS << '+' << static_cast<int64_t>(Op.Bits);
    } else {
      printInt(Op.Bits, false, Op.Format, false, OS);
    }
    for (const Operand &E : Op.Elements) {
      OS << ", ";
      printOperand(F, E, OS);
    }
    OS << ']';
    break;
  case OperandKind::Vector:
    elements('{', '}');
    break;
  case OperandKind::List:
    elements('(', ')');
    break;
  case OperandKind::Sink:
    OS << '_';
    break;
  }
}

} // namespace

std::string ptxforge::ptx::instructionName(const Instruction &I) {
  std::string S = spell(I.Op).str();
  for (const Qualifier &Q : I.Qualifiers) {
    S += '.';
    switch (Q.K) {
    case Qualifier::Kind::Type:
      S += spell(static_cast<ScalarType>(Q.Value)).str();
      break;
    case Qualifier::Kind::Vector:
      S += 'v' + std::to_string(Q.Value);
      break;
    case Qualifier::Kind::Modifier:
      S += spell(static_cast<Modifier>(Q.Value)).str();
      break;
    }
  }
  return S;
}

void ptxforge::ptx::printInstruction(const Function &F, const Instruction &I, llvm::raw_ostream &OS) {
  if (I.Guard != NoReg)
    OS << '@' << (I.GuardNegated ? "!" : "") << F.registerName(I.Guard) << ' ';
  OS << instructionName(I);
  for (size_t K = 0; K < I.Operands.size(); ++K) {
    OS << (K ? ", " : " ");
    printOperand(F, I.Operands[K], OS);
  }
  OS << ';';
}

void ptxforge::ptx::printModule(const Module &M, llvm::raw_ostream &OS) { Printer(M, OS).module(); }
