// Graphs and their nodes, graph allocations, and instantiated graphs (GraphExec): a launch queues the nodes on
// one stream in an order that puts every node after its dependencies, which the stream's order then keeps.
#include "ptxforge/driver/Graph.h"
#include "ptxforge/codegen/DeviceRuntime.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Module.h"
#include "ptxforge/driver/Stream.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <sstream>
#include <utility>

using namespace ptxforge;
using namespace ptxforge::driver;

// ---- graph allocations ----
namespace {
struct AllocationState {
  uint64_t Bytes = 0;
  bool Live = false;     ///< its alloc node ran and nothing freed it since
  bool Orphaned = false; ///< no graph holds its alloc node: the next free gives the memory back
  bool Claimed = false;  ///< in queue order: an alloc node was launched and no free was queued since
};
struct GraphMemoryTable {
  std::mutex Lock;
  std::map<uint64_t, AllocationState> Entries;
  uint64_t Committed = 0, High = 0;
};
GraphMemoryTable &table() {
  static GraphMemoryTable &T = *new GraphMemoryTable; // graphs may be destroyed during exit
  return T;
}
void release(uint64_t Address) { llvm::consumeError(DeviceMemory::get().free(Address, {MemoryKind::Device})); }
} // namespace

llvm::Expected<std::shared_ptr<GraphAllocation>> GraphAllocation::create(Context &Ctx, uint64_t Bytes) {
  if (!Bytes)
    return makeError(Status::InvalidValue, "a graph allocation of 0 bytes");
  auto Address = DeviceMemory::get().allocate(Bytes, MemoryKind::Device, &Ctx);
  if (!Address)
    return Address.takeError();
  GraphMemoryTable &T = table();
  std::scoped_lock L(T.Lock);
  T.Entries[*Address] = AllocationState{Bytes};
  return std::shared_ptr<GraphAllocation>(new GraphAllocation(*Address, Bytes));
}

GraphAllocation::~GraphAllocation() {
  GraphMemoryTable &T = table();
  std::unique_lock L(T.Lock);
  auto It = T.Entries.find(Address);
  if (It == T.Entries.end())
    return;
  if (It->second.Live) {
    It->second.Orphaned = true; // the program frees it later, outside any graph
    return;
  }
  T.Entries.erase(It);
  L.unlock();
  release(Address);
}

void GraphMemory::markAllocated(uint64_t Address) {
  GraphMemoryTable &T = table();
  std::scoped_lock L(T.Lock);
  auto It = T.Entries.find(Address);
  if (It == T.Entries.end() || It->second.Live)
    return;
  It->second.Live = true;
  T.Committed += It->second.Bytes;
  T.High = std::max(T.High, T.Committed);
}

bool GraphMemory::free(uint64_t Address) {
  GraphMemoryTable &T = table();
  std::unique_lock L(T.Lock);
  auto It = T.Entries.find(Address);
  if (It == T.Entries.end())
    return false;
  if (It->second.Live)
    T.Committed -= It->second.Bytes;
  It->second.Live = false;
  if (!It->second.Orphaned)
    return true;
  T.Entries.erase(It);
  L.unlock();
  release(Address);
  return true;
}

bool GraphMemory::claim(uint64_t Address) {
  GraphMemoryTable &T = table();
  std::scoped_lock L(T.Lock);
  auto It = T.Entries.find(Address);
  return It != T.Entries.end() && !std::exchange(It->second.Claimed, true);
}

bool GraphMemory::claimed(uint64_t Address) {
  GraphMemoryTable &T = table();
  std::scoped_lock L(T.Lock);
  auto It = T.Entries.find(Address);
  return It != T.Entries.end() && It->second.Claimed;
}

void GraphMemory::unclaim(uint64_t Address) {
  GraphMemoryTable &T = table();
  std::scoped_lock L(T.Lock);
  if (auto It = T.Entries.find(Address); It != T.Entries.end())
    It->second.Claimed = false;
}

