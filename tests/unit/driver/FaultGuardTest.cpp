// The fault guard turns faults inside the guarded call into values and leaves the thread usable; stack
// overflows are caught on the alternate signal stack.
#include "ptxforge/driver/FaultGuard.h"

#include <doctest/doctest.h>

#include <csignal>
#include <thread>

using namespace ptxforge::driver;

namespace {
int recurse(volatile int *Depth) {
  volatile char Frame[512];
  Frame[0] = static_cast<char>(*Depth);
  if (++*Depth > (1 << 30)) // never: the stack overflows long before
    return 0;
  return recurse(Depth) + Frame[0];
}
} // namespace

TEST_CASE("a null load is a fault, and the guard can be used again") {
  for (int I = 0; I < 3; ++I) {
    auto F = runWithFaultGuard([] { (void)*static_cast<volatile int *>(nullptr); });
    REQUIRE(F);
    CHECK(F->Signal == SIGSEGV);
    CHECK(F->Address == 0);
  }
  int X = 0;
  CHECK_FALSE(runWithFaultGuard([&] { X = 42; }));
  CHECK(X == 42);
}

TEST_CASE("failGuardedCall ends the call with its reason") {
  auto F = runWithFaultGuard([] { failGuardedCall(17); });
  REQUIRE(F);
  CHECK(F->Signal == 0);
  CHECK(F->Reason == 17);
}

TEST_CASE("a stack overflow on another thread is caught") {
  std::optional<Fault> F;
  std::thread T([&] {
    volatile int Depth = 0;
    F = runWithFaultGuard([&] { recurse(&Depth); });
  });
  T.join();
  REQUIRE(F);
  CHECK(F->Signal == SIGSEGV);
}
