// graph_conditional: conditional graph nodes (CUDA 12.4+) through the runtime: IF (with and without an ELSE
// body), WHILE and SWITCH nodes added with cudaGraphAddNode, whose condition kernels set with the device
// runtime's cudaGraphSetConditional; a handle's default value with and without cudaGraphCondAssignDefault,
// nested conditionals, a body filled by cudaStreamBeginCaptureToGraph, a conditional node added to a graph
// being captured, and the error codes for bad node parameters. Built with -rdc=true -lcudadevrt, as the
// device runtime requires; the expected output is an H100's.
#include "check.h"

#include <vector>

#define ERR(call, want, name)                                                                                          \
  do {                                                                                                                 \
    cudaError_t e_ = (call);                                                                                           \
    CHECK(e_ == (want), name, "%s", cudaGetErrorName(e_));                                                             \
  } while (0)

__global__ void setFrom(const int *v, cudaGraphConditionalHandle h) { cudaGraphSetConditional(h, *v); }
__global__ void record(int *log, int value) { log[++log[0]] = value; }
// One loop iteration: records the counter, counts it down, and ends the loop at 0.
__global__ void countDown(int *counter, int *log, cudaGraphConditionalHandle h) {
  log[++log[0]] = *counter;
  if (--*counter <= 0)
    cudaGraphSetConditional(h, 0);
}

static int *logBuf;

static void printLog(const char *name) {
  int h[64];
  cudaMemcpy(h, logBuf, sizeof h, cudaMemcpyDeviceToHost);
  printf("LOG %s:", name);
  for (int i = 1; i <= h[0] && i < 64; ++i)
    printf(" %d", h[i]);
  printf("\n");
  cudaMemset(logBuf, 0, 64 * sizeof(int));
}

static cudaGraphNode_t addKernel(cudaGraph_t g, const cudaGraphNode_t *deps, size_t n, void *fn, void **args) {
  cudaGraphNodeParams p = {cudaGraphNodeTypeKernel};
  p.kernel.func = fn;
  p.kernel.gridDim = dim3(1);
  p.kernel.blockDim = dim3(1);
  p.kernel.kernelParams = args;
  cudaGraphNode_t node = nullptr;
  CK(cudaGraphAddNode(&node, g, deps, nullptr, n, &p), "cudaGraphAddNode_kernel");
  return node;
}

static cudaGraphNode_t addConditional(cudaGraph_t g, const cudaGraphNode_t *deps, size_t n,
                                      cudaGraphConditionalHandle h, cudaGraphConditionalNodeType type, unsigned size,
                                      cudaGraph_t *bodies) {
  cudaGraphNodeParams p = {cudaGraphNodeTypeConditional};
  p.conditional.handle = h;
  p.conditional.type = type;
  p.conditional.size = size;
  cudaGraphNode_t node = nullptr;
  CK(cudaGraphAddNode(&node, g, deps, nullptr, n, &p), "cudaGraphAddNode_conditional");
  for (unsigned i = 0; i < size && p.conditional.phGraph_out; ++i)
    bodies[i] = p.conditional.phGraph_out[i];
  return node;
}

static void launch(cudaGraphExec_t x, const char *name) {
  CK(cudaGraphLaunch(x, 0), name);
  CK(cudaDeviceSynchronize(), name);
}

