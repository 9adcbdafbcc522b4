// The C++ embedding API of ptxforge: JIT-compile PTX and launch its kernels on the CPU from an application.
// Link ptxforge::ptxforge (CMake) or `pkg-config --libs ptxforge`. Reference: docs/api.md.
//
//   auto P = ptxforge::Program::fromText(Ptx, "k.ptx");        // diagnostics as values on failure
//   auto D = ptxforge::Device::create();
//   auto X = D->compile(*P);                                    // Expected<Executable>
//   auto K = X->kernel("scale");
//   auto B = D->allocate(N * 4);
//   K->run({{N / 128}, {128}}, ptxforge::Arguments::of(*B, 2.0f, N));
#pragma once

#include "ptxforge/api/ComputeCache.h"
#include "ptxforge/api/Device.h"
#include "ptxforge/api/Diagnostic.h"
#include "ptxforge/api/Executable.h"
#include "ptxforge/api/Expected.h"
#include "ptxforge/api/Launch.h"
#include "ptxforge/api/Memory.h"
#include "ptxforge/api/ObjectCode.h"
#include "ptxforge/api/Program.h"
#include "ptxforge/api/Stream.h"
#include "ptxforge/api/Version.h"

namespace ptxforge {

/// The library's version ("0.1.0"), which may differ from the headers' PTXFORGE_VERSION_STRING.
PTXFORGE_API const char *version();
/// The highest PTX ISA version the library accepts, as major*10+minor (90 for 9.0).
PTXFORGE_API unsigned maxPtxVersion();

} // namespace ptxforge
