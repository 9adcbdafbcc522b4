// The driver-API harness of bench_kernels and bench_idioms: runs a benchmark's kernels through libcuda.so.1 (the
// CUDA driver API: cuModuleLoadData on the PTX, cuMemAlloc/cuMemcpy, cuLaunchKernel or
// cuLaunchCooperativeKernel, cuCtxSynchronize), the way programs use ptxforge, tiered JIT included. The first
// run executes the kernels' quick code (compiled at their first use); waitForOptimizedCode() then waits for the
// tiered JIT's optimized code through ptxforge's export table (driver/PtxforgeExportTable.h), so later runs
// time steady state. The launch worker count is libcuda's own configuration (PTXFORGE_WORKERS, read at cuInit):
// set it in the environment before the first call.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ptxforge::bench {

struct Dim3 {
  uint32_t X = 1, Y = 1, Z = 1;
};

/// A kernel argument: a buffer (its index among the workload's buffers, passed as its device pointer) or a value.
struct Arg {
  int Buf = -1;
  std::vector<char> Bytes;
  static Arg buffer(int I) { return Arg{I, {}}; }
  template <class T> static Arg value(T V) {
    Arg A;
    A.Bytes.resize(sizeof(T));
    std::memcpy(A.Bytes.data(), &V, sizeof(T));
    return A;
  }
};

struct LaunchSpec {
  Dim3 Grid, Block;
  std::vector<Arg> Args;
  std::string Entry;        ///< empty: the runner's default entry
  unsigned SharedBytes = 0; ///< dynamic shared memory
  /// cuLaunchCooperativeKernel; a Grid.X of 0 becomes as many blocks as are resident at once (occupancy per
  /// multiprocessor x multiprocessors), as CUDA programs size a cooperative grid.
  bool Cooperative = false;
};

/// A buffer as the device sees it: its initial contents, and what each run starts from.
struct DeviceBufferSpec {
  const void *Init = nullptr;
  size_t Bytes = 0;
  bool RestoreBeforeRun = false; ///< in/out: the initial contents copied back in before each run (untimed)
  bool ZeroBeforeRun = false;    ///< accumulating outputs: zeroed before each run (untimed)
};

class CudaRunner {
public:
  CudaRunner() = default;
  CudaRunner(const CudaRunner &) = delete;
  CudaRunner &operator=(const CudaRunner &) = delete;
  ~CudaRunner();

  /// cuInit and the primary context, once per process; "" or the error.
  static std::string initialize();

  /// Loads Ptx (cuModuleLoadData), gets every entry the launches name (the quick code: what an application
  /// waits for before its first launch, LoadMs), allocates the buffers and copies their contents in.
  std::string setup(const std::string &Ptx, const std::string &DefaultEntry, const std::vector<DeviceBufferSpec> &Bufs,
                    const std::vector<LaunchSpec> &Launches);
  /// One run: buffers reset (untimed), then every launch and cuCtxSynchronize, timed into Ms.
  std::string run(double &Ms);
  /// Waits until the kernels' optimized code is in place (ptxforge's export table; a no-op where the driver
  /// lacks it, with Tiered false). WaitMs: how long that took after the call.
  std::string waitForOptimizedCode();
  /// Buffer I's contents now (cuMemcpyDtoH) into Host.
  std::string download(size_t I, void *Host);

  double LoadMs = 0, WaitMs = 0;
  bool Tiered = false; ///< the driver offered the wait (ptxforge)

private:
  struct Prepared {
    CUfunction F = nullptr;
    unsigned Grid[3], Block[3], Shared;
    bool Cooperative;
    std::vector<std::vector<char>> Storage;
    std::vector<void *> Params;
  };
  std::string prepare(const LaunchSpec &L, CUfunction F);
  CUmodule Module = nullptr;
  std::vector<CUdeviceptr> Device;
  std::vector<DeviceBufferSpec> Buffers;
  std::vector<Prepared> Launches;
};

/// "cuFoo: CUDA_ERROR_NAME (code)" or "" for success.
std::string cudaError(const char *What, CUresult R);

} // namespace ptxforge::bench
