// dynamic_parallelism: device-side launches (CUDA dynamic parallelism, CDP2), built -rdc=true -lcudadevrt:
// nested launches three deep, launches from many blocks at once, the order of launches into one stream, tail
// launches after their parent's other work, fire-and-forget launches, created streams and events, parameters
// of several sizes and alignments, dynamic shared memory in a child, the device-side error state and device
// queries, device-side copies and fills, and the older cudaGetParameterBuffer/cudaLaunchDevice pair. The _multi
// build (SASS for sm_80, PTX for compute_90) uses the per-thread default stream, so its device code calls the
// _ptsz variants of the launch, copy and event functions.
#include <cstdio>
#include <cuda_runtime.h>

#include "check.h"

struct Results {
  int Nested[3];        // written at depths 1..3
  int ManyParents[256]; // one child per parent block
  int Order[16];        // sequence numbers, by kernel
  int Sequence;         // the next sequence number
  int TailSawChildren;  // what the tail launch saw
  int FireAndForget;
  int Params[8];
  int Shared[64];
  int Errors[8];
  int Queries[8];
  int Legacy;
  int CopySrc[4], CopyDst[8];
  const char *ErrorText[2];
  int *HeapTooLarge;
  int HeapStatus, HeapRead, HeapFreed;
};

__device__ int next(Results *r) { return atomicAdd(&r->Sequence, 1); }

__global__ void grandchild(Results *r) { r->Nested[2] = r->Nested[1] + 1; }
__global__ void child(Results *r) {
  r->Nested[1] = r->Nested[0] + 1;
  grandchild<<<1, 1>>>(r); // sees what this grid wrote before the launch
}
__global__ void nested(Results *r) {
  r->Nested[0] = 1;
  child<<<1, 1>>>(r);
}

__global__ void leaf(Results *r) { r->ManyParents[blockIdx.x] += 1; }
__global__ void leafAt(Results *r, int i) { r->ManyParents[i] += 1 + threadIdx.x * 0; }
__global__ void manyParents(Results *r) {
  if (threadIdx.x == 0)
    leafAt<<<1, 1>>>(r, blockIdx.x);
}

__global__ void record(Results *r, int slot) { r->Order[slot] = next(r); }
__global__ void recordDeep(Results *r, int slot) {
  record<<<1, 1>>>(r, slot + 1); // part of this grid: done before anything after it in its stream
  r->Order[slot] = next(r);
}
__global__ void tail(Results *r) {
  r->Order[7] = next(r);
  r->TailSawChildren = r->Order[1] >= 0 && r->Order[2] >= 0 && r->Order[3] >= 0 && r->Order[4] >= 0;
}
__global__ void fireAndForget(Results *r) { r->FireAndForget = 42; }
__global__ void ordering(Results *r) {
  // Same block, same stream: in order, each complete (with its children) before the next starts.
  tail<<<1, 1, 0, cudaStreamTailLaunch>>>(r);
  recordDeep<<<1, 1>>>(r, 1);
  record<<<1, 1>>>(r, 3);
  cudaStream_t s;
  r->Errors[4] = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  record<<<1, 1, 0, s>>>(r, 4);
  record<<<1, 1, 0, s>>>(r, 5);
  r->Errors[5] = cudaStreamDestroy(s);
  fireAndForget<<<1, 1, 0, cudaStreamFireAndForget>>>(r);
  r->Order[0] = next(r);
}

struct Three {
  float x, y, z;
};
__global__ void params(Results *r, char c, short s, int i, double d, long long ll, Three t, float4 f4, int *p) {
  r->Params[0] = c == -5;
  r->Params[1] = s == -1234;
  r->Params[2] = i == 123456789;
  r->Params[3] = d == 2.5;
  r->Params[4] = ll == -9000000000LL;
  r->Params[5] = t.x == 1.f && t.y == 2.f && t.z == 3.f;
  r->Params[6] = f4.x == 4.f && f4.y == 5.f && f4.z == 6.f && f4.w == 7.f;
  r->Params[7] = p == &r->Legacy;
}
__global__ void launchParams(Results *r) {
  params<<<1, 1>>>(r, -5, -1234, 123456789, 2.5, -9000000000LL, Three{1.f, 2.f, 3.f}, make_float4(4, 5, 6, 7),
                   &r->Legacy);
}

__global__ void sharedChild(Results *r) {
  extern __shared__ int buf[];
  buf[threadIdx.x] = threadIdx.x * 3;
  __syncthreads();
  r->Shared[threadIdx.x] = buf[63 - threadIdx.x];
}
__global__ void launchShared(Results *r) { sharedChild<<<1, 64, 64 * sizeof(int)>>>(r); }

