// Every PTX kernel the unit tests compile, in one place: the tests of a layer (codegen, the driver core, libcuda,
// the embedding API) load these rather than each declaring its own. Kernels that differ in one part are built
// from the same pieces: moduleText() gives the header every module starts with, elementKernel() the
// one-thread-per-element frame (index, bounds check) that scale, saxpy and the faulting store share.
#pragma once

#include <string>

namespace ptxforge::testing {

/// A module of the given PTX ISA version and target: the header, then Body.
inline std::string moduleText(const char *Version, const char *Target, const std::string &Body) {
  return std::string(".version ") + Version + "\n.target " + Target + "\n.address_size 64\n" + Body;
}

/// An entry `Name(Params, .param .u32 p_n)` whose thread i = %ctaid.x * %ntid.x + %tid.x (in %r5) runs Body when
/// i < p_n (in %r1). Body may use %p2-%p3, %r6-%r15, %f1-%f7 and %rd1-%rd7.
inline std::string elementKernel(const char *Name, const char *Params, const std::string &Body) {
  return std::string(".visible .entry ") + Name + "(" + Params + R"(, .param .u32 p_n)
{
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<8>;
  ld.param.u32 %r1, [p_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
)" + Body +
         R"(DONE:
  ret;
}
)";
}

/// The body of `scale`: out[i] = i * Factor (a PTX f32 operand), out's address in %rd1.
inline std::string scaleBody(const char *Factor) {
  return std::string(R"(  cvt.rn.f32.u32 %f1, %r5;
  mul.f32 %f2, %f1, )") +
         Factor + R"(;
  mul.wide.u32 %rd2, %r5, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.f32 [%rd3], %f2;
)";
}

/// `scale(p_out, p_n)`: out[i] = i * Factor for i < n; Factor is a PTX float literal (each factor is another
/// module). The kernel the compute cache, tiered JIT and libcuda tests run through the whole pipeline.
inline std::string scaleModule(const char *Factor) {
  return moduleText("7.5", "sm_75",
                    elementKernel("scale", ".param .u64 p_out", "  ld.param.u64 %rd1, [p_out];\n" + scaleBody(Factor)));
}

/// `scale(p_out, p_a, p_n)`: out[i] = i * a, and a module variable `calls` = 5 (the driver's module tests).
inline const std::string ScaleByParamPtx =
    moduleText("7.5", "sm_75",
               ".visible .global .align 4 .u32 calls = 5;\n" +
                   elementKernel("scale", ".param .u64 p_out, .param .f32 p_a",
                                 "  ld.param.u64 %rd1, [p_out];\n  ld.param.f32 %f3, [p_a];\n" + scaleBody("%f3")));

/// The instruction of StorePastEndPtx that faults.
inline const char *StorePastEndFault = "st.global.u32 [%rd3], %r5;";

/// `k(y, p_n)`: y[i] = i, but thread n-1 stores one page past its element (a fault when that page is not mapped).
inline const std::string StorePastEndPtx =
    moduleText("8.0", "sm_80", elementKernel("k", ".param .u64 y", R"(  ld.param.u64 %rd1, [y];
  mul.wide.u32 %rd2, %r5, 4;
  add.s64 %rd3, %rd1, %rd2;
  add.u32 %r6, %r1, -1;
  setp.eq.u32 %p2, %r5, %r6;
  selp.b64 %rd4, 4096, 0, %p2;
  add.s64 %rd3, %rd3, %rd4;
  )" + std::string(StorePastEndFault) + "\n"));

/// The embedding API's module: a saxpy(x, y, a, n), a kernel storing through its pointer argument (null makes it
/// fault), a trap, a parameter-layout probe and a module global `counter` = 7.
inline const std::string ApiKernelsPtx = moduleText("8.0", "sm_70",
                                                    ".visible .global .align 4 .u32 counter = 7;\n\n" +
                                                        elementKernel("saxpy",
                                                                      ".param .u64 x, .param .u64 y, "
                                                                      ".param .f32 a",
                                                                      R"(  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  ld.param.f32 %f1, [a];
  mul.wide.u32 %rd3, %r5, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.f32 %f2, [%rd4];
  ld.global.f32 %f3, [%rd5];
  fma.rn.f32 %f4, %f1, %f2, %f3;
  st.global.f32 [%rd5], %f4;
)") + R"(
.visible .entry store(.param .u64 .ptr.global.align 4 out, .param .u32 v)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [v];
  st.global.u32 [%rd1], %r1;
  ret;
}

.visible .entry stop()
{
  trap;
}

.visible .entry layout(.param .u8 a, .param .u64 b, .param .align 16 .b8 c[12], .param .v2 .f32 d)
{
  ret;
}
)");

/// A module the front end rejects: line 7 lacks its semicolon; line 8 misspells `setp`.
inline const std::string BrokenPtx = moduleText("8.0", "sm_70", R"(.visible .entry k(.param .u32 n)
{
  .reg .b32 %r<3>;
  ld.param.u32 %r1, [n]
  sept.ge.u32 %r2, %r1, 3;
  ret;
}
)");

/// `sum(out)`, which needs sm_80 (its `.target` and redux.sync): out = the sum of the warp's thread indices.
inline const std::string Sm80Ptx = moduleText("8.0", "sm_80", R"(.visible .entry sum(.param .u64 out)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  redux.sync.add.u32 %r2, %r1, -1;
  st.global.u32 [%rd1], %r2;
  ret;
}
)");

