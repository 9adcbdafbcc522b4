// Private to codegen/lib: the state of lowering one PTX function, and the hooks each instruction family
// (lower/*.cpp) uses: read operands as typed values, write results, form addresses, call runtime helpers.
#pragma once

#include "ptxforge/codegen/Lowering.h"
#include "ptxforge/codegen/RegionCuts.h"
#include "ptxforge/codegen/ThreadContext.h"
#include "ptxforge/ptx/Module.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/DIBuilder.h"
#include "llvm/IR/IRBuilder.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ptxforge::codegen::detail {

struct ProgressPoints;
struct MatrixBatches;
struct MatrixBatchPlan;

/// Module-wide lowering state: globals, shared-memory layout, functions.
struct ModuleLowering {
  const ptx::Module &M;
  const ptx::SourceBuffer *Source;
  llvm::LLVMContext &Ctx;
  llvm::Module &Mod;
  llvm::StructType *ThreadCtxTy = nullptr;
  std::vector<llvm::GlobalVariable *> Globals; ///< per ptx global (null for .shared)
  // The shared-memory layout (SharedLayout.cpp). Variables that no kernel reaches together may overlap, so
  // each kernel's block window holds only what the kernel and its callees use, as on the GPU.
  std::vector<uint64_t> SharedOffsets; ///< per ptx global (.shared only)
  /// Offsets of function-scope `.shared` variables.
  std::map<const ptx::VariableDecl *, uint64_t> LocalSharedOffsets;
  std::vector<uint64_t> KernelSharedBytes; ///< per ptx function: static shared bytes of a kernel
  /// Where dynamic shared memory (`.extern .shared` arrays) starts, 16-byte aligned: after the static shared
  /// memory of every kernel that reaches a dynamic array (one offset, since callees are compiled once).
  uint64_t DynamicSharedOffset = 0;
  uint64_t dynamicSharedOffset() const { return DynamicSharedOffset; }
  /// Static shared bytes a launch of kernel FunctionIndex needs (dynamic memory starts there for kernels
  /// that use it).
  uint64_t kernelSharedBytes(size_t FunctionIndex) const { return KernelSharedBytes[FunctionIndex]; }
  std::vector<llvm::Function *> Functions;        ///< per ptx function
  std::set<const llvm::Function *> SharedReaders; ///< functions whose code addresses shared memory
  std::string Error;                              ///< first lowering error
  bool LoopCuts = true;                           ///< LoweringOptions::LoopCuts
  unsigned RegionCutBudget = 128;                 ///< LoweringOptions::RegionCutBudget
  bool Memcheck = false;                          ///< LoweringOptions::Memcheck
  std::optional<bool> DistributedShared;          ///< see detail::distributedShared
  /// The module's debug info (DebugLocations.h); null without a source to name lines in.
  std::unique_ptr<llvm::DIBuilder> DI;

  ModuleLowering(const ptx::Module &M, const ptx::SourceBuffer *S, llvm::LLVMContext &C, llvm::Module &Mod)
      : M(M), Source(S), Ctx(C), Mod(Mod) {
    layoutShared();
  }
  void layoutShared();
  std::string where(ptx::SourceLoc L) const;
  /// L's line (0 where it is unknown).
  unsigned line(ptx::SourceLoc L) const;
  /// L as a debug location in Scope (line 0 where it is unknown).
  llvm::DILocation *location(ptx::SourceLoc L, llvm::DIScope *Scope) const;
};

class FunctionLowering {
public:
  FunctionLowering(ModuleLowering &ML, const ptx::Function &F, llvm::Function *LF, bool IsKernelThread);

  /// Lowers the body; false (with ML.Error set) on an unsupported construct.
  bool run();

  // ---- helpers for instruction families ----
  llvm::IRBuilder<> &b() { return B; }
  llvm::LLVMContext &ctx() { return ML.Ctx; }
  const ptx::Function &fn() const { return F; }
  ModuleLowering &module() { return ML; }

  /// The integer type holding a value of T (i1 for .pred, iN otherwise).
  llvm::Type *bitsType(ptx::ScalarType T);
  /// The LLVM floating type for f16/bf16/f32/f64 (null otherwise).
  llvm::Type *floatType(ptx::ScalarType T);

