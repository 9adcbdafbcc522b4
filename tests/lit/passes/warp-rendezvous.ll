; passes/WarpRendezvous.cpp (WarpRendezvous.h): each rendezvous call the lowering marked (Markers.h) becomes a
; cut edge carrying its {kind, arg}: the barrier's plainly, the shuffle's after the deposit of its inputs into
; marked warp slots, with its results read in the block after the edge. The entry block's allocas are gathered at
; its top first, the slots after them.
; RUN: ptxforge-opt -passes=ptxforge-warp-rendezvous %s -S | FileCheck %s
; A mark that names an operand the call does not have breaks the thread contract: the function stays as it is,
; with a missed-optimization remark (an error where a failed split is one, LoweringOptions).
; RUN: sed 's/i32 2, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 -1/i32 2, i32 1, i32 2, i32 3, i32 4, i32 5, i32 9, i32 -1/' %s \
; RUN:   | ptxforge-opt -passes=ptxforge-warp-rendezvous -pass-remarks-missed=ptxforge-regions -S 2>&1 \
; RUN:   | FileCheck %s --check-prefix=BROKEN

; CHECK-LABEL: define void @__ptx_kernel_sum(
; CHECK:         %misaligned.bits = alloca i32, align 4, !ptxforge.misaligned_bits
; CHECK-NEXT:    %r1 = alloca i32
; CHECK-NEXT:    %p = alloca i32
; CHECK-NEXT:    %warp.value = alloca i64, align 8, !ptxforge.warp_slot ![[VALUE:[0-9]+]]
; CHECK-NEXT:    %warp.b = alloca i32, align 4, !ptxforge.warp_slot ![[B:[0-9]+]]
; CHECK-NEXT:    %warp.c = alloca i32, align 4, !ptxforge.warp_slot ![[C:[0-9]+]]
; CHECK-NEXT:    %warp.mask = alloca i32, align 4, !ptxforge.warp_slot ![[MASK:[0-9]+]]
; CHECK-NEXT:    %warp.out = alloca i32, align 4, !ptxforge.warp_slot ![[OUT:[0-9]+]]
; CHECK-NEXT:    %warp.pred = alloca i32, align 4, !ptxforge.warp_slot ![[PRED:[0-9]+]]
; CHECK-NEXT:    store i32 0, ptr %misaligned.bits
; CHECK:         store i32 %v, ptr %r1
; CHECK-NEXT:    br label %after.barrier, !ptxforge.cut_edge ![[BAR:[0-9]+]]
; CHECK:       after.barrier:
; CHECK-NEXT:    [[WIDE:%.*]] = zext i32 %v to i64
; CHECK-NEXT:    store i64 [[WIDE]], ptr %warp.value
; CHECK-NEXT:    store i32 16, ptr %warp.b
; CHECK-NEXT:    store i32 31, ptr %warp.c
; CHECK-NEXT:    store i32 -1, ptr %warp.mask
; The misaligned-address bits so far go to the context, where the end of the region's loop checks them.
; CHECK:         or i32
; CHECK:         br label %after.collective, !ptxforge.cut_edge ![[SHFL:[0-9]+]]
; CHECK:       after.collective:
; CHECK-NEXT:    [[R:%.*]] = load i32, ptr %warp.out
; CHECK-NEXT:    [[P:%.*]] = load i32, ptr %warp.pred
; CHECK-NEXT:    store i32 [[P]], ptr %p
; CHECK-NEXT:    %sum = add i32 %v, [[R]]
; CHECK-NOT:     call
; CHECK:         ret void
; CHECK-DAG:   ![[VALUE]] = !{i32 0}
; CHECK-DAG:   ![[MASK]] = !{i32 3}
; CHECK-DAG:   ![[PRED]] = !{i32 5}
; shfl.down (RegionCuts.h: kind 2, arg 1); the last field numbers loop cuts only.
; CHECK-DAG:   ![[SHFL]] = !{i32 2, i32 1, i32 0}
; CHECK-DAG:   ![[BAR]] = !{i32 1, i32 0, i32 0}

; BROKEN: remark: {{.*}}kernel runs on fibers: region builder contract broken in __ptx_kernel_sum: a cut names operand 9 of a call with 7
; BROKEN: call i32 @ptxrt_shfl(
; BROKEN-NOT: !ptxforge.cut_edge

%ThreadContext = type { [3 x i32], [3 x i32], [3 x i32], [3 x i32], i32, i32, i32, i32, ptr, ptr, i32, i32, i32, i32, i32, i32, i64 }

; v = tid; bar.sync 0; sum = v + shfl.sync.down(v, 16, 31, -1) (the lowering's form: registers are allocas, the
; misaligned-address bits an accumulator it marks, the shuffle a call marked with which operand is what).
define void @__ptx_kernel_sum(ptr %0, ptr noalias readonly dereferenceable(8) %1) {
entry:
  %misaligned.bits = alloca i32, align 4, !ptxforge.misaligned_bits !1
  store i32 0, ptr %misaligned.bits, align 4
  %r1 = alloca i32, align 4
  %p = alloca i32, align 4
  br label %body

body:
  %tid.p = getelementptr inbounds %ThreadContext, ptr %0, i32 0, i32 0, i32 0
  %v = load i32, ptr %tid.p, align 4
  store i32 %v, ptr %r1, align 4
  call void @ptxrt_bar_sync(ptr %0, i32 0, i32 0), !ptxforge.cut !0
  %r = call i32 @ptxrt_shfl(ptr %0, i32 1, i32 %v, i32 16, i32 31, i32 -1, ptr %p), !ptxforge.cut !2
  %sum = add i32 %v, %r
  %out.p = load i64, ptr %1, align 8
  %out = inttoptr i64 %out.p to ptr addrspace(1)
  %dst = getelementptr i32, ptr addrspace(1) %out, i32 %v
  store i32 %sum, ptr addrspace(1) %dst, align 4
  ret void
}

declare void @ptxrt_bar_sync(ptr, i32, i32)
declare i32 @ptxrt_shfl(ptr, i32, i32, i32, i32, i32, ptr)

!0 = !{i32 1, i32 -1, i32 -1, i32 -1, i32 -1, i32 -1, i32 -1, i32 -1}
!1 = !{}
!2 = !{i32 2, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 -1}
