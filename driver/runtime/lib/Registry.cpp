#include "ptxforge/runtime/Registry.h"

#include "ptxforge/runtime/Errors.h"
#include "ptxforge/runtime/RuntimeContext.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>

namespace ptxforge::runtime {

/// A registered fatbinary and the modules made of it, one per context that used it.
struct Fatbin {
  void *HandleSlot = nullptr; ///< what the handle nvcc keeps points at (first: a void ** is its address)
  const void *Image = nullptr;
  std::string Origin; ///< the executable or library that embeds it, for messages
  struct Loaded {
    CUmodule Module = nullptr;
    cudaError_t Failure = cudaSuccess; ///< a failed load fails every use the same way, without a new JIT
    std::map<std::string, CUfunction> Functions;
  };
  std::map<CUcontext, Loaded> PerContext;
};

FatbinRegistry &FatbinRegistry::get() {
  static auto *R = new FatbinRegistry; // never destroyed: __cudaUnregisterFatBinary runs from atexit
  return *R;
}

Fatbin *FatbinRegistry::fatbin(void **Handle) const {
  for (const auto &F : Fatbins)
    if (&F->HandleSlot == Handle)
      return F.get();
  return nullptr;
}

void **FatbinRegistry::registerFatbin(const void *Wrapper) {
  auto *W = static_cast<const FatbinWrapper *>(Wrapper);
  if (!W || W->Magic != FatbinWrapperMagic || !W->Data)
    return nullptr;
  auto F = std::make_unique<Fatbin>();
  F->Image = W->Data;
  Dl_info Info;
  F->Origin = dladdr(Wrapper, &Info) && Info.dli_fname ? Info.dli_fname : "the program";
  std::scoped_lock L(Lock);
  Fatbins.push_back(std::move(F));
  return &Fatbins.back()->HandleSlot;
}

void FatbinRegistry::registerKernel(void **Handle, const void *HostFun, const char *DeviceName) {
  std::scoped_lock L(Lock);
  Fatbin *F = fatbin(Handle);
  if (!F || !HostFun || !DeviceName)
    return;
  Kernels[HostFun] = std::make_unique<KernelEntry>(KernelEntry{F, DeviceName});
}

void FatbinRegistry::registerVariable(void **Handle, const void *HostVar, const char *DeviceName, size_t Size,
                                      bool Constant, void **ManagedShadow) {
  std::scoped_lock L(Lock);
  Fatbin *F = fatbin(Handle);
  if (!F || !HostVar || !DeviceName)
    return;
  Variables[HostVar] = std::make_unique<VariableEntry>(VariableEntry{F, DeviceName, Size, Constant, ManagedShadow});
}

void FatbinRegistry::unregisterFatbin(void **Handle) {
  std::scoped_lock L(Lock);
  Fatbin *F = fatbin(Handle);
  if (!F)
    return;
  for (auto I = Kernels.begin(); I != Kernels.end();)
    I = I->second->Owner == F ? Kernels.erase(I) : std::next(I);
  for (auto I = Variables.begin(); I != Variables.end();)
    I = I->second->Owner == F ? Variables.erase(I) : std::next(I);
  // The Fatbin itself stays: cudaKernel_t handles a program still holds must not dangle.
  F->PerContext.clear();
}

const KernelEntry *FatbinRegistry::kernel(const void *HostFunOrKernel) const {
  std::scoped_lock L(Lock);
  if (auto I = Kernels.find(HostFunOrKernel); I != Kernels.end())
    return I->second.get();
  for (const auto &[Stub, K] : Kernels)
    if (K.get() == HostFunOrKernel)
      return K.get();
  return nullptr;
}

cudaError_t FatbinRegistry::moduleOf(Fatbin &F, CUmodule *Out) {
  CUcontext Ctx = nullptr;
  cuCtxGetCurrent(&Ctx);
  auto [I, Inserted] = F.PerContext.try_emplace(Ctx);
  Fatbin::Loaded &M = I->second;
  if (!Inserted) {
    if (M.Failure)
      return M.Failure;
    *Out = M.Module;
    return cudaSuccess;
  }
  char Log[8192] = "";
  CUjit_option Options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *Values[] = {Log, reinterpret_cast<void *>(sizeof Log)};
  CUresult R = cuModuleLoadDataEx(&M.Module, F.Image, 2, Options, Values);
  if (R == CUDA_SUCCESS) {
    *Out = M.Module;
    return cudaSuccess;
  }
  M.Failure = fromDriver(R);
  if (R == CUDA_ERROR_NO_BINARY_FOR_GPU)
    std::fprintf(stderr,
                 "ptxforge: %s: no kernel image for the device, its fatbinary has no PTX ptxforge can run%s%s; "
                 "rebuild with PTX, e.g. -gencode arch=compute_XX,code=compute_XX\n",
                 F.Origin.c_str(), *Log ? ": " : "", Log);
  else
    std::fprintf(stderr, "ptxforge: loading the kernels of %s failed (%s)%s%s\n", F.Origin.c_str(),
                 errorName(M.Failure), *Log ? ": " : "", Log);
  return M.Failure;
}

cudaError_t FatbinRegistry::function(const KernelEntry &K, CUfunction *Out) {
  if (cudaError_t E = ensureContext())
    return E;
  std::scoped_lock L(Lock);
  CUcontext Ctx = nullptr;
  cuCtxGetCurrent(&Ctx);
  for (int Attempt = 0; Attempt < 2; ++Attempt) {
    CUmodule M = nullptr;
    if (cudaError_t E = moduleOf(*K.Owner, &M))
      return E;
    Fatbin::Loaded &Loaded = K.Owner->PerContext[Ctx];
    if (auto I = Loaded.Functions.find(K.Name); I != Loaded.Functions.end()) {
      *Out = I->second;
      return cudaSuccess;
    }
    CUfunction Fn = nullptr;
    CUresult R = cuModuleGetFunction(&Fn, M, K.Name.c_str());
    if (R == CUDA_SUCCESS) {
      Loaded.Functions.emplace(K.Name, Fn);
      *Out = Fn;
      return cudaSuccess;
    }
    if (R != CUDA_ERROR_INVALID_HANDLE && R != CUDA_ERROR_CONTEXT_IS_DESTROYED)
      return R == CUDA_ERROR_NOT_FOUND ? cudaErrorInvalidDeviceFunction : fromDriver(R);
    // The module went with its context (cuDevicePrimaryCtxReset from the driver API): load it again.
    K.Owner->PerContext.erase(Ctx);
  }
  return cudaErrorInvalidResourceHandle;
}

cudaError_t FatbinRegistry::variable(const void *Symbol, CUdeviceptr *Address, size_t *Size) {
  if (cudaError_t E = ensureContext())
    return E;
  std::scoped_lock L(Lock);
  auto I = Variables.find(Symbol);
  if (I == Variables.end())
    return cudaErrorInvalidSymbol;
  const VariableEntry &V = *I->second;
  CUcontext Ctx = nullptr;
  cuCtxGetCurrent(&Ctx);
  for (int Attempt = 0; Attempt < 2; ++Attempt) {
    CUmodule M = nullptr;
    if (cudaError_t E = moduleOf(*V.Owner, &M))
      return E;
    size_t Bytes = 0;
    CUresult R = cuModuleGetGlobal(Address, &Bytes, M, V.Name.c_str());
    if (R == CUDA_SUCCESS) {
      *Size = Bytes;
      return cudaSuccess;
    }
    if (R != CUDA_ERROR_INVALID_HANDLE && R != CUDA_ERROR_CONTEXT_IS_DESTROYED)
      return R == CUDA_ERROR_NOT_FOUND ? cudaErrorInvalidSymbol : fromDriver(R);
    V.Owner->PerContext.erase(Ctx);
  }
  return cudaErrorInvalidResourceHandle;
}

cudaError_t FatbinRegistry::initModule(void **Handle) {
  if (cudaError_t E = ensureContext())
    return E;
  std::vector<std::pair<const void *, void **>> Managed; // host shadow key, pointer to fill
  {
    std::scoped_lock L(Lock);
    Fatbin *F = fatbin(Handle);
    if (!F)
      return cudaErrorInvalidResourceHandle;
    CUmodule M = nullptr;
    if (cudaError_t E = moduleOf(*F, &M))
      return E;
    for (const auto &[Key, V] : Variables)
      if (V->Owner == F && V->ManagedShadow)
        Managed.emplace_back(Key, V->ManagedShadow);
  }
  for (auto [Key, Shadow] : Managed) {
    CUdeviceptr Address = 0;
    size_t Size = 0;
    // Host and device share memory here: the host shadow points right at the module's variable.
    if (cudaError_t E = variable(Key, &Address, &Size))
      return E;
    *Shadow = reinterpret_cast<void *>(Address);
  }
  return cudaSuccess;
}

void FatbinRegistry::forgetContext(CUcontext C) {
  std::scoped_lock L(Lock);
  for (auto &F : Fatbins)
    F->PerContext.erase(C);
}

} // namespace ptxforge::runtime
