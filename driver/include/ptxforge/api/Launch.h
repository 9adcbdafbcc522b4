// What a launch is made of: the grid and block shape, dynamic shared memory, and the kernel's arguments as
// typed values (checked against the kernel's parameter layout when launched).
#pragma once

#include "ptxforge/api/Export.h"
#include "ptxforge/api/Memory.h"

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace ptxforge {

struct Dim3 {
  uint32_t X = 1, Y = 1, Z = 1;
  Dim3(uint32_t X = 1, uint32_t Y = 1, uint32_t Z = 1) : X(X), Y(Y), Z(Z) {}
};

struct LaunchConfig {
  Dim3 Grid, Block;
  uint32_t DynamicSharedBytes = 0;
};

/// A kernel's arguments in parameter order. Each is a plain value whose size must equal its parameter's
/// (`.u32` takes a uint32_t or int32_t or float, `.u64` a DevicePtr or uint64_t, `.align 16 .b8 p[16]` any
/// 16-byte struct); a mismatch fails the launch with InvalidArgument naming the parameter.
class PTXFORGE_API Arguments {
public:
  Arguments() = default;
  /// Arguments::of(Buffer, 1.5f, N)
  template <class... Ts> static Arguments of(const Ts &...Values) {
    Arguments A;
    (A.add(Values), ...);
    return A;
  }

  template <class T> Arguments &add(const T &Value) {
    static_assert(std::is_trivially_copyable_v<T>, "kernel arguments are plain values");
    return addBytes(&Value, sizeof(T));
  }
  /// The buffer's device address.
  Arguments &add(const DeviceBuffer &Buffer) { return add(Buffer.address()); }
  Arguments &addBytes(const void *Data, size_t Size);

  size_t count() const { return Ends.size(); }
  /// Argument I's bytes and size.
  const unsigned char *data(size_t I) const { return Bytes.data() + (I ? Ends[I - 1] : 0); }
  size_t size(size_t I) const { return Ends[I] - (I ? Ends[I - 1] : 0); }

private:
  std::vector<unsigned char> Bytes;
  std::vector<size_t> Ends;
};

} // namespace ptxforge
