// Control flow: bra, brx.idx, call (direct and indirect), ret, exit, trap; fences and hints that need no code,
// and createpolicy, whose cache policy only such hints read.
#include "FamilyLowering.h"

#include <functional>

namespace {

/// Functions whose address the module takes (operands other than a call's target, initializers): the only
/// ones an indirect call can reach.
std::vector<uint32_t> addressTakenFunctions(const ptx::Module &M) {
  std::vector<bool> Taken(M.Functions.size());
  std::function<void(const ptx::Operand &)> operand = [&](const ptx::Operand &Op) {
    if (Op.Target.Kind == ptx::SymbolKind::Function && Op.Target.Index < Taken.size())
      Taken[Op.Target.Index] = true;
    for (const ptx::Operand &E : Op.Elements)
      operand(E);
  };
  std::function<void(const ptx::Initializer &)> initializer = [&](const ptx::Initializer &In) {
    if (In.K == ptx::Initializer::Kind::Symbol)
      for (uint32_t K = 0; K < M.Functions.size(); ++K)
        if (M.Functions[K]->Name == In.Name)
          Taken[K] = true;
    for (const ptx::Initializer &E : In.Elements)
      initializer(E);
  };
  for (const ptx::VariableDecl &V : M.Globals)
    if (V.HasInit)
      initializer(V.Init);
  for (const auto &F : M.Functions)
    for (const ptx::Instruction &I : F->Instructions)
      for (size_t K = 0; K < I.Operands.size(); ++K) {
        const ptx::Operand &Op = I.Operands[K];
        bool CallTarget = I.Op == Opcode::Call && Op.Kind == ptx::OperandKind::Symbol &&
                          (K == 0 || (K == 1 && I.Operands[0].Kind == ptx::OperandKind::List));
        if (!CallTarget)
          operand(Op);
      }
  std::vector<uint32_t> Out;
  for (uint32_t K = 0; K < Taken.size(); ++K)
    if (Taken[K] && !M.Functions[K]->IsEntry)
      Out.push_back(K);
  return Out;
}

/// `void __ptx_icall.N(i64 target, ctx, args...)`, one per argument count N: compares the target with the
/// entry of each address-taken function of that arity and calls the one it is, so an indirect call into the
/// middle of a function or to a wild address (which hangs or faults the GPU) ends the launch with an illegal
/// instruction instead of running host code at that address. The GPU's own word is CUDA_ERROR_INVALID_PC,
/// which codegen's LaunchFault kinds do not have.
llvm::Function *indirectCallDispatcher(FunctionLowering &L, size_t Arity) {
  ModuleLowering &ML = L.module();
  std::string Name = "__ptx_icall." + std::to_string(Arity);
  if (llvm::Function *F = ML.Mod.getFunction(Name))
    return F;
  llvm::Type *Ptr = llvm::PointerType::get(ML.Ctx, 0), *I64 = llvm::Type::getInt64Ty(ML.Ctx);
  std::vector<llvm::Type *> Tys{I64};
  Tys.insert(Tys.end(), Arity, Ptr);
  auto *FT = llvm::FunctionType::get(llvm::Type::getVoidTy(ML.Ctx), Tys, false);
  llvm::Function *D = llvm::Function::Create(FT, llvm::GlobalValue::InternalLinkage, Name, ML.Mod);
  llvm::IRBuilder<> B(llvm::BasicBlock::Create(ML.Ctx, "entry", D));
  std::vector<llvm::Value *> Args;
  for (unsigned K = 1; K < D->arg_size(); ++K)
    Args.push_back(D->getArg(K));
  for (uint32_t K : addressTakenFunctions(ML.M)) {
    llvm::Function *Callee = ML.Functions[K];
    if (Callee->arg_size() != Arity)
      continue;
    llvm::BasicBlock *Hit = llvm::BasicBlock::Create(ML.Ctx, "hit", D),
                     *Next = llvm::BasicBlock::Create(ML.Ctx, "next", D);
    B.CreateCondBr(B.CreateICmpEQ(D->getArg(0), B.CreatePtrToInt(Callee, I64)), Hit, Next);
    B.SetInsertPoint(Hit);
    B.CreateCall(Callee, Args);
    B.CreateRetVoid();
    B.SetInsertPoint(Next);
  }
  llvm::FunctionCallee Fault =
      ML.Mod.getOrInsertFunction("ptxrt_bad_call_target", llvm::FunctionType::get(B.getVoidTy(), {Ptr, I64}, false));
  B.CreateCall(Fault, {Args[0], D->getArg(0)});
  B.CreateUnreachable();
  return D;
}

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
  // Register and immediate arguments (`.reg` parameters) pass through the function's scratch buffer, one element
  // each: an alloca at the call would be a dynamic alloca, which grows the stack at every execution (a call in a
  // loop overflows it) and whose stack probes cost quadratic code-generation time (20,000 calls: > 120 s).
  unsigned RegisterArgs = 0;
  for (const ptx::Operand *List : {Rets, Args})
    if (List)
      for (const ptx::Operand &E : List->Elements)
        RegisterArgs += E.Kind != ptx::OperandKind::Symbol;
  llvm::Value *Temps = RegisterArgs ? scratchBuffer(L, B.getInt64Ty(), RegisterArgs) : nullptr;
  unsigned NextTemp = 0;
  auto addList = [&](const ptx::Operand *List) {
    if (!List)
      return;
    for (const ptx::Operand &E : List->Elements) {
      if (E.Kind == ptx::OperandKind::Symbol) {
        CallArgs.push_back(L.symbolPointer(E));
      } else {
        llvm::Value *Tmp = B.CreateConstInBoundsGEP1_32(B.getInt64Ty(), Temps, NextTemp++);
        B.CreateStore(L.read(E, ptx::ScalarType::B64), Tmp);
        CallArgs.push_back(Tmp);
      }
    }
  };
  addList(Rets);
  addList(Args);
  if (Target->Kind == ptx::OperandKind::Symbol && Target->Target.Kind == ptx::SymbolKind::Function) {
    llvm::Function *Callee = L.module().Functions[Target->Target.Index];
    if (Callee->arg_size() != CallArgs.size())
      return L.unsupported(I, "argument count differs from the callee's parameters");
    if (!L.module().M.Functions[Target->Target.Index]->HasBody) // vprintf, __assertfail: observable effects
      checkMisalignment(L);
    B.CreateCall(Callee, CallArgs);
  } else {
    // Never jump to a raw address: the dispatcher calls the function whose entry it is, or faults.
    std::vector<llvm::Value *> DispatchArgs{L.read(*Target, ptx::ScalarType::U64)};
    DispatchArgs.insert(DispatchArgs.end(), CallArgs.begin(), CallArgs.end());
    B.CreateCall(indirectCallDispatcher(L, CallArgs.size()), DispatchArgs);
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

/// createpolicy: the 64-bit cache policy is opaque to PTX programs (only .L2::cache_hint operands read it, and
/// a CPU has no use for it), so any value will do; it encodes the form and priorities, so that two policies
/// made alike compare equal. createpolicy.cvt converts an access property, which passes through.
bool lowerCreatepolicy(FunctionLowering &L, const ptx::Instruction &I) {
  using ptx::Modifier;
  auto &B = L.b();
  auto &Ops = I.Operands;
  if (Ops.empty())
    return L.unsupported(I, "operands");
  if (I.has(Modifier::Cvt)) {
    if (Ops.size() < 2)
      return L.unsupported(I, "operands");
    L.write(Ops[0], ptx::ScalarType::B64, L.read(Ops[1], ptx::ScalarType::B64));
    return true;
  }
  uint64_t Code = I.has(Modifier::Range) ? 2 : 1;
  unsigned Shift = 4;
  for (const ptx::Qualifier &Q : I.Qualifiers) // primary, then secondary priority
    if (Q.K == ptx::Qualifier::Kind::Modifier) {
      auto M = static_cast<Modifier>(Q.Value);
      unsigned P = M == Modifier::L2_EvictNormal      ? 1
                   : M == Modifier::L2_EvictFirst     ? 2
                   : M == Modifier::L2_EvictLast      ? 3
                   : M == Modifier::L2_EvictUnchanged ? 4
                                                      : 0;
      if (P && Shift <= 8) {
        Code |= uint64_t(P) << Shift;
        Shift += 4;
      }
    }
  L.write(Ops[0], ptx::ScalarType::B64, B.getInt64(Code));
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
    checkMisalignment(L, /*Deferrable=*/true);
    L.emitReturn();
    L.terminated();
    return true;
  case Opcode::Exit:
    checkMisalignment(L, /*Deferrable=*/L.isKernel());
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
  case Opcode::Brkpt:     // without a debugger attached the GPU ends the launch at a breakpoint as at a trap
    checkMisalignment(L); // the access before the trap faulted first
    L.callHelper("ptxrt_trap_at", B.getVoidTy(),
                 {L.threadCtx(), B.CreateGlobalString(L.module().where(I.Loc), "ptx.trap.loc")});
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
  case Opcode::Createpolicy:
    return lowerCreatepolicy(L, I);
  case Opcode::Membar:
  case Opcode::Fence:
    B.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
    return true;
  default:
    return false;
  }
}
