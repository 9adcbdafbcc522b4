// The compute cache as an object the application configures: where compiled host code is kept across runs
// (so compiling the same PTX again skips LLVM), how big it may grow, or off. One cache per process, shared
// with every Device (and, through the directory, with other processes and libcuda.so.1); it starts from
// CUDA_CACHE_PATH / CUDA_CACHE_DISABLE / CUDA_CACHE_MAXSIZE like NVIDIA's JIT cache.
#pragma once

#include "ptxforge/api/Expected.h"
#include "ptxforge/api/Export.h"

#include <cstdint>
#include <string>

namespace ptxforge {

struct CacheConfig {
  std::string Directory;          ///< entries live directly in it; created on the first store
  uint64_t MaxBytes = 1ull << 30; ///< least recently used entries are evicted beyond it (at most 4 GiB)
  bool Enabled = true;
};

struct CacheStats {
  uint64_t Entries = 0, Bytes = 0;           ///< in the directory now
  uint64_t Hits = 0, Misses = 0, Stores = 0; ///< since the cache was (re)configured
  uint64_t Evictions = 0, Corrupt = 0;       ///< corrupt entries are removed, never used
};

/// A handle to the process's compute cache. Every method is thread-safe; a cache that cannot write its
/// directory keeps working without storing (one warning on stderr).
class PTXFORGE_API ComputeCache {
public:
  /// The process's cache.
  static ComputeCache global() { return ComputeCache(); }
  /// What CUDA_CACHE_PATH, CUDA_CACHE_DISABLE and CUDA_CACHE_MAXSIZE say (the configuration at start).
  static CacheConfig fromEnvironment();

  CacheConfig config() const;
  /// Applies Config to later compilations (InvalidArgument for an empty directory while enabled, or a cap
  /// above 4 GiB); the counters restart.
  Expected<void> configure(const CacheConfig &Config);
  CacheStats stats() const;
  /// Removes every entry.
  Expected<void> clear();

private:
  ComputeCache() = default;
};

} // namespace ptxforge
