// Process-wide driver state: initialisation, the sticky error a faulted kernel leaves (NVIDIA's driver poisons
// the whole process, every context included), primary contexts, the calling thread's context stack, and the
// registries that tell live handles from stale or bogus ones.
#pragma once

#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Status.h"

#include "llvm/Support/Error.h"

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

namespace ptxforge::driver {

class Function;
class Module;

/// A set of live objects of one kind, so handles can be checked before they are used.
template <class T> class Registry {
public:
  void add(const T *P) {
    std::scoped_lock L(Lock);
    Live.insert(P);
  }
  void remove(const T *P) {
    std::scoped_lock L(Lock);
    Live.erase(P);
  }
  bool contains(const void *P) const {
    std::scoped_lock L(Lock);
    return Live.count(static_cast<const T *>(P)) != 0;
  }

private:
  mutable std::mutex Lock;
  std::unordered_set<const T *> Live;
};

class Driver {
public:
  static Driver &get();

  /// cuInit: reads the device configuration, reserves device memory, installs the fault handlers.
  [[nodiscard]] llvm::Error initialize();
  bool initialized() const { return Initialized; }

  /// The sticky error of a faulted kernel (Success when none). Set once; later faults keep the first.
  Status stickyError() const { return Sticky.load(); }
  std::string stickyMessage() const;
  void setStickyError(Status S, std::string Message);
  /// Fails with the sticky error when there is one.
  [[nodiscard]] llvm::Error checkSticky() const;

  /// The device's primary context (one per device, never freed).
  Context &primaryContext(int Device);
  struct PrimaryState {
    unsigned RefCount = 0;
    unsigned Flags = 0;
    bool Active = false;
  };
  [[nodiscard]] llvm::Expected<Context *> retainPrimary(int Device);
  [[nodiscard]] llvm::Error releasePrimary(int Device);
  void resetPrimary(int Device);
  PrimaryState primaryState(int Device);
  [[nodiscard]] llvm::Error setPrimaryFlags(int Device, unsigned Flags);

  /// Creates a context and pushes it on the calling thread's stack.
  [[nodiscard]] llvm::Expected<Context *> createContext(int Device, unsigned Flags);
  /// Destroys C (pops it when it is the calling thread's current context).
  [[nodiscard]] llvm::Error destroyContext(Context *C);

  Registry<Context> Contexts;
  Registry<Module> Modules;
  Registry<Function> Functions;
  Registry<Stream> Streams;
  Registry<Event> Events;

private:
  Driver() = default;
  std::atomic<bool> Initialized{false};
  std::mutex Lock;
  std::atomic<Status> Sticky{Status::Success};
  std::string StickyText;
  std::vector<std::unique_ptr<Context>> AllContexts; ///< destroyed ones too: handles stay unique
  std::vector<std::unique_ptr<Context>> Primary;     ///< one per device
  std::vector<PrimaryState> PrimaryInfo;
};

/// The calling thread's context stack.
namespace ContextStack {
/// The current context (top of the stack), or null.
Context *current();
void push(Context *C);
/// Pops and returns the top, null when empty.
Context *pop();
/// Replaces the top (pushes onto an empty stack); null pops.
void setCurrent(Context *C);
/// Removes C from the top when it is current.
void popIfCurrent(Context *C);
} // namespace ContextStack

/// The current context, failing with InvalidContext (none) or ContextIsDestroyed.
[[nodiscard]] llvm::Expected<Context *> currentContext();

} // namespace ptxforge::driver