__global__ void never(Results *r) { r->Queries[6] = 1; }
__global__ void errorsAndQueries(Results *r) {
  never<<<1, 2048>>>(r); // more threads than a block may have
  r->Errors[0] = cudaPeekAtLastError();
  r->Errors[1] = cudaGetLastError();
  r->Errors[2] = cudaGetLastError();
  r->Errors[3] = cudaStreamDestroy((cudaStream_t)0x1234); // not a stream
  r->Errors[6] = cudaGetLastError();
  int v = -1;
  r->Queries[0] = cudaGetDevice(&v) == cudaSuccess ? v : -1;
  v = -1;
  r->Queries[1] = cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, 0) == cudaSuccess ? v : -1;
  v = -1;
  r->Queries[2] = cudaGetDeviceCount(&v) == cudaSuccess ? v : -1;
  v = -1;
  r->Queries[3] = cudaRuntimeGetVersion(&v) == cudaSuccess ? v : -1;
  size_t limit = 0;
  r->Queries[4] = cudaDeviceGetLimit(&limit, cudaLimitDevRuntimePendingLaunchCount) == cudaSuccess ? (int)limit : -1;
  cudaEvent_t e;
  cudaStream_t s;
  bool ok = cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess &&
            cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess;
  ok = ok && cudaEventRecord(e, s) == cudaSuccess && cudaStreamWaitEvent(s, e, 0) == cudaSuccess;
#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM // libcudadevrt has no _ptsz variant of it for SASS: nvlink fails
  ok = ok && cudaEventRecordWithFlags(e, s, 0) == cudaSuccess;
#endif
  ok = ok && cudaEventDestroy(e) == cudaSuccess && cudaStreamDestroy(s) == cudaSuccess;
  r->Queries[5] = ok;
}

__global__ void heapReader(Results *r, int *heap) {
  r->HeapRead = heap[999];
  r->HeapFreed = cudaFree(heap);
}

__global__ void copies(Results *r) {
  // In one stream: the fill, then the copy over half of it.
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  r->Errors[7] = cudaMemsetAsync(r->CopyDst, 1, sizeof r->CopyDst, s);
  if (r->Errors[7] == cudaSuccess)
    r->Errors[7] = cudaMemcpyAsync(r->CopyDst, r->CopySrc, sizeof r->CopySrc, cudaMemcpyDeviceToDevice, s);
  cudaStreamDestroy(s);
  // The device heap: memory one grid allocates, another reads and frees.
  int *heap = nullptr;
  r->HeapStatus = cudaMalloc(&heap, 1000 * sizeof(int));
  if (heap) {
    heap[999] = 5;
    heapReader<<<1, 1>>>(r, heap);
  }
  r->Queries[7] = cudaMalloc(&r->HeapTooLarge, size_t(1) << 40);
  r->ErrorText[0] = cudaGetErrorName(cudaErrorInvalidConfiguration);
  r->ErrorText[1] = cudaGetErrorString(cudaErrorInvalidConfiguration);
}

__global__ void legacyChild(Results *r, int v) { r->Legacy = v; }
__global__ void legacyLaunch(Results *r) {
  // The pair nvcc's <<<>>> used before cudaGetParameterBufferV2: the buffer first, the kernel at the launch.
  void *buf = cudaGetParameterBuffer(8, 16);
  if (!buf)
    return;
  *(Results **)buf = r;
  *(int *)((char *)buf + 8) = 77;
  cudaLaunchDevice((void *)legacyChild, buf, dim3(1), dim3(1), 0, 0);
}

