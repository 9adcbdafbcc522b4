// cub_device: CUB's device-wide algorithms (reduce, scan, radix sort, histogram, select, run-length encode)
// with the two-phase temporary-storage protocol, temporary storage from cudaMallocAsync/cudaFreeAsync on a
// non-default stream, checked against host computations.
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <vector>

#include "check.h"

struct IsEven {
  __host__ __device__ bool operator()(int x) const { return (x & 1) == 0; }
};

template <class T> static T *upload(const std::vector<T> &h, cudaStream_t s) {
  T *d = nullptr;
  cudaMallocAsync(&d, h.size() * sizeof(T), s);
  cudaMemcpyAsync(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, s);
  return d;
}
template <class T> static std::vector<T> download(const T *d, size_t n, cudaStream_t s) {
  std::vector<T> h(n);
  cudaMemcpyAsync(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost, s);
  cudaStreamSynchronize(s);
  return h;
}

int main() {
  setvbuf(stdout, NULL, _IONBF, 0);
  const int n = 50000;
  std::vector<int> h(n);
  uint32_t r = 7;
  for (int &x : h) {
    r = r * 1103515245u + 12345u;
    x = (int)((r >> 9) % 1000);
  }
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream_create");
  int *din = upload(h, s);
  void *tmp = nullptr;
  size_t tmpBytes = 0;

  // reduce
  int *dsum;
  cudaMallocAsync(&dsum, sizeof(int), s);
  CK(cub::DeviceReduce::Sum(nullptr, tmpBytes, din, dsum, n, s), "reduce_size_query");
  CK(cudaMallocAsync(&tmp, tmpBytes, s), "malloc_async_temp");
  CK(cub::DeviceReduce::Sum(tmp, tmpBytes, din, dsum, n, s), "reduce_run");
  CK(cudaFreeAsync(tmp, s), "free_async_temp");
  int sum = download(dsum, 1, s)[0];
  CHECK(sum == std::accumulate(h.begin(), h.end(), 0), "reduce_sum", "%d", sum);

  // exclusive scan
  int *dscan;
  cudaMallocAsync(&dscan, n * sizeof(int), s);
  tmp = nullptr;
  tmpBytes = 0;
  cub::DeviceScan::ExclusiveSum(nullptr, tmpBytes, din, dscan, n, s);
  cudaMallocAsync(&tmp, tmpBytes, s);
  CK(cub::DeviceScan::ExclusiveSum(tmp, tmpBytes, din, dscan, n, s), "scan_run");
  cudaFreeAsync(tmp, s);
  std::vector<int> scan = download(dscan, n, s), want(n);
  std::exclusive_scan(h.begin(), h.end(), want.begin(), 0);
  CHECK(scan == want, "exclusive_sum", "last %d want %d", scan[n - 1], want[n - 1]);

  // radix sort pairs
  std::vector<int> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  int *dvals = upload(idx, s), *dkeysOut, *dvalsOut;
  cudaMallocAsync(&dkeysOut, n * sizeof(int), s);
  cudaMallocAsync(&dvalsOut, n * sizeof(int), s);
  tmp = nullptr;
  tmpBytes = 0;
  cub::DeviceRadixSort::SortPairs(nullptr, tmpBytes, din, dkeysOut, dvals, dvalsOut, n, 0, 32, s);
  cudaMallocAsync(&tmp, tmpBytes, s);
  CK(cub::DeviceRadixSort::SortPairs(tmp, tmpBytes, din, dkeysOut, dvals, dvalsOut, n, 0, 32, s), "radix_sort_run");
  cudaFreeAsync(tmp, s);
  std::vector<int> keys = download(dkeysOut, n, s), vals = download(dvalsOut, n, s);
  std::vector<int> order = idx;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return h[a] < h[b]; });
  bool ok = true;
  for (int i = 0; i < n && ok; ++i)
    ok = vals[i] == order[i] && keys[i] == h[order[i]];
  CHECK(ok, "radix_sort_pairs", "keys[0]=%d vals[0]=%d", keys[0], vals[0]);

  // histogram: 10 even bins over [0, 1000)
  int *dhist;
  cudaMallocAsync(&dhist, 10 * sizeof(int), s);
  tmp = nullptr;
  tmpBytes = 0;
  cub::DeviceHistogram::HistogramEven(nullptr, tmpBytes, din, dhist, 11, 0, 1000, n, s);
  cudaMallocAsync(&tmp, tmpBytes, s);
  CK(cub::DeviceHistogram::HistogramEven(tmp, tmpBytes, din, dhist, 11, 0, 1000, n, s), "histogram_run");
  cudaFreeAsync(tmp, s);
  std::vector<int> hist = download(dhist, 10, s), hwant(10, 0);
  for (int x : h)
    hwant[x / 100]++;
  CHECK(hist == hwant, "histogram_even", "bin0 %d want %d", hist[0], hwant[0]);

  // select if
  int *dsel, *dnum;
  cudaMallocAsync(&dsel, n * sizeof(int), s);
  cudaMallocAsync(&dnum, sizeof(int), s);
  tmp = nullptr;
  tmpBytes = 0;
  cub::DeviceSelect::If(nullptr, tmpBytes, din, dsel, dnum, n, IsEven(), s);
  cudaMallocAsync(&tmp, tmpBytes, s);
  CK(cub::DeviceSelect::If(tmp, tmpBytes, din, dsel, dnum, n, IsEven(), s), "select_run");
  cudaFreeAsync(tmp, s);
  int nsel = download(dnum, 1, s)[0];
  std::vector<int> sel = download(dsel, nsel, s), swant;
  std::copy_if(h.begin(), h.end(), std::back_inserter(swant), IsEven());
  CHECK(sel == swant, "select_if", "%d selected, want %zu", nsel, swant.size());

  for (void *p : {(void *)din, (void *)dsum, (void *)dscan, (void *)dvals, (void *)dkeysOut, (void *)dvalsOut,
                  (void *)dhist, (void *)dsel, (void *)dnum})
    cudaFreeAsync(p, s);
  CK(cudaStreamSynchronize(s), "final_sync");
  CK(cudaStreamDestroy(s), "stream_destroy");
  if (failures) {
    printf("SUMMARY cub_device: %d failure(s)\n", failures);
    return 1;
  }
  printf("SUMMARY cub_device: all passed\n");
  return 0;
}
