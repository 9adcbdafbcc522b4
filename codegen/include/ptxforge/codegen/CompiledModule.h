// Stage 5b of the pipeline: host code in this process. A CompiledObject (CompiledObject.h) JIT-linked by ORC, with
// the runtime helpers resolved; kernels are looked up by their `.entry` name. Compiling a LoweredModule or PTX here
// goes through compileObject and load, so code compiled now and code compiled ahead of time run the same way.
#pragma once

#include "ptxforge/codegen/Lowering.h"
#include "ptxforge/codegen/ThreadContext.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm::orc {
class LLJIT;
}

namespace ptxforge::codegen {

using ThreadFunction = void (*)(ThreadContext *, const char *Params);
/// KernelInfo::BlockSymbol: runs blocks First .. First+Count-1 of the grid from a template context.
using BlockRangeFunction = void (*)(ThreadContext *Template, const char *Params, uint64_t First, uint64_t Count);

/// Whether loading names the JIT'd functions for `perf` (in /tmp/perf-PID.map, perf's convention for JIT code),
/// so `perf report` attributes samples to kernels instead of bare addresses. Objects also saves each object as
/// /tmp/perf-PID-ADDRESS.o (ADDRESS: its first function's), for `objdump -d`: a sample's offset in its function is
/// the same there.
enum class PerfMap { Off, Symbols, Objects };

/// The host's last-level cache is 32 MiB where nobody says otherwise; streaming stores start at half of it.
constexpr uint64_t DefaultStreamingStoreBytes = uint64_t(16) << 20;

/// How to compile. Nothing here depends on the environment: the driver and the CLI read it at their edge (see
/// README.md's table of variables). codeKey() spells every field that changes the generated code.
struct CompileOptions {
  unsigned OptLevel = 2; ///< 0-3, as -O
  /// The CPU to compile for: empty, "host" or "native" for this machine's CPU and all its features; an x86-64
  /// psABI level ("x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4") for code every CPU of that level runs; or any
  /// LLVM CPU name ("znver4", "sapphirerapids").
  std::string TargetCpu;
  /// Bytes a launch must write through one store instruction before its full-vector global stores bypass the
  /// cache (non-temporal): half the host's last-level cache, so the other half holds what the kernel reads.
  /// 0: never. The edges pass half of the cache they find on the host.
  uint64_t StreamingStoreBytes = DefaultStreamingStoreBytes;
  /// Thread loops run W threads per trip as vectors, their own branches and loops included (passes::
  /// WarpVectorizePass); false leaves them to LLVM's loop vectorizer alone.
  bool WarpVectorize = true;
  /// The optimizer's budget, in LLVM instructions of one function before optimization: a larger function is
  /// compiled as at -O0 (optnone), with an optimization remark (ptxforge-budget). Some of LLVM's passes take
  /// time quadratic in a function's size for some shapes (20,000 instructions predicated on one register: 33 s
  /// in EarlyCSE and InstCombine, which test each branch on it against each use); the budget bounds that, and
  /// leaves every kernel of the bench and of cub_big.ptx (at most ~26,000 instructions) optimized. 0: none.
  unsigned FunctionSizeBudget = 60000;
  /// LLVM's -O0 code generator (fast instruction selection and register allocation, no scheduler) whatever
  /// OptLevel: the quick code's (quickCode below).
  bool FastCodeGen = false;
  /// For the entry points that lower too (compilePTXObject, compilePTX); compileObject takes a lowered module.
  LoweringOptions Lowering;
  /// For the entry points that load too (CompiledModule::compile, compilePTX).
  PerfMap Perf = PerfMap::Off;

  /// The fields that change the code, as text ("O2 cpu= loop-cuts=1 ..."): what a cache of compiled code keys on
  /// besides the source. Perf and the module name are left out.
  std::string codeKey() const;
  /// See CancelToken: once requested, optimization skips its remaining passes (code generation, once begun,
  /// runs to its end) and the compile fails (compileCancelled) instead of producing code.
  const CancelToken *Cancel = nullptr;
};

/// Options for the tiered JIT's quick code, the code a kernel first runs on while its optimized code compiles
/// (PTXFORGE_JIT_TIER=0 runs on nothing else): thread functions only (no block functions), LLVM's -O1 IR pipeline
/// at most, and -O0's code generator. Code generation was half of a quick compile; -O1's IR pipeline keeps
/// registers in SSA form, so the code runs about as fast as -O2's thread functions (nbody: 19 ms of CPU per
/// compile instead of 38, against ptxas's 24).
CompileOptions quickCode(CompileOptions O);

class CompiledObject;

class CompiledModule {
public:
  ~CompiledModule();

  /// compileObject(LM, Options) then load().
  static llvm::Expected<std::unique_ptr<CompiledModule>> compile(LoweredModule LM, const CompileOptions &Options = {});
  /// JIT-links Object into this process. Fails (before linking anything) when this CPU lacks a feature the
  /// object was compiled for or the object is for another architecture. Symbols Object declares are resolved
  /// in Imports first when given (a kernel's part of a split module against the shared part, SplitModule.h),
  /// which must outlive the result.
  static llvm::Expected<std::unique_ptr<CompiledModule>>
  load(const CompiledObject &Object, const CompiledModule *Imports = nullptr, PerfMap Perf = PerfMap::Off);

  const std::vector<KernelInfo> &kernels() const { return Kernels; }
  const KernelInfo *kernel(llvm::StringRef Name) const;
  ThreadFunction entry(const KernelInfo &K) const;
  /// The kernel's block function (runs a range of blocks), or null when its threads need fibers.
  BlockRangeFunction blockEntry(const KernelInfo &K) const;
  /// Host address and size of a `.global`/`.const` variable, or null.
  void *globalAddress(llvm::StringRef Name, uint64_t *Size = nullptr) const;
  /// The PTX file:line:col of the instruction whose code is at Pc (where a kernel faulted), as the object's line
  /// table says (the lowering gives each instruction's code its PTX location); empty where Pc is in none of this
  /// module's code nor its imports', or in code no single PTX instruction made (line 0). For a fault's report:
  /// it parses the line table each time.
  std::string sourceLocation(uint64_t Pc) const;

private:
  CompiledModule() = default;
  /// sourceLocation in this module's own code.
  std::string ownSourceLocation(uint64_t Pc) const;
  std::unique_ptr<llvm::orc::LLJIT> JIT;
  const CompiledModule *Imports = nullptr;
  std::string ObjectCode; ///< what was linked, for its line table
  std::vector<KernelInfo> Kernels;
  std::vector<ThreadFunction> Entries;
  std::vector<BlockRangeFunction> BlockEntries;
  std::vector<GlobalInfo> Globals;
  std::vector<void *> GlobalAddrs;
};

/// The whole pipeline from a verified module to host code (compilePTXObject, then load).
llvm::Expected<std::unique_ptr<CompiledModule>>
compilePTX(const ptx::VerifiedModule &M, const ptx::SourceBuffer *Source, const CompileOptions &Options = {});

} // namespace ptxforge::codegen
