// The driver-API harness (CudaRunner.h).
#include "harness/CudaRunner.h"

#include "ptxforge/driver/PtxforgeExportTable.h"

#include <algorithm>
#include <chrono>
#include <map>

namespace ptxforge::bench {

using Clock = std::chrono::steady_clock;

std::string cudaError(const char *What, CUresult R) {
  if (R == CUDA_SUCCESS)
    return "";
  const char *Name = nullptr;
  cuGetErrorName(R, &Name);
  return std::string(What) + ": " + (Name ? Name : "unknown error") + " (" + std::to_string(int(R)) + ")";
}

std::string CudaRunner::initialize() {
  static std::string Error = [] {
    if (CUresult R = cuInit(0))
      return cudaError("cuInit", R);
    CUdevice Dev;
    if (CUresult R = cuDeviceGet(&Dev, 0))
      return cudaError("cuDeviceGet", R);
    CUcontext Ctx;
    if (CUresult R = cuDevicePrimaryCtxRetain(&Ctx, Dev))
      return cudaError("cuDevicePrimaryCtxRetain", R);
    return cudaError("cuCtxSetCurrent", cuCtxSetCurrent(Ctx));
  }();
  return Error;
}

CudaRunner::~CudaRunner() {
  for (CUdeviceptr P : Device)
    cuMemFree(P);
  if (Module)
    cuModuleUnload(Module);
}

std::string CudaRunner::prepare(const LaunchSpec &L, CUfunction F) {
  Prepared P;
  P.F = F;
  P.Grid[0] = L.Grid.X, P.Grid[1] = L.Grid.Y, P.Grid[2] = L.Grid.Z;
  P.Block[0] = L.Block.X, P.Block[1] = L.Block.Y, P.Block[2] = L.Block.Z;
  P.Shared = L.SharedBytes;
  P.Cooperative = L.Cooperative;
  if (L.Cooperative && L.Grid.X == 0) {
    int PerSm = 0, Sms = 0;
    unsigned Threads = L.Block.X * L.Block.Y * L.Block.Z;
    if (CUresult R = cuOccupancyMaxActiveBlocksPerMultiprocessor(&PerSm, F, int(Threads), L.SharedBytes))
      return cudaError("cuOccupancyMaxActiveBlocksPerMultiprocessor", R);
    if (CUresult R = cuDeviceGetAttribute(&Sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0))
      return cudaError("cuDeviceGetAttribute", R);
    P.Grid[0] = unsigned(std::max(1, PerSm * Sms));
  }
  for (const Arg &A : L.Args) {
    if (A.Buf >= 0) {
      std::vector<char> Ptr(sizeof(CUdeviceptr));
      std::memcpy(Ptr.data(), &Device[A.Buf], sizeof(CUdeviceptr));
      P.Storage.push_back(std::move(Ptr));
    } else {
      P.Storage.push_back(A.Bytes);
    }
  }
  for (std::vector<char> &S : P.Storage)
    P.Params.push_back(S.data());
  Launches.push_back(std::move(P));
  return "";
}

std::string CudaRunner::setup(const std::string &Ptx, const std::string &DefaultEntry,
                              const std::vector<DeviceBufferSpec> &Bufs, const std::vector<LaunchSpec> &Specs) {
  if (std::string E = initialize(); !E.empty())
    return E;
  auto T0 = Clock::now();
  if (CUresult R = cuModuleLoadData(&Module, Ptx.c_str()))
    return cudaError("cuModuleLoadData", R);
  std::map<std::string, CUfunction> Functions;
  for (const LaunchSpec &L : Specs) {
    const std::string &Name = L.Entry.empty() ? DefaultEntry : L.Entry;
    if (Functions.count(Name))
      continue;
    CUfunction F;
    if (CUresult R = cuModuleGetFunction(&F, Module, Name.c_str()))
      return cudaError(("cuModuleGetFunction(" + Name + ")").c_str(), R);
    Functions[Name] = F;
  }
  LoadMs = std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
  Buffers = Bufs;
  for (const DeviceBufferSpec &B : Bufs) {
    CUdeviceptr P = 0;
    if (CUresult R = cuMemAlloc(&P, std::max<size_t>(B.Bytes, 1)))
      return cudaError("cuMemAlloc", R);
    Device.push_back(P);
    if (CUresult R = B.Init ? cuMemcpyHtoD(P, B.Init, B.Bytes) : cuMemsetD8(P, 0, B.Bytes))
      return cudaError("cuMemcpyHtoD", R);
  }
  for (const LaunchSpec &L : Specs)
    if (std::string E = prepare(L, Functions[L.Entry.empty() ? DefaultEntry : L.Entry]); !E.empty())
      return E;
  return "";
}

std::string CudaRunner::run(double &Ms) {
  for (size_t I = 0; I < Buffers.size(); ++I) {
    const DeviceBufferSpec &B = Buffers[I];
    CUresult R = CUDA_SUCCESS;
    if (B.RestoreBeforeRun)
      R = cuMemcpyHtoD(Device[I], B.Init, B.Bytes);
    else if (B.ZeroBeforeRun)
      R = cuMemsetD8(Device[I], 0, B.Bytes);
    if (R)
      return cudaError("resetting a buffer", R);
  }
  if (CUresult R = cuCtxSynchronize())
    return cudaError("cuCtxSynchronize", R);
  auto T0 = Clock::now();
  for (Prepared &P : Launches) {
    CUresult R = P.Cooperative ? cuLaunchCooperativeKernel(P.F, P.Grid[0], P.Grid[1], P.Grid[2], P.Block[0], P.Block[1],
                                                           P.Block[2], P.Shared, nullptr, P.Params.data())
                               : cuLaunchKernel(P.F, P.Grid[0], P.Grid[1], P.Grid[2], P.Block[0], P.Block[1],
                                                P.Block[2], P.Shared, nullptr, P.Params.data(), nullptr);
    if (R)
      return cudaError(P.Cooperative ? "cuLaunchCooperativeKernel" : "cuLaunchKernel", R);
  }
  if (CUresult R = cuCtxSynchronize())
    return cudaError("cuCtxSynchronize (the kernel failed)", R);
  Ms = std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
  return "";
}

std::string CudaRunner::waitForOptimizedCode() {
  CUuuid Id;
  std::copy(driver::PtxforgeExportTableUuid.begin(), driver::PtxforgeExportTableUuid.end(), Id.bytes);
  const void *Table = nullptr;
  Tiered = cuGetExportTable(&Table, &Id) == CUDA_SUCCESS && Table;
  if (!Tiered)
    return ""; // not ptxforge: nothing to wait for
  using Wait = CUresult (*)(CUmodule);
  auto W = reinterpret_cast<Wait>(static_cast<void *const *>(Table)[driver::PtxforgeWaitForOptimizedCodeSlot]);
  auto T0 = Clock::now();
  CUresult R = W(Module);
  WaitMs = std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
  return cudaError("waiting for the optimized code", R);
}

std::string CudaRunner::download(size_t I, void *Host) {
  return cudaError("cuMemcpyDtoH", cuMemcpyDtoH(Host, Device[I], Buffers[I].Bytes));
}

} // namespace ptxforge::bench
