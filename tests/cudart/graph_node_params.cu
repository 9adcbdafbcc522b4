// Graph nodes through cudaGraphNodeParams: memory alloc and free nodes made by cudaGraphAddNode (the alloc
// node hands its address back in the struct), cudaGraphNodeSetParams and cudaGraphExecNodeSetParams on every
// node type, and what NVIDIA's runtime answers to changes a graph or an exec cannot take (the VAL lines are an
// H200's answers).
#include "check.h"

#include <vector>

__global__ void fill(int *x, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = v + i;
}

static void CUDART_CB countCalls(void *p) { ++*static_cast<int *>(p); }
static void CUDART_CB countTwice(void *p) { *static_cast<int *>(p) += 2; }

constexpr int N = 256;

static void val(const char *name, cudaError_t e) {
  printf("VAL %s %s\n", name, cudaGetErrorName(e));
  cudaGetLastError();
}

static cudaGraphNodeParams kernelParams(void **args) {
  cudaGraphNodeParams p = {cudaGraphNodeTypeKernel};
  p.kernel.func = (void *)fill, p.kernel.gridDim = dim3(N / 64), p.kernel.blockDim = dim3(64);
  p.kernel.kernelParams = args;
  return p;
}

static cudaGraphNodeParams allocParams(size_t bytes) {
  cudaGraphNodeParams p = {cudaGraphNodeTypeMemAlloc};
  p.alloc.poolProps.allocType = cudaMemAllocationTypePinned;
  p.alloc.poolProps.location = {cudaMemLocationTypeDevice, 0};
  p.alloc.bytesize = bytes;
  return p;
}

static cudaGraphNodeParams freeParams(void *dptr) {
  cudaGraphNodeParams p = {cudaGraphNodeTypeMemFree};
  p.free.dptr = dptr;
  return p;
}

static cudaGraphNodeParams memcpyParams(void *dst, void *src, size_t bytes) {
  cudaGraphNodeParams p = {cudaGraphNodeTypeMemcpy};
  p.memcpy.copyParams.srcPtr = make_cudaPitchedPtr(src, bytes, bytes, 1);
  p.memcpy.copyParams.dstPtr = make_cudaPitchedPtr(dst, bytes, bytes, 1);
  p.memcpy.copyParams.extent = make_cudaExtent(bytes, 1, 1);
  p.memcpy.copyParams.kind = cudaMemcpyDefault;
  return p;
}

static cudaGraphNodeParams memsetParams(void *dst, int value) {
  cudaGraphNodeParams p = {cudaGraphNodeTypeMemset};
  p.memset.dst = dst, p.memset.value = value, p.memset.elementSize = 4, p.memset.width = N, p.memset.height = 1;
  return p;
}

static bool isSequence(const std::vector<int> &h, int first) {
  for (int i = 0; i < N; ++i)
    if (h[i] != first + i)
      return false;
  return true;
}

