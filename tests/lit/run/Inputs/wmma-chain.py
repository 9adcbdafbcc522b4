# Prints a kernel that chains N wmma.mma.sync.m16n16k16 (f16 inputs, f32 accumulator) on one warp: A and B are
# all ones, C starts at zero, each product adds 16 to every element, and the warp stores D (16 * N everywhere)
# row-major to its parameter. Usage: wmma-chain.py N
import sys

n = int(sys.argv[1])
frag = lambda p, k: "{" + ", ".join(f"%{p}{k * 8 + i}" for i in range(8)) + "}"
print(""".version 7.0
.target sm_80
.address_size 64

.visible .entry wmma_chain(.param .u64 out)
{
  .reg .b32 %a<8>;
  .reg .f32 %f<16>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];""")
for i in range(8):
    print(f"  mov.b32 %a{i}, 0x3C003C00;")
for i in range(8):
    print(f"  mov.f32 %f{i}, 0f00000000;")
a = "{" + ", ".join(f"%a{i}" for i in range(8)) + "}"
for k in range(n):
    src, dst = k % 2, (k + 1) % 2
    print(f"  wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {frag('f', dst)}, {a}, {a}, {frag('f', src)};")
print(f"  wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd1], {frag('f', n % 2)}, 16;")
print("  ret;\n}")
