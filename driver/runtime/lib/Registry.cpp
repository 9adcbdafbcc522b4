#include "ptxforge/runtime/Registry.h"

#include "ptxforge/runtime/Errors.h"
#include "ptxforge/runtime/RuntimeContext.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace ptxforge::runtime {

/// A registered fatbinary and the modules made of it, one per context that used it.
struct Fatbin {
  void *HandleSlot = nullptr; ///< what the handle nvcc keeps points at (first: a void ** is its address)
  const void *Image = nullptr;
  std::string Origin; ///< the executable or library that embeds it, for messages
  /// -rdc=true: the relocatable fatbinary of each translation unit (`__nv_relfatbin`), which the load links
  /// into one module; Image is then the device-linked fatbinary, SASS at most.
  std::vector<const void *> Relocatable;
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
  if (W->Version == LinkedFatbinWrapperVersion && W->FilenameOrFatbins)
    for (auto *Unit = static_cast<const void *const *>(W->FilenameOrFatbins); *Unit; ++Unit)
      F->Relocatable.push_back(*Unit);
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

namespace {

/// The bytes of the fatbinary container at Image (header and payload), as cuLinkAddData wants a size.
size_t containerBytes(const void *Image) {
  uint64_t Payload = 0;
  uint16_t HeaderSize = 0;
  std::memcpy(&HeaderSize, static_cast<const char *>(Image) + 6, sizeof HeaderSize);
  std::memcpy(&Payload, static_cast<const char *>(Image) + 8, sizeof Payload);
  return HeaderSize + Payload;
}

/// Links the relocatable device code of every translation unit (what nvcc -dlink does for SASS, and the
/// driver's JIT does for PTX) with the driver's cuLink* and loads the result. A unit without PTX for the
/// device is left out (ptxforge cannot run SASS; libcudadevrt's device runtime is such a unit): when the
/// others need its symbols, the link names them. Log gets the link's or the load's error log.
CUresult linkAndLoad(const std::vector<const void *> &Units, const std::string &Origin, CUmodule *Out,
                     std::string &Log) {
  char Buffer[8192] = "";
  CUjit_option Options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *Values[] = {Buffer, reinterpret_cast<void *>(sizeof Buffer)};
  CUlinkState State = nullptr;
  if (CUresult R = cuLinkCreate(2, Options, Values, &State))
    return R;
  CUresult R = CUDA_SUCCESS;
  unsigned Added = 0;
  for (size_t I = 0; I < Units.size() && R == CUDA_SUCCESS; ++I) {
    std::string Name = Origin + " (translation unit " + std::to_string(I + 1) + ")";
    R = cuLinkAddData(State, CU_JIT_INPUT_FATBINARY, const_cast<void *>(Units[I]), containerBytes(Units[I]),
                      Name.c_str(), 0, nullptr, nullptr);
    if (R == CUDA_SUCCESS)
      ++Added;
    else if (R == CUDA_ERROR_NO_BINARY_FOR_GPU) // the log says why; the link names what it needed from it
      R = CUDA_SUCCESS;
  }
  void *Image = nullptr;
  size_t Size = 0;
  if (R == CUDA_SUCCESS && !Added)
    R = CUDA_ERROR_NO_BINARY_FOR_GPU;
  else if (R == CUDA_SUCCESS && (R = cuLinkComplete(State, &Image, &Size)) == CUDA_SUCCESS)
    R = cuModuleLoadDataEx(Out, Image, 2, Options, Values);
  Log = Buffer;
  cuLinkDestroy(State);
  return R;
}

/// Whether a failed link's log names what libcudadevrt's functions call in NVIDIA's driver: a device runtime
/// function ptxforge does not provide (codegen::deviceLibraryHelper lists those it does) was reached.
bool needsDeviceRuntime(const std::string &Log) {
  for (const char *Prefix : {"'__cudaCDP", "'__cuda_syscall_", "'cnp"})
    if (Log.find(std::string("Undefined reference to ") + Prefix) != std::string::npos)
      return true;
  return false;
}

} // namespace

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
  std::string Log;
  CUresult R;
  bool Linked = !F.Relocatable.empty();
  if (Linked) {
    R = linkAndLoad(F.Relocatable, F.Origin, &M.Module, Log);
  } else {
    char Buffer[8192] = "";
    CUjit_option Options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *Values[] = {Buffer, reinterpret_cast<void *>(sizeof Buffer)};
    R = cuModuleLoadDataEx(&M.Module, F.Image, 2, Options, Values);
    Log = Buffer;
  }
  if (R == CUDA_SUCCESS) {
    *Out = M.Module;
    return cudaSuccess;
  }
  while (!Log.empty() && Log.back() == '\n')
    Log.pop_back();
  // A failed link (unresolved or multiply defined device symbols) is a failed JIT of the program's PTX.
  M.Failure = Linked && R == CUDA_ERROR_UNKNOWN ? cudaErrorInvalidPtx : fromDriver(R);
  const char *Sep = Log.empty() ? "" : ": ";
  if (R == CUDA_ERROR_NO_BINARY_FOR_GPU)
    std::fprintf(stderr,
                 "ptxforge: %s: no kernel image for the device, its fatbinary has no PTX ptxforge can run%s%s; "
                 "rebuild with PTX, e.g. -gencode arch=compute_XX,code=compute_XX\n",
                 F.Origin.c_str(), Sep, Log.c_str());
  else
    std::fprintf(stderr, "ptxforge: %s the kernels of %s failed (%s)%s%s%s\n", Linked ? "linking" : "loading",
                 F.Origin.c_str(), errorName(M.Failure), Sep, Log.c_str(),
                 needsDeviceRuntime(Log) ? "\nptxforge: the program calls a device runtime function (libcudadevrt) "
                                           "that ptxforge does not provide"
                                         : "");
  return M.Failure;
}

