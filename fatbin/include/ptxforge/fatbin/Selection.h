// Choosing the entry a module load runs, the way NVIDIA's driver does for -gencode fatbinaries, adapted to
// a PTX-only implementation: where the driver would run SASS, ptxforge runs its own host-native code for
// that compute capability if present, else the best PTX.
#pragma once

#include "ptxforge/fatbin/Fatbinary.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace ptxforge::fatbin {

/// The JIT switches NVIDIA's driver reads from the environment (the driver and the CLI read them:
/// driver::Settings).
struct JitPolicy {
  /// CUDA_FORCE_PTX_JIT=1: ignore precompiled code (SASS there, host-native entries here), JIT the PTX.
  bool ForcePtxJit = false;
  /// CUDA_DISABLE_PTX_JIT=1: only precompiled code may run. When both are set nothing precompiled is
  /// taken and no PTX is compiled, so a load fails with JitDisabled.
  bool DisablePtxJit = false;
};

struct SelectionRequest {
  /// The emulated device's compute capability, major*10+minor (90 for 9.0, 103 for 10.3).
  unsigned ComputeCapability = 0;
  /// Host ISA levels this CPU runs, most capable first ("x86-64-v4", "x86-64-v3", ...); see HostIsa.h.
  std::vector<std::string> HostIsaLevels;
  JitPolicy Jit;
};

/// How a selection ended. The driver maps these to CUresult values.
enum class SelectionStatus {
  Selected,       ///< Chosen is set
  PtxMissing,     ///< NVIDIA SASS but no PTX: CUDA_ERROR_NO_BINARY_FOR_GPU (209), "PTX is missing"
  NoBinaryForGpu, ///< no entry fits this compute capability (e.g. PTX newer than it): CUDA_ERROR_NO_BINARY_FOR_GPU
  JitDisabled,    ///< only PTX fits and CUDA_DISABLE_PTX_JIT is set: CUDA_ERROR_JIT_COMPILATION_DISABLED (218)
};

struct Selection {
  SelectionStatus Status = SelectionStatus::NoBinaryForGpu;
  const Entry *Chosen = nullptr; ///< a PTX or host-native entry when Status is Selected
  std::string Message;           ///< why; for diagnostics and error logs

  bool ok() const { return Status == SelectionStatus::Selected; }
};

/// Whether PTX (or code compiled from it) for Arch with these target flags may run on compute capability
/// CC: plain targets on any CC >= Arch; `a` targets on exactly Arch; `f` targets on the same major
/// version with CC >= Arch (sm_100f on 10.0 and 10.3, not on 11.x or 12.x).
bool isCompatible(uint32_t Arch, uint64_t Flags, unsigned ComputeCapability);

/// Picks the entry to load from one container's entries:
///  1. unless ForcePtxJit, a host-native entry built for exactly this compute capability and a host ISA
///     level the CPU runs (the most capable first);
///  2. otherwise the compatible PTX entry with the highest arch (on a tie the `a`, then `f`, variant, since
///     it may use more of the device), which fails with JitDisabled under DisablePtxJit;
///  3. NVIDIA SASS entries are never chosen: with SASS and no PTX the result is PtxMissing, with PTX that
///     does not fit (too new, another `a` target, another family) NoBinaryForGpu.
[[nodiscard]] Selection selectEntry(llvm::ArrayRef<Entry> Entries, const SelectionRequest &Request);
[[nodiscard]] Selection selectEntry(llvm::ArrayRef<const Entry *> Entries, const SelectionRequest &Request);

llvm::StringRef statusName(SelectionStatus S);

} // namespace ptxforge::fatbin