/// `fill(p_out, p_v)`: out[tid] = v + tid, one block (libcuda's C API tests).
inline const std::string FillPtx =
    moduleText("7.5", "sm_75", R"(.visible .entry fill(.param .u64 p_out, .param .u32 p_v)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_out];
  ld.param.u32 %r1, [p_v];
  mov.u32 %r2, %tid.x;
  add.u32 %r3, %r1, %r2;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
)");

/// `k(p)` calls an undefined function and reads an undefined `.extern .global`; it declares another function
/// it never calls (a whole-program load must name the called one).
inline const std::string CallsUndefinedPtx = moduleText("8.0", "sm_80", R"(.extern .func missing_fn(.param .u32 a);
.extern .func unused_fn(.param .u32 a);
.extern .global .u32 missing_var;
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  ld.global.u32 %r1, [missing_var];
  { .param .u32 a0; st.param.u32 [a0], %r1; call missing_fn, (a0); }
  ret;
}
)");

/// `k(p)` uses a form the lowering rejects (wmma with .rz rounding on f64: the runtime's products round to
/// nearest only), though it parses and verifies.
inline const std::string UnsupportedWmmaPtx = moduleText("8.0", "sm_80", R"(.visible .entry k(.param .u64 p)
{
  .reg .f64 %fd<6>;
  mov.f64 %fd1, 0d3FF0000000000000;
  wmma.mma.sync.aligned.row.col.m8n8k4.rz.f64.f64.f64.f64 {%fd2, %fd3}, {%fd1}, {%fd1}, {%fd4, %fd5};
  ret;
}
)");

/// `grid_barrier(p_counter, p_out)`: thread 0 of each block arrives at a counter and spins until every block has;
/// then each block records the count it saw. Only a cooperative launch (all blocks resident) finishes it.
inline const std::string GridBarrierPtx =
    moduleText("8.0", "sm_80", R"(.visible .entry grid_barrier(.param .u64 p_counter, .param .u64 p_out)
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [p_counter];
  ld.param.u64 %rd2, [p_out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %nctaid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra ARRIVED;
  atom.global.add.u32 %r3, [%rd1], 1;
SPIN:
  ld.volatile.global.u32 %r4, [%rd1];
  setp.lt.u32 %p2, %r4, %r2;
  @%p2 bra SPIN;
ARRIVED:
  bar.sync 0;
  @%p1 bra DONE;
  ld.volatile.global.u32 %r5, [%rd1];
  mov.u32 %r6, %ctaid.x;
  mul.wide.u32 %rd3, %r6, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r5;
DONE:
  ret;
}
)");

/// `reduce(in, out)`: a block reduction in the shape nvcc emits, a barrier in a loop, then a warp-shuffle tail
/// (the region builder's input).
inline const std::string BlockReducePtx =
    moduleText("8.0", "sm_80", R"(.visible .entry reduce(.param .u64 in, .param .u64 out)
{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;
  .shared .align 4 .b8 buf[1024];
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r2, [%rd4];
  mov.u32 %r3, buf;
  shl.b32 %r4, %r1, 2;
  add.s32 %r5, %r3, %r4;
  st.shared.u32 [%r5], %r2;
  bar.sync 0;
  mov.u32 %r6, 128;
LOOP:
  setp.ge.u32 %p1, %r1, %r6;
  @%p1 bra SKIP;
  shl.b32 %r7, %r6, 2;
  add.s32 %r8, %r5, %r7;
  ld.shared.u32 %r9, [%r8];
  ld.shared.u32 %r10, [%r5];
  add.s32 %r10, %r10, %r9;
  st.shared.u32 [%r5], %r10;
SKIP:
  bar.sync 0;
  shr.u32 %r6, %r6, 1;
  setp.gt.u32 %p2, %r6, 16;
  @%p2 bra LOOP;
  ld.shared.u32 %r10, [%r5];
  shfl.sync.down.b32 %r11, %r10, 16, 31, -1;
  add.s32 %r10, %r10, %r11;
  st.global.u32 [%rd2], %r10;
  ret;
}
)");

