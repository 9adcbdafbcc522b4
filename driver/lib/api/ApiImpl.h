// The embedding API's handles as views of the driver core: what each public Impl holds, and the helpers every
// API file shares (error mapping, the exception fence). Never installed.
#pragma once

#include "ptxforge/ptxforge.hpp"

#include "ptxforge/codegen/CompiledObject.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Module.h"
#include "ptxforge/driver/Stream.h"
#include "ptxforge/ptx/Frontend.h"

#include "llvm/Support/Error.h"

#include <mutex>
#include <new>
#include <optional>

namespace ptxforge {

struct Program::Impl {
  std::unique_ptr<ptx::FrontendResult> Front; ///< always verified
  std::string Name;
  std::vector<Diagnostic> Diags; ///< warnings and notes

  static Program wrap(std::shared_ptr<const Impl> I) { return Program(std::move(I)); }
  const ptx::Module &module() const { return Front->Verified->module(); }
  const ptx::SourceBuffer &source() const { return *Front->Source; }
};

struct ObjectCode::Impl {
  Program Source;
  ComputeCapability Target;
  codegen::CompiledObject Object;

  static ObjectCode wrap(std::shared_ptr<const Impl> I) { return ObjectCode(std::move(I)); }
};

struct Stream::Impl {
  Device::Impl *Dev = nullptr;
  /// Keeps the device alive; null for the device's own default stream.
  std::shared_ptr<Device::Impl> Keep;
  driver::Stream *Queue = nullptr; ///< null: the context's legacy default stream
  std::mutex Lock;
  std::optional<Error> Failure; ///< the first kernel failure since the last synchronize()

  bool failed();
  void fail(Error E);
  ~Impl();

  /// The default stream of D (the handle keeps D alive).
  static Stream defaultOf(const std::shared_ptr<Device::Impl> &D);
};

struct DeviceBuffer::Owner {
  virtual ~Owner() = default;
};

struct Device::Impl : DeviceBuffer::Owner {
  ComputeCapability CC;
  unsigned Workers = 0;
  Stream::Impl DefaultStream; ///< destroyed after Ctx, whose legacy stream runs its work
  std::unique_ptr<driver::Context> Ctx;

  ~Impl() override;
};

struct Executable::Impl {
  struct KernelData {
    const driver::Function *Function = nullptr;
    std::vector<Parameter> Params;
  };
  std::shared_ptr<Device::Impl> Dev;
  Program Source;
  ComputeCapability Target;
  std::unique_ptr<driver::Module> Code;
  std::vector<KernelData> Kernels;

  Impl(std::shared_ptr<Device::Impl> Dev, Program Source) : Dev(std::move(Dev)), Source(std::move(Source)) {}
  /// Waits for the device's work (a queued launch may use the code), then unloads.
  ~Impl();
};

struct Kernel::Impl {
  std::shared_ptr<Executable::Impl> Exec;
  size_t Index = 0;

  const Executable::Impl::KernelData &data() const { return Exec->Kernels[Index]; }
};

/// InvalidArgument unless CC is a compute capability NVIDIA has defined.
std::optional<Error> checkComputeCapability(ComputeCapability CC);

/// An API Error for an error of the core (driver Status, codegen launch faults); Context prefixes the message.
Error toApiError(llvm::Error E, const std::string &Context = "");

/// Runs Fn, turning any exception (none is expected; this is the fence the API promises) into an Error.
template <class F> auto guarded(F &&Fn) -> decltype(Fn()) {
  try {
    return Fn();
  } catch (const std::bad_alloc &) {
    return Error(ErrorCode::OutOfMemory, "out of host memory");
  } catch (const std::exception &E) {
    return Error(ErrorCode::Internal, std::string("unexpected exception: ") + E.what());
  } catch (...) {
    return Error(ErrorCode::Internal, "unexpected exception");
  }
}

/// The API's severities are ptx's, in the same order, so that one name table (ptx::severityName) serves both.
static_assert(static_cast<int>(Severity::Note) == static_cast<int>(ptx::Severity::Note) &&
              static_cast<int>(Severity::Warning) == static_cast<int>(ptx::Severity::Warning) &&
              static_cast<int>(Severity::Error) == static_cast<int>(ptx::Severity::Error));
inline Severity toSeverity(ptx::Severity S) { return static_cast<Severity>(S); }
inline ptx::Severity toPtxSeverity(Severity S) { return static_cast<ptx::Severity>(S); }

} // namespace ptxforge
