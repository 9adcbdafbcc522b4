// ORC JIT: optimize the lowered module for the host CPU, link runtime helpers, look up kernels and globals.
#include "ptxforge/codegen/CompiledModule.h"

#include "../exec/Runtime.h"

#include "llvm/ExecutionEngine/Orc/AbsoluteSymbols.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <mutex>

using namespace ptxforge;
using namespace ptxforge::codegen;

CompiledModule::~CompiledModule() = default;

namespace {

void initializeNativeTarget() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

llvm::Error optimize(llvm::Module &M, llvm::TargetMachine &TM, unsigned Level) {
  llvm::LoopAnalysisManager LAM;
  llvm::FunctionAnalysisManager FAM;
  llvm::CGSCCAnalysisManager CGAM;
  llvm::ModuleAnalysisManager MAM;
  llvm::PipelineTuningOptions PTO;
  llvm::PassBuilder PB(&TM, PTO);
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  llvm::OptimizationLevel OL = Level == 0   ? llvm::OptimizationLevel::O0
                               : Level == 1 ? llvm::OptimizationLevel::O1
                               : Level == 2 ? llvm::OptimizationLevel::O2
                                            : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager MPM =
      Level == 0 ? PB.buildO0DefaultPipeline(OL) : PB.buildPerModuleDefaultPipeline(OL);
  MPM.run(M, MAM);
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::unique_ptr<CompiledModule>> CompiledModule::compile(LoweredModule LM, const CompileOptions &Options) {
  initializeNativeTarget();
  auto JTMB = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!JTMB)
    return JTMB.takeError();
  JTMB->setCodeGenOptLevel(Options.OptLevel >= 2 ? llvm::CodeGenOptLevel::Default : llvm::CodeGenOptLevel::Less);
  auto TM = JTMB->createTargetMachine();
  if (!TM)
    return TM.takeError();
  LM.Module->setDataLayout((*TM)->createDataLayout());
  LM.Module->setTargetTriple((*TM)->getTargetTriple());
  if (auto E = optimize(*LM.Module, **TM, Options.OptLevel))
    return std::move(E);

  auto JIT = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*JTMB)).create();
  if (!JIT)
    return JIT.takeError();
  llvm::orc::JITDylib &JD = (*JIT)->getMainJITDylib();
  llvm::orc::SymbolMap Symbols;
  for (const auto &[Name, Addr] : exec::runtimeHelpers())
    Symbols[(*JIT)->mangleAndIntern(Name)] =
        llvm::orc::ExecutorSymbolDef(llvm::orc::ExecutorAddr::fromPtr(Addr), llvm::JITSymbolFlags::Exported);
  if (auto E = JD.define(llvm::orc::absoluteSymbols(std::move(Symbols))))
    return std::move(E);
  // libm (exp2f, sinf, ...) for what LLVM lowers to library calls.
  auto Gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*JIT)->getDataLayout().getGlobalPrefix());
  if (!Gen)
    return Gen.takeError();
  JD.addGenerator(std::move(*Gen));
  if (auto E = (*JIT)->addIRModule(llvm::orc::ThreadSafeModule(std::move(LM.Module), std::move(LM.Context))))
    return std::move(E);

  std::unique_ptr<CompiledModule> CM(new CompiledModule());
  for (const KernelInfo &K : LM.Kernels) {
    auto Sym = (*JIT)->lookup(K.Symbol);
    if (!Sym)
      return Sym.takeError();
    CM->Kernels.push_back(K);
    CM->Entries.push_back(Sym->toPtr<ThreadFunction>());
    ThreadFunction Block = nullptr;
    if (!K.BlockSymbol.empty()) {
      auto BSym = (*JIT)->lookup(K.BlockSymbol);
      if (!BSym)
        return BSym.takeError();
      Block = BSym->toPtr<ThreadFunction>();
    }
    CM->BlockEntries.push_back(Block);
  }
  for (const GlobalInfo &G : LM.Globals) {
    auto Sym = (*JIT)->lookup(G.Symbol);
    if (!Sym)
      return Sym.takeError();
    CM->Globals.push_back(G);
    CM->GlobalAddrs.push_back(Sym->toPtr<void *>());
  }
  CM->JIT = std::move(*JIT);
  return std::move(CM);
}

const KernelInfo *CompiledModule::kernel(llvm::StringRef Name) const {
  for (const KernelInfo &K : Kernels)
    if (K.Name == Name)
      return &K;
  return nullptr;
}

ThreadFunction CompiledModule::entry(const KernelInfo &K) const { return Entries[&K - Kernels.data()]; }

ThreadFunction CompiledModule::blockEntry(const KernelInfo &K) const { return BlockEntries[&K - Kernels.data()]; }

void *CompiledModule::globalAddress(llvm::StringRef Name, uint64_t *Size) const {
  for (size_t I = 0; I < Globals.size(); ++I)
    if (Globals[I].Name == Name) {
      if (Size)
        *Size = Globals[I].Size;
      return GlobalAddrs[I];
    }
  return nullptr;
}

llvm::Expected<std::unique_ptr<CompiledModule>> ptxforge::codegen::compilePTX(const ptx::VerifiedModule &M,
                                                                             const ptx::SourceBuffer *Source,
                                                                             const CompileOptions &Options) {
  auto LM = lowerToLLVM(M, Source);
  if (!LM)
    return LM.takeError();
  return CompiledModule::compile(std::move(*LM), Options);
}
