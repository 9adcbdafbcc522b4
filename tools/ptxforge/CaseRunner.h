// Running conformance-format cases (../shared/conformance/FORMAT.md): `ptxforge run --case/--cases`.
#pragma once

#include "ptxforge/codegen/Memcheck.h"

#include <string>
#include <vector>

namespace ptxforge::tools {

struct CaseFile {
  std::string Dir;  ///< the case directory
  std::string Name; ///< `int/bfe_64`, or `int/bfe_64@kernel.sm_90.ptx` for an alt_ptx file
  std::string Ptx;  ///< the PTX file in Dir
  unsigned MinSm = 0;
};

/// The case itself and one entry per alt_ptx file (empty when Dir holds no readable case.json).
std::vector<CaseFile> listCaseFiles(const std::string &Dir);

/// Runs one PTX file of a case; returns "" when every compared buffer matches, else the first mismatches.
std::string runCaseFile(const std::string &Dir, const std::string &PtxFile, double *Millis = nullptr);

std::string readFile(const std::string &Path);

/// Memcheck mode (`--memcheck`, PTXFORGE_MEMCHECK): what the checks know of the buffers a launch gets (host heap
/// memory, so no reserved range: see codegen::MemcheckMemory).
codegen::MemcheckMemory memcheckMemory(std::vector<codegen::MemcheckAllocation> Buffers);

} // namespace ptxforge::tools