  /// Reads an operand as the bits of type T (ints/bits/floats all as iN; preds as i1).
  llvm::Value *read(const ptx::Operand &Op, ptx::ScalarType T);
  /// Reads an operand as a floating value of type T.
  llvm::Value *readFloat(const ptx::Operand &Op, ptx::ScalarType T);
  /// Writes Bits (iN of T's width, or a float of T) into a destination register (sink: ignored). Narrower
  /// values widen into wider registers with sign extension when T is signed.
  void write(const ptx::Operand &Dst, ptx::ScalarType T, llvm::Value *V);

  /// The address an Address operand names in state space S, as a pointer. Shared-space addresses are
  /// window offsets; everything else is a host pointer.
  llvm::Value *address(const ptx::Operand &Op, ptx::StateSpace S);
  /// The base register of an Address operand `[reg+imm]`, zero-extended to 64 bits (Op.Reg must be set).
  llvm::Value *addressRegister(const ptx::Operand &Op);
  /// The value a symbol operand denotes as an integer of Bits width (variable address, function address...).
  llvm::Value *symbolValue(const ptx::Operand &Op, unsigned Bits);
  /// A pointer to the symbol's storage (param/local/global), for calls and address forms.
  llvm::Value *symbolPointer(const ptx::Operand &Op);

  llvm::Value *threadCtx() { return TCtx; }
  llvm::Value *ctxField(unsigned Field, unsigned Index = 0);
  llvm::Value *sharedBase();

  /// Calls a runtime helper `Name` (resolved when the module is JIT-linked).
  llvm::Value *callHelper(llvm::StringRef Name, llvm::Type *Ret, llvm::ArrayRef<llvm::Value *> Args);

  /// True when the f32 value written to Dst (a register) can never show its NaN payload (NaNPayload.cpp), so
  /// the operation writing it may leave x86's NaN as it is.
  bool nanPayloadUnobserved(const ptx::Operand &Dst) const {
    return Dst.isRegister() && Dst.Reg < PayloadUnobserved.size() && PayloadUnobserved[Dst.Reg];
  }

  /// The thread's count of `bar.red` on barrier Id so far (lower/WarpOps.cpp), 0 at the function's entry.
  llvm::AllocaInst *reductionSequence(unsigned Id);
  /// The function's scratch alloca for (Slot, Ty), holding at least Count elements (see scratchBuffer).
  llvm::AllocaInst *scratch(llvm::Type *Ty, unsigned Count, unsigned Slot);
  /// The function's accumulator of misaligned address bits once made (lower/MemoryOps.cpp): remembered, since
  /// finding it by its mark walks the entry block, which holds every register (a walk per access made lowering
  /// quadratic: 30% of compute_gemm's compile, 2,000 wmma and 5,000 registers).
  llvm::AllocaInst *&misalignedBits() { return MisalignedBits; }

  /// Reports an unsupported instruction form.
  bool unsupported(const ptx::Instruction &I, const std::string &What = "");

