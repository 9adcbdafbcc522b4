/* Embedding ptxforge in a C application (ptxforge.h): the same steps as embed_jit.cpp. PTX with errors
 * returns PTXFORGE_ERROR_INVALID_PTX and its diagnostics; the corrected PTX compiles and its kernel runs. */
#include "saxpy_ptx.h"

#include <ptxforge/ptxforge.h>

#include <stdio.h>
#include <string.h>

#define N 1000u

static int failed(const char *what, ptxforge_status s) {
  fprintf(stderr, "%s: %s: %s\n", what, ptxforge_status_string(s), ptxforge_last_error_message());
  return 1;
}

int main(void) {
  ptxforge_program broken = NULL, program = NULL;
  ptxforge_device device = NULL;
  ptxforge_executable exe = NULL;
  ptxforge_kernel saxpy = NULL;
  ptxforge_buffer dx = NULL, dy = NULL;
  ptxforge_status s;
  size_t i;
  printf("ptxforge %s\n", ptxforge_version());

  /* 1. Invalid PTX: a status and the diagnostics, no handle. */
  s = ptxforge_program_create(BrokenPtx, strlen(BrokenPtx), "broken.ptx", &broken);
  if (s != PTXFORGE_ERROR_INVALID_PTX)
    return failed("broken.ptx", s);
  printf("%s: %zu diagnostic(s)\n", ptxforge_status_string(s), ptxforge_last_error_diagnostic_count());
  for (i = 0; i < ptxforge_last_error_diagnostic_count(); ++i) {
    ptxforge_diagnostic d;
    ptxforge_last_error_diagnostic(i, &d);
    printf("%s:%u:%u: %s\n    %s\n", d.file, d.line, d.column, d.message, d.source_line);
  }

  /* 2. The corrected PTX. */
  if ((s = ptxforge_program_create(SaxpyPtx, strlen(SaxpyPtx), "saxpy.ptx", &program)) ||
      (s = ptxforge_device_create(NULL, &device)) || (s = ptxforge_device_compile(device, program, NULL, &exe)) ||
      (s = ptxforge_executable_kernel(exe, "saxpy", &saxpy)))
    return failed("compiling saxpy.ptx", s);
  for (i = 0; i < ptxforge_kernel_param_count(saxpy); ++i) {
    ptxforge_param_info p;
    ptxforge_kernel_param(saxpy, i, &p);
    printf("param %s .%s offset %llu size %llu\n", p.name, p.type, (unsigned long long)p.offset,
           (unsigned long long)p.size);
  }

  /* 3. Memory, launch, result. */
  {
    static float x[N], y[N];
    float a = 2.0f;
    unsigned n = N;
    uint64_t px, py;
    const void *args[4];
    size_t sizes[4] = {sizeof px, sizeof py, sizeof a, sizeof n};
    ptxforge_launch_config config = {{(N + 127) / 128, 1, 1}, {128, 1, 1}, 0};
    for (i = 0; i < N; ++i) {
      x[i] = (float)i;
      y[i] = 1.0f;
    }
    if ((s = ptxforge_buffer_create(device, sizeof x, &dx)) || (s = ptxforge_buffer_create(device, sizeof y, &dy)) ||
        (s = ptxforge_buffer_write(dx, 0, x, sizeof x)) || (s = ptxforge_buffer_write(dy, 0, y, sizeof y)))
      return failed("device memory", s);
    px = ptxforge_buffer_address(dx);
    py = ptxforge_buffer_address(dy);
    args[0] = &px;
    args[1] = &py;
    args[2] = &a;
    args[3] = &n;
    if ((s = ptxforge_kernel_run(saxpy, &config, args, sizes, 4)) || (s = ptxforge_buffer_read(dy, 0, y, sizeof y)))
      return failed("saxpy", s);
    for (i = 0; i < N; ++i)
      if (y[i] != 2.0f * (float)i + 1.0f) {
        fprintf(stderr, "y[%zu] = %g, expected %g\n", i, y[i], 2.0f * (float)i + 1.0f);
        return 1;
      }
    printf("saxpy over %u elements: ok (y[999] = %g)\n", N, y[N - 1]);
  }

  ptxforge_buffer_destroy(dx);
  ptxforge_buffer_destroy(dy);
  ptxforge_kernel_destroy(saxpy);
  ptxforge_executable_destroy(exe);
  ptxforge_device_destroy(device);
  ptxforge_program_destroy(program);
  return 0;
}
