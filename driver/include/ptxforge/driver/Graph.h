// CUDA graphs: a Graph is a DAG of nodes (kernel launches, copies, fills, host functions, child graphs, event
// records and waits, allocations and frees), built explicitly or by capturing streams (Capture.h). A GraphExec
// is an instantiated copy of a graph, its nodes flattened into one order in which every node comes after its
// dependencies; a launch queues them in that order on one stream, through the same calls the stream API uses,
// so the stream's order satisfies every edge.
#pragma once

#include "ptxforge/driver/Copy.h"
#include "ptxforge/driver/Launch.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace ptxforge::driver {

class Context;
class Event;
class Function;
class Graph;
class Stream;

/// CUgraphNodeType's values.
enum class NodeType {
  Kernel = 0,
  Memcpy = 1,
  Memset = 2,
  Host = 3,
  ChildGraph = 4,
  Empty = 5,
  WaitEvent = 6,
  EventRecord = 7,
  MemAlloc = 10,
  MemFree = 11,
  Conditional = 13,
};

struct KernelNodeParams {
  Function *Fn = nullptr;
  codegen::LaunchConfig Config;
  std::vector<char> Params; ///< packed as Function::packParams packs them
  LaunchKind Kind = LaunchKind::Normal;
};

struct MemsetNodeParams {
  uint64_t Dst = 0, Pitch = 0;
  uint32_t Value = 0;
  unsigned ElementBytes = 1;
  uint64_t Width = 0, Height = 1;
};

struct HostNodeParams {
  void (*Fn)(void *) = nullptr;
  void *UserData = nullptr;
};

/// CUgraphConditionalHandleFlags: the default value is assigned at the start of every launch.
constexpr unsigned ConditionalAssignDefault = 1;

/// A conditional node's condition (cuGraphConditionalHandleCreate): a cell of codegen's that kernels set with
/// cudaGraphSetConditional, made for one graph (and the graphs nested in it). Shared by the graph, its
/// instantiation and the nodes that use it, so it outlives whichever goes first.
class ConditionalHandle {
public:
  ConditionalHandle(uint32_t Default, unsigned Flags);
  ~ConditionalHandle();
  ConditionalHandle(const ConditionalHandle &) = delete;
  ConditionalHandle &operator=(const ConditionalHandle &) = delete;
  /// What programs hold and kernels pass to cudaGraphSetConditional.
  uint64_t value() const { return Value; }
  uint32_t defaultValue() const { return Default; }
  unsigned flags() const { return Flags; }

private:
  uint64_t Value;
  uint32_t Default;
  unsigned Flags;
};

/// CUgraphConditionalNodeType's values.
enum class ConditionalType { If = 0, While = 1, Switch = 2 };

struct ConditionalNodeParams {
  std::shared_ptr<ConditionalHandle> Handle;
  ConditionalType Type = ConditionalType::If;
  /// The bodies: If runs [0] on a non-zero condition and [1] (when there) on zero, While runs [0] while the
  /// condition is non-zero, Switch runs [n] for condition n. Owned by the node; an exec's are its own copies.
  std::vector<std::shared_ptr<Graph>> Bodies;
  /// Bodies as handles: the array cuGraphAddNode hands out (phGraph_out), valid while the node is.
  std::vector<Graph *> BodyList;
};

/// Memory a graph allocates (an alloc node). Its address is fixed when the node is made and stays valid for
/// every launch: the memory is committed then and given back when it is freed (by a free node, cuMemFree or
/// cuMemFreeAsync) and no graph holds its alloc node any more.
class GraphAllocation {
public:
  static llvm::Expected<std::shared_ptr<GraphAllocation>> create(Context &Ctx, uint64_t Bytes);
  ~GraphAllocation();
  uint64_t address() const { return Address; }
  uint64_t size() const { return Bytes; }

private:
  GraphAllocation(uint64_t Address, uint64_t Bytes) : Address(Address), Bytes(Bytes) {}
  uint64_t Address, Bytes;
};

