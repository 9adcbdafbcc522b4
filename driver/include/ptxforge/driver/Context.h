// A context: what one cuCtxCreate (or a device's primary context) owns: streams with the legacy default
// stream, events, modules and memory. The thread-local context stack (current context) lives in Driver.h.
#pragma once

#include "ptxforge/driver/Stream.h"

#include "llvm/ADT/FunctionExtras.h"
#include "llvm/Support/Error.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace ptxforge::driver {

class Module;

/// Per-context limits (cuCtxGetLimit / cuCtxSetLimit).
enum class Limit {
  StackSize,
  PrintfFifoSize,
  MallocHeapSize,
  DevRuntimeSyncDepth,
  DevRuntimePendingLaunchCount,
  MaxL2FetchGranularity,
  PersistingL2CacheSize,
  Count
};

class Context {
public:
  Context(int Device, unsigned Flags, bool Primary);
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  int device() const { return Device; }
  unsigned flags() const { return Flags; }
  void setFlags(unsigned F) { Flags = F; }
  bool isPrimary() const { return Primary; }
  uint64_t id() const { return Id; }
  /// Destroyed contexts stay allocated (their handles must not be reused) but own nothing.
  bool isDestroyed() const { return Destroyed; }

  /// Waits for all work, then frees every module, stream, event and allocation and marks the context
  /// destroyed. A primary context is revived by revive().
  void destroy();
  void revive(unsigned NewFlags);

  // Streams. A null Stream * means the legacy default stream everywhere.
  llvm::Expected<Stream *> createStream(Stream::Kind K, unsigned Flags, int Priority);
  llvm::Error destroyStream(Stream *S);
  Stream &legacyStream();
  /// The calling thread's per-thread default stream (CU_STREAM_PER_THREAD), made at its first use: a blocking
  /// stream of its own, ordered with the legacy stream and not with other streams, which can capture.
  llvm::Expected<Stream *> perThreadStream();
  /// The streams created in this context (not the legacy one), per-thread default streams included.
  std::vector<Stream *> streams() const;
  /// Queues Fn on S with CUDA's implicit ordering: work on the legacy stream waits for all blocking streams,
  /// work on a blocking stream waits for the legacy stream.
  StreamPoint submit(Stream *S, llvm::unique_function<void()> Fn, std::vector<StreamPoint> Waits = {});
  /// Runs Fn on S as submit does and waits for it (synchronous copies and memsets).
  void submitAndWait(Stream *S, llvm::unique_function<void()> Fn);
  /// Waits until every stream of the context is idle.
  void waitIdle();

  // Events.
  Event *createEvent(unsigned Flags, bool TimingEnabled);
  void destroyEvent(Event *E);

  // Modules.
  Module *adoptModule(std::unique_ptr<Module> M);
  /// Waits for the context's work (a launch may still use the module), then unloads it.
  void unloadModule(Module *M);

  size_t limit(Limit L) const { return Limits[static_cast<size_t>(L)]; }
  void setLimit(Limit L, size_t V) { Limits[static_cast<size_t>(L)] = V; }
  int cacheConfig() const { return CacheConfig; }
  void setCacheConfig(int C) { CacheConfig = C; }

  /// Context-local storage (the export table NVIDIA's runtime keeps its per-context state in): values keyed by
  /// the caller's pointer, each with a destructor that destroy() calls (with this context, the key and the value)
  /// before the context's resources go, as NVIDIA's driver does at cuCtxDestroy and cuDevicePrimaryCtxReset.
  using LocalDestructor = void (*)(void *Context, void *Key, void *Value);
  void putLocal(void *Key, void *Value, LocalDestructor Destructor);
  /// False when Key has no value.
  bool eraseLocal(void *Key);
  std::optional<void *> getLocal(void *Key) const;

  /// Peer access (cuCtxEnablePeerAccess): every device is the same host memory, so this only records which
  /// contexts were granted access, for the error codes. False when Peer already was (or, for disable, was not).
  bool enablePeer(const Context &Peer);
  bool disablePeer(const Context &Peer);

private:
  void releaseResources();
  void runLocalDestructors();
  std::vector<uint64_t> Peers; ///< ids of the contexts with peer access enabled; cleared by destroy()

  int Device;
  unsigned Flags;
  bool Primary;
  uint64_t Id;
  std::atomic<bool> Destroyed{false};
  mutable std::mutex Lock; ///< guards the lists below and the ordering of submissions
  std::unique_ptr<Stream> Legacy;
  std::vector<std::unique_ptr<Stream>> Streams;
  std::map<std::thread::id, Stream *> PerThread; ///< per-thread default streams, owned in Streams
  std::vector<std::unique_ptr<Event>> Events;
  std::vector<std::unique_ptr<Module>> Modules;
  std::array<size_t, static_cast<size_t>(Limit::Count)> Limits;
  int CacheConfig = 0;
  struct LocalValue {
    void *Value;
    LocalDestructor Destructor;
  };
  std::map<void *, LocalValue> Locals;
};

} // namespace ptxforge::driver
