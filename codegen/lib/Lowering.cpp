// ptx::Module -> llvm::Module: globals and the shared-memory layout, one LLVM function per PTX function, and
// for each kernel a thread function `void K(ThreadContext *, const char *params)`.
#include "BarrierRegions.h"
#include "DebugLocations.h"
#include "FunctionLowering.h"
#include "Markers.h"
#include "ProgressPoints.h"
#include "ThreadLoop.h"
#include "passes/Passes.h"

#include "llvm/Analysis/CFG.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include "ptxforge/codegen/DeviceRuntime.h"
#include "ptxforge/ptx/Printer.h"

#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <type_traits>

using namespace ptxforge;
using namespace ptxforge::codegen;
using namespace ptxforge::codegen::detail;

std::string ModuleLowering::where(ptx::SourceLoc L) const {
  if (!Source || !L.isValid())
    return M.SourceName;
  ptx::LineColumn LC = Source->lineColumn(L);
  return Source->name().str() + ":" + std::to_string(LC.Line) + ":" + std::to_string(LC.Column);
}

unsigned ModuleLowering::line(ptx::SourceLoc L) const { return Source && L.isValid() ? Source->lineColumn(L).Line : 0; }

llvm::DILocation *ModuleLowering::location(ptx::SourceLoc L, llvm::DIScope *Scope) const {
  if (!Source || !L.isValid())
    return llvm::DILocation::get(Ctx, 0, 0, Scope);
  ptx::LineColumn LC = Source->lineColumn(L);
  return llvm::DILocation::get(Ctx, LC.Line, LC.Column, Scope);
}

namespace {

uint64_t alignTo(uint64_t V, uint64_t A) { return A ? (V + A - 1) / A * A : V; }

/// Bytes of an initializer flattened to the variable's element type (symbols resolved to addresses later).
struct InitBuilder {
  ModuleLowering &ML;
  const ptx::VariableDecl &V;
  std::vector<llvm::Constant *> Elems;
  llvm::Type *ElemTy;
  unsigned ElemBytes;

  InitBuilder(ModuleLowering &ML, const ptx::VariableDecl &V) : ML(ML), V(V) {
    ElemBytes = std::max<unsigned>(1, ptx::bitWidth(V.Type) / 8);
    ElemTy = llvm::IntegerType::get(ML.Ctx, ElemBytes * 8);
  }

  llvm::Constant *symbolConstant(const ptx::Initializer &In) {
    llvm::Constant *Base = nullptr;
    for (size_t G = 0; G < ML.M.Globals.size(); ++G)
      if (ML.M.Globals[G].Name == In.Name && ML.Globals[G])
        Base = ML.Globals[G];
    // A function's address (`.global .u64 fp = f;`, a table of device function pointers): its LLVM function
    // is named otherwise (declareFunction), so it is found by its PTX name.
    for (size_t K = 0; !Base && K < ML.M.Functions.size(); ++K)
      if (ML.M.Functions[K]->Name == In.Name)
        Base = functionAddress(ML, K);
    if (!Base)
      return llvm::ConstantInt::get(ElemTy, 0);
    llvm::Constant *Addr = llvm::ConstantExpr::getPtrToInt(Base, llvm::Type::getInt64Ty(ML.Ctx));
    if (In.Bits)
      Addr = llvm::ConstantExpr::getAdd(Addr, llvm::ConstantInt::get(Addr->getType(), In.Bits));
    if (ElemBytes != 8)
      return llvm::ConstantInt::get(ElemTy, 0); // 32-bit address of a 64-bit host object: not representable
    return Addr;
  }

  void add(const ptx::Initializer &In) {
    switch (In.K) {
    case ptx::Initializer::Kind::List:
      for (const ptx::Initializer &E : In.Elements)
        add(E);
      break;
    case ptx::Initializer::Kind::Int:
      Elems.push_back(llvm::ConstantInt::get(ElemTy, In.Bits));
      break;
    case ptx::Initializer::Kind::Float: {
      uint64_t Bits = In.Bits;
      if (V.Type == ptx::ScalarType::F32 && In.FloatIsF64) {
        double D;
        memcpy(&D, &Bits, 8);
        float F = static_cast<float>(D);
        uint32_t FB;
        memcpy(&FB, &F, 4);
        Bits = FB;
      } else if (V.Type == ptx::ScalarType::F64 && !In.FloatIsF64) {
        float F;
        uint32_t FB = static_cast<uint32_t>(Bits);
        memcpy(&F, &FB, 4);
        double D = F;
        memcpy(&Bits, &D, 8);
      }
      Elems.push_back(llvm::ConstantInt::get(ElemTy, Bits));
      break;
    }
    case ptx::Initializer::Kind::Symbol:
      Elems.push_back(symbolConstant(In));
      break;
    }
  }

