// runtime_api: runtime calls the shared/clients programs do not make: __managed__ variables (nvcc's
// __cudaRegisterManagedVar + __cudaInitModule), cudaMallocManaged, pitched memory with cudaMemcpy2D and
// cudaMemset2D, async symbol copies, cudaLaunchKernel by host function, cudaPointerGetAttributes,
// occupancy (cudaOccupancyMaxPotentialBlockSize), cudaGetDriverEntryPointByVersion, cudaDeviceGetLimit, managed
// memory hints (attach, prefetch, advise), memory pools and cudaFuncGetName.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#include "check.h"

__managed__ int m_counter = 5;
__device__ float d_bias;

__global__ void bump(int by) { atomicAdd(&m_counter, by); }
__global__ void scale_rows(float *p, size_t pitch, int w, int h, float s) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) {
    float *row = (float *)((char *)p + y * pitch);
    row[x] = row[x] * s + d_bias;
  }
}
__global__ void fill(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = i * 3;
}

typedef int (*DriverGetVersion)(int *);

int main() {
  setvbuf(stdout, NULL, _IONBF, 0);
  // __managed__: the host reads and writes the variable directly.
  CHECK(m_counter == 5, "managed_initial", "%d", m_counter);
  bump<<<4, 32>>>(2);
  CK(cudaDeviceSynchronize(), "managed_kernel");
  CHECK(m_counter == 5 + 4 * 32 * 2, "managed_after_kernel", "%d", m_counter);
  m_counter = 1;
  bump<<<1, 1>>>(1);
  cudaDeviceSynchronize();
  CHECK(m_counter == 2, "managed_host_write_seen", "%d", m_counter);

  int *um = nullptr;
  CK(cudaMallocManaged(&um, 1000 * sizeof(int)), "cudaMallocManaged");
  void *args[] = {&um, nullptr};
  int n = 1000;
  args[1] = &n;
  CK(cudaLaunchKernel((const void *)fill, dim3(4), dim3(256), args, 0, 0), "cudaLaunchKernel");
  CK(cudaDeviceSynchronize(), "sync_fill");
  CHECK(um[999] == 2997, "managed_memory_result", "%d", um[999]);
  cudaPointerAttributes pa;
  CK(cudaPointerGetAttributes(&pa, um), "pointer_attributes_managed");
  CHECK(pa.type == cudaMemoryTypeManaged, "pointer_type_managed", "%d", (int)pa.type);
  int local = 0;
  CK(cudaPointerGetAttributes(&pa, &local), "pointer_attributes_unregistered");
  CHECK(pa.type == cudaMemoryTypeUnregistered, "pointer_type_unregistered", "%d", (int)pa.type);
  // Managed memory hints (UnifiedMemoryStreams' calls): accepted, and the data stays where it is.
  cudaStream_t ms;
  cudaStreamCreate(&ms);
  CK(cudaStreamAttachMemAsync(ms, um, 0, cudaMemAttachSingle), "cudaStreamAttachMemAsync");
  cudaMemLocation loc = {};
  loc.type = cudaMemLocationTypeDevice;
  loc.id = 0;
  CK(cudaMemPrefetchAsync(um, 1000 * sizeof(int), loc, 0, ms), "cudaMemPrefetchAsync");
  CK(cudaMemAdvise(um, 1000 * sizeof(int), cudaMemAdviseSetReadMostly, loc), "cudaMemAdvise");
  CK(cudaStreamAttachMemAsync(ms, um, 0, cudaMemAttachHost), "cudaStreamAttachMemAsync_host");
  CK(cudaStreamSynchronize(ms), "sync_attached");
  CHECK(um[999] == 2997, "managed_after_hints", "%d", um[999]);
  cudaStreamDestroy(ms);
  cudaFree(um);

  // Memory pools (streamOrderedAllocation's calls): the default pool's release threshold, a pool of one's own
  // with allocations from it counted in its usage.
  cudaMemPool_t pool = nullptr, cur = nullptr;
  CK(cudaDeviceGetDefaultMemPool(&pool, 0), "cudaDeviceGetDefaultMemPool");
  CK(cudaDeviceGetMemPool(&cur, 0), "cudaDeviceGetMemPool");
  CHECK(pool == cur, "default_pool_is_current", "%p %p", (void *)pool, (void *)cur);
  unsigned long long threshold = ~0ull, got = 0;
  CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold), "cudaMemPoolSetAttribute");
  CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &got), "cudaMemPoolGetAttribute");
  CHECK(got == threshold, "release_threshold_kept", "%llu", got);
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t mine = nullptr;
  CK(cudaMemPoolCreate(&mine, &props), "cudaMemPoolCreate");
  CK(cudaDeviceSetMemPool(0, mine), "cudaDeviceSetMemPool");
  int *pa1 = nullptr, *pa2 = nullptr;
  CK(cudaMallocFromPoolAsync((void **)&pa1, 1024, mine, 0), "cudaMallocFromPoolAsync");
  CK(cudaMallocAsync((void **)&pa2, 1024, 0), "cudaMallocAsync_current_pool");
  CK(cudaMemPoolGetAttribute(mine, cudaMemPoolAttrUsedMemCurrent, &got), "pool_used_current");
  CHECK(got == 2048, "pool_used_bytes", "%llu", got);
  int access = 0;
  CK(cudaMemPoolGetAccess((cudaMemAccessFlags *)&access, mine, &props.location), "cudaMemPoolGetAccess");
  CHECK(access == cudaMemAccessFlagsProtReadWrite, "pool_access_owner", "%d", access);
  cudaMemAccessDesc desc = {props.location, cudaMemAccessFlagsProtReadWrite};
  CK(cudaMemPoolSetAccess(mine, &desc, 1), "cudaMemPoolSetAccess");
  cudaFreeAsync(pa1, 0);
  cudaFreeAsync(pa2, 0);
  CK(cudaDeviceSynchronize(), "pool_frees_done");
  CK(cudaMemPoolTrimTo(mine, 0), "cudaMemPoolTrimTo");
  CK(cudaMemPoolDestroy(mine), "cudaMemPoolDestroy");
  CK(cudaDeviceGetMemPool(&cur, 0), "cudaDeviceGetMemPool_after_destroy");
  CHECK(cur == pool, "default_pool_current_again", "%p %p", (void *)pool, (void *)cur);

  // pitched 2-D memory
  const int w = 100, h = 7;
  float host[h][w];
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      host[y][x] = (float)(y * 1000 + x);
  float *dp = nullptr;
  size_t pitch = 0;
  CK(cudaMallocPitch((void **)&dp, &pitch, w * sizeof(float), h), "cudaMallocPitch");
  CHECK(pitch >= w * sizeof(float), "pitch_wide_enough", "%zu", pitch);
  CK(cudaMemset2D(dp, pitch, 0, w * sizeof(float), h), "cudaMemset2D");
  CK(cudaMemcpy2D(dp, pitch, host, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice), "memcpy2d_htod");
  float bias = 0.5f;
  cudaStream_t s;
  cudaStreamCreate(&s);
  CK(cudaMemcpyToSymbolAsync(d_bias, &bias, sizeof bias, 0, cudaMemcpyHostToDevice, s), "memcpy_to_symbol_async");
  scale_rows<<<dim3(1, h), 128, 0, s>>>(dp, pitch, w, h, 2.0f);
  CK(cudaStreamSynchronize(s), "sync_scale_rows");
  float back[h][w];
  CK(cudaMemcpy2D(back, w * sizeof(float), dp, pitch, w * sizeof(float), h, cudaMemcpyDeviceToHost), "memcpy2d_dtoh");
  CHECK(back[6][99] == (6 * 1000 + 99) * 2.0f + 0.5f, "pitched_result", "%f", back[6][99]);
  cudaError_t e = cudaMemcpy2D(back, 4, dp, pitch, w * sizeof(float), h, cudaMemcpyDeviceToHost);
  printf("OBSERVED cudaMemcpy2D(width > dpitch) -> %s\n", cudaGetErrorName(e));
  CHECK(e == cudaErrorInvalidPitchValue, "memcpy2d_bad_pitch", "%s", cudaGetErrorName(e));
  cudaGetLastError();
  cudaFree(dp);
  cudaStreamDestroy(s);

  // occupancy, driver entry points, limits, device
  int minGrid = 0, block = 0;
  CK(cudaOccupancyMaxPotentialBlockSize(&minGrid, &block, fill), "max_potential_block_size");
  CHECK(block > 0 && block <= 1024 && minGrid > 0, "block_size_sane", "grid %d block %d", minGrid, block);
  int active = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&active, fill, 256, 0), "max_active_blocks");
  const char *fname = nullptr;
  CK(cudaFuncGetName(&fname, (const void *)fill), "cudaFuncGetName");
  CHECK(fname && strcmp(fname, "_Z4fillPii") == 0, "function_name_mangled", "%s", fname ? fname : "(null)");
  cudaError_t bad = cudaFuncGetName(&fname, (const void *)&active);
  CHECK(bad == cudaErrorInvalidDeviceFunction, "function_name_not_a_kernel", "%s", cudaGetErrorName(bad));
  cudaGetLastError();
  CHECK(active > 0, "active_blocks_positive", "%d", active);
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuDriverGetVersion", &fn, 13000, cudaEnableDefault, &q),
     "cudaGetDriverEntryPointByVersion");
  int dv = 0;
  CHECK(fn && q == cudaDriverEntryPointSuccess && ((DriverGetVersion)fn)(&dv) == 0 && dv >= 13000,
        "driver_entry_point_works", "%d", dv);
  size_t stack = 0;
  CK(cudaDeviceGetLimit(&stack, cudaLimitStackSize), "cudaDeviceGetLimit");
  int dev = -1;
  CK(cudaGetDevice(&dev), "cudaGetDevice");
  CHECK(dev == 0, "device_zero", "%d", dev);
  if (failures) {
    printf("SUMMARY runtime_api: %d failure(s)\n", failures);
    return 1;
  }
  printf("SUMMARY runtime_api: all passed\n");
  return 0;
}
