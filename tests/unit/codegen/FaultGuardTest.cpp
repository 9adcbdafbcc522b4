// The fault guard (the process's one SIGSEGV/SIGBUS/SIGFPE/SIGILL handler, which kernel launches and the
// driver's copies share) turns faults inside the guarded call into values and leaves the thread usable; stack
// overflows are caught on the alternate signal stack; a handler a program installs later goes behind it.
#include "ptxforge/codegen/FaultGuard.h"

#include <doctest/doctest.h>

#include <csetjmp>
#include <csignal>
#include <thread>

using namespace ptxforge::codegen;

namespace {
sigjmp_buf ForeignJump;
volatile int ForeignFaults = 0;
void foreignHandler(int) {
  ++ForeignFaults;
  siglongjmp(ForeignJump, 1);
}

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

TEST_CASE("a handler installed later goes behind the guard and gets the faults outside guarded calls") {
  struct sigaction Mine {
  }, Before{};
  Mine.sa_handler = foreignHandler;
  sigemptyset(&Mine.sa_mask);
  REQUIRE(sigaction(SIGSEGV, &Mine, &Before) == 0);
  // The program's handler is in front now; the guarded call puts the guard back in front of it.
  auto F = runWithFaultGuard([] { (void)*static_cast<volatile int *>(nullptr); });
  REQUIRE(F);
  CHECK(F->Signal == SIGSEGV);
  CHECK(F->Pc != 0);
  CHECK(ForeignFaults == 0);
  if (sigsetjmp(ForeignJump, 1) == 0)
    (void)*static_cast<volatile int *>(nullptr);
  CHECK(ForeignFaults == 1);
  sigaction(SIGSEGV, &Before, nullptr);
}
