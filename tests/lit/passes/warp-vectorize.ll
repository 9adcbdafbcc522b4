; passes/WarpVectorize.cpp: a thread loop whose threads loop themselves (here each thread sums a grid-stride
; loop of its own) runs W threads per trip as W-lane vectors: the inner loop goes round unmasked while every
; lane is on, then while any lane is on, each lane under its mask, and the store of consecutive threads is one
; vector store; the last threads run in a tail with the lanes past %ntid off. A thread loop without loops of its own stays LLVM's loop vectorizer's.
; RUN: ptxforge-opt -passes='ptxforge-warp-vectorize<lanes=8>' %s -S | FileCheck %s

; CHECK-LABEL: define void @__ptx_block_k(
; CHECK:       warp.full:
; CHECK-NEXT:    [[X0:%.*]] = phi i32 [ 0, %x.preheader ], [ [[NEXT:%.*]], %latch.join ]
; CHECK:         [[TIDS:%.*]] = add <8 x i32> {{%.*}}, <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7>
; CHECK:       warp.tail:
; CHECK:         icmp ult <8 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7>,
; The inner loop runs unmasked while every lane is on (inner.warp.full), then under the loop mask
; (inner.warp), which starts from the lanes still on when the full copy handed over.
; CHECK:       inner.warp:
; CHECK:         [[MASK:%.*]] = phi <8 x i1> [ [[STILL:%.*]], %inner.join ], [ [[MORE:%.*]], %inner.warp.partial ]
; CHECK:         [[ACC:%.*]] = phi <8 x float> [ {{%.*}}, %inner.join ], [ [[FULLACC:%.*]], %inner.warp.partial ]
; CHECK:         [[BITS:%.*]] = bitcast <8 x i1> [[MASK]] to i8
; CHECK-NEXT:    %any{{[0-9]*}} = icmp ne i8 [[BITS]], 0
; CHECK:       inner.warp.full:
; CHECK-NOT:     phi <8 x i1> [ splat
; CHECK:         [[FULLACC]] = fadd <8 x float>
; CHECK:         [[MORE]] = icmp slt <8 x i32>
; Whether every lane goes round again: lane 0's and lane 7's %j.next against %n (where they do not wrap).
; CHECK:         %all.ends = and i1
; CHECK:       all.join:
; CHECK-NEXT:    %all{{[0-9]*}} = phi i1 [ %all.ends,
; CHECK-NEXT:    br i1 %all{{[0-9]*}}, label %inner.warp.full, label %inner.warp.partial
; CHECK:       inner.on:
; CHECK:         fadd <8 x float> [[ACC]],
; CHECK:       latch.join:
; CHECK:         [[NEXT]] = add i32 [[X0]], 8
; CHECK:         br i1 {{%.*}}, label %warp.full, label %warp.tail.check, !llvm.loop
; CHECK:       consecutive:
; CHECK-NEXT:    call void @llvm.masked.store.v8f32.p0(<8 x float> {{%.*}}, ptr align 4 %p{{[0-9]+}}, <8 x i1>
define void @__ptx_block_k(ptr noalias %out, i32 %ntid, i32 %n) {
entry:
  %empty = icmp eq i32 %ntid, 0
  br i1 %empty, label %exit, label %x

x:
  %tx = phi i32 [ 0, %entry ], [ %tx.1, %latch ]
  br label %inner

inner:
  %j = phi i32 [ %tx, %x ], [ %j.next, %inner ]
  %acc = phi float [ 0.0, %x ], [ %acc.next, %inner ]
  %jf = sitofp i32 %j to float
  %acc.next = fadd float %acc, %jf
  %j.next = add nsw i32 %j, 32
  %more = icmp slt i32 %j.next, %n
  br i1 %more, label %inner, label %latch

latch:
  %tx64 = zext i32 %tx to i64
  %p = getelementptr inbounds float, ptr %out, i64 %tx64
  store float %acc.next, ptr %p, align 4
  %tx.1 = add nuw i32 %tx, 1
  %last = icmp eq i32 %tx.1, %ntid
  br i1 %last, label %exit, label %x, !llvm.loop !0

exit:
  ret void
}

; CHECK-LABEL: define void @__ptx_block_flat(
; CHECK-NOT:     warp.full
; CHECK:         ret void
define void @__ptx_block_flat(ptr noalias %out, i32 %ntid) {
entry:
  %empty = icmp eq i32 %ntid, 0
  br i1 %empty, label %exit, label %x

x:
  %tx = phi i32 [ 0, %entry ], [ %tx.1, %x ]
  %tx64 = zext i32 %tx to i64
  %p = getelementptr inbounds float, ptr %out, i64 %tx64
  store float 1.0, ptr %p, align 4
  %tx.1 = add nuw i32 %tx, 1
  %last = icmp eq i32 %tx.1, %ntid
  br i1 %last, label %exit, label %x, !llvm.loop !2

exit:
  ret void
}

!0 = distinct !{!0, !1}
!1 = !{!"ptxforge.thread.loop"}
!2 = distinct !{!2, !1}
