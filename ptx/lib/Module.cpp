// Module, Function and declaration helpers.
#include "ptxforge/ptx/Module.h"

using namespace ptxforge::ptx;

namespace {
constexpr llvm::StringLiteral KernelTargetKey = "ptxforge.kernel_target";
} // namespace

void ptxforge::ptx::addKernelTargetPragma(Module &M, llvm::StringRef Kernel, unsigned Sm) {
  PragmaDirective P;
  P.Strings.push_back(M.strings().save((KernelTargetKey + " " + Kernel + " " + llvm::Twine(Sm)).str()));
  M.Order.push_back({TopLevelKind::Pragma, static_cast<uint32_t>(M.Pragmas.size())});
  M.Pragmas.push_back(P);
}

llvm::StringMap<unsigned> ptxforge::ptx::kernelTargetPragmas(const Module &M) {
  llvm::StringMap<unsigned> Targets;
  for (const PragmaDirective &P : M.Pragmas) {
    if (P.Strings.size() != 1)
      continue;
    llvm::SmallVector<llvm::StringRef, 3> Words;
    P.Strings[0].split(Words, ' ', -1, /*KeepEmpty=*/false);
    unsigned Sm = 0;
    if (Words.size() == 3 && Words[0] == KernelTargetKey && !Words[2].getAsInteger(10, Sm))
      Targets[Words[1]] = Sm;
  }
  return Targets;
}

Module::Module() : OwnArena(std::make_unique<llvm::BumpPtrAllocator>()), Saver(*OwnArena) {}
Module::~Module() = default;

Function *Module::findFunction(llvm::StringRef Name) const {
  Function *Decl = nullptr;
  for (const auto &F : Functions)
    if (F->Name == Name) {
      if (F->HasBody)
        return F.get();
      if (!Decl)
        Decl = F.get();
    }
  return Decl;
}

const VariableDecl *Module::findGlobal(llvm::StringRef Name) const {
  for (const VariableDecl &V : Globals)
    if (V.Name == Name)
      return &V;
  return nullptr;
}

Function::Function() : Arena(std::make_unique<llvm::BumpPtrAllocator>()), Saver(*Arena) {}

std::string Function::registerName(RegId R) const {
  if (R >= Registers.size())
    return "%<invalid>";
  const RegisterDecl &D = RegisterDecls[Registers[R].Decl];
  if (!D.Count)
    return D.Name.str();
  return D.Name.str() + std::to_string(R - D.First);
}

llvm::StringRef ptxforge::ptx::spell(PerfDirectiveKind K) {
  switch (K) {
  case PerfDirectiveKind::Maxntid:
    return "maxntid";
  case PerfDirectiveKind::Reqntid:
    return "reqntid";
  case PerfDirectiveKind::Minnctapersm:
    return "minnctapersm";
  case PerfDirectiveKind::Maxnctapersm:
    return "maxnctapersm";
  case PerfDirectiveKind::Maxnreg:
    return "maxnreg";
  case PerfDirectiveKind::Maxclusterrank:
    return "maxclusterrank";
  case PerfDirectiveKind::Reqnctapercluster:
    return "reqnctapercluster";
  case PerfDirectiveKind::Explicitcluster:
    return "explicitcluster";
  case PerfDirectiveKind::Noreturn:
    return "noreturn";
  case PerfDirectiveKind::Blocksareclusters:
    return "blocksareclusters";
  }
  return "";
}

uint64_t VariableDecl::elementSize() const {
  unsigned Bits = bitWidth(Type);
  uint64_t Bytes = Bits < 8 ? 1 : Bits / 8;
  if (Type == ScalarType::Pred)
    Bytes = 4;
  return Bytes * (VectorWidth ? VectorWidth : 1);
}

uint64_t VariableDecl::sizeInBytes() const {
  uint64_t N = elementSize();
  for (uint64_t D : Dims) {
    if (!D)
      return 0;
    N *= D;
  }
  return N;
}

uint32_t VariableDecl::alignment() const { return Align ? Align : static_cast<uint32_t>(elementSize()); }