  /// Marks the current block finished (after ret/exit/bra) so following code starts a fresh block.
  void terminated();
  llvm::BasicBlock *labelBlock(uint32_t LabelIndex);
  llvm::Function *function() { return LF; }
  bool isKernel() const { return IsKernel; }
  /// Emits the function's return (kernel thread: return void; .func: return void after results stored).
  void emitReturn();
  /// A call of the runtime's helper for a progress point of kind Mode (LCLockstep or LCSpin, ProgressPoints.h) at
  /// the insertion point, which the region builder cuts at where Cut says.
  void emitProgressPoint(LoopCutMode Mode, bool Cut);

private:
  bool lowerInstruction(const ptx::Instruction &I);
  /// F.Instructions[Index] with the progress points before it and its guard.
  void lowerStatement(uint32_t Index, const ProgressPoints &Points);
  /// Batch Key's plan (MatrixBatches.h), made on first use: at its first taken-over load or at the batch.
  const MatrixBatchPlan &matrixBatchPlan(const MatrixBatches &Batches, unsigned Key);
  // read() of each operand kind; Ty is bitsType(T).
  llvm::Value *readRegister(const ptx::Operand &Op, ptx::ScalarType T, llvm::Type *Ty);
  llvm::Value *readIntegerLiteral(const ptx::Operand &Op, ptx::ScalarType T, llvm::Type *Ty);
  llvm::Value *readFloatLiteral(const ptx::Operand &Op, ptx::ScalarType T, llvm::Type *Ty);
  /// A special register's value (i32, or i64 for the 64-bit clocks and timers).
  llvm::Value *readSpecial(const ptx::Operand &Op);
  llvm::Value *laneMask(ptx::SpecialReg R);
  /// An operand kind that has no value (address, vector, list, sink, register pair): reports it through
  /// unsupported() so lowering stops, and returns a placeholder of type Ty.
  llvm::Value *unreadable(const ptx::Operand &Op, llvm::Type *Ty);
  void prologue();
  /// R's stack slot, made in the entry block at R's first use: a function may declare millions of registers
  /// it never touches (`.reg .b32 %r<16000000>`), and an alloca for each took gigabytes.
  llvm::AllocaInst *regSlot(ptx::RegId R);

  ModuleLowering &ML;
  const ptx::Function &F;
  llvm::Function *LF;
  bool IsKernel;
  llvm::IRBuilder<> B;
  llvm::Value *TCtx = nullptr;
  llvm::Value *Params = nullptr;        ///< kernel: the parameter buffer
  std::vector<llvm::Value *> ParamPtrs; ///< .func: pointers to params (in order: returns, params)
  std::vector<llvm::AllocaInst *> Regs; ///< per RegId; null until regSlot makes it
  std::vector<llvm::Value *> LocalPtrs; ///< per Function::Locals index
  std::vector<llvm::BasicBlock *> Labels;
  std::vector<uint64_t> KernelParamOffsets;
  std::vector<bool> PayloadUnobserved;                                     ///< per RegId
  std::map<std::pair<unsigned, llvm::Type *>, llvm::AllocaInst *> Scratch; ///< (slot, type) -> its alloca
  llvm::AllocaInst *MisalignedBits = nullptr;
  std::map<unsigned, llvm::AllocaInst *> ReductionSequences; ///< barrier id -> reductionSequence's alloca
  std::map<unsigned, std::shared_ptr<MatrixBatchPlan>> BatchPlans; ///< batch key -> its plan
  const ptx::Instruction *Current = nullptr;                 ///< the instruction being lowered, for errors
  /// The function's debug info (null without): each instruction's code gets its PTX line.
  llvm::DISubprogram *Subprogram = nullptr;
};

// Instruction families: each returns true when it handled I (successfully or by reporting an error via
// unsupported()), false when I is not in its family.
bool lowerControl(FunctionLowering &L, const ptx::Instruction &I);
bool lowerMemory(FunctionLowering &L, const ptx::Instruction &I);
bool lowerInteger(FunctionLowering &L, const ptx::Instruction &I);
bool lowerFloat(FunctionLowering &L, const ptx::Instruction &I);
bool lowerConvert(FunctionLowering &L, const ptx::Instruction &I);
bool lowerWarp(FunctionLowering &L, const ptx::Instruction &I);
bool lowerAtomic(FunctionLowering &L, const ptx::Instruction &I);
bool lowerAsync(FunctionLowering &L, const ptx::Instruction &I);  ///< cp.async*, mbarrier (lower/AsyncOps.cpp)
bool lowerMatrix(FunctionLowering &L, const ptx::Instruction &I); ///< ldmatrix/stmatrix/mma/wmma (lower/MatrixOps.cpp)
/// A batch of mma.sync / wmma.mma products (MatrixBatches.h; lower/MatrixOps.cpp), planned before any of it is
/// lowered: which of its candidate fragment loads it takes over, its registers' words and its descriptor.
std::shared_ptr<MatrixBatchPlan> planMmaBatch(FunctionLowering &L, llvm::ArrayRef<const ptx::Instruction *> Products,
                                              llvm::ArrayRef<const ptx::Instruction *> Loads);
