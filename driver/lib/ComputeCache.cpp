// The on-disk compute cache. An entry file is
//   "PTXFCC01" | key (16 bytes) | payload size (8) | XXH3-128 of the payload (16) | payload
// (integers little-endian). The key inside the file guards against a file renamed or copied under another
// name; the size and checksum catch truncation and bit flips. Entries appear only by rename(2) of a
// complete temporary file from the same directory, so readers need no lock; only eviction takes one.
#include "ptxforge/driver/ComputeCache.h"
#include "ptxforge/driver/CompilerFingerprint.h"
#include "ptxforge/support/InputFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/TargetParser/Host.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef PTXFORGE_VERSION
#error "the build defines PTXFORGE_VERSION (driver/CMakeLists.txt)"
#endif

using namespace ptxforge;
using namespace ptxforge::driver;

namespace {

constexpr char Magic[8] = {'P', 'T', 'X', 'F', 'C', 'C', '0', '1'};
constexpr size_t HeaderBytes = sizeof(Magic) + 16 + 8 + 16;
constexpr llvm::StringLiteral EntrySuffix = ".ptxfc";
constexpr llvm::StringLiteral TempPrefix = ".tmp-";
constexpr llvm::StringLiteral LockName = "lock";
/// A temporary file this old belongs to a writer that died; eviction removes it.
constexpr time_t StaleTempSeconds = 3600;

void putU64(std::string &Out, uint64_t V) {
  for (int I = 0; I < 8; ++I)
    Out.push_back(static_cast<char>(V >> (8 * I)));
}

uint64_t getU64(const char *P) {
  uint64_t V = 0;
  for (int I = 0; I < 8; ++I)
    V |= uint64_t(static_cast<unsigned char>(P[I])) << (8 * I);
  return V;
}

XXH128_hash_t hashBytes(llvm::StringRef Bytes) { return XXH3_128bits(Bytes.data(), Bytes.size()); }

std::string errnoText() { return std::strerror(errno); }

bool envFlag(const char *Name) {
  const char *V = std::getenv(Name);
  long long X = 0;
  return V && !llvm::StringRef(V).trim().getAsInteger(10, X) && X != 0;
}

std::string homeDirectory() {
  if (const char *H = std::getenv("HOME"); H && *H)
    return H;
  struct passwd Pw, *Result = nullptr;
  char Buffer[4096];
  if (getpwuid_r(getuid(), &Pw, Buffer, sizeof Buffer, &Result) == 0 && Result && Result->pw_dir)
    return Result->pw_dir;
  return "";
}

/// CUDA_CACHE_MAXSIZE: a byte count up to the limit. Anything else (negative, not a decimal integer, beyond
/// the limit) is reported once per process and the default stays: a typo must not silently change the cap.
std::optional<uint64_t> maxBytesFromEnvironment() {
  const char *M = std::getenv("CUDA_CACHE_MAXSIZE");
  if (!M || !*M)
    return std::nullopt;
  uint64_t Bytes = 0;
  if (!llvm::StringRef(M).trim().getAsInteger(10, Bytes) && Bytes <= ComputeCacheConfig::LimitMaxBytes)
    return Bytes;
  static std::atomic<bool> Warned{false};
  if (!Warned.exchange(true))
    std::fprintf(stderr,
                 "ptxforge: warning: ignoring CUDA_CACHE_MAXSIZE='%s' (not a byte count from 0 to %llu); using the "
                 "default, %llu\n",
                 M, static_cast<unsigned long long>(ComputeCacheConfig::LimitMaxBytes),
                 static_cast<unsigned long long>(ComputeCacheConfig::DefaultMaxBytes));
  return std::nullopt;
}

struct DirEntry {
  std::string Name;
  uint64_t Size = 0;
  struct timespec MTime = {};
  bool Temp = false;
};

bool isEntryName(llvm::StringRef Name) {
  if (!Name.consume_back(EntrySuffix) || Name.size() != 32)
    return false;
  return llvm::all_of(Name, [](char C) { return llvm::isHexDigit(C); });
}

/// The entries (and temporary files) of Dir; false when it cannot be read (a missing one is empty).
bool listDirectory(const std::string &Dir, std::vector<DirEntry> &Out, std::string *Why = nullptr) {
  Out.clear();
  DIR *D = ::opendir(Dir.c_str());
  if (!D) {
    if (errno == ENOENT)
      return true;
    if (Why)
      *Why = "cannot read " + Dir + ": " + errnoText();
    return false;
  }
  while (struct dirent *E = ::readdir(D)) {
    llvm::StringRef Name(E->d_name);
    bool Temp = Name.starts_with(TempPrefix);
    if (!Temp && !isEntryName(Name))
      continue;
    struct stat St;
    if (::fstatat(::dirfd(D), E->d_name, &St, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(St.st_mode))
      continue; // removed meanwhile, or not ours
    Out.push_back({Name.str(), static_cast<uint64_t>(St.st_size), St.st_mtim, Temp});
  }
  ::closedir(D);
  return true;
}

bool olderThan(const struct timespec &A, const struct timespec &B) {
  return A.tv_sec != B.tv_sec ? A.tv_sec < B.tv_sec : A.tv_nsec < B.tv_nsec;
}

/// Holds an exclusive flock on <Dir>/lock while alive (not locked when the file cannot be opened).
class DirectoryLock {
public:
  explicit DirectoryLock(const std::string &Dir) {
    Fd = ::open((Dir + "/" + LockName.str()).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (Fd < 0)
      return;
    while (::flock(Fd, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~DirectoryLock() {
    if (Fd >= 0)
      ::close(Fd); // closing releases the lock
  }
  DirectoryLock(const DirectoryLock &) = delete;
  DirectoryLock &operator=(const DirectoryLock &) = delete;
  bool held() const { return Fd >= 0; }

private:
  int Fd = -1;
};

bool writeAll(int Fd, const struct iovec *Vec, int Count) {
  std::vector<struct iovec> V(Vec, Vec + Count);
  size_t I = 0;
  while (I < V.size()) {
    ssize_t N = ::writev(Fd, V.data() + I, static_cast<int>(V.size() - I));
    if (N < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    size_t Left = static_cast<size_t>(N);
    while (I < V.size() && Left >= V[I].iov_len)
      Left -= V[I++].iov_len;
    if (I < V.size()) {
      V[I].iov_base = static_cast<char *>(V[I].iov_base) + Left;
      V[I].iov_len -= Left;
    }
  }
  return true;
}

/// The payload of a well-formed entry for Key, or nothing.
std::optional<llvm::StringRef> checkEntry(llvm::StringRef File, const CacheKey &Key) {
  if (File.size() < HeaderBytes || std::memcmp(File.data(), Magic, sizeof Magic) != 0)
    return std::nullopt;
  const char *P = File.data() + sizeof Magic;
  if (getU64(P) != Key.Low || getU64(P + 8) != Key.High)
    return std::nullopt;
  uint64_t Size = getU64(P + 16);
  if (Size != File.size() - HeaderBytes)
    return std::nullopt;
  llvm::StringRef Payload = File.drop_front(HeaderBytes);
  XXH128_hash_t Sum = hashBytes(Payload);
  if (getU64(P + 24) != Sum.low64 || getU64(P + 32) != Sum.high64)
    return std::nullopt;
  return Payload;
}

} // namespace

std::string CacheKey::hex() const {
  char Buffer[33];
  std::snprintf(Buffer, sizeof Buffer, "%016llx%016llx", static_cast<unsigned long long>(High),
                static_cast<unsigned long long>(Low));
  return Buffer;
}

const std::string &ptxforge::driver::cacheHostIdentity() {
  static const std::string Identity = [] {
    std::vector<std::string> Features;
    for (const auto &F : llvm::sys::getHostCPUFeatures())
      if (F.getValue())
        Features.push_back("+" + F.getKey().str());
    llvm::sort(Features);
    return "triple=" + llvm::sys::getProcessTriple() + " cpu=" + llvm::sys::getHostCPUName().str() +
           " features=" + llvm::join(Features, ",") +
           " ptxforge=" PTXFORGE_VERSION " compiler=" PTXFORGE_COMPILER_FINGERPRINT " llvm=" LLVM_VERSION_STRING;
  }();
  return Identity;
}

CacheKey ptxforge::driver::computeCacheKey(const CacheKeyInputs &In) {
  XXH3_state_t State;
  XXH3_128bits_reset(&State);
  // Each field is length-prefixed so no two different input sets hash the same byte stream.
  auto Field = [&](llvm::StringRef Value) {
    uint64_t N = Value.size();
    XXH3_128bits_update(&State, &N, sizeof N);
    XXH3_128bits_update(&State, Value.data(), Value.size());
  };
  Field("ptxforge-compute-cache-1");
  Field(cacheHostIdentity());
  Field(std::to_string(In.ComputeCapability));
  Field(In.CodeOptions);
  Field(In.Ptx);
  XXH128_hash_t H = XXH3_128bits_digest(&State);
  return CacheKey{H.low64, H.high64};
}

ComputeCacheConfig ComputeCacheConfig::fromEnvironment() {
  ComputeCacheConfig C;
  if (const char *P = std::getenv("CUDA_CACHE_PATH"); P && *P) {
    C.Directory = P;
  } else {
    std::string Base;
    // The XDG base directory spec ignores relative values.
    if (const char *X = std::getenv("XDG_CACHE_HOME"); X && X[0] == '/')
      Base = X;
    else if (std::string Home = homeDirectory(); !Home.empty())
      Base = Home + "/.cache";
    if (Base.empty())
      C.Enabled = false;
    else
      C.Directory = Base + "/ptxforge/ComputeCache";
  }
  if (envFlag("CUDA_CACHE_DISABLE"))
    C.Enabled = false;
  if (std::optional<uint64_t> Bytes = maxBytesFromEnvironment())
    C.MaxBytes = *Bytes;
  return C;
}

ComputeCache::ComputeCache(ComputeCacheConfig C) : Config(std::move(C)) {}

ComputeCache &ComputeCache::global() {
  static ComputeCache Cache(ComputeCacheConfig::fromEnvironment());
  return Cache;
}

ComputeCacheConfig ComputeCache::config() const {
  std::scoped_lock L(Lock);
  return Config;
}

void ComputeCache::reconfigure(ComputeCacheConfig C) {
  std::scoped_lock L(Lock);
  Config = std::move(C);
  WritesFailed = false;
  Warned = false;
  Hits = Misses = Stores = Evictions = Corrupt = 0;
}

bool ComputeCache::enabled() const {
  std::scoped_lock L(Lock);
  return Config.Enabled && !Config.Directory.empty();
}

uint64_t ComputeCache::entrySize(uint64_t PayloadBytes) { return HeaderBytes + PayloadBytes; }

std::string ComputeCache::entryPath(const CacheKey &Key) const {
  return config().Directory + "/" + Key.hex() + EntrySuffix.str();
}

void ComputeCache::warnOnce(const std::string &Why) {
  WritesFailed = true;
  if (!Warned.exchange(true))
    std::fprintf(stderr, "ptxforge: warning: compute cache: %s; continuing without storing compiled code\n",
                 Why.c_str());
}

std::optional<std::string> ComputeCache::lookup(const CacheKey &Key) {
  ComputeCacheConfig C = config();
  if (!C.Enabled || C.Directory.empty())
    return std::nullopt;
  std::string Path = C.Directory + "/" + Key.hex() + EntrySuffix.str();
  // Non-blocking: a FIFO under an entry's name must not hang the load (it is refused by its type below).
  int Fd = ::open(Path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (Fd < 0) {
    ++Misses;
    return std::nullopt;
  }
  auto File = support::readInputFile(Fd, Path, C.MaxBytes);
  std::optional<llvm::StringRef> Payload;
  if (File)
    Payload = checkEntry(*File, Key);
  else
    llvm::consumeError(File.takeError()); // unreadable, not a regular file or too large: a miss
  struct stat St;
  bool Directory = !Payload && ::fstat(Fd, &St) == 0 && S_ISDIR(St.st_mode);
  if (Payload)
    (void)::futimens(Fd, nullptr); // recently used; a read-only cache simply keeps its order
  ::close(Fd);
  if (!Payload) {
    // Another process may have renamed a good entry over this one meanwhile; removing that costs one
    // recompilation, never a wrong load. A directory is not ours to remove: it stays a miss.
    if (!Directory)
      ::unlink(Path.c_str());
    ++Corrupt;
    ++Misses;
    return std::nullopt;
  }
  ++Hits;
  return Payload->str();
}

void ComputeCache::store(const CacheKey &Key, llvm::StringRef Payload) {
  ComputeCacheConfig C = config();
  if (!C.Enabled || C.Directory.empty() || WritesFailed)
    return;
  if (entrySize(Payload.size()) > C.MaxBytes)
    return; // larger than the whole cache: not cached, as NVIDIA's
  if (std::error_code EC = llvm::sys::fs::create_directories(C.Directory)) {
    warnOnce("cannot create " + C.Directory + ": " + EC.message());
    return;
  }
  std::string Header(Magic, sizeof Magic);
  putU64(Header, Key.Low);
  putU64(Header, Key.High);
  putU64(Header, Payload.size());
  XXH128_hash_t Sum = hashBytes(Payload);
  putU64(Header, Sum.low64);
  putU64(Header, Sum.high64);

  static std::atomic<unsigned> Counter{0};
  std::string Final = C.Directory + "/" + Key.hex() + EntrySuffix.str();
  std::string Temp = C.Directory + "/" + TempPrefix.str() + Key.hex() + "-" + std::to_string(::getpid()) + "-" +
                     std::to_string(Counter++);
  int Fd = ::open(Temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (Fd < 0) {
    warnOnce("cannot write in " + C.Directory + ": " + errnoText());
    return;
  }
  struct iovec Vec[2] = {{Header.data(), Header.size()}, {const_cast<char *>(Payload.data()), Payload.size()}};
  bool Ok = writeAll(Fd, Vec, 2);
  std::string Why = Ok ? "" : errnoText();
  if (::close(Fd) != 0 && Ok) {
    Ok = false;
    Why = errnoText();
  }
  if (!Ok) {
    ::unlink(Temp.c_str());
    warnOnce("cannot write " + Temp + ": " + Why);
    return;
  }
  if (::rename(Temp.c_str(), Final.c_str()) != 0) {
    // The directory took the temporary file, so the failure is this entry's own (a directory under its
    // name: EISDIR, ENOTEMPTY; or a concurrent `cache clear` took the temporary file: ENOENT). Only this
    // entry goes unstored; the others still are.
    ::unlink(Temp.c_str());
    return;
  }
  ++Stores;
  evictToFit(C);
}

void ComputeCache::evictToFit(const ComputeCacheConfig &C) {
  std::vector<DirEntry> Entries;
  auto Total = [&] {
    uint64_t Bytes = 0;
    for (const DirEntry &E : Entries)
      if (!E.Temp)
        Bytes += E.Size;
    return Bytes;
  };
  if (!listDirectory(C.Directory, Entries) || Total() <= C.MaxBytes)
    return;
  DirectoryLock L(C.Directory);
  if (!L.held())
    return;
  // Another process may have evicted while we waited: decide on a fresh listing.
  if (!listDirectory(C.Directory, Entries))
    return;
  uint64_t Bytes = Total();
  std::sort(Entries.begin(), Entries.end(),
            [](const DirEntry &A, const DirEntry &B) { return olderThan(A.MTime, B.MTime); });
  time_t Now = ::time(nullptr);
  for (const DirEntry &E : Entries) {
    std::string Path = C.Directory + "/" + E.Name;
    if (E.Temp) {
      if (Now - E.MTime.tv_sec > StaleTempSeconds)
        ::unlink(Path.c_str());
      continue;
    }
    if (Bytes <= C.MaxBytes)
      continue;
    if (::unlink(Path.c_str()) == 0)
      ++Evictions;
    Bytes -= E.Size;
  }
}

ComputeCacheStats ComputeCache::stats() const {
  ComputeCacheStats S;
  ComputeCacheConfig C = config();
  std::vector<DirEntry> Entries;
  if (!C.Directory.empty() && listDirectory(C.Directory, Entries))
    for (const DirEntry &E : Entries)
      if (!E.Temp) {
        ++S.Entries;
        S.Bytes += E.Size;
      }
  S.Hits = Hits, S.Misses = Misses, S.Stores = Stores, S.Evictions = Evictions, S.Corrupt = Corrupt;
  return S;
}

llvm::Error ComputeCache::clear() {
  ComputeCacheConfig C = config();
  if (C.Directory.empty())
    return llvm::Error::success();
  std::vector<DirEntry> Entries;
  std::string Why;
  if (!listDirectory(C.Directory, Entries, &Why))
    return llvm::createStringError(std::errc::io_error, "%s", Why.c_str());
  if (Entries.empty())
    return llvm::Error::success();
  DirectoryLock L(C.Directory);
  if (!listDirectory(C.Directory, Entries, &Why))
    return llvm::createStringError(std::errc::io_error, "%s", Why.c_str());
  for (const DirEntry &E : Entries) {
    std::string Path = C.Directory + "/" + E.Name;
    if (::unlink(Path.c_str()) != 0 && errno != ENOENT)
      return llvm::createStringError(std::errc::io_error, "cannot remove %s: %s", Path.c_str(), errnoText().c_str());
  }
  return llvm::Error::success();
}
