// Device: a driver-core context of its own (streams, memory ownership), the compile entry point that hands a
// Program to the driver core's module compiler (the path cuModuleLoadData takes), and device memory through
// the core's DeviceMemory and copies (range-checked, guard gaps behind every buffer).
#include "ApiImpl.h"

#include "ptxforge/driver/Copy.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Settings.h"

#include <cstdlib>

using namespace ptxforge;

Device::Impl::~Impl() {
  Ctx.reset(); // finishes the queued work of every stream first
}

Expected<Device> Device::create(const DeviceOptions &Options) {
  return guarded([&]() -> Expected<Device> {
    // Installs the fault handlers copies run under and reserves device memory (once per process).
    if (llvm::Error E = driver::Driver::get().initialize())
      return toApiError(std::move(E), "cannot create the device");
    ComputeCapability CC =
        Options.CC.value_or(ComputeCapability{driver::deviceProperties().CcMajor, driver::deviceProperties().CcMinor});
    if (auto Bad = checkComputeCapability(CC))
      return std::move(*Bad);
    auto I = std::make_shared<Impl>();
    I->CC = CC;
    I->Workers = Options.Workers;
    I->Ctx = std::make_unique<driver::Context>(0, 0, /*Primary=*/false);
    I->DefaultStream.Dev = I.get();
    return Device(std::move(I));
  });
}

ComputeCapability Device::computeCapability() const { return I->CC; }
std::string Device::name() const { return "ptxforge CPU (" + I->CC.name() + ")"; }
uint64_t Device::totalMemory() const { return driver::DeviceMemory::get().totalBytes(); }
uint64_t Device::usedMemory() const { return driver::DeviceMemory::get().usedBytes(); }

namespace {

std::vector<Parameter> describeParameters(const codegen::KernelInfo &K, const ptx::Function *F) {
  std::vector<Parameter> Out;
  for (size_t N = 0; N < K.Params.size(); ++N) {
    const codegen::ParamInfo &P = K.Params[N];
    Parameter A;
    A.Name = P.Name;
    A.Offset = P.Offset;
    A.Size = P.Size;
    A.Align = P.Align;
    if (F && N < F->Sig.Params.size()) {
      const ptx::VariableDecl &D = F->Sig.Params[N];
      A.Type = ptx::spell(D.Type).str();
      A.VectorWidth = D.VectorWidth;
      if (!D.Dims.empty()) {
        A.ArrayLength = 1;
        for (uint64_t Dim : D.Dims)
          A.ArrayLength *= Dim;
      }
      A.IsPointer = D.IsPtr;
      if (D.IsPtr && D.PtrSpace != ptx::StateSpace::None)
        A.PointerSpace = ptx::spell(D.PtrSpace).str();
    }
    Out.push_back(std::move(A));
  }
  return Out;
}

/// An executable for Code (compiled from P for Target): its kernels with their parameters in PTX terms.
std::shared_ptr<Executable::Impl> makeExecutable(const std::shared_ptr<Device::Impl> &Dev, const Program &P,
                                                 ComputeCapability Target, std::unique_ptr<driver::Module> Code) {
  auto X = std::make_shared<Executable::Impl>(Dev, P);
  X->Target = Target;
  X->Code = std::move(Code);
  for (const auto &F : X->Code->functions())
    X->Kernels.push_back({F.get(), describeParameters(F->info(), P.impl().module().findFunction(F->name()))});
  return X;
}

} // namespace

Expected<Executable> Device::compile(const Program &P, const CompileOptions &Options) const {
  return guarded([&]() -> Expected<Executable> {
    ComputeCapability Target = Options.Target.value_or(I->CC);
    if (auto Bad = checkComputeCapability(Target))
      return std::move(*Bad);
    if (Options.OptLevel > 3)
      return Error(ErrorCode::InvalidArgument, "optimisation level " + std::to_string(Options.OptLevel) + " (0-3)");
    std::vector<Diagnostic> Reasons = P.checkTarget(Target);
    if (!Reasons.empty())
      return Error(ErrorCode::UnsupportedTarget, P.name() + " cannot run on " + Target.name(), std::move(Reasons));

    driver::JitOptions JO;
    JO.OptLevel = Options.OptLevel;
    JO.TargetCc = Target.value();
    codegen::CompileOptions CO;
    CO.TargetCpu = Options.Cpu;
    CO.StreamingStoreBytes = driver::hostStreamingStoreBytes();
    JO.Codegen = CO;
    driver::JitLogs Logs;
    const Program::Impl &PI = P.impl();
    auto Code = driver::Module::compile(*I->Ctx, PI.source().text().str(), P.name(), JO, Logs);
    if (!Code) {
      Error E = toApiError(Code.takeError(), P.name());
      // The front end already accepted the module, so what the core refuses here is code generation's.
      ErrorCode C = E.code() == ErrorCode::InvalidPtx ? ErrorCode::CompileFailed : E.code();
      std::string Log = llvm::StringRef(Logs.Error).rtrim().str();
      return Error(C, Log.empty() ? E.message() : E.message() + ": " + Log);
    }

    return Executable(makeExecutable(I, P, Target, std::move(*Code)));
  });
}

Expected<Executable> Device::load(const ObjectCode &Object) const {
  return guarded([&]() -> Expected<Executable> {
    const ObjectCode::Impl &O = Object.impl();
    driver::JitLogs Logs;
    auto Code = driver::Module::fromObject(*I->Ctx, O.Object, O.Source.name(), O.Target.value(), Logs);
    if (!Code)
      return toApiError(Code.takeError(), O.Source.name() + " (" + O.Object.TargetCpu + ")");
    return Executable(makeExecutable(I, O.Source, O.Target, std::move(*Code)));
  });
}

