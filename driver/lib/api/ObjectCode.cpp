// ObjectCode: codegen's compiled-object stage (compilePTXObject, CompiledObject) behind the embedding API, and
// the fatbinary writer's host-native entries, as `ptxforge compile --host-native` makes them.
#include "ApiImpl.h"

#include "ptxforge/fatbin/HostIsa.h"
#include "ptxforge/fatbin/Writer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace ptxforge;

Expected<ObjectCode> ObjectCode::compile(const Program &P, const ObjectOptions &Options) {
  return guarded([&]() -> Expected<ObjectCode> {
    if (Options.OptLevel > 3)
      return Error(ErrorCode::InvalidArgument, "optimisation level " + std::to_string(Options.OptLevel) + " (0-3)");
    if (auto Bad = checkComputeCapability(Options.Target))
      return std::move(*Bad);
    std::vector<Diagnostic> Reasons = P.checkTarget(Options.Target);
    if (!Reasons.empty())
      return Error(ErrorCode::UnsupportedTarget, P.name() + " cannot run on " + Options.Target.name(),
                   std::move(Reasons));
    codegen::CompileOptions CO;
    CO.OptLevel = Options.OptLevel;
    CO.TargetCpu = Options.Cpu;
    const Program::Impl &PI = P.impl();
    auto Object = codegen::compilePTXObject(*PI.Front->Verified, PI.Front->Source.get(), CO);
    if (!Object)
      return Error(ErrorCode::CompileFailed, P.name() + " for " +
                                                 (Options.Cpu.empty() ? "this CPU" : "'" + Options.Cpu + "'") + ": " +
                                                 llvm::toString(Object.takeError()));
    auto I = std::make_shared<Impl>(Impl{P, Options.Target, std::move(*Object)});
    return Impl::wrap(std::move(I));
  });
}

const Program &ObjectCode::program() const { return I->Source; }
ComputeCapability ObjectCode::target() const { return I->Target; }
const std::string &ObjectCode::cpu() const { return I->Object.TargetCpu; }
std::vector<std::string> ObjectCode::requiredFeatures() const { return I->Object.requiredFeatures(); }
const std::string &ObjectCode::objectFile() const { return I->Object.ObjectCode; }
std::string ObjectCode::serialize() const { return I->Object.serialize(); }

Expected<void> ObjectCode::checkRunsOnHost() const {
  if (llvm::Error E = I->Object.checkRunsOnHost())
    return Error(ErrorCode::NotSupported, llvm::toString(std::move(E)));
  return {};
}

Expected<std::vector<uint8_t>> ObjectCode::fatbinary() const {
  return guarded([&]() -> Expected<std::vector<uint8_t>> {
    const std::string &Level = I->Object.TargetCpu;
    if (!llvm::is_contained(fatbin::X86IsaLevels, llvm::StringRef(Level))) {
      std::string Levels = llvm::join(std::begin(fatbin::X86IsaLevels), std::end(fatbin::X86IsaLevels), ", ");
      return Error(ErrorCode::NotSupported, "host-native fatbinary entries are compiled for an x86-64 ISA level (" +
                                                Levels + "), not '" + Level + "'");
    }
    fatbin::FatbinWriter W;
    fatbin::EntryDesc D;
    D.Arch = I->Target.value();
    W.addPtx(I->Source.impl().source().text(), std::move(D));
    std::string Bytes = I->Object.serialize();
    W.addHostNative(llvm::arrayRefFromStringRef(Bytes), I->Target.value(), Level);
    auto Out = W.write();
    if (!Out)
      return toApiError(Out.takeError(), "writing the fatbinary");
    return std::move(*Out);
  });
}