bool GraphMemory::isGraphAllocation(uint64_t Address) {
  GraphMemoryTable &T = table();
  std::scoped_lock L(T.Lock);
  return T.Entries.count(Address) != 0;
}

uint64_t GraphMemory::committedBytes() {
  std::scoped_lock L(table().Lock);
  return table().Committed;
}

uint64_t GraphMemory::highBytes() {
  std::scoped_lock L(table().Lock);
  return table().High;
}

void GraphMemory::resetHigh() {
  std::scoped_lock L(table().Lock);
  table().High = table().Committed;
}

// ---- nodes and graphs ----
namespace {
Registry<GraphNode> &liveNodes() {
  static Registry<GraphNode> &R = *new Registry<GraphNode>;
  return R;
}
Registry<Graph> &liveGraphs() {
  static Registry<Graph> &R = *new Registry<Graph>;
  return R;
}
} // namespace

GraphNode::GraphNode(Graph &Owner, NodeType Type) : Owner(Owner), Type(Type) { liveNodes().add(this); }
GraphNode::~GraphNode() { liveNodes().remove(this); }
bool GraphNode::isLive(const void *P) { return liveNodes().contains(P); }

void GraphNode::copyParamsFrom(const GraphNode &Other) {
  Kernel = Other.Kernel;
  Copy = Other.Copy;
  Memset = Other.Memset;
  Host = Other.Host;
  Child = Other.Child ? Other.Child->clone() : nullptr;
  Ev = Other.Ev;
  Alloc = Other.Alloc;
  FreeAddress = Other.FreeAddress;
  Conditional.Handle = Other.Conditional.Handle;
  Conditional.Type = Other.Conditional.Type;
  Conditional.Bodies.clear();
  Conditional.BodyList.clear();
  for (const auto &B : Other.Conditional.Bodies) {
    std::shared_ptr<Graph> Body = B->clone();
    Body->Parent = &Owner;
    Conditional.BodyList.push_back(Body.get());
    Conditional.Bodies.push_back(std::move(Body));
  }
}

ConditionalHandle::ConditionalHandle(uint32_t Default, unsigned Flags)
    : Value(codegen::createGraphConditional()), Default(Default), Flags(Flags) {}
ConditionalHandle::~ConditionalHandle() { codegen::releaseGraphConditional(Value); }

std::shared_ptr<ConditionalHandle> Graph::createConditional(uint32_t Default, unsigned Flags) {
  Conditions.push_back(std::make_shared<ConditionalHandle>(Default, Flags));
  return Conditions.back();
}

std::shared_ptr<ConditionalHandle> Graph::findConditional(uint64_t Value) const {
  for (const Graph *G = this; G; G = G->Parent)
    for (const auto &H : G->Conditions)
      if (H->value() == Value)
        return H;
  return nullptr;
}

void Graph::makeBodies(GraphNode &N, unsigned Count) {
  for (unsigned I = 0; I < Count; ++I) {
    auto Body = std::make_shared<Graph>();
    Body->Parent = this;
    N.Conditional.BodyList.push_back(Body.get());
    N.Conditional.Bodies.push_back(std::move(Body));
  }
}

bool Graph::hasConditional() const {
  return llvm::any_of(Nodes, [](const auto &N) {
    return N->Type == NodeType::Conditional ||
           (N->Type == NodeType::ChildGraph && N->Child && N->Child->hasConditional());
  });
}

std::vector<std::shared_ptr<ConditionalHandle>> Graph::launchDefaults() const {
  std::vector<std::shared_ptr<ConditionalHandle>> Out;
  for (const auto &H : Conditions)
    if (H->flags() & ConditionalAssignDefault)
      Out.push_back(H);
  for (const auto &N : Nodes) {
    std::vector<const Graph *> Nested;
    for (const auto &B : N->Conditional.Bodies)
      Nested.push_back(B.get());
    if (N->Child)
      Nested.push_back(N->Child.get());
    for (const Graph *G : Nested)
      for (auto &H : G->launchDefaults())
        Out.push_back(std::move(H));
  }
  return Out;
}

