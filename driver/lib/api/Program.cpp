// Program: the front end (parse + verify, ptx::runFrontend, as the CLI and libcuda.so.1 run it) behind the
// embedding API, its diagnostics as values, and the requirement and compatibility analyses of ptx/.
#include "ApiImpl.h"

#include "ptxforge/ptx/Requirements.h"

using namespace ptxforge;

namespace {

std::vector<Diagnostic> toDiagnostics(const ptx::FrontendResult &R) {
  std::vector<Diagnostic> Out;
  for (const ptx::Diagnostic &D : R.Diags.sorted()) {
    Diagnostic A;
    A.File = R.Source->name().str();
    A.Level = toSeverity(D.Level);
    A.Message = D.Message;
    if (D.Loc.isValid()) {
      ptx::LineColumn LC = R.Source->lineColumn(D.Loc);
      A.Line = LC.Line;
      A.Column = LC.Column;
      A.SourceLine = R.Source->lineText(D.Loc).str();
    }
    Out.push_back(std::move(A));
  }
  return Out;
}

Expected<Program> load(std::unique_ptr<ptx::SourceBuffer> Source, const LoadOptions &Options) {
  auto I = std::make_shared<Program::Impl>();
  I->Name = Source->name().str();
  ptx::ParseOptions PO;
  PO.Threads = Options.ParseThreads;
  I->Front = ptx::runFrontend(std::move(Source), PO);
  std::vector<Diagnostic> Diags = toDiagnostics(*I->Front);
  if (!I->Front->ok()) {
    size_t Errors = I->Front->Diags.errorCount();
    std::string Summary = I->Name + ": " + std::to_string(Errors) + (Errors == 1 ? " error" : " errors");
    const ptx::Module *M = I->Front->module();
    if (M && M->Version.value() > ptx::MaxSupportedPtxVersion)
      return Error(ErrorCode::UnsupportedPtxVersion,
                   "PTX ISA " + ptx::ptxVersionName(M->Version.value()) + " is newer than ptxforge knows (" +
                       ptx::ptxVersionName(ptx::MaxSupportedPtxVersion) + "); " + Summary,
                   std::move(Diags));
    return Error(ErrorCode::InvalidPtx, Summary, std::move(Diags));
  }
  I->Diags = std::move(Diags);
  return Program::Impl::wrap(std::move(I));
}

} // namespace

Expected<Program> Program::fromText(std::string Ptx, std::string Name, const LoadOptions &Options) {
  return guarded([&]() -> Expected<Program> {
    if (Ptx.size() >= UINT32_MAX)
      return Error(ErrorCode::InvalidArgument, Name + ": PTX over 4 GiB");
    return load(std::make_unique<ptx::SourceBuffer>(std::move(Name), std::move(Ptx)), Options);
  });
}

Expected<Program> Program::fromFile(const std::string &Path, const LoadOptions &Options) {
  return guarded([&]() -> Expected<Program> {
    auto Source = ptx::SourceBuffer::fromFile(Path);
    if (!Source)
      return Error(ErrorCode::FileError, Path + ": " + llvm::toString(Source.takeError()));
    return load(std::move(*Source), Options);
  });
}

const std::string &Program::name() const { return I->Name; }
const std::vector<Diagnostic> &Program::diagnostics() const { return I->Diags; }
unsigned Program::ptxVersion() const { return I->module().Version.value(); }
unsigned Program::targetSm() const { return I->module().Tgt.Sm; }
std::string Program::targetName() const { return ptx::smName(I->module().Tgt.Sm, I->module().Tgt.Suffix); }

std::vector<std::string> Program::kernelNames() const {
  std::vector<std::string> Names;
  for (const auto &F : I->module().Functions)
    if (F->IsEntry && F->HasBody)
      Names.push_back(F->Name.str());
  return Names;
}

Requirements Program::requirements() const {
  ptx::ModuleRequirements MR = ptx::computeRequirements(I->module());
  Requirements R;
  R.MinSm = MR.Minimum.Sm;
  R.MinPtx = MR.Minimum.Ptx;
  for (const ptx::FunctionRequirements &F : MR.Functions) {
    FunctionRequirements FR;
    FR.Name = F.Fn->Name.str();
    FR.IsKernel = F.Fn->IsEntry;
    FR.MinSm = F.Minimum.Sm;
    FR.MinPtx = F.Minimum.Ptx;
    for (const ptx::RequirementSource &S : F.SmSetBy) {
      ptx::LineColumn LC = I->source().lineColumn(S.Loc);
      FR.SmSetBy.push_back({S.Instruction, LC.Line, LC.Column, S.Needs.Sm, S.Needs.Ptx});
    }
    R.Functions.push_back(std::move(FR));
  }
  return R;
}

std::vector<Diagnostic> Program::checkTarget(ComputeCapability CC) const {
  const ptx::Module &M = I->module();
  std::vector<Diagnostic> Out;
  // The reasons name the instructions with their file:line:col; the diagnostic is about the module.
  for (std::string &Why : ptx::reasonsCannotRun(M, ptx::computeRequirements(M), CC.value(), &I->source())) {
    Diagnostic D;
    D.File = I->Name;
    D.Message = "cannot run on " + CC.name() + ": " + std::move(Why);
    Out.push_back(std::move(D));
  }
  return Out;
}
