// Stream capture. One lock guards every stream's and event's capture state and the list of active captures:
// captures are begun and ended rarely, and the work captured is only recorded, never run, under it.
#include "ptxforge/driver/Capture.h"
#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/MemPool.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Stream.h"

#include "llvm/ADT/STLExtras.h"

#include <atomic>
#include <mutex>
#include <set>

using namespace ptxforge::driver;

namespace {
std::mutex &CaptureLock = *new std::mutex;
std::vector<std::shared_ptr<CaptureSequence>> &Active = *new std::vector<std::shared_ptr<CaptureSequence>>;
std::atomic<uint64_t> NextCaptureId{1};
thread_local CaptureMode ThreadMode = CaptureMode::Global;

/// Every node of C's graph that Nodes depend on, Nodes included.
std::set<const GraphNode *> ancestors(const std::vector<GraphNode *> &Nodes) {
  std::set<const GraphNode *> Seen;
  std::vector<const GraphNode *> Work(Nodes.begin(), Nodes.end());
  while (!Work.empty()) {
    const GraphNode *N = Work.back();
    Work.pop_back();
    if (Seen.insert(N).second)
      Work.insert(Work.end(), N->dependencies().begin(), N->dependencies().end());
  }
  return Seen;
}

/// Ends C: every stream leaves it (CaptureLock held).
void finish(CaptureSequence &C) {
  for (Stream *S : C.Streams) {
    S->Capture.reset();
    S->CaptureDeps.clear();
  }
  C.Streams.clear();
  C.Ended = true;
  llvm::erase_if(Active, [&](const auto &P) { return P.get() == &C; });
}

/// Invalidates the captures of Ctx's streams that a wait on the legacy stream (or the whole context) would
/// wait for; true when there was one (CaptureLock held).
bool invalidateCapturesOf(Context &Ctx, bool WholeContext) {
  bool Found = false;
  for (Stream *T : Ctx.streams())
    if (T->Capture && (WholeContext || T->kind() == Stream::Kind::Blocking)) {
      T->Capture->Invalidated = true;
      Found = true;
    }
  return Found;
}
} // namespace