Graph::Graph() { liveGraphs().add(this); }
Graph::~Graph() {
  Nodes.clear();
  liveGraphs().remove(this);
}
bool Graph::isLive(const void *P) { return liveGraphs().contains(P); }

bool Graph::contains(const GraphNode *N) const {
  return llvm::any_of(Nodes, [&](const auto &P) { return P.get() == N; });
}

llvm::Expected<GraphNode *> Graph::addNode(NodeType T, llvm::ArrayRef<GraphNode *> Deps) {
  for (size_t I = 0; I < Deps.size(); ++I) {
    if (!Deps[I] || !contains(Deps[I]))
      return makeError(Status::InvalidValue, "a dependency is not a node of the graph");
    if (llvm::is_contained(Deps.take_front(I), Deps[I]))
      return makeError(Status::InvalidValue, "a dependency is given twice");
  }
  Nodes.push_back(std::unique_ptr<GraphNode>(new GraphNode(*this, T)));
  GraphNode *N = Nodes.back().get();
  for (GraphNode *D : Deps) {
    N->Deps.push_back(D);
    D->Dependents.push_back(N);
  }
  return N;
}

llvm::Error Graph::addEdge(GraphNode *From, GraphNode *To) {
  if (!From || !To || From == To || !contains(From) || !contains(To))
    return makeError(Status::InvalidValue, "an edge between nodes not of the graph");
  if (llvm::is_contained(To->Deps, From))
    return makeError(Status::InvalidValue, "the edge exists");
  To->Deps.push_back(From);
  From->Dependents.push_back(To);
  return llvm::Error::success();
}

llvm::Error Graph::removeEdge(GraphNode *From, GraphNode *To) {
  if (!From || !To || !contains(From) || !contains(To) || !llvm::is_contained(To->Deps, From))
    return makeError(Status::InvalidValue, "no such edge");
  llvm::erase(To->Deps, From);
  llvm::erase(From->Dependents, To);
  return llvm::Error::success();
}

void Graph::destroyNode(GraphNode *N) {
  for (GraphNode *D : N->Deps)
    llvm::erase(D->Dependents, N);
  for (GraphNode *D : N->Dependents)
    llvm::erase(D->Deps, N);
  for (auto It = ClonedFrom.begin(); It != ClonedFrom.end();)
    It = It->second == N ? ClonedFrom.erase(It) : std::next(It);
  llvm::erase_if(Nodes, [&](const auto &P) { return P.get() == N; });
}

std::vector<GraphNode *> Graph::roots() const {
  std::vector<GraphNode *> Out;
  for (const auto &N : Nodes)
    if (N->Deps.empty())
      Out.push_back(N.get());
  return Out;
}

std::vector<std::pair<GraphNode *, GraphNode *>> Graph::edges() const {
  std::vector<std::pair<GraphNode *, GraphNode *>> Out;
  for (const auto &N : Nodes)
    for (GraphNode *D : N->Deps)
      Out.emplace_back(D, N.get());
  return Out;
}

llvm::Expected<std::vector<GraphNode *>> Graph::topologicalOrder() const {
  // Kahn's algorithm, taking ready nodes in creation order so that the order is stable.
  std::map<const GraphNode *, size_t> Waiting;
  std::vector<GraphNode *> Out, Ready;
  for (const auto &N : Nodes) {
    Waiting[N.get()] = N->Deps.size();
    if (N->Deps.empty())
      Ready.push_back(N.get());
  }
  for (size_t I = 0; I < Ready.size(); ++I) {
    Out.push_back(Ready[I]);
    for (GraphNode *D : Ready[I]->Dependents)
      if (--Waiting[D] == 0)
        Ready.push_back(D);
  }
  if (Out.size() != Nodes.size())
    return makeError(Status::InvalidValue, "the graph has a cycle");
  return Out;
}

