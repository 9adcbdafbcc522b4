// Graphs, their instantiation and launch order, conditional nodes, and stream capture (fork/join through events,
// the errors of illegal calls during a capture, graph memory).
#include "ptxforge/driver/Graph.h"
#include "ptxforge/codegen/DeviceRuntime.h"
#include "ptxforge/driver/Capture.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Memory.h"

#include "TestContext.h"

#include <doctest/doctest.h>

#include <mutex>
#include <vector>

using namespace ptxforge::driver;
using ptxforge::testing::testContext;

namespace {
/// Host functions that append their tag to one list, so a test sees the order nodes ran in.
struct Trace {
  std::mutex Lock;
  std::vector<int> Order;
};
struct Tag {
  Trace *T;
  int Value;
};
void record(void *P) {
  auto *G = static_cast<Tag *>(P);
  std::scoped_lock L(G->T->Lock);
  G->T->Order.push_back(G->Value);
}

GraphNode *hostNode(Graph &G, Tag &T, std::vector<GraphNode *> Deps = {}) {
  auto N = G.addNode(NodeType::Host, Deps);
  REQUIRE(static_cast<bool>(N));
  (*N)->Host = {record, &T};
  return *N;
}

} // namespace

TEST_CASE("graph edges: duplicates, foreign nodes and cycles are refused") {
  Graph G, Other;
  auto A = G.addNode(NodeType::Empty, {});
  auto B = G.addNode(NodeType::Empty, {*A});
  auto C = Other.addNode(NodeType::Empty, {});
  REQUIRE((A && B && C));
  CHECK(takeStatus(G.addEdge(*A, *B)) == Status::InvalidValue); // exists
  CHECK(takeStatus(G.addEdge(*A, *C)) == Status::InvalidValue); // not of G
  CHECK(takeStatus(G.addNode(NodeType::Empty, {*A, *A}).takeError()) == Status::InvalidValue);
  CHECK(G.roots() == std::vector<GraphNode *>{*A});
  CHECK(G.edges().size() == 1);
  REQUIRE(takeStatus(G.addEdge(*B, *A)) == Status::Success); // a cycle: instantiation fails
  CHECK(takeStatus(GraphExec::instantiate(G, 0).takeError()) == Status::InvalidValue);
  CHECK(takeStatus(G.removeEdge(*B, *A)) == Status::Success);
  CHECK(takeStatus(G.removeEdge(*B, *A)) == Status::InvalidValue);
  G.destroyNode(*A);
  CHECK(G.nodes().size() == 1);
  CHECK((*B)->dependencies().empty());
  CHECK(GraphNode::isLive(*B));
  CHECK_FALSE(GraphNode::isLive(*A));
}

TEST_CASE("a launched graph runs each node after its dependencies, child graphs included") {
  Context &Ctx = testContext();
  Trace T;
  Tag Tags[5] = {{&T, 0}, {&T, 1}, {&T, 2}, {&T, 3}, {&T, 4}};
  // Made in an order that is not a topological one: 3 -> 2 -> 1 -> 0, and a child graph (4) before 3.
  Graph G;
  GraphNode *N0 = hostNode(G, Tags[0]);
  GraphNode *N1 = hostNode(G, Tags[1]);
  GraphNode *N2 = hostNode(G, Tags[2]);
  GraphNode *N3 = hostNode(G, Tags[3]);
  Graph Child;
  hostNode(Child, Tags[4]);
  auto C = G.addNode(NodeType::ChildGraph, {});
  REQUIRE(static_cast<bool>(C));
  (*C)->Child = Child.clone();
  REQUIRE(!G.addEdge(N1, N0));
  REQUIRE(!G.addEdge(N2, N1));
  REQUIRE(!G.addEdge(N3, N2));
  REQUIRE(!G.addEdge(*C, N3));
  auto X = GraphExec::instantiate(G, 0);
  REQUIRE(static_cast<bool>(X));
  auto S = Ctx.createStream(Stream::Kind::NonBlocking, 1, 0);
  REQUIRE(static_cast<bool>(S));
  for (int I = 0; I < 3; ++I)
    REQUIRE(takeStatus((*X)->launch(Ctx, *S)) == Status::Success);
  (*S)->last().wait();
  REQUIRE(T.Order.size() == 15);
  CHECK(std::vector<int>(T.Order.begin(), T.Order.begin() + 5) == std::vector<int>{4, 3, 2, 1, 0});
  // The exec is a copy: changing the graph afterwards changes nothing it runs, its own node does.
  N0->Host.UserData = &Tags[4];
  T.Order.clear();
  GraphNode *Mine = (*X)->nodeFor(N0);
  REQUIRE(Mine);
  Mine->Host.UserData = &Tags[2];
  REQUIRE(takeStatus((*X)->launch(Ctx, *S)) == Status::Success);
  (*S)->last().wait();
  CHECK(T.Order == std::vector<int>{4, 3, 2, 1, 2});
  CHECK(takeStatus(Ctx.destroyStream(*S)) == Status::Success);
}

