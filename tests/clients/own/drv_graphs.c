/* CUDA graphs through the driver API alone (no nvcc): a graph built node by node and one captured over two
 * streams joined by events, each launched many times; a kernel node updated in the instantiated graph; the
 * errors of illegal calls during a capture. Prints one PASS/FAIL line per check. */
#include <cuda.h>

#include <stdio.h>
#include <string.h>

static const char *Ptx = ".version 7.5\n"
                         ".target sm_75\n"
                         ".address_size 64\n"
                         ".visible .entry axpb(.param .u64 x, .param .u32 a, .param .u32 b, .param .u32 n)\n"
                         "{\n"
                         "  .reg .pred %p<2>;\n"
                         "  .reg .b32 %r<10>;\n"
                         "  .reg .b64 %rd<5>;\n"
                         "  ld.param.u64 %rd1, [x];\n"
                         "  ld.param.u32 %r1, [a];\n"
                         "  ld.param.u32 %r2, [b];\n"
                         "  ld.param.u32 %r3, [n];\n"
                         "  mov.u32 %r4, %ctaid.x;\n"
                         "  mov.u32 %r5, %ntid.x;\n"
                         "  mov.u32 %r6, %tid.x;\n"
                         "  mad.lo.s32 %r7, %r4, %r5, %r6;\n"
                         "  setp.ge.u32 %p1, %r7, %r3;\n"
                         "  @%p1 bra DONE;\n"
                         "  cvta.to.global.u64 %rd2, %rd1;\n"
                         "  mul.wide.u32 %rd3, %r7, 4;\n"
                         "  add.s64 %rd4, %rd2, %rd3;\n"
                         "  ld.global.u32 %r8, [%rd4];\n"
                         "  mad.lo.s32 %r9, %r8, %r1, %r2;\n"
                         "  st.global.u32 [%rd4], %r9;\n"
                         "DONE:\n"
                         "  ret;\n"
                         "}\n";

#define N 1000
#define LAUNCHES 100

static int failures = 0;
static void check(int ok, const char *name, CUresult r) {
  if (ok) {
    printf("PASS %s\n", name);
  } else {
    const char *s = "?";
    cuGetErrorName(r, &s);
    printf("FAIL %s: %s\n", name, s);
    ++failures;
  }
}
#define CK(call, name)                                                                                                 \
  do {                                                                                                                 \
    CUresult r_ = (call);                                                                                              \
    check(r_ == CUDA_SUCCESS, name, r_);                                                                               \
  } while (0)
#define EXPECT(call, code, name)                                                                                       \
  do {                                                                                                                 \
    CUresult r_ = (call);                                                                                              \
    check(r_ == (code), name, r_);                                                                                     \
  } while (0)

static void CUDA_CB countCalls(void *p) { ++*(int *)p; }

static int all(const int *v, int value) {
  for (int i = 0; i < N; ++i)
    if (v[i] != value)
      return 0;
  return 1;
}

static CUDA_KERNEL_NODE_PARAMS kernelParams(CUfunction f, void **args) {
  CUDA_KERNEL_NODE_PARAMS p;
  memset(&p, 0, sizeof p);
  p.func = f;
  p.gridDimX = (N + 127) / 128, p.gridDimY = 1, p.gridDimZ = 1;
  p.blockDimX = 128, p.blockDimY = 1, p.blockDimZ = 1;
  p.kernelParams = args;
  return p;
}