llvm::Error ptxforge::driver::beginCapture(Stream *S, CaptureMode Mode, Graph *Into, llvm::ArrayRef<GraphNode *> Deps) {
  if (!S)
    return makeError(Status::StreamCaptureUnsupported, "the legacy stream cannot be captured");
  for (GraphNode *N : Deps)
    if (!Into || !Into->contains(N))
      return makeError(Status::InvalidValue, "a dependency is not a node of the graph");
  std::scoped_lock L(CaptureLock);
  if (S->Capture)
    return makeError(Status::IllegalState, "the stream is capturing already");
  auto C = std::make_shared<CaptureSequence>();
  if (Into) {
    C->G.reset();
    C->Into = Into;
  }
  C->Mode = Mode;
  C->Id = NextCaptureId++;
  C->Origin = S;
  C->Thread = std::this_thread::get_id();
  C->Streams.push_back(S);
  S->Capture = C;
  S->CaptureDeps.assign(Deps.begin(), Deps.end());
  Active.push_back(std::move(C));
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Graph>> ptxforge::driver::endCapture(Stream *S) {
  std::scoped_lock L(CaptureLock);
  if (!S || !S->Capture)
    return makeError(Status::IllegalState, "the stream is not capturing");
  std::shared_ptr<CaptureSequence> C = S->Capture;
  if (C->Origin != S)
    return makeError(Status::StreamCaptureUnmatched, "the capture was begun in another stream");
  if (C->Mode != CaptureMode::Relaxed && C->Thread != std::this_thread::get_id())
    return makeError(Status::StreamCaptureWrongThread, "the capture was begun in another thread");
  // Every stream that joined must have been joined back: its last work is something the origin waits for.
  std::set<const GraphNode *> Joined = ancestors(S->CaptureDeps);
  bool Unjoined = false;
  for (Stream *T : C->Streams)
    for (GraphNode *N : T->CaptureDeps)
      Unjoined |= !Joined.count(N);
  finish(*C);
  if (C->Invalidated)
    return makeError(Status::StreamCaptureInvalidated, "the capture was invalidated");
  if (Unjoined)
    return makeError(Status::StreamCaptureUnjoined, "a stream forked from the capture was not joined back");
  return std::move(C->G);
}

CaptureInfo ptxforge::driver::captureInfo(Stream *S) {
  std::scoped_lock L(CaptureLock);
  CaptureInfo I;
  if (!S || !S->Capture)
    return I;
  I.Status = S->Capture->Invalidated ? CaptureStatus::Invalidated : CaptureStatus::Active;
  I.Id = S->Capture->Id;
  I.G = &S->Capture->graph();
  I.IntoGraph = S->Capture->Into != nullptr;
  I.Dependencies = S->CaptureDeps;
  return I;
}

llvm::Error ptxforge::driver::updateCaptureDependencies(Stream *S, llvm::ArrayRef<GraphNode *> Nodes, bool Add) {
  std::scoped_lock L(CaptureLock);
  if (!S || !S->Capture)
    return makeError(Status::IllegalState, "the stream is not capturing");
  for (GraphNode *N : Nodes)
    if (!S->Capture->graph().contains(N))
      return makeError(Status::InvalidValue, "a node not of the capture's graph");
  if (!Add)
    S->CaptureDeps.clear();
  for (GraphNode *N : Nodes)
    if (!llvm::is_contained(S->CaptureDeps, N))
      S->CaptureDeps.push_back(N);
  return llvm::Error::success();
}

CaptureMode ptxforge::driver::exchangeThreadCaptureMode(CaptureMode Mode) { return std::exchange(ThreadMode, Mode); }

void ptxforge::driver::forgetStream(Stream *S) {
  std::scoped_lock L(CaptureLock);
  if (!S->Capture)
    return;
  std::shared_ptr<CaptureSequence> C = S->Capture;
  if (C->Origin == S) {
    C->Invalidated = true;
    finish(*C);
    return;
  }
  llvm::erase(C->Streams, S);
  S->Capture.reset();
  S->CaptureDeps.clear();
}

llvm::Expected<Graph *> ptxforge::driver::captureTarget(Context &Ctx, Stream *S) {
  std::scoped_lock L(CaptureLock);
  if (S) {
    if (!S->Capture)
      return nullptr;
    if (S->Capture->Invalidated)
      return makeError(Status::StreamCaptureInvalidated, "the stream's capture was invalidated");
    return &S->Capture->graph();
  }
  if (invalidateCapturesOf(Ctx, /*WholeContext=*/false))
    return makeError(Status::StreamCaptureImplicit, "the legacy stream would wait for a capturing stream");
  return nullptr;
}

llvm::Error ptxforge::driver::captureNode(Stream &S, NodeType T, llvm::function_ref<llvm::Error(GraphNode &)> Fill) {
  std::scoped_lock L(CaptureLock);
  if (!S.Capture)
    return makeError(Status::IllegalState, "the stream stopped capturing");
  Graph &G = S.Capture->graph();
  auto N = G.addNode(T, S.CaptureDeps);
  if (!N)
    return N.takeError();
  if (auto E = Fill(**N)) {
    G.destroyNode(*N);
    return E;
  }
  S.CaptureDeps = {*N};
  return llvm::Error::success();
}

llvm::Error ptxforge::driver::checkSynchronize(Context &Ctx, Stream *S, bool WholeContext) {
  std::scoped_lock L(CaptureLock);
  if (S && S->Capture) {
    S->Capture->Invalidated = true;
    return makeError(Status::StreamCaptureUnsupported, "waiting for a capturing stream");
  }
  if ((!S || WholeContext) && invalidateCapturesOf(Ctx, WholeContext))
    return makeError(WholeContext ? Status::StreamCaptureUnsupported : Status::StreamCaptureImplicit,
                     "waiting for a capturing stream");
  return llvm::Error::success();
}

llvm::Error ptxforge::driver::checkUnsafeCall() {
  std::scoped_lock L(CaptureLock);
  if (ThreadMode == CaptureMode::Relaxed || Active.empty())
    return llvm::Error::success();
  std::thread::id Me = std::this_thread::get_id();
  bool Prohibited = false;
  for (const auto &C : Active) {
    bool Mine = C->Thread == Me;
    if ((Mine && C->Mode != CaptureMode::Relaxed) ||
        (!Mine && ThreadMode == CaptureMode::Global && C->Mode == CaptureMode::Global)) {
      C->Invalidated = true;
      Prohibited = true;
    }
  }
  if (Prohibited)
    return makeError(Status::StreamCaptureUnsupported, "a potentially unsafe call while a stream is capturing");
  return llvm::Error::success();
}

llvm::Error ptxforge::driver::checkEventUsable(const Event &E) {
  std::scoped_lock L(CaptureLock);
  if (E.CapturedIn && !E.CapturedIn->Ended)
    return makeError(Status::CapturedEvent, "the event was recorded in a capturing stream");
  return llvm::Error::success();
}

llvm::Error ptxforge::driver::recordEvent(Context &Ctx, Stream *S, Event &E, bool External) {
  auto G = captureTarget(Ctx, S);
  if (!G)
    return G.takeError();
  if (*G && External)
    return captureNode(*S, NodeType::EventRecord, [&](GraphNode &N) {
      N.Ev = &E;
      return llvm::Error::success();
    });
  std::unique_lock L(CaptureLock);
  if (*G && S->Capture) {
    // A captured record adds no node: it names the stream's current dependencies for streams that wait on it.
    E.CapturedIn = S->Capture;
    E.CapturedNodes = S->CaptureDeps;
    return llvm::Error::success();
  }
  E.CapturedIn.reset();
  E.CapturedNodes.clear();
  L.unlock();
  E.record(S);
  return llvm::Error::success();
}

llvm::Error ptxforge::driver::waitEvent(Context &Ctx, Stream *S, Event &E, bool External) {
  if (External) {
    auto G = captureTarget(Ctx, S);
    if (!G)
      return G.takeError();
    if (!*G)
      return makeError(Status::InvalidValue, "an external wait outside a capture");
    return captureNode(*S, NodeType::WaitEvent, [&](GraphNode &N) {
      N.Ev = &E;
      return llvm::Error::success();
    });
  }
  {
    std::scoped_lock L(CaptureLock);
    if (E.CapturedIn && !E.CapturedIn->Ended) {
      std::shared_ptr<CaptureSequence> C = E.CapturedIn;
      if (!S)
        return makeError(Status::StreamCaptureImplicit, "the legacy stream cannot join a capture");
      if (C->Invalidated)
        return makeError(Status::StreamCaptureInvalidated, "the event's capture was invalidated");
      if (!S->Capture) {
        S->Capture = C;
        S->CaptureDeps = E.CapturedNodes;
        C->Streams.push_back(S);
        return llvm::Error::success();
      }
      if (S->Capture != C) {
        S->Capture->Invalidated = C->Invalidated = true;
        return makeError(Status::StreamCaptureMerge, "the stream and the event belong to different captures");
      }
      for (GraphNode *N : E.CapturedNodes)
        if (!llvm::is_contained(S->CaptureDeps, N))
          S->CaptureDeps.push_back(N);
      return llvm::Error::success();
    }
    if (S && S->Capture) {
      // Work outside the capture cannot become a dependency of a graph.
      S->Capture->Invalidated = true;
      return makeError(Status::StreamCaptureIsolation, "a capturing stream waits for an event recorded outside it");
    }
  }
  auto G = captureTarget(Ctx, S);
  if (!G)
    return G.takeError();
  if (StreamPoint P = E.point(); P.Progress)
    Ctx.submit(S, [] {}, {P});
  return llvm::Error::success();
}

llvm::Error ptxforge::driver::launchHostFunction(Context &Ctx, Stream *S, void (*Fn)(void *), void *UserData) {
  auto G = captureTarget(Ctx, S);
  if (!G)
    return G.takeError();
  if (*G)
    return captureNode(*S, NodeType::Host, [&](GraphNode &N) {
      N.Host = {Fn, UserData};
      return llvm::Error::success();
    });
  if (auto E = Driver::get().checkSticky())
    return E;
  Ctx.submit(S, [Fn, UserData] {
    if (Driver::get().stickyError() == Status::Success)
      Fn(UserData);
  });
  return llvm::Error::success();
}

llvm::Error ptxforge::driver::launchGraph(Context &Ctx, Stream *S, const GraphExec &Exec) {
  auto G = captureTarget(Ctx, S);
  if (!G)
    return G.takeError();
  if (*G) {
    // NVIDIA's runtime refuses every graph launch into a capture, whatever the graph holds and the capture mode
    // (an H100 and an H200: tests/cudart/graph_conditional.cu), and the capture is invalidated.
    std::scoped_lock L(CaptureLock);
    if (S->Capture)
      S->Capture->Invalidated = true;
    return makeError(Status::StreamCaptureUnsupported, "a graph launched into a capturing stream");
  }
  return Exec.launch(Ctx, S);
}

llvm::Expected<uint64_t> ptxforge::driver::allocateAsync(Context &Ctx, Stream *S, uint64_t Bytes, MemPool *Pool) {
  auto G = captureTarget(Ctx, S);
  if (!G)
    return G.takeError();
  if (!*G) {
    auto P = DeviceMemory::get().allocate(Bytes, MemoryKind::Device, &Ctx);
    if (P)
      DeviceMemory::get().assignPool(*P, Pool ? *Pool : MemPool::current(Ctx.device()));
    return P;
  }
  auto A = GraphAllocation::create(Ctx, Bytes);
  if (!A)
    return A.takeError();
  uint64_t Address = (*A)->address();
  if (auto E = captureNode(*S, NodeType::MemAlloc, [&](GraphNode &N) {
        N.Alloc = std::move(*A);
        return llvm::Error::success();
      }))
    return E;
  return Address;
}

llvm::Error ptxforge::driver::freeAsync(Context &Ctx, Stream *S, uint64_t Address) {
  auto G = captureTarget(Ctx, S);
  if (!G)
    return G.takeError();
  bool IsGraph = GraphMemory::isGraphAllocation(Address);
  if (*G) {
    if (!IsGraph)
      return makeError(Status::InvalidValue, "a captured free of memory no graph allocated");
    return captureNode(*S, NodeType::MemFree, [&](GraphNode &N) {
      N.FreeAddress = Address;
      return llvm::Error::success();
    });
  }
  if (!IsGraph) {
    auto A = DeviceMemory::get().find(Address);
    if (!A || A->Base != Address || A->Kind != MemoryKind::Device)
      return makeError(Status::InvalidValue, "not the start of a device allocation");
  }
  if (IsGraph)
    GraphMemory::unclaim(Address);
  Ctx.submit(S, [Address, IsGraph] {
    if (!IsGraph || !GraphMemory::free(Address))
      llvm::consumeError(DeviceMemory::get().free(Address, {MemoryKind::Device}));
  });
  return llvm::Error::success();
}
