// ComputeCache: the embedding API's view of the driver core's process-wide compute cache (driver::ComputeCache,
// which driver::Module::compile consults), so applications configure the same cache libcuda.so.1 uses.
#include "ApiImpl.h"

#include "ptxforge/driver/ComputeCache.h"

using namespace ptxforge;

namespace {

CacheConfig fromCore(const driver::ComputeCacheConfig &C) { return {C.Directory, C.MaxBytes, C.Enabled}; }

} // namespace

CacheConfig ComputeCache::fromEnvironment() { return fromCore(driver::ComputeCacheConfig::fromEnvironment()); }

CacheConfig ComputeCache::config() const { return fromCore(driver::ComputeCache::global().config()); }

Expected<void> ComputeCache::configure(const CacheConfig &Config) {
  return guarded([&]() -> Expected<void> {
    if (Config.Enabled && Config.Directory.empty())
      return Error(ErrorCode::InvalidArgument, "an enabled compute cache needs a directory");
    if (Config.MaxBytes > driver::ComputeCacheConfig::LimitMaxBytes)
      return Error(ErrorCode::InvalidArgument, "the compute cache is capped at " +
                                                   std::to_string(driver::ComputeCacheConfig::LimitMaxBytes) +
                                                   " bytes");
    driver::ComputeCacheConfig C;
    C.Directory = Config.Directory;
    C.MaxBytes = Config.MaxBytes;
    C.Enabled = Config.Enabled;
    driver::ComputeCache::global().reconfigure(std::move(C));
    return {};
  });
}

CacheStats ComputeCache::stats() const {
  driver::ComputeCacheStats S = driver::ComputeCache::global().stats();
  return {S.Entries, S.Bytes, S.Hits, S.Misses, S.Stores, S.Evictions, S.Corrupt};
}

Expected<void> ComputeCache::clear() {
  return guarded([&]() -> Expected<void> {
    if (llvm::Error E = driver::ComputeCache::global().clear())
      return Error(ErrorCode::FileError, "clearing the compute cache: " + llvm::toString(std::move(E)));
    return {};
  });
}