/// `k(p_out, p_tex, p_surf, p_n)` with the three pointers in %rd1-%rd3, then Body (%r1-%r15 free): the texture
/// and surface tests' frame.
inline std::string surfaceKernel(const std::string &Body) {
  return moduleText("8.0", "sm_80",
                    R"(.visible .entry k(.param .u64 p_out, .param .u64 p_tex, .param .u64 p_surf, .param .u32 p_n)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_out];
  ld.param.u64 %rd2, [p_tex];
  ld.param.u64 %rd3, [p_surf];
)" + Body + "  ret;\n}\n");
}

/// txq/suq of a texture's width, depth, layers and channel type and order, and a surface's channel type, memory
/// layout and depth, stored as eight u32.
inline const std::string TextureQueriesPtx = surfaceKernel(R"(  txq.width.b32 %r1, [%rd2];
  txq.depth.b32 %r2, [%rd2];
  txq.array_size.b32 %r3, [%rd2];
  txq.channel_data_type.b32 %r4, [%rd2];
  txq.channel_order.b32 %r5, [%rd2];
  suq.channel_data_type.b32 %r6, [%rd3];
  suq.memory_layout.b32 %r7, [%rd3];
  suq.depth.b32 %r8, [%rd3];
  st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
  st.global.v4.u32 [%rd1+16], {%r5, %r6, %r7, %r8};
)");

/// txq.level's width and height of level 2 and the width of level 9 (past the last), and the level count.
inline const std::string MipmapQueriesPtx = surfaceKernel(R"(  mov.u32 %r1, 2;
  txq.level.width.b32 %r2, [%rd2], %r1;
  txq.level.height.b32 %r3, [%rd2], %r1;
  mov.u32 %r4, 9;
  txq.level.width.b32 %r5, [%rd2], %r4;
  txq.num_mipmap_levels.b32 %r6, [%rd2];
  st.global.v4.u32 [%rd1], {%r2, %r3, %r5, %r6};
)");

/// suld/sust off the edge of a 2D surface with .clamp and .zero, and sured.min on s32.
inline const std::string SurfaceBoundariesPtx = surfaceKernel(R"(  mov.u32 %r1, 40;
  mov.u32 %r2, -1;
  mov.u32 %r3, 9;
  suld.b.2d.b32.clamp {%r4}, [%rd3, {%r1, %r2}];
  suld.b.2d.b32.zero {%r5}, [%rd3, {%r1, %r2}];
  mov.u32 %r6, 77;
  sust.b.2d.b32.zero [%rd3, {%r1, %r3}], {%r6};
  sust.b.2d.b32.clamp [%rd3, {%r1, %r3}], {%r6};
  mov.u32 %r7, 0;
  mov.u32 %r8, -5;
  sured.b.min.2d.s32.trap [%rd3, {%r7, %r7}], %r8;
  st.global.v2.u32 [%rd1], {%r4, %r5};
)");

/// `counter` starts at 5; `bump` adds its parameter to it, `fetch` copies it out, `take_address` stores the
/// address of `twice` in `fn` and `call_fn` calls whatever `fn` points to with 21 (lazy loading's shared state).
inline const std::string SharedStatePtx = moduleText("7.5", "sm_75", R"(.visible .global .align 4 .u32 counter = 5;
.visible .global .align 8 .u64 fn;

.func (.param .b32 r) twice(.param .b32 x)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [x];
  add.s32 %r2, %r1, %r1;
  st.param.b32 [r], %r2;
  ret;
}

.visible .entry bump(.param .u32 p_by)
{
  .reg .b32 %r<4>;
  ld.param.u32 %r1, [p_by];
  ld.global.u32 %r2, [counter];
  add.s32 %r3, %r2, %r1;
  st.global.u32 [counter], %r3;
  ret;
}

.visible .entry fetch(.param .u64 p_out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p_out];
  ld.global.u32 %r1, [counter];
  st.global.u32 [%rd1], %r1;
  ret;
}

.visible .entry take_address()
{
  .reg .b64 %rd<2>;
  mov.u64 %rd1, twice;
  st.global.u64 [fn], %rd1;
  ret;
}

.visible .entry call_fn(.param .u64 p_out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p_out];
  ld.global.u64 %rd2, [fn];
  {
    .param .b32 a;
    .param .b32 r;
    st.param.b32 [a], 21;
proto: .callprototype (.param .b32 _) _ (.param .b32 _);
    call (r), %rd2, (a), proto;
    ld.param.b32 %r1, [r];
  }
  st.global.u32 [%rd1], %r1;
  ret;
}
)");

