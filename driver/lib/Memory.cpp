// The reserved device range: first-fit allocation with a guard gap behind every allocation, pages committed
// with mprotect and given back (and made inaccessible again) by mapping fresh PROT_NONE pages over them.
#include "ptxforge/driver/Memory.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/MemPool.h"
#include "ptxforge/driver/Settings.h"
#include "ptxforge/driver/Status.h"
#include "ptxforge/support/InputFile.h"

#include "llvm/Support/MathExtras.h"

#include <cstdlib>
#include <string_view>
#include <sys/mman.h>
#include <tuple>

using namespace ptxforge::driver;

namespace {
constexpr uint64_t PageBytes = 4096;
/// Never committed: a kernel running off the end of an allocation faults in here.
constexpr uint64_t GuardBytes = 64 * 1024;
/// Large allocations start on 2 MiB boundaries (transparent huge pages, and GPU-like alignment).
constexpr uint64_t LargeAlignment = 2 << 20;
} // namespace

bool ptxforge::driver::hostRangeAccessible(uint64_t Base, uint64_t Bytes, bool Writable) {
  // The kernel's own table of this process's mappings (sorted by address), read whole: registering is rare
  // and a probe by access would fault on PROT_NONE pages.
  auto Maps = support::readInputFile("/proc/self/maps", 256 << 20);
  if (!Maps) {
    llvm::consumeError(Maps.takeError());
    return true; // no /proc: accept, as before
  }
  uint64_t Cursor = Base, End = Base + Bytes;
  if (End < Base)
    return false;
  llvm::StringRef Rest = *Maps;
  while (!Rest.empty() && Cursor < End) {
    llvm::StringRef Line;
    std::tie(Line, Rest) = Rest.split('\n');
    auto [Range, Tail] = Line.split(' ');
    auto [From, To] = Range.split('-');
    uint64_t Start = 0, Stop = 0;
    if (From.getAsInteger(16, Start) || To.getAsInteger(16, Stop) || Stop <= Cursor)
      continue;
    if (Start > Cursor)
      return false; // a hole
    if (Tail.size() < 2 || Tail[0] != 'r' || (Writable && Tail[1] != 'w'))
      return false;
    Cursor = Stop;
  }
  return Cursor >= End;
}

DeviceMemory &DeviceMemory::get() {
  static DeviceMemory *Instance = new DeviceMemory(); // never destroyed: kernels may run during exit
  return *Instance;
}

