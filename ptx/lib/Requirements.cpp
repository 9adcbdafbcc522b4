// Minimum compute capability / PTX ISA version of instructions, functions and modules, from OpcodeTable.def.
#include "ptxforge/ptx/Requirements.h"
#include "ptxforge/ptx/Architectures.h"

#include "ptxforge/ptx/Printer.h"
#include "ptxforge/ptx/SourceBuffer.h"

#include <algorithm>
#include <optional>

using namespace ptxforge::ptx;

bool ptxforge::ptx::isKnownSm(unsigned Sm) {
  const Architecture *A = findArchitecture(Sm);
  return A && A->PtxVersion;
}

unsigned ptxforge::ptx::ptxVersionForTarget(unsigned Sm, char Suffix) {
  const Architecture *A = findArchitecture(Sm);
  if (!A)
    return 0;
  if (Suffix == 'a')
    return std::max(A->PtxVersion, Sm == 90 ? 80u : A->PtxVersion);
  if (Suffix == 'f')
    return A->PtxVersion ? std::max(A->PtxVersion, 88u) : 0;
  return A->PtxVersion;
}

std::string ptxforge::ptx::smName(unsigned Sm, char Suffix) {
  std::string S = "sm_" + std::to_string(Sm);
  if (Suffix)
    S += Suffix;
  return S;
}

std::string ptxforge::ptx::ptxVersionName(unsigned V) { return std::to_string(V / 10) + "." + std::to_string(V % 10); }

Requirement ptxforge::ptx::instructionRequirement(const Instruction &I, std::string *Why) {
  const OpcodeInfo &Info = getOpcodeInfo(I.Op);
  Requirement R = Info.Minimum;
  if (Why)
    *Why = spell(I.Op).str();
  auto present = [&](Qualifier Need) {
    for (const Qualifier &Q : I.Qualifiers)
      if (Q.K == Need.K && Q.Value == Need.Value)
        return true;
    return false;
  };
  for (const OpcodeFeature &F : getOpcodeFeatures(I.Op)) {
    if (F.VectorWidth && F.VectorWidth != I.vectorWidth())
      continue;
    if (!std::all_of(F.Needs.begin(), F.Needs.end(), present))
      continue;
    if (F.Minimum.Sm > R.Sm && Why)
      *Why = F.Spelling;
    R.Sm = std::max(R.Sm, F.Minimum.Sm);
    R.Ptx = std::max(R.Ptx, F.Minimum.Ptx);
  }
  return R;
}

/// The oldest target OpcodeTable.def names: instructions older than it are written with it.
constexpr unsigned OldestTableSm = 20;

bool ptxforge::ptx::targetHas(const Instruction &I, unsigned Sm) {
  return instructionRequirement(I).Sm <= std::max(Sm, OldestTableSm);
}

bool ptxforge::ptx::impliesFtz(const Module &M, const Instruction &I) {
  if (!M.Tgt.Sm || M.Tgt.Sm >= 20 || I.has(Modifier::Ftz) ||
      !getOpcodeInfo(I.Op).AllowedModifiers.test(static_cast<size_t>(Modifier::Ftz)))
    return false;
  for (unsigned K = 0, N = I.typeCount(); K < N; ++K)
    if (I.type(K) == ScalarType::F32)
      return true;
  return false;
}

ModuleRequirements ptxforge::ptx::computeRequirements(const Module &M) {
  ModuleRequirements MR;
  for (const auto &FPtr : M.Functions) {
    const Function &F = *FPtr;
    if (!F.HasBody)
      continue;
    FunctionRequirements FR;
    FR.Fn = &F;
    for (const Instruction &I : F.Instructions) {
      Requirement R = instructionRequirement(I);
      RequirementSource Src{I.Loc, instructionName(I), R};
      if (R.Sm > FR.Minimum.Sm) {
        FR.Minimum.Sm = R.Sm;
        FR.SmSetBy.clear();
      }
      if (R.Sm == FR.Minimum.Sm && FR.SmSetBy.size() < 16)
        FR.SmSetBy.push_back(Src);
      if (R.Ptx > FR.Minimum.Ptx) {
        FR.Minimum.Ptx = R.Ptx;
        FR.PtxSetBy.clear();
      }
      if (R.Ptx == FR.Minimum.Ptx && FR.PtxSetBy.size() < 16)
        FR.PtxSetBy.push_back(Src);
    }
    MR.Minimum.Sm = std::max(MR.Minimum.Sm, FR.Minimum.Sm);
    MR.Minimum.Ptx = std::max(MR.Minimum.Ptx, FR.Minimum.Ptx);
    MR.Functions.push_back(std::move(FR));
  }
  return MR;
}

