// The kernel profile JIT'd code writes into (codegen::KernelProfile): each launch worker names its launch's
// profile for the helpers the code calls, which take no argument for it (the generic loop's rounds are rare, and
// a pointer through the thread context would cost every kernel a field).
#pragma once

#include "Runtime.h"

#include "ptxforge/codegen/Launch.h"

namespace ptxforge::codegen::exec {

/// While alive, the calling thread's helpers count into Profile (null: nowhere).
class ProfileScope {
public:
  explicit ProfileScope(KernelProfile *Profile);
  ~ProfileScope();
  ProfileScope(const ProfileScope &) = delete;
  ProfileScope &operator=(const ProfileScope &) = delete;

private:
  KernelProfile *Saved;
};

void registerProfileHelpers(HelperTable &T);

} // namespace ptxforge::codegen::exec
