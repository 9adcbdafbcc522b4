// Device memory for kernels: buffers in the driver core's device address range. Every allocation is followed
// by an unmapped guard gap, so a kernel that runs off a buffer or follows a bad pointer fails with
// ErrorCode::IllegalAddress instead of corrupting other memory. Device addresses are host addresses (unified
// addressing), passed to kernels as 64-bit values.
#pragma once

#include "ptxforge/api/Expected.h"
#include "ptxforge/api/Export.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

namespace ptxforge {

/// A device address as kernels see it (`.u64` parameters, `ld.global`).
using DevicePtr = uint64_t;

/// One allocation, freed when the buffer is destroyed (after the device's queued work finished, since a
/// kernel may still use it). Move-only. Copies between the buffer and host memory are synchronous and ordered
/// after the work queued on the device's default stream; concurrent calls on one buffer are safe, but what
/// the bytes end up as when two of them write the same range is unspecified.
class PTXFORGE_API DeviceBuffer {
public:
  DeviceBuffer(DeviceBuffer &&) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&) noexcept;
  ~DeviceBuffer();

  DevicePtr address() const { return Address; }
  size_t size() const { return Bytes; }

  /// Copies Size bytes from Source into the buffer at Offset (InvalidArgument past its end).
  Expected<void> write(const void *Source, size_t Size, size_t Offset = 0);
  /// Copies Size bytes at Offset of the buffer to Destination.
  Expected<void> read(void *Destination, size_t Size, size_t Offset = 0) const;
  /// Sets every byte to Value.
  Expected<void> fill(uint8_t Value);

  template <class T> Expected<void> write(const std::vector<T> &Values) {
    static_assert(std::is_trivially_copyable_v<T>, "device memory holds plain bytes");
    return write(Values.data(), Values.size() * sizeof(T));
  }
  /// The first Count elements of type T.
  template <class T> Expected<std::vector<T>> read(size_t Count) const {
    static_assert(std::is_trivially_copyable_v<T>, "device memory holds plain bytes");
    std::vector<T> Values(Count);
    Expected<void> R = read(Values.data(), Count * sizeof(T));
    if (!R)
      return R.error();
    return Values;
  }

  struct Owner;

private:
  friend class Device;
  DeviceBuffer(std::shared_ptr<Owner> O, DevicePtr Address, size_t Bytes)
      : O(std::move(O)), Address(Address), Bytes(Bytes) {}
  void release();

  std::shared_ptr<Owner> O;
  DevicePtr Address = 0;
  size_t Bytes = 0;
};

} // namespace ptxforge
