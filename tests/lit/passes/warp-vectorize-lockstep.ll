; passes/WarpVectorize.cpp, lockstep warps: a grid-stride loop that only moves memory would run each 64-thread
; warp's trips over the whole array before the next warp starts, consecutive elements a whole walk apart. Its
; block's warps run side by side first (256 threads a trip, each step of the inner loop one vector load and store of
; 256 consecutive bytes), then 64-thread warps, then the tail. The full copy's exit test compares lane 0's and the
; last lane's indices with the bound (the lanes' indices are monotone where they do not wrap: tested), not a
; vector of them; the vector compare runs only where the lanes may wrap.
; RUN: ptxforge-opt -passes='ptxforge-warp-vectorize<lanes=16>' %s -S | FileCheck %s

; CHECK-LABEL: define void @__ptx_block_copy(
; After the lockstep warps (which stream: warp-vectorize-stream.ll), 64-thread warps while 64 threads are left,
; then the tail.
; CHECK:       warp.lockstep.done:
; CHECK-NEXT:    [[BASE:%.*]] = phi i32 [ 0, %x.preheader ], [ {{%.*}}, %stream.next ]
; CHECK-NEXT:    [[LEFT:%.*]] = sub i32 %ntid, [[BASE]]
; CHECK-NEXT:    [[MORE:%.*]] = icmp uge i32 [[LEFT]], 64
; CHECK-NEXT:    br i1 [[MORE]], label %warp.full, label %warp.tail.check
; CHECK:       warp.full:
; CHECK:         add <64 x i32> {{%.*}}, <i32 0, i32 1, i32 2,
; CHECK:       warp.tail:
; CHECK:         icmp ult <64 x i32> <i32 0, i32 1,
; CHECK:       stream.warp:
; CHECK:         add <256 x i32> {{%.*}}, <i32 0, i32 1, i32 2,
; The lockstep warps' inner loop: every lane on, one load and one store of 256 bytes a trip.
; CHECK:       copy.warp.full:
; CHECK-NOT:     phi <256 x i1>
; CHECK:         load <256 x i8>
; CHECK:         store <256 x i8>
; CHECK:         [[I:%.*]] = add nsw i32 {{%.*}}, %stride
; CHECK-DAG:     [[LAST:%.*]] = add i32 [[I]], 255
; CHECK-DAG:     [[NOWRAP:%.*]] = icmp sle i32 [[I]], 2147483392
; CHECK-DAG:     [[FIRST:%.*]] = icmp slt i32 [[I]], %n
; CHECK-DAG:     [[END:%.*]] = icmp slt i32 [[LAST]], %n
; CHECK:         %all.ends = and i1 [[FIRST]], [[END]]
; CHECK-NEXT:    br i1 {{%.*}}, label %all.join, label %all.lanes
; CHECK:       all.lanes:
; CHECK:         icmp slt <256 x i32>
; CHECK:         bitcast <256 x i1> {{%.*}} to i256
; CHECK:       all.join:
; CHECK-NEXT:    %all{{[0-9]*}} = phi i1 [ %all.ends, %{{.*}} ], [ %all{{[0-9]*}}, %all.lanes ]
; CHECK-NEXT:    br i1 %all{{[0-9]*}}, label %copy.warp.full, label %copy.warp.partial
; The 64-thread warps' copy of it.
; CHECK:       copy.warp.full{{[0-9]+}}:
; CHECK:         load <64 x i8>
; CHECK:         store <64 x i8>
define void @__ptx_block_copy(ptr noalias %out, ptr noalias %in, i32 %ntid, i32 %base, i32 %stride, i32 %n) {
entry:
  %empty = icmp eq i32 %ntid, 0
  br i1 %empty, label %exit, label %x

x:
  %tx = phi i32 [ 0, %entry ], [ %tx.1, %latch ]
  %i0 = add nsw i32 %base, %tx
  %first = icmp slt i32 %i0, %n
  br i1 %first, label %copy, label %latch

copy:
  %i = phi i32 [ %i0, %x ], [ %i.next, %copy ]
  %i64 = sext i32 %i to i64
  %src = getelementptr inbounds i8, ptr %in, i64 %i64
  %v = load i8, ptr %src, align 1
  %dst = getelementptr inbounds i8, ptr %out, i64 %i64
  store i8 %v, ptr %dst, align 1
  %i.next = add nsw i32 %i, %stride
  %more = icmp slt i32 %i.next, %n
  br i1 %more, label %copy, label %latch

latch:
  %tx.1 = add nuw i32 %tx, 1
  %last = icmp eq i32 %tx.1, %ntid
  br i1 %last, label %exit, label %x, !llvm.loop !0

exit:
  ret void
}

; A loop over 8-byte structures' fields keeps 64-thread warps: its field accesses (every other 4-byte element of
; the span) at 256 lanes spilled, and ran slower (bench_micro gridstride's copy_f2m).
; CHECK-LABEL: define void @__ptx_block_fields(
; CHECK-NOT:   warp.lockstep:
; CHECK:       stream.warp:
; CHECK:         add <64 x i32> {{%.*}}, <i32 0, i32 1, i32 2,
; CHECK:         @llvm.masked.load.v128f32
define void @__ptx_block_fields(ptr noalias %out, ptr noalias %in, i32 %ntid, i32 %base, i32 %stride, i32 %n) {
entry:
  %empty = icmp eq i32 %ntid, 0
  br i1 %empty, label %exit, label %x

x:
  %tx = phi i32 [ 0, %entry ], [ %tx.1, %latch ]
  %i0 = add nsw i32 %base, %tx
  %first = icmp slt i32 %i0, %n
  br i1 %first, label %copy, label %latch

copy:
  %i = phi i32 [ %i0, %x ], [ %i.next, %copy ]
  %i64 = sext i32 %i to i64
  %src = getelementptr inbounds [2 x float], ptr %in, i64 %i64, i64 0
  %src.y = getelementptr inbounds [2 x float], ptr %in, i64 %i64, i64 1
  %v = load float, ptr %src, align 4
  %v.y = load float, ptr %src.y, align 4
  %dst = getelementptr inbounds [2 x float], ptr %out, i64 %i64, i64 0
  %dst.y = getelementptr inbounds [2 x float], ptr %out, i64 %i64, i64 1
  store float %v, ptr %dst, align 4
  store float %v.y, ptr %dst.y, align 4
  %i.next = add nsw i32 %i, %stride
  %more = icmp slt i32 %i.next, %n
  br i1 %more, label %copy, label %latch

latch:
  %tx.1 = add nuw i32 %tx, 1
  %last = icmp eq i32 %tx.1, %ntid
  br i1 %last, label %exit, label %x, !llvm.loop !1

exit:
  ret void
}

!0 = distinct !{!0, !2}
!1 = distinct !{!1, !2}
!2 = !{!"ptxforge.thread.loop"}
