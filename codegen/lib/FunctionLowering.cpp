// Lowering of one PTX function: registers become allocas (SROA/mem2reg make them SSA), labels basic blocks,
// guards conditional branches around the guarded instruction; the instruction families do the rest.
#include "FunctionLowering.h"
#include "DebugLocations.h"
#include "Markers.h"
#include "MatrixBatches.h"
#include "ProgressPoints.h"
#include "passes/Passes.h"

#include "ptxforge/codegen/DeviceRuntime.h"
#include "ptxforge/ptx/Printer.h"
#include "ptxforge/ptx/Requirements.h"

#include "llvm/Support/SaveAndRestore.h"

using namespace ptxforge;
using namespace ptxforge::codegen;
using namespace ptxforge::codegen::detail;
using ptx::ScalarType;

FunctionLowering::FunctionLowering(ModuleLowering &ML, const ptx::Function &F, llvm::Function *LF, bool IsKernel)
    : ML(ML), F(F), LF(LF), IsKernel(IsKernel), B(ML.Ctx) {}

llvm::AllocaInst *FunctionLowering::scratch(llvm::Type *Ty, unsigned Count, unsigned Slot) {
  llvm::AllocaInst *&A = Scratch[{Slot, Ty}];
  if (!A) {
    llvm::BasicBlock &Entry = LF->getEntryBlock();
    llvm::IRBuilder<> EB(&Entry, Entry.getFirstInsertionPt());
    A = EB.CreateAlloca(Ty, EB.getInt32(Count));
  } else if (Count > llvm::cast<llvm::ConstantInt>(A->getArraySize())->getZExtValue()) {
    A->setOperand(0, B.getInt32(Count));
  }
  return A;
}

llvm::AllocaInst *FunctionLowering::reductionSequence(unsigned Id) {
  llvm::AllocaInst *&A = ReductionSequences[Id];
  if (!A) {
    llvm::BasicBlock &Entry = LF->getEntryBlock();
    llvm::IRBuilder<> EB(&Entry, Entry.getFirstInsertionPt());
    A = EB.CreateAlloca(EB.getInt32Ty(), nullptr, "bar.red.seq");
    EB.CreateStore(EB.getInt32(0), A);
  }
  return A;
}

llvm::Type *FunctionLowering::bitsType(ScalarType T) {
  if (T == ScalarType::Pred)
    return B.getInt1Ty();
  unsigned W = ptx::bitWidth(T);
  return B.getIntNTy(W < 8 ? 8 : W);
}

llvm::Type *FunctionLowering::floatType(ScalarType T) {
  switch (T) {
  case ScalarType::F16:
    return B.getHalfTy();
  case ScalarType::BF16:
    return B.getBFloatTy();
  case ScalarType::F32:
    return B.getFloatTy();
  case ScalarType::F64:
    return B.getDoubleTy();
  default:
    return nullptr;
  }
}

llvm::Value *FunctionLowering::ctxField(unsigned Field, unsigned Index) {
  llvm::Value *P;
  if (Field <= TCNctaid)
    P = B.CreateInBoundsGEP(ML.ThreadCtxTy, TCtx, {B.getInt32(0), B.getInt32(Field), B.getInt32(Index)});
  else
    P = B.CreateStructGEP(ML.ThreadCtxTy, TCtx, Field);
  llvm::Type *Ty = (Field == TCShared || Field == TCBlock) ? static_cast<llvm::Type *>(B.getPtrTy()) : B.getInt32Ty();
  return detail::withLaunchRange(B.CreateLoad(Ty, P), Field, Index);
}

llvm::Value *FunctionLowering::sharedBase() {
  ML.SharedReaders.insert(LF);
  return ctxField(TCShared);
}

llvm::Value *FunctionLowering::callHelper(llvm::StringRef Name, llvm::Type *Ret, llvm::ArrayRef<llvm::Value *> Args) {
  // Helpers take plain pointers (the C++ runtime sees one address space).
  std::vector<llvm::Value *> Casts(Args.begin(), Args.end());
  std::vector<llvm::Type *> Tys;
  for (llvm::Value *&A : Casts) {
    if (A->getType()->isPointerTy() && A->getType()->getPointerAddressSpace() != 0)
      A = B.CreateAddrSpaceCast(A, B.getPtrTy());
    Tys.push_back(A->getType());
  }
  llvm::FunctionCallee C = ML.Mod.getOrInsertFunction(Name, llvm::FunctionType::get(Ret, Tys, false));
  return B.CreateCall(C, Casts);
}

