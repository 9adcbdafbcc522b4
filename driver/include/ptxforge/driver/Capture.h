// Stream capture: between cuStreamBeginCapture and cuStreamEndCapture, work queued on a capturing stream
// becomes nodes of a graph instead of running. Each capturing stream keeps the nodes its next work depends on;
// an event recorded in a capturing stream remembers them, so another stream that waits for it joins the same
// capture (the fork/join pattern). Calls that would wait for captured work, or order the legacy stream after
// it, fail with NVIDIA's capture errors and invalidate the capture.
#pragma once

#include "ptxforge/driver/Graph.h"

#include "llvm/ADT/FunctionExtras.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <thread>
#include <vector>

namespace ptxforge::driver {
class MemPool;

/// CUstreamCaptureMode's values.
enum class CaptureMode { Global = 0, ThreadLocal = 1, Relaxed = 2 };
/// CUstreamCaptureStatus's values.
enum class CaptureStatus { None = 0, Active = 1, Invalidated = 2 };

/// One capture sequence: the graph being built and the streams taking part.
struct CaptureSequence {
  std::unique_ptr<Graph> G = std::make_unique<Graph>();
  Graph *Into = nullptr; ///< cuStreamBeginCaptureToGraph: the program's graph the nodes go to, instead of G
  Graph &graph() { return Into ? *Into : *G; }
  CaptureMode Mode = CaptureMode::Global;
  uint64_t Id = 0;
  Stream *Origin = nullptr;
  std::thread::id Thread;
  bool Invalidated = false;
  bool Ended = false;
  std::vector<Stream *> Streams; ///< the origin and every stream that joined
};

/// What cuStreamGetCaptureInfo reports. Dependencies stay valid until the stream's next captured work.
struct CaptureInfo {
  CaptureStatus Status = CaptureStatus::None;
  uint64_t Id = 0;
  Graph *G = nullptr;
  bool IntoGraph = false; ///< G is the program's (cuStreamBeginCaptureToGraph)
  std::vector<GraphNode *> Dependencies;
};

/// Into (cuStreamBeginCaptureToGraph): the nodes go to that graph, after Deps (nodes of it), instead of a new one.
[[nodiscard]] llvm::Error beginCapture(Stream *S, CaptureMode Mode, Graph *Into = nullptr,
                                       llvm::ArrayRef<GraphNode *> Deps = {});
/// Ends the capture S began: the graph (null when the capture went into the program's graph), or the capture's
/// error (the capture ends either way).
[[nodiscard]] llvm::Expected<std::unique_ptr<Graph>> endCapture(Stream *S);
CaptureInfo captureInfo(Stream *S);
/// cuStreamUpdateCaptureDependencies: replaces (Add false) or extends S's dependency set.
[[nodiscard]] llvm::Error updateCaptureDependencies(Stream *S, llvm::ArrayRef<GraphNode *> Nodes, bool Add);
/// cuThreadExchangeStreamCaptureMode: the calling thread's mode becomes Mode; returns the previous one.
CaptureMode exchangeThreadCaptureMode(CaptureMode Mode);

/// S is being destroyed: it leaves its capture (a capture it began is invalidated and ends).
void forgetStream(Stream *S);

/// Where work queued on S goes: null when S is not capturing (run it), the graph of S's capture otherwise.
/// Fails when S's capture was invalidated, or when S is the legacy stream and a blocking stream of Ctx
/// captures (StreamCaptureImplicit; that capture is invalidated).
[[nodiscard]] llvm::Expected<Graph *> captureTarget(Context &Ctx, Stream *S);
/// Adds a node of type T after S's dependencies, lets Fill set it up and makes it S's only dependency.
[[nodiscard]] llvm::Error captureNode(Stream &S, NodeType T, llvm::function_ref<llvm::Error(GraphNode &)> Fill);

/// A call that waits for S (null: the legacy stream) or its context: StreamCaptureUnsupported, invalidating
/// the capture, when S (or, for a context-wide wait, any stream of Ctx) is capturing.
[[nodiscard]] llvm::Error checkSynchronize(Context &Ctx, Stream *S, bool WholeContext = false);
/// A "potentially unsafe" call (allocating and freeing device or page-locked host memory; synchronous copies and
/// fills are not, as an H100 shows: tests/clients/own/drv_capture_rules.c) under CUDA's capture mode rules:
/// StreamCaptureUnsupported while the calling thread, or (in global mode) any thread, captures.
[[nodiscard]] llvm::Error checkUnsafeCall();
/// cuEventQuery/cuEventSynchronize: CapturedEvent when E was last recorded in a capturing stream.
[[nodiscard]] llvm::Error checkEventUsable(const Event &E);

/// cuEventRecord: when S captures, E names S's current dependencies (External: an event record node, which
/// records E when the graph runs); else a record on S.
[[nodiscard]] llvm::Error recordEvent(Context &Ctx, Stream *S, Event &E, bool External = false);
/// cuStreamWaitEvent: S joins E's capture, or waits for E's latest record (External, CU_EVENT_WAIT_EXTERNAL: an
/// event wait node in S's capture; InvalidValue outside one).
[[nodiscard]] llvm::Error waitEvent(Context &Ctx, Stream *S, Event &E, bool External = false);
/// cuLaunchHostFunc.
[[nodiscard]] llvm::Error launchHostFunction(Context &Ctx, Stream *S, void (*Fn)(void *), void *UserData);
/// cuGraphLaunch: the exec's nodes queued on S; StreamCaptureUnsupported, invalidating the capture, when S captures.
[[nodiscard]] llvm::Error launchGraph(Context &Ctx, Stream *S, const GraphExec &Exec);
/// cuMemAllocAsync/cuMemAllocFromPoolAsync/cuMemFreeAsync: alloc and free nodes when S captures, else memory now
/// (counted as Pool's until freed; no Pool: the current pool of Ctx's device).
[[nodiscard]] llvm::Expected<uint64_t> allocateAsync(Context &Ctx, Stream *S, uint64_t Bytes, MemPool *Pool = nullptr);
[[nodiscard]] llvm::Error freeAsync(Context &Ctx, Stream *S, uint64_t Address);

} // namespace ptxforge::driver