  llvm::Constant *build(uint64_t Count) {
    if (V.HasInit)
      add(V.Init);
    while (Elems.size() < Count)
      Elems.push_back(llvm::ConstantInt::get(ElemTy, 0));
    Elems.resize(Count);
    return llvm::ConstantStruct::getAnon(ML.Ctx, Elems, /*Packed=*/true);
  }
};

} // namespace

std::vector<ParamInfo> ptxforge::codegen::detail::kernelParamLayout(const ptx::Function &F, uint64_t &Bytes) {
  std::vector<ParamInfo> Params;
  uint64_t Off = 0;
  for (const ptx::VariableDecl &P : F.Sig.Params) {
    uint64_t A = std::max<uint64_t>(1, P.Align ? P.Align : P.elementSize());
    Off = alignTo(Off, A);
    Params.push_back({P.Name.str(), Off, P.sizeInBytes(), A});
    Off += P.sizeInBytes();
  }
  Bytes = Off;
  return Params;
}

namespace {

/// Kernel parameters are read-only and nothing else points into their buffer: saying so lets LLVM hoist
/// parameter loads out of thread loops (stores through global pointers could otherwise alias them), and
/// dereferenceable lets it hoist those guarded by a branch too.
void markParamBuffer(llvm::Function *F, unsigned Arg, uint64_t Bytes) {
  F->addParamAttr(Arg, llvm::Attribute::NoAlias);
  F->addParamAttr(Arg, llvm::Attribute::ReadOnly);
  if (Bytes)
    F->addDereferenceableParamAttr(Arg, Bytes);
}

llvm::Function *declareFunction(ModuleLowering &ML, const ptx::Function &F) {
  llvm::Type *Ptr = llvm::PointerType::get(ML.Ctx, 0);
  std::vector<llvm::Type *> Args;
  Args.push_back(Ptr); // ThreadContext *
  if (F.IsEntry) {
    Args.push_back(Ptr); // parameter buffer
  } else {
    for (size_t I = 0; I < F.Sig.Returns.size() + F.Sig.Params.size(); ++I)
      Args.push_back(Ptr);
  }
  auto *FT = llvm::FunctionType::get(llvm::Type::getVoidTy(ML.Ctx), Args, false);
  std::string Name = (F.IsEntry ? "__ptx_kernel_" : "__ptx_func_") + F.Name.str();
  llvm::Function *LF = ML.Mod.getFunction(Name);
  if (!LF) {
    LF = llvm::Function::Create(FT, llvm::GlobalValue::ExternalLinkage, Name, ML.Mod);
    // Threads run on fiber stacks with one guard page below them: a frame larger than a page must touch
    // every page on its way down, or an overflow writes into the neighbouring fiber's stack unnoticed.
    LF->addFnAttr("probe-stack", "inline-asm");
    if (F.IsEntry) {
      uint64_t Bytes;
      kernelParamLayout(F, Bytes);
      markParamBuffer(LF, 1, Bytes);
    }
  }
  return LF;
}

/// Threads in x that one row of a block group spans (emitBlockLoop).
constexpr uint32_t GroupRowThreads = 128;
/// Flat groups (emitBlockLoop): one-row blocks whose %ntid.x is a multiple of FlatGroupAlign (every warp width
/// of passes/WarpVectorize.cpp divides it, so no warp spans two blocks) run up to FlatGroupThreads threads of
/// consecutive blocks as one loop, for the warp vectorizer's stream rounds (WarpVectorize.cpp).
constexpr uint32_t FlatGroupAlign = 256;
constexpr uint32_t FlatGroupThreads = 16384;
/// The block function attribute that says its groups are flat (wrapBlockRange sizes them).
constexpr const char *FlatGroupsAttr = "ptxforge-flat-groups";

/// Whether kernel FI's code (or a function it may call: any, conservatively) addresses shared memory.
bool readsShared(const ModuleLowering &ML, size_t FI) {
  for (size_t G = 0; G < ML.M.Functions.size(); ++G)
    if ((G == FI || !ML.M.Functions[G]->IsEntry) && ML.SharedReaders.count(ML.Functions[G]))
      return true;
  return false;
}

/// `__ptx_block_K(ThreadContext *Template, const char *Params)`: a loop over the block's threads that sets
/// %tid/%laneid/%warpid in a private copy of the template context and calls the (always inlined) thread
/// function. With the context in an alloca, LLVM forwards the stored ids to the inlined loads, so simple
/// kernels vectorize across threads and none pays a call or a runtime round trip per thread.
///
/// Grouped (kernels that never touch shared memory): `__ptx_block_K(Template, Params, ThreadContext *Fault,
/// u32 Groups)` runs blocks %ctaid.x .. %ctaid.x+Groups-1 of one grid row, row by row: the threads of row y of
/// all of them, then row y+1. Threads of a barrier-free kernel may run in any order, and with no shared memory
/// nothing tells blocks apart but %ctaid; a 2D stencil on 32x8 blocks then streams 128 floats per row instead
/// of 32 (Zen 4: a C++ loop in that order takes ~20% less time than in block order; the stencil benchmark ~5%
/// less at 1 thread, ~20% at 2). Misaligned accesses are checked per row of one block and reported with Fault
/// (the worker's template, which the signal handler reads too), whose %ctaid.x follows the group's blocks, so a
/// fault still names its block.
///
/// Flat (Grouped kernels whose threads loop: the warp vectorizer's kind): one loop over a group row's threads of all
/// its blocks (ThreadLoop.h), each thread storing its %ctaid.x; wrapBlockRange makes such groups of one-row
/// blocks only (multi-row blocks run one block a call), so that consecutive blocks' threads form one run that
/// the warp vectorizer's stream rounds walk a grid-stride loop's trips over. A misaligned access is reported
/// at the end of the group, naming the block whose threads ran last, not necessarily the one that made it.
llvm::Function *emitBlockLoop(ModuleLowering &ML, llvm::Function *Thread, bool Grouped) {
  llvm::LLVMContext &C = ML.Ctx;
  llvm::IRBuilder<> B(C);
  llvm::Type *Ptr = B.getPtrTy(), *I32 = B.getInt32Ty();
  auto *FT = Grouped ? llvm::FunctionType::get(B.getVoidTy(), {Ptr, Ptr, Ptr, I32}, false)
                     : llvm::FunctionType::get(B.getVoidTy(), {Ptr, Ptr}, false);
  std::string Name = "__ptx_block_" + Thread->getName().drop_front(strlen("__ptx_kernel_")).str();
  llvm::Function *F = llvm::Function::Create(FT, llvm::GlobalValue::ExternalLinkage, Name, ML.Mod);
  markParamBuffer(F, 1, Thread->getParamDereferenceableBytes(1));
  llvm::SmallVector<std::pair<const llvm::BasicBlock *, const llvm::BasicBlock *>, 4> BackEdges;
  if (Grouped && !Thread->empty())
    llvm::FindFunctionBackedges(*Thread, BackEdges);
  bool Flat = !BackEdges.empty();
  if (Flat)
    F->addFnAttr(FlatGroupsAttr);
  // The loop's own copy of the thread function: inlined, and with its misalignment checks deferred to the end.
  llvm::ValueToValueMapTy VMap;
  std::string CopyName = Thread->getName().str() + ".inblock";
  Thread = llvm::CloneFunction(Thread, VMap);
  Thread->setName(CopyName);
  Thread->setLinkage(llvm::GlobalValue::InternalLinkage);
  Thread->addFnAttr(llvm::Attribute::AlwaysInline);
  // Inlined, a noalias argument becomes an llvm.experimental.noalias.scope.decl in the loop body, a call that
  // counts as a memory access outside the threads' access group and keeps the loop from being parallel
  // (passes::threadAccessGroup). The block function's own arguments say the same about the same pointers.
  for (llvm::Argument &A : Thread->args())
    A.removeAttr(llvm::Attribute::NoAlias);
  foldDeferredChecks(ML, Thread);
  llvm::BasicBlock *Entry = llvm::BasicBlock::Create(C, "entry", F);
  B.SetInsertPoint(Entry);
  llvm::Value *Tmpl = F->getArg(0), *Params = F->getArg(1);
  llvm::AllocaInst *Ctx = B.CreateAlloca(ML.ThreadCtxTy);
  uint64_t Size = ML.Mod.getDataLayout().getTypeAllocSize(ML.ThreadCtxTy);
  B.CreateMemCpy(Ctx, llvm::MaybeAlign(8), Tmpl, llvm::MaybeAlign(8), Size);
  beginDeferredChecks(B, ML, Ctx);
  auto field = [&](llvm::Value *Of, unsigned Field, unsigned Index) {
    return B.CreateInBoundsGEP(ML.ThreadCtxTy, Of, {B.getInt32(0), B.getInt32(Field), B.getInt32(Index)});
  };
  auto ntid = [&](unsigned D) { return detail::withLaunchRange(B.CreateLoad(I32, field(Ctx, TCNtid, D)), TCNtid, D); };
  llvm::Value *NX = ntid(0), *NY = ntid(1), *NZ = ntid(2);
  llvm::Value *FirstX = Grouped ? B.CreateLoad(I32, field(Ctx, TCCtaid, 0)) : nullptr;
  llvm::Value *Fault = Grouped ? F->getArg(2) : nullptr;
  llvm::BasicBlock *Exit = llvm::BasicBlock::Create(C, "exit", F);
  ThreadLoop Loop = emitThreadLoop(ML, F, Ctx, NX, NY, NZ, Exit, ThreadLoopVectors::Any, nullptr, nullptr,
                                   Grouped ? F->getArg(3) : nullptr, Flat);
  B.CreateBr(Loop.Entry);
  B.SetInsertPoint(Loop.Body);
  if (Flat) {
    llvm::Value *X = B.CreateAdd(FirstX, Loop.Group);
    for (llvm::Value *Of : {static_cast<llvm::Value *>(Ctx), static_cast<llvm::Value *>(Fault)})
      B.CreateStore(X, field(Of, TCCtaid, 0));
  }
  B.CreateCall(Thread, {Ctx, Params});
  B.CreateBr(Loop.Latch);
  if (Grouped && !Flat) {
    B.SetInsertPoint(Loop.GroupBody);
    llvm::Value *X = B.CreateAdd(FirstX, Loop.Group);
    for (llvm::Value *Of : {static_cast<llvm::Value *>(Ctx), static_cast<llvm::Value *>(Fault)})
      B.CreateStore(X, field(Of, TCCtaid, 0));
    B.CreateBr(Loop.Body);
    B.SetInsertPoint(Loop.GroupEnd);
    endDeferredChecks(B, ML, Ctx, Fault);
    B.CreateBr(Loop.GroupLatch);
  }
  B.SetInsertPoint(Exit);
  if (!Grouped || Flat)
    endDeferredChecks(B, ML, Ctx, Flat ? Fault : Tmpl);
  B.CreateRetVoid();
  return F;
}

/// Turns a block function (one block per call, or one group of a grid row's blocks: emitBlockLoop) into
/// `__ptx_block_K(ThreadContext *Template, const char *Params, u64 First, u64 Count)`, which runs blocks First ..
/// First+Count-1 (linear ids) with %ctaid stepped in a private copy of the template (and in the template, where
/// a fault handler finds it). The runtime hands each worker chunks of blocks, so a grid of many small blocks
/// (vecadd: 65536 blocks of 256 threads) costs one call and one fault point per chunk, not per block, and LLVM
/// sees the block setup it can hoist out of the loop.
void wrapBlockRange(ModuleLowering &ML, llvm::Function *Block) {
  llvm::LLVMContext &C = ML.Ctx;
  llvm::IRBuilder<> B(C);
  llvm::Type *Ptr = B.getPtrTy(), *I32 = B.getInt32Ty(), *I64 = B.getInt64Ty();
  bool Grouped = Block->arg_size() == 4;
  std::string Name = Block->getName().str();
  Block->setName(Name + ".one");
  Block->setLinkage(llvm::GlobalValue::InternalLinkage);
  Block->addFnAttr(llvm::Attribute::AlwaysInline);
  auto *FT = llvm::FunctionType::get(B.getVoidTy(), {Ptr, Ptr, I64, I64}, false);
  llvm::Function *F = llvm::Function::Create(FT, llvm::GlobalValue::ExternalLinkage, Name, ML.Mod);
  markParamBuffer(F, 1, Block->getParamDereferenceableBytes(1));
  llvm::BasicBlock *Entry = llvm::BasicBlock::Create(C, "entry", F), *Loop = llvm::BasicBlock::Create(C, "block", F),
                   *Exit = llvm::BasicBlock::Create(C, "exit", F);
  B.SetInsertPoint(Entry);
  llvm::Value *Tmpl = F->getArg(0), *Params = F->getArg(1), *First = F->getArg(2), *Count = F->getArg(3);
  llvm::AllocaInst *Ctx = B.CreateAlloca(ML.ThreadCtxTy);
  B.CreateMemCpy(Ctx, llvm::MaybeAlign(8), Tmpl, llvm::MaybeAlign(8),
                 ML.Mod.getDataLayout().getTypeAllocSize(ML.ThreadCtxTy));
  auto field = [&](unsigned Field, unsigned Index) {
    return B.CreateInBoundsGEP(ML.ThreadCtxTy, Ctx, {B.getInt32(0), B.getInt32(Field), B.getInt32(Index)});
  };
  llvm::Value *GX = B.CreateZExt(B.CreateLoad(I32, field(TCNctaid, 0)), I64);
  llvm::Value *GY = B.CreateZExt(B.CreateLoad(I32, field(TCNctaid, 1)), I64);
  // Blocks per group: one row of a group spans ~128 threads in x (a multi-row block only: the rows of
  // one-row blocks already follow each other in memory).
  llvm::Value *Want = B.getInt64(1);
  if (Grouped && Block->hasFnAttribute(FlatGroupsAttr)) {
    // Flat groups: one-row blocks whose width no warp straddles, up to FlatGroupThreads threads a group.
    llvm::Value *NX = B.CreateLoad(I32, field(TCNtid, 0));
    llvm::Value *Rows = B.CreateMul(B.CreateLoad(I32, field(TCNtid, 1)), B.CreateLoad(I32, field(TCNtid, 2)));
    llvm::Value *Fits =
        B.CreateAnd(B.CreateICmpEQ(Rows, B.getInt32(1)),
                    B.CreateAnd(B.CreateICmpEQ(B.CreateURem(NX, B.getInt32(FlatGroupAlign)), B.getInt32(0)),
                                B.CreateICmpULE(NX, B.getInt32(FlatGroupThreads))));
    llvm::Value *PerGroup =
        B.CreateUDiv(B.getInt32(FlatGroupThreads), B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, NX, B.getInt32(1)));
    Want = B.CreateSelect(Fits, B.CreateZExt(PerGroup, I64), B.getInt64(1));
  } else if (Grouped) {
    llvm::Value *NX = B.CreateLoad(I32, field(TCNtid, 0));
    llvm::Value *Rows = B.CreateMul(B.CreateLoad(I32, field(TCNtid, 1)), B.CreateLoad(I32, field(TCNtid, 2)));
    llvm::Value *PerRow = B.CreateUDiv(B.getInt32(GroupRowThreads), NX);
    Want = B.CreateSelect(B.CreateAnd(B.CreateICmpUGT(Rows, B.getInt32(1)), B.CreateICmpUGT(PerRow, B.getInt32(1))),
                          B.CreateZExt(PerRow, I64), B.getInt64(1));
  }
  llvm::Value *X0 = B.CreateURem(First, GX), *Rest = B.CreateUDiv(First, GX);
  llvm::Value *Y0 = B.CreateURem(Rest, GY), *Z0 = B.CreateUDiv(Rest, GY);
  B.CreateCondBr(B.CreateICmpEQ(Count, B.getInt64(0)), Exit, Loop);
  B.SetInsertPoint(Loop);
  llvm::PHINode *I = B.CreatePHI(I64, 2), *X = B.CreatePHI(I64, 2), *Y = B.CreatePHI(I64, 2), *Z = B.CreatePHI(I64, 2);
  I->addIncoming(B.getInt64(0), Entry), X->addIncoming(X0, Entry), Y->addIncoming(Y0, Entry), Z->addIncoming(Z0, Entry);
  B.CreateStore(B.CreateTrunc(X, I32), field(TCCtaid, 0));
  B.CreateStore(B.CreateTrunc(Y, I32), field(TCCtaid, 1));
  B.CreateStore(B.CreateTrunc(Z, I32), field(TCCtaid, 2));
  // The template's %ctaid follows too: a fault handler names the block from it.
  for (unsigned D = 0; D < 3; ++D)
    B.CreateStore(B.CreateTrunc((llvm::Value *[]){X, Y, Z}[D], I32),
                  B.CreateInBoundsGEP(ML.ThreadCtxTy, Tmpl, {B.getInt32(0), B.getInt32(TCCtaid), B.getInt32(D)}));
  // A group stays in its grid row and in the range.
  llvm::Value *N = Want;
  if (Grouped) {
    auto umin = [&](llvm::Value *A, llvm::Value *V) { return B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, A, V); };
    N = umin(umin(Want, B.CreateSub(GX, X)), B.CreateSub(Count, I));
    B.CreateCall(Block, {Ctx, Params, Tmpl, B.CreateTrunc(N, I32)});
  } else {
    B.CreateCall(Block, {Ctx, Params});
  }
  // Next block id: x, then carry into y and z.
  llvm::Value *NX = B.CreateAdd(X, N);
  llvm::Value *WrapX = B.CreateICmpEQ(NX, GX);
  llvm::Value *NY = B.CreateSelect(WrapX, B.CreateAdd(Y, B.getInt64(1)), Y);
  llvm::Value *WrapY = B.CreateICmpEQ(NY, GY);
  llvm::Value *NI = B.CreateAdd(I, N);
  I->addIncoming(NI, Loop);
  X->addIncoming(B.CreateSelect(WrapX, B.getInt64(0), NX), Loop);
  Y->addIncoming(B.CreateSelect(WrapY, B.getInt64(0), NY), Loop);
  Z->addIncoming(B.CreateSelect(WrapY, B.CreateAdd(Z, B.getInt64(1)), Z), Loop);
  B.CreateCondBr(B.CreateICmpULT(NI, Count), Loop, Exit);
  B.SetInsertPoint(Exit);
  B.CreateRetVoid();
}

} // namespace

