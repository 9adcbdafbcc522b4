// Process-wide state: initialisation, the sticky error, primary contexts, context creation and destruction,
// and the calling thread's context stack.
#include "ptxforge/driver/Driver.h"
#include "ptxforge/codegen/FaultGuard.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Settings.h"

#include <algorithm>

using namespace ptxforge::driver;

Driver &Driver::get() {
  // Never destroyed: at exit, stream workers may still be running and contexts must not be torn down under
  // them (NVIDIA's driver also leaves cleanup to the OS).
  static Driver *Instance = new Driver();
  return *Instance;
}

llvm::Error Driver::initialize() {
  std::scoped_lock L(Lock);
  if (Initialized)
    return llvm::Error::success();
  if (auto CCs = deviceComputeCapabilitiesFromEnvironment(); !CCs)
    return makeError(Status::NoDevice, llvm::toString(CCs.takeError()));
  (void)processSettings(); // the environment's codegen settings, read once (Settings.h)
  if (!DeviceMemory::get().reservationSize())
    return makeError(Status::OutOfMemory, "no address space for device memory");
  ptxforge::codegen::installFaultHandlers();
  for (int D = 0; D < deviceCount(); ++D) {
    Primary.push_back(std::make_unique<Context>(D, 0, /*Primary=*/true));
    Primary.back()->destroy(); // inactive until retained
    Contexts.add(Primary.back().get());
  }
  PrimaryInfo.resize(Primary.size());
  Initialized = true;
  return llvm::Error::success();
}

std::string Driver::stickyMessage() const {
  std::scoped_lock L(const_cast<std::mutex &>(Lock));
  return StickyText;
}

void Driver::setStickyError(Status S, std::string Message) {
  std::scoped_lock L(Lock);
  Status Expected = Status::Success;
  if (Sticky.compare_exchange_strong(Expected, S))
    StickyText = std::move(Message);
}

llvm::Error Driver::checkSticky() const {
  Status S = Sticky.load();
  if (S == Status::Success)
    return llvm::Error::success();
  return makeError(S, "an earlier kernel failed: " + stickyMessage());
}

Context &Driver::primaryContext(int Device) { return *Primary[Device]; }

llvm::Expected<Context *> Driver::retainPrimary(int Device) {
  if (auto E = checkSticky())
    return E;
  std::scoped_lock L(Lock);
  PrimaryState &Info = PrimaryInfo[Device];
  if (!Info.Active) {
    Primary[Device]->revive(Info.Flags);
    Info.Active = true;
  }
  ++Info.RefCount;
  return Primary[Device].get();
}

llvm::Error Driver::releasePrimary(int Device) {
  bool Destroy = false;
  {
    std::scoped_lock L(Lock);
    PrimaryState &Info = PrimaryInfo[Device];
    if (!Info.RefCount)
      return makeError(Status::InvalidContext, "the primary context is not retained");
    Destroy = --Info.RefCount == 0;
    if (Destroy)
      Info.Active = false;
  }
  if (Destroy)
    Primary[Device]->destroy();
  return llvm::Error::success();
}

void Driver::resetPrimary(int Device) {
  {
    std::scoped_lock L(Lock);
    PrimaryInfo[Device].RefCount = 0;
    PrimaryInfo[Device].Active = false;
  }
  Primary[Device]->destroy();
}

Driver::PrimaryState Driver::primaryState(int Device) {
  std::scoped_lock L(Lock);
  return PrimaryInfo[Device];
}

llvm::Error Driver::setPrimaryFlags(int Device, unsigned Flags) {
  std::scoped_lock L(Lock);
  PrimaryInfo[Device].Flags = Flags;
  Primary[Device]->setFlags(Flags);
  return llvm::Error::success();
}

llvm::Expected<Context *> Driver::createContext(int Device, unsigned Flags) {
  if (auto E = checkSticky())
    return E;
  auto C = std::make_unique<Context>(Device, Flags, /*Primary=*/false);
  Context *P = C.get();
  {
    std::scoped_lock L(Lock);
    AllContexts.push_back(std::move(C));
  }
  Contexts.add(P);
  ContextStack::push(P);
  return P;
}

llvm::Error Driver::destroyContext(Context *C) {
  if (C->isPrimary())
    return makeError(Status::InvalidContext, "the primary context is released, not destroyed");
  if (C->isDestroyed())
    return makeError(Status::InvalidContext, "the context was already destroyed");
  ContextStack::popIfCurrent(C);
  C->destroy();
  return llvm::Error::success();
}

namespace {
// The stack is reached through a trivially destructible pointer: libraries call the driver from their exit
// handlers (cuFFT frees its buffers in a static destructor), which run after the thread-local destructors of
// the thread that calls exit(). A thread-local vector would be read after its destruction then; this way the
// stack is empty (null) once its owner has freed it.
thread_local std::vector<Context *> *Stack = nullptr;
struct StackOwner {
  ~StackOwner() {
    delete Stack;
    Stack = nullptr;
  }
};
thread_local StackOwner Owner;

std::vector<Context *> &stack() {
  if (!Stack) {
    (void)&Owner; // constructs the owner, which frees the stack when the thread ends
    Stack = new std::vector<Context *>();
  }
  return *Stack;
}
bool stackEmpty() { return !Stack || Stack->empty(); }
} // namespace

Context *ContextStack::current() { return stackEmpty() ? nullptr : Stack->back(); }
void ContextStack::push(Context *C) { stack().push_back(C); }
Context *ContextStack::pop() {
  if (stackEmpty())
    return nullptr;
  Context *C = Stack->back();
  Stack->pop_back();
  return C;
}
void ContextStack::setCurrent(Context *C) {
  if (!C) {
    pop();
    return;
  }
  if (stackEmpty())
    stack().push_back(C);
  else
    Stack->back() = C;
}
void ContextStack::popIfCurrent(Context *C) {
  if (!stackEmpty() && Stack->back() == C)
    Stack->pop_back();
}

llvm::Expected<Context *> ptxforge::driver::currentContext() {
  Context *C = ContextStack::current();
  if (!C)
    return makeError(Status::InvalidContext, "no current context");
  if (C->isDestroyed())
    return makeError(C->isPrimary() ? Status::InvalidContext : Status::ContextIsDestroyed,
                     "the current context was destroyed");
  return C;
}