/// The process's graph allocations, by address.
namespace GraphMemory {
/// Marks the allocation at Address live (its alloc node ran).
void markAllocated(uint64_t Address);
/// Frees the graph allocation at Address (a free node, cuMemFree, cuMemFreeAsync): false when Address is none.
bool free(uint64_t Address);
bool isGraphAllocation(uint64_t Address);
/// Launch bookkeeping in the order work is queued: launching an alloc node claims its allocation (false when it
/// was claimed already), queueing a free of it (free node, cuMemFreeAsync, cuMemFree) gives the claim up.
bool claim(uint64_t Address);
bool claimed(uint64_t Address);
void unclaim(uint64_t Address);
/// Bytes of graph allocations committed now (CU_GRAPH_MEM_ATTR_*_MEM_CURRENT).
uint64_t committedBytes();
/// The most committedBytes() has been (CU_GRAPH_MEM_ATTR_*_MEM_HIGH), until resetHigh().
uint64_t highBytes();
void resetHigh();
} // namespace GraphMemory

class GraphNode {
public:
  ~GraphNode();
  /// Whether P is a live node (handles from programs are checked with it).
  static bool isLive(const void *P);
  NodeType type() const { return Type; }
  Graph &graph() const { return Owner; }
  const std::vector<GraphNode *> &dependencies() const { return Deps; }
  const std::vector<GraphNode *> &dependents() const { return Dependents; }

  // What the node does; the fields of its type are meaningful.
  KernelNodeParams Kernel;
  CopyRegion Copy;
  MemsetNodeParams Memset;
  HostNodeParams Host;
  std::unique_ptr<Graph> Child;           ///< ChildGraph: a copy of the graph given
  Event *Ev = nullptr;                    ///< EventRecord, WaitEvent
  std::shared_ptr<GraphAllocation> Alloc; ///< MemAlloc
  uint64_t FreeAddress = 0;               ///< MemFree
  ConditionalNodeParams Conditional;      ///< Conditional

  /// Copies what the node does (not its edges) from Other, a node of the same type.
  void copyParamsFrom(const GraphNode &Other);

private:
  friend class Graph;
  GraphNode(Graph &Owner, NodeType Type);
  Graph &Owner;
  NodeType Type;
  std::vector<GraphNode *> Deps, Dependents;
};

class Graph {
public:
  Graph();
  ~Graph();
  /// Whether P is a live graph (handles from programs are checked with it).
  static bool isLive(const void *P);
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  /// A node of type T after Deps, all nodes of this graph, none twice (InvalidValue otherwise).
  [[nodiscard]] llvm::Expected<GraphNode *> addNode(NodeType T, llvm::ArrayRef<GraphNode *> Deps);
  /// From -> To: both of this graph, distinct, not yet joined (InvalidValue otherwise).
  [[nodiscard]] llvm::Error addEdge(GraphNode *From, GraphNode *To);
  [[nodiscard]] llvm::Error removeEdge(GraphNode *From, GraphNode *To);
  /// Removes N and its edges.
  void destroyNode(GraphNode *N);
  bool contains(const GraphNode *N) const;

  const std::vector<std::unique_ptr<GraphNode>> &nodes() const { return Nodes; }
  std::vector<GraphNode *> roots() const;
  std::vector<std::pair<GraphNode *, GraphNode *>> edges() const;
  /// The nodes, each after its dependencies (InvalidValue for a cycle).
  [[nodiscard]] llvm::Expected<std::vector<GraphNode *>> topologicalOrder() const;

  /// A deep copy (child graphs included); a copy remembers which node of this graph each of its nodes copies.
  std::unique_ptr<Graph> clone() const;
  /// The node of this graph (a clone) that copies Original, or null.
  GraphNode *cloneOf(const GraphNode *Original) const;

  /// "digraph" text of the graph for cuGraphDebugDotPrint.
  std::string dot() const;

