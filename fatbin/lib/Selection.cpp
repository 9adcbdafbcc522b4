// The -gencode selection rules (shared/fatbins/README.md, observed on a 9.0 GPU), adapted to a PTX-only
// implementation with its own host-native entries.
#include "ptxforge/fatbin/Selection.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace ptxforge::fatbin {

bool isCompatible(uint32_t Arch, uint64_t Flags, unsigned ComputeCapability) {
  if (hasFlag(Flags, EntryFlag::ArchSpecific))
    return Arch == ComputeCapability;
  if (hasFlag(Flags, EntryFlag::FamilySpecific))
    return Arch / 10 == ComputeCapability / 10 && ComputeCapability >= Arch;
  return ComputeCapability >= Arch;
}

/// Orders same-arch PTX variants: the more specific target may use more of the device.
static int specificity(const Entry &E) {
  if (E.Header.isArchSpecific())
    return 2;
  if (E.Header.isFamilySpecific())
    return 1;
  return 0;
}

static std::string ccName(unsigned CC) { return std::to_string(CC / 10) + "." + std::to_string(CC % 10); }

static std::string listArchs(ArrayRef<const Entry *> Entries, bool (Entry::*Is)() const) {
  std::vector<std::string> Names;
  for (const Entry *E : Entries)
    if ((E->*Is)())
      Names.push_back(E->archName());
  return join(Names, ", ");
}

Selection selectEntry(ArrayRef<const Entry *> Entries, const SelectionRequest &R) {
  const unsigned CC = R.ComputeCapability;
  Selection S;

  if (!R.Jit.ForcePtxJit) {
    // Host ISA levels come most capable first, so the first level with an entry wins.
    for (const std::string &Level : R.HostIsaLevels) {
      auto It =
          find_if(Entries, [&](const Entry *E) { return E->isHostNative() && E->arch() == CC && E->Options == Level; });
      if (It != Entries.end()) {
        S.Status = SelectionStatus::Selected;
        S.Chosen = *It;
        S.Message = "host-native code for compute capability " + ccName(CC) + " (" + Level + ")";
        return S;
      }
    }
  }

  const Entry *Best = nullptr;
  for (const Entry *E : Entries) {
    if (!E->isPtx() || !isCompatible(E->arch(), E->Header.Flags, CC))
      continue;
    if (!Best || E->arch() > Best->arch() || (E->arch() == Best->arch() && specificity(*E) > specificity(*Best)))
      Best = E;
  }
  if (Best) {
    std::string Target = "compute_" + Best->archName().substr(3);
    if (R.Jit.DisablePtxJit) {
      S.Status = SelectionStatus::JitDisabled;
      S.Message = "PTX JIT compilation is disabled (CUDA_DISABLE_PTX_JIT) and the only code for compute "
                  "capability " +
                  ccName(CC) + " is PTX " + Target;
      return S;
    }
    S.Status = SelectionStatus::Selected;
    S.Chosen = Best;
    S.Message = "PTX " + Target + " for compute capability " + ccName(CC);
    return S;
  }

  bool HasPtx = any_of(Entries, [](const Entry *E) { return E->isPtx(); });
  bool HasElf = any_of(Entries, [](const Entry *E) { return E->isElf(); });
  if (!HasPtx && HasElf) {
    S.Status = SelectionStatus::PtxMissing;
    S.Message = "no binary for GPU: PTX is missing (only SASS for " + listArchs(Entries, &Entry::isElf) +
                ", which ptxforge cannot run)";
    return S;
  }
  S.Status = SelectionStatus::NoBinaryForGpu;
  S.Message = HasPtx
                  ? "no binary for GPU: no PTX entry runs on compute capability " + ccName(CC) + " (PTX for " +
                        listArchs(Entries, &Entry::isPtx) + ")"
                  : "no binary for GPU: the fatbinary holds no PTX or host code for compute capability " + ccName(CC);
  return S;
}

Selection selectEntry(ArrayRef<Entry> Entries, const SelectionRequest &R) {
  std::vector<const Entry *> Pointers;
  for (const Entry &E : Entries)
    Pointers.push_back(&E);
  return selectEntry(ArrayRef<const Entry *>(Pointers), R);
}

StringRef statusName(SelectionStatus S) {
  switch (S) {
  case SelectionStatus::Selected:
    return "selected";
  case SelectionStatus::PtxMissing:
    return "ptx-missing";
  case SelectionStatus::NoBinaryForGpu:
    return "no-binary-for-gpu";
  case SelectionStatus::JitDisabled:
    return "jit-disabled";
  }
  return "unknown";
}

} // namespace ptxforge::fatbin
