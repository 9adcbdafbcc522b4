// The compute cache store on its own: hits and misses, what the key depends on, LRU eviction under the size
// cap, corrupt entries, directories that cannot be written, and the environment variables.
#include "ComputeCacheTestSupport.h"

#include "ptxforge/driver/ComputeCache.h"

#include <doctest/doctest.h>

#include <csignal>
#include <fstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ptxforge;
using namespace ptxforge::driver;
using namespace ptxforge::testing;

namespace {

ComputeCacheConfig configIn(const std::string &Dir, uint64_t MaxBytes = ComputeCacheConfig::DefaultMaxBytes) {
  ComputeCacheConfig C;
  C.Directory = Dir;
  C.MaxBytes = MaxBytes;
  return C;
}

CacheKey keyOf(const std::string &Ptx, unsigned CC = 90, std::string Options = "O2") {
  return computeCacheKey({Ptx, CC, std::move(Options)});
}

/// Sets an entry's modification time (seconds since the epoch), the cache's recency order.
void setMTime(const std::string &Path, time_t Seconds) {
  struct timespec Times[2] = {{Seconds, 0}, {Seconds, 0}};
  REQUIRE(::utimensat(AT_FDCWD, Path.c_str(), Times, 0) == 0);
}

} // namespace

TEST_CASE("a stored payload is a hit; an unknown key is a miss") {
  TempDir Dir;
  ComputeCache Cache(configIn(Dir.path()));
  CacheKey K = keyOf("ptx text");
  CHECK_FALSE(Cache.lookup(K).has_value());
  Cache.store(K, "compiled bytes");
  auto Hit = Cache.lookup(K);
  REQUIRE(Hit.has_value());
  CHECK(*Hit == "compiled bytes");
  ComputeCacheStats S = Cache.stats();
  CHECK(S.Hits == 1);
  CHECK(S.Misses == 1);
  CHECK(S.Stores == 1);
  CHECK(S.Entries == 1);
  CHECK(S.Bytes == ComputeCache::entrySize(14));
  CHECK(fileExists(Cache.entryPath(K)));

  // A second cache object on the same directory (another process, in effect) sees the entry.
  ComputeCache Other(configIn(Dir.path()));
  CHECK(Other.lookup(K).value_or("") == "compiled bytes");
}

TEST_CASE("the key changes with one byte of PTX, a code option, the compute capability") {
  std::string Ptx = ".version 8.0\n.target sm_80\n.address_size 64\n";
  CacheKey Base = keyOf(Ptx);
  CHECK(keyOf(Ptx) == Base);
  std::string OneByte = Ptx;
  OneByte[10] = '1';
  CHECK(keyOf(OneByte) != Base);
  CHECK(keyOf(Ptx + " ") != Base);
  CHECK(keyOf(Ptx, 80) != Base);
  CHECK(keyOf(Ptx, 90, "O3") != Base);
  // Fields are length-prefixed: moving bytes between options and PTX is another key.
  CHECK(keyOf("2" + Ptx, 90, "O") != Base);
  CHECK(Base.hex().size() == 32);
  CHECK(cacheHostIdentity().find("cpu=") != std::string::npos);
  CHECK(cacheHostIdentity().find("llvm=") != std::string::npos);
}

TEST_CASE("beyond CUDA_CACHE_MAXSIZE the least recently used entries are evicted") {
  TempDir Dir;
  std::string Payload(1000, 'x');
  uint64_t One = ComputeCache::entrySize(Payload.size());
  ComputeCache Cache(configIn(Dir.path(), 3 * One));
  CacheKey A = keyOf("a"), B = keyOf("b"), C = keyOf("c"), D = keyOf("d");
  Cache.store(A, Payload);
  Cache.store(B, Payload);
  Cache.store(C, Payload);
  setMTime(Cache.entryPath(A), 1000);
  setMTime(Cache.entryPath(B), 2000);
  setMTime(Cache.entryPath(C), 3000);
  // A hit makes A the most recently used, so B is the oldest when D arrives.
  REQUIRE(Cache.lookup(A).has_value());
  Cache.store(D, Payload);
  CHECK(Cache.stats().Entries == 3);
  CHECK(Cache.stats().Evictions == 1);
  CHECK_FALSE(fileExists(Cache.entryPath(B)));
  CHECK(Cache.lookup(A).has_value());
  CHECK(Cache.lookup(C).has_value());
  CHECK(Cache.lookup(D).has_value());
  CHECK(Cache.stats().Bytes <= 3 * One);

  // An entry larger than the whole cache is not cached (and evicts nothing).
  Cache.store(keyOf("huge"), std::string(4 * One, 'y'));
  CHECK_FALSE(Cache.lookup(keyOf("huge")).has_value());
  CHECK(Cache.stats().Entries == 3);
}

