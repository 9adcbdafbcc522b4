// ptxforge's own cuGetExportTable table (capi/ExportTables.cpp, docs/export-tables.md): what a program that loads
// libcuda.so.1 can ask ptxforge for beyond the driver API. No NVIDIA library asks for it; NVIDIA's driver answers
// CUDA_ERROR_INVALID_VALUE for its UUID, so a program can use it where present and do without elsewhere.
#pragma once

#include <array>
#include <cstdint>

namespace ptxforge::driver {

/// "ptxforge" "tier" 0001 0000.
constexpr std::array<uint8_t, 16> PtxforgeExportTableUuid = {0x70, 0x74, 0x78, 0x66, 0x6f, 0x72, 0x67, 0x65,
                                                             0x74, 0x69, 0x65, 0x72, 0x00, 0x01, 0x00, 0x00};

/// Slot 0 holds the table's size in bytes. Slot 1: `CUresult (*)(CUmodule)`: waits until every kernel of the
/// module whose optimized compile has started (the tiered JIT starts it at a kernel's first use) has its
/// optimized code in place, so the next launch runs it; CUDA_ERROR_INVALID_HANDLE for a handle that is not a
/// loaded module.
constexpr unsigned PtxforgeWaitForOptimizedCodeSlot = 1;

} // namespace ptxforge::driver
