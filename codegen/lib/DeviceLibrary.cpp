// Which `.extern .func`s the runtime provides (the device library): the lowering forwards each to its helper
// (Lowering.cpp, defineDeviceLibrary) and the driver's linker and loader accept them undefined.
#include "ptxforge/codegen/DeviceRuntime.h"

#include "ptxforge/ptx/Function.h"

using namespace ptxforge;

namespace {

struct LibraryFunction {
  const char *Name;
  const char *Helper;
  int Returns, Params; ///< the signature the helper takes (-1: any, passed through as written)
};

/// The device runtime's functions under their CDP2 names (what nvcc 13 emits), and the unprefixed names of
/// those older PTX calls directly.
constexpr LibraryFunction Library[] = {
    {"vprintf", "ptxrt_vprintf", -1, -1},
    {"__assertfail", "ptxrt_assertfail", -1, -1},
    {"__cudaCDP2GetParameterBufferV2", "ptxrt_cdp_parameter_buffer_v2", 1, 4},
    {"cudaGetParameterBufferV2", "ptxrt_cdp_parameter_buffer_v2", 1, 4},
    {"__cudaCDP2GetParameterBuffer", "ptxrt_cdp_parameter_buffer", 1, 2},
    {"cudaGetParameterBuffer", "ptxrt_cdp_parameter_buffer", 1, 2},
    {"__cudaCDP2LaunchDeviceV2", "ptxrt_cdp_launch_v2", 1, 2},
    {"__cudaCDP2LaunchDeviceV2_ptsz", "ptxrt_cdp_launch_v2", 1, 2},
    {"cudaLaunchDeviceV2", "ptxrt_cdp_launch_v2", 1, 2},
    {"__cudaCDP2LaunchDevice", "ptxrt_cdp_launch", 1, 6},
    {"__cudaCDP2LaunchDevice_ptsz", "ptxrt_cdp_launch", 1, 6},
    {"cudaLaunchDevice", "ptxrt_cdp_launch", 1, 6},
    {"__cudaCDP2Malloc", "ptxrt_cdp_malloc", 1, 2},
    {"__cudaCDP2Free", "ptxrt_cdp_free", 1, 1},
    {"__cudaCDP2MemcpyAsync", "ptxrt_cdp_memcpy_async", 1, 5},
    {"__cudaCDP2MemcpyAsync_ptsz", "ptxrt_cdp_memcpy_async", 1, 5},
    {"__cudaCDP2MemsetAsync", "ptxrt_cdp_memset_async", 1, 4},
    {"__cudaCDP2MemsetAsync_ptsz", "ptxrt_cdp_memset_async", 1, 4},
    {"__cudaCDP2GetErrorName", "ptxrt_cdp_get_error_name", 1, 1},
    {"__cudaCDP2GetErrorString", "ptxrt_cdp_get_error_string", 1, 1},
    {"__cudaCDP2StreamCreateWithFlags", "ptxrt_cdp_stream_create", 1, 2},
    {"__cudaCDP2StreamDestroy", "ptxrt_cdp_stream_destroy", 1, 1},
    {"__cudaCDP2EventCreateWithFlags", "ptxrt_cdp_event_create", 1, 2},
    {"__cudaCDP2EventDestroy", "ptxrt_cdp_event_destroy", 1, 1},
    {"__cudaCDP2EventRecord", "ptxrt_cdp_event_record", 1, 2},
    {"__cudaCDP2EventRecord_ptsz", "ptxrt_cdp_event_record", 1, 2},
    {"__cudaCDP2EventRecordWithFlags", "ptxrt_cdp_event_record_flags", 1, 3},
    {"__cudaCDP2EventRecordWithFlags_ptsz", "ptxrt_cdp_event_record_flags", 1, 3},
    {"__cudaCDP2StreamWaitEvent", "ptxrt_cdp_stream_wait_event", 1, 3},
    {"__cudaCDP2StreamWaitEvent_ptsz", "ptxrt_cdp_stream_wait_event", 1, 3},
    {"__cudaCDP2GetLastError", "ptxrt_cdp_get_last_error", 1, 0},
    {"__cudaCDP2PeekAtLastError", "ptxrt_cdp_peek_at_last_error", 1, 0},
    {"__cudaCDP2GetDevice", "ptxrt_cdp_get_device", 1, 1},
    {"__cudaCDP2GetDeviceCount", "ptxrt_cdp_get_device_count", 1, 1},
    {"__cudaCDP2RuntimeGetVersion", "ptxrt_cdp_runtime_get_version", 1, 1},
    {"__cudaCDP2DeviceGetAttribute", "ptxrt_cdp_device_get_attribute", 1, 3},
    {"__cudaCDP2DeviceGetLimit", "ptxrt_cdp_device_get_limit", 1, 2},
    {"cudaGraphSetConditional", "ptxrt_cdp_graph_set_conditional", 0, 2},
};

} // namespace

const char *ptxforge::codegen::deviceLibraryHelper(const ptx::Function &F) {
  for (const LibraryFunction &L : Library) {
    if (F.Name != L.Name)
      continue;
    if (L.Returns >= 0 && (F.Sig.Returns.size() != size_t(L.Returns) || F.Sig.Params.size() != size_t(L.Params)))
      return nullptr;
    return L.Helper;
  }
  return nullptr;
}

bool ptxforge::codegen::isDeviceRuntimeFunction(const ptx::Function &F) {
  for (const LibraryFunction &L : Library)
    if (F.Name == L.Name)
      return llvm::StringRef(L.Helper).starts_with("ptxrt_cdp_");
  return false;
}
