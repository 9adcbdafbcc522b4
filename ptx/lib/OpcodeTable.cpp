// Builds the typed opcode table from OpcodeTable.def once, at first use.
#include "ptxforge/ptx/OpcodeInfo.h"

#include "llvm/ADT/StringExtras.h"

#include <mutex>

using namespace ptxforge::ptx;

namespace {

struct Table {
  std::vector<OpcodeInfo> Infos;
  std::vector<bool> HasRow;
  std::vector<std::vector<OpcodeFeature>> Features;
  std::vector<std::string> Problems; ///< spellings in the .def that name nothing (a unit test keeps it empty)

  void parseSpellings(llvm::StringRef List, ModifierSet &Mods, TypeSet &Types, bool *Vector, llvm::StringRef Where,
                      unsigned *Width = nullptr) {
    llvm::SmallVector<llvm::StringRef, 16> Parts;
    List.split(Parts, ' ', -1, false);
    for (llvm::StringRef P : Parts) {
      if (auto T = lookupType(P))
        Types.set(static_cast<unsigned>(*T));
      else if (auto M = lookupModifier(P))
        Mods.set(static_cast<unsigned>(*M));
      else if (Vector && (P == "v2" || P == "v4" || P == "v8" || P == "v16")) {
        *Vector = true;
        if (Width)
          P.drop_front().getAsInteger(10, *Width);
      } else
        Problems.push_back(Where.str() + ": unknown spelling '" + P.str() + "'");
    }
  }

  Table() {
    Infos.resize(NumOpcodes);
    HasRow.assign(NumOpcodes, false);
    Features.resize(NumOpcodes);
    for (unsigned I = 0; I < NumOpcodes; ++I) {
      OpcodeInfo &Info = Infos[I];
      Info.Op = static_cast<Opcode>(I);
      Info.MinOperands = 0;
      Info.MaxOperands = 16;
      Info.Minimum = {20, 10};
      Info.Shape = OperandShape::Unchecked;
      Info.AllowedModifiers.set();
      Info.AllowedTypes.set();
      Info.AllowsVector = true;
    }
#define PTX_OPCODE_INFO(Enum, MinOps, MaxOps, MinSm, MinPtx, ShapeName, Mods, Types)                                   \
  addRow(Opcode::Enum, MinOps, MaxOps, MinSm, MinPtx, OperandShape::ShapeName, Mods, Types);
#define PTX_OPCODE_FEATURE(Enum, Spellings, MinSm, MinPtx) addFeature(Opcode::Enum, Spellings, MinSm, MinPtx);
#include "ptxforge/ptx/OpcodeTable.def"
  }

  void addRow(Opcode Op, unsigned MinOps, unsigned MaxOps, unsigned Sm, unsigned Ptx, OperandShape Shape,
              llvm::StringRef Mods, llvm::StringRef Types) {
    unsigned I = static_cast<unsigned>(Op);
    if (HasRow[I])
      Problems.push_back(spell(Op).str() + ": more than one row");
    HasRow[I] = true;
    OpcodeInfo &Info = Infos[I];
    Info.MinOperands = MinOps;
    Info.MaxOperands = MaxOps;
    Info.Minimum = {Sm, Ptx};
    Info.Shape = Shape;
    Info.AllowedModifiers.reset();
    Info.AllowedTypes.reset();
    Info.AllowsVector = false;
    TypeSet ModTypes;
    parseSpellings(Mods, Info.AllowedModifiers, ModTypes, &Info.AllowsVector, spell(Op));
    Info.AllowedTypes |= ModTypes;
    ModifierSet TypeMods;
    parseSpellings(Types, TypeMods, Info.AllowedTypes, nullptr, spell(Op));
    Info.AllowedModifiers |= TypeMods;
  }

  void addFeature(Opcode Op, llvm::StringRef Spellings, unsigned Sm, unsigned Ptx) {
    OpcodeFeature F;
    F.Op = Op;
    F.Minimum = {Sm, Ptx};
    bool Vector = false;
    parseSpellings(Spellings, F.Modifiers, F.Types, &Vector, spell(Op), &F.VectorWidth);
    for (unsigned M = 0; M < NumModifiers; ++M)
      if (F.Modifiers.test(M))
        F.Needs.push_back(Qualifier::modifier(static_cast<Modifier>(M)));
    for (unsigned T = 0; T < NumScalarTypes; ++T)
      if (F.Types.test(T))
        F.Needs.push_back(Qualifier::type(static_cast<ScalarType>(T)));
    F.Spelling = spell(Op).str();
    llvm::SmallVector<llvm::StringRef, 4> Parts;
    Spellings.split(Parts, ' ', -1, false);
    for (llvm::StringRef P : Parts)
      F.Spelling += "." + P.str();
    Features[static_cast<unsigned>(Op)].push_back(std::move(F));
  }
};

const Table &table() {
  static const Table T;
  return T;
}

} // namespace

const OpcodeInfo &ptxforge::ptx::getOpcodeInfo(Opcode Op) { return table().Infos[static_cast<unsigned>(Op)]; }

const std::vector<OpcodeFeature> &ptxforge::ptx::getOpcodeFeatures(Opcode Op) {
  return table().Features[static_cast<unsigned>(Op)];
}

std::vector<std::string> ptxforge::ptx::checkOpcodeTable() {
  std::vector<std::string> Problems = table().Problems;
  for (unsigned I = 0; I < NumOpcodes; ++I)
    if (!table().HasRow[I])
      Problems.push_back(spell(static_cast<Opcode>(I)).str() + ": no row in OpcodeTable.def");
  return Problems;
}

unsigned ptxforge::ptx::videoLanes(Opcode Op) {
  switch (Op) {
  case Opcode::Vadd:
  case Opcode::Vsub:
  case Opcode::Vabsdiff:
  case Opcode::Vmin:
  case Opcode::Vmax:
  case Opcode::Vshl:
  case Opcode::Vshr:
  case Opcode::Vmad:
  case Opcode::Vset:
    return 1;
  case Opcode::Vadd2:
  case Opcode::Vsub2:
  case Opcode::Vavrg2:
  case Opcode::Vabsdiff2:
  case Opcode::Vmin2:
  case Opcode::Vmax2:
  case Opcode::Vset2:
    return 2;
  case Opcode::Vadd4:
  case Opcode::Vsub4:
  case Opcode::Vavrg4:
  case Opcode::Vabsdiff4:
  case Opcode::Vmin4:
  case Opcode::Vmax4:
  case Opcode::Vset4:
    return 4;
  default:
    return 0;
  }
}
