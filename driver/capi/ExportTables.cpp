// cuGetExportTable: the driver's undocumented tables of entry points ("dark API"), which NVIDIA's CUDA runtime
// asks for by UUID. The runtime linked statically into NVIDIA's libraries (cuBLAS, cuFFT, cuRAND, cuSPARSE,
// cuSOLVER) fails its initialisation without them. Each table is an array of pointers; where the first one is
// the table's byte size, slot 0 holds that. The slots the runtime calls do what NVIDIA's driver does, through
// the same C++ core as the public entry points; slots no runtime has been seen calling log the call (under
// PTXFORGE_DRIVER_VERBOSE) and return CUDA_ERROR_NOT_SUPPORTED. docs/export-tables.md describes every slot.
#include <cuda.h>

#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Driver.h"
#include "ptxforge/driver/ExportTables.h"
#include "ptxforge/driver/Module.h"
#include "ptxforge/driver/PtxforgeExportTable.h"
#include "ptxforge/driver/Settings.h"
#include "ptxforge/driver/Stream.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include <pthread.h>
#include <unistd.h>

#define PTXFORGE_API extern "C" __attribute__((visibility("default")))

using namespace ptxforge;
using namespace ptxforge::driver;

namespace {

using Slot = const void *;

bool verbose() { return processSettings().Verbose; }

/// Index of each table in Tables below (the names are those public projects such as ZLUDA's dark_api use).
enum TableId {
  RuntimeInterface,
  ToolsTls,
  ToolsCallbackHooks,
  ContextLocalStorage,
  ContextChecks,
  Integrity,
  ToolsContext,
  ToolsModule,
  Ptxforge
};
constexpr const char *TableNames[] = {"cudart interface",      "tools TLS",      "tools runtime callback hooks",
                                      "context-local storage", "context checks", "integrity check",
                                      "tools context",         "tools module",   "ptxforge"};

void logCall(TableId T, unsigned Index, const char *What) {
  if (verbose())
    std::fprintf(stderr, "ptxforge: export table '%s' slot %u: %s\n", TableNames[T], Index, What);
}

/// A slot whose meaning is not known: says so, with the six integer argument registers of the System V ABI (what
/// the caller passed in those it used, leftovers in the others), and fails; its callers check the result, as for
/// any entry point. Reading registers the caller did not set is harmless at the ABI level, and it is what tells
/// the next reader of the log what the slot is given.
template <TableId T, unsigned Index>
CUresult unknownSlot(uintptr_t A0, uintptr_t A1, uintptr_t A2, uintptr_t A3, uintptr_t A4, uintptr_t A5) {
  if (verbose())
    std::fprintf(stderr,
                 "ptxforge: export table '%s' slot %u: not supported (arguments %#zx, %#zx, %#zx, %#zx, %#zx, "
                 "%#zx)\n",
                 TableNames[T], Index, size_t(A0), size_t(A1), size_t(A2), size_t(A3), size_t(A4), size_t(A5));
  return CUDA_ERROR_NOT_SUPPORTED;
}

/// A table of N slots: its size, then unknownSlot everywhere; the known slots are set afterwards.
template <TableId T, size_t... I> std::array<Slot, sizeof...(I) + 1> unknownTable(std::index_sequence<I...>) {
  return {reinterpret_cast<Slot>((sizeof...(I) + 1) * sizeof(Slot)),
          reinterpret_cast<Slot>(&unknownSlot<T, unsigned(I + 1)>)...};
}
template <TableId T, size_t N> std::array<Slot, N> unknownTable() {
  return unknownTable<T>(std::make_index_sequence<N - 1>());
}

CUresult ok(TableId T, unsigned Index, const char *What) {
  logCall(T, Index, What);
  return CUDA_SUCCESS;
}

/// The context a slot is given: that one, or the calling thread's current one for null.
Context *contextArgument(CUcontext H) {
  if (!H)
    return ContextStack::current();
  return Driver::get().Contexts.contains(H) ? reinterpret_cast<Context *>(H) : nullptr;
}

// ---- the runtime interface ----

/// nvcc's host-side record of an embedded fatbinary (__fatBinC_Wrapper_t).
struct FatbinWrapper {
  uint32_t Magic, Version;
  const void *Data;
  const void *PrelinkedOrFilename;
};
constexpr uint32_t FatbinWrapperMagic = 0x466243b1;

CUresult moduleFromWrapper(CUmodule *Module, const FatbinWrapper *W) {
  logCall(RuntimeInterface, 1, "module from fatbinary wrapper");
  if (!Module || !W || W->Magic != FatbinWrapperMagic)
    return CUDA_ERROR_INVALID_VALUE;
  return cuModuleLoadData(Module, W->Data);
}

CUresult primaryContext(CUcontext *Ctx, CUdevice Dev) {
  logCall(RuntimeInterface, 2, "primary context");
  if (!Ctx)
    return CUDA_ERROR_INVALID_VALUE;
  if (!Driver::get().initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (Dev < 0 || Dev >= deviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  // The runtime's own handle to the primary context, which it activates with cuDevicePrimaryCtxRetain; this
  // call neither retains nor activates it.
  *Ctx = reinterpret_cast<CUcontext>(&Driver::get().primaryContext(Dev));
  return CUDA_SUCCESS;
}

CUresult moduleFromWrapperEx(CUmodule *Module, const FatbinWrapper *W, void *A, void *B, unsigned C) {
  logCall(RuntimeInterface, 6, "module from fatbinary wrapper (options)");
  if (A || B || C)
    return CUDA_ERROR_NOT_SUPPORTED;
  return moduleFromWrapper(Module, W);
}

void runtimeNotice(uintptr_t) { logCall(RuntimeInterface, 7, "notice (ignored)"); }

CUresult moduleFromFatbinary(const void *Fatbin, CUmodule *Module, void *A, void *B, unsigned C) {
  logCall(RuntimeInterface, 8, "module from fatbinary");
  if (A || B || C)
    return CUDA_ERROR_NOT_SUPPORTED;
  if (!Module || !Fatbin)
    return CUDA_ERROR_INVALID_VALUE;
  return cuModuleLoadData(Module, Fatbin);
}

// ptxforge's JIT is part of libcuda: there is no compiler library to load.
CUresult loadCompilers() { return ok(RuntimeInterface, 12, "load compilers (nothing to load)"); }

// ---- the tools tables: buffers the runtime shares with profilers; no tool is attached here ----
uint32_t ToolsBuffer1[1024], ToolsBuffer2[14];

void toolsBuffer1(void **Ptr, size_t *Size) {
  logCall(ToolsCallbackHooks, 2, "callback buffer");
  *Ptr = ToolsBuffer1, *Size = std::size(ToolsBuffer1);
}

void toolsBuffer2(void **Ptr, size_t *Size) {
  logCall(ToolsCallbackHooks, 6, "callback buffer");
  *Ptr = ToolsBuffer2, *Size = std::size(ToolsBuffer2);
}

// ---- tools TLS: the calling thread's state as tools see it ----

/// The calling thread's current context (null when it has none). cuBLASLt asks before each of its calls and
/// then asks the tools context table for that context's number (slot 4 there).
CUresult threadContext(CUcontext *Ctx) {
  logCall(ToolsTls, 2, "current context");
  if (!Ctx)
    return CUDA_ERROR_INVALID_VALUE;
  *Ctx = reinterpret_cast<CUcontext>(ContextStack::current());
  return CUDA_SUCCESS;
}

// ---- context-local storage ----
using StorageDestructor = void (*)(CUcontext, void *, void *);

CUresult storagePut(CUcontext H, void *Key, void *Value, StorageDestructor Destructor) {
  logCall(ContextLocalStorage, 0, "put");
  Context *C = contextArgument(H);
  if (!C)
    return CUDA_ERROR_INVALID_CONTEXT;
  C->putLocal(Key, Value, reinterpret_cast<Context::LocalDestructor>(Destructor));
  return CUDA_SUCCESS;
}

CUresult storageDelete(CUcontext H, void *Key) {
  logCall(ContextLocalStorage, 1, "delete");
  Context *C = contextArgument(H);
  if (!C)
    return CUDA_ERROR_INVALID_CONTEXT;
  return C->eraseLocal(Key) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult storageGet(void **Value, CUcontext H, void *Key) {
  logCall(ContextLocalStorage, 2, "get");
  Context *C = contextArgument(H);
  if (!C)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (!Value)
    return CUDA_ERROR_INVALID_VALUE;
  std::optional<void *> V = C->getLocal(Key);
  if (!V)
    return CUDA_ERROR_INVALID_HANDLE; // not stored yet: the runtime then creates its state and puts it
  *Value = *V;
  return CUDA_SUCCESS;
}

// ---- context checks: flags of a context the runtime must not use; none is ever set here ----
CUresult contextCheck(CUcontext, uint32_t *Flags, const void **) {
  logCall(ContextChecks, 2, "context check");
  if (Flags)
    *Flags = 0;
  return CUDA_SUCCESS;
}

uint32_t contextCheck3() {
  logCall(ContextChecks, 3, "check");
  return 0;
}

// ---- the integrity check ----
CUresult integrityCheck(uint32_t RuntimeVersion, uint64_t UnixSeconds, uint64_t (*Result)[2]);

// ---- the tables ----
Slot RuntimeInterfaceTable[13] = {
    reinterpret_cast<Slot>(sizeof(RuntimeInterfaceTable)),
    reinterpret_cast<Slot>(&moduleFromWrapper),
    reinterpret_cast<Slot>(&primaryContext),
    reinterpret_cast<Slot>(&unknownSlot<RuntimeInterface, 3>),
    reinterpret_cast<Slot>(&unknownSlot<RuntimeInterface, 4>),
    reinterpret_cast<Slot>(&unknownSlot<RuntimeInterface, 5>),
    reinterpret_cast<Slot>(&moduleFromWrapperEx),
    reinterpret_cast<Slot>(&runtimeNotice),
    reinterpret_cast<Slot>(&moduleFromFatbinary),
    reinterpret_cast<Slot>(&unknownSlot<RuntimeInterface, 9>),
    reinterpret_cast<Slot>(&unknownSlot<RuntimeInterface, 10>),
    reinterpret_cast<Slot>(&unknownSlot<RuntimeInterface, 11>),
    reinterpret_cast<Slot>(&loadCompilers),
};
Slot ToolsTlsTable[4] = {
    reinterpret_cast<Slot>(sizeof(ToolsTlsTable)),
    reinterpret_cast<Slot>(&unknownSlot<ToolsTls, 1>),
    reinterpret_cast<Slot>(&threadContext),
    reinterpret_cast<Slot>(&unknownSlot<ToolsTls, 3>),
};
Slot ToolsCallbackHooksTable[7] = {
    reinterpret_cast<Slot>(sizeof(ToolsCallbackHooksTable)),
    reinterpret_cast<Slot>(&unknownSlot<ToolsCallbackHooks, 1>),
    reinterpret_cast<Slot>(&toolsBuffer1),
    reinterpret_cast<Slot>(&unknownSlot<ToolsCallbackHooks, 3>),
    reinterpret_cast<Slot>(&unknownSlot<ToolsCallbackHooks, 4>),
    reinterpret_cast<Slot>(&unknownSlot<ToolsCallbackHooks, 5>),
    reinterpret_cast<Slot>(&toolsBuffer2),
};
// The only table without its size in slot 0.
Slot ContextLocalStorageTable[4] = {
    reinterpret_cast<Slot>(&storagePut),
    reinterpret_cast<Slot>(&storageDelete),
    reinterpret_cast<Slot>(&storageGet),
    reinterpret_cast<Slot>(&unknownSlot<ContextLocalStorage, 3>),
};
Slot ContextChecksTable[4] = {
    reinterpret_cast<Slot>(sizeof(ContextChecksTable)),
    reinterpret_cast<Slot>(&unknownSlot<ContextChecks, 1>),
    reinterpret_cast<Slot>(&contextCheck),
    reinterpret_cast<Slot>(&contextCheck3),
};
Slot IntegrityTable[3] = {
    reinterpret_cast<Slot>(sizeof(IntegrityTable)),
    reinterpret_cast<Slot>(&integrityCheck),
    reinterpret_cast<Slot>(&unknownSlot<Integrity, 2>),
};

// ---- the tools' view of contexts (CU_ETID_ToolsContext) ----

/// The context's unique number, what cuCtxGetId answers (null: the current context). cuFFT compares it with the
/// one it saw when the plan was made, to notice a stream of another context (cufftSetStream, cufftExec*).
CUresult contextNumber(CUcontext H, uint64_t *Id) {
  logCall(ToolsContext, 4, "context number");
  if (!Id)
    return CUDA_ERROR_INVALID_VALUE;
  Context *C = contextArgument(H);
  if (!C)
    return CUDA_ERROR_INVALID_CONTEXT;
  *Id = C->id();
  return CUDA_SUCCESS;
}

/// The handle of the context's default stream: CU_STREAM_PER_THREAD when PerThread is 1, else CU_STREAM_LEGACY
/// (ptxforge's default streams are those handles: the per-thread one is the legacy one). cuBLAS asks for the
/// stream a null stream means, to key its per-stream workspace with the stream's number (slot 39).
CUresult defaultStream(CUcontext H, uint64_t PerThread, CUstream *Out) {
  logCall(ToolsContext, 51, "default stream");
  if (!Out || PerThread > 1)
    return CUDA_ERROR_INVALID_VALUE;
  if (!contextArgument(H))
    return CUDA_ERROR_INVALID_CONTEXT;
  *Out = PerThread ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
  return CUDA_SUCCESS;
}

/// A stream's unique number, what cuStreamGetId answers; a default stream (null, CU_STREAM_LEGACY,
/// CU_STREAM_PER_THREAD) is the given context's.
CUresult streamNumber(CUcontext H, CUstream S, uint64_t *Id) {
  logCall(ToolsContext, 39, "stream number");
  if (!Id)
    return CUDA_ERROR_INVALID_VALUE;
  if (!S || S == CU_STREAM_LEGACY || S == CU_STREAM_PER_THREAD) {
    Context *C = contextArgument(H);
    if (!C)
      return CUDA_ERROR_INVALID_CONTEXT;
    *Id = C->legacyStream().id();
    return CUDA_SUCCESS;
  }
  if (!Driver::get().Streams.contains(S))
    return CUDA_ERROR_INVALID_HANDLE;
  *Id = reinterpret_cast<Stream *>(S)->id();
  return CUDA_SUCCESS;
}

// CUDA 13.0's cuFFT and cuBLASLt check that the table has more than 7 slots; NVIDIA's 13.x drivers serve 95.
std::array<Slot, 95> makeToolsContextTable() {
  std::array<Slot, 95> T = unknownTable<ToolsContext, 95>();
  T[4] = reinterpret_cast<Slot>(&contextNumber);
  T[39] = reinterpret_cast<Slot>(&streamNumber);
  T[51] = reinterpret_cast<Slot>(&defaultStream);
  return T;
}
std::array<Slot, 95> ToolsContextTable = makeToolsContextTable();

// ---- the tools' view of modules (CU_ETID_ToolsModule) ----
using FunctionVisitor = void (*)(void *User, CUfunction F);

/// Calls Visit(User, F) for every function F of the module, and returns how many there were. cuFFT loads modules
/// of one kernel each and finds the kernel this way (a visitor that stores F), wanting 1 back; the context
/// argument is the module's (ignored here: a module handle names one module of one context).
unsigned moduleForEachFunction(CUcontext, CUmodule Mod, FunctionVisitor Visit, void *User) {
  logCall(ToolsModule, 7, "for each function of a module");
  unsigned Count = 0;
  if (!Visit || cuModuleGetFunctionCount(&Count, Mod) != CUDA_SUCCESS)
    return 0;
  std::vector<CUfunction> Functions(Count);
  if (Count && cuModuleEnumerateFunctions(Functions.data(), Count, Mod) != CUDA_SUCCESS)
    return 0;
  for (CUfunction F : Functions)
    Visit(User, F);
  return Count;
}

std::array<Slot, 64> makeToolsModuleTable() {
  std::array<Slot, 64> T = unknownTable<ToolsModule, 64>();
  T[7] = reinterpret_cast<Slot>(&moduleForEachFunction);
  return T;
}
std::array<Slot, 64> ToolsModuleTable = makeToolsModuleTable();

/// ptxforge's own table (PtxforgeExportTable.h): a benchmark times steady state through the public API by waiting
/// for the tiered JIT's optimized code, not by sleeping. A compile that fails leaves the kernel on its quick
/// code; the wait returns all the same.
CUresult waitForOptimizedCode(CUmodule Mod) {
  logCall(Ptxforge, 1, "wait for the module's optimized code");
  if (!Driver::get().initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!Mod || !Driver::get().Modules.contains(Mod))
    return CUDA_ERROR_INVALID_HANDLE;
  reinterpret_cast<Module *>(Mod)->waitForBackgroundCompiles();
  return CUDA_SUCCESS;
}
Slot PtxforgeTable[PtxforgeWaitForOptimizedCodeSlot + 1] = {reinterpret_cast<Slot>(sizeof(PtxforgeTable)),
                                                            reinterpret_cast<Slot>(&waitForOptimizedCode)};

struct TableEntry {
  std::array<uint8_t, 16> Uuid;
  TableId Id;
  const Slot *Table;
};
const TableEntry Tables[] = {
    {{0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9},
     RuntimeInterface,
     RuntimeInterfaceTable},
    {{0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc},
     ToolsTls,
     ToolsTlsTable},
    {{0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66},
     ToolsCallbackHooks,
     ToolsCallbackHooksTable},
    {{0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93},
     ContextLocalStorage,
     ContextLocalStorageTable},
    {{0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e},
     ContextChecks,
     ContextChecksTable},
    {{0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2},
     Integrity,
     IntegrityTable},
    {{0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2},
     ToolsContext,
     ToolsContextTable.data()},
    {{0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d, 0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e},
     ToolsModule,
     ToolsModuleTable.data()},
    {PtxforgeExportTableUuid, Ptxforge, PtxforgeTable},
};

CUresult integrityCheck(uint32_t RuntimeVersion, uint64_t UnixSeconds, uint64_t (*Result)[2]) {
  logCall(Integrity, 1, "integrity check");
  if (!Result)
    return CUDA_ERROR_INVALID_VALUE;
  if (!Driver::get().initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  IntegrityInputs In;
  In.RuntimeVersion = RuntimeVersion;
  In.UnixSeconds = UnixSeconds;
  In.DriverVersion = CUDA_VERSION;
  In.ProcessId = static_cast<uint32_t>(getpid());
  In.ThreadId = static_cast<uint32_t>(pthread_self());
  In.RuntimeTable = RuntimeInterfaceTable;
  In.IntegrityTable = IntegrityTable;
  In.CheckFunction = IntegrityTable[1];
  for (int D = 0; D < deviceCount(); ++D) {
    const DeviceProperties &P = deviceProperties(D);
    In.Devices.push_back({P.Uuid, int32_t(P.PciDomain), int32_t(P.PciBus), int32_t(P.PciDevice)});
  }
  std::array<uint64_t, 2> Token = integrityToken(In);
  (*Result)[0] = Token[0], (*Result)[1] = Token[1];
  return CUDA_SUCCESS;
}

void logRequest(const CUuuid &Id, const char *Answer) {
  if (!verbose())
    return;
  const auto *B = reinterpret_cast<const uint8_t *>(Id.bytes);
  std::fprintf(stderr,
               "ptxforge: cuGetExportTable {%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x}: "
               "%s\n",
               B[0], B[1], B[2], B[3], B[4], B[5], B[6], B[7], B[8], B[9], B[10], B[11], B[12], B[13], B[14], B[15],
               Answer);
}

} // namespace

PTXFORGE_API CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId) {
  if (!ppExportTable || !pExportTableId)
    return CUDA_ERROR_INVALID_VALUE;
  for (const TableEntry &T : Tables)
    if (!std::memcmp(T.Uuid.data(), pExportTableId->bytes, 16)) {
      logRequest(*pExportTableId, TableNames[T.Id]);
      *ppExportTable = T.Table;
      return CUDA_SUCCESS;
    }
  // What NVIDIA's driver answers for a table it does not have (as ZLUDA, which mimics it, does).
  logRequest(*pExportTableId, "unknown table");
  *ppExportTable = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}
