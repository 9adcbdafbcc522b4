// Block barriers and warp collectives. In the thread-fiber execution mode every PTX thread is a fiber, so a
// barrier or collective is a rendezvous in the runtime (codegen/exec/Sync.cpp) that yields to the block
// scheduler until its partners arrive.
#include "../FunctionLowering.h"

using namespace ptxforge;
using namespace ptxforge::codegen::detail;
using ptx::Modifier;
using ptx::Opcode;
using ptx::ScalarType;

bool ptxforge::codegen::detail::needsFibers(const ptx::Instruction &I) {
  switch (I.Op) {
  case Opcode::Bar:
  case Opcode::Barrier:
  case Opcode::Shfl:
  case Opcode::Vote:
  case Opcode::Match:
  case Opcode::Redux:
  case Opcode::Activemask:
  case Opcode::Elect:
  case Opcode::Mbarrier:
    return true;
  default:
    return false;
  }
}

bool ptxforge::codegen::detail::lowerWarp(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  auto &Ops = I.Operands;
  switch (I.Op) {
  case Opcode::Bar:
  case Opcode::Barrier: {
    if (I.has(Modifier::Warp)) { // bar.warp.sync: lanes of a warp are in step at a rendezvous anyway
      L.callHelper("ptxrt_warp_sync", B.getVoidTy(), {L.threadCtx(), L.read(Ops[0], ScalarType::U32)});
      return true;
    }
    if (I.has(Modifier::Red))
      return false;
    llvm::Value *Id = Ops.empty() ? B.getInt32(0) : L.read(Ops[0], ScalarType::U32);
    llvm::Value *Count = Ops.size() > 1 ? L.read(Ops[1], ScalarType::U32) : B.getInt32(0);
    bool Arrive = I.has(Modifier::Arrive);
    L.callHelper(Arrive ? "ptxrt_bar_arrive" : "ptxrt_bar_sync", B.getVoidTy(), {L.threadCtx(), Id, Count});
    return true;
  }
  default:
    return false;
  }
}
