// The verifier: resolves the names the parser could not (labels, globals, functions) and checks headers,
// opcodes, modifiers, operand counts and types, state spaces and target/version requirements. It reports
// every problem it finds, with its location, and never stops at the first.
#include "ptxforge/ptx/Verifier.h"

#include "ptxforge/ptx/OpcodeInfo.h"
#include "ptxforge/ptx/Printer.h"
#include "ptxforge/ptx/Requirements.h"

#include "Tcgen05Forms.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace ptxforge::ptx;

namespace {

bool registerFits(ScalarType Inst, ScalarType Reg) {
  if (Inst == Reg)
    return true;
  if (Inst == ScalarType::Pred || Reg == ScalarType::Pred)
    return false;
  if (bitWidth(Inst) != bitWidth(Reg))
    return false;
  TypeKind I = kindOf(Inst), R = kindOf(Reg);
  if (I == TypeKind::Bits || R == TypeKind::Bits)
    return true;
  bool IInt = I == TypeKind::Unsigned || I == TypeKind::Signed;
  bool RInt = R == TypeKind::Unsigned || R == TypeKind::Signed;
  return IInt && RInt;
}

/// ld/st/atom values: sub-word integers may live in wider integer registers.
bool memoryValueFits(ScalarType Mem, ScalarType Reg) {
  if (registerFits(Mem, Reg))
    return true;
  return isInteger(Mem) && isInteger(Reg) && bitWidth(Reg) >= bitWidth(Mem);
}

std::string typeName(ScalarType T) { return "." + spell(T).str(); }

class Verifier {
public:
  Verifier(Module &M, DiagnosticEngine &Diags) : M(M), Diags(Diags) {}

  bool run() {
    size_t Before = Diags.errorCount();
    header();
    indexModule();
    for (auto &F : M.Functions)
      function(*F);
    for (VariableDecl &V : M.Globals)
      if (V.HasInit)
        initializer(V.Init);
    return Diags.errorCount() == Before;
  }

private:
  Module &M;
  DiagnosticEngine &Diags;
  llvm::StringMap<uint32_t> Globals, Functions;

  void header() {
    if (!M.Version.Major) {
      Diags.error(SourceLoc{0}, "missing '.version' directive (the module must begin with it)");
    } else if (M.Version.value() > MaxSupportedPtxVersion) {
      Diags.error(M.VersionLoc, "PTX ISA version " + ptxVersionName(M.Version.value()) +
                                    " is not supported (ptxforge supports up to " +
                                    ptxVersionName(MaxSupportedPtxVersion) + ")");
    } else if (std::min(M.Tgt.Loc.Offset, M.Order.empty() ? UINT32_MAX : itemLoc(M.Order.front()).Offset) <
               M.VersionLoc.Offset) {
      // `.version` must come before everything else (ptxas: "Missing .version directive at start of file").
      Diags.error(M.VersionLoc, "'.version' must be the first directive of the module");
    }
    if (!M.Tgt.Loc.isValid()) {
      Diags.error(SourceLoc{0}, "missing '.target' directive");
      return;
    }
    if (!M.Tgt.Sm) {
      Diags.error(M.Tgt.Loc, "'.target' names no sm_XX architecture");
      return;
    }
    if (!isKnownSm(M.Tgt.Sm) || (M.Tgt.Suffix == 'a' && M.Tgt.Sm < 90) || (M.Tgt.Suffix == 'f' && M.Tgt.Sm < 100)) {
      Diags.error(M.Tgt.Loc, "unknown target '" + smName(M.Tgt.Sm, M.Tgt.Suffix) + "'");
      return;
    }
    unsigned Need = ptxVersionForTarget(M.Tgt.Sm, M.Tgt.Suffix);
    if (M.Version.Major && Need > M.Version.value())
      Diags.error(M.Tgt.Loc, "'.target " + smName(M.Tgt.Sm, M.Tgt.Suffix) + "' requires PTX ISA " +
                                 ptxVersionName(Need) + " or higher, but the module declares '.version " +
                                 ptxVersionName(M.Version.value()) + "'");
  }