std::unique_ptr<Graph> Graph::clone() const {
  auto Copy = std::make_unique<Graph>();
  Copy->Conditions = Conditions;
  Copy->Parent = Parent;
  std::map<const GraphNode *, GraphNode *> Map;
  for (const auto &N : Nodes) {
    Copy->Nodes.push_back(std::unique_ptr<GraphNode>(new GraphNode(*Copy, N->Type)));
    GraphNode *C = Copy->Nodes.back().get();
    C->copyParamsFrom(*N);
    Map[N.get()] = C;
  }
  for (const auto &N : Nodes)
    for (GraphNode *D : N->Deps) {
      Map[N.get()]->Deps.push_back(Map[D]);
      Map[D]->Dependents.push_back(Map[N.get()]);
    }
  // A clone of a clone still finds the first graph's nodes.
  for (auto &[Original, Mine] : ClonedFrom)
    Map[Original] = Map[Mine];
  Copy->ClonedFrom = std::move(Map);
  return Copy;
}

GraphNode *Graph::cloneOf(const GraphNode *Original) const {
  auto It = ClonedFrom.find(Original);
  return It == ClonedFrom.end() ? nullptr : It->second;
}

namespace {
const char *typeName(NodeType T) {
  switch (T) {
  case NodeType::Kernel:
    return "kernel";
  case NodeType::Memcpy:
    return "memcpy";
  case NodeType::Memset:
    return "memset";
  case NodeType::Host:
    return "host";
  case NodeType::ChildGraph:
    return "graph";
  case NodeType::Empty:
    return "empty";
  case NodeType::WaitEvent:
    return "wait_event";
  case NodeType::EventRecord:
    return "event_record";
  case NodeType::MemAlloc:
    return "mem_alloc";
  case NodeType::MemFree:
    return "mem_free";
  case NodeType::Conditional:
    return "conditional";
  }
  return "node";
}
} // namespace

std::string Graph::dot() const {
  std::ostringstream OS;
  std::map<const GraphNode *, size_t> Index;
  OS << "digraph graph_" << static_cast<const void *>(this) << " {\n";
  for (size_t I = 0; I < Nodes.size(); ++I) {
    const GraphNode &N = *Nodes[I];
    Index[&N] = I;
    OS << "  node" << I << " [label=\"" << I << " " << typeName(N.type());
    if (N.type() == NodeType::Kernel && N.Kernel.Fn)
      OS << "\\n"
         << N.Kernel.Fn->name().str() << " <<<(" << N.Kernel.Config.Grid.X << "," << N.Kernel.Config.Grid.Y << ","
         << N.Kernel.Config.Grid.Z << "),(" << N.Kernel.Config.Block.X << "," << N.Kernel.Config.Block.Y << ","
         << N.Kernel.Config.Block.Z << ")>>>";
    OS << "\"];\n";
  }
  for (auto &[From, To] : edges())
    OS << "  node" << Index[From] << " -> node" << Index[To] << ";\n";
  OS << "}\n";
  return OS.str();
}

