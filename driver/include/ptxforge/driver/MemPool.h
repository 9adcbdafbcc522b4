// Memory pools (cuMemPool*, cuMemAllocFromPoolAsync, cuDeviceGet/SetMemPool): where stream-ordered allocations
// come from. Device memory is the host's, so a pool holds no memory of its own: an allocation from it is a
// device allocation that remembers its pool, and freed memory goes back at once. A pool therefore never
// reserves more than its allocations use (reserved = used, whatever the release threshold), which every
// program must already tolerate: NVIDIA's driver may release at any synchronization. The reuse policies are
// kept for the attribute queries and change nothing. Pools are never freed: a destroyed pool's handle stays
// invalid, as destroyed contexts' do.
#pragma once

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <mutex>

namespace ptxforge::driver {

class MemPool {
public:
  /// What cuMemPoolSetAttribute may change.
  struct Policy {
    bool FollowEventDependencies = true, AllowOpportunistic = true, AllowInternalDependencies = true;
    uint64_t ReleaseThreshold = 0;
  };
  struct Usage {
    uint64_t Current = 0, High = 0;
  };

  /// A new pool of device memory on Device.
  static MemPool *create(int Device);
  /// The device's default pool (made on first use).
  static MemPool &defaultPool(int Device);
  /// The pool cuMemAllocAsync on Device uses: the default one unless cuDeviceSetMemPool chose another.
  static MemPool &current(int Device);
  static void setCurrent(int Device, MemPool &P);
  /// The live pool whose handle is H, or null.
  static MemPool *lookup(const void *H);
  /// Destroys P: InvalidValue for a default pool. A pool that was current goes back to the default one;
  /// its allocations stay valid until freed.
  [[nodiscard]] static llvm::Error destroy(MemPool &P);

  int device() const { return Device; }
  bool isDefault() const { return Default; }
  Policy policy() const;
  void setPolicy(const Policy &P);
  Usage used() const;
  /// Sets the high-water mark to the current use (cuMemPoolSetAttribute's reset of *_MEM_HIGH).
  void resetHigh();
  /// CUmemAccess_flags of Dev on this pool's memory: read-write for its own device and for peers granted it.
  unsigned access(int Dev) const;
  void setAccess(int Dev, unsigned Flags);

  /// Bookkeeping of DeviceMemory: Bytes of an allocation from this pool were committed or freed.
  void allocated(uint64_t Bytes);
  void released(uint64_t Bytes);

private:
  MemPool(int Device, bool Default) : Device(Device), Default(Default) {}
  int Device;
  bool Default;
  mutable std::mutex Lock;
  Policy P;
  Usage U;
  std::map<int, unsigned> Access; ///< peers granted access
};

} // namespace ptxforge::driver