  SourceLoc itemLoc(TopLevelItem It) const {
    switch (It.Kind) {
    case TopLevelKind::Variable:
      return M.Globals[It.Index].Loc;
    case TopLevelKind::Function:
      return M.Functions[It.Index]->Loc;
    case TopLevelKind::File:
      return M.Files[It.Index].Loc;
    case TopLevelKind::Section:
      return M.Sections[It.Index].Loc;
    case TopLevelKind::Pragma:
      return M.Pragmas[It.Index].Loc;
    case TopLevelKind::Alias:
      return M.Aliases[It.Index].Loc;
    }
    return SourceLoc();
  }

  void indexModule() {
    for (uint32_t I = 0; I < M.Globals.size(); ++I) {
      auto [It, New] = Globals.try_emplace(M.Globals[I].Name, I);
      if (!New && M.Globals[I].Link != Linkage::Extern && M.Globals[It->second].Link != Linkage::Extern)
        Diags.error(M.Globals[I].Loc, "redefinition of '" + M.Globals[I].Name.str() + "'");
    }
    for (uint32_t I = 0; I < M.Functions.size(); ++I) {
      Function &F = *M.Functions[I];
      auto [It, New] = Functions.try_emplace(F.Name, I);
      if (!New) {
        Function &Prev = *M.Functions[It->second];
        if (Prev.HasBody && F.HasBody)
          Diags.error(F.Loc, "redefinition of function '" + F.Name.str() + "'");
        else if (F.HasBody)
          It->second = I; // the definition wins over its prototype
      }
      if (Globals.count(F.Name))
        Diags.error(F.Loc, "'" + F.Name.str() + "' is declared as both a variable and a function");
      if (F.IsEntry)
        for (const VariableDecl &P : F.Sig.Params)
          if (P.Space != StateSpace::Param)
            Diags.error(P.Loc, "kernel parameters must be in the '.param' state space");
      parameterNames(F);
      declarationTypes(F);
    }
    for (const VariableDecl &V : M.Globals)
      declarationType(V.Type, V.Loc);
  }

  /// A function's parameters and return parameters share one scope (ptxas: "Duplicate definition").
  void parameterNames(const Function &F) {
    llvm::StringSet<> Seen;
    for (const auto *List : {&F.Sig.Returns, &F.Sig.Params})
      for (const VariableDecl &P : *List)
        if (!P.Name.empty() && !Seen.insert(P.Name).second)
          Diags.error(P.Loc, "duplicate definition of parameter '" + P.Name.str() + "'");
  }

  void declarationTypes(const Function &F) {
    for (const auto *List : {&F.Sig.Returns, &F.Sig.Params, &F.Locals})
      for (const VariableDecl &V : *List)
        declarationType(V.Type, V.Loc);
    for (const RegisterDecl &R : F.RegisterDecls)
      declarationType(R.Type, R.Loc);
  }

  /// The types a variable or register may have: the fp8/fp6/fp4 types and the packed integer pairs exist only on
  /// instructions, and .b128 only from PTX ISA 8.3 on (ptxas says both).
  void declarationType(ScalarType T, SourceLoc Loc) {
    switch (T) {
    case ScalarType::E4M3:
    case ScalarType::E5M2:
    case ScalarType::E2M3:
    case ScalarType::E3M2:
    case ScalarType::E2M1:
    case ScalarType::UE8M0:
    case ScalarType::UE4M3:
    case ScalarType::E4M3x2:
    case ScalarType::E5M2x2:
    case ScalarType::E2M3x2:
    case ScalarType::E3M2x2:
    case ScalarType::E2M1x2:
    case ScalarType::UE8M0x2:
    case ScalarType::S16x2:
    case ScalarType::U16x2:
      Diags.error(Loc, "type " + typeName(T) + " may only be used as an instruction type");
      break;
    case ScalarType::B128:
      if (M.Version.Major && M.Version.value() < 83)
        Diags.error(Loc, "type .b128 requires PTX ISA 8.3 or higher, but the module declares '.version " +
                             ptxVersionName(M.Version.value()) + "'");
      break;
    default:
      break;
    }
  }