namespace {
/// The IR type of a ThreadContext field's C++ type: iN for integers, [N x T] for arrays, ptr for pointers.
template <typename T> llvm::Type *irTypeOf(llvm::LLVMContext &C) {
  if constexpr (std::is_array_v<T>)
    return llvm::ArrayType::get(irTypeOf<std::remove_extent_t<T>>(C), std::extent_v<T>);
  else if constexpr (std::is_pointer_v<T>)
    return llvm::PointerType::get(C, 0);
  else
    return llvm::IntegerType::get(C, sizeof(T) * 8);
}

/// ThreadContext as an IR struct, field by field from its C++ declaration (ThreadContext.h).
llvm::StructType *threadContextType(llvm::LLVMContext &C) {
  std::vector<llvm::Type *> Fields = {
#define PTXFORGE_TC_IR_TYPE(Name) irTypeOf<decltype(ThreadContext::Name)>(C),
      PTXFORGE_THREAD_CONTEXT_FIELDS(PTXFORGE_TC_IR_TYPE)
#undef PTXFORGE_TC_IR_TYPE
  };
  return llvm::StructType::create(C, Fields, "ThreadContext");
}
} // namespace

llvm::Error ptxforge::codegen::compileCancelled() {
  return llvm::createStringError(std::errc::operation_canceled, "the compile was cancelled");
}

