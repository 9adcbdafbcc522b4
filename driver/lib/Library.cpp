// Libraries: context-independent modules, loaded on first use (see Library.h).
#include "ptxforge/driver/Library.h"

#include "ptxforge/driver/Context.h"

#include "ptxforge/driver/Settings.h"
#include "ptxforge/fatbin/Format.h"

#include <cstdio>

#include <cstring>

using namespace ptxforge::driver;

ModuleSource Library::imageSource(const void *Image) {
  ModuleSource Source;
  Source.Image = Image;
  uint32_t Magic;
  std::memcpy(&Magic, Image, sizeof Magic);
  if (Magic == fatbin::WrapperMagic) {
    const void *Data;
    std::memcpy(&Data, static_cast<const char *>(Image) + 8, sizeof Data);
    Source.Image = Data;
  }
  return Source;
}

llvm::Expected<Module *> Library::module(JitLogs &Logs) {
  std::scoped_lock L(Lock);
  Driver &D = Driver::get();
  if (Loaded && D.Modules.contains(Loaded))
    return Loaded;
  Context &Primary = D.primaryContext(0);
  auto M = Module::load(Primary, Source, Options, Logs);
  if (!M)
    return M.takeError();
  Loaded = Primary.adoptModule(std::move(*M));
  if (processSettings().Verbose)
    std::fprintf(stderr, "ptxforge: JIT: a library's module (%zu kernels) parsed and verified in %.0f ms\n",
                 Loaded->functionCount(), double(Logs.WallMilliseconds));
  return Loaded;
}

void Library::unload() {
  std::scoped_lock L(Lock);
  if (Loaded && Driver::get().Modules.contains(Loaded))
    Loaded->context().unloadModule(Loaded);
  Loaded = nullptr;
}

Registry<Library> &Library::registry() {
  static Registry<Library> R;
  return R;
}
