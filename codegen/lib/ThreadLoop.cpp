// See ThreadLoop.h.
#include "ThreadLoop.h"
#include "Markers.h"
#include "passes/Passes.h"

using namespace ptxforge;
using namespace ptxforge::codegen;
using namespace ptxforge::codegen::detail;

llvm::MDNode *ptxforge::codegen::detail::loopId(llvm::LLVMContext &C, llvm::ArrayRef<llvm::Metadata *> Properties) {
  llvm::SmallVector<llvm::Metadata *, 4> Ops{nullptr};
  Ops.append(Properties.begin(), Properties.end());
  llvm::MDNode *Id = llvm::MDNode::getDistinct(C, Ops);
  Id->replaceOperandWith(0, Id);
  return Id;
}

llvm::MDNode *ptxforge::codegen::detail::loopProperty(llvm::LLVMContext &C, llvm::StringRef Name, uint32_t Value) {
  return llvm::MDNode::get(C,
                           {llvm::MDString::get(C, Name),
                            llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(C), Value))});
}

ThreadLoop ptxforge::codegen::detail::emitThreadLoop(ModuleLowering &ML, llvm::Function *F, llvm::Value *Ctx,
                                                     llvm::Value *NX, llvm::Value *NY, llvm::Value *NZ,
                                                     llvm::BasicBlock *Exit, ThreadLoopVectors Vectors,
                                                     llvm::Value *XBegin,
                                                     llvm::Value *XEnd, llvm::Value *Groups, bool FlatGroups) {
  llvm::LLVMContext &C = ML.Ctx;
  llvm::IRBuilder<> B(C);
  llvm::Type *I32 = B.getInt32Ty();
  ThreadLoop L;
  L.Entry = llvm::BasicBlock::Create(C, "threads", F);
  llvm::BasicBlock *ZHead = llvm::BasicBlock::Create(C, "z", F), *YHead = llvm::BasicBlock::Create(C, "y", F);
  L.Body = llvm::BasicBlock::Create(C, "x", F);
  L.Latch = llvm::BasicBlock::Create(C, "x.latch", F);
  llvm::BasicBlock *YLatch = llvm::BasicBlock::Create(C, "y.latch", F),
                   *ZLatch = llvm::BasicBlock::Create(C, "z.latch", F);
  B.SetInsertPoint(L.Entry);
  B.CreateBr(ZHead);
  B.SetInsertPoint(ZHead);
  llvm::PHINode *Z = B.CreatePHI(I32, 2, "tz");
  Z->addIncoming(B.getInt32(0), L.Entry);
  B.CreateBr(YHead);
  B.SetInsertPoint(YHead);
  llvm::PHINode *Y = B.CreatePHI(I32, 2, "ty");
  Y->addIncoming(B.getInt32(0), ZHead);
  // A block has at most 1024 threads: the ids never wrap (nuw/nsw keep sign-extended indices affine for SCEV).
  llvm::Value *RowBase =
      B.CreateMul(B.CreateAdd(B.CreateMul(Z, NY, "", true, true), Y, "", true, true), NX, "", true, true);
  llvm::BasicBlock *RowEntry = YHead, *RowExit = YLatch;
  if (Groups && FlatGroups) {
    XEnd = B.CreateMul(Groups, NX, "", true, true);
    B.CreateBr(L.Body);
  } else if (Groups) {
    llvm::BasicBlock *GHead = llvm::BasicBlock::Create(C, "g", F);
    L.GroupBody = llvm::BasicBlock::Create(C, "g.body", F);
    L.GroupEnd = llvm::BasicBlock::Create(C, "g.end", F);
    L.GroupLatch = llvm::BasicBlock::Create(C, "g.latch", F);
    B.CreateBr(GHead);
    B.SetInsertPoint(GHead);
    llvm::PHINode *G = B.CreatePHI(I32, 2, "g");
    G->addIncoming(B.getInt32(0), YHead);
    L.Group = G;
    B.CreateBr(L.GroupBody);
    B.SetInsertPoint(L.GroupLatch);
    llvm::Value *NextG = B.CreateAdd(G, B.getInt32(1));
    G->addIncoming(NextG, L.GroupLatch);
    B.CreateCondBr(B.CreateICmpULT(NextG, Groups), GHead, YLatch);
    RowEntry = L.GroupBody, RowExit = L.GroupEnd;
  } else {
    B.CreateBr(L.Body);
  }
  B.SetInsertPoint(L.Body);
  llvm::PHINode *X = B.CreatePHI(I32, 2, "tx");
  X->addIncoming(XBegin ? XBegin : B.getInt32(0), RowEntry);
  llvm::Value *TidX = X;
  if (Groups && FlatGroups) {
    auto *Div = llvm::cast<llvm::Instruction>(B.CreateUDiv(X, NX, "g"));
    markBlockOfThread(Div);
    L.Group = Div;
    TidX = B.CreateSub(X, B.CreateMul(Div, NX, "", true, true), "tx.block", true, true);
  }
  L.Linear = B.CreateAdd(RowBase, TidX, "", true, true);
  L.Ids = {{{TCTid, 0}, TidX},
           {{TCTid, 1}, Y},
           {{TCTid, 2}, Z},
           {{TCLaneId, 0}, B.CreateAnd(L.Linear, 31)},
           {{TCWarpId, 0}, B.CreateLShr(L.Linear, 5)},
           {{TCLinearTid, 0}, L.Linear}};
  for (auto &[Field, V] : L.Ids) {
    llvm::Value *P = Field.first <= TCNctaid
                         ? B.CreateInBoundsGEP(ML.ThreadCtxTy, Ctx,
                                               {B.getInt32(0), B.getInt32(Field.first), B.getInt32(Field.second)})
                         : B.CreateStructGEP(ML.ThreadCtxTy, Ctx, Field.first);
    L.IdStores.push_back(B.CreateStore(V, P));
  }
  B.SetInsertPoint(L.Latch);
  llvm::Value *NextX = B.CreateAdd(X, B.getInt32(1));
  X->addIncoming(NextX, L.Latch);
  llvm::BranchInst *Back = B.CreateCondBr(B.CreateICmpULT(NextX, XEnd ? XEnd : NX), L.Body, RowExit);
  // Marked for optimizeModule, which picks the vector width of the loops over threads for the target.
  llvm::SmallVector<llvm::Metadata *, 3> Props;
  if (Vectors != ThreadLoopVectors::None)
    Props = {llvm::MDNode::get(C, llvm::MDString::get(C, ThreadLoopMarker)),
             llvm::MDNode::get(C, {llvm::MDString::get(C, "llvm.loop.parallel_accesses"),
                                   passes::threadAccessGroup(ML.Mod)})};
  if (Vectors != ThreadLoopVectors::Any)
    Props.push_back(loopProperty(C, "llvm.loop.vectorize.enable", 0));
  Back->setMetadata(llvm::LLVMContext::MD_loop, loopId(C, Props));
  B.SetInsertPoint(YLatch);
  llvm::Value *NextY = B.CreateAdd(Y, B.getInt32(1));
  Y->addIncoming(NextY, YLatch);
  B.CreateCondBr(B.CreateICmpULT(NextY, NY), YHead, ZLatch);
  B.SetInsertPoint(ZLatch);
  llvm::Value *NextZ = B.CreateAdd(Z, B.getInt32(1));
  Z->addIncoming(NextZ, ZLatch);
  B.CreateCondBr(B.CreateICmpULT(NextZ, NZ), ZHead, Exit);
  return L;
}
