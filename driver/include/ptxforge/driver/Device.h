// The devices ptxforge emulates (one unless PTXFORGE_DEVICE_CC lists several): "ptxforge CPU (sm_XY)", its compute
// capability (PTXFORGE_DEVICE_CC, default 13.0) and the limits kernels see. Values a GPU of that compute capability
// reports where they matter to programs (block and grid limits, shared memory), the host's where the host is what runs.
#pragma once

#include "ptxforge/codegen/ThreadContext.h"

#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ptxforge::driver {

/// The compute capability of the device when PTXFORGE_DEVICE_CC is unset: 13.0, newer than every architecture the
/// CUDA 13 toolkit knows. ptxforge runs PTX, never SASS, so its device must be one for which no library carries
/// SASS: NVIDIA's libraries then take their PTX path (compute_120/121 for cuBLAS, cuRAND, cuSOLVER), as they do on a
/// GPU that came out after them. On a 12.x device cuBLASLt loads bare sm_120 cubins instead. PTX compiled for an
/// arch-specific target (sm_90a, sm_100a) runs only with PTXFORGE_DEVICE_CC naming that device.
inline constexpr unsigned DefaultComputeCapability = 130;

struct DeviceProperties {
  std::string Name; ///< "ptxforge CPU (sm_130)"
  /// The emulated compute capability.
  unsigned CcMajor = DefaultComputeCapability / 10, CcMinor = DefaultComputeCapability % 10;
  uint64_t TotalMemory = 0;          ///< bytes of "device memory" (the host's RAM unless overridden)
  unsigned MultiprocessorCount = 1;  ///< host hardware threads
  unsigned ClockRateKHz = 0;         ///< host CPU clock
  std::array<uint8_t, 16> Uuid = {}; ///< stable per host and compute capability
  uint32_t PciBus = 0, PciDevice = 0, PciDomain = 0;

  // Limits of the emulated GPU generation. The block limits are the execution model's (launchKernel refuses
  // larger blocks, and generated code takes %tid and %ntid to lie within them).
  unsigned MaxThreadsPerBlock = codegen::MaxBlockThreads;
  unsigned MaxBlockDim[3] = {codegen::MaxBlockDim[0], codegen::MaxBlockDim[1], codegen::MaxBlockDim[2]};
  unsigned MaxGridDim[3] = {2147483647u, 65535, 65535};
  unsigned WarpSize = 32;
  unsigned SharedMemoryPerBlock = 48 * 1024; ///< without opt-in
  unsigned SharedMemoryPerBlockOptin = 48 * 1024;
  unsigned SharedMemoryPerMultiprocessor = 64 * 1024;
  unsigned ReservedSharedMemoryPerBlock = 1024;
  unsigned TotalConstantMemory = 64 * 1024;
  unsigned RegistersPerBlock = 65536, RegistersPerMultiprocessor = 65536;
  unsigned MaxThreadsPerMultiprocessor = 2048;
  unsigned MaxBlocksPerMultiprocessor = 32;
  unsigned L2CacheBytes = 0; ///< the host's last-level cache

  /// major*10+minor: 90 for 9.0, 103 for 10.3 (how PTX targets and fatbinary entries number them).
  unsigned computeCapability() const { return CcMajor * 10 + CcMinor; }
};

/// PTXFORGE_DEVICE_CC as major*10+minor (its spellings: fatbin::parseComputeCapability), DefaultComputeCapability
/// when unset. Errors name the variable and its value; cuInit turns one into CUDA_ERROR_NO_DEVICE, the CLI into its
/// exit status 2. With several devices listed, the first one's.
llvm::Expected<unsigned> deviceComputeCapabilityFromEnvironment();
/// The most devices PTXFORGE_DEVICE_CC may list.
inline constexpr int MaxDevices = 16;
/// PTXFORGE_DEVICE_CC as one compute capability per device, comma-separated ("9.0,9.0": two devices; at most
/// MaxDevices); one DefaultComputeCapability device when unset.
llvm::Expected<std::vector<unsigned>> deviceComputeCapabilitiesFromEnvironment();
/// Properties for a compute capability on this host; Ordinal (the device's number) makes its UUID and PCI bus
/// number its own.
DeviceProperties makeDeviceProperties(unsigned Major, unsigned Minor, int Ordinal = 0);
/// Device's properties (0 <= Device < deviceCount()); reads the environment (PTXFORGE_DEVICE_CC,
/// PTXFORGE_DEVICE_MEMORY) on first use.
const DeviceProperties &deviceProperties(int Device = 0);
/// How many devices there are: as many as PTXFORGE_DEVICE_CC lists (1 when it is unset or invalid). Every device
/// is the same host: memory is shared (unified addressing), so every device can access every other's.
int deviceCount();
} // namespace ptxforge::driver
