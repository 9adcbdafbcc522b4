// The C entry points of libcuda.so.1 as a program sees them (through ptxforge's cuda.h): argument checks and
// their error codes, entry point lookup, the stub entry points, JIT options written back, linking, 2-D/3-D
// copies, registered host memory and callbacks, and bad input (files that are not regular, unmapped host memory,
// bogus kernel argument pointers). The client programs in shared/clients cover the rest.
#include <cuda.h>

#include "TestKernels.h"
#include "ptxforge/driver/PtxforgeExportTable.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <dlfcn.h>
#include <initializer_list>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

using ptxforge::testing::CallsUndefinedPtx;
using ptxforge::testing::FillPtx;
using ptxforge::testing::UnsupportedWmmaPtx;

/// Initialises once and makes a context current on the calling thread.
CUcontext context() {
  static CUcontext C = [] {
    REQUIRE(cuInit(0) == CUDA_SUCCESS);
    CUcontext Ctx = nullptr;
    REQUIRE(cuCtxCreate(&Ctx, nullptr, 0, 0) == CUDA_SUCCESS);
    return Ctx;
  }();
  CHECK(cuCtxSetCurrent(C) == CUDA_SUCCESS);
  return C;
}

template <class F> F symbol(const char *Name) { return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, Name)); }

} // namespace

