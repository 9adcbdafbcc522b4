"""The Hopper pipeline case of issue 20 (a cluster of 2 blocks, TMA loads with expect_tx, distributed shared
memory, wgmma m64n64k16 f16->f32) in the conformance format. Its out.expect.bin was recorded on an H100 (sm_90,
driver API 13000) with record.py, 2 identical runs; generate.py calls generate()."""
import json, os, random, struct


def generate(out_root, cases):
    OUT = os.path.join(out_root, "hopper", "pipeline_cluster_tma_wgmma")
    os.makedirs(OUT, exist_ok=True)
    rnd = random.Random(95)
    def f16(v): return struct.pack("<e", v)
    A = b"".join(f16(rnd.randrange(-8, 9) / 8) for _ in range(128 * 16))
    B = b"".join(f16(rnd.randrange(-8, 9) / 8) for _ in range(64 * 16))
    desc32 = lambda: (256 >> 4) << 32 | 1 << 16 | 3 << 62  # 32B swizzle, SBO 256 (start added in the kernel)
    dl = ", ".join(f"%d{i}" for i in range(32))
    ptx = f"""//
// ptxforge Hopper pipeline case: a cluster of 2 blocks; each loads its 64 rows of A and half of B (K-major,
// 32B swizzle) with TMA into shared memory under one mbarrier transaction, takes the other half of B from the
// peer block's shared memory (mapa + ld.shared::cluster), and computes its 64x64 tile with wgmma m64n64k16.
//
.version 8.0
.target sm_90a
.address_size 64

.visible .entry k_pipeline(
	.param .align 64 .b8 p_amap[128],
	.param .align 64 .b8 p_bmap[128],
	.param .u64 p_adesc,
	.param .u64 p_out
)
.explicitcluster
.reqnctapercluster 2, 1, 1
{{
	.reg .pred %p<4>;
	.reg .b32 %r<32>;
	.reg .b64 %rd<16>;
	.reg .b32 %d<32>;
	.shared .align 1024 .b8 s_a[2048];
	.shared .align 1024 .b8 s_b[2048];
	.shared .align 8 .b64 s_bar;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %cluster_ctarank;
	mov.u32 %r3, s_bar;
	mov.u32 %r4, s_a;
	mov.u32 %r5, s_b;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra $L_wait;
	mbarrier.init.shared::cta.b64 [%r3], 1;
	fence.mbarrier_init.release.cluster;
	fence.proxy.async.shared::cta;
	mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [%r3], 3072;
	mov.b64 %rd12, p_amap;
	cvta.param.u64 %rd2, %rd12;
	mov.b64 %rd13, p_bmap;
	cvta.param.u64 %rd3, %rd13;
	mov.u32 %r6, 0;
	shl.b32 %r7, %r2, 6;
	cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r4], [%rd2, {{%r6, %r7}}], [%r3];
	shl.b32 %r8, %r2, 5;
	shl.b32 %r9, %r2, 10;
	add.u32 %r10, %r5, %r9;
	cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r10], [%rd3, {{%r6, %r8}}], [%r3];
$L_wait:
	bar.sync 0;
$L_poll:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;
	@!%p2 bra $L_poll;
	barrier.cluster.arrive.release.aligned;
	barrier.cluster.wait.acquire.aligned;
	// the peer's half of B, 8 bytes per thread, from its shared memory
	xor.b32 %r11, %r2, 1;
	shl.b32 %r12, %r11, 10;
	shl.b32 %r13, %r1, 3;
	add.u32 %r12, %r12, %r13;
	add.u32 %r14, %r5, %r12;
	mapa.shared::cluster.u32 %r15, %r14, %r11;
	ld.shared::cluster.u64 %rd4, [%r15];
	st.shared.u64 [%r14], %rd4;
	fence.proxy.async.shared::cta;
	barrier.cluster.arrive.release.aligned;
	barrier.cluster.wait.acquire.aligned;
	ld.param.u64 %rd5, [p_adesc];
	shr.u32 %r16, %r4, 4;
	cvt.u64.u32 %rd6, %r16;
	add.u64 %rd7, %rd5, %rd6;
	shr.u32 %r17, %r5, 4;
	cvt.u64.u32 %rd8, %r17;
	add.u64 %rd9, %rd5, %rd8;
	wgmma.fence.sync.aligned;
	setp.ne.u32 %p3, %r1, %r1;
	wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{{dl}}}, %rd7, %rd9, %p3, 1, 1, 0, 0;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
	ld.param.u64 %rd10, [p_out];
	cvta.to.global.u64 %rd10, %rd10;
	shl.b32 %r18, %r2, 7;
	add.u32 %r18, %r18, %r1;
	mul.wide.u32 %rd11, %r18, 128;
	add.u64 %rd10, %rd10, %rd11;
""" + "".join(f"\tst.global.b32 [%rd10+{4 * i}], %d{i};\n" for i in range(32)) + "\tret;\n}\n"
    open(os.path.join(OUT, "kernel.ptx"), "w").write(ptx)
    open(os.path.join(OUT, "a.bin"), "wb").write(A)
    open(os.path.join(OUT, "b.bin"), "wb").write(B)
    tm = lambda buf, rows, box: {"type": "tensormap", "tensormap": {"buffer": buf, "data_type": 6, "global_dim": [16, rows],
         "global_strides": [32], "box_dim": [16, box], "element_strides": [1, 1], "interleave": 0, "swizzle": 1,
         "l2_promotion": 0, "oob_fill": 0}}
    case = {"name": "hopper/pipeline_cluster_tma_wgmma", "description": "a cluster of 2 blocks: TMA loads (32B swizzle) "
            "under mbarrier expect_tx, distributed shared memory (mapa, ld.shared::cluster, barrier.cluster), "
            "wgmma m64n64k16 f16->f32 from shared-memory descriptors",
            "ptx": "kernel.ptx", "entry": "k_pipeline", "min_sm": 90, "grid": [2, 1, 1], "block": [128, 1, 1],
            "dynamic_shared_bytes": 0,
            "params": [tm("a", 128, 64), tm("b", 64, 32), {"type": "u64", "bits": f"{desc32():x}"},
                       {"type": "u64", "buffer": "out"}],
            "buffers": {"a": {"bytes": len(A), "init": "a.bin"}, "b": {"bytes": len(B), "init": "b.bin"},
                        "out": {"bytes": 2 * 64 * 64 * 4, "init": {"fill_byte": 205}, "expect": "out.expect.bin",
                                "compare": {"as": "f32"}}}}
    json.dump(case, open(os.path.join(OUT, "case.json"), "w"), indent=1)
    cases.append({"name": case["name"], "dir": case["name"], "min_sm": 90, "ptx_version": "8.0",
                  "target": "sm_90a", "description": case["description"]})
