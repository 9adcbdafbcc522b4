// Streams run their work in order on their own threads; the legacy stream and blocking streams wait for each
// other; events record points and times.
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Driver.h"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace ptxforge::driver;

namespace {
Context &streamContext() {
  static Context *C = [] {
    REQUIRE(takeStatus(Driver::get().initialize()) == Status::Success);
    auto Ctx = Driver::get().createContext(0, 0);
    REQUIRE(static_cast<bool>(Ctx));
    ContextStack::pop();
    return *Ctx;
  }();
  return *C;
}
} // namespace

TEST_CASE("work on one stream runs in order") {
  Context &Ctx = streamContext();
  auto S = Ctx.createStream(Stream::Kind::NonBlocking, 1, 0);
  REQUIRE(static_cast<bool>(S));
  std::vector<int> Order;
  for (int I = 0; I < 50; ++I)
    Ctx.submit(*S, [&Order, I] { Order.push_back(I); });
  (*S)->last().wait();
  REQUIRE(Order.size() == 50);
  for (int I = 0; I < 50; ++I)
    CHECK(Order[I] == I);
  CHECK((*S)->idle());
  CHECK(takeStatus(Ctx.destroyStream(*S)) == Status::Success);
}

TEST_CASE("a blocked stream is not idle, and the legacy stream waits for blocking streams") {
  Context &Ctx = streamContext();
  auto Blocking = Ctx.createStream(Stream::Kind::Blocking, 0, 0);
  auto Independent = Ctx.createStream(Stream::Kind::NonBlocking, 1, 0);
  REQUIRE(static_cast<bool>(Blocking));
  REQUIRE(static_cast<bool>(Independent));
  std::atomic<bool> Gate{false};
  std::atomic<int> Seen{0};
  Ctx.submit(*Blocking, [&] {
    while (!Gate.load())
      std::this_thread::yield();
    Seen = 1;
  });
  StreamPoint Legacy = Ctx.submit(nullptr, [&] { Seen = Seen.load() * 10 + 2; });
  StreamPoint Other = Ctx.submit(*Independent, [] {});
  Other.wait(); // the non-blocking stream does not wait for anybody
  CHECK_FALSE((*Blocking)->idle());
  CHECK_FALSE(Legacy.reached());
  Gate = true;
  Legacy.wait();
  CHECK(Seen.load() == 12);
  CHECK(takeStatus(Ctx.destroyStream(*Blocking)) == Status::Success);
  CHECK(takeStatus(Ctx.destroyStream(*Independent)) == Status::Success);
}

TEST_CASE("events record points and times") {
  Context &Ctx = streamContext();
  auto S = Ctx.createStream(Stream::Kind::NonBlocking, 1, 0);
  REQUIRE(static_cast<bool>(S));
  Event *Start = Ctx.createEvent(0, true), *End = Ctx.createEvent(0, true);
  CHECK(Start->completed()); // never recorded
  Start->record(*S);
  Ctx.submit(*S, [] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); });
  End->record(*S);
  End->synchronize();
  CHECK(Start->completed());
  CHECK(End->completed());
  auto A = Start->lastRecord(), B = End->lastRecord();
  REQUIRE(static_cast<bool>(A));
  REQUIRE(static_cast<bool>(B));
  CHECK(std::chrono::duration<double, std::milli>(B->When - A->When).count() >= 19.0);
  Ctx.destroyEvent(Start);
  Ctx.destroyEvent(End);
  CHECK(takeStatus(Ctx.destroyStream(*S)) == Status::Success);
}
