// Device memory: one reserved PROT_NONE virtual range for the process; each allocation commits its own pages
// and leaves an uncommitted guard gap behind it, so a kernel stepping past an allocation or following a wild
// pointer into the range faults (SIGSEGV -> CUDA_ERROR_ILLEGAL_ADDRESS) instead of corrupting a neighbour.
// Device pointers are host addresses (unified addressing): kernels and copies use them directly. The table
// of live ranges also holds memory the driver did not allocate here but hands out as device memory (module
// globals, registered host memory), so every device pointer is looked up the same way.
#pragma once

#include "ptxforge/codegen/Memcheck.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace ptxforge::driver {

class Context;
class MemPool;

enum class MemoryKind {
  Device,         ///< cuMemAlloc, cuMemAllocPitch
  Managed,        ///< cuMemAllocManaged (the same memory: host and device share it anyway)
  Host,           ///< cuMemAllocHost, cuMemHostAlloc (page-locked host memory, device-mapped)
  HostRegistered, ///< cuMemHostRegister: the caller's memory, only recorded
  ModuleGlobal,   ///< a module's `.global`/`.const` variable, only recorded
};

struct Allocation {
  uint64_t Base = 0, Size = 0;
  MemoryKind Kind = MemoryKind::Device;
  Context *Owner = nullptr;
  uint64_t BufferId = 0;   ///< unique for the process lifetime
  unsigned HostFlags = 0;  ///< CU_MEMHOSTALLOC_* / CU_MEMHOSTREGISTER_* as given
  MemPool *Pool = nullptr; ///< the pool a stream-ordered allocation came from

  bool isHost() const { return Kind == MemoryKind::Host || Kind == MemoryKind::HostRegistered; }
  bool contains(uint64_t Address, uint64_t Bytes = 1) const {
    return Address >= Base && Bytes <= Size && Address - Base <= Size - Bytes;
  }
};

/// Whether every page of the caller's [Base, Base+Bytes) is mapped readable (and writable when Writable), as
/// cuMemHostRegister requires: NVIDIA's driver refuses unmapped, PROT_NONE and (unless registered read-only)
/// read-only memory with CUDA_ERROR_INVALID_VALUE.
bool hostRangeAccessible(uint64_t Base, uint64_t Bytes, bool Writable);

class DeviceMemory {
public:
  /// The process-wide instance; reserves the range on first use.
  static DeviceMemory &get();

  /// Commits Bytes (> 0) in the reserved range, zero-filled. OutOfMemory past the device's total memory or
  /// when the range is exhausted.
  [[nodiscard]] llvm::Expected<uint64_t> allocate(uint64_t Bytes, MemoryKind Kind, Context *Owner,
                                                  unsigned HostFlags = 0);
  /// Counts the allocation at Base (made by allocate) as Pool's until it is freed.
  void assignPool(uint64_t Base, MemPool &Pool);
  /// Frees the allocation starting at Base if it has one of the given kinds; InvalidValue otherwise.
  [[nodiscard]] llvm::Error free(uint64_t Base, std::initializer_list<MemoryKind> Kinds);

  /// Records memory allocated elsewhere (module globals, registered host memory).
  [[nodiscard]] llvm::Error addExternal(uint64_t Base, uint64_t Size, MemoryKind Kind, Context *Owner,
                                        unsigned HostFlags = 0);
  void removeExternal(uint64_t Base);

  /// The live range containing Address.
  std::optional<Allocation> find(uint64_t Address) const;
  /// The live range containing Address, else the one whose end or start is closest to it (fault reports).
  std::optional<Allocation> nearest(uint64_t Address) const;
  /// Whether [Address, Address+Bytes) lies inside one live range.
  bool containsRange(uint64_t Address, uint64_t Bytes) const;
  /// Bases of everything Owner allocated here (not the external ranges).
  std::vector<uint64_t> allocationsOf(const Context *Owner) const;

  uint64_t totalBytes() const { return Total; }
  uint64_t usedBytes() const;
  /// The reserved range, for diagnostics and tests.
  /// Memcheck mode (Settings::Memcheck): the live ranges and the reserved range as the checks see them, with
  /// the initcheck shadow of each cuMemAlloc'd allocation (kept alive by the view while a launch uses it).
  struct MemcheckView {
    codegen::MemcheckMemory Memory;
    std::vector<std::shared_ptr<uint8_t[]>> Shadows;
  };
  std::shared_ptr<const MemcheckView> memcheckView() const;
  /// Memcheck mode: Bytes at Address were written by a copy or fill (initcheck). A no-op otherwise.
  void markInitialized(uint64_t Address, uint64_t Bytes);
  uint64_t reservationBase() const { return reinterpret_cast<uint64_t>(Reserved); }
  uint64_t reservationSize() const { return ReservedSize; }

  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;

private:
  DeviceMemory();

  char *Reserved = nullptr;
  uint64_t ReservedSize = 0;
  uint64_t Total = 0;
  uint64_t Used = 0; ///< committed bytes (rounded to pages)
  uint64_t NextBufferId = 1;
  std::map<uint64_t, uint64_t> FreeRanges; ///< offset -> size of unused parts of the reservation
  std::map<uint64_t, Allocation> Live;     ///< base -> range, allocations and external ranges
  std::map<uint64_t, uint64_t> Footprint;  ///< base -> bytes taken from the reservation (with the guard gap)
  /// Memcheck mode: base -> one byte per byte of a cuMemAlloc'd allocation, nonzero once written.
  std::map<uint64_t, std::shared_ptr<uint8_t[]>> Initialized;
  mutable std::mutex Lock;
};

} // namespace ptxforge::driver
