# The host side of corpus.cu's main() through the driver API (ctypes on libcuda.so.1), so the seeded-bug corpus
# runs without nvcc: python3 client.py LIBCUDA corpus.ptx KERNEL. Two 1000-byte buffers A and B (B copied from
# the host), then KERNEL's launch as main() makes it; prints each call's CUresult as main() prints cudaError_t.
import ctypes
import sys

lib, ptx, kernel = sys.argv[1:4]
cu = ctypes.CDLL(lib)
N = 250  # ints: 1000 bytes


def check(what, r):
    if r:
        print(f"{what}: CUresult {r}")
        sys.exit(1)


check("cuInit", cu.cuInit(0))
dev, ctx, mod, fn = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
check("cuDeviceGet", cu.cuDeviceGet(ctypes.byref(dev), 0))
check("cuCtxCreate", cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev))
check("cuModuleLoadData", cu.cuModuleLoadData(ctypes.byref(mod), open(ptx, "rb").read() + b"\0"))
check("cuModuleGetFunction", cu.cuModuleGetFunction(ctypes.byref(fn), mod, kernel.encode()))


def alloc():
    p = ctypes.c_uint64()
    check("cuMemAlloc", cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(N * 4)))
    return p


a, b = alloc(), alloc()
host = (ctypes.c_int * N)(*range(N))
check("cuMemcpyHtoD", cu.cuMemcpyHtoD_v2(b, host, ctypes.c_size_t(N * 4)))
n = ctypes.c_int(N)
threads, args = 256, [a, n]
if kernel in ("load_past_end", "load_before_start"):
    args = [a, b, n]
elif kernel == "uninitialized_read":
    args = [a, alloc(), n]
elif kernel in ("shared_race", "divergent_barrier", "shared_past_end"):
    threads, args = 64, [a]
elif kernel == "use_after_free":
    check("cuMemFree", cu.cuMemFree_v2(b))
    args = [b, n]
params = (ctypes.c_void_p * len(args))(*[ctypes.cast(ctypes.byref(x), ctypes.c_void_p) for x in args])
launch = cu.cuLaunchKernel(fn, 1, 1, 1, threads, 1, 1, 0, None, params, None)
sync = cu.cuCtxSynchronize()
# Printed after the launch's report (the driver prints it as the kernel ends), in one piece.
sys.stdout.write(f"launch: {launch}\nsynchronize: {sync}\nnext call: {cu.cuMemcpyDtoH_v2(host, a, ctypes.c_size_t(4))}\n")
sys.stdout.flush()
