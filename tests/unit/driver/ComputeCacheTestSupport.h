// Helpers of the compute cache tests: a temporary directory, whole-file reads and writes, stderr capture and
// environment variables restored at scope exit.
#pragma once

#include "TestContext.h"
#include "ptxforge/driver/ComputeCache.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Module.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

namespace ptxforge::testing {

/// A fresh directory under the system's temporary directory, removed with its contents at scope exit.
class TempDir {
public:
  TempDir() {
    llvm::SmallString<128> P;
    REQUIRE(!llvm::sys::fs::createUniqueDirectory("ptxforge-cache-test", P));
    Path = std::string(P);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(Path); }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return Path; }

private:
  std::string Path;
};

inline bool fileExists(const std::string &Path) { return ::access(Path.c_str(), F_OK) == 0; }

inline std::string readFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  std::stringstream S;
  S << In.rdbuf();
  return S.str();
}

inline void writeFile(const std::string &Path, const std::string &Bytes) {
  std::ofstream Out(Path, std::ios::binary | std::ios::trunc);
  Out << Bytes;
}

/// Every name in Dir but . and .., sorted.
inline std::vector<std::string> listNames(const std::string &Dir) {
  std::vector<std::string> Names;
  if (DIR *D = ::opendir(Dir.c_str())) {
    while (struct dirent *E = ::readdir(D))
      if (std::string(E->d_name) != "." && std::string(E->d_name) != "..")
        Names.push_back(E->d_name);
    ::closedir(D);
  }
  std::sort(Names.begin(), Names.end());
  return Names;
}

inline size_t countOf(const std::string &Text, const std::string &Needle) {
  size_t N = 0;
  for (size_t At = Text.find(Needle); At != std::string::npos; At = Text.find(Needle, At + 1))
    ++N;
  return N;
}

/// What Body writes to file descriptor 2.
inline std::string captureStderr(const std::function<void()> &Body) {
  std::fflush(stderr);
  FILE *Tmp = std::tmpfile();
  REQUIRE(Tmp);
  int Saved = ::dup(2);
  ::dup2(::fileno(Tmp), 2);
  Body();
  std::fflush(stderr);
  ::dup2(Saved, 2);
  ::close(Saved);
  std::rewind(Tmp);
  std::string Out;
  char Buffer[4096];
  while (size_t N = std::fread(Buffer, 1, sizeof Buffer, Tmp))
    Out.append(Buffer, N);
  std::fclose(Tmp);
  return Out;
}

/// Restores the named environment variables (and unsets them for the scope).
class EnvScope {
public:
  EnvScope(std::initializer_list<const char *> Names) {
    for (const char *N : Names) {
      const char *V = std::getenv(N);
      Saved.push_back({N, V ? std::optional<std::string>(V) : std::nullopt});
      ::unsetenv(N);
    }
  }
  ~EnvScope() {
    for (const auto &[Name, Value] : Saved)
      Value ? ::setenv(Name.c_str(), Value->c_str(), 1) : ::unsetenv(Name.c_str());
  }
  EnvScope(const EnvScope &) = delete;
  EnvScope &operator=(const EnvScope &) = delete;

private:
  std::vector<std::pair<std::string, std::optional<std::string>>> Saved;
};

/// Points the process's compute cache at a fresh directory for the scope, then restores its configuration.
class GlobalCacheScope {
public:
  explicit GlobalCacheScope(uint64_t MaxBytes = driver::ComputeCacheConfig::DefaultMaxBytes)
      : Saved(driver::ComputeCache::global().config()) {
    driver::ComputeCacheConfig C;
    C.Directory = Dir.path();
    C.MaxBytes = MaxBytes;
    driver::ComputeCache::global().reconfigure(C);
  }
  ~GlobalCacheScope() { driver::ComputeCache::global().reconfigure(Saved); }
  GlobalCacheScope(const GlobalCacheScope &) = delete;
  GlobalCacheScope &operator=(const GlobalCacheScope &) = delete;
  const std::string &path() const { return Dir.path(); }
  driver::ComputeCache &cache() const { return driver::ComputeCache::global(); }

private:
  TempDir Dir;
  driver::ComputeCacheConfig Saved;
};

/// A context of device 0, made once per process.
inline driver::Context &cacheTestContext() { return ptxforge::testing::testContext(); }

/// Loads PTX text as cuModuleLoadData does with lazy loading (whatever CUDA_MODULE_LOADING says).
inline std::unique_ptr<driver::Module> loadLazily(const std::string &Ptx) {
  EnvScope Env({"CUDA_MODULE_LOADING"});
  ::unsetenv("CUDA_MODULE_LOADING");
  driver::JitLogs Logs;
  driver::ModuleSource Source;
  Source.Image = Ptx.c_str();
  auto M = driver::Module::load(cacheTestContext(), Source, driver::JitOptions(), Logs);
  REQUIRE_MESSAGE(static_cast<bool>(M), Logs.Error);
  return std::move(*M);
}

} // namespace ptxforge::testing
