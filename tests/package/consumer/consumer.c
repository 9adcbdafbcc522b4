/* The smallest C embedding: compile one kernel, run it, check the value it stored. */
#include <ptxforge/ptxforge.h>

#include <stdio.h>
#include <string.h>

static const char *ptx = ".version 8.0\n.target sm_70\n.address_size 64\n"
                         ".visible .entry put(.param .u64 out, .param .u32 v)\n{\n"
                         "  .reg .b32 %r<2>;\n  .reg .b64 %rd<2>;\n"
                         "  ld.param.u64 %rd1, [out];\n  ld.param.u32 %r1, [v];\n"
                         "  st.global.u32 [%rd1], %r1;\n  ret;\n}\n";

int main(void) {
  ptxforge_program p;
  ptxforge_device d;
  ptxforge_executable x;
  ptxforge_kernel k;
  ptxforge_buffer b;
  ptxforge_launch_config c = {{1, 1, 1}, {1, 1, 1}, 0};
  uint64_t out;
  unsigned v = 4321, got = 0;
  const void *args[2] = {&out, &v};
  size_t sizes[2] = {sizeof out, sizeof v};
  if (ptxforge_program_create(ptx, strlen(ptx), "put.ptx", &p) || ptxforge_device_create(NULL, &d) ||
      ptxforge_device_compile(d, p, NULL, &x) || ptxforge_executable_kernel(x, "put", &k) ||
      ptxforge_buffer_create(d, 4, &b)) {
    fprintf(stderr, "%s\n", ptxforge_last_error_message());
    return 1;
  }
  out = ptxforge_buffer_address(b);
  if (ptxforge_kernel_run(k, &c, args, sizes, 2) || ptxforge_buffer_read(b, 0, &got, 4))
    return 1;
  printf("C consumer: ptxforge %s, put stored %u\n", ptxforge_version(), got);
  ptxforge_buffer_destroy(b);
  ptxforge_kernel_destroy(k);
  ptxforge_executable_destroy(x);
  ptxforge_device_destroy(d);
  ptxforge_program_destroy(p);
  return got == 4321 ? 0 : 1;
}
