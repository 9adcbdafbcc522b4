// CUDA graphs and stream capture through the runtime: a graph built node by node (memset, kernel, copy, host
// node) and one captured over two streams joined by events, each launched many times; kernel node updates in
// an instantiated graph (cudaGraphExecKernelNodeSetParams, cudaGraphExecUpdate); graph memory nodes from
// cudaMallocAsync/cudaFreeAsync in a capture; the graph queries; and the errors NVIDIA's runtime gives for
// calls a capture forbids, with the capture they invalidate.
#include "check.h"

#include <vector>

__global__ void axpb(int *x, int a, int b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = a * x[i] + b;
}

__global__ void add(const int *x, const int *y, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = x[i] + y[i];
}

static void CUDART_CB countCalls(void *p) { ++*static_cast<int *>(p); }

constexpr int N = 1000;
constexpr int Launches = 100;

static bool all(const std::vector<int> &v, int value) {
  for (int x : v)
    if (x != value)
      return false;
  return true;
}

/// memset(x, 0) -> x = 2x + 3 -> copy x to the host -> host node, built node by node.
static void explicitGraph(int *d) {
  std::vector<int> h(N, -1);
  int calls = 0;
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0), "cudaGraphCreate");
  cudaGraphNode_t memset, kernel, copy, host;
  cudaMemsetParams mp = {};
  mp.dst = d, mp.value = 0, mp.elementSize = 4, mp.width = N, mp.height = 1;
  CK(cudaGraphAddMemsetNode(&memset, g, nullptr, 0, &mp), "cudaGraphAddMemsetNode");
  int n = N, a = 2, b = 3;
  void *args[] = {&d, &a, &b, &n};
  cudaKernelNodeParams kp = {};
  kp.func = (void *)axpb, kp.gridDim = dim3((N + 127) / 128), kp.blockDim = dim3(128), kp.kernelParams = args;
  CK(cudaGraphAddKernelNode(&kernel, g, &memset, 1, &kp), "cudaGraphAddKernelNode");
  CK(cudaGraphAddMemcpyNode1D(&copy, g, &kernel, 1, h.data(), d, N * sizeof(int), cudaMemcpyDeviceToHost),
     "cudaGraphAddMemcpyNode1D");
  cudaHostNodeParams hp = {countCalls, &calls};
  CK(cudaGraphAddHostNode(&host, g, &copy, 1, &hp), "cudaGraphAddHostNode");

  size_t count = 0;
  CK(cudaGraphGetNodes(g, nullptr, &count), "cudaGraphGetNodes");
  CHECK(count == 4, "graph_node_count", "%zu nodes", count);
  cudaGraphNode_t roots[4];
  count = 4;
  CK(cudaGraphGetRootNodes(g, roots, &count), "cudaGraphGetRootNodes");
  CHECK(count == 1 && roots[0] == memset, "graph_root_nodes", "%zu roots", count);
  cudaGraphNode_t from[4], to[4];
  count = 4;
  CK(cudaGraphGetEdges(g, from, to, nullptr, &count), "cudaGraphGetEdges");
  CHECK(count == 3 && from[0] == memset && to[0] == kernel, "graph_edges", "%zu edges", count);
  cudaGraphNodeType type;
  CK(cudaGraphNodeGetType(kernel, &type), "cudaGraphNodeGetType");
  CHECK(type == cudaGraphNodeTypeKernel, "graph_node_type", "type %d", (int)type);
  cudaKernelNodeParams back = {};
  CK(cudaGraphKernelNodeGetParams(kernel, &back), "cudaGraphKernelNodeGetParams");
  CHECK(back.func == (void *)axpb && back.blockDim.x == 128 && *(int *)back.kernelParams[1] == 2, "kernel_node_params",
        "func %p block %u", back.func, back.blockDim.x);
  CHECK(cudaGraphAddDependencies(g, &memset, &kernel, nullptr, 1) == cudaErrorInvalidValue,
        "cudaGraphAddDependencies_duplicate", "an existing edge was added again");
  cudaGetLastError();

  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, g, 0), "cudaGraphInstantiate");
  cudaStream_t s;
  CK(cudaStreamCreate(&s), "cudaStreamCreate");
  cudaError_t launched = cudaSuccess;
  for (int i = 0; i < Launches && launched == cudaSuccess; ++i)
    launched = cudaGraphLaunch(exec, s);
  CK(launched, "cudaGraphLaunch");
  CK(cudaStreamSynchronize(s), "cudaStreamSynchronize_graph");
  CHECK(all(h, 3) && calls == Launches, "explicit_graph_results", "h[0]=%d calls=%d", h[0], calls);

  // The exec's kernel node takes new arguments; the graph's own node keeps its old ones.
  a = 5, b = 7;
  CK(cudaGraphExecKernelNodeSetParams(exec, kernel, &kp), "cudaGraphExecKernelNodeSetParams");
  CK(cudaGraphLaunch(exec, s), "cudaGraphLaunch_updated");
  CK(cudaStreamSynchronize(s), "cudaStreamSynchronize_updated");
  CHECK(all(h, 7), "exec_kernel_node_updated", "h[0]=%d", h[0]);

  // A clone instantiates independently.
  cudaGraph_t clone;
  CK(cudaGraphClone(&clone, g), "cudaGraphClone");
  cudaGraphNode_t cloned;
  CK(cudaGraphNodeFindInClone(&cloned, kernel, clone), "cudaGraphNodeFindInClone");
  cudaGraphExec_t cloneExec;
  CK(cudaGraphInstantiate(&cloneExec, clone, 0), "cudaGraphInstantiate_clone");
  CK(cudaGraphLaunch(cloneExec, s), "cudaGraphLaunch_clone");
  CK(cudaStreamSynchronize(s), "cudaStreamSynchronize_clone");
  CHECK(all(h, 3), "clone_results", "h[0]=%d", h[0]);

  CK(cudaGraphExecDestroy(cloneExec), "cudaGraphExecDestroy_clone");
  CK(cudaGraphDestroy(clone), "cudaGraphDestroy_clone");
  CK(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
  CK(cudaGraphDestroy(g), "cudaGraphDestroy");
  CK(cudaStreamDestroy(s), "cudaStreamDestroy");
}