TEST_CASE("truncated and bit-flipped entries are removed, never returned") {
  TempDir Dir;
  ComputeCache Cache(configIn(Dir.path()));
  std::string Payload(4096, 'p');
  for (size_t I = 0; I < Payload.size(); ++I)
    Payload[I] = static_cast<char>(I * 7);
  CacheKey K = keyOf("k");
  auto Damage = [&](auto Edit) {
    Cache.store(K, Payload);
    std::string Bytes = readFile(Cache.entryPath(K));
    Edit(Bytes);
    writeFile(Cache.entryPath(K), Bytes);
    CHECK_FALSE(Cache.lookup(K).has_value());
    CHECK_FALSE(fileExists(Cache.entryPath(K)));
  };
  Damage([](std::string &B) { B.resize(B.size() / 2); });    // truncated payload
  Damage([](std::string &B) { B.resize(20); });              // truncated header
  Damage([](std::string &B) { B[B.size() - 100] ^= 0x10; }); // one bit of the payload
  Damage([](std::string &B) { B[3] ^= 0x01; });              // the magic
  Damage([](std::string &B) { B[9] ^= 0x01; });              // the key inside
  Damage([](std::string &B) { B.clear(); });                 // empty file
  CHECK(Cache.stats().Corrupt == 6);
  // A fresh store after the damage is a hit again.
  Cache.store(K, Payload);
  CHECK(Cache.lookup(K).value_or("") == Payload);
}

TEST_CASE("a directory that cannot be written degrades to no caching with one warning") {
  TempDir Dir;
  std::string Blocker = Dir.path() + "/file";
  writeFile(Blocker, "not a directory");
  ComputeCache Cache(configIn(Blocker + "/cache"));
  std::string Err = captureStderr([&] {
    Cache.store(keyOf("a"), "one");
    Cache.store(keyOf("b"), "two");
    CHECK_FALSE(Cache.lookup(keyOf("a")).has_value());
  });
  CHECK(countOf(Err, "warning: compute cache") == 1);
  CHECK(Err.find(Blocker) != std::string::npos);

  // Permissions only bind ordinary users (root writes anyway): a read-only directory still serves hits.
  if (::geteuid() != 0) {
    ComputeCache Writer(configIn(Dir.path() + "/ro"));
    Writer.store(keyOf("a"), "one");
    REQUIRE(::chmod((Dir.path() + "/ro").c_str(), 0555) == 0);
    ComputeCache Reader(configIn(Dir.path() + "/ro"));
    std::string RoErr = captureStderr([&] {
      CHECK(Reader.lookup(keyOf("a")).value_or("") == "one");
      Reader.store(keyOf("b"), "two");
      Reader.store(keyOf("c"), "three");
    });
    CHECK(countOf(RoErr, "warning: compute cache") == 1);
    ::chmod((Dir.path() + "/ro").c_str(), 0755);
  }
}

TEST_CASE("a full disk (writes failing part way) leaves no entry behind, with one warning") {
  TempDir Dir;
  ComputeCache Cache(configIn(Dir.path()));
  // RLIMIT_FSIZE makes write(2) fail with EFBIG past 4 KiB, as a full disk fails with ENOSPC.
  struct rlimit Old;
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &Old) == 0);
  auto OldHandler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit Small = {4096, Old.rlim_max};
  std::string Err;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &Small) == 0);
  Err = captureStderr([&] { Cache.store(keyOf("big"), std::string(64 * 1024, 'z')); });
  ::setrlimit(RLIMIT_FSIZE, &Old);
  std::signal(SIGXFSZ, OldHandler);
  CHECK(countOf(Err, "warning: compute cache") == 1);
  CHECK_FALSE(Cache.lookup(keyOf("big")).has_value());
  ComputeCacheStats S = Cache.stats();
  CHECK(S.Entries == 0);
  CHECK(listNames(Dir.path()).empty()); // the temporary file is gone too
}

