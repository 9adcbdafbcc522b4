// The block's shared-memory window. On the GPU a kernel's shared memory holds only the `.shared` variables
// it uses; a module-wide layout would charge every kernel for all of them (Thrust and CUB modules declare
// hundreds of kilobytes across their kernels, and occupancy queries then answer 0). So each variable gets
// the set of kernels that reach it (directly or through calls), and variables whose kernel sets are
// disjoint may share addresses. Offsets stay module-wide because a `.func` is compiled once for all its
// callers.
#include "FunctionLowering.h"

#include "llvm/ADT/BitVector.h"

#include <map>

using namespace ptxforge;
using namespace ptxforge::codegen::detail;

namespace {

uint64_t alignUp(uint64_t V, uint64_t A) { return A > 1 ? (V + A - 1) / A * A : V; }

/// One static shared variable to place.
struct SharedItem {
  const ptx::VariableDecl *Var;
  uint64_t Size, Align, Offset = 0;
  llvm::BitVector Kernels; ///< by function index
};

/// What a function references: shared variables (module-scope by global index; function-scope by decl),
/// functions (calls and taken addresses), and whether it reaches dynamic shared memory.
struct References {
  std::vector<uint32_t> Globals, Functions;
  std::vector<const ptx::VariableDecl *> Locals;
};

void collect(const ptx::Operand &Op, const ptx::Function &F, References &R) {
  switch (Op.Target.Kind) {
  case ptx::SymbolKind::Variable:
    R.Globals.push_back(Op.Target.Index);
    break;
  case ptx::SymbolKind::LocalVariable:
    R.Locals.push_back(&F.Locals[Op.Target.Index]);
    break;
  case ptx::SymbolKind::Function:
    R.Functions.push_back(Op.Target.Index);
    break;
  default:
    break;
  }
  for (const ptx::Operand &E : Op.Elements)
    collect(E, F, R);
}

/// Each function's references.
std::vector<References> collectReferences(const ptx::Module &M) {
  std::vector<References> Refs(M.Functions.size());
  for (size_t FI = 0; FI < M.Functions.size(); ++FI)
    for (const ptx::Instruction &I : M.Functions[FI]->Instructions)
      for (const ptx::Operand &Op : I.Operands)
        collect(Op, *M.Functions[FI], Refs[FI]);
  return Refs;
}

void markFunctionsIn(const ptx::Module &M, const ptx::Initializer &In, llvm::BitVector &Found) {
  if (In.K == ptx::Initializer::Kind::Symbol)
    for (size_t FI = 0; FI < M.Functions.size(); ++FI)
      if (M.Functions[FI]->Name == In.Name)
        Found.set(FI);
  for (const ptx::Initializer &E : In.Elements)
    markFunctionsIn(M, E, Found);
}

/// Functions whose addresses module variables hold: any kernel may call them.
llvm::BitVector functionsInData(const ptx::Module &M) {
  llvm::BitVector Found(M.Functions.size());
  for (const ptx::VariableDecl &V : M.Globals)
    if (V.HasInit)
      markFunctionsIn(M, V.Init, Found);
  return Found;
}

/// Per kernel (by function index; empty for other functions): the functions it reaches.
std::vector<llvm::BitVector> kernelReach(const ptx::Module &M, const std::vector<References> &Refs) {
  size_t NF = M.Functions.size();
  llvm::BitVector FromData = functionsInData(M);
  std::vector<llvm::BitVector> Reach(NF, llvm::BitVector(NF));
  for (size_t K = 0; K < NF; ++K) {
    if (!M.Functions[K]->IsEntry)
      continue;
    std::vector<size_t> Work{K};
    for (size_t FI : FromData.set_bits())
      Work.push_back(FI);
    while (!Work.empty()) {
      size_t FI = Work.back();
      Work.pop_back();
      if (Reach[K].test(FI))
        continue;
      Reach[K].set(FI);
      for (uint32_t Callee : Refs[FI].Functions)
        if (Callee < NF)
          Work.push_back(Callee);
    }
  }
  return Reach;
}

/// The static shared variables, each with the kernels that reach it, in declaration order (so unused variables
/// and single-kernel modules keep the familiar layout); Dynamic gets the kernels that reach dynamic arrays.
std::vector<SharedItem> sharedItems(const ptx::Module &M, const std::vector<References> &Refs,
                                    const std::vector<llvm::BitVector> &Reach, llvm::BitVector &Dynamic) {
  size_t NF = M.Functions.size();
  std::vector<SharedItem> Items;
  std::map<const ptx::VariableDecl *, size_t> ItemOf;
  auto item = [&](const ptx::VariableDecl &V) -> SharedItem * {
    if (V.Space != ptx::StateSpace::Shared || V.Link == ptx::Linkage::Extern || V.sizeInBytes() == 0)
      return nullptr;
    auto [It, New] = ItemOf.try_emplace(&V, Items.size());
    if (New)
      Items.push_back({&V, V.sizeInBytes(), std::max<uint64_t>(V.alignment(), 1), 0, llvm::BitVector(NF)});
    return &Items[It->second];
  };
  for (const ptx::VariableDecl &V : M.Globals)
    item(V);
  for (const auto &Fn : M.Functions)
    for (const ptx::VariableDecl &V : Fn->Locals)
      item(V);
  Dynamic = llvm::BitVector(NF);
  for (size_t K = 0; K < NF; ++K)
    for (size_t FI : Reach[K].set_bits()) {
      for (uint32_t G : Refs[FI].Globals) {
        if (G >= M.Globals.size())
          continue;
        const ptx::VariableDecl &V = M.Globals[G];
        if (SharedItem *S = item(V))
          S->Kernels.set(K);
        else if (V.Space == ptx::StateSpace::Shared)
          Dynamic.set(K);
      }
      for (const ptx::VariableDecl *V : Refs[FI].Locals)
        if (SharedItem *S = item(*V))
          S->Kernels.set(K);
    }
  return Items;
}

/// First fit: each variable at the lowest offset that overlaps no placed variable of a kernel it shares.
void placeFirstFit(std::vector<SharedItem> &Items) {
  for (size_t I = 0; I < Items.size(); ++I) {
    SharedItem &S = Items[I];
    uint64_t Off = 0;
    for (bool Moved = true; Moved;) {
      Moved = false;
      Off = alignUp(Off, S.Align);
      for (size_t J = 0; J < I; ++J) {
        const SharedItem &P = Items[J];
        if (!S.Kernels.anyCommon(P.Kernels) && S.Kernels.any())
          continue;
        if (Off < P.Offset + P.Size && P.Offset < Off + S.Size) {
          Off = P.Offset + P.Size;
          Moved = true;
        }
      }
    }
    S.Offset = Off;
  }
}

} // namespace