/// alloc -> fill(v) -> copy to the host -> free, all by cudaGraphAddNode, launched three times.
static void allocFreeNodes() {
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaGraphNode_t alloc, kernel, copy, release;
  cudaGraphNodeParams a = allocParams(N * sizeof(int));
  CK(cudaGraphAddNode(&alloc, g, nullptr, nullptr, 0, &a), "cudaGraphAddNode_mem_alloc");
  void *d = a.alloc.dptr;
  CHECK(d != nullptr, "mem_alloc_dptr_out", "no address");
  cudaMemAllocNodeParams back = {};
  CK(cudaGraphMemAllocNodeGetParams(alloc, &back), "cudaGraphMemAllocNodeGetParams");
  CHECK(back.dptr == d && back.bytesize == N * sizeof(int), "mem_alloc_params", "%p %zu", back.dptr, back.bytesize);
  int v = 7, n = N;
  void *args[] = {&d, &v, &n};
  cudaGraphNodeParams k = kernelParams(args);
  CK(cudaGraphAddNode(&kernel, g, &alloc, nullptr, 1, &k), "cudaGraphAddNode_kernel");
  std::vector<int> h(N, -1);
  cudaGraphNodeParams c = memcpyParams(h.data(), d, N * sizeof(int));
  CK(cudaGraphAddNode(&copy, g, &kernel, nullptr, 1, &c), "cudaGraphAddNode_memcpy");
  cudaGraphNodeParams f = freeParams(d);
  CK(cudaGraphAddNode(&release, g, &copy, nullptr, 1, &f), "cudaGraphAddNode_mem_free");
  void *freed = nullptr;
  CK(cudaGraphMemFreeNodeGetParams(release, &freed), "cudaGraphMemFreeNodeGetParams");
  CHECK(freed == d, "mem_free_params", "%p", freed);

  cudaGraphExec_t x;
  CK(cudaGraphInstantiate(&x, g, 0), "cudaGraphInstantiate_alloc_free");
  for (int i = 0; i < 3; ++i)
    CK(cudaGraphLaunch(x, 0), "cudaGraphLaunch_alloc_free");
  CK(cudaDeviceSynchronize(), "cudaDeviceSynchronize_alloc_free");
  CHECK(isSequence(h, 7), "alloc_free_result", "h[0] %d", h[0]);

  cudaGraphNodeParams same = allocParams(N * sizeof(int));
  val("node_set_mem_alloc", cudaGraphNodeSetParams(alloc, &same));
  val("node_set_mem_free", cudaGraphNodeSetParams(release, &f));
  val("exec_set_mem_alloc", cudaGraphExecNodeSetParams(x, alloc, &same));
  val("exec_set_mem_free", cudaGraphExecNodeSetParams(x, release, &f));

  cudaGraphNode_t bad;
  cudaGraphNodeParams zero = allocParams(0);
  val("add_mem_alloc_0_bytes", cudaGraphAddNode(&bad, g, nullptr, nullptr, 0, &zero));
  int *plain;
  cudaMalloc(&plain, 4);
  cudaGraphNodeParams foreign = freeParams(plain);
  val("add_mem_free_not_graph_memory", cudaGraphAddNode(&bad, g, nullptr, nullptr, 0, &foreign));
  cudaGraphNodeParams null = freeParams(nullptr);
  val("add_mem_free_null", cudaGraphAddNode(&bad, g, nullptr, nullptr, 0, &null));
  cudaFree(plain);
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
}

/// cudaGraphNodeSetParams on a graph's nodes: what each type takes, shown by a launch of the graph.
static void nodeSetParams(int *d) {
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaGraphNode_t memset, kernel, copy, host;
  cudaGraphNodeParams m = memsetParams(d, 1);
  CK(cudaGraphAddNode(&memset, g, nullptr, nullptr, 0, &m), "cudaGraphAddNode_memset");
  int v = 1, n = N;
  void *args[] = {&d, &v, &n};
  cudaGraphNodeParams k = kernelParams(args);
  CK(cudaGraphAddNode(&kernel, g, &memset, nullptr, 1, &k), "cudaGraphAddNode_kernel");
  std::vector<int> h(N, -1), other(N, -1);
  cudaGraphNodeParams c = memcpyParams(h.data(), d, N * sizeof(int));
  CK(cudaGraphAddNode(&copy, g, &kernel, nullptr, 1, &c), "cudaGraphAddNode_memcpy");
  int calls = 0;
  cudaGraphNodeParams hp = {cudaGraphNodeTypeHost};
  hp.host.fn = countCalls, hp.host.userData = &calls;
  CK(cudaGraphAddNode(&host, g, &copy, nullptr, 1, &hp), "cudaGraphAddNode_host");

  v = 40; // the node copied the arguments: it needs new parameters to see this
  CK(cudaGraphNodeSetParams(kernel, &k), "cudaGraphNodeSetParams_kernel");
  c = memcpyParams(other.data(), d, N * sizeof(int));
  CK(cudaGraphNodeSetParams(copy, &c), "cudaGraphNodeSetParams_memcpy");
  hp.host.fn = countTwice;
  CK(cudaGraphNodeSetParams(host, &hp), "cudaGraphNodeSetParams_host");
  m = memsetParams(d, 0);
  CK(cudaGraphNodeSetParams(memset, &m), "cudaGraphNodeSetParams_memset");
  cudaGraphExec_t x;
  CK(cudaGraphInstantiate(&x, g, 0), "cudaGraphInstantiate_node_set");
  CK(cudaGraphLaunch(x, 0), "cudaGraphLaunch_node_set");
  CK(cudaDeviceSynchronize(), "cudaDeviceSynchronize_node_set");
  CHECK(isSequence(other, 40) && h[0] == -1 && calls == 2, "node_set_result", "other[0] %d h[0] %d calls %d", other[0],
        h[0], calls);

  val("node_set_type_mismatch", cudaGraphNodeSetParams(kernel, &m));
  val("node_set_null", cudaGraphNodeSetParams(kernel, nullptr));
  cudaGraphNodeParams reserved = k;
  reserved.reserved0[0] = 1;
  val("node_set_reserved0", cudaGraphNodeSetParams(kernel, &reserved));
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
}

