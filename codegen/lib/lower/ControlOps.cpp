// Control flow: bra, brx.idx, call (direct and indirect), ret, exit, trap; fences and hints that need no code.
#include "../FunctionLowering.h"

using namespace ptxforge;
using namespace ptxforge::codegen::detail;
using ptx::Opcode;

namespace {

bool lowerCall(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  const ptx::Operand *Rets = nullptr, *Target = nullptr, *Args = nullptr;
  for (const ptx::Operand &Op : I.Operands) {
    if (!Target && Op.Kind == ptx::OperandKind::List)
      Rets = &Op;
    else if (!Target)
      Target = &Op;
    else if (!Args && Op.Kind == ptx::OperandKind::List)
      Args = &Op;
  }
  if (!Target)
    return L.unsupported(I, "call without a target");
  std::vector<llvm::Value *> CallArgs{L.threadCtx()};
  auto addList = [&](const ptx::Operand *List) {
    if (!List)
      return;
    for (const ptx::Operand &E : List->Elements) {
      if (E.Kind == ptx::OperandKind::Symbol) {
        CallArgs.push_back(L.symbolPointer(E));
      } else {
        // A register or immediate argument (`.reg` parameters): pass it through a temporary.
        llvm::Value *V = L.read(E, ptx::ScalarType::B64);
        llvm::AllocaInst *Tmp = B.CreateAlloca(B.getInt64Ty());
        B.CreateStore(V, Tmp);
        CallArgs.push_back(Tmp);
      }
    }
  };
  addList(Rets);
  addList(Args);
  std::vector<llvm::Type *> Tys(CallArgs.size(), B.getPtrTy());
  auto *FT = llvm::FunctionType::get(B.getVoidTy(), Tys, false);
  if (Target->Kind == ptx::OperandKind::Symbol && Target->Target.Kind == ptx::SymbolKind::Function) {
    llvm::Function *Callee = L.module().Functions[Target->Target.Index];
    if (Callee->arg_size() != CallArgs.size())
      return L.unsupported(I, "argument count differs from the callee's parameters");
    B.CreateCall(Callee, CallArgs);
  } else {
    llvm::Value *Addr = L.read(*Target, ptx::ScalarType::U64);
    B.CreateCall(FT, B.CreateIntToPtr(Addr, B.getPtrTy()), CallArgs);
  }
  // Results written by the callee into `.reg` temporaries go back to their registers.
  if (Rets)
    for (size_t K = 0; K < Rets->Elements.size(); ++K)
      if (Rets->Elements[K].Kind == ptx::OperandKind::Register)
        L.write(Rets->Elements[K], ptx::ScalarType::B64, B.CreateLoad(B.getInt64Ty(), CallArgs[1 + K]));
  return true;
}

bool lowerBrx(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  const ptx::Function &F = L.fn();
  if (I.Operands.size() != 2 || I.Operands[1].Target.Kind != ptx::SymbolKind::Label)
    return L.unsupported(I, "brx.idx needs an index and a .branchtargets label");
  const ptx::TargetList *List = nullptr;
  for (const ptx::TargetList &T : F.TargetLists)
    if (T.K == ptx::TargetList::Kind::BranchTargets && T.LabelIndex == I.Operands[1].Target.Index)
      List = &T;
  if (!List)
    return L.unsupported(I, "no .branchtargets for the label");
  llvm::Value *Idx = L.read(I.Operands[0], ptx::ScalarType::U32);
  llvm::BasicBlock *Default = llvm::BasicBlock::Create(L.ctx(), "brx.out", L.function());
  llvm::SwitchInst *SW = B.CreateSwitch(Idx, Default, List->Names.size());
  for (size_t K = 0; K < List->Names.size(); ++K)
    for (uint32_t Lab = 0; Lab < F.Labels.size(); ++Lab)
      if (F.Labels[Lab].Name == List->Names[K])
        SW->addCase(B.getInt32(K), L.labelBlock(Lab));
  B.SetInsertPoint(Default);
  B.CreateUnreachable();
  L.terminated();
  return true;
}

} // namespace

bool ptxforge::codegen::detail::lowerControl(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  switch (I.Op) {
  case Opcode::Bra: {
    const ptx::Operand &T = I.Operands[0];
    if (T.Target.Kind != ptx::SymbolKind::Label)
      return L.unsupported(I, "branch target is not a label");
    llvm::BasicBlock *Dest = L.labelBlock(T.Target.Index);
    if (I.Guard != ptx::NoReg) {
      ptx::Operand G;
      G.Kind = ptx::OperandKind::Register;
      G.Reg = I.Guard;
      llvm::Value *C = L.read(G, ptx::ScalarType::Pred);
      if (I.GuardNegated)
        C = B.CreateNot(C);
      llvm::BasicBlock *Fall = llvm::BasicBlock::Create(L.ctx(), "fall", L.function());
      B.CreateCondBr(C, Dest, Fall);
      B.SetInsertPoint(Fall);
    } else {
      B.CreateBr(Dest);
      L.terminated();
    }
    return true;
  }
  case Opcode::Brx:
    return lowerBrx(L, I);
  case Opcode::Call:
    return lowerCall(L, I);
  case Opcode::Ret:
    L.emitReturn();
    L.terminated();
    return true;
  case Opcode::Exit:
    // The thread ends here even inside a callee: the runtime unwinds to the block scheduler.
    if (L.isKernel()) {
      L.emitReturn();
    } else {
      L.callHelper("ptxrt_exit", B.getVoidTy(), {L.threadCtx()});
      B.CreateUnreachable();
    }
    L.terminated();
    return true;
  case Opcode::Trap:
  case Opcode::Brkpt: // without a debugger attached the GPU ends the launch at a breakpoint as at a trap
    L.callHelper("ptxrt_trap", B.getVoidTy(), {L.threadCtx()});
    B.CreateUnreachable();
    L.terminated();
    return true;
  case Opcode::Nanosleep:
  case Opcode::Pmevent:
  case Opcode::Prefetch:
  case Opcode::Prefetchu:
  case Opcode::Applypriority:
  case Opcode::Discard:
  case Opcode::Griddepcontrol:
  case Opcode::Setmaxnreg:
    return true;
  case Opcode::Membar:
  case Opcode::Fence:
    B.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
    return true;
  default:
    return false;
  }
}