TEST_CASE("an exec takes another graph's parameters only when the topology matches") {
  Trace T;
  Tag A{&T, 1}, B{&T, 2};
  Graph G1, G2, G3;
  hostNode(G1, A, {hostNode(G1, A)});
  hostNode(G2, B, {hostNode(G2, B)});
  hostNode(G3, B);
  hostNode(G3, B);
  auto X = GraphExec::instantiate(G1, 0);
  REQUIRE(static_cast<bool>(X));
  CHECK((*X)->update(G3).Result == GraphUpdateResult::TopologyChanged);
  CHECK((*X)->update(G2).Result == GraphUpdateResult::Success);
  CHECK((*X)->graph().nodes()[0]->Host.UserData == &B);
}

TEST_CASE("an exec's child graph takes another graph's parameters only with the same topology, also in an update") {
  Context &Ctx = testContext();
  Trace T;
  Tag A{&T, 1}, B{&T, 2}, C{&T, 3};
  auto withChild = [](Graph &G, Graph &Child) {
    auto N = G.addNode(NodeType::ChildGraph, {});
    REQUIRE(static_cast<bool>(N));
    (*N)->Child = Child.clone();
    return *N;
  };
  Graph ChildA, ChildB, ChildC, G, Deeper;
  hostNode(ChildA, A);
  hostNode(ChildB, B);
  hostNode(ChildC, C, {hostNode(ChildC, C)});
  GraphNode *N = withChild(G, ChildA);
  auto X = GraphExec::instantiate(G, 0);
  REQUIRE(static_cast<bool>(X));
  GraphNode *Mine = (*X)->nodeFor(N);
  REQUIRE(Mine);
  CHECK((*X)->updateChild(*Mine, ChildC).Result == GraphUpdateResult::TopologyChanged);
  CHECK((*X)->updateChild(*Mine, ChildB).Result == GraphUpdateResult::Success);
  // cuGraphExecUpdate looks into child graphs: one of another topology is refused.
  withChild(Deeper, ChildC);
  CHECK((*X)->update(Deeper).Result == GraphUpdateResult::TopologyChanged);
  auto S = Ctx.createStream(Stream::Kind::NonBlocking, 1, 0);
  REQUIRE(static_cast<bool>(S));
  REQUIRE(takeStatus((*X)->launch(Ctx, *S)) == Status::Success);
  (*S)->last().wait();
  CHECK(T.Order == std::vector<int>{2});
  CHECK(takeStatus(Ctx.destroyStream(*S)) == Status::Success);
}