  void initializer(Initializer &In) {
    if (In.K == Initializer::Kind::List) {
      for (Initializer &E : In.Elements)
        initializer(E);
    } else if (In.K == Initializer::Kind::Symbol && !Globals.count(In.Name) && !Functions.count(In.Name)) {
      Diags.error(In.Loc, "use of undefined symbol '" + In.Name.str() + "' in initializer");
    }
  }

  /// Resolves a symbol operand: local names were resolved by the parser; labels, then functions, then globals.
  bool resolve(Function &F, const llvm::StringMap<uint32_t> &Labels, Operand &Op) {
    if (Op.Target.Kind != SymbolKind::Unresolved)
      return true;
    if (auto It = Labels.find(Op.Name); It != Labels.end())
      Op.Target = {SymbolKind::Label, It->second};
    else if (auto It2 = Functions.find(Op.Name); It2 != Functions.end())
      Op.Target = {SymbolKind::Function, It2->second};
    else if (auto It3 = Globals.find(Op.Name); It3 != Globals.end())
      Op.Target = {SymbolKind::Variable, It3->second};
    else {
      Diags.error(Op.Loc, "use of undefined symbol '" + Op.Name.str() + "'");
      return false;
    }
    return true;
  }

  void resolveOperands(Function &F, const llvm::StringMap<uint32_t> &Labels, llvm::ArrayRef<Operand> Ops) {
    for (const Operand &C : Ops) {
      Operand &Op = const_cast<Operand &>(C);
      if (Op.Kind == OperandKind::Symbol || (Op.Kind == OperandKind::Address && !Op.Name.empty()))
        resolve(F, Labels, Op);
      if (!Op.Elements.empty())
        resolveOperands(F, Labels, Op.Elements);
    }
  }

  StateSpace symbolSpace(const Function &F, const Operand &Op) const {
    switch (Op.Target.Kind) {
    case SymbolKind::Variable:
      return M.Globals[Op.Target.Index].Space;
    case SymbolKind::LocalVariable:
      return F.Locals[Op.Target.Index].Space;
    case SymbolKind::Param:
    case SymbolKind::ReturnParam:
      return StateSpace::Param;
    default:
      return StateSpace::None;
    }
  }

  void function(Function &F) {
    llvm::StringMap<uint32_t> Labels;
    for (uint32_t I = 0; I < F.Labels.size(); ++I)
      Labels.try_emplace(F.Labels[I].Name, I);
    for (TargetList &T : F.TargetLists)
      for (llvm::StringRef N : T.Names) {
        bool Ok = T.K == TargetList::Kind::BranchTargets ? Labels.count(N) != 0 : Functions.count(N) != 0;
        if (!Ok)
          Diags.error(T.Loc, "'" + N.str() + "' is not a " +
                                 (T.K == TargetList::Kind::BranchTargets ? "label" : "function") + " of this module");
      }
    for (Instruction &I : F.Instructions) {
      resolveOperands(F, Labels, I.Operands);
      instruction(F, I);
    }
    clusterDirectives(F);
  }

