// libFuzzer target for the driver's module loader: arbitrary bytes as the image cuModuleLoadData gets (PTX
// text, a fatbinary container, nvcc's wrapper struct, an ELF image), loaded in-process through the driver core
// as the loading mode of the environment says (CUDA_MODULE_LOADING=EAGER compiles every kernel too).
// cuModuleLoadData is given no size, so the image ends at an inaccessible page: a header that claims more bytes
// than there are must fault into the loader's guard (an invalid image) rather than read on.
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Module.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

using namespace ptxforge::driver;

namespace {

Context &fuzzContext() {
  static Context *C = [] {
    if (llvm::Error E = Driver::get().initialize()) {
      llvm::errs() << "driver_module_fuzzer: " << llvm::toString(std::move(E)) << "\n";
      std::abort();
    }
    auto Ctx = Driver::get().createContext(0, 0);
    if (!Ctx) {
      llvm::errs() << "driver_module_fuzzer: " << llvm::toString(Ctx.takeError()) << "\n";
      std::abort();
    }
    return *Ctx;
  }();
  return *C;
}

/// Size bytes (plus a NUL, as PTX text passed to cuModuleLoadData has) 8-byte aligned right before a
/// PROT_NONE page, for as long as the object lives.
struct GuardedImage {
  char *Map = nullptr;
  size_t MapBytes = 0;
  const void *Image = nullptr;

  GuardedImage(const uint8_t *Data, size_t Size) {
    size_t Page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    size_t Need = (Size + 1 + 7) & ~size_t(7);
    size_t DataPages = (Need + Page - 1) / Page;
    MapBytes = (DataPages + 1) * Page;
    void *P = ::mmap(nullptr, MapBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (P == MAP_FAILED)
      std::abort();
    Map = static_cast<char *>(P);
    ::mprotect(Map + DataPages * Page, Page, PROT_NONE);
    char *Start = Map + DataPages * Page - Need;
    std::memcpy(Start, Data, Size);
    std::memset(Start + Size, 0, Need - Size);
    Image = Start;
  }
  ~GuardedImage() { ::munmap(Map, MapBytes); }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  Context &Ctx = fuzzContext();
  GuardedImage Image(Data, Size);
  ModuleSource Source;
  Source.K = ModuleSource::Kind::Image;
  Source.Image = Image.Image;
  JitLogs Logs;
  auto M = Module::load(Ctx, Source, JitOptions{}, Logs);
  if (!M)
    llvm::consumeError(M.takeError());
  return 0;
}
