// Spellings and lookups of types, state spaces, linkages, opcodes, modifiers and special registers.
#include "ptxforge/ptx/Types.h"
#include "ptxforge/ptx/Opcode.h"
#include "ptxforge/ptx/Operand.h"

#include "llvm/ADT/StringMap.h"

using namespace ptxforge::ptx;

namespace {
struct TypeFacts {
  const char *Spelling;
  unsigned Bits;
  TypeKind Kind;
};
const TypeFacts TypeTable[] = {
#define PTX_TYPE(Enum, Spelling, Bits, Kind) {Spelling, Bits, TypeKind::Kind},
#include "ptxforge/ptx/Types.def"
};

const char *const OpcodeNames[] = {
#define PTX_OPCODE(Enum, Spelling) Spelling,
#include "ptxforge/ptx/Opcodes.def"
};

const char *const ModifierNames[] = {
#define PTX_MODIFIER(Enum, Spelling) Spelling,
#include "ptxforge/ptx/Modifiers.def"
};

struct SregFacts {
  const char *Spelling;
  bool Vector;
};
const SregFacts SregTable[] = {
#define PTX_SREG(Enum, Spelling, Vector) {Spelling, Vector},
#include "ptxforge/ptx/SpecialRegs.def"
};

template <typename E, size_t N> llvm::StringMap<E> buildIndex(const char *const (&Names)[N]) {
  llvm::StringMap<E> M;
  for (size_t I = 0; I < N; ++I)
    M[Names[I]] = static_cast<E>(I);
  return M;
}
} // namespace

llvm::StringRef ptxforge::ptx::spell(ScalarType T) {
  return T == ScalarType::None ? "" : TypeTable[static_cast<unsigned>(T)].Spelling;
}
unsigned ptxforge::ptx::bitWidth(ScalarType T) {
  return T == ScalarType::None ? 0 : TypeTable[static_cast<unsigned>(T)].Bits;
}
TypeKind ptxforge::ptx::kindOf(ScalarType T) {
  return T == ScalarType::None ? TypeKind::Opaque : TypeTable[static_cast<unsigned>(T)].Kind;
}
std::optional<ScalarType> ptxforge::ptx::lookupType(llvm::StringRef S) {
  static const llvm::StringMap<ScalarType> Index = [] {
    llvm::StringMap<ScalarType> M;
    for (unsigned I = 0; I < NumScalarTypes; ++I)
      M[TypeTable[I].Spelling] = static_cast<ScalarType>(I);
    return M;
  }();
  auto It = Index.find(S);
  return It == Index.end() ? std::nullopt : std::optional<ScalarType>(It->second);
}

llvm::StringRef ptxforge::ptx::spell(StateSpace S) {
  switch (S) {
  case StateSpace::None:
    return "";
  case StateSpace::Reg:
    return "reg";
  case StateSpace::Sreg:
    return "sreg";
  case StateSpace::Const:
    return "const";
  case StateSpace::Global:
    return "global";
  case StateSpace::Local:
    return "local";
  case StateSpace::Param:
    return "param";
  case StateSpace::Shared:
    return "shared";
  case StateSpace::Tex:
    return "tex";
  case StateSpace::Generic:
    return "generic";
  }
  return "";
}

llvm::StringRef ptxforge::ptx::spell(Linkage L) {
  switch (L) {
  case Linkage::None:
    return "";
  case Linkage::Visible:
    return "visible";
  case Linkage::Extern:
    return "extern";
  case Linkage::Weak:
    return "weak";
  case Linkage::Common:
    return "common";
  }
  return "";
}

llvm::StringRef ptxforge::ptx::spell(Opcode Op) { return OpcodeNames[static_cast<unsigned>(Op)]; }
llvm::StringRef ptxforge::ptx::spell(Modifier M) { return ModifierNames[static_cast<unsigned>(M)]; }

std::optional<Opcode> ptxforge::ptx::lookupOpcode(llvm::StringRef S) {
  static const auto Index = buildIndex<Opcode>(OpcodeNames);
  auto It = Index.find(S);
  return It == Index.end() ? std::nullopt : std::optional<Opcode>(It->second);
}
std::optional<Modifier> ptxforge::ptx::lookupModifier(llvm::StringRef S) {
  static const auto Index = buildIndex<Modifier>(ModifierNames);
  auto It = Index.find(S);
  return It == Index.end() ? std::nullopt : std::optional<Modifier>(It->second);
}

llvm::StringRef ptxforge::ptx::spell(SpecialReg R) { return SregTable[static_cast<unsigned>(R)].Spelling; }
bool ptxforge::ptx::isVectorSpecialReg(SpecialReg R) { return SregTable[static_cast<unsigned>(R)].Vector; }