  /// .reqnctapercluster, .maxclusterrank and .explicitcluster: kernels of sm_90 and PTX ISA 7.8 on, and not the
  /// first two together (ptxas: "Conflicting directives").
  void clusterDirectives(const Function &F) {
    const PerfDirective *Req = nullptr, *Max = nullptr;
    for (const PerfDirective &P : F.Perf) {
      if (P.Kind != PerfDirectiveKind::Reqnctapercluster && P.Kind != PerfDirectiveKind::Maxclusterrank &&
          P.Kind != PerfDirectiveKind::Explicitcluster)
        continue;
      std::string Name = "'." + spell(P.Kind).str() + "'";
      if (P.Kind == PerfDirectiveKind::Reqnctapercluster)
        Req = &P;
      if (P.Kind == PerfDirectiveKind::Maxclusterrank)
        Max = &P;
      if (!F.IsEntry)
        Diags.error(P.Loc, Name + " applies to kernels (.entry) only");
      if (M.Tgt.Sm && M.Tgt.Sm < 90)
        Diags.error(P.Loc,
                    Name + " requires sm_90 or higher, but the module targets " + smName(M.Tgt.Sm, M.Tgt.Suffix));
      if (M.Version.Major && M.Version.value() < 78)
        Diags.error(P.Loc, Name + " requires PTX ISA 7.8 or higher, but the module declares '.version " +
                               ptxVersionName(M.Version.value()) + "'");
      size_t Want = P.Kind == PerfDirectiveKind::Explicitcluster ? 0 : 1;
      if (P.Values.size() < Want || (P.Kind != PerfDirectiveKind::Reqnctapercluster && P.Values.size() > Want))
        Diags.error(P.Loc, Name + " takes " + (Want ? "one value" : "no value"));
    }
    if (Req && Max)
      Diags.error(Req->Loc, "conflicting directives: .reqnctapercluster and .maxclusterrank cannot both be specified");
  }

  void operandType(const Function &F, const Operand &Op, ScalarType T, bool Memory, const Instruction &I,
                   unsigned Index) {
    if (T == ScalarType::None)
      return;
    if (Op.Kind == OperandKind::Vector) {
      for (const Operand &E : Op.Elements)
        operandType(F, E, T, Memory, I, Index);
      return;
    }
    if (Op.Kind == OperandKind::Immediate) {
      if (Op.ImmKind != ImmediateKind::Int && isInteger(T) && T != ScalarType::B32 && T != ScalarType::B64 &&
          T != ScalarType::B16)
        Diags.error(Op.Loc, "floating-point immediate for operand " + std::to_string(Index + 1) + " of '" +
                                instructionName(I) + "', expected " + typeName(T));
      else if (Op.ImmKind == ImmediateKind::Int && isInteger(T) && bitWidth(T) < 64) {
        uint64_t Max = (uint64_t(1) << bitWidth(T)) - 1;
        int64_t S = static_cast<int64_t>(Op.Bits);
        bool Fits = Op.Bits <= Max || (S < 0 && S >= -static_cast<int64_t>((Max >> 1) + 1));
        if (!Fits)
          Diags.error(Op.Loc, "immediate " + std::to_string(Op.Negated ? S : (long long)Op.Bits) + " does not fit in " +
                                  typeName(T) + " (operand " + std::to_string(Index + 1) + " of '" +
                                  instructionName(I) + "')");
      }
      return;
    }
    if (Op.Kind != OperandKind::Register || Op.Reg >= F.Registers.size() || Op.Component)
      return;
    const RegisterInfo &R = F.Registers[Op.Reg];
    if (R.VectorWidth > 1)
      return;
    bool Ok = Memory ? memoryValueFits(T, R.Type) : registerFits(T, R.Type);
    if (!Ok)
      Diags.error(Op.Loc, "operand " + std::to_string(Index + 1) + " of '" + instructionName(I) + "' has type " +
                              typeName(R.Type) + ", expected " + typeName(T));
  }

