; passes/LoopCuts.cpp (LoopCuts.h): a barrier-free innermost loop of a thread function with marked cuts is cut at
; its edges. Every edge into the loop's header, and every edge out of it, stops in a block whose branch is a cut
; edge (Markers.h) numbered by the block it enters; the region builder makes each such block a region. The short
; body is unrolled four times first, each copy keeping its exit.
; RUN: ptxforge-opt -passes=ptxforge-loop-cuts %s -S | FileCheck %s
; The loop takes three regions of the budget beside the two the barrier makes: with four there is no room.
; RUN: ptxforge-opt -passes='ptxforge-loop-cuts<cut-budget=4>' %s -S | FileCheck %s --check-prefix=BUDGET
; A malformed cut mark breaks the thread contract: the function stays as it is, with a missed-optimization remark.
; RUN: sed 's/^!0 = .*/!0 = !{i32 1}/' %s \
; RUN:   | ptxforge-opt -passes=ptxforge-loop-cuts -pass-remarks-missed=ptxforge-regions -S 2>&1 \
; RUN:   | FileCheck %s --check-prefix=BROKEN

; CHECK-LABEL: define void @__ptx_kernel_sum(
; CHECK:         call void @ptxrt_bar_sync(ptr %0, i32 0, i32 0), !ptxforge.cut
; CHECK:         br label %[[INTO:loop.stop[0-9]*]]
; CHECK:       loop.cut:
; CHECK-NEXT:    br label %loop
; CHECK:       [[BACK:loop.stop[0-9]*]]:
; CHECK-NEXT:    br label %loop.cut, !ptxforge.cut_edge ![[HEADER:[0-9]+]]
; CHECK:       [[INTO]]:
; CHECK-NEXT:    br label %loop.cut, !ptxforge.cut_edge ![[HEADER]]
; CHECK:       loop:
; CHECK:         br i1 %more, label %loop.u1, label %[[EXIT:loop.stop[0-9]*]]
; CHECK:       [[CUT2:loop.cut[0-9]+]]:
; CHECK-NEXT:    br label %done
; CHECK:       [[EXIT]]:
; CHECK-NEXT:    br label %[[CUT2]], !ptxforge.cut_edge ![[AFTER:[0-9]+]]
; CHECK:       loop.u3:
; CHECK:         br i1 %more.u3, label %[[BACK]], label %loop.stop
; The loop cuts' cut edges: kind 8 (RCLoop), the region's number among them.
; CHECK-DAG:   ![[HEADER]] = !{i32 8, i32 0, i32 0}
; CHECK-DAG:   ![[AFTER]] = !{i32 8, i32 0, i32 1}

; BUDGET-NOT: loop.stop
; BUDGET-NOT: !ptxforge.cut_edge

; BROKEN: remark: {{.*}}kernel runs on fibers: region builder contract broken in __ptx_kernel_sum: a malformed cut mark
; BROKEN-NOT: !ptxforge.cut_edge

%ThreadContext = type { [3 x i32], [3 x i32], [3 x i32], [3 x i32], i32, i32, i32, i32, ptr, ptr, i32, i32, i32, i32, i32, i32, i64 }

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
  %out.p = load i64, ptr %1, align 8
  %out = inttoptr i64 %out.p to ptr addrspace(1)
  %dst = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  %sum = load i32, ptr %acc, align 4
  store i32 %sum, ptr addrspace(1) %dst, align 4
  ret void
}

declare void @ptxrt_bar_sync(ptr, i32, i32)

!0 = !{i32 1, i32 -1, i32 -1, i32 -1, i32 -1, i32 -1, i32 -1, i32 -1}
