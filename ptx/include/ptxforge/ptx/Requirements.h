// What a module needs to run: the minimum compute capability and PTX ISA version of each function and of the
// module, and the instructions that set them. Read from OpcodeTable.def, like the verifier.
#pragma once

#include "ptxforge/ptx/Module.h"
#include "ptxforge/ptx/OpcodeInfo.h"

#include <string>
#include <vector>

namespace ptxforge::ptx {

/// The requirement of one instruction (opcode row raised by matching features); Why names the feature.
Requirement instructionRequirement(const Instruction &I, std::string *Why = nullptr);

/// The requirement of I measured against a module's `.target` Sm: OpcodeTable.def writes everything that
/// predates sm_20 as sm_20, so an sm_1x target meets those (PTX is forward compatible: an older `.target`
/// runs on any newer device, with its ISA's semantics, see impliesFtz). True when Sm has I.
bool targetHas(const Instruction &I, unsigned Sm);

/// Whether the `.target` of M implies `.ftz` on I: for sm_1x targets, single-precision instructions flush
/// subnormal inputs and results to sign-preserving zero (PTX ISA, each instruction's "Subnormal numbers"
/// notes), which sm_20 and later do only with `.ftz`.
bool impliesFtz(const Module &M, const Instruction &I);

/// The lowest PTX ISA version that knows a `.target` (sm_90 -> 78), 0 if unknown.
unsigned ptxVersionForTarget(unsigned Sm, char Suffix);
/// True for the sm_XX numbers NVIDIA has defined.
bool isKnownSm(unsigned Sm);

struct RequirementSource {
  SourceLoc Loc;
  std::string Instruction; ///< `redux.sync.add.u32`
  Requirement Needs;
};

struct FunctionRequirements {
  const Function *Fn = nullptr;
  Requirement Minimum;                     ///< max over its instructions (sm 0 when none raise it)
  std::vector<RequirementSource> SmSetBy;  ///< the instructions that need Minimum.Sm
  std::vector<RequirementSource> PtxSetBy; ///< the instructions that need Minimum.Ptx
};

struct ModuleRequirements {
  Requirement Minimum;
  std::vector<FunctionRequirements> Functions; ///< definitions (with bodies), in source order
};

ModuleRequirements computeRequirements(const Module &M);

/// Whether PTX whose `.target` is sm_<TargetSm><TargetSuffix> may be compiled for the target sm_<Sm><Suffix>
/// (`compute_90a`, `sm_100f`): a plain target for any later architecture, an `a` target only for itself, an `f`
/// target for the `f` and `a` targets of its family at or above it. A device of compute capability Sm runs what its
/// `a` target (Sm, 'a') allows.
bool targetAllows(unsigned TargetSm, char TargetSuffix, unsigned Sm, char Suffix);

/// Whether a device of compute capability Sm can load and run M, and why not (empty when it can): its `.target`,
/// then the instructions that need more (at most 8 reasons; Source, when given, places them).
std::vector<std::string> reasonsCannotRun(const Module &M, const ModuleRequirements &R, unsigned Sm,
                                          const class SourceBuffer *Source = nullptr);

/// Whether M can be compiled for the target Name (`compute_90a`: Sm 90, Suffix 'a'), and why not (empty when it
/// can), as reasonsCannotRun says it for a device.
std::vector<std::string> reasonsCannotCompile(const Module &M, const ModuleRequirements &R, unsigned Sm, char Suffix,
                                              const std::string &Name, const class SourceBuffer *Source = nullptr);

/// `sm_80`; PTX versions as `7.0`.
std::string smName(unsigned Sm, char Suffix = 0);
std::string ptxVersionName(unsigned V);

} // namespace ptxforge::ptx
