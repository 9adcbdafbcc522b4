// `ptxforge cache path | stats | clear`: the compute cache the driver uses (configured by CUDA_CACHE_PATH,
// CUDA_CACHE_DISABLE and CUDA_CACHE_MAXSIZE, exactly as libcuda.so.1 reads them).
#include "Commands.h"

#include "ptxforge/driver/ComputeCache.h"

#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

using namespace ptxforge;
using namespace ptxforge::tools;

namespace {

int printPath() {
  driver::ComputeCacheConfig C = driver::ComputeCache::global().config();
  if (C.Directory.empty()) {
    llvm::errs() << "ptxforge: error: no cache directory (set CUDA_CACHE_PATH, XDG_CACHE_HOME or HOME)\n";
    return ExitInputError;
  }
  llvm::outs() << C.Directory << '\n';
  return ExitOk;
}

int printStats(bool Json) {
  driver::ComputeCache &Cache = driver::ComputeCache::global();
  driver::ComputeCacheConfig C = Cache.config();
  driver::ComputeCacheStats S = Cache.stats();
  if (Json) {
    nlohmann::json J = {{"directory", C.Directory}, {"enabled", Cache.enabled()}, {"entries", S.Entries},
                        {"bytes", S.Bytes},         {"max_bytes", C.MaxBytes},    {"key", driver::cacheHostIdentity()}};
    llvm::outs() << J.dump(2) << '\n';
    return ExitOk;
  }
  auto MiB = [](uint64_t B) { return llvm::format("%.1f MiB", double(B) / (1 << 20)); };
  llvm::outs() << "directory: " << (C.Directory.empty() ? "(none)" : C.Directory) << '\n'
               << "enabled:   " << (Cache.enabled() ? "yes" : "no (CUDA_CACHE_DISABLE=1 or no directory)") << '\n'
               << "entries:   " << S.Entries << '\n'
               << "size:      " << S.Bytes << " bytes (" << MiB(S.Bytes) << ") of " << C.MaxBytes << " ("
               << MiB(C.MaxBytes) << ", CUDA_CACHE_MAXSIZE)\n"
               << "keyed by:  " << driver::cacheHostIdentity() << '\n';
  return ExitOk;
}

int clearCache() {
  driver::ComputeCache &Cache = driver::ComputeCache::global();
  driver::ComputeCacheStats Before = Cache.stats();
  if (llvm::Error E = Cache.clear()) {
    llvm::errs() << "ptxforge: error: " << llvm::toString(std::move(E)) << '\n';
    return ExitInputError;
  }
  llvm::outs() << "removed " << Before.Entries << " entries (" << Before.Bytes << " bytes) from "
               << Cache.config().Directory << '\n';
  return ExitOk;
}

} // namespace

void ptxforge::tools::addCacheCommand(CLI::App &App, Runner &Run) {
  auto *Cmd = App.add_subcommand("cache", "Show or clear the compute cache of compiled modules");
  Cmd->require_subcommand(1);
  Cmd->add_subcommand("path", "Print the cache directory")->callback([&Run] { Run = printPath; });
  auto *Stats = Cmd->add_subcommand("stats", "Print the directory, entry count, size and size cap");
  auto Json = std::make_shared<bool>(false);
  Stats->add_flag("--json", *Json, "print one JSON object");
  Stats->callback([&Run, Json] { Run = [Json] { return printStats(*Json); }; });
  Cmd->add_subcommand("clear", "Remove every cached entry")->callback([&Run] { Run = clearCache; });
}