/// cudaGraphExecNodeSetParams on an exec's nodes: memset -> kernel -> copy -> host, each changed in the exec.
static void execSetParams(int *d) {
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaGraphNode_t memset, kernel, copy, host;
  cudaGraphNodeParams m = memsetParams(d, 1);
  cudaGraphAddNode(&memset, g, nullptr, nullptr, 0, &m);
  int v = 3, n = N;
  void *args[] = {&d, &v, &n};
  cudaGraphNodeParams k = kernelParams(args);
  cudaGraphAddNode(&kernel, g, &memset, nullptr, 1, &k);
  std::vector<int> h(N, -1), other(N, -1);
  cudaGraphNodeParams c = memcpyParams(h.data(), d, N * sizeof(int));
  cudaGraphAddNode(&copy, g, &kernel, nullptr, 1, &c);
  int calls = 0;
  cudaGraphNodeParams hp = {cudaGraphNodeTypeHost};
  hp.host.fn = countCalls, hp.host.userData = &calls;
  cudaGraphAddNode(&host, g, &copy, nullptr, 1, &hp);
  cudaGraphExec_t x;
  CK(cudaGraphInstantiate(&x, g, 0), "cudaGraphInstantiate_exec_set");

  v = 50;
  CK(cudaGraphExecNodeSetParams(x, kernel, &k), "cudaGraphExecNodeSetParams_kernel");
  c = memcpyParams(other.data(), d, N * sizeof(int));
  CK(cudaGraphExecNodeSetParams(x, copy, &c), "cudaGraphExecNodeSetParams_memcpy");
  hp.host.fn = countTwice;
  CK(cudaGraphExecNodeSetParams(x, host, &hp), "cudaGraphExecNodeSetParams_host");
  m = memsetParams(d, 0);
  CK(cudaGraphExecNodeSetParams(x, memset, &m), "cudaGraphExecNodeSetParams_memset");
  CK(cudaGraphLaunch(x, 0), "cudaGraphLaunch_exec_set");
  CK(cudaDeviceSynchronize(), "cudaDeviceSynchronize_exec_set");
  CHECK(isSequence(other, 50) && h[0] == -1 && calls == 2, "exec_set_result", "other[0] %d h[0] %d calls %d", other[0],
        h[0], calls);
  // The graph's own nodes are unchanged: the exec has copies.
  cudaKernelNodeParams back = {};
  CK(cudaGraphKernelNodeGetParams(kernel, &back), "cudaGraphKernelNodeGetParams");
  CHECK(*(int *)back.kernelParams[1] == 3, "exec_set_graph_unchanged", "v %d", *(int *)back.kernelParams[1]);

  val("exec_set_type_mismatch", cudaGraphExecNodeSetParams(x, kernel, &m));
  val("exec_set_null", cudaGraphExecNodeSetParams(x, kernel, nullptr));
  cudaGraph_t g2;
  cudaGraphCreate(&g2, 0);
  cudaGraphNode_t foreign;
  cudaGraphAddNode(&foreign, g2, nullptr, nullptr, 0, &k);
  val("exec_set_foreign_node", cudaGraphExecNodeSetParams(x, foreign, &k));
  cudaGraphNode_t added;
  cudaGraphAddNode(&added, g, nullptr, nullptr, 0, &k);
  val("exec_set_node_added_after", cudaGraphExecNodeSetParams(x, added, &k));
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g2);
  cudaGraphDestroy(g);
}

/// A graph of one kernel node (fill(d, v)) and, with extra, an empty node after it.
static cudaGraph_t kernelGraph(int *&d, int &v, bool extra) {
  static int n = N;
  static void *args[3];
  args[0] = &d, args[1] = &v, args[2] = &n;
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaGraphNode_t k, e;
  cudaGraphNodeParams p = kernelParams(args);
  cudaGraphAddNode(&k, g, nullptr, nullptr, 0, &p);
  if (extra)
    cudaGraphAddEmptyNode(&e, g, &k, 1);
  return g;
}