  void shapes(const Function &F, const Instruction &I, const OpcodeInfo &Info) {
    ScalarType T0 = I.type(0), T1 = I.type(1);
    auto &Ops = I.Operands;
    auto check = [&](unsigned K, ScalarType T, bool Memory = false) {
      if (K < Ops.size())
        operandType(F, Ops[K], T, Memory, I, K);
    };
    switch (Info.Shape) {
    case OperandShape::Unchecked:
      break;
    case OperandShape::AllSame:
      if (I.typeCount() == 1)
        for (unsigned K = 0; K < Ops.size(); ++K)
          check(K, T0);
      break;
    case OperandShape::Wide:
      if (I.typeCount() != 1)
        break;
      if (I.has(Modifier::Wide)) {
        ScalarType Wide = T0;
        switch (T0) {
        case ScalarType::U16:
          Wide = ScalarType::U32;
          break;
        case ScalarType::S16:
          Wide = ScalarType::S32;
          break;
        case ScalarType::U32:
          Wide = ScalarType::U64;
          break;
        case ScalarType::S32:
          Wide = ScalarType::S64;
          break;
        default:
          break;
        }
        check(0, Wide);
        check(1, T0);
        check(2, T0);
        check(3, Wide);
      } else {
        for (unsigned K = 0; K < Ops.size(); ++K)
          check(K, T0);
      }
      break;
    case OperandShape::Shift:
      check(0, T0);
      check(1, T0);
      if (Ops.size() > 2 && Ops[2].Kind == OperandKind::Register && Ops[2].Reg < F.Registers.size() &&
          bitWidth(F.Registers[Ops[2].Reg].Type) != 32)
        Diags.error(Ops[2].Loc, "shift amount of '" + instructionName(I) + "' must be a 32-bit register");
      break;
    case OperandShape::Setp:
      if (I.typeCount() != 1)
        break;
      if (!Ops.empty() && Ops[0].Kind == OperandKind::Register)
        check(0, ScalarType::Pred);
      check(1, T0);
      check(2, T0);
      check(3, ScalarType::Pred);
      break;
    case OperandShape::Selp:
      check(0, T0);
      check(1, T0);
      check(2, T0);
      check(3, ScalarType::Pred);
      break;
    case OperandShape::Set:
      check(0, T0);
      check(1, T1);
      check(2, T1);
      break;
    case OperandShape::Cvt:
      if (Ops.size() == 2 && I.typeCount() == 2) {
        // Integer sources may sit in wider registers, whose low bits are converted (PTX ISA, "Operand Size
        // Exceeding Instruction-Type Size": nvcc emits `cvt.s64.s32 %rd3, %rd1` in Thrust's kernels).
        bool Narrow0 = isInteger(T0) && bitWidth(T0) < 16;
        check(0, T0, Narrow0);
        check(1, T1, isInteger(T1));
      }
      break;
    case OperandShape::Mov:
      // A packing or unpacking mov ({a, b}) moves the pieces of T0's width; otherwise both sides have type T0.
      if (Ops.size() == 2 && I.typeCount() == 1 && Ops[0].Kind == OperandKind::Register && I.vectorWidth() == 1) {
        check(0, T0);
        if (Ops[1].Kind == OperandKind::Register || Ops[1].Kind == OperandKind::Immediate)
          check(1, T0);
      }
      break;
    case OperandShape::Memory: {
      // With .L2::cache_hint the last operand is the 64-bit cache policy (createpolicy's result), whatever
      // type the access moves.
      size_t Values = Ops.size();
      if (I.has(Modifier::L2_CacheHint) && Values > 2) {
        --Values;
        check(Values, ScalarType::B64);
      }
      if (I.typeCount() >= 1)
        for (unsigned K = 0; K < Values; ++K)
          if (Ops[K].Kind == OperandKind::Register || Ops[K].Kind == OperandKind::Vector)
            check(K, I.type(I.typeCount() - 1), /*Memory=*/true);
      for (unsigned K = 0; K < Values; ++K)
        if (Ops[K].Kind == OperandKind::Vector && Ops[K].Elements.size() != I.vectorWidth())
          Diags.error(Ops[K].Loc, "operand " + std::to_string(K + 1) + " of '" + instructionName(I) + "' has " +
                                      std::to_string(Ops[K].Elements.size()) + " elements, expected " +
                                      std::to_string(I.vectorWidth()) + " (vector size mismatch)");
      break;
    }
    }
  }