bool FunctionLowering::unsupported(const ptx::Instruction &I, const std::string &What) {
  if (ML.Error.empty())
    ML.Error = ML.where(I.Loc) + ": error: instruction '" + ptx::instructionName(I) + "' is not supported by the " +
               "CPU back end yet" + (What.empty() ? "" : " (" + What + ")");
  return true;
}

void FunctionLowering::terminated() {
  llvm::BasicBlock *Dead = llvm::BasicBlock::Create(ML.Ctx, "after", LF);
  B.SetInsertPoint(Dead);
}

llvm::BasicBlock *FunctionLowering::labelBlock(uint32_t LabelIndex) {
  if (!Labels[LabelIndex])
    Labels[LabelIndex] = llvm::BasicBlock::Create(ML.Ctx, F.Labels[LabelIndex].Name, LF);
  return Labels[LabelIndex];
}

void FunctionLowering::emitReturn() { B.CreateRetVoid(); }

void FunctionLowering::prologue() {
  llvm::BasicBlock *Entry = llvm::BasicBlock::Create(ML.Ctx, "entry", LF);
  B.SetInsertPoint(Entry);
  TCtx = LF->getArg(0);
  if (IsKernel) {
    Params = LF->getArg(1);
    uint64_t Bytes;
    for (const ParamInfo &P : kernelParamLayout(F, Bytes))
      KernelParamOffsets.push_back(P.Offset);
  } else {
    for (unsigned I = 1; I < LF->arg_size(); ++I)
      ParamPtrs.push_back(LF->getArg(I));
  }
  Regs.assign(F.Registers.size(), nullptr); // the slots come at first use (regSlot)
  // `.reg` parameters of a .func arrive through pointers like `.param` ones: copy them in.
  size_t NR = F.Sig.Returns.size();
  for (size_t P = 0; P < F.Sig.Params.size() && !IsKernel; ++P) {
    const ptx::VariableDecl &D = F.Sig.Params[P];
    if (D.Space != ptx::StateSpace::Reg)
      continue;
    for (const ptx::RegisterDecl &RD : F.RegisterDecls)
      if (RD.Name == D.Name)
        B.CreateStore(B.CreateLoad(bitsType(D.Type), ParamPtrs[NR + P]), regSlot(RD.First));
  }
  LocalPtrs.resize(F.Locals.size(), nullptr);
  for (size_t V = 0; V < F.Locals.size(); ++V) {
    const ptx::VariableDecl &D = F.Locals[V];
    if (D.Space == ptx::StateSpace::Shared)
      continue; // function-scope .shared: laid out with the module's (see symbolValue)
    uint64_t Size = std::max<uint64_t>(1, D.sizeInBytes());
    auto *A = B.CreateAlloca(llvm::ArrayType::get(B.getInt8Ty(), Size), nullptr, D.Name);
    A->setAlignment(llvm::Align(std::max<uint64_t>(16, D.alignment())));
    LocalPtrs[V] = A;
  }
  Labels.assign(F.Labels.size(), nullptr);
}

namespace {

/// What PTX's address of a kernel is (`mov.u64 %rd, kernel;`, which device-side launches take): a constant
/// {DeviceEntryMagic, the kernel's name, NUL} defined once per module, so that every part of a split module
/// (SplitModule.cpp puts it in the shared part) gives the same address, and the device runtime reads back which
/// kernel it names (exec/DeviceRuntime.cpp).
llvm::GlobalVariable *entryDescriptor(ModuleLowering &ML, const ptx::Function &F) {
  std::string Name = "__ptx_entry_" + F.Name.str();
  if (llvm::GlobalVariable *G = ML.Mod.getNamedGlobal(Name))
    return G;
  llvm::Constant *Magic = llvm::ConstantInt::get(llvm::Type::getInt64Ty(ML.Ctx), DeviceEntryMagic);
  llvm::Constant *Text = llvm::ConstantDataArray::getString(ML.Ctx, F.Name, /*AddNull=*/true);
  llvm::Constant *Init = llvm::ConstantStruct::getAnon({Magic, Text});
  auto *G = new llvm::GlobalVariable(ML.Mod, Init->getType(), /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
                                     Init, Name);
  G->setAlignment(llvm::Align(8));
  return G;
}

} // namespace

