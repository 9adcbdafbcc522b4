// Stream workers and events. All completions notify one condition variable; waits are rare and short-lived
// enough that a shared one is simpler than per-stream ones and never misses a wake-up.
#include "ptxforge/driver/Stream.h"
#include "ptxforge/driver/Context.h"

using namespace ptxforge::driver;

namespace {
// Never destroyed: stream workers may still finish work while the process exits.
std::mutex &ProgressLock = *new std::mutex;
std::condition_variable &ProgressChanged = *new std::condition_variable;
std::atomic<uint64_t> NextStreamId{1};

/// Worker threads get a large stack: kernels without barriers run their threads on it, and deep recursion in
/// a kernel should overflow GPU-like limits only much later than it would on a default 8 MiB stack.
constexpr size_t WorkerStackBytes = 64ull << 20;
} // namespace

void StreamPoint::wait() const {
  if (reached())
    return;
  std::unique_lock L(ProgressLock);
  ProgressChanged.wait(L, [&] { return reached(); });
}

Stream::Stream(Context &Owner, Kind K, unsigned Flags, int Priority)
    : Owner(Owner), K(K), Flags(Flags), Priority(Priority), Id(NextStreamId++) {}

Stream::~Stream() {
  {
    std::scoped_lock L(Lock);
    Stopping = true;
  }
  HasWork.notify_all();
  if (WorkerStarted)
    pthread_join(Worker, nullptr);
}

StreamPoint Stream::enqueue(llvm::unique_function<void()> Fn, std::vector<StreamPoint> Waits) {
  uint64_t Ticket;
  bool Started;
  {
    std::scoped_lock L(Lock);
    Ticket = ++Enqueued;
    Queue.push_back(Work{std::move(Fn), std::move(Waits), Ticket});
    if (!WorkerStarted) {
      pthread_attr_t Attr;
      pthread_attr_init(&Attr);
      pthread_attr_setstacksize(&Attr, WorkerStackBytes);
      pthread_attr_setguardsize(&Attr, 64 * 1024);
      if (pthread_create(&Worker, &Attr, &Stream::workerMain, this) == 0)
        WorkerStarted = true;
      pthread_attr_destroy(&Attr);
    }
    Started = WorkerStarted;
  }
  if (!Started) {
    // No thread could be started: run in the caller, which keeps the order (nothing else runs here).
    runWorker();
  }
  HasWork.notify_one();
  return StreamPoint{Progress, Ticket};
}

StreamPoint Stream::last() const {
  std::scoped_lock L(Lock);
  return StreamPoint{Progress, Enqueued};
}

void *Stream::workerMain(void *Self) {
  static_cast<Stream *>(Self)->runWorker();
  return nullptr;
}

void Stream::runWorker() {
  for (;;) {
    Work W;
    {
      std::unique_lock L(Lock);
      if (!WorkerStarted && Queue.empty())
        return; // inline mode: ran everything queued
      HasWork.wait(L, [&] { return Stopping || !Queue.empty(); });
      if (Queue.empty())
        return;
      W = std::move(Queue.front());
      Queue.pop_front();
    }
    for (const StreamPoint &P : W.Waits)
      P.wait();
    W.Fn();
    {
      std::scoped_lock L(ProgressLock);
      Progress->Completed.store(W.Ticket);
    }
    ProgressChanged.notify_all();
  }
}

void Event::record(Stream *S) {
  auto R = std::make_shared<Record>();
  R->Point = Owner.submit(S, [R] {
    R->When = std::chrono::steady_clock::now();
    R->Timed.store(true);
  });
  std::scoped_lock L(Lock);
  Last = std::move(R);
}

std::shared_ptr<Event::Record> Event::lastRecord() const {
  std::scoped_lock L(Lock);
  return Last;
}

bool Event::completed() const {
  auto R = lastRecord();
  return !R || R->Point.reached();
}

void Event::synchronize() const {
  if (auto R = lastRecord())
    R->Point.wait();
}

StreamPoint Event::point() const {
  auto R = lastRecord();
  return R ? R->Point : StreamPoint{};
}