  void stateSpaces(const Function &F, const Instruction &I) {
    if (I.Op != Opcode::Ld && I.Op != Opcode::St && I.Op != Opcode::Atom && I.Op != Opcode::Red && I.Op != Opcode::Ldu)
      return;
    StateSpace Space = StateSpace::Generic;
    unsigned Spaces = 0;
    for (const Qualifier &Q : I.Qualifiers) {
      if (Q.K != Qualifier::Kind::Modifier)
        continue;
      switch (static_cast<Modifier>(Q.Value)) {
      case Modifier::Global:
        Space = StateSpace::Global;
        ++Spaces;
        break;
      case Modifier::Shared:
      case Modifier::Shared_Cta:
      case Modifier::Shared_Cluster:
        Space = StateSpace::Shared;
        ++Spaces;
        break;
      case Modifier::Local:
        Space = StateSpace::Local;
        ++Spaces;
        break;
      case Modifier::Const:
        Space = StateSpace::Const;
        ++Spaces;
        break;
      case Modifier::Param:
        Space = StateSpace::Param;
        ++Spaces;
        break;
      default:
        break;
      }
    }
    if (Spaces > 1)
      Diags.error(I.Loc, "'" + instructionName(I) + "' names more than one state space");
    if ((I.Op == Opcode::St || I.Op == Opcode::Atom || I.Op == Opcode::Red) && Space == StateSpace::Const)
      Diags.error(I.Loc, "'" + instructionName(I) + "' cannot write to the '.const' state space");
    if (Space == StateSpace::Generic)
      return;
    for (const Operand &Op : I.Operands) {
      if (Op.Kind != OperandKind::Address || Op.Name.empty())
        continue;
      StateSpace S = symbolSpace(F, Op);
      if (S != StateSpace::None && S != Space && !(S == StateSpace::Reg))
        Diags.error(Op.Loc, "'" + instructionName(I) + "' accesses '" + Op.Name.str() + "', which is in the '." +
                                spell(S).str() + "' state space");
    }
  }

  void instruction(const Function &F, const Instruction &I) {
    const OpcodeInfo &Info = getOpcodeInfo(I.Op);
    for (const Qualifier &Q : I.Qualifiers) {
      if (Q.K == Qualifier::Kind::Modifier && !Info.AllowedModifiers.test(Q.Value))
        Diags.error(I.Loc, "modifier '." + spell(static_cast<Modifier>(Q.Value)).str() + "' is not allowed on '" +
                               spell(I.Op).str() + "'");
      else if (Q.K == Qualifier::Kind::Type && !Info.AllowedTypes.test(Q.Value))
        Diags.error(I.Loc, "type '." + spell(static_cast<ScalarType>(Q.Value)).str() + "' is not allowed on '" +
                               spell(I.Op).str() + "'");
      else if (Q.K == Qualifier::Kind::Vector && !Info.AllowsVector)
        Diags.error(I.Loc, "'" + spell(I.Op).str() + "' does not take a vector width");
    }
    unsigned Rounding = 0;
    for (Modifier R : {Modifier::Rn, Modifier::Rz, Modifier::Rm, Modifier::Rp, Modifier::Rna, Modifier::Rni,
                       Modifier::Rzi, Modifier::Rmi, Modifier::Rpi})
      Rounding += I.has(R);
    if (Rounding > 1)
      Diags.error(I.Loc, "conflicting rounding modifiers on '" + instructionName(I) + "'");
    size_t N = I.Operands.size();
    if (N < Info.MinOperands || N > Info.MaxOperands) {
      std::string Expected = Info.MinOperands == Info.MaxOperands
                                 ? std::to_string(Info.MinOperands)
                                 : std::to_string(Info.MinOperands) + " to " + std::to_string(Info.MaxOperands);
      Diags.error(I.Loc,
                  "'" + instructionName(I) + "' takes " + Expected + " operands, " + std::to_string(N) + " given");
      return;
    }
    if (I.Guard != NoReg && I.Guard < F.Registers.size() && F.Registers[I.Guard].Type != ScalarType::Pred)
      Diags.error(I.Loc, "guard '" + F.registerName(I.Guard) + "' is not a '.pred' register");

    Requirement R = instructionRequirement(I);
    std::string Why;
    bool TargetLacks = M.Tgt.Sm && !targetHas(I, M.Tgt.Sm);
    if (TargetLacks || (M.Version.Major && R.Ptx > M.Version.value()))
      instructionRequirement(I, &Why); // names the feature, only when reporting
    if (TargetLacks)
      Diags.error(I.Loc, "'" + Why + "' requires " + smName(R.Sm) + " or higher, but the module targets " +
                             smName(M.Tgt.Sm, M.Tgt.Suffix));
    if (M.Version.Major && R.Ptx > M.Version.value())
      Diags.error(I.Loc, "'" + Why + "' requires PTX ISA " + ptxVersionName(R.Ptx) +
                             " or higher, but the module declares '.version " + ptxVersionName(M.Version.value()) +
                             "'");
    shapes(F, I, Info);
    if (std::string Why = tcgen05FormError(I); !Why.empty())
      Diags.error(I.Loc, "'" + instructionName(I) + "' is not a form the PTX ISA defines: " + Why);
    stateSpaces(F, I);
    control(I);
    selectors(I);
  }

