// Runtime helpers for integer instructions too irregular to inline: fns (find the n-th set bit).
#include "Runtime.h"

#include <cstdint>

using namespace ptxforge::codegen::exec;

extern "C" {

/// fns.b32 d, mask, base, offset (PTX ISA pseudo-code): the |offset|-th set bit of mask counting from bit base
/// upwards (offset > 0) or downwards (offset < 0), base itself included; offset 0 tests bit base alone.
/// 0xffffffff when there is none. (A base above 31 is undefined in PTX: nothing is found.)
static uint32_t ptxrt_fns(uint32_t Mask, uint32_t Base, int32_t Offset) {
  if (Base > 31)
    return 0xffffffffu;
  if (Offset == 0)
    return (Mask >> Base) & 1 ? Base : 0xffffffffu;
  int64_t Count = Offset > 0 ? static_cast<int64_t>(Offset) - 1 : -static_cast<int64_t>(Offset) - 1;
  int Inc = Offset > 0 ? 1 : -1;
  for (int Pos = static_cast<int>(Base); Pos >= 0 && Pos < 32; Pos += Inc) {
    if ((Mask >> Pos) & 1) {
      if (Count == 0)
        return static_cast<uint32_t>(Pos);
      --Count;
    }
  }
  return 0xffffffffu;
}
}

void ptxforge::codegen::exec::registerIntegerHelpers(HelperTable &T) { T.insert(T.end(), {PTXRT_HELPER(ptxrt_fns)}); }
