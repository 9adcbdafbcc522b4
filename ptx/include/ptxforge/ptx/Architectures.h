// The GPU architectures NVIDIA has defined, each with the PTX ISA version that introduced it as a `.target` (PTX
// ISA "Target ISA notes"), and ptxforge's default device, newer than all of them. Header-only, so that fatbin's
// target planning (-arch=native) reads the same table as the verifier and the embedding API without linking the
// PTX front end.
#pragma once

namespace ptxforge::ptx {

struct Architecture {
  unsigned Sm;         ///< compute capability as major*10+minor
  unsigned PtxVersion; ///< the PTX ISA version that introduced `.target sm_XX`; 0: no `.target` names it
};

/// The compute capability of ptxforge's device when PTXFORGE_DEVICE_CC is unset: 13.0, newer than every
/// architecture the CUDA 13 toolkit knows (driver/Device.h says why). No `.target` names it; it runs the newest
/// architecture's PTX, as a GPU newer than the toolkit JIT-compiles it.
inline constexpr unsigned DefaultDeviceSm = 130;

inline constexpr Architecture Architectures[] = {
    {10, 10}, {11, 10},  {12, 12},  {13, 12},  {20, 20},  {21, 20},  {30, 31},  {32, 40},
    {35, 31}, {37, 41},  {50, 40},  {52, 41},  {53, 42},  {60, 50},  {61, 50},  {62, 50},
    {70, 60}, {72, 61},  {75, 63},  {80, 70},  {86, 71},  {87, 74},  {88, 90},  {89, 78},
    {90, 78}, {100, 86}, {101, 86}, {103, 88}, {110, 90}, {120, 87}, {121, 88}, {DefaultDeviceSm, 0}};

/// The table's entry for Sm, or null.
constexpr const Architecture *findArchitecture(unsigned Sm) {
  for (const Architecture &A : Architectures)
    if (A.Sm == Sm)
      return &A;
  return nullptr;
}

/// True for the compute capabilities a ptxforge device may have: every architecture NVIDIA has defined (those a
/// `.target` may name: ptx::isKnownSm), and the default device.
constexpr bool isDeviceArchitecture(unsigned Sm) { return findArchitecture(Sm) != nullptr; }

} // namespace ptxforge::ptx