// cond <- *v; IF cond: record 1 [ELSE record 2]; then record 3.
static void ifElse(int *v, bool withElse) {
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaGraphConditionalHandle h;
  CK(cudaGraphConditionalHandleCreate(&h, g, 0, 0), "cudaGraphConditionalHandleCreate");
  void *args[] = {&v, &h};
  cudaGraphNode_t set = addKernel(g, nullptr, 0, (void *)setFrom, args);
  cudaGraph_t bodies[2] = {};
  cudaGraphNode_t c = addConditional(g, &set, 1, h, cudaGraphCondTypeIf, withElse ? 2 : 1, bodies);
  cudaGraphNodeType type;
  cudaGraphNodeGetType(c, &type);
  CHECK(type == cudaGraphNodeTypeConditional, "conditional_node_type", "type %d", (int)type);
  int one = 1, two = 2, three = 3;
  void *a1[] = {&logBuf, &one}, *a2[] = {&logBuf, &two}, *a3[] = {&logBuf, &three};
  addKernel(bodies[0], nullptr, 0, (void *)record, a1);
  if (withElse)
    addKernel(bodies[1], nullptr, 0, (void *)record, a2);
  addKernel(g, &c, 1, (void *)record, a3);
  cudaGraphExec_t x;
  CK(cudaGraphInstantiate(&x, g, 0), "cudaGraphInstantiate_if");
  for (int value : {0, 1, 7}) {
    cudaMemcpy(v, &value, 4, cudaMemcpyHostToDevice);
    launch(x, "cudaGraphLaunch_if");
    char name[32];
    snprintf(name, sizeof name, "%s_%d", withElse ? "if_else" : "if", value);
    printLog(name);
  }
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
}

// WHILE: the handle's default (1, assigned at each launch) enters the loop; the body counts *counter down.
static void whileLoop(int *counter, unsigned flags) {
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaGraphConditionalHandle h;
  CK(cudaGraphConditionalHandleCreate(&h, g, 1, flags), "cudaGraphConditionalHandleCreate_while");
  cudaGraph_t body;
  addConditional(g, nullptr, 0, h, cudaGraphCondTypeWhile, 1, &body);
  void *args[] = {&counter, &logBuf, &h};
  addKernel(body, nullptr, 0, (void *)countDown, args);
  cudaGraphExec_t x;
  CK(cudaGraphInstantiate(&x, g, 0), "cudaGraphInstantiate_while");
  for (int start : {3, 2}) {
    cudaMemcpy(counter, &start, 4, cudaMemcpyHostToDevice);
    launch(x, "cudaGraphLaunch_while");
    char name[40];
    snprintf(name, sizeof name, "while_flags%u_start%d", flags, start);
    printLog(name);
  }
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
}

// SWITCH of size 3: body i records 10 + i.
static void switchNode(int *v) {
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaGraphConditionalHandle h;
  CK(cudaGraphConditionalHandleCreate(&h, g, 0, 0), "cudaGraphConditionalHandleCreate_switch");
  void *args[] = {&v, &h};
  cudaGraphNode_t set = addKernel(g, nullptr, 0, (void *)setFrom, args);
  cudaGraph_t bodies[3];
  addConditional(g, &set, 1, h, cudaGraphCondTypeSwitch, 3, bodies);
  int vals[3] = {10, 11, 12};
  for (int i = 0; i < 3; ++i) {
    void *a[] = {&logBuf, &vals[i]};
    addKernel(bodies[i], nullptr, 0, (void *)record, a);
  }
  cudaGraphExec_t x;
  CK(cudaGraphInstantiate(&x, g, 0), "cudaGraphInstantiate_switch");
  for (int value : {0, 1, 2, 3, -1}) {
    cudaMemcpy(v, &value, 4, cudaMemcpyHostToDevice);
    launch(x, "cudaGraphLaunch_switch");
    char name[32];
    snprintf(name, sizeof name, "switch_%d", value);
    printLog(name);
  }
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
}

// A WHILE whose body (captured with cudaStreamBeginCaptureToGraph) counts down and holds an IF on a second
// handle, set from the counter's parity.
__global__ void parity(const int *counter, cudaGraphConditionalHandle h) { cudaGraphSetConditional(h, *counter & 1); }