llvm::Constant *ptxforge::codegen::detail::functionAddress(ModuleLowering &ML, size_t K) {
  if (ML.M.Functions[K]->IsEntry)
    return entryDescriptor(ML, *ML.M.Functions[K]);
  return ML.Functions[K];
}

llvm::Value *FunctionLowering::symbolPointer(const ptx::Operand &Op) {
  switch (Op.Target.Kind) {
  case ptx::SymbolKind::Variable: {
    const ptx::VariableDecl &V = ML.M.Globals[Op.Target.Index];
    if (V.Space == ptx::StateSpace::Shared)
      return B.CreateGEP(B.getInt8Ty(), sharedBase(), B.getInt64(ML.SharedOffsets[Op.Target.Index]));
    if (ML.Globals[Op.Target.Index])
      return ML.Globals[Op.Target.Index];
    return llvm::ConstantPointerNull::get(B.getPtrTy());
  }
  case ptx::SymbolKind::LocalVariable:
    if (LocalPtrs[Op.Target.Index])
      return LocalPtrs[Op.Target.Index];
    return B.CreateGEP(B.getInt8Ty(), sharedBase(), B.getInt64(ML.LocalSharedOffsets[&F.Locals[Op.Target.Index]]));
  case ptx::SymbolKind::Param:
    if (IsKernel)
      return B.CreateGEP(B.getInt8Ty(), Params, B.getInt64(KernelParamOffsets[Op.Target.Index]));
    return ParamPtrs[F.Sig.Returns.size() + Op.Target.Index];
  case ptx::SymbolKind::ReturnParam:
    return ParamPtrs[Op.Target.Index];
  case ptx::SymbolKind::Function:
    return functionAddress(ML, Op.Target.Index);
  default:
    return llvm::ConstantPointerNull::get(B.getPtrTy());
  }
}

llvm::Value *FunctionLowering::symbolValue(const ptx::Operand &Op, unsigned Bits) {
  // Shared variables are addressed by their offset in the shared window; `.extern .shared` arrays (dynamic
  // shared memory) start after the static layout.
  if (Op.Target.Kind == ptx::SymbolKind::Variable && ML.M.Globals[Op.Target.Index].Space == ptx::StateSpace::Shared)
    return B.getIntN(Bits, ML.M.Globals[Op.Target.Index].Link == ptx::Linkage::Extern
                               ? ML.dynamicSharedOffset()
                               : ML.SharedOffsets[Op.Target.Index]);
  if (Op.Target.Kind == ptx::SymbolKind::LocalVariable && F.Locals[Op.Target.Index].Space == ptx::StateSpace::Shared)
    return B.getIntN(Bits, ML.LocalSharedOffsets[&F.Locals[Op.Target.Index]]);
  llvm::Value *P = symbolPointer(Op);
  return B.CreatePtrToInt(P, B.getIntNTy(Bits));
}

llvm::AllocaInst *FunctionLowering::regSlot(ptx::RegId R) {
  llvm::AllocaInst *&A = Regs[R];
  if (!A) {
    const ptx::RegisterInfo &Info = F.Registers[R];
    llvm::Type *Ty = bitsType(Info.Type);
    if (Info.VectorWidth > 1)
      Ty = llvm::ArrayType::get(Ty, Info.VectorWidth);
    llvm::BasicBlock &Entry = LF->getEntryBlock();
    llvm::IRBuilder<> EB(&Entry, Entry.getFirstInsertionPt());
    A = EB.CreateAlloca(Ty, nullptr, F.registerName(R));
  }
  return A;
}

llvm::Value *FunctionLowering::addressRegister(const ptx::Operand &Op) {
  llvm::AllocaInst *A = regSlot(Op.Reg);
  return B.CreateZExtOrTrunc(B.CreateLoad(A->getAllocatedType(), A), B.getInt64Ty());
}