/// Two link inputs: `twice` calls lib_twice of the second; a weak function nothing reaches calls malloc, and the
/// second's lib_unreached calls `nowhere`, both undefined (nvlink keeps only what the kernels reach).
inline const std::string LinkReachMainPtx =
    moduleText("8.0", "sm_80", R"(.extern .func (.param .b32 r) lib_twice(.param .b32 x);
.extern .func (.param .b64 r) malloc(.param .b64 n);
.weak .func (.param .b64 r) unreached_alloc(.param .b64 n)
{
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [n];
  { .param .b64 a; .param .b64 b; st.param.b64 [a], %rd1; call.uni (b), malloc, (a); ld.param.b64 %rd1, [b]; }
  st.param.b64 [r], %rd1;
  ret;
}
.visible .entry twice(.param .u64 out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, 21;
  { .param .b32 a; .param .b32 b; st.param.b32 [a], %r1; call.uni (b), lib_twice, (a); ld.param.b32 %r1, [b]; }
  st.global.u32 [%rd1], %r1;
  ret;
}
)");
inline const std::string LinkReachLibPtx = moduleText("8.0", "sm_80", R"(.extern .func nowhere();
.visible .func (.param .b32 r) lib_twice(.param .b32 x)
{
  .reg .b32 %r<2>;
  ld.param.u32 %r1, [x];
  add.s32 %r1, %r1, %r1;
  st.param.b32 [r], %r1;
  ret;
}
.visible .func lib_unreached()
{
  call.uni nowhere, ();
  ret;
}
)");

/// Two link inputs that both have an internal `helper` and `count` (no linkage), and the first a weak `pick` that
/// the second's strong one overrides; `collide` takes helper's address, so renaming covers operands of every kind.
inline const std::string LinkCollideFirstPtx = moduleText("8.0", "sm_80", R"(.global .align 4 .u32 count = 3;
.extern .func (.param .b32 r) other(.param .b32 x);
.func (.param .b32 r) helper(.param .b32 x)
{
  .reg .b32 %r<3>;
  ld.param.u32 %r1, [x];
  ld.global.u32 %r2, [count];
  add.s32 %r1, %r1, %r2;
  st.param.b32 [r], %r1;
  ret;
}
.weak .func (.param .b32 r) pick(.param .b32 x)
{
  .reg .b32 %r<2>;
  mov.u32 %r1, 0;
  st.param.b32 [r], %r1;
  ret;
}
.visible .entry collide(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, 10;
  {
  .param .b32 a;
  .param .b32 b;
  st.param.b32 [a], %r1;
  call (b), helper, (a);
  ld.param.b32 %r2, [b];
  }
  {
  .param .b32 a;
  .param .b32 b;
  st.param.b32 [a], %r1;
  call (b), other, (a);
  ld.param.b32 %r3, [b];
  }
  {
  .param .b32 a;
  .param .b32 b;
  st.param.b32 [a], %r1;
  call (b), pick, (a);
  ld.param.b32 %r4, [b];
  }
  mov.u64 %rd2, helper;
  st.global.u32 [%rd1], %r2;
  st.global.u32 [%rd1+4], %r3;
  st.global.u32 [%rd1+8], %r4;
  setp.ne.u64 %p1, %rd2, 0;
  selp.u32 %r5, 1, 0, %p1;
  st.global.u32 [%rd1+12], %r5;
  ret;
}
)");
inline const std::string LinkCollideSecondPtx = moduleText("8.0", "sm_80", R"(.global .align 4 .u32 count = 1000;
.func (.param .b32 r) helper(.param .b32 x)
{
  .reg .b32 %r<3>;
  ld.param.u32 %r1, [x];
  ld.global.u32 %r2, [count];
  mul.lo.s32 %r1, %r1, %r2;
  st.param.b32 [r], %r1;
  ret;
}
.visible .func (.param .b32 r) other(.param .b32 x)
{
  .reg .b32 %r<2>;
  .param .b32 a;
  .param .b32 b;
  ld.param.u32 %r1, [x];
  st.param.b32 [a], %r1;
  call (b), helper, (a);
  ld.param.b32 %r1, [b];
  st.param.b32 [r], %r1;
  ret;
}
.visible .func (.param .b32 r) pick(.param .b32 x)
{
  .reg .b32 %r<2>;
  mov.u32 %r1, 42;
  st.param.b32 [r], %r1;
  ret;
}
)");

} // namespace ptxforge::testing