bool ptxforge::ptx::targetAllows(unsigned TargetSm, char TargetSuffix, unsigned Sm, char Suffix) {
  if (TargetSuffix == 'a')
    return Suffix == 'a' && Sm == TargetSm;
  if (TargetSuffix == 'f')
    return Suffix != 0 && Sm / 10 == TargetSm / 10 && Sm >= TargetSm;
  return Sm >= TargetSm;
}

namespace {

using namespace ptxforge::ptx;

/// Why M's `.target` keeps it from the target (Sm, Suffix) named Name, or nothing. Device: the target is a device
/// (Suffix 'a'), which a module "runs only on"; a compile target is one a module "compiles only for".
std::optional<std::string> targetReason(const Target &Tgt, unsigned Sm, char Suffix, bool Device,
                                        const std::string &Name) {
  if (targetAllows(Tgt.Sm, Tgt.Suffix, Sm, Suffix))
    return std::nullopt;
  std::string T = "'.target " + smName(Tgt.Sm, Tgt.Suffix) + "'";
  if (!Tgt.Suffix || (Device && Tgt.Sm > Sm))
    return T + " is higher than " + Name;
  std::string Family = "sm_" + std::to_string(Tgt.Sm / 10) + "x family";
  if (Tgt.Suffix == 'a')
    return Device ? T + " runs only on " + smName(Tgt.Sm)
                  : T + " is specific to " + smName(Tgt.Sm) + ": it compiles only for compute_" +
                        std::to_string(Tgt.Sm) + "a";
  return Device ? T + " runs only within the " + Family
                : T + " is specific to the " + Family + ": it compiles only for that family's 'f' and 'a' targets " +
                      "from compute_" + std::to_string(Tgt.Sm) + " on";
}

std::vector<std::string> reasons(const Module &M, const ModuleRequirements &R, unsigned Sm, char Suffix, bool Device,
                                 const std::string &Name, const SourceBuffer *Source) {
  std::vector<std::string> Reasons;
  if (std::optional<std::string> Why = targetReason(M.Tgt, Sm, Suffix, Device, Name))
    Reasons.push_back(std::move(*Why));
  for (const FunctionRequirements &F : R.Functions) {
    if (F.Minimum.Sm <= Sm)
      continue;
    for (const RequirementSource &S : F.SmSetBy) {
      std::string Where;
      if (Source) {
        LineColumn LC = Source->lineColumn(S.Loc);
        Where = " at " + Source->name().str() + ":" + std::to_string(LC.Line) + ":" + std::to_string(LC.Column);
      }
      Reasons.push_back("'" + S.Instruction + "'" + Where + " in '" + F.Fn->Name.str() + "' requires " +
                        smName(S.Needs.Sm));
      if (Reasons.size() >= 8)
        return Reasons;
    }
  }
  return Reasons;
}

} // namespace

std::vector<std::string> ptxforge::ptx::reasonsCannotRun(const Module &M, const ModuleRequirements &R, unsigned Sm,
                                                         const SourceBuffer *Source) {
  return reasons(M, R, Sm, 'a', /*Device=*/true, smName(Sm), Source);
}

std::vector<std::string> ptxforge::ptx::reasonsCannotCompile(const Module &M, const ModuleRequirements &R, unsigned Sm,
                                                             char Suffix, const std::string &Name,
                                                             const SourceBuffer *Source) {
  return reasons(M, R, Sm, Suffix, /*Device=*/false, Name, Source);
}
