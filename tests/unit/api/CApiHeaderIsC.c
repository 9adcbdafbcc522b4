/* ptxforge.h compiled as C (C99): the C API's header must not need a C++ compiler. */
#include "ptxforge/ptxforge.h"

#include <string.h>

int ptxforge_test_header_is_c(void) {
  ptxforge_compile_options o;
  ptxforge_compile_options_init(&o);
  return o.opt_level == 2 && ptxforge_version_number() == PTXFORGE_VERSION_NUMBER &&
         strcmp(ptxforge_version(), PTXFORGE_VERSION_STRING) == 0;
}