llvm::Value *FunctionLowering::address(const ptx::Operand &Op, ptx::StateSpace S) {
  llvm::Value *Base;
  if (Op.Reg == ptx::NoReg && !Op.Name.empty() && S != ptx::StateSpace::Shared)
    if (llvm::Value *P = symbolPointer(Op); !llvm::isa<llvm::ConstantPointerNull>(P))
      // A variable, parameter or function plus a constant: an address LLVM sees into, never 0.
      return B.CreateGEP(B.getInt8Ty(), P, B.getInt64(Op.Bits));
  if (Op.Reg != ptx::NoReg) {
    Base = addressRegister(Op);
  } else if (!Op.Name.empty()) {
    bool SharedSym =
        Op.Target.Kind == ptx::SymbolKind::Variable && ML.M.Globals[Op.Target.Index].Space == ptx::StateSpace::Shared;
    if (S == ptx::StateSpace::Shared || !SharedSym) {
      if (S == ptx::StateSpace::Shared)
        Base = symbolValue(Op, 64);
      else
        Base = B.CreatePtrToInt(symbolPointer(Op), B.getInt64Ty());
    } else {
      // A shared symbol used through a generic address: window base + offset.
      Base = B.CreatePtrToInt(symbolPointer(Op), B.getInt64Ty());
    }
  } else {
    Base = B.getInt64(0);
  }
  if (Op.Bits)
    Base = B.CreateAdd(Base, B.getInt64(Op.Bits));
  if (S == ptx::StateSpace::Shared && Current && Current->has(ptx::Modifier::Shared_Cluster))
    return detail::clusterSharedPointer(*this, Base); // another block's shared memory, maybe
  if (S == ptx::StateSpace::Shared)
    return B.CreateGEP(B.getInt8Ty(), sharedBase(), B.CreateAnd(Base, B.getInt64(0xffffffffu)));
  // Any other computed address may be 0, which faults on the GPU: see passes::PtxAddressSpace.
  return B.CreateIntToPtr(Base, B.getPtrTy(passes::PtxAddressSpace));
}

llvm::Value *FunctionLowering::read(const ptx::Operand &Op, ScalarType T) {
  llvm::Type *Ty = bitsType(T);
  unsigned W = Ty->getIntegerBitWidth();
  switch (Op.Kind) {
  case ptx::OperandKind::Register:
    return readRegister(Op, T, Ty);
  case ptx::OperandKind::Immediate:
    return Op.ImmKind == ptx::ImmediateKind::Int ? readIntegerLiteral(Op, T, Ty) : readFloatLiteral(Op, T, Ty);
  case ptx::OperandKind::Special:
    return B.CreateZExtOrTrunc(readSpecial(Op), Ty);
  case ptx::OperandKind::Symbol:
    return B.CreateZExtOrTrunc(symbolValue(Op, W < 32 ? 32 : W), Ty);
  default:
    return unreadable(Op, Ty);
  }
}

llvm::Value *FunctionLowering::readRegister(const ptx::Operand &Op, ScalarType T, llvm::Type *Ty) {
  llvm::AllocaInst *A = regSlot(Op.Reg);
  llvm::Type *RT = A->getAllocatedType();
  llvm::Value *V;
  if (RT->isArrayTy()) {
    unsigned Idx = Op.Component ? Op.Component - 1 : 0;
    V = B.CreateLoad(RT->getArrayElementType(), B.CreateConstGEP2_32(RT, A, 0, Idx));
  } else {
    V = B.CreateLoad(RT, A);
  }
  if (V->getType() == Ty)
    return Op.Negated && T == ScalarType::Pred ? B.CreateNot(V) : V;
  if (T == ScalarType::Pred)
    return B.CreateICmpNE(V, llvm::ConstantInt::get(V->getType(), 0));
  if (V->getType()->isIntegerTy(1))
    return B.CreateZExt(V, Ty);
  return B.CreateZExtOrTrunc(V, Ty);
}

llvm::Value *FunctionLowering::readIntegerLiteral(const ptx::Operand &Op, ScalarType T, llvm::Type *Ty) {
  if (T == ScalarType::Pred)
    return B.getInt1(Op.Bits != 0);
  if (T == ScalarType::F32 || T == ScalarType::F64 || T == ScalarType::F16) {
    // Integer literal for a float operand: its value.
    llvm::Value *FV = llvm::ConstantFP::get(floatType(T), static_cast<double>(static_cast<int64_t>(Op.Bits)));
    return B.CreateBitCast(FV, Ty);
  }
  return llvm::ConstantInt::get(Ty, Op.Bits);
}

