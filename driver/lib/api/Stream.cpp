// Launches: the arguments packed by the kernel's parameter layout, the configuration checked by the driver
// core's Function::checkLaunch, the kernel run by codegen::launchKernel on the stream's worker. Unlike
// libcuda.so.1 (where a fault poisons the process, as on NVIDIA's driver) a failure is recorded on its stream
// only, so an application embedding the JIT keeps going after a bad kernel.
#include "ApiImpl.h"

#include "ptxforge/codegen/Launch.h"

#include <cstring>

using namespace ptxforge;

Arguments &Arguments::addBytes(const void *Data, size_t Size) {
  const auto *P = static_cast<const unsigned char *>(Data);
  if (P)
    Bytes.insert(Bytes.end(), P, P + Size);
  else
    Bytes.resize(Bytes.size() + Size); // a null value of Size bytes: zeros
  Ends.push_back(Bytes.size());
  return *this;
}

bool Stream::Impl::failed() {
  std::scoped_lock L(Lock);
  return Failure.has_value();
}

void Stream::Impl::fail(Error E) {
  std::scoped_lock L(Lock);
  if (!Failure)
    Failure = std::move(E);
}

Stream::Impl::~Impl() {
  if (Queue)
    llvm::consumeError(Dev->Ctx->destroyStream(Queue)); // finishes the queued work first
}

Stream Stream::Impl::defaultOf(const std::shared_ptr<Device::Impl> &D) {
  return Stream(std::shared_ptr<Stream::Impl>(D, &D->DefaultStream));
}

namespace {

std::string spellType(const Parameter &P) {
  std::string T = (P.VectorWidth > 1 ? ".v" + std::to_string(P.VectorWidth) + " ." : ".") + P.Type;
  if (P.ArrayLength)
    T += "[" + std::to_string(P.ArrayLength) + "]";
  return T;
}

/// The parameter buffer: each argument's bytes at its parameter's offset, sizes checked.
Expected<std::vector<char>> packArguments(const Kernel &K, const Arguments &Args) {
  const std::vector<Parameter> &Params = K.parameters();
  if (Args.count() != Params.size())
    return Error(ErrorCode::InvalidArgument, "kernel '" + K.name() + "' takes " + std::to_string(Params.size()) +
                                                 " argument(s), " + std::to_string(Args.count()) + " given");
  std::vector<char> Buffer(K.parameterBytes());
  for (size_t N = 0; N < Params.size(); ++N) {
    const Parameter &P = Params[N];
    if (Args.size(N) != P.Size)
      return Error(ErrorCode::InvalidArgument, "argument " + std::to_string(N) + " of '" + K.name() + "' ('" + P.Name +
                                                   "', " + spellType(P) + ") takes " + std::to_string(P.Size) +
                                                   " bytes, " + std::to_string(Args.size(N)) + " given");
    std::memcpy(Buffer.data() + P.Offset, Args.data(N), P.Size);
  }
  return Buffer;
}

} // namespace

Expected<void> Stream::launch(const Kernel &K, const LaunchConfig &Config, const Arguments &Args) {
  return guarded([&]() -> Expected<void> {
    const Executable::Impl &X = *K.impl().Exec;
    if (X.Dev.get() != I->Dev)
      return Error(ErrorCode::InvalidArgument, "kernel '" + K.name() + "' was compiled on another device");
    auto Params = packArguments(K, Args);
    if (!Params)
      return Params.error();
    const driver::Function &F = *K.impl().data().Function;
    codegen::LaunchConfig LC;
    LC.Grid = {Config.Grid.X, Config.Grid.Y, Config.Grid.Z};
    LC.Block = {Config.Block.X, Config.Block.Y, Config.Block.Z};
    LC.DynamicSharedBytes = Config.DynamicSharedBytes;
    LC.Workers = I->Dev->Workers;
    if (llvm::Error E = F.checkLaunch(LC))
      return Error(ErrorCode::InvalidLaunch, "kernel '" + K.name() + "': " + llvm::toString(std::move(E)));

    // The executable outlives the work (its Impl waits for the device before unloading), and so does this
    // stream's state (destroying the driver stream finishes its work first).
    Stream::Impl *S = I.get();
    const driver::KernelCode *KC = F.compiledCode(); // executables are compiled whole (Module::compile)
    if (!KC)
      return Error(ErrorCode::InvalidLaunch, "kernel '" + K.name() + "' has no code");
    const codegen::CompiledModule *Code = KC->Code;
    const codegen::KernelInfo *Info = KC->Kernel;
    I->Dev->Ctx->submit(I->Queue, [S, Code, Info, LC, Buffer = std::move(*Params)] {
      if (S->failed())
        return; // a failed stream runs nothing more until synchronize() reports the failure
      if (llvm::Error E = codegen::launchKernel(*Code, *Info, LC, Buffer.empty() ? nullptr : Buffer.data()))
        S->fail(toApiError(std::move(E), "kernel '" + Info->Name + "'"));
    });
    return {};
  });
}

Expected<void> Stream::synchronize() {
  return guarded([&]() -> Expected<void> {
    I->Dev->Ctx->submitAndWait(I->Queue, [] {});
    std::scoped_lock L(I->Lock);
    std::optional<Error> Failure = std::move(I->Failure);
    I->Failure.reset();
    if (Failure)
      return std::move(*Failure);
    return {};
  });
}