/// Captures: s1 forks s2 through an event, each scales its own array, s1 joins s2 and adds the two.
static cudaGraph_t captureForkJoin(cudaStream_t s1, cudaStream_t s2, int *x, int *y, int *sum, int scale, int *host) {
  cudaEvent_t fork, join;
  cudaEventCreateWithFlags(&fork, cudaEventDisableTiming);
  cudaEventCreateWithFlags(&join, cudaEventDisableTiming);
  cudaGraph_t g = nullptr;
  CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  cudaEventRecord(fork, s1);
  cudaStreamWaitEvent(s2, fork, 0);
  int blocks = (N + 127) / 128;
  cudaMemsetAsync(x, 0, N * sizeof(int), s1);
  axpb<<<blocks, 128, 0, s1>>>(x, 1, scale, N);
  cudaMemsetAsync(y, 0, N * sizeof(int), s2);
  axpb<<<blocks, 128, 0, s2>>>(y, 1, 10 * scale, N);
  cudaEventRecord(join, s2);
  cudaStreamWaitEvent(s1, join, 0);
  add<<<blocks, 128, 0, s1>>>(x, y, sum, N);
  cudaMemcpyAsync(host, sum, N * sizeof(int), cudaMemcpyDeviceToHost, s1);
  CK(cudaStreamEndCapture(s1, &g), "cudaStreamEndCapture");
  cudaEventDestroy(fork);
  cudaEventDestroy(join);
  return g;
}

