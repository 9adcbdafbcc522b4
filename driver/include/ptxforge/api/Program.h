// A PTX module through the front end: loaded from text or a file, parsed and verified, with its diagnostics,
// its kernels' requirements (the minimum compute capability and PTX ISA version, and the instructions that set
// them) and the compatibility check against a compute capability. Compiling it is Device::compile.
#pragma once

#include "ptxforge/api/Diagnostic.h"
#include "ptxforge/api/Expected.h"
#include "ptxforge/api/Export.h"

#include <memory>
#include <string>
#include <vector>

namespace ptxforge {

/// A compute capability: 7.5, 8.0, 9.0 ... (PTX's sm_75, sm_80, sm_90).
struct ComputeCapability {
  unsigned Major = 9, Minor = 0;

  /// major*10+minor: 75 for 7.5, the number PTX targets use.
  unsigned value() const { return Major * 10 + Minor; }
  static ComputeCapability fromValue(unsigned V) { return {V / 10, V % 10}; }
  /// "sm_75".
  std::string name() const { return "sm_" + std::to_string(value()); }
};

/// One instruction that raises a function's requirement.
struct RequirementSource {
  std::string Instruction; ///< `redux.sync.add.u32`
  unsigned Line = 0, Column = 0;
  unsigned Sm = 0;  ///< compute capability it needs, as 80 for 8.0
  unsigned Ptx = 0; ///< PTX ISA version it needs, as 70 for 7.0
};

/// What one function (kernel or `.func`) needs.
struct FunctionRequirements {
  std::string Name;
  bool IsKernel = false;
  unsigned MinSm = 0, MinPtx = 0;         ///< 0 when no instruction raises them
  std::vector<RequirementSource> SmSetBy; ///< the instructions that need MinSm
};

/// What the module needs: the maximum over its functions, and each function's.
struct Requirements {
  unsigned MinSm = 0, MinPtx = 0;
  std::vector<FunctionRequirements> Functions; ///< in source order
};

struct LoadOptions {
  unsigned ParseThreads = 0; ///< threads parsing functions in parallel; 0: one per core
};

/// A parsed and verified PTX module. Immutable: copies share it, and every method may be called from any
/// number of threads at once.
class PTXFORGE_API Program {
public:
  /// Runs the front end over Ptx. Errors in the PTX fail with ErrorCode::InvalidPtx (or UnsupportedPtxVersion)
  /// and carry every diagnostic; Name is the file name diagnostics show.
  static Expected<Program> fromText(std::string Ptx, std::string Name = "<memory>", const LoadOptions &Options = {});
  /// Reads Path (FileError when it cannot) and loads it as fromText does.
  static Expected<Program> fromFile(const std::string &Path, const LoadOptions &Options = {});

  const std::string &name() const;
  /// Warnings and notes of the module (a module with errors never becomes a Program).
  const std::vector<Diagnostic> &diagnostics() const;
  /// The `.version` as major*10+minor (90 for 9.0), and the `.target` (90 and "sm_90a" for sm_90a).
  unsigned ptxVersion() const;
  unsigned targetSm() const;
  std::string targetName() const;
  /// The `.entry` functions with bodies, in source order.
  std::vector<std::string> kernelNames() const;

  /// The minimum compute capability and PTX ISA version of the module and of each function.
  Requirements requirements() const;
  /// Why a device of compute capability CC cannot run the module (a `.target` above it, an `sm_XXa` target of
  /// another device, an instruction it lacks), as error diagnostics; empty when it can.
  std::vector<Diagnostic> checkTarget(ComputeCapability CC) const;
  bool canRunOn(ComputeCapability CC) const { return checkTarget(CC).empty(); }

  struct Impl;
  /// The implementation (for the rest of the library).
  const Impl &impl() const { return *I; }

private:
  friend struct Impl;
  explicit Program(std::shared_ptr<const Impl> I) : I(std::move(I)) {}
  std::shared_ptr<const Impl> I;
};

} // namespace ptxforge
