// See Passes.def: ptxforge's passes registered with a PassBuilder by name, with their parameters parsed as
// LLVM's own parametrized passes take theirs (`ptxforge-warp-vectorize<lanes=8>`).
#include "Passes.h"
#include "ptxforge/codegen/CompiledModule.h"
#include "ptxforge/codegen/Lowering.h"

#include "llvm/Passes/PassBuilder.h"

using namespace llvm;
using namespace ptxforge::codegen::passes;

namespace {
/// The N of `Key=N` in Params (empty: Default); anything else is an error.
template <typename T> Expected<T> parseNumber(StringRef Params, StringRef Key, T Default) {
  if (Params.empty())
    return Default;
  T Value = 0;
  StringRef Rest = Params;
  if (!Rest.consume_front(Key) || !Rest.consume_front("=") || Rest.getAsInteger(0, Value))
    return createStringError(std::errc::invalid_argument, "invalid pass parameter '%s' (expected %s=N)",
                             Params.str().c_str(), Key.str().c_str());
  return Value;
}

/// Without a parameter, a pass runs as a default compile for an AVX-512 host would run it.
Expected<unsigned> parseLanes(StringRef Params) { return parseNumber<unsigned>(Params, "lanes", 16); }
Expected<unsigned> parseBudget(StringRef Params) {
  return parseNumber<unsigned>(Params, "budget", ptxforge::codegen::CompileOptions().FunctionSizeBudget);
}
Expected<uint64_t> parseThreshold(StringRef Params) {
  return parseNumber<uint64_t>(Params, "threshold", ptxforge::codegen::DefaultStreamingStoreBytes);
}

Expected<unsigned> parseCutBudget(StringRef Params) {
  return parseNumber<unsigned>(Params, "cut-budget", ptxforge::codegen::LoweringOptions().RegionCutBudget);
}

Expected<RegionBlocksOptions> parseRegionBlocksOptions(StringRef Params) {
  ptxforge::codegen::LoweringOptions Defaults;
  RegionBlocksOptions O{Defaults.LoopCuts, Defaults.RegionCutBudget, ptxforge::codegen::ResumeLoops::Count};
  while (!Params.empty()) {
    StringRef P;
    std::tie(P, Params) = Params.split(';');
    if (P == "loop-cuts" || P == "no-loop-cuts") {
      O.LoopCuts = P == "loop-cuts";
      continue;
    }
    using ptxforge::codegen::ResumeLoops;
    if (P == "resume-loops" || P == "count-resumable" || P == "no-resume-loops") {
      O.Resume = P == "resume-loops" ? ResumeLoops::Emit : P == "count-resumable" ? ResumeLoops::Count : ResumeLoops::Omit;
      continue;
    }
    Expected<unsigned> Budget = parseNumber<unsigned>(P, "cut-budget", O.CutBudget);
    if (!Budget)
      return Budget.takeError();
    O.CutBudget = *Budget;
  }
  return O;
}

/// Adds the pass MakePass makes of the parsed parameters; false when they do not parse (the PassBuilder then
/// reports the pipeline element it could not parse).
template <typename PassManagerT, typename ParamsT, typename MakeT>
bool addWithParams(PassManagerT &PM, Expected<ParamsT> Params, MakeT MakePass) {
  if (!Params) {
    consumeError(Params.takeError());
    return false;
  }
  PM.addPass(MakePass(*Params));
  return true;
}

// The registerPipelineParsingCallback of one pass manager kind: Passes.def's entries of that kind, adding to PM.
#define PTXFORGE_ADD_PASS(NAME, CREATE_PASS)                                                                           \
  if (Name == NAME) {                                                                                                  \
    PM.addPass(CREATE_PASS);                                                                                           \
    return true;                                                                                                       \
  }
#define PTXFORGE_ADD_PASS_WITH_PARAMS(NAME, CLASS, CREATE_PASS, PARSER, PARAMS)                                        \
  if (PassBuilder::checkParametrizedPassName(Name, NAME))                                                              \
    return addWithParams(PM, PassBuilder::parsePassParameters(PARSER, Name, NAME), CREATE_PASS);

bool parseModulePass(StringRef Name, ModulePassManager &PM) {
#define MODULE_PASS PTXFORGE_ADD_PASS
#define MODULE_PASS_WITH_PARAMS PTXFORGE_ADD_PASS_WITH_PARAMS
#include "Passes.def"
  return false;
}

bool parseFunctionPass(StringRef Name, FunctionPassManager &PM) {
#define FUNCTION_PASS PTXFORGE_ADD_PASS
#define FUNCTION_PASS_WITH_PARAMS PTXFORGE_ADD_PASS_WITH_PARAMS
#include "Passes.def"
  return false;
}
#undef PTXFORGE_ADD_PASS
#undef PTXFORGE_ADD_PASS_WITH_PARAMS
} // namespace

void ptxforge::codegen::passes::registerPasses(PassBuilder &PB, PassInstrumentationCallbacks *PIC) {
  PB.registerPipelineParsingCallback([](StringRef Name, ModulePassManager &MPM,
                                        ArrayRef<PassBuilder::PipelineElement>) { return parseModulePass(Name, MPM); });
  PB.registerPipelineParsingCallback(
      [](StringRef Name, FunctionPassManager &FPM, ArrayRef<PassBuilder::PipelineElement>) {
        return parseFunctionPass(Name, FPM);
      });
  if (!PIC)
    return;
#define MODULE_PASS(NAME, CREATE_PASS) PIC->addClassToPassName(decltype(CREATE_PASS)::name(), NAME);
#define MODULE_PASS_WITH_PARAMS(NAME, CLASS, CREATE_PASS, PARSER, PARAMS) PIC->addClassToPassName(CLASS::name(), NAME);
#define FUNCTION_PASS(NAME, CREATE_PASS) PIC->addClassToPassName(decltype(CREATE_PASS)::name(), NAME);
#define FUNCTION_PASS_WITH_PARAMS(NAME, CLASS, CREATE_PASS, PARSER, PARAMS)                                            \
  PIC->addClassToPassName(CLASS::name(), NAME);
#include "Passes.def"
}
