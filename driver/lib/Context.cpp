// Contexts: the streams, events, modules and memory one context owns, and the ordering rules of the legacy
// default stream.
#include "ptxforge/driver/Context.h"

#include "ptxforge/driver/Capture.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Module.h"

#include <algorithm>

using namespace ptxforge::driver;

namespace {
std::atomic<uint64_t> NextContextId{1};
}

Context::Context(int Device, unsigned Flags, bool Primary)
    : Device(Device), Flags(Flags), Primary(Primary), Id(NextContextId++) {
  // NVIDIA's defaults on sm_90.
  Limits[size_t(Limit::StackSize)] = 1024;
  Limits[size_t(Limit::PrintfFifoSize)] = 1 << 20;
  Limits[size_t(Limit::MallocHeapSize)] = 8 << 20;
  Limits[size_t(Limit::DevRuntimeSyncDepth)] = 2;
  Limits[size_t(Limit::DevRuntimePendingLaunchCount)] = 2048;
  Limits[size_t(Limit::MaxL2FetchGranularity)] = 64;
  Limits[size_t(Limit::PersistingL2CacheSize)] = 0;
}

Context::~Context() { releaseResources(); }

void Context::destroy() {
  waitIdle();
  runLocalDestructors();
  releaseResources();
  {
    std::scoped_lock L(Lock);
    Peers.clear();
  }
  Destroyed = true;
}

bool Context::enablePeer(const Context &Peer) {
  std::scoped_lock L(Lock);
  if (std::find(Peers.begin(), Peers.end(), Peer.id()) != Peers.end())
    return false;
  Peers.push_back(Peer.id());
  return true;
}

bool Context::disablePeer(const Context &Peer) {
  std::scoped_lock L(Lock);
  auto It = std::find(Peers.begin(), Peers.end(), Peer.id());
  if (It == Peers.end())
    return false;
  Peers.erase(It);
  return true;
}

void Context::putLocal(void *Key, void *Value, LocalDestructor Destructor) {
  std::scoped_lock L(Lock);
  Locals[Key] = {Value, Destructor};
}

bool Context::eraseLocal(void *Key) {
  std::scoped_lock L(Lock);
  return Locals.erase(Key) != 0;
}

std::optional<void *> Context::getLocal(void *Key) const {
  std::scoped_lock L(Lock);
  auto It = Locals.find(Key);
  if (It == Locals.end())
    return std::nullopt;
  return It->second.Value;
}

void Context::runLocalDestructors() {
  std::map<void *, LocalValue> Old;
  {
    std::scoped_lock L(Lock);
    Old.swap(Locals);
  }
  // Outside the lock: a destructor may call back into the driver (free memory, unload modules).
  for (auto &[Key, V] : Old)
    if (V.Destructor)
      V.Destructor(this, Key, V.Value);
}

void Context::revive(unsigned NewFlags) {
  Flags = NewFlags;
  Destroyed = false;
}

void Context::releaseResources() {
  std::vector<std::unique_ptr<Module>> OldModules;
  std::vector<std::unique_ptr<Event>> OldEvents;
  std::vector<std::unique_ptr<Stream>> OldStreams;
  std::unique_ptr<Stream> OldLegacy;
  {
    std::scoped_lock L(Lock);
    OldModules = std::move(Modules);
    OldEvents = std::move(Events);
    OldStreams = std::move(Streams);
    PerThread.clear();
    OldLegacy = std::move(Legacy);
  }
  Driver &D = Driver::get();
  for (auto &E : OldEvents)
    D.Events.remove(E.get());
  for (auto &S : OldStreams) {
    D.Streams.remove(S.get());
    forgetStream(S.get());
  }
  // Streams first (their workers finish what is queued), then what their work used.
  OldStreams.clear();
  OldLegacy.reset();
  OldEvents.clear();
  OldModules.clear();
  DeviceMemory &Mem = DeviceMemory::get();
  for (uint64_t Base : Mem.allocationsOf(this))
    llvm::consumeError(Mem.free(Base, {MemoryKind::Device, MemoryKind::Managed, MemoryKind::Host}));
}

Stream &Context::legacyStream() {
  std::scoped_lock L(Lock);
  if (!Legacy)
    Legacy = std::make_unique<Stream>(*this, Stream::Kind::Legacy, 0, 0);
  return *Legacy;
}