  /// Byte/half selectors (`%r.b1`, `%r.h10`, `%r.b3210`) exist only on video instructions, in the shapes each
  /// takes: scalar ones select one byte (.b0-.b3) or half (.h0/.h1) of a source or of the destination to
  /// merge into; the SIMD ones pick each lane's source among the 4 halves or 8 bytes of a:b (.hxy, .bxyzw)
  /// and name the destination lanes written (.h0, .h1, .h10; .b0 ... .b3210).
  void selectors(const Instruction &I) {
    unsigned Lanes = videoLanes(I.Op);
    for (size_t K = 0; K < I.Operands.size(); ++K) {
      const Operand &Op = I.Operands[K];
      if (!Op.SelKind)
        continue;
      bool Dst = K == 0;
      unsigned MaxDigit = Op.SelKind == 'h' ? 1 : 3;
      bool Ok;
      if (Lanes == 1)
        Ok = Op.SelCount == 1 && Op.SelDigits <= MaxDigit && K < 3;
      else if (Dst)
        Ok = Op.SelKind == (Lanes == 2 ? 'h' : 'b') && Op.SelCount <= Lanes;
      else
        Ok = Op.SelKind == (Lanes == 2 ? 'h' : 'b') && Op.SelCount == Lanes && K < 3;
      if (Ok && Dst && Lanes > 1)
        for (unsigned D = 0; D < Op.SelCount; ++D)
          Ok &= ((Op.SelDigits >> (4 * D)) & 0xf) < Lanes;
      if (!Lanes || !Ok)
        Diags.error(Op.Loc, "selector on operand " + std::to_string(K + 1) + " of '" + instructionName(I) + "' is " +
                                (Lanes ? "not one this instruction takes" : "allowed only on video instructions"));
    }
  }

  void control(const Instruction &I) {
    if (I.Op == Opcode::Bra) {
      for (const Operand &Op : I.Operands)
        if (Op.Kind == OperandKind::Symbol && Op.Target.Kind != SymbolKind::Label &&
            Op.Target.Kind != SymbolKind::Unresolved)
          Diags.error(Op.Loc, "branch target '" + Op.Name.str() + "' is not a label");
      return;
    }
    if (I.Op != Opcode::Call)
      return;
    for (const Operand &Op : I.Operands) {
      if (Op.Kind == OperandKind::List)
        continue;
      if (Op.Kind == OperandKind::Symbol && Op.Target.Kind == SymbolKind::Function) {
        const Function &Callee = *M.Functions[Op.Target.Index];
        if (Callee.IsEntry)
          Diags.error(Op.Loc, "cannot call kernel '" + Op.Name.str() + "'");
      } else if (Op.Kind == OperandKind::Symbol && Op.Target.Kind != SymbolKind::Unresolved) {
        Diags.error(Op.Loc, "call target '" + Op.Name.str() + "' is not a function");
      }
      break;
    }
  }
};

} // namespace

bool ptxforge::ptx::checkModule(Module &M, DiagnosticEngine &Diags) { return Verifier(M, Diags).run(); }

std::optional<VerifiedModule> ptxforge::ptx::verifyModule(std::unique_ptr<Module> &M, DiagnosticEngine &Diags) {
  if (!checkModule(*M, Diags) || Diags.hasErrors())
    return std::nullopt;
  return VerifiedModule(std::move(M));
}