/// Child graph, empty, event and conditional nodes, set in a graph and in an exec.
static void otherTypes(int *d) {
  int v = 5;
  cudaGraph_t child = kernelGraph(d, v, false);
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaGraphNode_t childNode, empty, record, wait, cond;
  cudaGraphNodeParams cp = {cudaGraphNodeTypeGraph};
  cp.graph.graph = child;
  CK(cudaGraphAddNode(&childNode, g, nullptr, nullptr, 0, &cp), "cudaGraphAddNode_graph");
  cudaGraphNodeParams ep = {cudaGraphNodeTypeEmpty};
  CK(cudaGraphAddNode(&empty, g, &childNode, nullptr, 1, &ep), "cudaGraphAddNode_empty");
  cudaEvent_t e1, e2;
  cudaEventCreate(&e1);
  cudaEventCreate(&e2);
  cudaGraphNodeParams rp = {cudaGraphNodeTypeEventRecord};
  rp.eventRecord.event = e1;
  CK(cudaGraphAddNode(&record, g, &empty, nullptr, 1, &rp), "cudaGraphAddNode_event_record");
  cudaGraphNodeParams wp = {cudaGraphNodeTypeWaitEvent};
  wp.eventWait.event = e1;
  CK(cudaGraphAddNode(&wait, g, &record, nullptr, 1, &wp), "cudaGraphAddNode_wait_event");
  cudaGraphConditionalHandle handle;
  cudaGraphConditionalHandleCreate(&handle, g, 0, cudaGraphCondAssignDefault);
  cudaGraphNodeParams ip = {cudaGraphNodeTypeConditional};
  ip.conditional.handle = handle, ip.conditional.type = cudaGraphCondTypeIf, ip.conditional.size = 1;
  CK(cudaGraphAddNode(&cond, g, &wait, nullptr, 1, &ip), "cudaGraphAddNode_conditional");
  cudaGraphNode_t inBody;
  cudaGraphAddEmptyNode(&inBody, ip.conditional.phGraph_out[0], nullptr, 0);

  int w = 9;
  cudaGraph_t sameShape = kernelGraph(d, w, false), otherShape = kernelGraph(d, w, true);
  rp.eventRecord.event = e2;
  wp.eventWait.event = e2;
  cudaGraphNodeParams sp = {cudaGraphNodeTypeGraph};
  sp.graph.graph = sameShape;
  val("node_set_graph", cudaGraphNodeSetParams(childNode, &sp));
  val("node_set_empty", cudaGraphNodeSetParams(empty, &ep));
  val("node_set_event_record", cudaGraphNodeSetParams(record, &rp));
  val("node_set_wait_event", cudaGraphNodeSetParams(wait, &wp));
  val("node_set_conditional", cudaGraphNodeSetParams(cond, &ip));

  cudaGraphExec_t x;
  CK(cudaGraphInstantiate(&x, g, 0), "cudaGraphInstantiate_other_types");
  val("exec_set_graph_same_topology", cudaGraphExecNodeSetParams(x, childNode, &sp));
  CK(cudaGraphLaunch(x, 0), "cudaGraphLaunch_other_types");
  CK(cudaDeviceSynchronize(), "cudaDeviceSynchronize_other_types");
  std::vector<int> h(N);
  cudaMemcpy(h.data(), d, N * sizeof(int), cudaMemcpyDeviceToHost);
  printf("LOG exec_set_graph_first_value %d\n", h[0]);
  sp.graph.graph = otherShape;
  val("exec_set_graph_other_topology", cudaGraphExecNodeSetParams(x, childNode, &sp));
  val("exec_set_empty", cudaGraphExecNodeSetParams(x, empty, &ep));
  val("exec_set_event_record", cudaGraphExecNodeSetParams(x, record, &rp));
  val("exec_set_wait_event", cudaGraphExecNodeSetParams(x, wait, &wp));
  val("exec_set_conditional", cudaGraphExecNodeSetParams(x, cond, &ip));
  CK(cudaGraphLaunch(x, 0), "cudaGraphLaunch_other_types_again");
  CK(cudaDeviceSynchronize(), "cudaDeviceSynchronize_other_types_again");
  cudaGraphExecDestroy(x);
  for (cudaGraph_t G : {g, child, sameShape, otherShape})
    cudaGraphDestroy(G);
  cudaEventDestroy(e1);
  cudaEventDestroy(e2);
}

int main() {
  int *d;
  cudaMalloc(&d, N * sizeof(int));
  allocFreeNodes();
  nodeSetParams(d);
  execSetParams(d);
  otherTypes(d);
  cudaFree(d);
  printf("%d failures\n", failures);
  return failures != 0;
}