TEST_CASE("capture across two streams joined by events builds the graph instead of running") {
  Context &Ctx = testContext();
  auto S1 = Ctx.createStream(Stream::Kind::NonBlocking, 1, 0);
  auto S2 = Ctx.createStream(Stream::Kind::NonBlocking, 1, 0);
  REQUIRE((S1 && S2));
  Event *Fork = Ctx.createEvent(0, false), *Join = Ctx.createEvent(0, false);
  Trace T;
  Tag Tags[4] = {{&T, 0}, {&T, 1}, {&T, 2}, {&T, 3}};

  REQUIRE(takeStatus(beginCapture(*S1, CaptureMode::Global)) == Status::Success);
  CHECK(captureInfo(*S1).Status == CaptureStatus::Active);
  REQUIRE(!launchHostFunction(Ctx, *S1, record, &Tags[0]));
  REQUIRE(!recordEvent(Ctx, *S1, *Fork));
  REQUIRE(!waitEvent(Ctx, *S2, *Fork)); // S2 joins the capture
  CHECK(captureInfo(*S2).Id == captureInfo(*S1).Id);
  REQUIRE(!launchHostFunction(Ctx, *S1, record, &Tags[1]));
  REQUIRE(!launchHostFunction(Ctx, *S2, record, &Tags[2]));
  REQUIRE(!recordEvent(Ctx, *S2, *Join));
  CHECK(takeStatus(checkEventUsable(*Join)) == Status::CapturedEvent);
  REQUIRE(!waitEvent(Ctx, *S1, *Join));
  REQUIRE(!launchHostFunction(Ctx, *S1, record, &Tags[3]));
  CHECK(captureInfo(*S1).Dependencies.size() == 1);
  auto G = endCapture(*S1);
  REQUIRE(static_cast<bool>(G));
  CHECK(T.Order.empty()); // captured, not run
  CHECK(captureInfo(*S2).Status == CaptureStatus::None);
  CHECK((*G)->nodes().size() == 4);
  CHECK((*G)->edges().size() == 4); // 0->1, 0->2, 1->3, 2->3
  CHECK((*G)->nodes()[3]->dependencies().size() == 2);

  auto X = GraphExec::instantiate(**G, 0);
  REQUIRE(static_cast<bool>(X));
  REQUIRE(!(*X)->launch(Ctx, *S2));
  (*S2)->last().wait();
  REQUIRE(T.Order.size() == 4);
  CHECK(T.Order.front() == 0);
  CHECK(T.Order.back() == 3);
  CHECK(!Ctx.destroyStream(*S1));
  CHECK(!Ctx.destroyStream(*S2));
  Ctx.destroyEvent(Fork);
  Ctx.destroyEvent(Join);
}

TEST_CASE("illegal calls during a capture fail and invalidate it") {
  Context &Ctx = testContext();
  auto S1 = Ctx.createStream(Stream::Kind::Blocking, 0, 0);
  auto S2 = Ctx.createStream(Stream::Kind::NonBlocking, 1, 0);
  REQUIRE((S1 && S2));
  Event *E = Ctx.createEvent(0, false);

  CHECK(takeStatus(beginCapture(nullptr, CaptureMode::Global)) == Status::StreamCaptureUnsupported);
  CHECK(takeStatus(endCapture(*S1).takeError()) == Status::IllegalState);

  // Waiting for the capturing stream.
  REQUIRE(!beginCapture(*S1, CaptureMode::Global));
  CHECK(takeStatus(beginCapture(*S1, CaptureMode::Global)) == Status::IllegalState);
  CHECK(takeStatus(checkSynchronize(Ctx, *S1)) == Status::StreamCaptureUnsupported);
  CHECK(captureInfo(*S1).Status == CaptureStatus::Invalidated);
  CHECK(takeStatus(launchHostFunction(Ctx, *S1, record, nullptr)) == Status::StreamCaptureInvalidated);
  CHECK(takeStatus(endCapture(*S1).takeError()) == Status::StreamCaptureInvalidated);

  // A potentially unsafe call in global mode; relaxed mode allows it.
  REQUIRE(!beginCapture(*S1, CaptureMode::Global));
  CHECK(takeStatus(checkUnsafeCall()) == Status::StreamCaptureUnsupported);
  CHECK(takeStatus(endCapture(*S1).takeError()) == Status::StreamCaptureInvalidated);
  REQUIRE(!beginCapture(*S1, CaptureMode::Relaxed));
  CHECK(takeStatus(checkUnsafeCall()) == Status::Success);
  // The legacy stream would wait for the blocking stream's captured work.
  CHECK(takeStatus(captureTarget(Ctx, nullptr).takeError()) == Status::StreamCaptureImplicit);
  CHECK(takeStatus(endCapture(*S1).takeError()) == Status::StreamCaptureInvalidated);

  // A stream forked off and not joined back; a wait on work outside the capture.
  REQUIRE(!beginCapture(*S1, CaptureMode::Global));
  REQUIRE(!recordEvent(Ctx, *S1, *E));
  REQUIRE(!waitEvent(Ctx, *S2, *E));
  REQUIRE(!launchHostFunction(Ctx, *S2, record, nullptr));
  CHECK(takeStatus(endCapture(*S2).takeError()) == Status::StreamCaptureUnmatched);
  CHECK(takeStatus(endCapture(*S1).takeError()) == Status::StreamCaptureUnjoined);
  CHECK(captureInfo(*S2).Status == CaptureStatus::None);
  REQUIRE(!recordEvent(Ctx, *S2, *E)); // recorded outside any capture now
  REQUIRE(!beginCapture(*S1, CaptureMode::Global));
  CHECK(takeStatus(waitEvent(Ctx, *S1, *E)) == Status::StreamCaptureIsolation);
  CHECK(takeStatus(endCapture(*S1).takeError()) == Status::StreamCaptureInvalidated);

  // A graph launched into a capture (NVIDIA's runtime refuses it, whatever the graph and the mode).
  Graph Empty;
  REQUIRE(static_cast<bool>(Empty.addNode(NodeType::Empty, {})));
  auto X = GraphExec::instantiate(Empty, 0);
  REQUIRE(static_cast<bool>(X));
  REQUIRE(!beginCapture(*S1, CaptureMode::Relaxed));
  CHECK(takeStatus(launchGraph(Ctx, *S1, **X)) == Status::StreamCaptureUnsupported);
  CHECK(takeStatus(endCapture(*S1).takeError()) == Status::StreamCaptureInvalidated);

  CHECK(!Ctx.destroyStream(*S1));
  CHECK(!Ctx.destroyStream(*S2));
  Ctx.destroyEvent(E);
}

