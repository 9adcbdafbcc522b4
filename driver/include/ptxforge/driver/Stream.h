// Streams and events. Each stream owns a worker thread that runs its work in order (copies, kernel launches,
// host functions, event records); work may also wait for points of other streams (events, and the implicit
// ordering of the legacy default stream, which Context::submit adds). Kernels run on the worker thread under
// the fault guard, so a faulting kernel ends its launch, not the process.
#pragma once

#include "llvm/ADT/FunctionExtras.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <vector>

namespace ptxforge::driver {

class Context;
class GraphNode;
struct CaptureSequence;

/// How far a stream's work got. Shared, so a point stays valid after its stream is destroyed.
struct StreamProgress {
  std::atomic<uint64_t> Completed{0};
};

/// "After the Ticket-th piece of work of one stream": what events record and work waits for.
struct StreamPoint {
  std::shared_ptr<StreamProgress> Progress;
  uint64_t Ticket = 0;

  bool reached() const { return !Progress || Progress->Completed.load() >= Ticket; }
  /// Blocks until reached().
  void wait() const;
};

class Stream {
public:
  enum class Kind {
    Legacy,      ///< the NULL stream: waits for blocking streams, which wait for it
    Blocking,    ///< CU_STREAM_DEFAULT
    NonBlocking, ///< CU_STREAM_NON_BLOCKING: no implicit ordering with the legacy stream
  };

  Stream(Context &Owner, Kind K, unsigned Flags, int Priority);
  /// Finishes the queued work, then stops the worker.
  ~Stream();
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  Context &context() const { return Owner; }
  Kind kind() const { return K; }
  unsigned flags() const { return Flags; }
  int priority() const { return Priority; }
  uint64_t id() const { return Id; }

  /// Queues Fn after this stream's earlier work and after every point in Waits. Use Context::submit, which
  /// adds the legacy default stream's ordering.
  StreamPoint enqueue(llvm::unique_function<void()> Fn, std::vector<StreamPoint> Waits);
  /// The point after the latest queued work.
  StreamPoint last() const;
  bool idle() const { return last().reached(); }

  /// Stream capture (Capture.cpp, under its lock): the capture S takes part in and the nodes its next
  /// captured work depends on.
  std::shared_ptr<CaptureSequence> Capture;
  std::vector<GraphNode *> CaptureDeps;

private:
  struct Work {
    llvm::unique_function<void()> Fn;
    std::vector<StreamPoint> Waits;
    uint64_t Ticket;
  };
  static void *workerMain(void *Self);
  void runWorker();

  Context &Owner;
  Kind K;
  unsigned Flags;
  int Priority;
  uint64_t Id;
  std::shared_ptr<StreamProgress> Progress = std::make_shared<StreamProgress>();
  mutable std::mutex Lock;
  std::condition_variable HasWork;
  std::deque<Work> Queue;
  uint64_t Enqueued = 0;
  bool Stopping = false;
  bool WorkerStarted = false;
  pthread_t Worker{};
};

/// An event: the point of its latest record, and when that point was reached.
class Event {
public:
  Event(Context &Owner, unsigned Flags, bool TimingEnabled) : Owner(Owner), Flags(Flags), Timing(TimingEnabled) {}
  Context &context() const { return Owner; }
  unsigned flags() const { return Flags; }
  bool timingEnabled() const { return Timing; }

  /// Records the point after S's queued work (S null: the legacy default stream).
  void record(Stream *S);
  /// True when never recorded or when the recorded point was reached.
  bool completed() const;
  void synchronize() const;
  /// The point a stream waits for in cuStreamWaitEvent (none when never recorded).
  StreamPoint point() const;

  struct Record {
    StreamPoint Point;
    std::atomic<bool> Timed{false};
    std::chrono::steady_clock::time_point When;
  };
  std::shared_ptr<Record> lastRecord() const;

  /// Set when the latest record was captured (Capture.cpp, under its lock): the capture and the nodes the
  /// record stands for.
  std::shared_ptr<CaptureSequence> CapturedIn;
  std::vector<GraphNode *> CapturedNodes;

private:
  Context &Owner;
  unsigned Flags;
  bool Timing;
  mutable std::mutex Lock;
  std::shared_ptr<Record> Last;
};

} // namespace ptxforge::driver