llvm::Value *FunctionLowering::readFloatLiteral(const ptx::Operand &Op, ScalarType T, llvm::Type *Ty) {
  uint64_t Bits = Op.Bits;
  double D;
  if (Op.ImmKind == ptx::ImmediateKind::F32Bits) {
    float Fv;
    uint32_t B32 = static_cast<uint32_t>(Bits);
    memcpy(&Fv, &B32, 4);
    D = Fv;
  } else {
    memcpy(&D, &Bits, 8);
  }
  if (T == ScalarType::F32) {
    if (Op.ImmKind == ptx::ImmediateKind::F32Bits)
      return B.getInt32(static_cast<uint32_t>(Bits));
    float Fv = static_cast<float>(D);
    uint32_t B32;
    memcpy(&B32, &Fv, 4);
    return B.getInt32(B32);
  }
  if (T == ScalarType::F64) {
    uint64_t B64;
    memcpy(&B64, &D, 8);
    return B.getInt64(B64);
  }
  if (T == ScalarType::F16 || T == ScalarType::BF16) {
    llvm::APFloat AF(D);
    bool LosesInfo;
    AF.convert(T == ScalarType::F16 ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat(),
               llvm::APFloat::rmNearestTiesToEven, &LosesInfo);
    return B.getInt16(static_cast<uint16_t>(AF.bitcastToAPInt().getZExtValue()));
  }
  // A float literal for a bit-typed operand: its own bits.
  return llvm::ConstantInt::get(Ty, Bits);
}

llvm::Value *FunctionLowering::readSpecial(const ptx::Operand &Op) {
  unsigned C = Op.Component ? Op.Component - 1 : 0;
  switch (Op.Sreg) {
  case ptx::SpecialReg::Tid:
    return ctxField(TCTid, C);
  case ptx::SpecialReg::Ntid:
    return ctxField(TCNtid, C);
  case ptx::SpecialReg::Ctaid:
    return ctxField(TCCtaid, C);
  case ptx::SpecialReg::Nctaid:
    return ctxField(TCNctaid, C);
  case ptx::SpecialReg::Laneid:
    return ctxField(TCLaneId);
  case ptx::SpecialReg::Warpid:
    return ctxField(TCWarpId);
  case ptx::SpecialReg::Nwarpid:
    return ctxField(TCNWarpId);
  case ptx::SpecialReg::Smid:
    return ctxField(TCSmId);
  case ptx::SpecialReg::Nsmid:
    return ctxField(TCNSmId);
  case ptx::SpecialReg::DynamicSmemSize:
    return ctxField(TCDynamicSmemSize);
  case ptx::SpecialReg::TotalSmemSize:
    return ctxField(TCTotalSmemSize);
  case ptx::SpecialReg::WarpSz:
    return B.getInt32(32);
  case ptx::SpecialReg::LanemaskEq:
  case ptx::SpecialReg::LanemaskLe:
  case ptx::SpecialReg::LanemaskLt:
  case ptx::SpecialReg::LanemaskGe:
  case ptx::SpecialReg::LanemaskGt:
    return laneMask(Op.Sreg);
  case ptx::SpecialReg::Clock:
  case ptx::SpecialReg::ClockHi:
    return B.CreateTrunc(callHelper("ptxrt_clock64", B.getInt64Ty(), {}), B.getInt32Ty());
  case ptx::SpecialReg::Clock64:
    return callHelper("ptxrt_clock64", B.getInt64Ty(), {});
  case ptx::SpecialReg::Globaltimer:
  case ptx::SpecialReg::GlobaltimerLo:
  case ptx::SpecialReg::GlobaltimerHi: {
    llvm::Value *V = callHelper("ptxrt_globaltimer", B.getInt64Ty(), {});
    return Op.Sreg == ptx::SpecialReg::GlobaltimerHi ? B.CreateLShr(V, 32) : V;
  }
  case ptx::SpecialReg::Envreg1:
  case ptx::SpecialReg::Envreg2: {
    llvm::Value *WS = B.CreateLoad(B.getInt64Ty(), B.CreateStructGEP(ML.ThreadCtxTy, TCtx, TCGridWorkspace));
    return B.CreateTrunc(Op.Sreg == ptx::SpecialReg::Envreg1 ? B.CreateLShr(WS, 32) : WS, B.getInt32Ty());
  }
  default:
    if (llvm::Value *V = detail::readClusterSpecial(*this, Op))
      return V;
    return B.getInt32(0);
  }
}