DeviceMemory::DeviceMemory() {
  Total = deviceProperties().TotalMemory;
  // As much address space as the host gives (4 TiB normally): far larger than any allocation pattern, so a
  // wild pointer 1 TiB past an allocation still lands in the reservation and faults.
  for (uint64_t Size = 4ull << 40; Size >= (16ull << 30); Size /= 2) {
    void *P = mmap(nullptr, Size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (P != MAP_FAILED) {
      Reserved = static_cast<char *>(P);
      ReservedSize = Size;
      break;
    }
  }
  if (Reserved)
    FreeRanges[GuardBytes] = ReservedSize - GuardBytes; // a guard in front of the first allocation too
}

llvm::Expected<uint64_t> DeviceMemory::allocate(uint64_t Bytes, MemoryKind Kind, Context *Owner, unsigned HostFlags) {
  if (Bytes == 0)
    return makeError(Status::InvalidValue, "allocation of 0 bytes");
  if (!Reserved)
    return makeError(Status::OutOfMemory, "no address space could be reserved for device memory");
  if (Bytes > ReservedSize)
    return makeError(Status::OutOfMemory, "allocation larger than the device's address space");
  uint64_t Need = llvm::alignTo(Bytes, PageBytes);
  uint64_t Align = Need >= LargeAlignment ? LargeAlignment : PageBytes;
  uint64_t Take = Need + GuardBytes;
  // Page-locked host memory is host memory: it does not count against the device's.
  bool Counted = Kind != MemoryKind::Host;
  std::scoped_lock L(Lock);
  if (Counted && Used + Need > Total)
    return makeError(Status::OutOfMemory,
                     "allocation of " + llvm::Twine(Bytes) + " bytes exceeds the free device memory");
  uint64_t Base = reinterpret_cast<uint64_t>(Reserved);
  for (auto It = FreeRanges.begin(); It != FreeRanges.end(); ++It) {
    uint64_t Start = It->first, Size = It->second;
    uint64_t Pad = llvm::alignTo(Base + Start, Align) - (Base + Start);
    if (Pad > Size || Size - Pad < Take)
      continue;
    uint64_t Offset = Start + Pad;
    if (mprotect(Reserved + Offset, Need, PROT_READ | PROT_WRITE) != 0)
      return makeError(Status::OutOfMemory, "the host refused to commit " + llvm::Twine(Need) + " bytes");
    // Large buffers on 2 MiB pages where the host's transparent huge pages are opt-in (madvise mode, Debian's
    // default): kernels stream through them, and 4 KiB pages cost a TLB miss every 4 KiB. Best effort.
    // PTXFORGE_HUGE_PAGES=0 opts out: physically contiguous 2 MiB pages map power-of-two strides (a transpose's
    // columns) into few sets of the physically indexed caches, where 4 KiB pages scatter them.
    static const bool Huge = [] {
      const char *E = std::getenv("PTXFORGE_HUGE_PAGES");
      return !E || std::string_view(E) != "0";
    }();
    if (Need >= LargeAlignment && Huge)
      madvise(Reserved + Offset, Need, MADV_HUGEPAGE);
    FreeRanges.erase(It);
    if (Pad)
      FreeRanges[Start] = Pad;
    if (Size - Pad > Take)
      FreeRanges[Offset + Take] = Size - Pad - Take;
    uint64_t Address = Base + Offset;
    Live[Address] = Allocation{Address, Bytes, Kind, Owner, NextBufferId++, HostFlags};
    Footprint[Address] = Take;
    if (Kind == MemoryKind::Device && processSettings().Memcheck)
      Initialized[Address] = std::shared_ptr<uint8_t[]>(new uint8_t[Bytes]());
    if (Counted)
      Used += Need;
    return Address;
  }
  return makeError(Status::OutOfMemory, "device address space exhausted");
}

void DeviceMemory::assignPool(uint64_t Base, MemPool &Pool) {
  std::scoped_lock L(Lock);
  auto It = Live.find(Base);
  if (It == Live.end() || It->second.Pool)
    return;
  It->second.Pool = &Pool;
  Pool.allocated(It->second.Size);
}

llvm::Error DeviceMemory::free(uint64_t Address, std::initializer_list<MemoryKind> Kinds) {
  std::scoped_lock L(Lock);
  auto It = Live.find(Address);
  auto FP = Footprint.find(Address);
  if (It == Live.end() || FP == Footprint.end() ||
      std::find(Kinds.begin(), Kinds.end(), It->second.Kind) == Kinds.end())
    return makeError(Status::InvalidValue, "not the start of a live allocation");
  uint64_t Need = llvm::alignTo(It->second.Size, PageBytes);
  if (It->second.Pool)
    It->second.Pool->released(It->second.Size);
  // Fresh inaccessible pages replace the old ones: the memory goes back to the host and use-after-free faults.
  mmap(reinterpret_cast<void *>(Address), Need, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
       0);
  uint64_t Offset = Address - reinterpret_cast<uint64_t>(Reserved), Size = FP->second;
  if (It->second.Kind != MemoryKind::Host)
    Used -= Need;
  Live.erase(It);
  Footprint.erase(FP);
  Initialized.erase(Address);
  // Give the range back, merging with free neighbours.
  auto Next = FreeRanges.lower_bound(Offset);
  if (Next != FreeRanges.end() && Next->first == Offset + Size) {
    Size += Next->second;
    Next = FreeRanges.erase(Next);
  }
  if (Next != FreeRanges.begin()) {
    auto Prev = std::prev(Next);
    if (Prev->first + Prev->second == Offset) {
      Prev->second += Size;
      return llvm::Error::success();
    }
  }
  FreeRanges[Offset] = Size;
  return llvm::Error::success();
}

llvm::Error DeviceMemory::addExternal(uint64_t Base, uint64_t Size, MemoryKind Kind, Context *Owner,
                                      unsigned HostFlags) {
  if (Size == 0)
    return llvm::Error::success();
  std::scoped_lock L(Lock);
  auto Next = Live.lower_bound(Base);
  if ((Next != Live.end() && Next->first < Base + Size) ||
      (Next != Live.begin() && std::prev(Next)->second.contains(Base)))
    return makeError(Status::InvalidValue, "the range overlaps memory the driver already knows");
  Live[Base] = Allocation{Base, Size, Kind, Owner, NextBufferId++, HostFlags};
  return llvm::Error::success();
}

void DeviceMemory::removeExternal(uint64_t Base) {
  std::scoped_lock L(Lock);
  if (!Footprint.count(Base))
    Live.erase(Base);
}

std::optional<Allocation> DeviceMemory::find(uint64_t Address) const {
  std::scoped_lock L(Lock);
  auto It = Live.upper_bound(Address);
  if (It == Live.begin())
    return std::nullopt;
  --It;
  if (!It->second.contains(Address))
    return std::nullopt;
  return It->second;
}

std::optional<Allocation> DeviceMemory::nearest(uint64_t Address) const {
  std::scoped_lock L(Lock);
  auto Above = Live.upper_bound(Address);
  std::optional<Allocation> Best;
  if (Above != Live.begin()) {
    const Allocation &Below = std::prev(Above)->second;
    if (Below.contains(Address))
      return Below;
    Best = Below;
  }
  if (Above != Live.end() && (!Best || Above->second.Base - Address < Address - (Best->Base + Best->Size)))
    Best = Above->second;
  return Best;
}

bool DeviceMemory::containsRange(uint64_t Address, uint64_t Bytes) const {
  auto A = find(Address);
  return A && A->contains(Address, Bytes);
}

std::vector<uint64_t> DeviceMemory::allocationsOf(const Context *Owner) const {
  std::scoped_lock L(Lock);
  std::vector<uint64_t> Bases;
  for (const auto &[Base, A] : Live)
    if (A.Owner == Owner && Footprint.count(Base))
      Bases.push_back(Base);
  return Bases;
}

uint64_t DeviceMemory::usedBytes() const {
  std::scoped_lock L(Lock);
  return Used;
}

std::shared_ptr<const DeviceMemory::MemcheckView> DeviceMemory::memcheckView() const {
  auto V = std::make_shared<MemcheckView>();
  std::scoped_lock L(Lock);
  V->Memory.ArenaBegin = reinterpret_cast<uint64_t>(Reserved);
  V->Memory.ArenaEnd = V->Memory.ArenaBegin + ReservedSize;
  for (const auto &[Base, A] : Live) {
    codegen::MemcheckAllocation M{Base, A.Size, nullptr};
    if (auto It = Initialized.find(Base); It != Initialized.end()) {
      M.Initialized = It->second.get();
      V->Shadows.push_back(It->second);
    }
    V->Memory.Allocations.push_back(M);
  }
  return V;
}

void DeviceMemory::markInitialized(uint64_t Address, uint64_t Bytes) {
  std::scoped_lock L(Lock);
  if (Initialized.empty())
    return;
  auto It = Initialized.upper_bound(Address);
  if (It == Initialized.begin())
    return;
  --It;
  auto A = Live.find(It->first);
  if (A == Live.end() || !A->second.contains(Address))
    return;
  uint64_t Offset = Address - A->second.Base;
  std::fill_n(It->second.get() + Offset, std::min(Bytes, A->second.Size - Offset), uint8_t(1));
}
