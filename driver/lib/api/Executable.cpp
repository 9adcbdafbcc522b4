// Executable and Kernel: views of a driver-core Module (the compiled host code) and its Functions, with the
// parameter layouts described in the PTX's terms.
#include "ApiImpl.h"

using namespace ptxforge;

Executable::Impl::~Impl() {
  Dev->Ctx->waitIdle();
  Code.reset();
}

const Program &Executable::program() const { return I->Source; }
ComputeCapability Executable::target() const { return I->Target; }

std::vector<Kernel> Executable::kernels() const {
  std::vector<Kernel> Out;
  for (size_t N = 0; N < I->Kernels.size(); ++N)
    Out.push_back(Kernel(std::make_shared<Kernel::Impl>(Kernel::Impl{I, N})));
  return Out;
}

Expected<Kernel> Executable::kernel(std::string_view Name) const {
  return guarded([&]() -> Expected<Kernel> {
    for (size_t N = 0; N < I->Kernels.size(); ++N)
      if (I->Kernels[N].Function->name() == llvm::StringRef(Name.data(), Name.size()))
        return Kernel(std::make_shared<Kernel::Impl>(Kernel::Impl{I, N}));
    return Error(ErrorCode::NotFound, "no kernel '" + std::string(Name) + "' in " + I->Source.name());
  });
}

Expected<GlobalVariable> Executable::global(std::string_view Name) const {
  auto G = I->Code->global(llvm::StringRef(Name.data(), Name.size()));
  if (!G)
    return Error(ErrorCode::NotFound,
                 "no .global or .const variable '" + std::string(Name) + "' in " + I->Source.name());
  return GlobalVariable{G->Address, G->Size};
}

const std::string &Kernel::name() const { return I->data().Function->info().Name; }
const std::vector<Parameter> &Kernel::parameters() const { return I->data().Params; }
uint64_t Kernel::parameterBytes() const { return I->data().Function->info().ParamBytes; }
uint64_t Kernel::staticSharedBytes() const { return I->data().Function->staticSharedBytes(); }
unsigned Kernel::maxThreadsPerBlock() const { return I->data().Function->maxThreadsPerBlock(); }
bool Kernel::synchronizesThreads() const { return I->data().Function->info().Synchronizes; }
bool Kernel::usesBarriers() const { return synchronizesThreads(); }

Expected<void> Kernel::run(const LaunchConfig &Config, const Arguments &Args) const {
  Stream S = Stream::Impl::defaultOf(I->Exec->Dev);
  Expected<void> Launched = S.launch(*this, Config, Args);
  if (!Launched)
    return Launched;
  return S.synchronize();
}