Expected<DeviceBuffer> Device::allocate(size_t Bytes) const {
  return guarded([&]() -> Expected<DeviceBuffer> {
    if (Bytes == 0)
      return Error(ErrorCode::InvalidArgument, "allocation of 0 bytes");
    auto Address = driver::DeviceMemory::get().allocate(Bytes, driver::MemoryKind::Device, I->Ctx.get());
    if (!Address)
      return toApiError(Address.takeError());
    return DeviceBuffer(I, *Address, Bytes);
  });
}

namespace {

Expected<void> copy(driver::Context &Ctx, uint64_t Dst, driver::Side DstSide, uint64_t Src, driver::Side SrcSide,
                    size_t Size) {
  return guarded([&]() -> Expected<void> {
    if (Size == 0)
      return {};
    driver::CopyRegion R;
    R.Dst = Dst;
    R.DstSide = DstSide;
    R.Src = Src;
    R.SrcSide = SrcSide;
    R.Width = Size;
    if (llvm::Error E = driver::copyMemory(Ctx, nullptr, /*Async=*/false, R))
      return toApiError(std::move(E));
    return {};
  });
}

} // namespace

Expected<void> Device::copyToDevice(DevicePtr Destination, const void *Source, size_t Size) const {
  if (!Source && Size)
    return Error(ErrorCode::InvalidArgument, "null host pointer");
  return copy(*I->Ctx, Destination, driver::Side::Device, reinterpret_cast<uint64_t>(Source), driver::Side::Host, Size);
}

Expected<void> Device::copyToHost(void *Destination, DevicePtr Source, size_t Size) const {
  if (!Destination && Size)
    return Error(ErrorCode::InvalidArgument, "null host pointer");
  return copy(*I->Ctx, reinterpret_cast<uint64_t>(Destination), driver::Side::Host, Source, driver::Side::Device, Size);
}

Stream Device::defaultStream() const { return Stream::Impl::defaultOf(I); }

Expected<Stream> Device::createStream() const {
  return guarded([&]() -> Expected<Stream> {
    auto Queue = I->Ctx->createStream(driver::Stream::Kind::NonBlocking, 0, 0);
    if (!Queue)
      return toApiError(Queue.takeError());
    auto S = std::make_shared<Stream::Impl>();
    S->Dev = I.get();
    S->Keep = I;
    S->Queue = *Queue;
    return Stream(std::move(S));
  });
}

void Device::synchronize() const { I->Ctx->waitIdle(); }

// DeviceBuffer

DeviceBuffer::DeviceBuffer(DeviceBuffer &&Other) noexcept
    : O(std::move(Other.O)), Address(Other.Address), Bytes(Other.Bytes) {
  Other.Address = 0;
  Other.Bytes = 0;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&Other) noexcept {
  if (this != &Other) {
    release();
    O = std::move(Other.O);
    Address = Other.Address;
    Bytes = Other.Bytes;
    Other.Address = 0;
    Other.Bytes = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { release(); }

void DeviceBuffer::release() {
  if (!O)
    return;
  auto &Dev = static_cast<Device::Impl &>(*O);
  Dev.Ctx->waitIdle(); // a queued kernel may still use the buffer (cuMemFree waits too)
  llvm::consumeError(driver::DeviceMemory::get().free(Address, {driver::MemoryKind::Device}));
  O.reset();
  Address = 0;
  Bytes = 0;
}

namespace {
/// Why a read or write (What) of Size bytes at Offset of a Bytes-byte buffer (Valid: not moved from) through
/// the host pointer Host cannot be done, if it cannot.
std::optional<Error> checkTransfer(const char *What, bool Valid, size_t Bytes, const void *Host, size_t Size,
                                   size_t Offset) {
  if (!Valid || Offset > Bytes || Size > Bytes - Offset)
    return Error(ErrorCode::InvalidArgument, std::string(What) + " of " + std::to_string(Size) + " bytes at offset " +
                                                 std::to_string(Offset) + " of a " + std::to_string(Bytes) +
                                                 "-byte buffer");
  if (!Host && Size)
    return Error(ErrorCode::InvalidArgument, "null host pointer");
  return std::nullopt;
}
} // namespace

Expected<void> DeviceBuffer::write(const void *Source, size_t Size, size_t Offset) {
  if (auto Bad = checkTransfer("write", O != nullptr, Bytes, Source, Size, Offset))
    return std::move(*Bad);
  auto &Dev = static_cast<Device::Impl &>(*O);
  return copy(*Dev.Ctx, Address + Offset, driver::Side::Device, reinterpret_cast<uint64_t>(Source), driver::Side::Host,
              Size);
}

Expected<void> DeviceBuffer::read(void *Destination, size_t Size, size_t Offset) const {
  if (auto Bad = checkTransfer("read", O != nullptr, Bytes, Destination, Size, Offset))
    return std::move(*Bad);
  auto &Dev = static_cast<Device::Impl &>(*O);
  return copy(*Dev.Ctx, reinterpret_cast<uint64_t>(Destination), driver::Side::Host, Address + Offset,
              driver::Side::Device, Size);
}

Expected<void> DeviceBuffer::fill(uint8_t Value) {
  if (!O)
    return Error(ErrorCode::InvalidArgument, "a moved-from buffer");
  auto &Dev = static_cast<Device::Impl &>(*O);
  return guarded([&]() -> Expected<void> {
    if (llvm::Error E = driver::fillMemory(*Dev.Ctx, nullptr, /*Async=*/false, Address, Bytes, Value, 1, Bytes, 1))
      return toApiError(std::move(E));
    return {};
  });
}