static void capturedGraph(int *x, int *y, int *sum) {
  cudaStream_t s1, s2;
  cudaStreamCreate(&s1);
  cudaStreamCreate(&s2);
  std::vector<int> h(N, -1);

  cudaStreamCaptureStatus status;
  CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture_status");
  CK(cudaStreamIsCapturing(s1, &status), "cudaStreamIsCapturing");
  CHECK(status == cudaStreamCaptureStatusActive, "capturing_active", "status %d", (int)status);
  unsigned long long id = 0;
  cudaGraph_t being = nullptr;
  size_t deps = 1;
  CK(cudaStreamGetCaptureInfo(s1, &status, &id, &being, nullptr, nullptr, &deps), "cudaStreamGetCaptureInfo");
  CHECK(id != 0 && being && deps == 0, "capture_info", "id %llu deps %zu", id, deps);
  axpb<<<1, 1, 0, s1>>>(x, 1, 1, 1);
  const cudaGraphNode_t *depNodes = nullptr;
  CK(cudaStreamGetCaptureInfo(s1, &status, nullptr, nullptr, &depNodes, nullptr, &deps),
     "cudaStreamGetCaptureInfo_deps");
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  if (deps == 1)
    cudaGraphNodeGetType(depNodes[0], &type);
  CHECK(deps == 1 && type == cudaGraphNodeTypeKernel, "capture_dependencies", "%zu deps", deps);
  cudaGraph_t g;
  CK(cudaStreamEndCapture(s1, &g), "cudaStreamEndCapture_status");
  CK(cudaStreamIsCapturing(s1, &status), "cudaStreamIsCapturing_after");
  CHECK(status == cudaStreamCaptureStatusNone, "capturing_none", "status %d", (int)status);
  cudaGraphDestroy(g);

  g = captureForkJoin(s1, s2, x, y, sum, 1, h.data());
  size_t count = 0;
  cudaGraphGetNodes(g, nullptr, &count);
  CHECK(count == 6, "captured_node_count", "%zu nodes", count);
  count = 0;
  cudaGraphGetRootNodes(g, nullptr, &count);
  CHECK(count == 2, "captured_root_count", "%zu roots", count);
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, g, 0), "cudaGraphInstantiate_captured");
  for (int i = 0; i < Launches; ++i) {
    std::fill(h.begin(), h.end(), -1);
    cudaGraphLaunch(exec, s1);
  }
  CK(cudaStreamSynchronize(s1), "cudaStreamSynchronize_captured");
  CHECK(all(h, 11), "captured_graph_results", "h[0]=%d", h[0]);

  // The same code captured with other arguments updates the exec in place.
  cudaGraph_t g3 = captureForkJoin(s1, s2, x, y, sum, 3, h.data());
  cudaGraphExecUpdateResultInfo info;
  CK(cudaGraphExecUpdate(exec, g3, &info), "cudaGraphExecUpdate");
  CHECK(info.result == cudaGraphExecUpdateSuccess, "exec_update_result", "result %d", (int)info.result);
  cudaGraphLaunch(exec, s1);
  cudaStreamSynchronize(s1);
  CHECK(all(h, 33), "exec_update_results", "h[0]=%d", h[0]);

  // Another topology cannot update it.
  cudaGraph_t other;
  cudaGraphCreate(&other, 0);
  cudaGraphNode_t empty;
  cudaGraphAddEmptyNode(&empty, other, nullptr, 0);
  CHECK(cudaGraphExecUpdate(exec, other, &info) == cudaErrorGraphExecUpdateFailure &&
            info.result == cudaGraphExecUpdateErrorTopologyChanged,
        "exec_update_topology_changed", "result %d", (int)info.result);
  cudaGetLastError();

  // A graph launched into a capture: NVIDIA's runtime refuses it and invalidates the capture.
  cudaGraph_t outer = nullptr;
  CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture_child");
  CHECK(cudaGraphLaunch(exec, s1) == cudaErrorStreamCaptureUnsupported, "cudaGraphLaunch_captured",
        "a graph launch into a capture was accepted");
  CHECK(cudaStreamEndCapture(s1, &outer) == cudaErrorStreamCaptureInvalidated && !outer, "cudaStreamEndCapture_child",
        "the capture was not invalidated");
  cudaGetLastError();

  cudaGraphDestroy(other);
  cudaGraphDestroy(g3);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

/// cudaMallocAsync/cudaFreeAsync in a capture become allocation and free nodes: the memory has the same
/// address at every launch.
static void memoryNodes() {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  std::vector<int> h(N, -1);
  int *tmp = nullptr;
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture_memory");
  CK(cudaMallocAsync(&tmp, N * sizeof(int), s), "cudaMallocAsync_captured");
  cudaMemsetAsync(tmp, 0, N * sizeof(int), s);
  axpb<<<(N + 127) / 128, 128, 0, s>>>(tmp, 1, 42, N);
  cudaMemcpyAsync(h.data(), tmp, N * sizeof(int), cudaMemcpyDeviceToHost, s);
  CK(cudaFreeAsync(tmp, s), "cudaFreeAsync_captured");
  CK(cudaStreamEndCapture(s, &g), "cudaStreamEndCapture_memory");
  cudaGraphNode_t nodes[5];
  size_t count = 5;
  cudaGraphGetNodes(g, nodes, &count);
  cudaGraphNodeType first, last;
  cudaGraphNodeGetType(nodes[0], &first);
  cudaGraphNodeGetType(nodes[count - 1], &last);
  CHECK(count == 5 && first == cudaGraphNodeTypeMemAlloc && last == cudaGraphNodeTypeMemFree, "memory_nodes",
        "%zu nodes", count);
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, g, 0), "cudaGraphInstantiate_memory");
  for (int i = 0; i < 3; ++i)
    cudaGraphLaunch(exec, s);
  CK(cudaStreamSynchronize(s), "cudaStreamSynchronize_memory");
  CHECK(all(h, 42), "memory_node_results", "h[0]=%d", h[0]);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  CK(cudaDeviceGraphMemTrim(0), "cudaDeviceGraphMemTrim");
  cudaStreamDestroy(s);
}