llvm::Error ptxforge::codegen::dropCancelled(LoweredModule &LM, const CancelToken *Cancel) {
  if (Cancel && Cancel->Abandon.load(std::memory_order_relaxed)) {
    (void)LM.Module.release();
    (void)LM.Context.release();
  }
  return compileCancelled();
}

namespace {

/// One LLVM function per PTX function, declared before any body or initializer (those may take addresses).
void declareFunctions(ModuleLowering &ML) {
  for (const auto &F : ML.M.Functions)
    ML.Functions.push_back(declareFunction(ML, *F));
}

bool definedInModule(const ptx::Module &M, llvm::StringRef Name) {
  for (const auto &G : M.Functions)
    if (G->HasBody && G->Name == Name)
      return true;
  return false;
}

/// The device library (`.extern .func vprintf`, `__assertfail`, the device runtime's `__cudaCDP2*`: see
/// deviceLibraryHelper) forwards to the runtime, unless the module defines the function itself.
void defineDeviceLibrary(ModuleLowering &ML) {
  for (size_t FI = 0; FI < ML.M.Functions.size(); ++FI) {
    const ptx::Function &F = *ML.M.Functions[FI];
    llvm::Function *LF = ML.Functions[FI];
    const char *HelperName = F.HasBody || !LF->empty() ? nullptr : deviceLibraryHelper(F);
    if (!HelperName || definedInModule(ML.M, F.Name))
      continue;
    llvm::IRBuilder<> B(llvm::BasicBlock::Create(ML.Ctx, "entry", LF));
    std::vector<llvm::Value *> Args;
    for (llvm::Argument &A : LF->args())
      Args.push_back(&A);
    std::vector<llvm::Type *> Tys(Args.size(), B.getPtrTy());
    llvm::FunctionCallee Helper =
        ML.Mod.getOrInsertFunction(HelperName, llvm::FunctionType::get(B.getVoidTy(), Tys, false));
    B.CreateCall(Helper, Args);
    B.CreateRetVoid();
  }
}

/// The elements InitBuilder builds for V (at least one).
uint64_t initializerCount(const ptx::VariableDecl &V) {
  uint64_t ElemBytes = std::max<unsigned>(1, ptx::bitWidth(V.Type) / 8);
  uint64_t Size = V.sizeInBytes();
  return Size ? Size / ElemBytes : 1;
}

/// Globals: .global/.const become LLVM globals (listed in Out.Globals); .shared ones have their offsets in the
/// block's window already (ModuleLowering). Initializers come after all globals exist (generic(var) may point
/// forward).
void lowerGlobals(ModuleLowering &ML, LoweredModule &Out) {
  const ptx::Module &M = ML.M;
  ML.Globals.assign(M.Globals.size(), nullptr);
  for (size_t G = 0; G < M.Globals.size(); ++G) {
    const ptx::VariableDecl &V = M.Globals[G];
    if (V.Space != ptx::StateSpace::Global && V.Space != ptx::StateSpace::Const)
      continue;
    InitBuilder IB(ML, V);
    llvm::Constant *Init = IB.build(initializerCount(V));
    auto *GV = new llvm::GlobalVariable(*Out.Module, Init->getType(), /*isConstant=*/false,
                                        llvm::GlobalValue::ExternalLinkage, nullptr, "__ptx_global_" + V.Name.str());
    GV->setAlignment(llvm::Align(std::max<uint64_t>(16, V.alignment())));
    ML.Globals[G] = GV;
    Out.Globals.push_back({V.Name.str(), GV->getName().str(), V.sizeInBytes()});
  }
  for (size_t G = 0; G < M.Globals.size(); ++G) {
    if (!ML.Globals[G])
      continue;
    InitBuilder IB(ML, M.Globals[G]);
    ML.Globals[G]->setInitializer(IB.build(initializerCount(M.Globals[G])));
  }
}

/// Lowers every function with a body; stops at the first error or a cancel.
llvm::Error lowerFunctionBodies(ModuleLowering &ML, LoweredModule &Out, const LoweringOptions &Options) {
  for (size_t FI = 0; FI < ML.M.Functions.size(); ++FI) {
    const ptx::Function &F = *ML.M.Functions[FI];
    if (!F.HasBody)
      continue;
    if (cancelRequested(Options.Cancel))
      return dropCancelled(Out, Options.Cancel);
    FunctionLowering FL(ML, F, ML.Functions[FI], F.IsEntry);
    if (!FL.run())
      return llvm::createStringError(std::errc::not_supported, "%s", ML.Error.c_str());
  }
  return llvm::Error::success();
}

/// Whether an instruction of some non-kernel function with a body satisfies Pred (a kernel may call any).
template <typename Predicate> bool anyCalleeInstruction(const ptx::Module &M, Predicate Pred) {
  for (const auto &G : M.Functions)
    if (!G->IsEntry && G->HasBody)
      for (const ptx::Instruction &I : G->Instructions)
        if (Pred(I))
          return true;
  return false;
}

/// The most cuts kernel F's region split may have: the budget, or the hot tier's limit for a kernel it names.
unsigned regionCutBudget(const ptx::Function &F, const LoweringOptions &Options) {
  bool Hot = llvm::is_contained(Options.HotKernels, F.Name.str());
  return Hot ? std::max(Options.RegionCutBudget, Options.HotRegionCutLimit) : Options.RegionCutBudget;
}

/// What kernel F's region split does with its resume loops: the hot tier's kernels get them.
ResumeLoops resumeLoops(const ptx::Function &F, const LoweringOptions &Options) {
  if (Options.Resume == ResumeLoops::Omit)
    return ResumeLoops::Omit;
  return llvm::is_contained(Options.HotKernels, F.Name.str()) ? ResumeLoops::Emit : Options.Resume;
}

/// Kernel FI's block function (null where its threads run one by one). A kernel left on fibers for its cuts
/// alone gets K.DeferredRegionCuts.
llvm::Expected<llvm::Function *> emitBlockFunction(ModuleLowering &ML, size_t FI, KernelInfo &K,
                                                   const LoweringOptions &Options) {
  const ptx::Function &F = *ML.M.Functions[FI];
  bool OthersHot = !Options.HotKernels.empty() && !llvm::is_contained(Options.HotKernels, F.Name.str());
  if (!Options.BlockFunctions || OthersHot)
    return nullptr;
  llvm::Function *Block = nullptr;
  if (!K.Synchronizes && !K.ExitInCallee) {
    Block = emitBlockLoop(ML, ML.Functions[FI], !readsShared(ML, FI));
  } else if (regionSplittable(ML.M, F)) {
    // Over the compile-time budget (LoweringOptions::RegionCutBudget) the kernel runs on fibers, as planned,
    // not as a failure of the builder.
    if (unsigned Cuts = regionCuts(F), Budget = regionCutBudget(F, Options); Cuts > Budget) {
      passes::reportRegionSplitFailure(*ML.Functions[FI], passes::overRegionBudget(Cuts, Budget));
      if (Cuts <= Options.HotRegionCutLimit)
        K.DeferredRegionCuts = Cuts;
      return Block;
    }
    llvm::Expected<RegionSplit> Split = emitRegionBlockFunction(ML, ML.Functions[FI], resumeLoops(F, Options));
    if (!Split && Options.RegionSplitFailureIsError)
      return Split.takeError();
    if (!Split) {
      passes::reportRegionSplitFailure(*ML.Functions[FI], Split.takeError());
    } else {
      Block = Split->Block;
      K.DeferredResumeLoops = Split->CountedResumeLoops;
    }
  }
  return Block;
}

/// .reqntid / .maxntid, and the cluster directives (.reqnctapercluster's missing dimensions are 1).
void readLaunchBounds(const ptx::Function &F, KernelInfo &K) {
  for (const ptx::PerfDirective &P : F.Perf) {
    if (P.Kind == ptx::PerfDirectiveKind::Reqnctapercluster && !P.Values.empty())
      K.ReqClusterDim[1] = K.ReqClusterDim[2] = 1;
    if (P.Kind == ptx::PerfDirectiveKind::Maxclusterrank && !P.Values.empty())
      K.MaxClusterRank = static_cast<uint32_t>(P.Values[0]);
    K.ExplicitCluster |= P.Kind == ptx::PerfDirectiveKind::Explicitcluster;
    for (size_t D = 0; D < P.Values.size() && D < 3; ++D) {
      if (P.Kind == ptx::PerfDirectiveKind::Reqntid)
        K.ReqNtid[D] = static_cast<uint32_t>(P.Values[D]);
      if (P.Kind == ptx::PerfDirectiveKind::Maxntid)
        K.MaxNtid[D] = static_cast<uint32_t>(P.Values[D]);
      if (P.Kind == ptx::PerfDirectiveKind::Reqnctapercluster)
        K.ReqClusterDim[D] = static_cast<uint32_t>(P.Values[D]);
    }
  }
}

/// What the driver needs to launch kernel FI, and its block function.
llvm::Expected<KernelInfo> describeKernel(ModuleLowering &ML, size_t FI, const LoweringOptions &Options) {
  const ptx::Function &F = *ML.M.Functions[FI];
  KernelInfo K;
  K.Name = F.Name.str();
  K.Symbol = ML.Functions[FI]->getName().str();
  K.Params = kernelParamLayout(F, K.ParamBytes);
  K.StaticSharedBytes = ML.kernelSharedBytes(FI);
  for (const ptx::Instruction &I : F.Instructions)
    K.Synchronizes |= synchronizesThreads(I);
  // Callees may synchronise too.
  K.Synchronizes |= anyCalleeInstruction(ML.M, synchronizesThreads);
  K.ExitInCallee = anyCalleeInstruction(ML.M, [](const ptx::Instruction &I) { return I.Op == ptx::Opcode::Exit; });
  ProgressPoints Points = findProgressPoints(F);
  K.MaySpin = Points.MaySpin;
  for (const auto &G : ML.M.Functions)
    K.MaySpin |= !G->IsEntry && G->HasBody && findProgressPoints(*G).MaySpin;
  K.Synchronizes |= K.MaySpin || Points.LockstepPoints;
  llvm::Expected<llvm::Function *> Block = emitBlockFunction(ML, FI, K, Options);
  if (!Block)
    return Block.takeError();
  if (*Block) {
    passes::markReplayOnly(*ML.Functions[FI]); // the block function has its own copy of the thread's code
    K.BlockSymbol = (*Block)->getName().str();
    wrapBlockRange(ML, *Block); // renames the block function: its name is read first
  }
  readLaunchBounds(F, K);
  return K;
}

/// The kernels, once every function is lowered (readsShared looks at callees).
llvm::Error describeKernels(ModuleLowering &ML, LoweredModule &Out, const LoweringOptions &Options) {
  for (size_t FI = 0; FI < ML.M.Functions.size(); ++FI) {
    const ptx::Function &F = *ML.M.Functions[FI];
    if (!F.HasBody || !F.IsEntry)
      continue;
    if (cancelRequested(Options.Cancel))
      return dropCancelled(Out, Options.Cancel);
    llvm::Expected<KernelInfo> K = describeKernel(ML, FI, Options);
    if (!K)
      return K.takeError();
    Out.Kernels.push_back(std::move(*K));
  }
  return llvm::Error::success();
}

llvm::Error verifyLowered(llvm::Module &Mod) {
  std::string VerifyErrors;
  llvm::raw_string_ostream VOS(VerifyErrors);
  if (llvm::verifyModule(Mod, &VOS))
    return llvm::createStringError(std::errc::invalid_argument, "internal error: invalid LLVM IR: %s",
                                   VerifyErrors.substr(0, 2000).c_str());
  return llvm::Error::success();
}

} // namespace

