// The compute cache through the embedding API: configuration (checked), statistics, clearing, and compiles
// that store into it and hit it.
#include "TestKernels.h"

#include "ptxforge/ptxforge.h"
#include "ptxforge/ptxforge.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

using namespace ptxforge;

namespace {

/// A fresh directory under the system's temporary directory.
std::string freshDirectory() {
  std::string Pattern = (std::filesystem::temp_directory_path() / "ptxforge-api-cache-XXXXXX").string();
  REQUIRE(mkdtemp(Pattern.data()) != nullptr);
  return Pattern;
}

} // namespace

TEST_CASE("the compute cache is configured, cleared and counted") {
  ComputeCache Cache = ComputeCache::global();
  CacheConfig Saved = Cache.config();
  std::string Dir = freshDirectory();

  CHECK(Cache.configure({"", 1 << 20, true}).error().code() == ErrorCode::InvalidArgument);
  CHECK(Cache.configure({Dir, 5ull << 30, true}).error().code() == ErrorCode::InvalidArgument);
  REQUIRE(Cache.configure({Dir, 1 << 20, true}).ok());
  CHECK(Cache.config().Directory == Dir);
  CHECK(Cache.config().MaxBytes == 1 << 20);
  CHECK(Cache.config().Enabled);
  CacheStats S = Cache.stats();
  CHECK(S.Entries == 0);
  CHECK(S.Hits == 0);
  CHECK(S.Stores == 0);
  CHECK(Cache.clear().ok());

  REQUIRE(Cache.configure({"", 0, false}).ok());
  CHECK_FALSE(Cache.config().Enabled);

  ptxforge_cache_config C = {Dir.c_str(), 1 << 20, 1};
  REQUIRE(ptxforge_cache_configure(&C) == PTXFORGE_SUCCESS);
  ptxforge_cache_stats CS;
  REQUIRE(ptxforge_cache_get_stats(&CS) == PTXFORGE_SUCCESS);
  CHECK(CS.entries == 0);
  CHECK(ptxforge_cache_clear() == PTXFORGE_SUCCESS);
  CHECK(ptxforge_cache_configure(nullptr) == PTXFORGE_ERROR_INVALID_ARGUMENT);

  REQUIRE(Cache.configure(Saved).ok());
  std::filesystem::remove_all(Dir);
}

TEST_CASE("compiles store into the compute cache and hit it") {
  ComputeCache Cache = ComputeCache::global();
  CacheConfig Saved = Cache.config();
  std::string Dir = freshDirectory();
  REQUIRE(Cache.configure({Dir, 64 << 20, true}).ok());
  auto P = Program::fromText(testing::ApiKernelsPtx, "kernels.ptx");
  auto D = Device::create();
  REQUIRE(P.ok());
  REQUIRE(D.ok());
  for (int Round = 0; Round < 2; ++Round) {
    auto X = D->compile(*P);
    REQUIRE(X.ok());
    auto B = D->allocate(4);
    REQUIRE(B.ok());
    REQUIRE(X->kernel("store")->run({{1}, {1}}, Arguments::of(*B, 11u)).ok());
    CHECK((*B->read<uint32_t>(1))[0] == 11);
  }
  CacheStats S = Cache.stats();
  CHECK(S.Misses == 1);
  CHECK(S.Stores == 1);
  CHECK(S.Hits == 1);
  CHECK(S.Entries == 1);
  CHECK(S.Bytes > 0);
  REQUIRE(Cache.clear().ok());
  CHECK(Cache.stats().Entries == 0);

  // Disabled: nothing is looked up or stored.
  REQUIRE(Cache.configure({Dir, 64 << 20, false}).ok());
  REQUIRE(D->compile(*P).ok());
  CHECK(Cache.stats().Stores == 0);
  CHECK(Cache.stats().Entries == 0);
  REQUIRE(Cache.configure(Saved).ok());
  std::filesystem::remove_all(Dir);
}
