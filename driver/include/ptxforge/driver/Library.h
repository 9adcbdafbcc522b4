// A library (cuLibraryLoadData / cuLibraryLoadFromFile): a module that belongs to no context, as NVIDIA's
// runtime loads every fatbinary a program or library registers. It is loaded into the device's primary
// context at its first use (a kernel, global or module asked for), so registering many fatbinaries costs
// nothing until their code is used; a library whose image the caller does not promise to keep
// (CU_LIBRARY_BINARY_IS_PRESERVED) is loaded at once. A kernel handle (CUkernel) is its module's Function.
#pragma once

#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Module.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <mutex>

namespace ptxforge::driver {

class Library {
public:
  Library(ModuleSource Source, JitOptions Options) : Source(std::move(Source)), Options(std::move(Options)) {}

  /// Where cuLibraryLoadData's image is: the image itself, or the fatbinary that nvcc's __fatBinC_Wrapper_t at
  /// Image points to (NVIDIA's runtime passes the wrapper; cuModuleLoadData refuses one, as NVIDIA's does).
  static ModuleSource imageSource(const void *Image);

  /// The module, loaded into device 0's primary context at the first call (again after that context was reset
  /// and the module went with it). Logs gets what the load reports.
  [[nodiscard]] llvm::Expected<Module *> module(JitLogs &Logs);
  /// Unloads the module if it was loaded.
  void unload();

  static Registry<Library> &registry();

private:
  std::mutex Lock;
  ModuleSource Source;
  JitOptions Options;
  Module *Loaded = nullptr;
};

} // namespace ptxforge::driver
