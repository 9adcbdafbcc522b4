// thrust_algorithms: Thrust's sort, reduce, inclusive/exclusive scan, transform and sort_by_key on
// device_vector, built with -cudart shared and run unmodified against ptxforge's libcudart.so.13. Thrust's
// algorithms are CUB's device-wide kernels underneath (templates, dynamic shared memory, atomics, temporary
// storage from cudaMallocAsync, occupancy queries), so this exercises what real programs call.
#include <thrust/device_vector.h>
#include <thrust/functional.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <vector>

#include "check.h"
// Thrust reports CUDA errors as exceptions: each check fails on its own instead of ending the program.
#define GUARD(name, ...)                                                                                               \
  do {                                                                                                                 \
    try {                                                                                                              \
      __VA_ARGS__;                                                                                                     \
    } catch (const std::exception &e_) {                                                                               \
      printf("FAIL %s: %s\n", name, e_.what());                                                                        \
      ++failures;                                                                                                      \
    }                                                                                                                  \
  } while (0)

struct Square {
  __host__ __device__ long long operator()(int x) const { return (long long)x * x; }
};

int main() {
  setvbuf(stdout, NULL, _IONBF, 0);
  const int n = 100000;
  std::vector<int> h(n);
  uint32_t s = 12345;
  for (int &x : h) {
    s = s * 1664525u + 1013904223u;
    x = (int)(s >> 8) % 100000 - 50000;
  }

  std::vector<int> ref = h;
  std::sort(ref.begin(), ref.end());
  GUARD("sort_int", {
    thrust::device_vector<int> d(h.begin(), h.end());
    thrust::sort(d.begin(), d.end());
    thrust::host_vector<int> back = d;
    CHECK(std::equal(ref.begin(), ref.end(), back.begin()), "sort_int", "first %d want %d", back[0], ref[0]);
  });
  GUARD("sort_float_descending", {
    thrust::device_vector<float> f(n);
    thrust::sequence(f.begin(), f.end(), 0.0f, 0.5f);
    thrust::sort(f.begin(), f.end(), thrust::greater<float>());
    CHECK(f[0] == (n - 1) * 0.5f && f[n - 1] == 0.0f, "sort_float_descending", "%f %f", (float)f[0], (float)f[n - 1]);
  });
  GUARD("reduce_sum", {
    thrust::device_vector<int> d(h.begin(), h.end());
    long long sum = thrust::reduce(d.begin(), d.end(), 0LL, thrust::plus<long long>());
    long long want = std::accumulate(h.begin(), h.end(), 0LL);
    CHECK(sum == want, "reduce_sum", "%lld want %lld", sum, want);
  });
  GUARD("reduce_max", {
    thrust::device_vector<int> d(h.begin(), h.end());
    int mx = thrust::reduce(d.begin(), d.end(), -1000000, thrust::maximum<int>());
    CHECK(mx == ref.back(), "reduce_max", "%d want %d", mx, ref.back());
  });
  GUARD("inclusive_scan", {
    thrust::device_vector<int> ones(n, 1), scan(n);
    thrust::inclusive_scan(ones.begin(), ones.end(), scan.begin());
    CHECK(scan[0] == 1 && scan[n - 1] == n, "inclusive_scan", "%d", (int)scan[n - 1]);
  });
  GUARD("exclusive_scan", {
    thrust::device_vector<int> ones(n, 1), scan(n);
    thrust::exclusive_scan(ones.begin(), ones.end(), scan.begin(), 10);
    CHECK(scan[0] == 10 && scan[n - 1] == n + 9, "exclusive_scan", "%d", (int)scan[n - 1]);
  });
  GUARD("transform_reduce", {
    thrust::device_vector<int> d(h.begin(), h.end());
    thrust::device_vector<long long> sq(n);
    thrust::transform(d.begin(), d.end(), sq.begin(), Square());
    long long sqsum = thrust::reduce(sq.begin(), sq.end());
    long long sqwant = 0;
    for (int x : h)
      sqwant += (long long)x * x;
    CHECK(sqsum == sqwant, "transform_reduce", "%lld want %lld", sqsum, sqwant);
  });
  GUARD("stable_sort_by_key", {
    thrust::device_vector<int> keys(h.begin(), h.end()), vals(n);
    thrust::sequence(vals.begin(), vals.end());
    thrust::stable_sort_by_key(keys.begin(), keys.end(), vals.begin());
    std::vector<int> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return h[a] < h[b]; });
    thrust::host_vector<int> vback = vals;
    CHECK(std::equal(idx.begin(), idx.end(), vback.begin()), "stable_sort_by_key", "vals[0]=%d want %d", vback[0],
          idx[0]);
  });

  if (failures) {
    printf("SUMMARY thrust_algorithms: %d failure(s)\n", failures);
    return 1;
  }
  printf("SUMMARY thrust_algorithms: all passed\n");
  return 0;
}