llvm::Value *FunctionLowering::laneMask(ptx::SpecialReg R) {
  llvm::Value *Lane = ctxField(TCLaneId);
  llvm::Value *Bit = B.CreateShl(B.getInt32(1), Lane);
  switch (R) {
  case ptx::SpecialReg::LanemaskEq:
    return Bit;
  case ptx::SpecialReg::LanemaskLt:
    return B.CreateSub(Bit, B.getInt32(1));
  case ptx::SpecialReg::LanemaskLe:
    return B.CreateOr(Bit, B.CreateSub(Bit, B.getInt32(1)));
  case ptx::SpecialReg::LanemaskGe:
    return B.CreateNot(B.CreateSub(Bit, B.getInt32(1)));
  default:
    return B.CreateNot(B.CreateOr(Bit, B.CreateSub(Bit, B.getInt32(1))));
  }
}

llvm::Value *FunctionLowering::unreadable(const ptx::Operand &Op, llvm::Type *Ty) {
  const char *What = "an unknown";
  switch (Op.Kind) {
  case ptx::OperandKind::RegPair:
    What = "a register pair";
    break;
  case ptx::OperandKind::Address:
    What = "an address";
    break;
  case ptx::OperandKind::Vector:
    What = "a vector";
    break;
  case ptx::OperandKind::List:
    What = "a list";
    break;
  case ptx::OperandKind::Sink:
    What = "a sink";
    break;
  default:
    break;
  }
  std::string Why = std::string(What) + " operand read as a value";
  if (Current)
    unsupported(*Current, Why);
  else if (ML.Error.empty())
    ML.Error = ML.where(Op.Loc) + ": error: " + Why + " is not supported by the CPU back end yet";
  // Lowering stops at this instruction (run() checks ML.Error), so the value is never emitted.
  return llvm::PoisonValue::get(Ty);
}

llvm::Value *FunctionLowering::readFloat(const ptx::Operand &Op, ScalarType T) {
  return B.CreateBitCast(read(Op, T), floatType(T));
}

void FunctionLowering::write(const ptx::Operand &Dst, ScalarType T, llvm::Value *V) {
  if (Dst.Kind == ptx::OperandKind::Sink)
    return;
  if (Dst.Kind != ptx::OperandKind::Register || Dst.Reg >= Regs.size())
    return;
  if (V->getType()->isFloatingPointTy())
    V = B.CreateBitCast(V, B.getIntNTy(V->getType()->getPrimitiveSizeInBits()));
  llvm::AllocaInst *A = regSlot(Dst.Reg);
  llvm::Type *RT = A->getAllocatedType();
  llvm::Value *Ptr = A;
  if (RT->isArrayTy()) {
    Ptr = B.CreateConstGEP2_32(RT, A, 0, Dst.Component ? Dst.Component - 1 : 0);
    RT = RT->getArrayElementType();
  }
  if (V->getType() != RT) {
    if (RT->isIntegerTy(1))
      V = B.CreateICmpNE(V, llvm::ConstantInt::get(V->getType(), 0));
    else if (V->getType()->getIntegerBitWidth() < RT->getIntegerBitWidth() && ptx::kindOf(T) == ptx::TypeKind::Signed)
      V = B.CreateSExt(V, RT);
    else
      V = B.CreateZExtOrTrunc(V, RT);
  }
  B.CreateStore(V, Ptr);
}