// Runs first (doctest orders by file and line): nothing is initialised yet.
TEST_CASE("before cuInit") {
  int N = -1;
  CHECK(cuDeviceGetCount(&N) == CUDA_ERROR_NOT_INITIALIZED);
  int V = 0;
  CHECK(cuDriverGetVersion(&V) == CUDA_SUCCESS);
  CHECK(V == 13000);
  const char *S = nullptr;
  CHECK(cuGetErrorString(CUDA_ERROR_LAUNCH_FAILED, &S) == CUDA_SUCCESS);
  CHECK(std::string(S) == "unspecified launch failure");
  CHECK(cuInit(1) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("error names and strings") {
  const char *S = nullptr;
  CHECK(cuGetErrorName(CUDA_ERROR_ILLEGAL_ADDRESS, &S) == CUDA_SUCCESS);
  CHECK(std::string(S) == "CUDA_ERROR_ILLEGAL_ADDRESS");
  CHECK(cuGetErrorString(CUDA_ERROR_ILLEGAL_ADDRESS, &S) == CUDA_SUCCESS);
  CHECK(std::string(S) == "an illegal memory access was encountered");
  S = "x";
  CHECK(cuGetErrorString(static_cast<CUresult>(12345), &S) == CUDA_ERROR_INVALID_VALUE);
  CHECK(S == nullptr);
  CHECK(cuGetErrorName(CUDA_SUCCESS, nullptr) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("every device attribute has a value") {
  context();
  for (int A = 1; A < CU_DEVICE_ATTRIBUTE_MAX; ++A) {
    int V = -12345;
    INFO("attribute " << A);
    CHECK(cuDeviceGetAttribute(&V, static_cast<CUdevice_attribute>(A), 0) == CUDA_SUCCESS);
  }
  int V;
  CHECK(cuDeviceGetAttribute(&V, CU_DEVICE_ATTRIBUTE_MAX, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuDeviceGetAttribute(&V, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 1) == CUDA_ERROR_INVALID_DEVICE);
  char Bus[32];
  CHECK(cuDeviceGetPCIBusId(Bus, sizeof Bus, 0) == CUDA_SUCCESS);
  CUdevice D = -1;
  CHECK(cuDeviceGetByPCIBusId(&D, Bus) == CUDA_SUCCESS);
  CHECK(D == 0);
  CUuuid U1, U2;
  CHECK(cuDeviceGetUuid(&U1, 0) == CUDA_SUCCESS);
  CHECK(cuDeviceGetUuid(&U2, 0) == CUDA_SUCCESS);
  CHECK(std::memcmp(U1.bytes, U2.bytes, 16) == 0);
}

TEST_CASE("cuTensorMapEncodeTiled is reachable through cuGetProcAddress, as CUDA programs call it") {
  void *Fn = nullptr;
  CUdriverProcAddressQueryResult Status;
  REQUIRE(cuGetProcAddress("cuTensorMapEncodeTiled", &Fn, 12000, 0, &Status) == CUDA_SUCCESS);
  REQUIRE(Fn == reinterpret_cast<void *>(&cuTensorMapEncodeTiled));
  alignas(16) static char Global[64 * 128];
  CUtensorMap Map;
  cuuint64_t Dims[2] = {64, 64}, Strides[1] = {128};
  cuuint32_t Box[2] = {32, 8}, ElemStrides[2] = {1, 1};
  auto Encode = reinterpret_cast<decltype(&cuTensorMapEncodeTiled)>(Fn);
  CHECK(Encode(&Map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, Global, Dims, Strides, Box, ElemStrides,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS);
  CHECK(Encode(&Map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, Global, Dims, Strides, Box, ElemStrides,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_ERROR_INVALID_VALUE); // 64-byte rows, 32-byte swizzle
  CHECK(cuTensorMapReplaceAddress(&Map, Global + 16) == CUDA_SUCCESS);
  CHECK(cuTensorMapReplaceAddress(&Map, Global + 8) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuGetProcAddress resolves names by version") {
  void *Fn = nullptr;
  CUdriverProcAddressQueryResult Status;
  CHECK(cuGetProcAddress("cuMemAlloc", &Fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &Status) == CUDA_SUCCESS);
  CHECK(Status == CU_GET_PROC_ADDRESS_SUCCESS);
  CHECK(Fn == reinterpret_cast<void *>(&cuMemAlloc_v2));
  CHECK(cuGetProcAddress("cuCtxCreate", &Fn, 12000, 0, &Status) == CUDA_SUCCESS);
  CHECK(Fn == symbol<void *>("cuCtxCreate_v2"));
  CHECK(cuGetProcAddress("cuCtxCreate", &Fn, 12080, 0, &Status) == CUDA_SUCCESS);
  CHECK(Fn == reinterpret_cast<void *>(&cuCtxCreate_v4));
  CHECK(cuGetProcAddress("cuEventElapsedTime", &Fn, 12000, 0, &Status) == CUDA_SUCCESS);
  CHECK(Fn == symbol<void *>("cuEventElapsedTime"));
  CHECK(cuGetProcAddress("cuMemAlloc", &Fn, 3000, 0, &Status) == CUDA_ERROR_NOT_FOUND);
  CHECK(Status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  CHECK(cuGetProcAddress("cuNoSuchEntryPoint", &Fn, 13000, 0, &Status) == CUDA_ERROR_NOT_FOUND);
  CHECK(Status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  // Known to CUDA 13.0 but not implemented: a function that fails cleanly.
  CHECK(cuGetProcAddress("cuUserObjectCreate", &Fn, 13000, 0, &Status) == CUDA_SUCCESS);
  REQUIRE(Fn);
  CHECK(reinterpret_cast<CUresult (*)(void *, unsigned)>(Fn)(nullptr, 0) == CUDA_ERROR_NOT_SUPPORTED);
  // Versioned graph entry points resolve to the symbol of the version asked for.
  CHECK(cuGetProcAddress("cuGraphInstantiate", &Fn, 13000, 0, &Status) == CUDA_SUCCESS);
  CHECK(Fn == reinterpret_cast<void *>(&cuGraphInstantiateWithFlags));
  CHECK(cuGetProcAddress("cuGraphAddKernelNode", &Fn, 11080, 0, &Status) == CUDA_SUCCESS);
  CHECK(Fn == symbol<void *>("cuGraphAddKernelNode"));
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CHECK(cuGetProcAddress("cuGraphCreate", &Fn, 13000, 0, &Status) == CUDA_SUCCESS);
  CHECK(reinterpret_cast<CUresult (*)(void *, unsigned)>(Fn)(nullptr, 0) == CUDA_ERROR_INVALID_VALUE);
  auto Stub = symbol<CUresult (*)(void *, int)>("cuIpcGetMemHandle");
  REQUIRE(reinterpret_cast<void *>(Stub) != nullptr);
  CHECK(Stub(nullptr, 0) == CUDA_ERROR_NOT_SUPPORTED);
}

TEST_CASE("JIT options: logs, their sizes and the wall time are written back") {
  context();
  char Info[256], Error[256];
  std::memset(Error, 'x', sizeof Error);
  CUjit_option Keys[] = {CU_JIT_INFO_LOG_BUFFER,  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_WALL_TIME,        CU_JIT_LOG_VERBOSE};
  void *Values[] = {Info,    reinterpret_cast<void *>(sizeof Info),
                    Error,   reinterpret_cast<void *>(sizeof Error),
                    nullptr, reinterpret_cast<void *>(1)};
  CUmodule M = nullptr;
  REQUIRE(cuModuleLoadDataEx(&M, FillPtx.c_str(), 6, Keys, Values) == CUDA_SUCCESS);
  CHECK(Error[0] == 0);
  CHECK(reinterpret_cast<size_t>(Values[3]) == 0);
  CHECK(std::strlen(Info) == reinterpret_cast<size_t>(Values[1]));
  CHECK(std::string(Info).find("1 kernel") != std::string::npos);
  float Ms = -1;
  std::memcpy(&Ms, &Values[4], sizeof Ms);
  CHECK(Ms >= 0);
  CHECK(cuModuleUnload(M) == CUDA_SUCCESS);
  CHECK(cuModuleUnload(M) == CUDA_ERROR_INVALID_HANDLE);

  CUjit_option Bad[] = {CU_JIT_OPTIMIZATION_LEVEL};
  void *BadValues[] = {reinterpret_cast<void *>(7)};
  CHECK(cuModuleLoadDataEx(&M, FillPtx.c_str(), 1, Bad, BadValues) == CUDA_ERROR_INVALID_VALUE);
  CUjit_option Target[] = {CU_JIT_TARGET};
  void *Sm70[] = {reinterpret_cast<void *>(CU_TARGET_COMPUTE_70)};
  CHECK(cuModuleLoadDataEx(&M, FillPtx.c_str(), 1, Target, Sm70) == CUDA_ERROR_INVALID_PTX); // .target sm_75 > 7.0
}

TEST_CASE("a module that calls an undefined function fails at the load, its log naming the function") {
  context();
  char Error[256] = "";
  CUjit_option Keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *Values[] = {Error, reinterpret_cast<void *>(sizeof Error)};
  CUmodule M = nullptr;
  CHECK(cuModuleLoadDataEx(&M, CallsUndefinedPtx.c_str(), 2, Keys, Values) == CUDA_ERROR_INVALID_PTX);
  CHECK(std::string(Error) == "ptxas fatal   : Unresolved extern function 'missing_fn'\n");
  CHECK(cuModuleLoadData(&M, CallsUndefinedPtx.c_str()) ==
        CUDA_ERROR_INVALID_PTX); // no log asked for: still at the load

  std::string NoCall = CallsUndefinedPtx;
  NoCall.erase(NoCall.find("call missing_fn, (a0);"), std::strlen("call missing_fn, (a0);"));
  REQUIRE(cuModuleLoadData(&M, NoCall.c_str()) == CUDA_SUCCESS);
  CUdeviceptr Var = 0;
  size_t Bytes = 0;
  CHECK(cuModuleGetGlobal(&Var, &Bytes, M, "missing_var") == CUDA_SUCCESS);
  CHECK(Bytes == 4);
  CHECK(cuModuleUnload(M) == CUDA_SUCCESS);
}

TEST_CASE("a lazy load with an error log reports what cannot be compiled in that log") {
  context();
  char Error[512] = "";
  CUjit_option Keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *Values[] = {Error, reinterpret_cast<void *>(sizeof Error)};
  CUmodule M = nullptr;
  CHECK(cuModuleLoadDataEx(&M, UnsupportedWmmaPtx.c_str(), 2, Keys, Values) == CUDA_ERROR_INVALID_PTX);
  CHECK(std::string(Error).find("wmma rounding other than .rn") != std::string::npos);
}

TEST_CASE("cuLinkAddData: bytes that are no cubin or fatbinary are an invalid image") {
  context();
  CUlinkState L = nullptr;
  REQUIRE(cuLinkCreate(0, nullptr, nullptr, &L) == CUDA_SUCCESS);
  char Garbage[64];
  for (size_t I = 0; I < sizeof Garbage; ++I)
    Garbage[I] = static_cast<char>(0x5a ^ I);
  CHECK(cuLinkAddData(L, CU_JIT_INPUT_CUBIN, Garbage, sizeof Garbage, "g.cubin", 0, nullptr, nullptr) ==
        CUDA_ERROR_INVALID_IMAGE);
  CHECK(cuLinkAddData(L, CU_JIT_INPUT_FATBINARY, Garbage, sizeof Garbage, "g.fatbin", 0, nullptr, nullptr) ==
        CUDA_ERROR_INVALID_IMAGE);
  // PTX text is no fatbinary either.
  CHECK(cuLinkAddData(L, CU_JIT_INPUT_FATBINARY, const_cast<char *>(FillPtx.c_str()), FillPtx.size() + 1, "f.fatbin", 0,
                      nullptr, nullptr) == CUDA_ERROR_INVALID_IMAGE);
  // An ELF file is a cubin, whose NVIDIA SASS cannot run here.
  char Elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  CHECK(cuLinkAddData(L, CU_JIT_INPUT_CUBIN, Elf, sizeof Elf, "e.cubin", 0, nullptr, nullptr) ==
        CUDA_ERROR_NO_BINARY_FOR_GPU);
  CHECK(cuLinkDestroy(L) == CUDA_SUCCESS);
}

TEST_CASE("linking one PTX input gives an image cuModuleLoadData accepts") {
  context();
  CUlinkState L = nullptr;
  REQUIRE(cuLinkCreate(0, nullptr, nullptr, &L) == CUDA_SUCCESS);
  CHECK(cuLinkAddData(L, CU_JIT_INPUT_PTX, const_cast<char *>(FillPtx.c_str()), FillPtx.size() + 1, "fill.ptx", 0,
                      nullptr, nullptr) == CUDA_SUCCESS);
  void *Image = nullptr;
  size_t Size = 0;
  REQUIRE(cuLinkComplete(L, &Image, &Size) == CUDA_SUCCESS);
  CHECK(Size == FillPtx.size() + 1);
  CUmodule M = nullptr;
  REQUIRE(cuModuleLoadData(&M, Image) == CUDA_SUCCESS);
  CHECK(cuLinkDestroy(L) == CUDA_SUCCESS);
  CHECK(cuLinkDestroy(L) == CUDA_ERROR_INVALID_HANDLE);
  CUfunction F = nullptr;
  REQUIRE(cuModuleGetFunction(&F, M, "fill") == CUDA_SUCCESS);
  const char *Name = nullptr;
  CHECK(cuFuncGetName(&Name, F) == CUDA_SUCCESS);
  CHECK(std::string(Name) == "fill");
  size_t Offset = 0, Bytes = 0;
  CHECK(cuFuncGetParamInfo(F, 1, &Offset, &Bytes) == CUDA_SUCCESS);
  CHECK(Offset == 8);
  CHECK(Bytes == 4);
  CHECK(cuFuncGetParamInfo(F, 2, &Offset, &Bytes) == CUDA_ERROR_INVALID_VALUE);

  CUdeviceptr Out;
  REQUIRE(cuMemAlloc(&Out, 64 * 4) == CUDA_SUCCESS);
  unsigned V = 100;
  void *Args[] = {&Out, &V};
  CUstream S;
  REQUIRE(cuStreamCreate(&S, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  CHECK(cuLaunchKernel(F, 1, 1, 1, 64, 1, 1, 0, S, Args, nullptr) == CUDA_SUCCESS);
  struct Seen {
    CUstream S = nullptr;
    CUresult R = CUDA_ERROR_UNKNOWN;
  } Got;
  CHECK(cuStreamAddCallback(
            S,
            [](CUstream St, CUresult R, void *P) {
              static_cast<Seen *>(P)->S = St;
              static_cast<Seen *>(P)->R = R;
            },
            &Got, 0) == CUDA_SUCCESS);
  CHECK(cuStreamSynchronize(S) == CUDA_SUCCESS);
  CHECK(Got.S == S);
  CHECK(Got.R == CUDA_SUCCESS);
  std::vector<unsigned> Host(64);
  CHECK(cuMemcpyDtoH(Host.data(), Out, 64 * 4) == CUDA_SUCCESS);
  CHECK(Host[0] == 100);
  CHECK(Host[63] == 163);

  int MinGrid = 0, Block = 0;
  CHECK(cuOccupancyMaxPotentialBlockSize(&MinGrid, &Block, F, nullptr, 0, 0) == CUDA_SUCCESS);
  CHECK(Block > 0);
  CHECK(Block <= 1024);
  CHECK(MinGrid > 0);
  CHECK(cuStreamDestroy(S) == CUDA_SUCCESS);
  CHECK(cuMemFree(Out) == CUDA_SUCCESS);
  CHECK(cuModuleUnload(M) == CUDA_SUCCESS);
}

TEST_CASE("3-D copies and 2-D fills respect pitches and offsets") {
  context();
  const size_t W = 40, H = 6, D = 3, Pitch = 64, SliceRows = 8;
  CUdeviceptr Dev;
  REQUIRE(cuMemAlloc(&Dev, Pitch * SliceRows * D) == CUDA_SUCCESS);
  CHECK(cuMemsetD8(Dev, 0, Pitch * SliceRows * D) == CUDA_SUCCESS);
  std::vector<unsigned char> Src(W * H * D), Back(W * H * D, 0);
  for (size_t I = 0; I < Src.size(); ++I)
    Src[I] = static_cast<unsigned char>(I * 7 + 1);
  CUDA_MEMCPY3D C;
  std::memset(&C, 0, sizeof C);
  C.srcMemoryType = CU_MEMORYTYPE_HOST, C.srcHost = Src.data(), C.srcPitch = W, C.srcHeight = H;
  C.dstMemoryType = CU_MEMORYTYPE_DEVICE, C.dstDevice = Dev, C.dstPitch = Pitch, C.dstHeight = SliceRows;
  C.WidthInBytes = W, C.Height = H, C.Depth = D;
  REQUIRE(cuMemcpy3D(&C) == CUDA_SUCCESS);
  std::swap(C.srcMemoryType, C.dstMemoryType);
  C.srcDevice = Dev, C.srcPitch = Pitch, C.srcHeight = SliceRows, C.srcHost = nullptr;
  C.dstHost = Back.data(), C.dstPitch = W, C.dstHeight = H, C.dstDevice = 0;
  REQUIRE(cuMemcpy3D(&C) == CUDA_SUCCESS);
  CHECK(Back == Src);
  C.srcPitch = 8; // narrower than the copy
  CHECK(cuMemcpy3D(&C) == CUDA_ERROR_INVALID_VALUE);

  CHECK(cuMemsetD2D16(Dev + 2, Pitch, 0xbeef, 4, 3) == CUDA_SUCCESS);
  unsigned short Row[4];
  CHECK(cuMemcpyDtoH(Row, Dev + 2 + 2 * Pitch, sizeof Row) == CUDA_SUCCESS);
  CHECK(Row[0] == 0xbeef);
  CHECK(Row[3] == 0xbeef);
  CHECK(cuMemsetD2D16(Dev + 1, Pitch, 0, 4, 3) == CUDA_ERROR_INVALID_VALUE);     // misaligned
  CHECK(cuMemsetD32(Dev, 0, Pitch * SliceRows * D) == CUDA_ERROR_INVALID_VALUE); // past the end
  CHECK(cuMemFree(Dev) == CUDA_SUCCESS);
}

TEST_CASE("registered host memory and pointer attributes") {
  CUcontext Ctx = context();
  static int Buffer[1024];
  CHECK(cuMemHostRegister(Buffer, sizeof Buffer, CU_MEMHOSTREGISTER_DEVICEMAP) == CUDA_SUCCESS);
  CHECK(cuMemHostRegister(Buffer + 4, 16, 0) == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  CUdeviceptr D = 0;
  CHECK(cuMemHostGetDevicePointer(&D, Buffer, 0) == CUDA_SUCCESS);
  CHECK(D == reinterpret_cast<CUdeviceptr>(Buffer));
  CHECK(cuMemsetD32(D, 7, 1024) == CUDA_SUCCESS);
  CHECK(Buffer[1023] == 7);
  CUpointer_attribute Attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_CONTEXT,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  unsigned Type = 0;
  CUcontext Owner = nullptr;
  size_t Size = 0;
  void *Data[] = {&Type, &Owner, &Size};
  CHECK(cuPointerGetAttributes(3, Attrs, Data, D + 8) == CUDA_SUCCESS);
  CHECK(Type == CU_MEMORYTYPE_HOST);
  CHECK(Owner == Ctx);
  CHECK(Size == sizeof Buffer);
  CHECK(cuMemHostUnregister(Buffer) == CUDA_SUCCESS);
  CHECK(cuMemHostUnregister(Buffer) == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  Type = 99, Owner = Ctx, Size = 5;
  CHECK(cuPointerGetAttributes(3, Attrs, Data, D) == CUDA_SUCCESS); // not CUDA memory any more: zeros
  CHECK(Type == 0);
  CHECK(Owner == nullptr);
  CHECK(Size == 0);
  CHECK(cuMemsetD32(D, 7, 1) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("contexts: limits, flags and the primary context") {
  context();
  size_t Stack = 0;
  CHECK(cuCtxGetLimit(&Stack, CU_LIMIT_STACK_SIZE) == CUDA_SUCCESS);
  CHECK(Stack == 1024);
  CHECK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 4096) == CUDA_SUCCESS);
  CHECK(cuCtxGetLimit(&Stack, CU_LIMIT_STACK_SIZE) == CUDA_SUCCESS);
  CHECK(Stack == 4096);
  CHECK(cuCtxGetLimit(&Stack, static_cast<CUlimit>(99)) == CUDA_ERROR_INVALID_VALUE);
  unsigned long long Id1 = 0, Id2 = 0;
  CHECK(cuCtxGetId(nullptr, &Id1) == CUDA_SUCCESS);
  CUcontext P;
  REQUIRE(cuDevicePrimaryCtxRetain(&P, 0) == CUDA_SUCCESS);
  CHECK(cuCtxGetId(P, &Id2) == CUDA_SUCCESS);
  CHECK(Id1 != Id2);
  CHECK(cuCtxDestroy(P) == CUDA_ERROR_INVALID_CONTEXT); // released, not destroyed
  CHECK(cuDevicePrimaryCtxRelease(0) == CUDA_SUCCESS);
  CHECK(cuDevicePrimaryCtxRelease(0) == CUDA_ERROR_INVALID_CONTEXT);
  unsigned Flags;
  int Active = -1;
  CHECK(cuDevicePrimaryCtxGetState(0, &Flags, &Active) == CUDA_SUCCESS);
  CHECK(Active == 0);
  CHECK(cuCtxPushCurrent(nullptr) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuCtxPushCurrent(reinterpret_cast<CUcontext>(0x1234)) == CUDA_ERROR_INVALID_CONTEXT);
}

TEST_CASE("cuModuleLoad refuses what is not a regular file at once") {
  context();
  CUmodule M = nullptr;
  // NVIDIA's driver: INVALID_IMAGE for /dev/zero, /dev/null and an empty file. It waits forever on a FIFO and
  // says OUT_OF_MEMORY for a directory; here both are invalid images, returned at once.
  CHECK(cuModuleLoad(&M, "/dev/zero") == CUDA_ERROR_INVALID_IMAGE);
  CHECK(cuModuleLoad(&M, "/dev/null") == CUDA_ERROR_INVALID_IMAGE);
  char Dir[] = "/tmp/ptxforge-capi-XXXXXX";
  REQUIRE(mkdtemp(Dir) != nullptr);
  std::string Fifo = std::string(Dir) + "/fifo.ptx", Empty = std::string(Dir) + "/empty.ptx";
  REQUIRE(mkfifo(Fifo.c_str(), 0600) == 0);
  CHECK(cuModuleLoad(&M, Fifo.c_str()) == CUDA_ERROR_INVALID_IMAGE);
  CHECK(cuModuleLoad(&M, Dir) == CUDA_ERROR_INVALID_IMAGE);
  close(open(Empty.c_str(), O_CREAT | O_WRONLY, 0600));
  CHECK(cuModuleLoad(&M, Empty.c_str()) == CUDA_ERROR_INVALID_IMAGE);
  CHECK(cuModuleLoad(&M, (std::string(Dir) + "/missing.ptx").c_str()) == CUDA_ERROR_FILE_NOT_FOUND);
  unlink(Fifo.c_str());
  unlink(Empty.c_str());
  rmdir(Dir);
}

TEST_CASE("cuMemHostRegister wants mapped memory of the access the flags say") {
  context();
  size_t Page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto mapPages = [&](int Prot) {
    void *P = mmap(nullptr, 2 * Page, Prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(P != MAP_FAILED);
    return static_cast<char *>(P);
  };
  // As NVIDIA's driver: unmapped, partly unmapped, PROT_NONE and (without READ_ONLY) read-only ranges are
  // invalid values.
  char *Gone = mapPages(PROT_READ | PROT_WRITE);
  munmap(Gone, 2 * Page);
  CHECK(cuMemHostRegister(Gone, 2 * Page, 0) == CUDA_ERROR_INVALID_VALUE);
  char *Half = mapPages(PROT_READ | PROT_WRITE);
  munmap(Half + Page, Page);
  CHECK(cuMemHostRegister(Half, 2 * Page, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemHostRegister(Half, Page, 0) == CUDA_SUCCESS);
  CHECK(cuMemHostUnregister(Half) == CUDA_SUCCESS);
  char *None = mapPages(PROT_NONE);
  CHECK(cuMemHostRegister(None, 2 * Page, 0) == CUDA_ERROR_INVALID_VALUE);
  char *ReadOnly = mapPages(PROT_READ);
  CHECK(cuMemHostRegister(ReadOnly, 2 * Page, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemHostRegister(ReadOnly, 2 * Page, CU_MEMHOSTREGISTER_READ_ONLY) == CUDA_SUCCESS);
  CHECK(cuMemHostUnregister(ReadOnly) == CUDA_SUCCESS);
  munmap(Half, Page);
  munmap(None, 2 * Page);
  munmap(ReadOnly, 2 * Page);
}

TEST_CASE("bad pointers in kernelParams or extra are an invalid value, not a crash") {
  context();
  CUmodule M = nullptr;
  REQUIRE(cuModuleLoadData(&M, FillPtx.c_str()) == CUDA_SUCCESS);
  CUfunction F = nullptr;
  REQUIRE(cuModuleGetFunction(&F, M, "fill") == CUDA_SUCCESS);
  // (NVIDIA's driver dies of SIGSEGV on both.)
  void **BogusArray = reinterpret_cast<void **>(16);
  CHECK(cuLaunchKernel(F, 1, 1, 1, 32, 1, 1, 0, nullptr, BogusArray, nullptr) == CUDA_ERROR_INVALID_VALUE);
  void *BogusPointers[] = {reinterpret_cast<void *>(16), reinterpret_cast<void *>(24)};
  CHECK(cuLaunchKernel(F, 1, 1, 1, 32, 1, 1, 0, nullptr, BogusPointers, nullptr) == CUDA_ERROR_INVALID_VALUE);
  size_t Bytes = 16;
  void *BogusBuffer[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, reinterpret_cast<void *>(16), CU_LAUNCH_PARAM_BUFFER_SIZE,
                         &Bytes, CU_LAUNCH_PARAM_END};
  CHECK(cuLaunchKernel(F, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, BogusBuffer) == CUDA_ERROR_INVALID_VALUE);

  // Nothing is sticky: good launches run, with their arguments on the stack (copied unguarded) or on the heap
  // (copied under the guard).
  CUdeviceptr Out = 0;
  REQUIRE(cuMemAlloc(&Out, 32 * sizeof(unsigned)) == CUDA_SUCCESS);
  unsigned V = 5;
  void *Args[] = {&Out, &V};
  CHECK(cuLaunchKernel(F, 1, 1, 1, 32, 1, 1, 0, nullptr, Args, nullptr) == CUDA_SUCCESS);
  unsigned Host[32] = {};
  CHECK(cuMemcpyDtoH(Host, Out, sizeof Host) == CUDA_SUCCESS);
  CHECK(Host[31] == 36);
  auto *HeapV = new unsigned(7);
  std::vector<void *> HeapArgs = {&Out, HeapV};
  CHECK(cuLaunchKernel(F, 1, 1, 1, 32, 1, 1, 0, nullptr, HeapArgs.data(), nullptr) == CUDA_SUCCESS);
  CHECK(cuMemcpyDtoH(Host, Out, sizeof Host) == CUDA_SUCCESS);
  CHECK(Host[31] == 38);
  delete HeapV;
  CHECK(cuMemFree(Out) == CUDA_SUCCESS);
  CHECK(cuModuleUnload(M) == CUDA_SUCCESS);
}

TEST_CASE("cuGetExportTable: known tables start with their size, unknown ones are an invalid value") {
  context();
  const void *Table = nullptr;
  CUuuid Unknown = {};
  CHECK(cuGetExportTable(&Table, &Unknown) == CUDA_ERROR_INVALID_VALUE);
  CHECK(Table == nullptr);
  CHECK(cuGetExportTable(nullptr, &Unknown) == CUDA_ERROR_INVALID_VALUE);
  const CUuuid Integrity = {{char(0xd4), 0x08, 0x20, 0x55, char(0xbd), char(0xe6), 0x70, 0x4b, char(0x8d), 0x34,
                             char(0xba), 0x12, 0x3c, 0x66, char(0xe1), char(0xf2)}};
  REQUIRE(cuGetExportTable(&Table, &Integrity) == CUDA_SUCCESS);
  const auto *Slots = static_cast<void *const *>(Table);
  CHECK(reinterpret_cast<uintptr_t>(Slots[0]) == 3 * sizeof(void *));
  using Check = CUresult (*)(unsigned, unsigned long long, unsigned long long(*)[2]);
  unsigned long long Token[2] = {};
  CHECK(reinterpret_cast<Check>(Slots[1])(13000, 0, &Token) == CUDA_SUCCESS);
  CHECK(Token[0] == 0x3341181C03CB675Cull);
}

TEST_CASE("cuGetExportTable: ptxforge's table waits for a module's optimized code") {
  context();
  CUuuid Id;
  std::copy(ptxforge::driver::PtxforgeExportTableUuid.begin(), ptxforge::driver::PtxforgeExportTableUuid.end(),
            Id.bytes);
  const void *Table = nullptr;
  REQUIRE(cuGetExportTable(&Table, &Id) == CUDA_SUCCESS);
  const auto *Slots = static_cast<void *const *>(Table);
  CHECK(reinterpret_cast<uintptr_t>(Slots[0]) == 2 * sizeof(void *));
  auto Wait = reinterpret_cast<CUresult (*)(CUmodule)>(Slots[ptxforge::driver::PtxforgeWaitForOptimizedCodeSlot]);
  CUmodule M = nullptr;
  REQUIRE(cuModuleLoadData(&M, FillPtx.c_str()) == CUDA_SUCCESS);
  CHECK(Wait(M) == CUDA_SUCCESS); // no kernel used yet: nothing to wait for
  CUfunction F = nullptr;
  REQUIRE(cuModuleGetFunction(&F, M, "fill") == CUDA_SUCCESS); // starts the optimized compile
  CHECK(Wait(M) == CUDA_SUCCESS);
  CHECK(Wait(nullptr) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(Wait(reinterpret_cast<CUmodule>(&Id)) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuModuleUnload(M) == CUDA_SUCCESS);
  CHECK(Wait(M) == CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("cuGetExportTable: context-local storage of the current context") {
  CUcontext C = context();
  const CUuuid Storage = {{char(0xc6), char(0x93), 0x33, 0x6e, 0x11, 0x21, char(0xdf), 0x11, char(0xa8), char(0xc3),
                           0x68, char(0xf3), 0x55, char(0xd8), char(0x95), char(0x93)}};
  const void *Table = nullptr;
  REQUIRE(cuGetExportTable(&Table, &Storage) == CUDA_SUCCESS);
  const auto *Slots = static_cast<void *const *>(Table);
  using Put = CUresult (*)(CUcontext, void *, void *, void (*)(CUcontext, void *, void *));
  using Delete = CUresult (*)(CUcontext, void *);
  using Get = CUresult (*)(void **, CUcontext, void *);
  int Key = 0, Value = 0;
  void *Got = nullptr;
  CHECK(reinterpret_cast<Get>(Slots[2])(&Got, nullptr, &Key) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(reinterpret_cast<Put>(Slots[0])(nullptr, &Key, &Value, nullptr) == CUDA_SUCCESS);
  CHECK(reinterpret_cast<Get>(Slots[2])(&Got, C, &Key) == CUDA_SUCCESS);
  CHECK(Got == &Value);
  CHECK(reinterpret_cast<Delete>(Slots[1])(C, &Key) == CUDA_SUCCESS);
  CHECK(reinterpret_cast<Get>(Slots[2])(&Got, nullptr, &Key) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(reinterpret_cast<Get>(Slots[2])(&Got, reinterpret_cast<CUcontext>(&Key), &Key) == CUDA_ERROR_INVALID_CONTEXT);
}

/// The export table of this UUID, which must exist.
void *const *exportTable(std::initializer_list<int> Bytes) {
  CUuuid Id;
  REQUIRE(Bytes.size() == 16);
  std::copy(Bytes.begin(), Bytes.end(), Id.bytes);
  const void *Table = nullptr;
  REQUIRE(cuGetExportTable(&Table, &Id) == CUDA_SUCCESS);
  return static_cast<void *const *>(Table);
}

TEST_CASE("cuGetExportTable: the tools tables answer the current context, context and stream numbers") {
  CUcontext C = context();
  void *const *Tls =
      exportTable({0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc});
  void *const *Ctx =
      exportTable({0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2});
  // Every slot is present (callers check the size, then call without checking the slot).
  REQUIRE(reinterpret_cast<uintptr_t>(Ctx[0]) == 95 * sizeof(void *));
  for (int I = 1; I < 95; ++I)
    CHECK(Ctx[I] != nullptr);

  CUcontext Current = nullptr;
  CHECK(reinterpret_cast<CUresult (*)(CUcontext *)>(Tls[2])(&Current) == CUDA_SUCCESS);
  CHECK(Current == C);

  using Number = CUresult (*)(CUcontext, unsigned long long *);
  unsigned long long Id = 0, Want = 0;
  REQUIRE(cuCtxGetId(C, &Want) == CUDA_SUCCESS);
  CHECK(reinterpret_cast<Number>(Ctx[4])(C, &Id) == CUDA_SUCCESS);
  CHECK(Id == Want);
  CHECK(reinterpret_cast<Number>(Ctx[4])(nullptr, &Id) == CUDA_SUCCESS);
  CHECK(Id == Want);
  CHECK(reinterpret_cast<Number>(Ctx[4])(reinterpret_cast<CUcontext>(&Id), &Id) == CUDA_ERROR_INVALID_CONTEXT);

  using DefaultStream = CUresult (*)(CUcontext, unsigned long long, CUstream *);
  using StreamNumber = CUresult (*)(CUcontext, CUstream, unsigned long long *);
  CUstream S = nullptr;
  CHECK(reinterpret_cast<DefaultStream>(Ctx[51])(C, 0, &S) == CUDA_SUCCESS);
  CHECK(S == CU_STREAM_LEGACY);
  CHECK(reinterpret_cast<DefaultStream>(Ctx[51])(C, 1, &S) == CUDA_SUCCESS);
  CHECK(S == CU_STREAM_PER_THREAD);
  CHECK(reinterpret_cast<DefaultStream>(Ctx[51])(C, 2, &S) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(cuStreamGetId(nullptr, &Want) == CUDA_SUCCESS);
  CHECK(reinterpret_cast<StreamNumber>(Ctx[39])(C, CU_STREAM_LEGACY, &Id) == CUDA_SUCCESS);
  CHECK(Id == Want);
  CUstream Own = nullptr;
  REQUIRE(cuStreamCreate(&Own, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  REQUIRE(cuStreamGetId(Own, &Want) == CUDA_SUCCESS);
  CHECK(reinterpret_cast<StreamNumber>(Ctx[39])(C, Own, &Id) == CUDA_SUCCESS);
  CHECK(Id == Want);
  CHECK(cuStreamDestroy(Own) == CUDA_SUCCESS);
  CHECK(reinterpret_cast<StreamNumber>(Ctx[39])(C, Own, &Id) == CUDA_ERROR_INVALID_HANDLE);

  // Unknown slots fail rather than answer.
  using Unknown = CUresult (*)(void *, void *);
  CHECK(reinterpret_cast<Unknown>(Ctx[1])(nullptr, nullptr) == CUDA_ERROR_NOT_SUPPORTED);
}

TEST_CASE("cuGetExportTable: the tools module table visits a module's functions") {
  context();
  void *const *Mod =
      exportTable({0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d, 0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e});
  REQUIRE(reinterpret_cast<uintptr_t>(Mod[0]) > 0x37); // what cuFFT checks before it calls slot 7
  CUmodule M = nullptr;
  REQUIRE(cuModuleLoadData(&M, FillPtx.c_str()) == CUDA_SUCCESS);
  using Visitor = void (*)(void *, CUfunction);
  using ForEach = unsigned (*)(CUcontext, CUmodule, Visitor, void *);
  std::vector<CUfunction> Seen;
  Visitor Collect = [](void *User, CUfunction F) { static_cast<std::vector<CUfunction> *>(User)->push_back(F); };
  CHECK(reinterpret_cast<ForEach>(Mod[7])(nullptr, M, Collect, &Seen) == 1);
  REQUIRE(Seen.size() == 1);
  CUfunction F = nullptr;
  REQUIRE(cuModuleGetFunction(&F, M, "fill") == CUDA_SUCCESS);
  CHECK(Seen[0] == F);
  CHECK(cuModuleUnload(M) == CUDA_SUCCESS);
  CHECK(reinterpret_cast<ForEach>(Mod[7])(nullptr, M, Collect, &Seen) == 0);
}

TEST_CASE("libraries: loaded at their first use, kernels usable as functions, nvcc's wrapper accepted") {
  context();
  CUlibrary L = nullptr;
  CUlibraryOption Keep = CU_LIBRARY_BINARY_IS_PRESERVED;
  void *KeepValue = reinterpret_cast<void *>(1);
  REQUIRE(cuLibraryLoadData(&L, FillPtx.c_str(), nullptr, nullptr, 0, &Keep, &KeepValue, 1) == CUDA_SUCCESS);
  CUkernel K = nullptr;
  CHECK(cuLibraryGetKernel(&K, L, "nope") == CUDA_ERROR_NOT_FOUND);
  REQUIRE(cuLibraryGetKernel(&K, L, "fill") == CUDA_SUCCESS);
  unsigned Count = 0;
  CHECK(cuLibraryGetKernelCount(&Count, L) == CUDA_SUCCESS);
  CHECK(Count == 1);
  const char *Name = nullptr;
  CHECK(cuKernelGetName(&Name, K) == CUDA_SUCCESS);
  CHECK(std::string(Name) == "fill");
  CUfunction F = nullptr;
  REQUIRE(cuKernelGetFunction(&F, K) == CUDA_SUCCESS);
  CUdeviceptr Out = 0;
  REQUIRE(cuMemAlloc(&Out, 32 * sizeof(unsigned)) == CUDA_SUCCESS);
  unsigned V = 3;
  void *Args[] = {&Out, &V};
  // NVIDIA's runtime launches a CUkernel as a CUfunction.
  CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(K), 1, 1, 1, 32, 1, 1, 0, nullptr, Args, nullptr) == CUDA_SUCCESS);
  unsigned Host[32] = {};
  CHECK(cuMemcpyDtoH(Host, Out, sizeof Host) == CUDA_SUCCESS);
  CHECK(Host[31] == 34);
  CHECK(cuLibraryUnload(L) == CUDA_SUCCESS);
  CHECK(cuLibraryUnload(L) == CUDA_ERROR_INVALID_HANDLE);
  // cuBLASLt names CU_LIBRARY_BINARY_IS_PRESERVED without a value array: not preserved, read at once.
  REQUIRE(cuLibraryLoadData(&L, FillPtx.c_str(), nullptr, nullptr, 0, &Keep, nullptr, 1) == CUDA_SUCCESS);
  CHECK(cuLibraryUnload(L) == CUDA_SUCCESS);
  CHECK(cuMemFree(Out) == CUDA_SUCCESS);

  // nvcc's __fatBinC_Wrapper_t: cuModuleLoadData refuses it, cuLibraryLoadData follows it (a PTX-text "fatbinary"
  // stands in for the container here; the loader identifies the bytes it points to).
  struct {
    uint32_t Magic = 0x466243b1, Version = 1;
    const void *Data = FillPtx.c_str();
    const void *Unused = nullptr;
  } Wrapper;
  CUmodule M = nullptr;
  CHECK(cuModuleLoadData(&M, &Wrapper) == CUDA_ERROR_INVALID_IMAGE);
  REQUIRE(cuLibraryLoadData(&L, &Wrapper, nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS);
  CHECK(cuLibraryGetKernel(&K, L, "fill") == CUDA_SUCCESS);
  CHECK(cuLibraryUnload(L) == CUDA_SUCCESS);
}

TEST_CASE("cuCtxGetLimit: no context is a CUDA-in-Graphics one; the CIG-only limits cannot be set") {
  context();
  size_t V = 7;
  // cuBLASLt asks at its initialisation and stops on an error (cuBLAS then divided by zero in cublasSdot).
  CHECK(cuCtxGetLimit(&V, CU_LIMIT_CIG_ENABLED) == CUDA_SUCCESS);
  CHECK(V == 0);
  CHECK(cuCtxSetLimit(CU_LIMIT_CIG_ENABLED, 1) == CUDA_ERROR_UNSUPPORTED_LIMIT);
}

namespace {
void countCall(void *P) { ++*static_cast<int *>(P); }
} // namespace

TEST_CASE("conditional nodes through cuGraphAddNode: handles, bodies, capture into a body, and their refusals") {
  context();
  CUgraph G = nullptr, Other = nullptr;
  REQUIRE(cuGraphCreate(&G, 0) == CUDA_SUCCESS);
  REQUIRE(cuGraphCreate(&Other, 0) == CUDA_SUCCESS);
  CUgraphConditionalHandle H = 0;
  CHECK(cuGraphConditionalHandleCreate(&H, nullptr, nullptr, 0, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuGraphConditionalHandleCreate(&H, G, nullptr, 1, 2) == CUDA_ERROR_INVALID_VALUE); // no such flag
  REQUIRE(cuGraphConditionalHandleCreate(&H, G, nullptr, 1, CU_GRAPH_COND_ASSIGN_DEFAULT) == CUDA_SUCCESS);

  CUgraphNodeParams P = {};
  P.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  P.conditional.handle = H, P.conditional.type = CU_GRAPH_COND_TYPE_WHILE, P.conditional.size = 2;
  CUgraphNode N = nullptr;
  CHECK(cuGraphAddNode(&N, G, nullptr, nullptr, 0, &P) == CUDA_ERROR_INVALID_VALUE); // WHILE has one body
  P.conditional.size = 1;
  CHECK(cuGraphAddNode(&N, Other, nullptr, nullptr, 0, &P) == CUDA_ERROR_INVALID_VALUE); // G's handle
  REQUIRE(cuGraphAddNode(&N, G, nullptr, nullptr, 0, &P) == CUDA_SUCCESS);
  CUgraphNodeType Type;
  REQUIRE(cuGraphNodeGetType(N, &Type) == CUDA_SUCCESS);
  CHECK(Type == CU_GRAPH_NODE_TYPE_CONDITIONAL);
  REQUIRE(P.conditional.phGraph_out);
  CUgraph Body = P.conditional.phGraph_out[0];
  CHECK(cuGraphDestroy(Body) == CUDA_ERROR_INVALID_VALUE); // owned by its node

  // The body, filled by capture: a host function that counts its runs.
  CUstream S = nullptr;
  REQUIRE(cuStreamCreate(&S, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  REQUIRE(cuStreamBeginCaptureToGraph(S, Body, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS);
  int Calls = 0;
  REQUIRE(cuLaunchHostFunc(S, countCall, &Calls) == CUDA_SUCCESS);
  CHECK(cuStreamEndCapture(S, nullptr) == CUDA_SUCCESS); // capturing into a graph needs no output
  size_t Count = 0;
  REQUIRE(cuGraphGetNodes(Body, nullptr, &Count) == CUDA_SUCCESS);
  CHECK(Count == 1);

  CUgraph Clone = nullptr;
  CHECK(cuGraphClone(&Clone, G) == CUDA_ERROR_NOT_SUPPORTED);
  CUgraphNode Child = nullptr;
  CHECK(cuGraphAddChildGraphNode(&Child, Other, nullptr, 0, G) == CUDA_ERROR_NOT_SUPPORTED);
  CUgraphExec X = nullptr, Second = nullptr;
  REQUIRE(cuGraphInstantiate(&X, G, 0) == CUDA_SUCCESS);
  CHECK(cuGraphInstantiate(&Second, G, 0) == CUDA_ERROR_NOT_SUPPORTED);
  // (Nothing would end that WHILE's loop: it is not launched.) An IF whose handle's default, 1, is assigned at
  // the launch runs its first body once.
  CHECK(cuGraphExecDestroy(X) == CUDA_SUCCESS);
  CUgraph IfGraph = nullptr;
  REQUIRE(cuGraphCreate(&IfGraph, 0) == CUDA_SUCCESS);
  REQUIRE(cuGraphConditionalHandleCreate(&H, IfGraph, nullptr, 1, CU_GRAPH_COND_ASSIGN_DEFAULT) == CUDA_SUCCESS);
  P.conditional.handle = H, P.conditional.type = CU_GRAPH_COND_TYPE_IF, P.conditional.size = 2;
  REQUIRE(cuGraphAddNode(&N, IfGraph, nullptr, nullptr, 0, &P) == CUDA_SUCCESS);
  CUgraphNodeParams Host = {};
  Host.type = CU_GRAPH_NODE_TYPE_HOST;
  Host.host.fn = countCall, Host.host.userData = &Calls;
  CUgraphNode HostNode = nullptr;
  REQUIRE(cuGraphAddNode(&HostNode, P.conditional.phGraph_out[0], nullptr, nullptr, 0, &Host) == CUDA_SUCCESS);
  REQUIRE(cuGraphInstantiate(&X, IfGraph, 0) == CUDA_SUCCESS);
  REQUIRE(cuGraphLaunch(X, S) == CUDA_SUCCESS);
  REQUIRE(cuStreamSynchronize(S) == CUDA_SUCCESS);
  CHECK(Calls == 1);
  CHECK(cuGraphExecDestroy(X) == CUDA_SUCCESS);
  CHECK(cuGraphDestroy(IfGraph) == CUDA_SUCCESS);
  CHECK(cuGraphDestroy(G) == CUDA_SUCCESS);
  CHECK(cuGraphDestroy(Other) == CUDA_SUCCESS);
  CHECK(cuStreamDestroy(S) == CUDA_SUCCESS);
}

namespace {
CUgraphNodeParams allocNodeParams(size_t Bytes) {
  CUgraphNodeParams P = {};
  P.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
  P.alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  P.alloc.poolProps.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  P.alloc.bytesize = Bytes;
  return P;
}
CUgraphNodeParams hostNodeParams(void *Counter) {
  CUgraphNodeParams P = {};
  P.type = CU_GRAPH_NODE_TYPE_HOST;
  P.host.fn = countCall, P.host.userData = Counter;
  return P;
}
/// A graph of Count host nodes in a chain, each counting into Counter.
CUgraph hostChain(int Count, int *Counter) {
  CUgraph G = nullptr;
  REQUIRE(cuGraphCreate(&G, 0) == CUDA_SUCCESS);
  CUgraphNodeParams P = hostNodeParams(Counter);
  CUgraphNode Last = nullptr;
  for (int I = 0; I < Count; ++I)
    REQUIRE(cuGraphAddNode(&Last, G, I ? &Last : nullptr, nullptr, I ? 1 : 0, &P) == CUDA_SUCCESS);
  return G;
}
} // namespace

TEST_CASE("alloc and free nodes through cuGraphAddNode: the address comes back in the struct; they take no changes") {
  context();
  CUmodule M = nullptr;
  REQUIRE(cuModuleLoadData(&M, FillPtx.c_str()) == CUDA_SUCCESS);
  CUfunction F = nullptr;
  REQUIRE(cuModuleGetFunction(&F, M, "fill") == CUDA_SUCCESS);
  CUgraph G = nullptr;
  REQUIRE(cuGraphCreate(&G, 0) == CUDA_SUCCESS);
  CUgraphNode Alloc = nullptr, Kernel = nullptr, Copy = nullptr, Free = nullptr, Bad = nullptr;
  CUgraphNodeParams A = allocNodeParams(64 * sizeof(int));
  REQUIRE(cuGraphAddNode(&Alloc, G, nullptr, nullptr, 0, &A) == CUDA_SUCCESS);
  CUdeviceptr D = A.alloc.dptr;
  REQUIRE(D != 0);
  CUDA_MEM_ALLOC_NODE_PARAMS Back = {};
  REQUIRE(cuGraphMemAllocNodeGetParams(Alloc, &Back) == CUDA_SUCCESS);
  CHECK(Back.dptr == D);

  unsigned V = 7;
  void *Args[] = {&D, &V};
  CUgraphNodeParams K = {};
  K.type = CU_GRAPH_NODE_TYPE_KERNEL;
  K.kernel.func = F, K.kernel.gridDimX = K.kernel.gridDimY = K.kernel.gridDimZ = 1;
  K.kernel.blockDimX = 64, K.kernel.blockDimY = K.kernel.blockDimZ = 1, K.kernel.kernelParams = Args;
  REQUIRE(cuGraphAddNode(&Kernel, G, &Alloc, nullptr, 1, &K) == CUDA_SUCCESS);
  std::vector<unsigned> H(64, 0);
  CUgraphNodeParams C = {};
  C.type = CU_GRAPH_NODE_TYPE_MEMCPY;
  C.memcpy.copyParams.srcMemoryType = CU_MEMORYTYPE_DEVICE, C.memcpy.copyParams.srcDevice = D;
  C.memcpy.copyParams.dstMemoryType = CU_MEMORYTYPE_HOST, C.memcpy.copyParams.dstHost = H.data();
  C.memcpy.copyParams.WidthInBytes = 64 * sizeof(int), C.memcpy.copyParams.Height = C.memcpy.copyParams.Depth = 1;
  REQUIRE(cuGraphAddNode(&Copy, G, &Kernel, nullptr, 1, &C) == CUDA_SUCCESS);
  CUgraphNodeParams Fr = {};
  Fr.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
  Fr.free.dptr = D;
  REQUIRE(cuGraphAddNode(&Free, G, &Copy, nullptr, 1, &Fr) == CUDA_SUCCESS);
  CUdeviceptr Freed = 0;
  REQUIRE(cuGraphMemFreeNodeGetParams(Free, &Freed) == CUDA_SUCCESS);
  CHECK(Freed == D);

  CUgraphExec X = nullptr;
  REQUIRE(cuGraphInstantiate(&X, G, 0) == CUDA_SUCCESS);
  for (int I = 0; I < 2; ++I) // the free node lets each launch allocate again
    REQUIRE(cuGraphLaunch(X, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(H[0] == 7);
  CHECK(H[63] == 70);

  // As an H200 answers (tests/cudart/graph_node_params.cu).
  CHECK(cuGraphNodeSetParams(Alloc, &A) == CUDA_ERROR_NOT_SUPPORTED);
  CHECK(cuGraphNodeSetParams(Free, &Fr) == CUDA_ERROR_NOT_SUPPORTED);
  CHECK(cuGraphExecNodeSetParams(X, Alloc, &A) == CUDA_ERROR_NOT_SUPPORTED);
  CHECK(cuGraphExecNodeSetParams(X, Free, &Fr) == CUDA_ERROR_NOT_SUPPORTED);
  CUgraphNodeParams Zero = allocNodeParams(0);
  CHECK(cuGraphAddNode(&Bad, G, nullptr, nullptr, 0, &Zero) == CUDA_ERROR_INVALID_VALUE);
  Fr.free.dptr = 0;
  CHECK(cuGraphAddNode(&Bad, G, nullptr, nullptr, 0, &Fr) == CUDA_ERROR_INVALID_VALUE);
  A.reserved0[1] = 1;
  CHECK(cuGraphAddNode(&Bad, G, nullptr, nullptr, 0, &A) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuGraphExecDestroy(X) == CUDA_SUCCESS);
  CHECK(cuGraphDestroy(G) == CUDA_SUCCESS);
  CHECK(cuModuleUnload(M) == CUDA_SUCCESS);
}

TEST_CASE("cuGraphNodeSetParams and cuGraphExecNodeSetParams: every node type, and what NVIDIA's driver refuses") {
  context();
  int Calls = 0, Other = 0, InExec = 0, ChildCalls = 0, NewChildCalls = 0;
  CUgraph G = nullptr;
  REQUIRE(cuGraphCreate(&G, 0) == CUDA_SUCCESS);
  CUdeviceptr D = 0;
  REQUIRE(cuMemAlloc(&D, 4) == CUDA_SUCCESS);
  CUgraphNodeParams Ms = {};
  Ms.type = CU_GRAPH_NODE_TYPE_MEMSET;
  Ms.memset.dst = D, Ms.memset.value = 1, Ms.memset.elementSize = 4, Ms.memset.width = Ms.memset.height = 1;
  CUgraphNodeParams Host = hostNodeParams(&Calls), Empty = {}, Record = {}, Child = {}, If = {};
  Empty.type = CU_GRAPH_NODE_TYPE_EMPTY;
  CUevent E1 = nullptr, E2 = nullptr;
  REQUIRE(cuEventCreate(&E1, 0) == CUDA_SUCCESS);
  REQUIRE(cuEventCreate(&E2, 0) == CUDA_SUCCESS);
  Record.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD, Record.eventRecord.event = E1;
  CUgraph ChildGraph = hostChain(1, &ChildCalls);
  Child.type = CU_GRAPH_NODE_TYPE_GRAPH, Child.graph.graph = ChildGraph;
  REQUIRE(cuGraphConditionalHandleCreate(&If.conditional.handle, G, nullptr, 0, CU_GRAPH_COND_ASSIGN_DEFAULT) ==
          CUDA_SUCCESS);
  If.type = CU_GRAPH_NODE_TYPE_CONDITIONAL, If.conditional.type = CU_GRAPH_COND_TYPE_IF, If.conditional.size = 1;
  CUgraphNode Memset, HostNode, EmptyNode, RecordNode, ChildNode, IfNode;
  REQUIRE(cuGraphAddNode(&Memset, G, nullptr, nullptr, 0, &Ms) == CUDA_SUCCESS);
  REQUIRE(cuGraphAddNode(&HostNode, G, &Memset, nullptr, 1, &Host) == CUDA_SUCCESS);
  REQUIRE(cuGraphAddNode(&ChildNode, G, &HostNode, nullptr, 1, &Child) == CUDA_SUCCESS);
  REQUIRE(cuGraphAddNode(&EmptyNode, G, &ChildNode, nullptr, 1, &Empty) == CUDA_SUCCESS);
  REQUIRE(cuGraphAddNode(&RecordNode, G, &EmptyNode, nullptr, 1, &Record) == CUDA_SUCCESS);
  REQUIRE(cuGraphAddNode(&IfNode, G, &RecordNode, nullptr, 1, &If) == CUDA_SUCCESS);

  // In the graph: each type takes new parameters of its own type; conditional nodes take none.
  Ms.memset.value = 2;
  CHECK(cuGraphNodeSetParams(Memset, &Ms) == CUDA_SUCCESS);
  Host.host.userData = &Other;
  CHECK(cuGraphNodeSetParams(HostNode, &Host) == CUDA_SUCCESS);
  CUgraph TwoNodes = hostChain(2, &ChildCalls);
  Child.graph.graph = TwoNodes;
  CHECK(cuGraphNodeSetParams(ChildNode, &Child) == CUDA_SUCCESS);
  CUgraph Mine = nullptr;
  size_t Count = 0;
  REQUIRE(cuGraphChildGraphNodeGetGraph(ChildNode, &Mine) == CUDA_SUCCESS);
  REQUIRE(cuGraphGetNodes(Mine, nullptr, &Count) == CUDA_SUCCESS);
  CHECK(Count == 2);
  CHECK(cuGraphNodeSetParams(EmptyNode, &Empty) == CUDA_SUCCESS);
  Record.eventRecord.event = E2;
  CHECK(cuGraphNodeSetParams(RecordNode, &Record) == CUDA_SUCCESS);
  CUevent Got = nullptr;
  REQUIRE(cuGraphEventRecordNodeGetEvent(RecordNode, &Got) == CUDA_SUCCESS);
  CHECK(Got == E2);
  CHECK(cuGraphNodeSetParams(IfNode, &If) == CUDA_ERROR_NOT_SUPPORTED);
  CHECK(cuGraphNodeSetParams(HostNode, &Empty) == CUDA_ERROR_INVALID_VALUE); // another type
  CHECK(cuGraphNodeSetParams(HostNode, nullptr) == CUDA_ERROR_INVALID_VALUE);

  // In an exec: its own copies change, the graph's nodes do not; a child graph keeps its topology.
  CUgraphExec X = nullptr;
  REQUIRE(cuGraphInstantiate(&X, G, 0) == CUDA_SUCCESS);
  Ms.memset.value = 3;
  CHECK(cuGraphExecNodeSetParams(X, Memset, &Ms) == CUDA_SUCCESS);
  Host.host.userData = &InExec;
  CHECK(cuGraphExecNodeSetParams(X, HostNode, &Host) == CUDA_SUCCESS);
  CUgraph SameShape = hostChain(2, &NewChildCalls), OneNode = hostChain(1, &NewChildCalls);
  Child.graph.graph = OneNode;
  CHECK(cuGraphExecNodeSetParams(X, ChildNode, &Child) == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  Child.graph.graph = SameShape;
  CHECK(cuGraphExecNodeSetParams(X, ChildNode, &Child) == CUDA_SUCCESS);
  CHECK(cuGraphExecNodeSetParams(X, EmptyNode, &Empty) == CUDA_SUCCESS);
  CHECK(cuGraphExecNodeSetParams(X, RecordNode, &Record) == CUDA_SUCCESS);
  CHECK(cuGraphExecNodeSetParams(X, IfNode, &If) == CUDA_ERROR_NOT_SUPPORTED);
  CHECK(cuGraphExecNodeSetParams(X, HostNode, &Ms) == CUDA_ERROR_INVALID_VALUE);
  CUgraphNode Later = nullptr;
  REQUIRE(cuGraphAddNode(&Later, G, nullptr, nullptr, 0, &Host) == CUDA_SUCCESS);
  CHECK(cuGraphExecNodeSetParams(X, Later, &Host) == CUDA_ERROR_INVALID_VALUE); // not in the exec
  REQUIRE(cuGraphLaunch(X, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
  unsigned Value = 0;
  REQUIRE(cuMemcpyDtoH(&Value, D, 4) == CUDA_SUCCESS);
  CHECK(Value == 3);
  CHECK((Calls == 0 && Other == 0 && InExec == 1));
  CHECK((ChildCalls == 0 && NewChildCalls == 2));

  CHECK(cuGraphExecDestroy(X) == CUDA_SUCCESS);
  for (CUgraph Each : {G, ChildGraph, TwoNodes, SameShape, OneNode})
    CHECK(cuGraphDestroy(Each) == CUDA_SUCCESS);
  CHECK(cuEventDestroy(E1) == CUDA_SUCCESS);
  CHECK(cuEventDestroy(E2) == CUDA_SUCCESS);
  CHECK(cuMemFree(D) == CUDA_SUCCESS);
}
