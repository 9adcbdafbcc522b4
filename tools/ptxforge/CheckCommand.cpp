// `ptxforge check FILE [--sm 75,80,90] [--json]`: the compatibility report. For the module and each function:
// the minimum compute capability and PTX ISA version and the instructions that set them; with --sm, which of
// the listed targets can run the module and why each other cannot.
#include "Commands.h"
#include "FrontendCommands.h"

#include "ptxforge/ptx/Requirements.h"

#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>

#include <iostream>

using namespace ptxforge;
using namespace ptxforge::ptx;
using namespace ptxforge::tools;
using json = nlohmann::ordered_json;

namespace {

std::string where(const SourceBuffer &S, SourceLoc L) {
  LineColumn LC = S.lineColumn(L);
  return S.name().str() + ":" + std::to_string(LC.Line) + ":" + std::to_string(LC.Column);
}

std::string paramType(const VariableDecl &P) {
  std::string T = "." + spell(P.Type).str();
  if (P.VectorWidth > 1)
    T = ".v" + std::to_string(P.VectorWidth) + " " + T;
  for (uint64_t D : P.Dims)
    T += "[" + (D ? std::to_string(D) : std::string()) + "]";
  if (P.IsPtr)
    T += " .ptr" + (P.PtrSpace != StateSpace::None ? "." + spell(P.PtrSpace).str() : std::string());
  return T;
}

json sources(const SourceBuffer &S, const std::vector<RequirementSource> &Srcs) {
  json A = json::array();
  for (const RequirementSource &R : Srcs) {
    LineColumn LC = S.lineColumn(R.Loc);
    A.push_back({{"instruction", R.Instruction},
                 {"line", LC.Line},
                 {"column", LC.Column},
                 {"requires_sm", R.Needs.Sm},
                 {"requires_ptx", ptxVersionName(R.Needs.Ptx)}});
  }
  return A;
}

json report(const FrontendResult &R, const ModuleRequirements &MR, const std::vector<unsigned> &Sms) {
  const Module &M = *R.module();
  json J;
  J["file"] = R.Source->name().str();
  J["version"] = ptxVersionName(M.Version.value());
  J["target"] = smName(M.Tgt.Sm, M.Tgt.Suffix);
  J["address_size"] = M.AddressSize;
  J["min_sm"] = std::max(MR.Minimum.Sm, 0u);
  J["min_ptx"] = ptxVersionName(MR.Minimum.Ptx);
  json Fns = json::array();
  for (const FunctionRequirements &F : MR.Functions) {
    json JF;
    JF["name"] = F.Fn->Name.str();
    JF["kind"] = F.Fn->IsEntry ? "entry" : "func";
    JF["line"] = R.Source->lineColumn(F.Fn->Loc).Line;
    json Ps = json::array();
    for (const VariableDecl &P : F.Fn->Sig.Params)
      Ps.push_back(
          {{"name", P.Name.str()}, {"type", paramType(P)}, {"size", P.sizeInBytes()}, {"align", P.alignment()}});
    JF["params"] = Ps;
    JF["min_sm"] = F.Minimum.Sm;
    JF["min_ptx"] = ptxVersionName(F.Minimum.Ptx);
    JF["sm_set_by"] = sources(*R.Source, F.SmSetBy);
    JF["ptx_set_by"] = sources(*R.Source, F.PtxSetBy);
    Fns.push_back(JF);
  }
  J["functions"] = Fns;
  if (!Sms.empty()) {
    json Ts = json::array();
    for (unsigned Sm : Sms) {
      auto Reasons = reasonsCannotRun(M, MR, Sm, R.Source.get());
      Ts.push_back({{"sm", Sm}, {"name", smName(Sm)}, {"runs", Reasons.empty()}, {"reasons", Reasons}});
    }
    J["targets"] = Ts;
  }
  return J;
}

void printText(const FrontendResult &R, const ModuleRequirements &MR, const std::vector<unsigned> &Sms) {
  const Module &M = *R.module();
  llvm::raw_ostream &OS = llvm::outs();
  OS << R.Source->name() << ": PTX ISA " << ptxVersionName(M.Version.value()) << ", .target "
     << smName(M.Tgt.Sm, M.Tgt.Suffix) << ", " << MR.Functions.size() << " function(s)\n";
  OS << "module needs " << (MR.Minimum.Sm ? smName(MR.Minimum.Sm) : "any sm") << " and PTX ISA "
     << ptxVersionName(MR.Minimum.Ptx) << "\n";
  for (const FunctionRequirements &F : MR.Functions) {
    OS << '\n' << (F.Fn->IsEntry ? "kernel " : "function ") << F.Fn->Name << '\n';
    for (const VariableDecl &P : F.Fn->Sig.Params)
      OS << "  param " << P.Name << ": " << paramType(P) << " (" << P.sizeInBytes() << " bytes, align " << P.alignment()
         << ")\n";
    OS << "  needs " << smName(F.Minimum.Sm) << ", PTX ISA " << ptxVersionName(F.Minimum.Ptx) << '\n';
    size_t Shown = 0;
    for (const RequirementSource &S : F.SmSetBy) {
      if (Shown++ == 3) {
        OS << "    ... and " << (F.SmSetBy.size() - 3) << " more\n";
        break;
      }
      OS << "    " << smName(S.Needs.Sm) << " set by '" << S.Instruction << "' at " << where(*R.Source, S.Loc) << '\n';
    }
  }
  if (!Sms.empty())
    OS << '\n';
  for (unsigned Sm : Sms) {
    auto Reasons = reasonsCannotRun(M, MR, Sm, R.Source.get());
    OS << smName(Sm) << ": " << (Reasons.empty() ? "can run" : "cannot run") << '\n';
    for (const std::string &Why : Reasons)
      OS << "  " << Why << '\n';
  }
}

} // namespace

void ptxforge::tools::addCheckCommand(CLI::App &App, Runner &Run) {
  auto *Cmd = App.add_subcommand("check", "Compatibility report: minimum compute capability and PTX ISA version "
                                          "per module and function, and which targets can run it");
  auto File = std::make_shared<std::string>();
  auto Sms = std::make_shared<std::vector<std::string>>();
  auto Json = std::make_shared<bool>(false);
  Cmd->add_option("file", *File, "PTX file ('-' for standard input)")->required();
  Cmd->add_option("--sm", *Sms, "compute capabilities to test, e.g. 75,80,90 or sm_75,sm_80")->delimiter(',');
  Cmd->add_flag("--json", *Json, "print the report as JSON (format in README.md)");
  Cmd->callback([&Run, File, Sms, Json] {
    Run = [File, Sms, Json] {
      std::vector<unsigned> Targets;
      for (std::string S : *Sms) {
        if (S.rfind("sm_", 0) == 0 || S.rfind("compute_", 0) == 0)
          S = S.substr(S.find('_') + 1);
        unsigned V = 0;
        if (S.empty() || llvm::StringRef(S).getAsInteger(10, V) || !isKnownSm(V)) {
          llvm::errs() << "ptxforge check: error: unknown compute capability '" << S << "'\n";
          return int(ExitUsage);
        }
        Targets.push_back(V);
      }
      auto R = loadPtx(*File);
      if (!R || !R->ok())
        return int(ExitInputError);
      ModuleRequirements MR = computeRequirements(*R->module());
      if (*Json)
        std::cout << report(*R, MR, Targets).dump(2) << std::endl;
      else
        printText(*R, MR, Targets);
      return int(ExitOk);
    };
  });
}