static void nested(int *counter) {
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaGraphConditionalHandle loop, odd;
  cudaGraphConditionalHandleCreate(&loop, g, 1, cudaGraphCondAssignDefault);
  cudaGraphConditionalHandleCreate(&odd, g, 0, 0);
  cudaGraph_t body;
  addConditional(g, nullptr, 0, loop, cudaGraphCondTypeWhile, 1, &body);
  cudaStream_t s;
  cudaStreamCreate(&s);
  CK(cudaStreamBeginCaptureToGraph(s, body, nullptr, nullptr, 0, cudaStreamCaptureModeGlobal),
     "cudaStreamBeginCaptureToGraph");
  parity<<<1, 1, 0, s>>>(counter, odd);
  cudaStreamCaptureStatus status;
  cudaGraph_t captured;
  const cudaGraphNode_t *deps;
  size_t ndeps;
  CK(cudaStreamGetCaptureInfo(s, &status, nullptr, &captured, &deps, nullptr, &ndeps), "cudaStreamGetCaptureInfo");
  CHECK(captured == body && ndeps == 1, "capture_to_graph_info", "graph %p deps %zu", (void *)captured, ndeps);
  cudaGraph_t ifBody;
  cudaGraphNode_t c = addConditional(body, deps, ndeps, odd, cudaGraphCondTypeIf, 1, &ifBody);
  CK(cudaStreamUpdateCaptureDependencies(s, &c, nullptr, 1, cudaStreamSetCaptureDependencies),
     "cudaStreamUpdateCaptureDependencies");
  countDown<<<1, 1, 0, s>>>(counter, logBuf, loop);
  cudaGraph_t ended = nullptr;
  CK(cudaStreamEndCapture(s, &ended), "cudaStreamEndCapture_to_graph");
  CHECK(ended == body, "capture_to_graph_end", "graph %p", (void *)ended);
  int hundred = 100;
  void *a[] = {&logBuf, &hundred};
  addKernel(ifBody, nullptr, 0, (void *)record, a);
  cudaGraphExec_t x;
  CK(cudaGraphInstantiate(&x, g, 0), "cudaGraphInstantiate_nested");
  int start = 5;
  cudaMemcpy(counter, &start, 4, cudaMemcpyHostToDevice);
  launch(x, "cudaGraphLaunch_nested");
  printLog("nested");
  cudaStreamDestroy(s);
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
}

static void errors() {
  cudaGraph_t g, other;
  cudaGraphCreate(&g, 0);
  cudaGraphCreate(&other, 0);
  cudaGraphConditionalHandle h;
  cudaGraphConditionalHandleCreate(&h, g, 0, 0);
  cudaGraphNode_t n;
  struct {
    const char *name;
    cudaGraphConditionalNodeType type;
    unsigned size;
  } bad[] = {{"if_size3", cudaGraphCondTypeIf, 3},
             {"if_size0", cudaGraphCondTypeIf, 0},
             {"while_size2", cudaGraphCondTypeWhile, 2},
             {"switch_size0", cudaGraphCondTypeSwitch, 0},
             {"type7", (cudaGraphConditionalNodeType)7, 1}};
  for (auto &b : bad) {
    cudaGraphNodeParams p = {cudaGraphNodeTypeConditional};
    p.conditional.handle = h, p.conditional.type = b.type, p.conditional.size = b.size;
    printf("VAL %s %s\n", b.name, cudaGetErrorName(cudaGraphAddNode(&n, g, nullptr, nullptr, 0, &p)));
    cudaGetLastError();
  }
  cudaGraphNodeParams p = {cudaGraphNodeTypeConditional};
  p.conditional.handle = h, p.conditional.type = cudaGraphCondTypeIf, p.conditional.size = 1;
  printf("VAL other_graph_handle %s\n", cudaGetErrorName(cudaGraphAddNode(&n, other, nullptr, nullptr, 0, &p)));
  cudaGetLastError();
  printf("VAL handle_null_graph %s\n", cudaGetErrorName(cudaGraphConditionalHandleCreate(&h, nullptr, 0, 0)));
  cudaGetLastError();
  printf("VAL handle_bad_flags %s\n", cudaGetErrorName(cudaGraphConditionalHandleCreate(&h, g, 0, 2)));
  cudaGetLastError();
  CK(cudaGraphAddNode(&n, g, nullptr, nullptr, 0, &p), "cudaGraphAddNode_if");
  cudaGraph_t clone;
  printf("VAL clone_with_conditional %s\n", cudaGetErrorName(cudaGraphClone(&clone, g)));
  cudaGetLastError();
  cudaGraphNode_t child;
  printf("VAL child_with_conditional %s\n", cudaGetErrorName(cudaGraphAddChildGraphNode(&child, other, nullptr, 0, g)));
  cudaGetLastError();
  cudaGraphExec_t x1, x2;
  printf("VAL instantiate_first %s\n", cudaGetErrorName(cudaGraphInstantiate(&x1, g, 0)));
  printf("VAL instantiate_second %s\n", cudaGetErrorName(cudaGraphInstantiate(&x2, g, 0)));
  cudaGetLastError();
  cudaGraphDestroy(other);
  cudaGraphDestroy(g);
}