// ---- instantiated graphs ----
namespace {
llvm::Error flatten(const Graph &G, std::vector<GraphNode *> &Order) {
  auto Nodes = G.topologicalOrder();
  if (!Nodes)
    return Nodes.takeError();
  for (GraphNode *N : *Nodes) {
    if (N->type() == NodeType::ChildGraph && N->Child) {
      if (auto E = flatten(*N->Child, Order))
        return E;
      continue;
    }
    Order.push_back(N);
  }
  return llvm::Error::success();
}

llvm::Error runNode(Context &Ctx, Stream *S, const GraphNode &N);

/// The body a conditional node runs for condition V, or null.
const Graph *selectBody(const ConditionalNodeParams &P, uint32_t V) {
  switch (P.Type) {
  case ConditionalType::If:
    return V ? P.Bodies[0].get() : P.Bodies.size() > 1 ? P.Bodies[1].get() : nullptr;
  case ConditionalType::While:
    return V ? P.Bodies[0].get() : nullptr;
  case ConditionalType::Switch:
    return V < P.Bodies.size() ? P.Bodies[V].get() : nullptr;
  }
  return nullptr;
}

/// A conditional node, on the worker of the stream its graph was launched into once the nodes before it have
/// run: reads the condition, runs the body it selects to completion on a stream of its own (the worker waits,
/// as the GPU's graph does before the nodes after the conditional), and for While reads it again.
void runConditional(Context &Ctx, const ConditionalNodeParams &P) {
  std::unique_ptr<Stream> Inner;
  while (Driver::get().stickyError() == Status::Success) {
    const Graph *Body = selectBody(P, codegen::graphConditional(P.Handle->value()));
    if (!Body)
      return;
    if (!Inner)
      Inner = std::make_unique<Stream>(Ctx, Stream::Kind::NonBlocking, /*CU_STREAM_NON_BLOCKING*/ 1, 0);
    std::vector<GraphNode *> Order;
    if (auto E = flatten(*Body, Order)) {
      llvm::consumeError(std::move(E));
      return;
    }
    for (const GraphNode *N : Order)
      if (auto E = runNode(Ctx, Inner.get(), *N)) {
        llvm::consumeError(std::move(E)); // a failed launch is the sticky error or was checked when added
        break;
      }
    Inner->last().wait();
    if (P.Type != ConditionalType::While)
      return;
  }
}

/// Queues what one node does on S.
llvm::Error runNode(Context &Ctx, Stream *S, const GraphNode &N) {
  switch (N.type()) {
  case NodeType::Kernel:
    return launch(Ctx, S, *N.Kernel.Fn, N.Kernel.Config, N.Kernel.Params, N.Kernel.Kind);
  case NodeType::Memcpy:
    return copyMemory(Ctx, S, /*Async=*/true, N.Copy);
  case NodeType::Memset: {
    const MemsetNodeParams &M = N.Memset;
    return fillMemory(Ctx, S, /*Async=*/true, M.Dst, M.Pitch, M.Value, M.ElementBytes, M.Width, M.Height);
  }
  case NodeType::Host:
    Ctx.submit(S, [H = N.Host] {
      if (Driver::get().stickyError() == Status::Success)
        H.Fn(H.UserData);
    });
    return llvm::Error::success();
  case NodeType::WaitEvent:
    if (StreamPoint P = N.Ev->point(); P.Progress)
      Ctx.submit(S, [] {}, {P});
    return llvm::Error::success();
  case NodeType::EventRecord:
    N.Ev->record(S);
    return llvm::Error::success();
  case NodeType::MemAlloc:
    GraphMemory::claim(N.Alloc->address());
    Ctx.submit(S, [A = N.Alloc->address()] { GraphMemory::markAllocated(A); });
    return llvm::Error::success();
  case NodeType::MemFree:
    GraphMemory::unclaim(N.FreeAddress);
    Ctx.submit(S, [A = N.FreeAddress] { GraphMemory::free(A); });
    return llvm::Error::success();
  case NodeType::Conditional:
    Ctx.submit(S, [&Ctx, P = N.Conditional] { runConditional(Ctx, P); });
    return llvm::Error::success();
  case NodeType::ChildGraph:
  case NodeType::Empty:
    return llvm::Error::success();
  }
  return llvm::Error::success();
}
} // namespace

llvm::Expected<std::unique_ptr<GraphExec>> GraphExec::instantiate(const Graph &G, uint64_t Flags) {
  std::unique_ptr<GraphExec> X(new GraphExec);
  if (G.hasConditional()) {
    if (G.Instantiations->load() > 0)
      return makeError(Status::NotSupported, "a graph with conditional nodes may have one instantiation at a time");
    X->Instantiations = G.Instantiations;
    ++*X->Instantiations;
  }
  X->G = G.clone();
  X->Flags = Flags;
  X->Defaults = X->G->launchDefaults();
  if (auto E = flatten(*X->G, X->Order))
    return E;
  return X;
}

GraphExec::~GraphExec() {
  if (Instantiations)
    --*Instantiations;
}

