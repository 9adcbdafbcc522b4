// Private to codegen/lib: runs of matrix products lowered as one warp collective. Every mma.sync and wmma.mma
// is a rendezvous of the warp's lanes (a fiber switch per lane, or a region cut), and nvcc unrolls a GEMM's k
// loop into hundreds of them with per-lane fragment loads in between. A product reads and writes registers only,
// so an instruction after it that touches none of its registers and neither branches nor synchronizes may run
// before it: such instructions are lowered first and the products after them join the run, which becomes one
// collective computing its products in order (exec/WarpCollectives.cpp ptxrt_mma_batch). A later product may
// take an earlier one's D as its C: the run's registers live in one buffer of the lane's.
#pragma once

#include "ProgressPoints.h"

#include "ptxforge/ptx/Function.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace ptxforge::codegen::detail {

/// One batch: its products, and the fragment loads it may take over (each wmma.load in Order before the batch,
/// with no store between it and the batch, whose registers nothing but it and the batch's products names).
/// Such a load need not reach the lanes' registers: the batch can decode the fragment from memory, the warp's one
/// address and stride, instead of gathering it from 32 lanes (lower/MatrixOps.cpp decides which it takes).
struct MatrixBatch {
  llvm::SmallVector<unsigned, 16> Products;
  llvm::SmallVector<unsigned, 16> Loads;
};

struct MatrixBatches {
  /// F.Body's positions in the order the lowering takes them; a batch's products after its first are left out.
  std::vector<unsigned> Order;
  /// Each batch (two or more products), keyed by its first product's position.
  llvm::DenseMap<unsigned, MatrixBatch> Batches;
  /// The body position of each load a batch may take over -> that batch's key.
  llvm::DenseMap<unsigned, unsigned> LoadBatch;
  /// How many products joined an earlier one's batch: the rendezvous the batches save.
  unsigned Joined = 0;
};

/// The batches of F's body. Points: F's progress points (an instruction with one before it stays in place).
MatrixBatches findMatrixBatches(const ptx::Function &F, const ProgressPoints &Points);

} // namespace ptxforge::codegen::detail
