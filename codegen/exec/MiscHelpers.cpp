// Runtime helpers for clocks, exit and trap, and address-space queries.
#include "Runtime.h"

#include <algorithm>
#include <chrono>
#include <csetjmp>
#include <cstdio>
#include <x86intrin.h>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

extern "C" {

static uint64_t ptxrt_clock64() { return __rdtsc(); }

static uint64_t ptxrt_globaltimer() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// `exit` inside a callee: unwind to the thread's start.
static void ptxrt_exit(ThreadContext *C) {
  BlockState &B = blockOf(C);
  std::longjmp(B.ExitPoints[C->LinearTid].Buf, 1);
}

} // extern "C"

/// Ends the block with Kind as the launch's fault. C: the failing thread's context; its %tid names the thread
/// where ThreadKnown (a call from the thread's code: block loops store each thread's ids into the context they
/// pass to calls). Location: the PTX instruction's file:line:col, where the call knows it.
[[noreturn]] void exec::raiseFault(ThreadContext *C, LaunchFault Kind, std::string What, bool ThreadKnown,
                                   const char *Location) {
  BlockState &B = blockOf(C);
  B.Trapped = true;
  if (B.Error.empty()) {
    B.Error = std::move(What);
    B.Fault = Kind;
    FaultSite &S = B.Site;
    S.HasBlock = true;
    std::copy(C->Ctaid, C->Ctaid + 3, S.Block);
    S.HasThread = ThreadKnown;
    if (S.HasThread)
      std::copy(C->Tid, C->Tid + 3, S.Thread);
    if (Location)
      S.Location = Location;
  }
  std::longjmp(B.ExitPoints[B.BlockLoop ? 0 : C->LinearTid].Buf, 1);
}

extern "C" {

/// Code compiled before traps named their PTX line (a compute cache entry of an older build) calls this one.
static void ptxrt_trap(ThreadContext *C) { raiseFault(C, LaunchFault::Trap, "trap instruction executed", true); }

static void ptxrt_trap_at(ThreadContext *C, const char *Location) {
  raiseFault(C, LaunchFault::Trap, "trap instruction executed", true, Location);
}

/// An indirect call whose target is no function's entry (codegen's call dispatcher found none).
static void ptxrt_bad_call_target(ThreadContext *C, uint64_t Target) {
  char Buf[32];
  snprintf(Buf, sizeof Buf, "0x%llx", static_cast<unsigned long long>(Target));
  raiseFault(C, LaunchFault::IllegalInstruction,
             std::string("illegal instruction: indirect call to ") + Buf + ", which is not the entry of a function",
             true);
}

/// A thread's accumulated access addresses had low bits set that its access sizes forbid.
/// C: the thread's context, or (block loops check once per row of threads) a context whose %ctaid names the block.
static void ptxrt_misaligned(ThreadContext *C) {
  raiseFault(C, LaunchFault::MisalignedAddress, "misaligned address: a load or store not aligned to its size",
             !blockOf(C).BlockLoop);
}

/// Shared memory is recognised by the caller; anything else a kernel can address is global or local. Local
/// variables live on the executing thread's stack, which no global allocation overlaps.
static int ptxrt_is_global(uint64_t Addr) {
  char Probe;
  uint64_t Sp = reinterpret_cast<uint64_t>(&Probe);
  return !(Addr <= Sp + (1u << 20) && Addr + (8u << 20) >= Sp);
}
}

void ptxforge::codegen::exec::registerMiscHelpers(HelperTable &T) {
  T.insert(T.end(), {PTXRT_HELPER(ptxrt_clock64), PTXRT_HELPER(ptxrt_globaltimer), PTXRT_HELPER(ptxrt_exit),
                     PTXRT_HELPER(ptxrt_trap), PTXRT_HELPER(ptxrt_trap_at), PTXRT_HELPER(ptxrt_bad_call_target),
                     PTXRT_HELPER(ptxrt_misaligned), PTXRT_HELPER(ptxrt_is_global)});
}
