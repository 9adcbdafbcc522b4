// The calling thread's context stack stays readable after the thread's own thread-local destructors ran: exit
// handlers of libraries (cuFFT frees its buffers in a static destructor) call the driver after the main thread's
// thread-local objects are gone.
#include "ptxforge/driver/Driver.h"

#include <doctest/doctest.h>

#include <thread>

using namespace ptxforge::driver;

namespace {
/// Reads the current context from its destructor, which runs after the stack's own (thread-local destructors
/// run in the reverse order of construction, and this one is made before the stack is first used).
struct LateReader {
  Context **Seen = nullptr;
  ~LateReader() {
    if (Seen)
      *Seen = ContextStack::current();
  }
};
thread_local LateReader Reader;
} // namespace

TEST_CASE("a thread's context stack reads empty, not freed memory, from its late thread-local destructors") {
  Context *Seen = reinterpret_cast<Context *>(1);
  std::thread T([&Seen] {
    Reader.Seen = &Seen;
    // Any non-null pointer: the stack only keeps it.
    ContextStack::push(reinterpret_cast<Context *>(&Seen));
    CHECK(ContextStack::current() == reinterpret_cast<Context *>(&Seen));
  });
  T.join();
  CHECK(Seen == nullptr);
}
