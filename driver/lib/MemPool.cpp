// Memory pools (MemPool.h): the pool table, each device's default and current pool, and usage counts.
#include "ptxforge/driver/MemPool.h"

#include "ptxforge/driver/Status.h"

#include <set>

using namespace ptxforge::driver;

namespace {

struct Pools {
  std::mutex Lock;
  std::set<const void *> Live;
  std::map<int, MemPool *> Defaults, Current;
};

Pools &pools() {
  static auto *P = new Pools; // never destroyed: allocations may be freed during exit
  return *P;
}

} // namespace

MemPool *MemPool::create(int Device) {
  auto *P = new MemPool(Device, false);
  Pools &T = pools();
  std::lock_guard<std::mutex> G(T.Lock);
  T.Live.insert(P);
  return P;
}

MemPool &MemPool::defaultPool(int Device) {
  Pools &T = pools();
  std::lock_guard<std::mutex> G(T.Lock);
  MemPool *&P = T.Defaults[Device];
  if (!P) {
    P = new MemPool(Device, true);
    T.Live.insert(P);
  }
  return *P;
}

MemPool &MemPool::current(int Device) {
  {
    Pools &T = pools();
    std::lock_guard<std::mutex> G(T.Lock);
    auto It = T.Current.find(Device);
    if (It != T.Current.end())
      return *It->second;
  }
  return defaultPool(Device);
}

void MemPool::setCurrent(int Device, MemPool &P) {
  Pools &T = pools();
  std::lock_guard<std::mutex> G(T.Lock);
  T.Current[Device] = &P;
}

MemPool *MemPool::lookup(const void *H) {
  Pools &T = pools();
  std::lock_guard<std::mutex> G(T.Lock);
  return T.Live.count(H) ? const_cast<MemPool *>(static_cast<const MemPool *>(H)) : nullptr;
}

llvm::Error MemPool::destroy(MemPool &P) {
  if (P.Default)
    return makeError(Status::InvalidValue, "a device's default memory pool cannot be destroyed");
  Pools &T = pools();
  std::lock_guard<std::mutex> G(T.Lock);
  T.Live.erase(&P);
  auto It = T.Current.find(P.Device);
  if (It != T.Current.end() && It->second == &P)
    T.Current.erase(It);
  return llvm::Error::success();
}

MemPool::Policy MemPool::policy() const {
  std::lock_guard<std::mutex> G(Lock);
  return P;
}

void MemPool::setPolicy(const Policy &New) {
  std::lock_guard<std::mutex> G(Lock);
  P = New;
}

MemPool::Usage MemPool::used() const {
  std::lock_guard<std::mutex> G(Lock);
  return U;
}

void MemPool::resetHigh() {
  std::lock_guard<std::mutex> G(Lock);
  U.High = U.Current;
}

unsigned MemPool::access(int Dev) const {
  constexpr unsigned ReadWrite = 3; // CU_MEM_ACCESS_FLAGS_PROT_READWRITE
  if (Dev == Device)
    return ReadWrite;
  std::lock_guard<std::mutex> G(Lock);
  auto It = Access.find(Dev);
  return It == Access.end() ? 0 : It->second;
}

void MemPool::setAccess(int Dev, unsigned Flags) {
  std::lock_guard<std::mutex> G(Lock);
  Access[Dev] = Flags;
}

void MemPool::allocated(uint64_t Bytes) {
  std::lock_guard<std::mutex> G(Lock);
  U.Current += Bytes;
  U.High = std::max(U.High, U.Current);
}

void MemPool::released(uint64_t Bytes) {
  std::lock_guard<std::mutex> G(Lock);
  U.Current -= std::min(U.Current, Bytes);
}