std::vector<Stream *> Context::streams() const {
  std::scoped_lock L(Lock);
  std::vector<Stream *> Out;
  for (const auto &S : Streams)
    Out.push_back(S.get());
  return Out;
}

llvm::Expected<Stream *> Context::createStream(Stream::Kind K, unsigned Flags, int Priority) {
  auto S = std::make_unique<Stream>(*this, K, Flags, Priority);
  Stream *P = S.get();
  {
    std::scoped_lock L(Lock);
    Streams.push_back(std::move(S));
  }
  Driver::get().Streams.add(P);
  return P;
}

llvm::Expected<Stream *> Context::perThreadStream() {
  std::thread::id Me = std::this_thread::get_id();
  {
    std::scoped_lock L(Lock);
    if (auto It = PerThread.find(Me); It != PerThread.end())
      return It->second;
  }
  auto S = createStream(Stream::Kind::Blocking, 0, 0); // only this thread makes its own
  if (!S)
    return S.takeError();
  std::scoped_lock L(Lock);
  PerThread[Me] = *S;
  return *S;
}

llvm::Error Context::destroyStream(Stream *S) {
  std::unique_ptr<Stream> Owned;
  {
    std::scoped_lock L(Lock);
    auto It = std::find_if(Streams.begin(), Streams.end(), [&](const auto &P) { return P.get() == S; });
    if (It == Streams.end())
      return makeError(Status::InvalidHandle, "the stream does not belong to this context");
    Owned = std::move(*It);
    Streams.erase(It);
  }
  Driver::get().Streams.remove(S);
  forgetStream(S);
  Owned.reset(); // finishes its queued work first
  return llvm::Error::success();
}

StreamPoint Context::submit(Stream *S, llvm::unique_function<void()> Fn, std::vector<StreamPoint> Waits) {
  std::scoped_lock L(Lock);
  if (!Legacy)
    Legacy = std::make_unique<Stream>(*this, Stream::Kind::Legacy, 0, 0);
  Stream &Target = S ? *S : *Legacy;
  if (Target.kind() == Stream::Kind::Legacy) {
    for (const auto &B : Streams)
      if (B->kind() == Stream::Kind::Blocking)
        Waits.push_back(B->last());
  } else if (Target.kind() == Stream::Kind::Blocking) {
    Waits.push_back(Legacy->last());
  }
  return Target.enqueue(std::move(Fn), std::move(Waits));
}

void Context::submitAndWait(Stream *S, llvm::unique_function<void()> Fn) { submit(S, std::move(Fn)).wait(); }

void Context::waitIdle() {
  std::vector<StreamPoint> Points;
  {
    std::scoped_lock L(Lock);
    if (Legacy)
      Points.push_back(Legacy->last());
    for (const auto &S : Streams)
      Points.push_back(S->last());
  }
  for (const StreamPoint &P : Points)
    P.wait();
}

Event *Context::createEvent(unsigned Flags, bool TimingEnabled) {
  auto E = std::make_unique<Event>(*this, Flags, TimingEnabled);
  Event *P = E.get();
  {
    std::scoped_lock L(Lock);
    Events.push_back(std::move(E));
  }
  Driver::get().Events.add(P);
  return P;
}

void Context::destroyEvent(Event *E) {
  Driver::get().Events.remove(E);
  std::unique_ptr<Event> Owned;
  std::scoped_lock L(Lock);
  auto It = std::find_if(Events.begin(), Events.end(), [&](const auto &P) { return P.get() == E; });
  if (It != Events.end()) {
    Owned = std::move(*It);
    Events.erase(It);
  }
}

Module *Context::adoptModule(std::unique_ptr<Module> M) {
  Module *P = M.get();
  {
    std::scoped_lock L(Lock);
    Modules.push_back(std::move(M));
  }
  Driver &D = Driver::get();
  D.Modules.add(P);
  for (const auto &F : P->functions())
    D.Functions.add(F.get());
  return P;
}

void Context::unloadModule(Module *M) {
  waitIdle();
  std::unique_ptr<Module> Owned;
  {
    std::scoped_lock L(Lock);
    auto It = std::find_if(Modules.begin(), Modules.end(), [&](const auto &P) { return P.get() == M; });
    if (It == Modules.end())
      return;
    Owned = std::move(*It);
    Modules.erase(It);
  }
}