/// A load the plan took over, where it stands: the warp's address and stride into the batch's buffer. False
/// for a load it did not take (lowered as any other).
bool lowerTakenLoad(FunctionLowering &L, const MatrixBatchPlan &Plan, const ptx::Instruction &Load);
/// The products in order as one warp collective.
void lowerMmaBatch(FunctionLowering &L, const MatrixBatchPlan &Plan);
bool lowerTexture(FunctionLowering &L, const ptx::Instruction &I); ///< tex/tld4/txq/su* (lower/TextureOps.cpp)
/// cp.async.bulk.tensor, cp.reduce.async.bulk(.tensor), called by lowerAsync (lower/BulkCopyOps.cpp)
bool lowerBulkCopy(FunctionLowering &L, const ptx::Instruction &I);
/// tensormap.replace and tensormap.cp_fenceproxy, called by lowerAsync (lower/BulkCopyOps.cpp)
bool lowerTensormap(FunctionLowering &L, const ptx::Instruction &I);
/// mma.sp(::ordered_metadata), called by lowerMatrix (lower/SparseMatrixOps.cpp)
bool lowerSparseMma(FunctionLowering &L, const ptx::Instruction &I);
bool lowerWarpgroup(FunctionLowering &L, const ptx::Instruction &I); ///< wgmma (lower/WarpgroupOps.cpp)
bool lowerCluster(FunctionLowering &L, const ptx::Instruction &I);   ///< mapa/getctarank/barrier.cluster/multimem...
/// The host pointer of a shared::cluster address (lower/ClusterOps.cpp; the encoding: exec/Cluster.h).
llvm::Value *clusterSharedPointer(FunctionLowering &L, llvm::Value *Address);
/// Whether the module reaches other blocks' shared memory (mapa, .shared::cluster): its `.shared` atomics must
/// then be atomic, since another worker may update the same word.
bool distributedShared(ModuleLowering &ML);
/// %clusterid, %cluster_ctarank and the other cluster registers; null for any other register.
llvm::Value *readClusterSpecial(FunctionLowering &L, const ptx::Operand &Op);
/// Scratch memory for a runtime helper's in/out arrays: Count x Ty, valid from the stores before one helper
/// call to the loads right after it. Slot S is one alloca per function (in the entry block, grown to the
/// largest Count asked for), shared by every instruction that uses it: a fresh alloca per instruction made
/// the frame grow with the code (1029 wmma.mma at 256 bytes each overflowed a fiber's 256 KiB stack). An
/// instruction that needs two buffers at once takes two slots.
llvm::Value *scratchBuffer(FunctionLowering &L, llvm::Type *Ty, unsigned Count = 1, unsigned Slot = 0);
/// The elements of a `{a, b, ...}` operand (or the operand itself when it is a single register).
std::vector<const ptx::Operand *> operandElements(const ptx::Operand &Op);

/// Per register of F: whether no instruction can observe the NaN payload of an f32 value in it
/// (lower/NaNPayload.cpp).
std::vector<bool> nanPayloadUnobserved(const ptx::Function &F);

/// Whether I synchronises threads (a barrier or a warp collective): a kernel with one runs as fibers unless the
/// region split (BarrierRegions.cpp) can cut at it.
bool synchronizesThreads(const ptx::Instruction &I);

/// The kernel parameter buffer's layout (each `.param` at its alignment, in order) and its size in Bytes.
std::vector<ParamInfo> kernelParamLayout(const ptx::Function &F, uint64_t &Bytes);

/// What PTX's address of function K of the module is, for an operand or an initializer: the function's entry,
/// or a kernel's descriptor (device-side launches take it).
llvm::Constant *functionAddress(ModuleLowering &ML, size_t K);

} // namespace ptxforge::codegen::detail

namespace ptxforge::codegen::detail {
/// Calls an `int helper(u64)` runtime predicate and returns it as i1.
llvm::Value *callHelper(FunctionLowering &L, const char *Name, llvm::Value *X);
} // namespace ptxforge::codegen::detail

