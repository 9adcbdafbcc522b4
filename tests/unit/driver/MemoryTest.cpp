// Device memory: allocations are aligned, zeroed, found by any interior address, separated by guard gaps that
// fault, and their address ranges return to the pool when freed.
#include "ptxforge/driver/Memory.h"
#include "ptxforge/codegen/FaultGuard.h"
#include "ptxforge/driver/Status.h"

#include <doctest/doctest.h>

#include <csignal>
#include <cstring>

using namespace ptxforge::driver;
using ptxforge::codegen::runWithFaultGuard;

namespace {
uint64_t allocate(uint64_t Bytes, MemoryKind Kind = MemoryKind::Device) {
  auto P = DeviceMemory::get().allocate(Bytes, Kind, nullptr);
  REQUIRE(static_cast<bool>(P));
  return *P;
}
} // namespace

TEST_CASE("allocations are aligned, zeroed and found by interior addresses") {
  DeviceMemory &M = DeviceMemory::get();
  REQUIRE(M.reservationSize() >= (16ull << 30));
  uint64_t A = allocate(1000), B = allocate(3 << 20);
  CHECK(A % 256 == 0);
  CHECK(B % (2 << 20) == 0);
  CHECK(A != B);
  CHECK(reinterpret_cast<const char *>(A)[999] == 0);
  std::memset(reinterpret_cast<void *>(B), 0x5a, 3 << 20);
  auto Found = M.find(B + 12345);
  REQUIRE(Found);
  CHECK(Found->Base == B);
  CHECK(Found->Size == (3u << 20));
  CHECK(M.containsRange(A, 1000));
  CHECK_FALSE(M.containsRange(A, 1001));
  CHECK_FALSE(M.find(A + 1000 + 4096 * 4));
  CHECK(takeStatus(M.free(A, {MemoryKind::Device})) == Status::Success);
  CHECK(takeStatus(M.free(A, {MemoryKind::Device})) == Status::InvalidValue); // double free
  CHECK(takeStatus(M.free(B + 8, {MemoryKind::Device})) == Status::InvalidValue);
  CHECK(takeStatus(M.free(B, {MemoryKind::Host})) == Status::InvalidValue); // wrong kind
  CHECK(takeStatus(M.free(B, {MemoryKind::Device})) == Status::Success);
  CHECK_FALSE(M.find(B));
}

TEST_CASE("zero-byte and impossible allocations fail with the driver's codes") {
  DeviceMemory &M = DeviceMemory::get();
  CHECK(takeStatus(M.allocate(0, MemoryKind::Device, nullptr).takeError()) == Status::InvalidValue);
  CHECK(takeStatus(M.allocate(1ull << 50, MemoryKind::Device, nullptr).takeError()) == Status::OutOfMemory);
}

TEST_CASE("the gap behind an allocation and freed memory fault") {
  uint64_t A = allocate(4096);
  auto F = runWithFaultGuard([&] { *reinterpret_cast<volatile char *>(A + 4096) = 1; });
  REQUIRE(F);
  CHECK(F->Signal == SIGSEGV);
  CHECK(F->Address == A + 4096);
  CHECK(takeStatus(DeviceMemory::get().free(A, {MemoryKind::Device})) == Status::Success);
  F = runWithFaultGuard([&] { (void)*reinterpret_cast<volatile char *>(A); });
  CHECK(F);
  // A wild pointer 1 TiB past an allocation still lands in the reservation.
  uint64_t B = allocate(64);
  F = runWithFaultGuard([&] { *reinterpret_cast<volatile int *>(B + (1ull << 40)) = 7; });
  CHECK(F);
  CHECK(takeStatus(DeviceMemory::get().free(B, {MemoryKind::Device})) == Status::Success);
}

TEST_CASE("freed ranges are reused") {
  uint64_t A = allocate(1 << 20);
  CHECK(takeStatus(DeviceMemory::get().free(A, {MemoryKind::Device})) == Status::Success);
  uint64_t B = allocate(1 << 20);
  CHECK(B == A);
  CHECK(reinterpret_cast<const int *>(B)[100] == 0); // fresh pages
  CHECK(takeStatus(DeviceMemory::get().free(B, {MemoryKind::Device})) == Status::Success);
}

TEST_CASE("external ranges are found but not freed") {
  static char Buffer[256];
  DeviceMemory &M = DeviceMemory::get();
  uint64_t P = reinterpret_cast<uint64_t>(Buffer);
  CHECK(takeStatus(M.addExternal(P, sizeof Buffer, MemoryKind::ModuleGlobal, nullptr)) == Status::Success);
  CHECK(takeStatus(M.addExternal(P + 8, 8, MemoryKind::HostRegistered, nullptr)) == Status::InvalidValue);
  auto A = M.find(P + 100);
  REQUIRE(A);
  CHECK(A->Kind == MemoryKind::ModuleGlobal);
  CHECK(takeStatus(M.free(P, {MemoryKind::Device})) == Status::InvalidValue);
  M.removeExternal(P);
  CHECK_FALSE(M.find(P));
}