TEST_CASE("a FIFO or a directory under an entry's name is a miss, and only that entry goes unstored") {
  TempDir Dir;
  ComputeCache Cache(configIn(Dir.path()));
  CacheKey Fifo = keyOf("fifo"), Directory = keyOf("directory");
  REQUIRE(::mkfifo(Cache.entryPath(Fifo).c_str(), 0600) == 0);
  REQUIRE(::mkdir(Cache.entryPath(Directory).c_str(), 0700) == 0);
  std::string Err = captureStderr([&] {
    CHECK_FALSE(Cache.lookup(Fifo).has_value()); // at once: opening it for reading used to wait for a writer
    CHECK_FALSE(Cache.lookup(Directory).has_value());
    Cache.store(Directory, "cannot go there");
    Cache.store(Fifo, "replaces the FIFO");
    Cache.store(keyOf("other"), "still stored");
  });
  CHECK(Err.empty());
  CHECK(Cache.lookup(keyOf("other")).value_or("") == "still stored");
  CHECK(Cache.lookup(Fifo).value_or("") == "replaces the FIFO");
  CHECK_FALSE(Cache.lookup(Directory).has_value());
  CHECK(Cache.stats().Stores == 2);
}

TEST_CASE("clear removes every entry") {
  TempDir Dir;
  ComputeCache Cache(configIn(Dir.path()));
  Cache.store(keyOf("a"), "1");
  Cache.store(keyOf("b"), "2");
  CHECK(Cache.stats().Entries == 2);
  CHECK_FALSE(static_cast<bool>(Cache.clear()));
  CHECK(Cache.stats().Entries == 0);
  CHECK_FALSE(Cache.lookup(keyOf("a")).has_value());
  ComputeCache Missing(configIn(Dir.path() + "/never-made"));
  CHECK_FALSE(static_cast<bool>(Missing.clear()));
}

TEST_CASE("CUDA_CACHE_PATH, CUDA_CACHE_DISABLE, CUDA_CACHE_MAXSIZE and XDG_CACHE_HOME configure the cache") {
  EnvScope Env({"CUDA_CACHE_PATH", "CUDA_CACHE_DISABLE", "CUDA_CACHE_MAXSIZE", "XDG_CACHE_HOME", "HOME"});
  ::setenv("HOME", "/home/someone", 1);
  ComputeCacheConfig C = ComputeCacheConfig::fromEnvironment();
  CHECK(C.Directory == "/home/someone/.cache/ptxforge/ComputeCache");
  CHECK(C.Enabled);
  CHECK(C.MaxBytes == ComputeCacheConfig::DefaultMaxBytes);
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  CHECK(ComputeCacheConfig::fromEnvironment().Directory == "/xdg/ptxforge/ComputeCache");
  ::setenv("XDG_CACHE_HOME", "relative", 1); // ignored, as the XDG spec says
  CHECK(ComputeCacheConfig::fromEnvironment().Directory == "/home/someone/.cache/ptxforge/ComputeCache");
  ::setenv("CUDA_CACHE_PATH", "/tmp/cc", 1);
  CHECK(ComputeCacheConfig::fromEnvironment().Directory == "/tmp/cc");
  ::setenv("CUDA_CACHE_MAXSIZE", "12345", 1);
  CHECK(ComputeCacheConfig::fromEnvironment().MaxBytes == 12345);
  ::setenv("CUDA_CACHE_MAXSIZE", "4294967296", 1);
  CHECK(ComputeCacheConfig::fromEnvironment().MaxBytes == ComputeCacheConfig::LimitMaxBytes);
  // A value that is not a byte count up to the limit is reported (once) and the default stays.
  std::string Err = captureStderr([] {
    for (const char *Bad : {"-5", "abc", "1e6", "100000000000000000000000", "4294967297"}) {
      ::setenv("CUDA_CACHE_MAXSIZE", Bad, 1);
      CHECK(ComputeCacheConfig::fromEnvironment().MaxBytes == ComputeCacheConfig::DefaultMaxBytes);
    }
  });
  CHECK(countOf(Err, "warning: ignoring CUDA_CACHE_MAXSIZE='-5'") == 1);
  CHECK(countOf(Err, "warning") == 1);
  ::unsetenv("CUDA_CACHE_MAXSIZE");
  ::setenv("CUDA_CACHE_DISABLE", "0", 1);
  CHECK(ComputeCacheConfig::fromEnvironment().Enabled);
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  CHECK_FALSE(ComputeCacheConfig::fromEnvironment().Enabled);

  TempDir Dir;
  ComputeCacheConfig Off = configIn(Dir.path());
  Off.Enabled = false;
  ComputeCache Cache(Off);
  Cache.store(keyOf("a"), "1");
  CHECK_FALSE(Cache.lookup(keyOf("a")).has_value());
  CHECK(listNames(Dir.path()).empty());
}