namespace {
/// Memcheck mode: instructions through which threads may order their shared-memory accesses other than
/// bar.sync (which reports its own arrival and release): racecheck does not model them, so each ends the
/// barrier interval, as if a barrier had been passed (races across them go unreported, never falsely reported).
bool synchronizesOtherwise(const ptx::Instruction &I) {
  switch (I.Op) {
  case ptx::Opcode::Bar:
  case ptx::Opcode::Barrier:
    return I.has(ptx::Modifier::Warp) || I.has(ptx::Modifier::Arrive) || I.has(ptx::Modifier::Red);
  case ptx::Opcode::Atom:
  case ptx::Opcode::Red:
  case ptx::Opcode::Cp:
  case ptx::Opcode::Elect:
  case ptx::Opcode::Fence:
  case ptx::Opcode::Match:
  case ptx::Opcode::Mbarrier:
  case ptx::Opcode::Membar:
  case ptx::Opcode::Nanosleep:
  case ptx::Opcode::Redux:
  case ptx::Opcode::Shfl:
  case ptx::Opcode::Vote:
    return true;
  default:
    return false;
  }
}
} // namespace

bool FunctionLowering::lowerInstruction(const ptx::Instruction &I) {
  llvm::SaveAndRestore<const ptx::Instruction *> Lowering(Current, &I);
  if (ptx::impliesFtz(ML.M, I)) { // an sm_1x target's single-precision semantics
    ptx::Instruction Flushing = I;
    Flushing.Qualifiers.push_back(ptx::Qualifier::modifier(ptx::Modifier::Ftz));
    return lowerInstruction(Flushing);
  }
  // Other threads see this thread's memory once it reaches a barrier: a misaligned access faults first. A
  // region-split block function (BarrierRegions.cpp) defers the check to the end of the region's loop, which
  // is where the barrier's other side begins.
  if (I.Op == ptx::Opcode::Bar || I.Op == ptx::Opcode::Barrier || I.Op == ptx::Opcode::Mbarrier)
    checkMisalignment(*this, /*Deferrable=*/IsKernel);
  bool Lowered = lowerCluster(*this, I) || lowerControl(*this, I) || lowerMemory(*this, I) || lowerInteger(*this, I) ||
                 lowerFloat(*this, I) || lowerConvert(*this, I) || lowerWarp(*this, I) || lowerAtomic(*this, I) ||
                 lowerAsync(*this, I) || lowerMatrix(*this, I) || lowerTexture(*this, I) || lowerWarpgroup(*this, I) ||
                 unsupported(I);
  if (Lowered && ML.Memcheck && synchronizesOtherwise(I) && !B.GetInsertBlock()->getTerminator())
    callHelper("ptxrt_mc_barrier", B.getVoidTy(),
               {threadCtx(), llvm::ConstantPointerNull::get(B.getPtrTy()), B.getInt32(2)});
  return Lowered;
}

void FunctionLowering::emitProgressPoint(LoopCutMode Mode, bool Cut) {
  // A lockstep or spin point is a loop cut (always releasable) whose mode, the helper's second operand, tells it
  // from the loop cuts the region builder makes itself (RegionCuts.h: LoopCutMode). A callee's spin point is no
  // cut (the builder cuts kernel bodies only): its calls of the helper are alike but unmarked.
  const char *Helper = Mode == LCSpin ? "ptxrt_spin_point" : "ptxrt_lockstep";
  auto *CI = llvm::cast<llvm::CallInst>(callHelper(Helper, B.getVoidTy(), {threadCtx(), B.getInt32(Mode)}));
  if (Cut)
    detail::markRegionCut(CI, {RCLoop, /*Arg=*/1});
}

void FunctionLowering::lowerStatement(uint32_t Index, const detail::ProgressPoints &Points) {
  const ptx::Instruction &I = F.Instructions[Index];
  if (Points.LockstepBefore[Index] && IsKernel)
    emitProgressPoint(LCLockstep, /*Cut=*/true);
  if (Points.SpinBackEdge[Index])
    emitProgressPoint(LCSpin, /*Cut=*/IsKernel);
  // A guarded branch is a conditional branch; any other guarded instruction is skipped when false.
  if (I.Guard == ptx::NoReg || I.Op == ptx::Opcode::Bra) {
    lowerInstruction(I);
    return;
  }
  llvm::Value *G = B.CreateLoad(B.getInt1Ty(), regSlot(I.Guard));
  if (I.GuardNegated)
    G = B.CreateNot(G);
  llvm::BasicBlock *Then = llvm::BasicBlock::Create(ML.Ctx, "guarded", LF);
  llvm::BasicBlock *Cont = llvm::BasicBlock::Create(ML.Ctx, "cont", LF);
  B.CreateCondBr(G, Then, Cont);
  B.SetInsertPoint(Then);
  lowerInstruction(I);
  if (!B.GetInsertBlock()->getTerminator())
    B.CreateBr(Cont);
  B.SetInsertPoint(Cont);
}