llvm::Expected<LoweredModule> ptxforge::codegen::lowerToLLVM(const ptx::VerifiedModule &VM,
                                                             const ptx::SourceBuffer *Source,
                                                             const LoweringOptions &Options) {
  LoweredModule Out;
  Out.Context = std::make_unique<llvm::LLVMContext>();
  Out.Module = std::make_unique<llvm::Module>(Options.ModuleName, *Out.Context);
  ModuleLowering ML(VM.module(), Source, *Out.Context, *Out.Module);
  ML.LoopCuts = Options.LoopCuts;
  ML.RegionCutBudget = Options.RegionCutBudget;
  ML.Memcheck = Options.Memcheck;
  if (Source)
    ML.DI = beginDebugInfo(*Out.Module, Source->name());
  ML.ThreadCtxTy = threadContextType(ML.Ctx);
  declareFunctions(ML);
  defineDeviceLibrary(ML);
  lowerGlobals(ML, Out);
  if (llvm::Error E = lowerFunctionBodies(ML, Out, Options))
    return E;
  if (llvm::Error E = describeKernels(ML, Out, Options))
    return E;
  passes::addMemoryScopes(*Out.Module);
  if (ML.DI) {
    ML.DI->finalize();
    repairDebugLocations(*Out.Module);
  }
  if (llvm::Error E = verifyLowered(*Out.Module))
    return E;
  return Out;
}