cudaError_t FatbinRegistry::lookUpInModule(Fatbin &F, CUcontext Ctx, cudaError_t NotFound,
                                           const std::function<CUresult(CUmodule)> &Lookup) {
  for (int Attempt = 0; Attempt < 2; ++Attempt) {
    CUmodule M = nullptr;
    if (cudaError_t E = moduleOf(F, &M))
      return E;
    CUresult R = Lookup(M);
    if (R == CUDA_SUCCESS)
      return cudaSuccess;
    if (R != CUDA_ERROR_INVALID_HANDLE && R != CUDA_ERROR_CONTEXT_IS_DESTROYED)
      return R == CUDA_ERROR_NOT_FOUND ? NotFound : fromDriver(R);
    F.PerContext.erase(Ctx); // the module went with its context: load it again
  }
  return cudaErrorInvalidResourceHandle;
}

cudaError_t FatbinRegistry::function(const KernelEntry &K, CUfunction *Out) {
  if (cudaError_t E = ensureContext())
    return E;
  std::scoped_lock L(Lock);
  CUcontext Ctx = nullptr;
  cuCtxGetCurrent(&Ctx);
  return lookUpInModule(*K.Owner, Ctx, cudaErrorInvalidDeviceFunction, [&](CUmodule M) {
    Fatbin::Loaded &Loaded = K.Owner->PerContext[Ctx];
    if (auto I = Loaded.Functions.find(K.Name); I != Loaded.Functions.end()) {
      *Out = I->second;
      return CUDA_SUCCESS;
    }
    CUfunction Fn = nullptr;
    CUresult R = cuModuleGetFunction(&Fn, M, K.Name.c_str());
    if (R == CUDA_SUCCESS) {
      Loaded.Functions.emplace(K.Name, Fn);
      *Out = Fn;
    }
    return R;
  });
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
  return lookUpInModule(*V.Owner, Ctx, cudaErrorInvalidSymbol, [&](CUmodule M) {
    size_t Bytes = 0;
    CUresult R = cuModuleGetGlobal(Address, &Bytes, M, V.Name.c_str());
    if (R == CUDA_SUCCESS)
      *Size = Bytes;
    return R;
  });
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