/// What a capture forbids: the call fails with NVIDIA's code and the capture ends invalidated.
static void captureErrors(int *d) {
  cudaStream_t s1, s2;
  cudaStreamCreate(&s1);
  cudaStreamCreate(&s2);
  cudaGraph_t g = nullptr;
  std::vector<int> h(N);

  CHECK(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported,
        "capture_legacy_stream", "the legacy stream began a capture");
  CHECK(cudaStreamEndCapture(s1, &g) == cudaErrorIllegalState, "end_capture_not_capturing",
        "a stream that does not capture ended one");
  cudaGetLastError();

  cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
  CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal) == cudaErrorIllegalState, "capture_twice",
        "a capturing stream began another capture");
  CHECK(cudaStreamSynchronize(s1) == cudaErrorStreamCaptureUnsupported, "synchronize_capturing",
        "cudaStreamSynchronize on a capturing stream");
  cudaStreamCaptureStatus status;
  cudaStreamIsCapturing(s1, &status);
  CHECK(status == cudaStreamCaptureStatusInvalidated, "capture_invalidated", "status %d", (int)status);
  CHECK(cudaStreamEndCapture(s1, &g) == cudaErrorStreamCaptureInvalidated && !g, "end_invalidated_capture", "graph %p",
        (void *)g);
  cudaGetLastError();

  // A synchronous copy is no "potentially unsafe" call (an H100 runs it during a global-mode capture of a
  // non-blocking stream), but on the legacy stream it would wait for s1, a blocking stream: _IMPLICIT. cudaMalloc
  // is potentially unsafe. Either invalidates the capture.
  cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
  CHECK(cudaMemcpy(h.data(), d, sizeof(int), cudaMemcpyDeviceToHost) == cudaErrorStreamCaptureImplicit,
        "sync_memcpy_during_capture", "a synchronous copy on the legacy stream ran while a blocking stream captured");
  CHECK(cudaStreamEndCapture(s1, &g) == cudaErrorStreamCaptureInvalidated, "end_after_sync_memcpy",
        "the capture was not invalidated");
  cudaGetLastError();
  cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
  int *extra = nullptr;
  CHECK(cudaMalloc(&extra, 64) == cudaErrorStreamCaptureUnsupported, "malloc_during_capture",
        "cudaMalloc ran during a global capture");
  CHECK(cudaStreamEndCapture(s1, &g) == cudaErrorStreamCaptureInvalidated, "end_after_malloc",
        "the capture was not invalidated");
  cudaGetLastError();

  // Relaxed mode allows the synchronous copy (on the legacy stream, which a non-blocking stream does not wait
  // for).
  cudaStream_t nb;
  cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking);
  cudaStreamBeginCapture(nb, cudaStreamCaptureModeRelaxed);
  CK(cudaMemcpy(h.data(), d, sizeof(int), cudaMemcpyDeviceToHost), "sync_memcpy_relaxed_capture");
  CK(cudaStreamEndCapture(nb, &g), "end_relaxed_capture");
  cudaGraphDestroy(g);
  cudaStreamDestroy(nb);

  // A forked stream not joined back.
  cudaEvent_t e;
  cudaEventCreate(&e);
  cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
  cudaEventRecord(e, s1);
  cudaStreamWaitEvent(s2, e, 0);
  axpb<<<1, 32, 0, s2>>>(d, 1, 1, 1);
  CHECK(cudaEventQuery(e) == cudaErrorCapturedEvent, "query_captured_event", "a captured event was queried");
  CHECK(cudaStreamEndCapture(s1, &g) == cudaErrorStreamCaptureUnjoined, "end_unjoined_capture",
        "a capture with an unjoined stream ended");
  cudaStreamIsCapturing(s2, &status);
  CHECK(status == cudaStreamCaptureStatusNone, "unjoined_stream_released", "status %d", (int)status);
  cudaGetLastError();

  // A blocking stream's capture and the legacy stream.
  cudaStreamBeginCapture(s1, cudaStreamCaptureModeRelaxed);
  CHECK(cudaMemsetAsync(d, 0, sizeof(int), 0) == cudaErrorStreamCaptureImplicit, "legacy_stream_implicit",
        "the legacy stream ran work while a blocking stream captured");
  CHECK(cudaStreamEndCapture(s1, &g) == cudaErrorStreamCaptureInvalidated, "end_after_implicit",
        "the capture was not invalidated");
  cudaGetLastError();
  CK(cudaDeviceSynchronize(), "cudaDeviceSynchronize_after_errors");

  cudaEventDestroy(e);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

int main() {
  int *x, *y, *sum;
  cudaMalloc(&x, N * sizeof(int));
  cudaMalloc(&y, N * sizeof(int));
  cudaMalloc(&sum, N * sizeof(int));
  explicitGraph(x);
  capturedGraph(x, y, sum);
  memoryNodes();
  captureErrors(x);
  cudaFree(x);
  cudaFree(y);
  cudaFree(sum);
  printf("%s\n", failures ? "FAILED" : "ALL PASSED");
  return failures ? 1 : 0;
}
