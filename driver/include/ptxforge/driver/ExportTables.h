// What the export tables of cuGetExportTable (capi/ExportTables.cpp) compute in the core: the token of the
// runtime/driver integrity check that NVIDIA's CUDA runtime (linked statically into cuBLAS, cuFFT, cuRAND,
// cuSPARSE, cuSOLVER) asks for before it uses the driver. docs/export-tables.md describes every table.
#pragma once

#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <cstdint>
#include <vector>

namespace ptxforge::driver {

/// MD2 (RFC 1319) of Message.
std::array<uint8_t, 16> md2(llvm::ArrayRef<uint8_t> Message);

/// HMAC (RFC 2104) over MD2, whose block is 16 bytes: Key must be 16 bytes.
std::array<uint8_t, 16> hmacMd2(llvm::ArrayRef<uint8_t> Key, llvm::ArrayRef<uint8_t> Message);

/// One device as the integrity check sees it: the UUID and PCI location cuDeviceGetUuid and
/// cuDeviceGetAttribute report, which the runtime reads too.
struct IntegrityDevice {
  std::array<uint8_t, 16> Uuid = {};
  int32_t PciDomain = 0, PciBus = 0, PciDevice = 0;
};

/// The inputs of the check: the runtime's request (its version and the time it passes) and what both sides know
/// of this process: the driver version, the process and calling thread, and where the driver's tables and the
/// check's own entry point are.
struct IntegrityInputs {
  uint32_t RuntimeVersion = 0;
  uint64_t UnixSeconds = 0;
  uint32_t DriverVersion = 0;
  uint32_t ProcessId = 0, ThreadId = 0;
  const void *RuntimeTable = nullptr, *IntegrityTable = nullptr, *CheckFunction = nullptr;
  std::vector<IntegrityDevice> Devices;
};

/// The 16-byte token the runtime compares with its own computation: HMAC-MD2 of the inputs (laid out as the
/// runtime lays them out) under the runtime's fixed key; runtimes whose version ends in 0 or 1 expect a constant.
std::array<uint64_t, 2> integrityToken(const IntegrityInputs &In);

} // namespace ptxforge::driver