  /// cuGraphConditionalHandleCreate: a condition for conditional nodes of this graph and the graphs nested in it.
  std::shared_ptr<ConditionalHandle> createConditional(uint32_t Default, unsigned Flags);
  /// The handle whose value() is Value, made for this graph or a graph it is nested in; null when none.
  std::shared_ptr<ConditionalHandle> findConditional(uint64_t Value) const;
  /// Adds a conditional node's bodies (Count graphs, nested in this one) to N.
  void makeBodies(GraphNode &N, unsigned Count);
  /// Whether a conditional node is in this graph or in a graph nested in it.
  bool hasConditional() const;
  /// The graph whose conditional node holds this one as a body; null for a top-level graph.
  const Graph *parent() const { return Parent; }
  /// Handles whose default every launch assigns (their own and those of nested graphs).
  std::vector<std::shared_ptr<ConditionalHandle>> launchDefaults() const;
  /// Instantiations of this graph alive now: a graph with conditional nodes may have one at a time.
  std::shared_ptr<std::atomic<int>> Instantiations = std::make_shared<std::atomic<int>>(0);

private:
  friend class GraphNode;
  std::vector<std::unique_ptr<GraphNode>> Nodes;
  std::vector<std::shared_ptr<ConditionalHandle>> Conditions;
  const Graph *Parent = nullptr;
  std::map<const GraphNode *, GraphNode *> ClonedFrom; ///< original -> copy, when this graph is a clone
};

/// cuGraphExecUpdate's verdict (CUgraphExecUpdateResult's values) and the nodes it names.
struct GraphUpdateResult {
  enum Kind {
    Success = 0,
    Error = 1,
    TopologyChanged = 2,
    NodeTypeChanged = 3,
    FunctionChanged = 4,
    ParametersChanged = 5,
    NotSupported = 6
  };
  Kind Result = Success;
  const GraphNode *ErrorNode = nullptr, *ErrorFromNode = nullptr;
};

/// CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH: a launch frees what the exec's previous launch allocated.
constexpr uint64_t InstantiateAutoFreeOnLaunch = 1;

class GraphExec {
public:
  /// Instantiates G (which stays the caller's): InvalidValue for a cycle.
  [[nodiscard]] static llvm::Expected<std::unique_ptr<GraphExec>> instantiate(const Graph &G, uint64_t Flags);

  /// Queues the nodes on S (null: the legacy stream) in the flattened order. InvalidValue, as on NVIDIA's
  /// driver, when memory the previous launch allocated is not freed yet (without InstantiateAutoFreeOnLaunch).
  [[nodiscard]] llvm::Error launch(Context &Ctx, Stream *S) const;
  uint64_t flags() const { return Flags; }
  const Graph &graph() const { return *G; }
  /// The node of this exec that instantiates Original (a node of the graph it was made from), or null.
  GraphNode *nodeFor(const GraphNode *Original) const;
  /// Takes the parameters of New's nodes when New has this exec's topology (cuGraphExecUpdate's rules).
  GraphUpdateResult update(const Graph &New);
  /// The same for the graph of Child, a child graph node of this exec (cuGraphExecChildGraphNodeSetParams).
  GraphUpdateResult updateChild(GraphNode &Child, const Graph &New);

  ~GraphExec();

private:
  GraphExec() = default;
  /// Mine (this exec's graph or a graph nested in it) takes New's parameters if it can; the order is rebuilt.
  GraphUpdateResult updateFrom(Graph &Mine, const Graph &New);
  std::shared_ptr<std::atomic<int>> Instantiations; ///< the source graph's count, when it holds conditionals
  std::unique_ptr<Graph> G;
  std::vector<GraphNode *> Order;                           ///< child graphs flattened in
  std::vector<std::shared_ptr<ConditionalHandle>> Defaults; ///< assigned at the start of each launch
  uint64_t Flags = 0;
};

} // namespace ptxforge::driver
