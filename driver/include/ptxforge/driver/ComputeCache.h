// The on-disk compute cache: host code compiled from PTX, kept across processes like NVIDIA's JIT cache
// (~/.nv/ComputeCache) so a module loaded again skips the LLVM pipeline. One file per entry, named by a
// 128-bit content hash of everything that changes the code; configured by CUDA_CACHE_PATH,
// CUDA_CACHE_DISABLE and CUDA_CACHE_MAXSIZE, or by an application through ComputeCacheConfig.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace ptxforge::driver {

/// A 128-bit XXH3 hash naming one cache entry.
struct CacheKey {
  uint64_t Low = 0, High = 0;
  /// 32 lower-case hex digits (the entry's file name stem).
  std::string hex() const;
  bool operator==(const CacheKey &O) const { return Low == O.Low && High == O.High; }
  bool operator!=(const CacheKey &O) const { return !(*this == O); }
};

/// What a compiled module depends on besides the host and the build, which computeCacheKey adds itself.
struct CacheKeyInputs {
  llvm::StringRef Ptx;            ///< the PTX text, byte for byte
  unsigned ComputeCapability = 0; ///< the device (or CU_JIT_TARGET) compiled for, major*10+minor
  /// Every option that changes the code, spelled as text: codegen::CompileOptions::codeKey() (optimization level,
  /// target CPU, streaming-store threshold, which the host's cache size sets, loop cuts, block functions).
  std::string CodeOptions;
};

/// Hashes the inputs with this process's host identity: the host CPU name and features, the ptxforge version
/// and a fingerprint of the compiler sources it was built from, and the LLVM version. Any change in any of
/// them gives another key.
CacheKey computeCacheKey(const CacheKeyInputs &In);

/// The host and build part of every key, as text ("cpu=znver4 features=+avx2,... ptxforge=0.1.0 ...").
const std::string &cacheHostIdentity();

/// Where the cache lives and how big it may grow.
struct ComputeCacheConfig {
  /// NVIDIA's default for desktop and server platforms, and the largest size it accepts.
  static constexpr uint64_t DefaultMaxBytes = uint64_t(1) << 30;
  static constexpr uint64_t LimitMaxBytes = uint64_t(4) << 30;

  std::string Directory;               ///< entries live directly in it; created on the first store
  uint64_t MaxBytes = DefaultMaxBytes; ///< total size of the entries; older ones are evicted beyond it
  bool Enabled = true;

  /// CUDA_CACHE_PATH, else $XDG_CACHE_HOME/ptxforge/ComputeCache, else ~/.cache/ptxforge/ComputeCache;
  /// CUDA_CACHE_DISABLE=1 disables; CUDA_CACHE_MAXSIZE=<bytes> caps (at most LimitMaxBytes; another value is
  /// reported on stderr once and the default kept).
  static ComputeCacheConfig fromEnvironment();
};

/// What the directory holds now, and what this cache object did since it was made or reconfigured.
struct ComputeCacheStats {
  uint64_t Entries = 0, Bytes = 0; ///< on disk (temporary files of writers in flight excluded)
  uint64_t Hits = 0, Misses = 0, Stores = 0, Evictions = 0;
  uint64_t Corrupt = 0; ///< entries that failed their checks and were removed (never handed out)
};

/// The cache store. Thread-safe; any number of processes may share one directory:
/// - writers write a temporary file in the directory and rename it over the entry, so a reader opens either
///   nothing or a complete entry (never a partial one), without any lock;
/// - every entry carries its key and an XXH3-128 checksum of its payload; a truncated or corrupt one is
///   removed and reported as a miss;
/// - eviction (least recently used first; a hit refreshes the entry's modification time) runs under an
///   exclusive flock on `<dir>/lock`, so two evicting processes never race each other; a reader that opened
///   an entry before it was evicted still reads it whole (POSIX unlink semantics);
/// - a directory that cannot be written (read-only, full, missing permissions) turns storing off for this
///   object with one warning on stderr; lookups keep working and nothing fails;
/// - something else under an entry's name (a directory, a FIFO, a device) is a miss, never read or waited on,
///   and only that entry goes unstored.
class ComputeCache {
public:
  explicit ComputeCache(ComputeCacheConfig Config);

  /// The process's cache, configured from the environment on first use.
  static ComputeCache &global();

  ComputeCacheConfig config() const;
  /// Applies a new configuration (the embedding API's knob); counters and the write-failure state restart.
  void reconfigure(ComputeCacheConfig Config);
  bool enabled() const;

  /// The verified payload stored under Key, or nothing (no entry, cache disabled, or a corrupt entry, which
  /// is removed). A hit marks the entry as recently used.
  std::optional<std::string> lookup(const CacheKey &Key);
  /// Stores Payload under Key. Never fails: an entry larger than MaxBytes is not cached, and write errors
  /// disable storing with one warning.
  void store(const CacheKey &Key, llvm::StringRef Payload);

  /// Entry and byte counts of the directory, plus this object's counters.
  ComputeCacheStats stats() const;
  /// Removes every entry (and stale temporary files). Fails with the reason when the directory cannot be
  /// read or an entry cannot be removed.
  [[nodiscard]] llvm::Error clear();
  /// Where Key's entry lives.
  std::string entryPath(const CacheKey &Key) const;

  /// Bytes an entry with a payload of N bytes takes (the cap applies to these).
  static uint64_t entrySize(uint64_t PayloadBytes);

private:
  void warnOnce(const std::string &Why);
  void evictToFit(const ComputeCacheConfig &C);

  mutable std::mutex Lock; ///< guards Config
  ComputeCacheConfig Config;
  std::atomic<bool> WritesFailed{false};
  std::atomic<bool> Warned{false};
  std::atomic<uint64_t> Hits{0}, Misses{0}, Stores{0}, Evictions{0}, Corrupt{0};
};

} // namespace ptxforge::driver