TEST_CASE("graph memory keeps its address across launches and is given back once freed and unowned") {
  Context &Ctx = testContext();
  auto S = Ctx.createStream(Stream::Kind::NonBlocking, 1, 0);
  REQUIRE(static_cast<bool>(S));
  REQUIRE(!beginCapture(*S, CaptureMode::Global));
  auto P = allocateAsync(Ctx, *S, 4096);
  REQUIRE(static_cast<bool>(P));
  CHECK(GraphMemory::isGraphAllocation(*P));
  REQUIRE(!freeAsync(Ctx, *S, *P));
  auto G = endCapture(*S);
  REQUIRE(static_cast<bool>(G));
  REQUIRE((*G)->nodes().size() == 2);
  CHECK((*G)->nodes()[0]->type() == NodeType::MemAlloc);
  CHECK((*G)->nodes()[1]->type() == NodeType::MemFree);
  uint64_t Before = GraphMemory::committedBytes();
  {
    auto X = GraphExec::instantiate(**G, 0);
    REQUIRE(static_cast<bool>(X));
    REQUIRE(!(*X)->launch(Ctx, *S));
    REQUIRE(!(*X)->launch(Ctx, *S));
    (*S)->last().wait();
    CHECK(GraphMemory::committedBytes() == Before);
    CHECK(GraphMemory::highBytes() >= 4096);
    CHECK(DeviceMemory::get().find(*P).has_value());
  }
  G->reset(); // the last holder of the alloc node: the memory goes back
  CHECK_FALSE(GraphMemory::isGraphAllocation(*P));
  CHECK_FALSE(DeviceMemory::get().find(*P).has_value());
  // Without a free node the memory outlives the launch: launching again before it is freed is refused unless
  // the exec frees it itself at each launch.
  REQUIRE(!beginCapture(*S, CaptureMode::Global));
  auto Kept = allocateAsync(Ctx, *S, 4096);
  REQUIRE(static_cast<bool>(Kept));
  auto Keeping = endCapture(*S);
  REQUIRE(static_cast<bool>(Keeping));
  auto Plain = GraphExec::instantiate(**Keeping, 0);
  auto AutoFree = GraphExec::instantiate(**Keeping, InstantiateAutoFreeOnLaunch);
  REQUIRE((Plain && AutoFree));
  REQUIRE(!(*Plain)->launch(Ctx, *S));
  CHECK(takeStatus((*Plain)->launch(Ctx, *S)) == Status::InvalidValue);
  CHECK(takeStatus((*AutoFree)->launch(Ctx, *S)) == Status::Success);
  REQUIRE(!freeAsync(Ctx, *S, *Kept));
  CHECK(takeStatus((*Plain)->launch(Ctx, *S)) == Status::Success);
  REQUIRE(!freeAsync(Ctx, *S, *Kept));
  (*S)->last().wait();

  // A free node needs memory a graph allocated.
  REQUIRE(!beginCapture(*S, CaptureMode::Global));
  CHECK(takeStatus(freeAsync(Ctx, *S, 0x1000)) == Status::InvalidValue);
  CHECK(static_cast<bool>(endCapture(*S)));
  CHECK(!Ctx.destroyStream(*S));
}