llvm::Error GraphExec::launch(Context &Ctx, Stream *S) const {
  if (auto E = Driver::get().checkSticky())
    return E;
  // What an earlier launch allocated must have been freed, unless the exec frees it itself at each launch.
  if (!(Flags & InstantiateAutoFreeOnLaunch))
    for (const GraphNode *N : Order)
      if (N->type() == NodeType::MemAlloc && GraphMemory::claimed(N->Alloc->address()))
        return makeError(Status::InvalidValue, "an allocation of the graph's last launch was not freed");
  if (!Defaults.empty())
    Ctx.submit(S, [Handles = Defaults] {
      for (const auto &H : Handles)
        codegen::setGraphConditional(H->value(), H->defaultValue());
    });
  for (const GraphNode *N : Order)
    if (auto E = runNode(Ctx, S, *N))
      return E;
  return llvm::Error::success();
}

GraphNode *GraphExec::nodeFor(const GraphNode *Original) const { return G->cloneOf(Original); }

namespace {
/// Whether Mine can take New's parameters (cuGraphExecUpdate's rules), child graphs compared recursively.
GraphUpdateResult matchForUpdate(const Graph &Mine, const Graph &New);

/// One pair of nodes at the same position: same type, an alloc or free unchanged, a kernel's context kept.
GraphUpdateResult::Kind matchNode(const GraphNode &A, const GraphNode &B) {
  if (A.type() != B.type())
    return GraphUpdateResult::NodeTypeChanged;
  // A graph allocation keeps its address: alloc and free nodes cannot change.
  if ((A.type() == NodeType::MemAlloc && A.Alloc != B.Alloc) ||
      (A.type() == NodeType::MemFree && A.FreeAddress != B.FreeAddress))
    return GraphUpdateResult::NotSupported;
  if (A.type() == NodeType::Kernel && &A.Kernel.Fn->module().context() != &B.Kernel.Fn->module().context())
    return GraphUpdateResult::FunctionChanged;
  if (A.type() == NodeType::ChildGraph && A.Child && B.Child)
    return matchForUpdate(*A.Child, *B.Child).Result;
  return GraphUpdateResult::Success;
}

GraphUpdateResult matchForUpdate(const Graph &Mine, const Graph &New) {
  GraphUpdateResult R;
  const auto &Ours = Mine.nodes();
  const auto &Theirs = New.nodes();
  if (Ours.size() != Theirs.size()) {
    R.Result = GraphUpdateResult::TopologyChanged;
    return R;
  }
  // Nodes pair up in creation order (as captures of the same code make them); each pair must agree on type
  // and on the positions of its dependencies.
  std::map<const GraphNode *, size_t> MyIndex, TheirIndex;
  for (size_t I = 0; I < Ours.size(); ++I)
    MyIndex[Ours[I].get()] = I, TheirIndex[Theirs[I].get()] = I;
  for (size_t I = 0; I < Ours.size(); ++I) {
    const GraphNode &A = *Ours[I], &B = *Theirs[I];
    R.ErrorNode = &B;
    std::multiset<size_t> DA, DB;
    for (GraphNode *D : A.dependencies())
      DA.insert(MyIndex[D]);
    for (GraphNode *D : B.dependencies())
      DB.insert(TheirIndex[D]);
    R.Result = A.type() == B.type() && DA != DB ? GraphUpdateResult::TopologyChanged : matchNode(A, B);
    if (R.Result != GraphUpdateResult::Success)
      return R;
  }
  return GraphUpdateResult();
}
} // namespace

GraphUpdateResult GraphExec::update(const Graph &New) { return updateFrom(*G, New); }

GraphUpdateResult GraphExec::updateChild(GraphNode &Child, const Graph &New) { return updateFrom(*Child.Child, New); }

GraphUpdateResult GraphExec::updateFrom(Graph &Mine, const Graph &New) {
  GraphUpdateResult R = matchForUpdate(Mine, New);
  if (R.Result != GraphUpdateResult::Success)
    return R;
  for (size_t I = 0; I < Mine.nodes().size(); ++I)
    Mine.nodes()[I]->copyParamsFrom(*New.nodes()[I]);
  Order.clear();
  llvm::consumeError(flatten(*G, Order)); // same topology: cannot fail
  return R;
}