namespace ptxforge::codegen::detail {
/// `.ftz`: a denormal becomes a zero of the same sign.
llvm::Value *flushDenormal(FunctionLowering &L, llvm::Value *X);
/// setp/set's `a CmpOp b` for f32/f64 operands of type T (lower/FloatOps.cpp), with .ftz; null when the
/// instruction has no comparison operator.
llvm::Value *compareFloat(FunctionLowering &L, const ptx::Instruction &I, ptx::ScalarType T, const ptx::Operand &OA,
                          const ptx::Operand &OB);
} // namespace ptxforge::codegen::detail

namespace ptxforge::codegen::detail {
/// Marks a runtime math helper call as a pure function of its arguments (the rounding-mode helpers restore the
/// mode), so LLVM may hoist, merge or drop it like the instruction it stands for. Returns V.
llvm::Value *pure(llvm::Value *V);
} // namespace ptxforge::codegen::detail

namespace ptxforge::codegen::detail {
/// "rz", "rm" or "rp" for an instruction's directed rounding modifier, null for round-to-nearest.
const char *directedRounding(const ptx::Instruction &I);
/// An f32 add/sub/mul/fma/div/sqrt of Args rounded in Mode ("rz", "rm" or "rp") as plain IR
/// (lower/DirectedRounding.cpp); null for other opcodes.
llvm::Value *directedF32(FunctionLowering &L, ptx::Opcode Op, llvm::StringRef Mode, llvm::ArrayRef<llvm::Value *> Args);
/// ex2.approx.f32 and rsqrt.approx.f32 as plain IR (lower/ApproxMath.cpp).
llvm::Value *exp2ApproxF32(FunctionLowering &L, llvm::Value *X);
llvm::Value *rsqrtApproxF32(FunctionLowering &L, llvm::Value *X);
/// The half-precision runtime's rounding-mode code (HalfCode.h) for an instruction's modifiers.
uint32_t halfRoundingMode(const ptx::Instruction &I);
/// X (an exact f32 or f64) rounded to nearest even in f16 (bf16 with BF) as 16 bits, inline, with the result
/// flags of the half code word Flags (.sat, .relu; a NaN becomes the canonical 0x7fff).
llvm::Value *roundToHalf(llvm::IRBuilderBase &B, llvm::Value *X, bool BF, uint32_t Flags);
} // namespace ptxforge::codegen::detail

namespace ptxforge::codegen::detail {
/// Misaligned addresses (lower/MemoryOps.cpp). x86 does not fault on them, so each load/store ORs the address
/// bits its size forbids into a per-function accumulator (no branch per access: block loops stay
/// vectorizable), and checkMisalignment() ends the launch with MisalignedAddress where the thread's memory
/// effects become observable (ret/exit, barriers and collectives, device-library calls).
void accumulateMisalignment(FunctionLowering &L, llvm::Value *Ptr, unsigned Bytes);
/// ORs already computed misalignment bits into the accumulator.
void accumulateMisalignmentBits(FunctionLowering &L, llvm::Value *Bits);
/// Deferrable (ret, a kernel's exit): inside the JIT'd block loop (ThreadContext::DeferChecks) the bits go to
/// the context and the loop's end tests them, so no branch lands in the loop body.
void checkMisalignment(FunctionLowering &L, bool Deferrable = false);
/// The block loop's side: Ctx (its private context) defers checks; at the loop's end the deferred bits fault.
void beginDeferredChecks(llvm::IRBuilder<> &B, ModuleLowering &ML, llvm::Value *Ctx);
/// FaultCtx (default: Ctx) is the context the fault is reported with: a block function passes its template, so
/// that its own copy never escapes and stays in registers.
void endDeferredChecks(llvm::IRBuilder<> &B, ModuleLowering &ML, llvm::Value *Ctx, llvm::Value *FaultCtx = nullptr);
/// In F, a copy of a thread function (context: argument 0) that only ever runs between begin/endDeferredChecks,
/// the DeferChecks flag is the constant 1: the checks become ORs into the context, no branch in loop bodies.
void foldDeferredChecks(ModuleLowering &ML, llvm::Function *F);
} // namespace ptxforge::codegen::detail