namespace {
/// A WHILE body's host node: counts its runs and counts the condition down, as a kernel would through
/// cudaGraphSetConditional.
struct CountDown {
  uint64_t Handle;
  int Runs = 0;
};
void countDown(void *P) {
  auto *C = static_cast<CountDown *>(P);
  ++C->Runs;
  ptxforge::codegen::setGraphConditional(C->Handle, ptxforge::codegen::graphConditional(C->Handle) - 1);
}

GraphNode *conditionalNode(Graph &G, std::shared_ptr<ConditionalHandle> H, ConditionalType T, unsigned Bodies) {
  auto N = G.addNode(NodeType::Conditional, {});
  REQUIRE(static_cast<bool>(N));
  (*N)->Conditional.Handle = std::move(H);
  (*N)->Conditional.Type = T;
  G.makeBodies(**N, Bodies);
  return *N;
}
} // namespace

TEST_CASE("conditional nodes run the body their condition selects; defaults are assigned at each launch") {
  Context &Ctx = testContext();
  auto S = Ctx.createStream(Stream::Kind::NonBlocking, 1, 0);
  REQUIRE(static_cast<bool>(S));

  // WHILE, its handle's default (3) assigned at every launch: three rounds each time.
  Graph G;
  auto H = G.createConditional(3, ConditionalAssignDefault);
  CHECK(G.findConditional(H->value()).get() == H.get());
  CountDown C{H->value()};
  GraphNode *W = conditionalNode(G, H, ConditionalType::While, 1);
  auto Body = W->Conditional.Bodies[0]->addNode(NodeType::Host, {});
  REQUIRE(static_cast<bool>(Body));
  (*Body)->Host = {countDown, &C};
  CHECK(W->Conditional.Bodies[0]->findConditional(H->value()).get() == H.get()); // a body sees its graph's handles
  CHECK(G.hasConditional());
  auto X = GraphExec::instantiate(G, 0);
  REQUIRE(static_cast<bool>(X));
  CHECK(takeStatus(GraphExec::instantiate(G, 0).takeError()) == Status::NotSupported); // one at a time
  for (int Launch = 1; Launch <= 2; ++Launch) {
    REQUIRE(takeStatus((*X)->launch(Ctx, *S)) == Status::Success);
    (*S)->last().wait();
    CHECK(C.Runs == 3 * Launch);
  }
  X->reset();
  CHECK(static_cast<bool>(GraphExec::instantiate(G, 0))); // the first one is gone

  // SWITCH over three bodies; a handle without the flag keeps what was set (it starts at 0).
  Trace T;
  Tag Tags[3] = {{&T, 0}, {&T, 1}, {&T, 2}};
  Graph G2;
  auto H2 = G2.createConditional(7, 0);
  GraphNode *Sw = conditionalNode(G2, H2, ConditionalType::Switch, 3);
  for (int I = 0; I < 3; ++I)
    hostNode(*Sw->Conditional.Bodies[I], Tags[I]);
  CHECK(!G.findConditional(H2->value())); // another graph's handle
  auto X2 = GraphExec::instantiate(G2, 0);
  REQUIRE(static_cast<bool>(X2));
  for (uint32_t V : {0u, 2u, 5u, 1u}) {
    if (V)
      ptxforge::codegen::setGraphConditional(H2->value(), V);
    REQUIRE(takeStatus((*X2)->launch(Ctx, *S)) == Status::Success);
    (*S)->last().wait(); // the condition is read when the node runs
  }
  CHECK(T.Order == std::vector<int>{0, 2, 1});
  X2->reset();
  CHECK(takeStatus(Ctx.destroyStream(*S)) == Status::Success);
}