int main(void) {
  static int h[N];
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction f;
  CUdeviceptr x, y;
  CUstream s1, s2;
  CUevent fork, join;
  cuInit(0);
  cuDeviceGet(&dev, 0);
  cuCtxCreate(&ctx, NULL, 0, dev);
  CK(cuModuleLoadData(&mod, Ptx), "cuModuleLoadData");
  CK(cuModuleGetFunction(&f, mod, "axpb"), "cuModuleGetFunction");
  cuMemAlloc(&x, N * sizeof(int));
  cuMemAlloc(&y, N * sizeof(int));
  cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
  cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING);
  cuEventCreate(&join, CU_EVENT_DISABLE_TIMING);

  /* memset(x, 0) -> x = 2x + 3 -> copy x to h -> host node */
  CUgraph g;
  CUgraphNode memsetNode, kernelNode, copyNode, hostNode;
  CK(cuGraphCreate(&g, 0), "cuGraphCreate");
  CUDA_MEMSET_NODE_PARAMS mp;
  memset(&mp, 0, sizeof mp);
  mp.dst = x, mp.value = 0, mp.elementSize = 4, mp.width = N, mp.height = 1;
  CK(cuGraphAddMemsetNode(&memsetNode, g, NULL, 0, &mp, ctx), "cuGraphAddMemsetNode");
  unsigned n = N;
  int a = 2, b = 3;
  void *args[] = {&x, &a, &b, &n};
  CUDA_KERNEL_NODE_PARAMS kp = kernelParams(f, args);
  CK(cuGraphAddKernelNode(&kernelNode, g, &memsetNode, 1, &kp), "cuGraphAddKernelNode");
  CUDA_MEMCPY3D cp;
  memset(&cp, 0, sizeof cp);
  cp.srcMemoryType = CU_MEMORYTYPE_DEVICE, cp.srcDevice = x;
  cp.dstMemoryType = CU_MEMORYTYPE_HOST, cp.dstHost = h;
  cp.WidthInBytes = N * sizeof(int), cp.Height = 1, cp.Depth = 1;
  CK(cuGraphAddMemcpyNode(&copyNode, g, &kernelNode, 1, &cp, ctx), "cuGraphAddMemcpyNode");
  int calls = 0;
  CUDA_HOST_NODE_PARAMS hp = {countCalls, &calls};
  CK(cuGraphAddHostNode(&hostNode, g, &copyNode, 1, &hp), "cuGraphAddHostNode");
  size_t count = 0;
  CK(cuGraphGetNodes(g, NULL, &count), "cuGraphGetNodes");
  check(count == 4, "graph_node_count", CUDA_SUCCESS);
  CUgraphNodeType type;
  CK(cuGraphNodeGetType(copyNode, &type), "cuGraphNodeGetType");
  check(type == CU_GRAPH_NODE_TYPE_MEMCPY, "graph_node_type", CUDA_SUCCESS);
  EXPECT(cuGraphAddKernelNode(&kernelNode, g, &kernelNode, 1, NULL), CUDA_ERROR_INVALID_VALUE,
         "cuGraphAddKernelNode_null_params");

  CUgraphExec exec;
  CK(cuGraphInstantiate(&exec, g, 0), "cuGraphInstantiate");
  for (int i = 0; i < LAUNCHES; ++i)
    cuGraphLaunch(exec, s1);
  CK(cuStreamSynchronize(s1), "cuStreamSynchronize_graph");
  check(all(h, 3) && calls == LAUNCHES, "explicit_graph_results", CUDA_SUCCESS);
  a = 5, b = 7;
  CK(cuGraphExecKernelNodeSetParams(exec, kernelNode, &kp), "cuGraphExecKernelNodeSetParams");
  CK(cuGraphLaunch(exec, s1), "cuGraphLaunch_updated");
  cuStreamSynchronize(s1);
  check(all(h, 7), "exec_kernel_node_updated", CUDA_SUCCESS);
  cuGraphExecDestroy(exec);
  cuGraphDestroy(g);

  /* s1 forks s2; x = 3x + 1 on s1 and y = 3y + 2 on s2 after memsets; s1 joins s2 and copies both back. */
  static int hy[N];
  CUgraph captured;
  CK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
  CUstreamCaptureStatus status;
  CK(cuStreamIsCapturing(s1, &status), "cuStreamIsCapturing");
  check(status == CU_STREAM_CAPTURE_STATUS_ACTIVE, "capturing_active", CUDA_SUCCESS);
  cuEventRecord(fork, s1);
  cuStreamWaitEvent(s2, fork, 0);
  a = 3, b = 1;
  cuMemsetD32Async(x, 0, N, s1);
  cuLaunchKernel(f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, s1, args, NULL);
  int c = 3, d = 2;
  void *args2[] = {&y, &c, &d, &n};
  cuMemsetD32Async(y, 0, N, s2);
  cuLaunchKernel(f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, s2, args2, NULL);
  cuMemcpyDtoHAsync(hy, y, N * sizeof(int), s2);
  cuEventRecord(join, s2);
  cuStreamWaitEvent(s1, join, 0);
  cuMemcpyDtoHAsync(h, x, N * sizeof(int), s1);
  CK(cuStreamEndCapture(s1, &captured), "cuStreamEndCapture");
  count = 0;
  cuGraphGetNodes(captured, NULL, &count);
  check(count == 6, "captured_node_count", CUDA_SUCCESS);
  CK(cuGraphInstantiate(&exec, captured, 0), "cuGraphInstantiate_captured");
  for (int i = 0; i < LAUNCHES; ++i)
    cuGraphLaunch(exec, s2);
  CK(cuStreamSynchronize(s2), "cuStreamSynchronize_captured");
  check(all(h, 1) && all(hy, 2), "captured_graph_results", CUDA_SUCCESS);
  cuGraphExecDestroy(exec);
  cuGraphDestroy(captured);

  /* An event record node whose event the exec replaces: only the new event gets recorded. */
  CUevent first, second;
  cuEventCreate(&first, 0);
  cuEventCreate(&second, 0);
  CUgraph eg;
  CUgraphNode recordNode;
  cuGraphCreate(&eg, 0);
  CK(cuGraphAddEventRecordNode(&recordNode, eg, NULL, 0, first), "cuGraphAddEventRecordNode");
  CK(cuGraphInstantiate(&exec, eg, 0), "cuGraphInstantiate_event");
  CK(cuGraphExecEventRecordNodeSetEvent(exec, recordNode, second), "cuGraphExecEventRecordNodeSetEvent");
  CK(cuGraphLaunch(exec, s1), "cuGraphLaunch_event");
  cuStreamSynchronize(s1);
  float ms = -1;
  CK(cuEventElapsedTime(&ms, second, second), "exec_event_recorded");
  EXPECT(cuEventElapsedTime(&ms, first, first), CUDA_ERROR_INVALID_HANDLE, "graph_event_not_recorded");
  cuGraphExecDestroy(exec);
  cuGraphDestroy(eg);
  cuEventDestroy(first);
  cuEventDestroy(second);

  /* What a capture forbids. */
  cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL);
  EXPECT(cuStreamSynchronize(s1), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "synchronize_capturing_stream");
  EXPECT(cuStreamEndCapture(s1, &captured), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "end_invalidated_capture");
  cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL); /* a synchronous copy is no unsafe call; an alloc is */
  EXPECT(cuMemcpyDtoH(h, x, sizeof(int)), CUDA_SUCCESS, "sync_copy_during_capture");
  CK(cuStreamEndCapture(s1, &captured), "end_after_sync_copy");
  cuGraphDestroy(captured);
  cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL);
  CUdeviceptr z = 0;
  EXPECT(cuMemAlloc(&z, 64), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "alloc_during_capture");
  EXPECT(cuStreamEndCapture(s1, &captured), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "end_after_alloc");
  EXPECT(cuStreamEndCapture(s1, &captured), CUDA_ERROR_ILLEGAL_STATE, "end_not_capturing");
  EXPECT(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
         "capture_legacy_stream");

  /* The per-thread default stream is a stream of its own, which captures (as on NVIDIA's driver). */
  a = 5, b = 0;
  CK(cuStreamBeginCapture(CU_STREAM_PER_THREAD, CU_STREAM_CAPTURE_MODE_RELAXED), "capture_per_thread_stream");
  cuLaunchKernel(f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, CU_STREAM_PER_THREAD, args, NULL);
  cuMemcpyDtoHAsync(h, x, N * sizeof(int), CU_STREAM_PER_THREAD);
  CK(cuStreamEndCapture(CU_STREAM_PER_THREAD, &captured), "end_capture_per_thread_stream");
  count = 0;
  cuGraphGetNodes(captured, NULL, &count);
  check(count == 2, "per_thread_captured_node_count", CUDA_SUCCESS);
  CK(cuGraphInstantiate(&exec, captured, 0), "cuGraphInstantiate_per_thread");
  CK(cuMemsetD32(x, 1, N), "cuMemsetD32_legacy"); /* the legacy stream's work comes first */
  CK(cuGraphLaunch(exec, CU_STREAM_PER_THREAD), "cuGraphLaunch_per_thread");
  CK(cuStreamSynchronize(CU_STREAM_PER_THREAD), "cuStreamSynchronize_per_thread");
  check(all(h, 5), "per_thread_graph_results", CUDA_SUCCESS);
  cuGraphExecDestroy(exec);
  cuGraphDestroy(captured);
  CK(cuCtxSynchronize(), "cuCtxSynchronize");

  cuEventDestroy(fork);
  cuEventDestroy(join);
  cuStreamDestroy(s1);
  cuStreamDestroy(s2);
  cuMemFree(x);
  cuMemFree(y);
  cuCtxDestroy(ctx);
  printf("%s\n", failures ? "FAILED" : "ALL PASSED");
  return failures ? 1 : 0;
}
