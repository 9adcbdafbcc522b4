// See Profile.h.
#include "Profile.h"

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

namespace {
thread_local KernelProfile *CurrentProfile = nullptr;
} // namespace

ProfileScope::ProfileScope(KernelProfile *Profile) : Saved(CurrentProfile) { CurrentProfile = Profile; }

ProfileScope::~ProfileScope() { CurrentProfile = Saved; }

extern "C" {

/// A round of a region kernel's generic loop in which every thread it runs stands in one cut loop whose resume
/// loop the split left out (codegen/lib/BarrierRegions.cpp, emitResumeLoops).
static void ptxrt_resumable_round() {
  if (KernelProfile *P = CurrentProfile)
    P->ResumableRounds.fetch_add(1, std::memory_order_relaxed);
}

} // extern "C"

void ptxforge::codegen::exec::registerProfileHelpers(HelperTable &T) { T.push_back(PTXRT_HELPER(ptxrt_resumable_round)); }
