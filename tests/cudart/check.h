// What every program here reports through: CHECK prints `PASS name` or `FAIL name: why` (the .expected.txt
// files hold the lines) and counts failures; CK checks a runtime call's cudaError_t.
#pragma once

#include <cstdio>
#include <cuda_runtime.h>

static int failures = 0;
#define CHECK(cond, name, ...)                                                                                         \
  do {                                                                                                                 \
    if (cond)                                                                                                          \
      printf("PASS %s\n", name);                                                                                       \
    else {                                                                                                             \
      printf("FAIL %s: ", name);                                                                                       \
      printf(__VA_ARGS__);                                                                                             \
      printf("\n");                                                                                                    \
      ++failures;                                                                                                      \
    }                                                                                                                  \
  } while (0)
#define CK(call, name)                                                                                                 \
  do {                                                                                                                 \
    cudaError_t e_ = (call);                                                                                           \
    CHECK(e_ == cudaSuccess, name, "%s", cudaGetErrorName(e_));                                                        \
  } while (0)