const detail::MatrixBatchPlan &FunctionLowering::matrixBatchPlan(const detail::MatrixBatches &Batches, unsigned Key) {
  std::shared_ptr<detail::MatrixBatchPlan> &Plan = BatchPlans[Key];
  if (!Plan) {
    const detail::MatrixBatch &Batch = Batches.Batches.find(Key)->second;
    std::vector<const ptx::Instruction *> Products, Loads;
    for (unsigned Pos : Batch.Products)
      Products.push_back(&F.Instructions[F.Body[Pos].Index]);
    for (unsigned Pos : Batch.Loads)
      Loads.push_back(&F.Instructions[F.Body[Pos].Index]);
    llvm::SaveAndRestore<const ptx::Instruction *> Lowering(Current, Products.front());
    Plan = detail::planMmaBatch(*this, Products, Loads);
  }
  return *Plan;
}

bool FunctionLowering::run() {
  PayloadUnobserved = detail::nanPayloadUnobserved(F);
  detail::ProgressPoints Points = detail::findProgressPoints(F);
  if (ML.DI)
    Subprogram = detail::attachSubprogram(*ML.DI, *LF, ML.line(F.Loc));
  prologue();
  llvm::BasicBlock *First = llvm::BasicBlock::Create(ML.Ctx, "body", LF);
  B.CreateBr(First);
  B.SetInsertPoint(First);
  detail::MatrixBatches Batches = detail::findMatrixBatches(F, Points);
  for (unsigned Pos : Batches.Order) {
    const ptx::Statement &S = F.Body[Pos];
    if (S.Kind == ptx::StatementKind::Label) {
      llvm::BasicBlock *BB = labelBlock(S.Index);
      if (!B.GetInsertBlock()->getTerminator())
        B.CreateBr(BB);
      B.SetInsertPoint(BB);
      continue;
    }
    if (S.Kind != ptx::StatementKind::Instruction)
      continue;
    const ptx::Instruction &I = F.Instructions[S.Index];
    if (Subprogram) // what the instruction's code does at a fault names it (CompiledModule::sourceLocation)
      B.SetCurrentDebugLocation(ML.location(I.Loc, Subprogram));
    auto Load = Batches.LoadBatch.find(Pos); // a load a batch may take over
    if (Batches.Batches.count(Pos)) {
      llvm::SaveAndRestore<const ptx::Instruction *> Lowering(Current, &I);
      detail::lowerMmaBatch(*this, matrixBatchPlan(Batches, Pos));
    } else if (Load == Batches.LoadBatch.end() ||
               !detail::lowerTakenLoad(*this, matrixBatchPlan(Batches, Load->second), I)) {
      lowerStatement(S.Index, Points);
    }
    if (!ML.Error.empty())
      return false;
  }
  B.SetCurrentDebugLocation(llvm::DebugLoc());
  if (!B.GetInsertBlock()->getTerminator())
    emitReturn();
  // Blocks left without terminators (dead code after a branch) end in unreachable.
  for (llvm::BasicBlock &BB : *LF)
    if (!BB.getTerminator()) {
      B.SetInsertPoint(&BB);
      B.CreateUnreachable();
    }
  return ML.Error.empty();
}

llvm::Value *ptxforge::codegen::detail::pure(llvm::Value *V) {
  if (auto *C = llvm::dyn_cast<llvm::CallInst>(V)) {
    C->setDoesNotAccessMemory();
    C->setDoesNotThrow();
    C->addFnAttr(llvm::Attribute::WillReturn);
  }
  return V;
}

const char *ptxforge::codegen::detail::directedRounding(const ptx::Instruction &I) {
  if (I.has(ptx::Modifier::Rz))
    return "rz";
  if (I.has(ptx::Modifier::Rm))
    return "rm";
  if (I.has(ptx::Modifier::Rp))
    return "rp";
  return nullptr;
}
