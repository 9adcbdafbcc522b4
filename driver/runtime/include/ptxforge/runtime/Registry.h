// What nvcc's host code registers before main (RUNTIME_ABI_NOTES.md): each translation unit's fatbinary
// (through its __fatBinC_Wrapper_t), its kernels by host stub address and mangled name, and its __device__,
// __constant__ and __managed__ variables by host shadow address. A fatbinary becomes a driver module
// (cuModuleLoadDataEx: the driver's fatbin reader picks the PTX for the device) lazily, in each context at
// the first use of one of its kernels or variables, so programs pay the JIT only for what they run.
#pragma once

#include "ptxforge/runtime/RuntimeAbi.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace ptxforge::runtime {

struct Fatbin;

/// A registered kernel; a cudaKernel_t is a pointer to one.
struct KernelEntry {
  Fatbin *Owner = nullptr;
  std::string Name;
};

/// A registered __device__ / __constant__ / __managed__ variable.
struct VariableEntry {
  Fatbin *Owner = nullptr;
  std::string Name;
  size_t Size = 0;
  bool Constant = false;
  void **ManagedShadow = nullptr; ///< __managed__: the host pointer nvcc's code reads the variable through
};

class FatbinRegistry {
public:
  static FatbinRegistry &get();

  /// __cudaRegisterFatBinary; null for a wrapper without the magic.
  void **registerFatbin(const void *Wrapper);
  void registerKernel(void **Handle, const void *HostFun, const char *DeviceName);
  void registerVariable(void **Handle, const void *HostVar, const char *DeviceName, size_t Size, bool Constant,
                        void **ManagedShadow);
  /// __cudaUnregisterFatBinary (at exit): forgets the fatbinary; the driver keeps its modules until the
  /// contexts go, as kernels may still be running on other threads.
  void unregisterFatbin(void **Handle);

  /// The kernel a host stub (or a cudaKernel_t) stands for, or null.
  const KernelEntry *kernel(const void *HostFunOrKernel) const;
  /// The kernel's CUfunction in the calling thread's context, loading its fatbinary there first.
  cudaError_t function(const KernelEntry &K, CUfunction *Out);
  /// A variable's device address and size in the calling thread's context (cudaErrorInvalidSymbol when
  /// Symbol is no registered variable).
  cudaError_t variable(const void *Symbol, CUdeviceptr *Address, size_t *Size);
  /// __cudaInitModule: loads the fatbinary in the current context and points its __managed__ variables'
  /// host shadows at their memory.
  cudaError_t initModule(void **Handle);
  /// Drops the modules loaded in C (cudaDeviceReset destroys them with the context).
  void forgetContext(CUcontext C);

private:
  FatbinRegistry() = default;
  /// The module of F in the current context (loaded on first use); caller holds Lock.
  cudaError_t moduleOf(Fatbin &F, CUmodule *Out);
  /// Runs Lookup (a cuModuleGet* call) on F's module in the current context Ctx. When that module went with its
  /// context (cuDevicePrimaryCtxReset from the driver API), loads it again and looks once more. A name the module
  /// lacks is NotFound.
  cudaError_t lookUpInModule(Fatbin &F, CUcontext Ctx, cudaError_t NotFound,
                             const std::function<CUresult(CUmodule)> &Lookup);
  Fatbin *fatbin(void **Handle) const;

  mutable std::mutex Lock;
  std::vector<std::unique_ptr<Fatbin>> Fatbins;
  std::unordered_map<const void *, std::unique_ptr<KernelEntry>> Kernels;     ///< by host stub
  std::unordered_map<const void *, std::unique_ptr<VariableEntry>> Variables; ///< by host shadow
};

} // namespace ptxforge::runtime
