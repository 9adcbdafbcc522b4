// Memcheck mode (LoweringOptions::Memcheck; PTXFORGE_MEMCHECK at the edges): what the checks in generated code
// know of the memory a launch may reach, and the log of what they found, in compute-sanitizer's words. The
// owner of the memory describes it (the driver its reserved range and allocations, the CLI its buffers), the
// runtime (codegen/exec/Memcheck.cpp) checks every global, shared and generic access against it, and the edge
// prints the log: the library never prints.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace ptxforge::codegen {

struct MemcheckAllocation {
  uint64_t Base = 0, Size = 0;
  /// initcheck: one byte per byte of the allocation, nonzero once something wrote it (a copy, a fill, a kernel's
  /// store). Null: not tracked (memory the host may write directly: managed, page-locked, registered).
  uint8_t *Initialized = nullptr;
  bool contains(uint64_t A, uint64_t Bytes) const {
    return A >= Base && A - Base <= Size && Size - (A - Base) >= Bytes;
  }
};

struct MemcheckMemory {
  std::vector<MemcheckAllocation> Allocations; ///< sorted by Base, disjoint
  /// Addresses of [ArenaBegin, ArenaEnd) outside every allocation are invalid (the driver's reserved device range:
  /// guard gaps and freed allocations). Outside the arena only the rest of an allocation's last 4 KiB page is
  /// known to be invalid (buffers from the host heap); other addresses (stacks, module globals) are left alone.
  uint64_t ArenaBegin = 0, ArenaEnd = 0;
};

/// What the checks found, shared by a process's launches. Thread-safe.
class MemcheckLog {
public:
  /// compute-sanitizer's default print limit: later errors are counted, not printed.
  static constexpr unsigned PrintLimit = 100;
  void report(std::string Text);
  /// A shared-memory hazard of one byte between two accesses (racecheck counts them per pair of instructions).
  void hazard(const char *First, const char *FirstKind, const char *Second, const char *SecondKind);
  /// The reports not yet taken, each a block of "========= " lines, the hazards aggregated per pair.
  std::string take();
  /// Errors so far: reports plus pairs of racing instructions.
  unsigned errors() const;
  /// "========= ERROR SUMMARY: N errors" and, past the print limit, how many were not printed.
  std::string summary() const;

private:
  mutable std::mutex Lock;
  std::string Pending;
  unsigned Reports = 0, Unprinted = 0, Races = 0;
  std::map<std::tuple<const char *, const char *, const char *, const char *>, uint64_t> Hazards;
};

} // namespace ptxforge::codegen