void ModuleLowering::layoutShared() {
  std::vector<References> Refs = collectReferences(M);
  llvm::BitVector Dynamic;
  std::vector<SharedItem> Items = sharedItems(M, Refs, kernelReach(M, Refs), Dynamic);
  placeFirstFit(Items);

  SharedOffsets.assign(M.Globals.size(), 0);
  KernelSharedBytes.assign(M.Functions.size(), 0);
  for (const SharedItem &S : Items) {
    // Module-scope variables are addressed by global index, function-scope ones by declaration.
    bool IsGlobal = S.Var >= M.Globals.data() && S.Var < M.Globals.data() + M.Globals.size();
    if (IsGlobal)
      SharedOffsets[S.Var - M.Globals.data()] = S.Offset;
    else
      LocalSharedOffsets[S.Var] = S.Offset;
    for (size_t K : S.Kernels.set_bits())
      KernelSharedBytes[K] = std::max(KernelSharedBytes[K], S.Offset + S.Size);
  }
  for (uint64_t &Bytes : KernelSharedBytes)
    Bytes = alignUp(Bytes, 16);
  for (size_t K : Dynamic.set_bits())
    DynamicSharedOffset = std::max(DynamicSharedOffset, KernelSharedBytes[K]);
  for (size_t K : Dynamic.set_bits())
    KernelSharedBytes[K] = DynamicSharedOffset;
}
