// Stage 5 of the pipeline: host code. A LoweredModule optimized and JIT-linked by ORC, with the runtime helpers
// resolved; kernels are looked up by their `.entry` name.
#pragma once

#include "ptxforge/codegen/Lowering.h"
#include "ptxforge/codegen/ThreadContext.h"

#include "llvm/Support/Error.h"

#include <memory>

namespace llvm::orc {
class LLJIT;
}

namespace ptxforge::codegen {

using ThreadFunction = void (*)(ThreadContext *, const char *Params);

struct CompileOptions {
  unsigned OptLevel = 2; ///< 0-3, as -O
};

class CompiledModule {
public:
  ~CompiledModule();

  static llvm::Expected<std::unique_ptr<CompiledModule>> compile(LoweredModule LM, const CompileOptions &Options = {});

  const std::vector<KernelInfo> &kernels() const { return Kernels; }
  const KernelInfo *kernel(llvm::StringRef Name) const;
  ThreadFunction entry(const KernelInfo &K) const;
  /// The kernel's block loop (same signature; the context is a template whose %tid it varies), or null.
  ThreadFunction blockEntry(const KernelInfo &K) const;
  /// Host address and size of a `.global`/`.const` variable, or null.
  void *globalAddress(llvm::StringRef Name, uint64_t *Size = nullptr) const;

private:
  CompiledModule() = default;
  std::unique_ptr<llvm::orc::LLJIT> JIT;
  std::vector<KernelInfo> Kernels;
  std::vector<ThreadFunction> Entries, BlockEntries;
  std::vector<GlobalInfo> Globals;
  std::vector<void *> GlobalAddrs;
};

/// The whole pipeline from a verified module to host code (lower, optimize, JIT-link).
llvm::Expected<std::unique_ptr<CompiledModule>> compilePTX(const ptx::VerifiedModule &M, const ptx::SourceBuffer *Source,
                                                           const CompileOptions &Options = {});

} // namespace ptxforge::codegen