// What NVIDIA's runtime says to cudaGraphLaunch into a capturing stream, per kind of graph.
__global__ void bump(int *p) { ++*p; }

static void launchIntoCapture(int *v) {
  cudaStream_t s;
  cudaStreamCreate(&s);
  auto probe = [&](const char *name, cudaGraph_t g, cudaStreamCaptureMode mode) {
    cudaGraphExec_t x;
    cudaGraphInstantiate(&x, g, 0);
    CK(cudaStreamBeginCapture(s, mode), "cudaStreamBeginCapture_probe");
    cudaError_t e = cudaGraphLaunch(x, s);
    cudaGraph_t outer = nullptr;
    cudaError_t end = cudaStreamEndCapture(s, &outer);
    printf("VAL graph_launch_in_capture_%s %s %s\n", name, cudaGetErrorName(e), cudaGetErrorName(end));
    cudaGetLastError();
    if (outer)
      cudaGraphDestroy(outer);
    cudaGraphExecDestroy(x);
  };
  cudaGraph_t k;
  cudaGraphCreate(&k, 0);
  void *args[] = {&v};
  addKernel(k, nullptr, 0, (void *)bump, args);
  probe("kernel_global", k, cudaStreamCaptureModeGlobal);
  probe("kernel_relaxed", k, cudaStreamCaptureModeRelaxed);
  cudaGraph_t m;
  cudaGraphCreate(&m, 0);
  cudaMemsetParams mp = {};
  mp.dst = v, mp.value = 0, mp.elementSize = 4, mp.width = 1, mp.height = 1;
  cudaGraphNode_t node;
  cudaGraphAddMemsetNode(&node, m, nullptr, 0, &mp);
  probe("memset", m, cudaStreamCaptureModeGlobal);
  static int host[4];
  cudaGraph_t c;
  cudaGraphCreate(&c, 0);
  cudaGraphAddMemcpyNode1D(&node, c, nullptr, 0, host, v, 4, cudaMemcpyDeviceToHost);
  probe("memcpy_pageable", c, cudaStreamCaptureModeGlobal);
  cudaGraph_t e;
  cudaGraphCreate(&e, 0);
  cudaGraphAddEmptyNode(&node, e, nullptr, 0);
  probe("empty", e, cudaStreamCaptureModeGlobal);
  // A captured graph launched into a capture, as tests/cudart/graphs.cu does.
  cudaGraph_t cap;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  bump<<<1, 1, 0, s>>>(v);
  cudaStreamEndCapture(s, &cap);
  probe("captured_kernel", cap, cudaStreamCaptureModeGlobal);
  cudaGraphExec_t launched;
  cudaGraphInstantiate(&launched, cap, 0);
  cudaGraphLaunch(launched, s);
  cudaStreamSynchronize(s);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaError_t again = cudaGraphLaunch(launched, s);
  cudaGraph_t outer = nullptr;
  cudaStreamEndCapture(s, &outer);
  printf("VAL graph_launch_in_capture_launched_before %s\n", cudaGetErrorName(again));
  cudaGetLastError();
  for (cudaGraph_t x : {k, m, c, e, cap})
    cudaGraphDestroy(x);
  cudaStreamDestroy(s);
}

int main() {
  int *v;
  cudaMalloc(&v, 4);
  cudaMalloc(&logBuf, 64 * sizeof(int));
  cudaMemset(logBuf, 0, 64 * sizeof(int));
  ifElse(v, false);
  ifElse(v, true);
  whileLoop(v, cudaGraphCondAssignDefault);
  whileLoop(v, 0);
  switchNode(v);
  nested(v);
  errors();
  launchIntoCapture(v);
  printf("%d failures\n", failures);
  return failures != 0;
}