int main() {
  setvbuf(stdout, NULL, _IONBF, 0);
  Results *r = nullptr;
  CK(cudaMallocManaged(&r, sizeof(Results)), "malloc");
  if (!r)
    return 1;
  memset(r, 0, sizeof *r);
  for (int &o : r->Order)
    o = -1;
  for (int &e : r->Errors)
    e = -1;
  CK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4096), "set_pending_limit");

  nested<<<1, 1>>>(r);
  manyParents<<<256, 32>>>(r);
  ordering<<<1, 1>>>(r);
  launchParams<<<1, 1>>>(r);
  launchShared<<<1, 1>>>(r);
  errorsAndQueries<<<1, 1>>>(r);
  legacyLaunch<<<1, 1>>>(r);
  for (int i = 0; i < 4; ++i)
    r->CopySrc[i] = 100 + i;
  copies<<<1, 1>>>(r);
  CK(cudaGetLastError(), "launches");
  CK(cudaDeviceSynchronize(), "synchronize");

  CHECK(r->Nested[0] == 1 && r->Nested[1] == 2 && r->Nested[2] == 3, "nested_three_deep", "%d %d %d", r->Nested[0],
        r->Nested[1], r->Nested[2]);
  int many = 0;
  for (int i = 0; i < 256; ++i)
    many += r->ManyParents[i] == 1;
  CHECK(many == 256, "launch_from_every_block", "%d of 256", many);
  // The parent's own work (0) may come before or after its children start; each child grid (1 with its own
  // child 2) ends before the next launch into the stream (3); the created stream's launches keep their order.
  CHECK(r->Order[2] < r->Order[3] && r->Order[1] < r->Order[3], "same_stream_in_order", "%d %d %d", r->Order[1],
        r->Order[2], r->Order[3]);
  CHECK(r->Order[4] >= 0 && r->Order[4] < r->Order[5], "created_stream_in_order", "%d %d", r->Order[4], r->Order[5]);
  int last = 0;
  for (int i = 0; i < 7; ++i)
    last = r->Order[i] > last ? r->Order[i] : last;
  CHECK(r->TailSawChildren == 1 && r->Order[7] > last, "tail_launch_last", "saw %d, at %d after %d", r->TailSawChildren,
        r->Order[7], last);
  CHECK(r->FireAndForget == 42, "fire_and_forget", "%d", r->FireAndForget);
  CHECK(r->Errors[4] == cudaSuccess && r->Errors[5] == cudaSuccess, "device_streams", "%d %d", r->Errors[4],
        r->Errors[5]);
  int params = 0;
  for (int p : r->Params)
    params += p;
  CHECK(params == 8, "parameters", "%d %d %d %d %d %d %d %d", r->Params[0], r->Params[1], r->Params[2], r->Params[3],
        r->Params[4], r->Params[5], r->Params[6], r->Params[7]);
  int shared = 0;
  for (int i = 0; i < 64; ++i)
    shared += r->Shared[i] == (63 - i) * 3;
  CHECK(shared == 64, "child_dynamic_shared_memory", "%d of 64", shared);
  printf("OBSERVED device-side launch of 2048 threads -> %d, last error %d then %d\n", r->Errors[0], r->Errors[1],
         r->Errors[2]);
  CHECK(r->Errors[0] == cudaErrorInvalidConfiguration && r->Errors[1] == cudaErrorInvalidConfiguration &&
            r->Errors[2] == cudaSuccess && r->Queries[6] == 0,
        "device_last_error", "%d %d %d %d", r->Errors[0], r->Errors[1], r->Errors[2], r->Queries[6]);
  CHECK(r->Errors[3] == cudaErrorInvalidResourceHandle && r->Errors[6] == cudaErrorInvalidResourceHandle,
        "bad_stream_handle", "%d %d", r->Errors[3], r->Errors[6]);
  CHECK(r->Queries[0] == 0 && r->Queries[1] == 1024 && r->Queries[2] == 1 && r->Queries[3] >= 13000, "device_queries",
        "%d %d %d %d", r->Queries[0], r->Queries[1], r->Queries[2], r->Queries[3]);
  CHECK(r->Queries[4] == 4096, "device_limit", "%d", r->Queries[4]);
  CHECK(r->Queries[5] == 1, "device_events", "%d", r->Queries[5]);
  CHECK(r->Legacy == 77, "get_parameter_buffer_launch_device", "%d", r->Legacy);
  int copied = 0;
  for (int i = 0; i < 8; ++i)
    copied += r->CopyDst[i] == (i < 4 ? 100 + i : 0x01010101);
  CHECK(r->Errors[7] == cudaSuccess && copied == 8, "device_memset_then_memcpy", "%d, %d of 8", r->Errors[7], copied);
  CHECK(r->HeapStatus == cudaSuccess && r->HeapRead == 5 && r->HeapFreed == cudaSuccess, "device_heap", "%d %d %d",
        r->HeapStatus, r->HeapRead, r->HeapFreed);
  CHECK(r->Queries[7] == cudaErrorMemoryAllocation && !r->HeapTooLarge, "device_heap_limit", "%d", r->Queries[7]);
  printf("OBSERVED device-side cudaGetErrorName/String(9): %s: %s\n", r->ErrorText[0], r->ErrorText[1]);
  CK(cudaFree(r), "free");
  if (failures) {
    printf("SUMMARY dynamic_parallelism: %d failure(s)\n", failures);
    return 1;
  }
  printf("SUMMARY dynamic_parallelism: all passed\n");
  return 0;
}
