; passes/RegionBlocks.cpp (BarrierRegions.cpp): a thread function cut at a barrier the lowering marked
; (Markers.h) gets a block function that runs the block's threads region by region, each region a loop over the
; threads (outlined as a piece of its own), with a generic loop for threads that stopped at different places.
; A register read across a cut lives in a per-thread array, unless it can be computed again from the context
; (@reverse's %r1 is the thread id); a barrier-free inner loop is cut into regions of its own (LoopCuts.h).
; RUN: ptxforge-opt -passes=ptxforge-region-blocks %s -S | FileCheck %s
; The builder reads the loop cuts' marks, not their state: loop cuts run before, as a pass of their own, give the
; same block function (the thread function then keeps the cut edges; the copy's own loop cuts find nothing new).
; RUN: ptxforge-opt -passes='function(ptxforge-loop-cuts),ptxforge-region-blocks' %s -S | FileCheck %s
; Two stops of one loop cut that enter different blocks break the contract: no block function, and a remark.
; RUN: ptxforge-opt -passes='function(ptxforge-loop-cuts)' %s -S | sed 's/!{i32 8, i32 0, i32 1}/!{i32 8, i32 0, i32 0}/' \
; RUN:   | ptxforge-opt -passes=ptxforge-region-blocks -pass-remarks-missed=ptxforge-regions -S 2>&1 \
; RUN:   | FileCheck %s --check-prefix=BROKEN
; Over the cut budget the kernel keeps running on fibers, with a missed-optimization remark.
; RUN: ptxforge-opt -passes='ptxforge-region-blocks<cut-budget=0>' -pass-remarks-missed=ptxforge-regions %s -S 2>&1 | FileCheck %s --check-prefix=BUDGET
; Without loop cuts the thread's own loop stays a scalar loop inside the region's loop over threads.
; RUN: ptxforge-opt -passes='ptxforge-region-blocks<no-loop-cuts>' %s -S | FileCheck %s --check-prefix=NOCUTS

; The {kind, arg} table the runtime's dispatcher reads: start, the barrier, two loop cuts (RegionCuts.h).
; CHECK:       @__ptx_block_sum.cuts = private constant [8 x i32] [i32 0, i32 0, i32 1, i32 0, i32 8, i32 0, i32 8, i32 0]
; The thread functions stay as they are (fibers run them where a block function cannot serve).
; CHECK-LABEL: define void @__ptx_kernel_reverse(
; CHECK:         call void @ptxrt_bar_sync(ptr %0, i32 0, i32 0), !ptxforge.cut
; CHECK-LABEL: define void @__ptx_block_reverse(ptr %0, ptr noalias readonly dereferenceable(8) %1) {
; CHECK-NOT:     @ptxrt_bar_sync
; CHECK:         %thread.state = alloca i32, i32
; CHECK:         call void @__ptx_piece_reverse.region0(
; CHECK:         call void @__ptx_piece_reverse.region1(
; CHECK:         call void @__ptx_piece_reverse.generic(
; CHECK-LABEL: define internal void @__ptx_piece_reverse.region0(
; CHECK-LABEL: define void @__ptx_block_sum(
; CHECK:         %threads.frame = alloca i8, i64
; CHECK:         %k.threads = getelementptr i8, ptr %threads.frame, i64 0
; CHECK:         %acc.threads = getelementptr i8, ptr %threads.frame, i64 %{{[0-9]+}}
; CHECK:         call i32 @ptxrt_region_next_loops(ptr %ctx, ptr %thread.state, i32 {{%.*}}, ptr @__ptx_block_sum.cuts)

; BUDGET: remark: {{.*}}kernel runs on fibers: 1 barriers and collectives, more than the region budget of 0
; BUDGET: remark: {{.*}}kernel runs on fibers: 1 barriers and collectives, more than the region budget of 0
; BUDGET-NOT: define void @__ptx_block_

; BROKEN: remark: {{.*}}kernel runs on fibers: region builder contract broken in __ptx_block_sum: the stops of one loop cut enter different blocks
; BROKEN-NOT: define void @__ptx_block_sum(

; NOCUTS-NOT:   .cuts = private constant
; NOCUTS-LABEL: define void @__ptx_block_sum(
; NOCUTS-NOT:   ptxrt_region_next_loops
; NOCUTS:       call void @__ptx_piece_sum.region1(
; NOCUTS-NOT:   @__ptx_piece_sum.region2(

%ThreadContext = type { [3 x i32], [3 x i32], [3 x i32], [3 x i32], i32, i32, i32, i32, ptr, ptr, i32, i32, i32, i32, i32, i32, i64 }

; shared[tid] = tid; bar.sync 0; out[tid] = shared[31 - tid] (the lowering's form: registers are allocas, the
; shared window is the context's field 8).
define void @__ptx_kernel_reverse(ptr %0, ptr noalias readonly dereferenceable(8) %1) {
entry:
  %r1 = alloca i32, align 4
  br label %body

body:
  %tid.p = getelementptr inbounds %ThreadContext, ptr %0, i32 0, i32 0, i32 0
  %tid = load i32, ptr %tid.p, align 4
  store i32 %tid, ptr %r1, align 4
  %window.p = getelementptr inbounds nuw %ThreadContext, ptr %0, i32 0, i32 8
  %window = load ptr, ptr %window.p, align 8
  %mine = getelementptr i32, ptr %window, i32 %tid
  store i32 %tid, ptr %mine, align 4
  call void @ptxrt_bar_sync(ptr %0, i32 0, i32 0), !ptxforge.cut !0
  %t = load i32, ptr %r1, align 4
  %rev = sub i32 31, %t
  %window.p2 = getelementptr inbounds nuw %ThreadContext, ptr %0, i32 0, i32 8
  %window2 = load ptr, ptr %window.p2, align 8
  %theirs = getelementptr i32, ptr %window2, i32 %rev
  %v = load i32, ptr %theirs, align 4
  %out.p = load i64, ptr %1, align 8
  %out = inttoptr i64 %out.p to ptr addrspace(1)
  %dst = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %v, ptr addrspace(1) %dst, align 4
  ret void
}

; shared[tid] = tid; bar.sync 0; for (k = 0; k < 32; ++k) acc += shared[k]; out[tid] = acc.
define void @__ptx_kernel_sum(ptr %0, ptr noalias readonly dereferenceable(8) %1) {
entry:
  %k = alloca i32, align 4
  %acc = alloca i32, align 4
  br label %body

body:
  %tid.p = getelementptr inbounds %ThreadContext, ptr %0, i32 0, i32 0, i32 0
  %tid = load i32, ptr %tid.p, align 4
  %window.p = getelementptr inbounds nuw %ThreadContext, ptr %0, i32 0, i32 8
  %window = load ptr, ptr %window.p, align 8
  %mine = getelementptr i32, ptr %window, i32 %tid
  store i32 %tid, ptr %mine, align 4
  call void @ptxrt_bar_sync(ptr %0, i32 0, i32 0), !ptxforge.cut !0
  store i32 0, ptr %k, align 4
  store i32 0, ptr %acc, align 4
  br label %loop

loop:
  %kv = load i32, ptr %k, align 4
  %window.p2 = getelementptr inbounds nuw %ThreadContext, ptr %0, i32 0, i32 8
  %window2 = load ptr, ptr %window.p2, align 8
  %src = getelementptr i32, ptr %window2, i32 %kv
  %x = load i32, ptr %src, align 4
  %a = load i32, ptr %acc, align 4
  %a.next = add i32 %a, %x
  store i32 %a.next, ptr %acc, align 4
  %kv.next = add i32 %kv, 1
  store i32 %kv.next, ptr %k, align 4
  %more = icmp ult i32 %kv.next, 32
  br i1 %more, label %loop, label %done

done:
  %tid.p2 = getelementptr inbounds %ThreadContext, ptr %0, i32 0, i32 0, i32 0
  %tid2 = load i32, ptr %tid.p2, align 4
  %out.p = load i64, ptr %1, align 8
  %out = inttoptr i64 %out.p to ptr addrspace(1)
  %dst = getelementptr i32, ptr addrspace(1) %out, i32 %tid2
  %sum = load i32, ptr %acc, align 4
  store i32 %sum, ptr addrspace(1) %dst, align 4
  ret void
}

declare void @ptxrt_bar_sync(ptr, i32, i32)

!0 = !{i32 1, i32 -1, i32 -1, i32 -1, i32 -1, i32 -1, i32 -1, i32 -1}
