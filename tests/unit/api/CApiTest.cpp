// The C embedding API (ptxforge.h): status codes and the thread's last error, diagnostics of invalid PTX, the
// target check, compile and run, a faulting kernel followed by a good one, and null arguments.
#include "TestKernels.h"

#include "ptxforge/ptxforge.h"

#include <doctest/doctest.h>

#include <cstring>
#include <string>

using namespace ptxforge::testing;

extern "C" int ptxforge_test_header_is_c(void);

namespace {

ptxforge_status load(const char *Ptx, const char *Name, ptxforge_program *Out) {
  return ptxforge_program_create(Ptx, std::strlen(Ptx), Name, Out);
}

} // namespace

TEST_CASE("C: the header is C, and the version") {
  CHECK(ptxforge_test_header_is_c() == 1);
  CHECK(std::string(ptxforge_version()) == PTXFORGE_VERSION_STRING);
  CHECK(std::string(ptxforge_status_string(PTXFORGE_ERROR_ILLEGAL_ADDRESS)) == "illegal address");
}

TEST_CASE("C: invalid PTX returns a status and diagnostics") {
  ptxforge_program P = nullptr;
  REQUIRE(load(BrokenPtx.c_str(), "broken.ptx", &P) == PTXFORGE_ERROR_INVALID_PTX);
  CHECK(P == nullptr);
  CHECK(std::string(ptxforge_last_error_message()).find("invalid PTX: broken.ptx") == 0);
  REQUIRE(ptxforge_last_error_diagnostic_count() >= 1);
  ptxforge_diagnostic D;
  REQUIRE(ptxforge_last_error_diagnostic(0, &D) == PTXFORGE_SUCCESS);
  CHECK(std::string(D.file) == "broken.ptx");
  CHECK(D.line >= 7);
  CHECK(D.column >= 1);
  CHECK(D.severity == PTXFORGE_SEVERITY_ERROR);
  CHECK(std::strlen(D.message) > 0);
  CHECK(ptxforge_last_error_diagnostic(99, &D) == PTXFORGE_ERROR_INVALID_ARGUMENT);
  CHECK(ptxforge_program_create_from_file("/nonexistent.ptx", &P) == PTXFORGE_ERROR_FILE);
  CHECK(ptxforge_program_create(nullptr, 0, nullptr, &P) == PTXFORGE_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("C: requirements and the target check") {
  ptxforge_program P = nullptr;
  REQUIRE(load(Sm80Ptx.c_str(), "sum.ptx", &P) == PTXFORGE_SUCCESS);
  unsigned Sm = 0, Ptx = 0;
  REQUIRE(ptxforge_program_requirements(P, &Sm, &Ptx) == PTXFORGE_SUCCESS);
  CHECK(Sm == 80);
  CHECK(Ptx == 70);
  CHECK(ptxforge_program_check_target(P, 9, 0) == PTXFORGE_SUCCESS);
  REQUIRE(ptxforge_program_check_target(P, 7, 5) == PTXFORGE_ERROR_UNSUPPORTED_TARGET);
  CHECK(ptxforge_last_error_diagnostic_count() == 2);

  ptxforge_device Dev = nullptr;
  REQUIRE(ptxforge_device_create(nullptr, &Dev) == PTXFORGE_SUCCESS);
  ptxforge_compile_options O;
  ptxforge_compile_options_init(&O);
  O.cc_major = 7;
  O.cc_minor = 0;
  ptxforge_executable X = nullptr;
  CHECK(ptxforge_device_compile(Dev, P, &O, &X) == PTXFORGE_ERROR_UNSUPPORTED_TARGET);
  CHECK(X == nullptr);
  ptxforge_program_destroy(P);
  ptxforge_device_destroy(Dev);
}

TEST_CASE("C: compile, inspect, run; a fault, then a good launch") {
  ptxforge_program P = nullptr;
  ptxforge_device Dev = nullptr;
  ptxforge_executable X = nullptr;
  ptxforge_kernel Store = nullptr, Layout = nullptr;
  REQUIRE(load(ApiKernelsPtx.c_str(), "kernels.ptx", &P) == PTXFORGE_SUCCESS);
  REQUIRE(ptxforge_device_create(nullptr, &Dev) == PTXFORGE_SUCCESS);
  REQUIRE(ptxforge_device_compile(Dev, P, nullptr, &X) == PTXFORGE_SUCCESS);
  CHECK(ptxforge_executable_kernel_count(X) == 4);
  REQUIRE(ptxforge_executable_kernel(X, "store", &Store) == PTXFORGE_SUCCESS);
  REQUIRE(ptxforge_executable_kernel_at(X, 3, &Layout) == PTXFORGE_SUCCESS);
  CHECK(std::string(ptxforge_kernel_name(Layout)) == "layout");
  ptxforge_param_info Info;
  REQUIRE(ptxforge_kernel_param(Layout, 2, &Info) == PTXFORGE_SUCCESS);
  CHECK(std::string(Info.name) == "c");
  CHECK(Info.offset == 16);
  CHECK(Info.align == 16);
  CHECK(Info.array_length == 12);
  ptxforge_kernel Missing = nullptr;
  CHECK(ptxforge_executable_kernel(X, "nope", &Missing) == PTXFORGE_ERROR_NOT_FOUND);

  ptxforge_buffer B = nullptr;
  REQUIRE(ptxforge_buffer_create(Dev, 4, &B) == PTXFORGE_SUCCESS);
  uint64_t Address = ptxforge_buffer_address(B), Null = 0;
  uint32_t Value = 77;
  const void *Args[2] = {&Null, &Value};
  size_t Sizes[2] = {8, 4};
  ptxforge_launch_config C = {{1, 1, 1}, {32, 1, 1}, 0};
  CHECK(ptxforge_kernel_run(Store, &C, Args, Sizes, 2) == PTXFORGE_ERROR_ILLEGAL_ADDRESS);
  Args[0] = &Address;
  REQUIRE(ptxforge_kernel_run(Store, &C, Args, Sizes, 2) == PTXFORGE_SUCCESS);
  uint32_t Out = 0;
  REQUIRE(ptxforge_buffer_read(B, 0, &Out, 4) == PTXFORGE_SUCCESS);
  CHECK(Out == 77);
  Sizes[1] = 2;
  CHECK(ptxforge_kernel_run(Store, &C, Args, Sizes, 2) == PTXFORGE_ERROR_INVALID_ARGUMENT);
  CHECK(ptxforge_kernel_run(Store, nullptr, Args, Sizes, 2) == PTXFORGE_ERROR_INVALID_ARGUMENT);
  Sizes[1] = 4;

  ptxforge_stream S = nullptr;
  REQUIRE(ptxforge_stream_create(Dev, &S) == PTXFORGE_SUCCESS);
  Value = 5;
  REQUIRE(ptxforge_stream_launch(S, Store, &C, Args, Sizes, 2) == PTXFORGE_SUCCESS);
  REQUIRE(ptxforge_stream_synchronize(S) == PTXFORGE_SUCCESS);
  REQUIRE(ptxforge_buffer_read(B, 0, &Out, 4) == PTXFORGE_SUCCESS);
  CHECK(Out == 5);

  uint64_t Counter = 0;
  size_t CounterSize = 0;
  REQUIRE(ptxforge_executable_global(X, "counter", &Counter, &CounterSize) == PTXFORGE_SUCCESS);
  CHECK(CounterSize == 4);
  REQUIRE(ptxforge_device_copy_to_host(Dev, &Out, Counter, 4) == PTXFORGE_SUCCESS);
  CHECK(Out == 7);

  CHECK(ptxforge_buffer_write(B, 2, &Out, 4) == PTXFORGE_ERROR_INVALID_ARGUMENT);
  CHECK(ptxforge_buffer_create(nullptr, 4, &B) == PTXFORGE_ERROR_INVALID_ARGUMENT);

  ptxforge_stream_destroy(S);
  ptxforge_buffer_destroy(B);
  ptxforge_kernel_destroy(Store);
  ptxforge_kernel_destroy(Layout);
  ptxforge_executable_destroy(X);
  ptxforge_device_destroy(Dev);
  ptxforge_program_destroy(P);
}

TEST_CASE("C: objects compiled ahead of time") {
  ptxforge_program P = nullptr;
  ptxforge_device Dev = nullptr;
  ptxforge_object Obj = nullptr;
  ptxforge_executable X = nullptr;
  ptxforge_kernel K = nullptr;
  REQUIRE(load(ApiKernelsPtx.c_str(), "kernels.ptx", &P) == PTXFORGE_SUCCESS);
  REQUIRE(ptxforge_device_create(nullptr, &Dev) == PTXFORGE_SUCCESS);
  ptxforge_object_options O = {9, 0, 2, "x86-64-v2"};
  REQUIRE(ptxforge_object_compile(P, &O, &Obj) == PTXFORGE_SUCCESS);
  CHECK(std::string(ptxforge_object_cpu(Obj)) == "x86-64-v2");
  size_t Size = 0;
  CHECK(ptxforge_object_fatbinary(Obj, nullptr, &Size) == PTXFORGE_ERROR_INVALID_ARGUMENT);
  REQUIRE(Size > 16);
  std::string Bytes(Size, '\0');
  REQUIRE(ptxforge_object_fatbinary(Obj, Bytes.data(), &Size) == PTXFORGE_SUCCESS);
  CHECK(Bytes.compare(0, 4, "\x50\xed\x55\xba") == 0);
  Size = 0;
  CHECK(ptxforge_object_serialize(Obj, nullptr, &Size) == PTXFORGE_ERROR_INVALID_ARGUMENT);
  CHECK(Size > 0);

  REQUIRE(ptxforge_device_load(Dev, Obj, &X) == PTXFORGE_SUCCESS);
  REQUIRE(ptxforge_executable_kernel(X, "store", &K) == PTXFORGE_SUCCESS);
  ptxforge_buffer B = nullptr;
  REQUIRE(ptxforge_buffer_create(Dev, 4, &B) == PTXFORGE_SUCCESS);
  uint64_t Address = ptxforge_buffer_address(B);
  uint32_t Value = 64, Out = 0;
  const void *Args[2] = {&Address, &Value};
  size_t Sizes[2] = {8, 4};
  ptxforge_launch_config C = {{1, 1, 1}, {1, 1, 1}, 0};
  REQUIRE(ptxforge_kernel_run(K, &C, Args, Sizes, 2) == PTXFORGE_SUCCESS);
  REQUIRE(ptxforge_buffer_read(B, 0, &Out, 4) == PTXFORGE_SUCCESS);
  CHECK(Out == 64);
  ptxforge_buffer_destroy(B);
  ptxforge_kernel_destroy(K);
  ptxforge_executable_destroy(X);
  ptxforge_object_destroy(Obj);
  ptxforge_device_destroy(Dev);
  ptxforge_program_destroy(P);
}
