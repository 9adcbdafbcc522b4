; passes/WidenThreadLoops.cpp: the loops over threads the lowering marked (ptxforge.thread.loop) get the vector
; width of the target (16 lanes of 32-bit values on AVX-512) and one vector per iteration; other loops stay.
; RUN: ptxforge-opt -passes='ptxforge-widen-thread-loops<lanes=16>' %s -S | FileCheck %s
; lanes=0 (a target without vectors worth it) changes nothing.
; RUN: ptxforge-opt -passes='ptxforge-widen-thread-loops<lanes=0>' %s -S | FileCheck %s --check-prefix=NONE

define void @block(i32 %n) {
entry:
  br label %x

x:
  %tx = phi i32 [ 0, %entry ], [ %tx.1, %x ]
  %tx.1 = add nuw i32 %tx, 1
  %last = icmp eq i32 %tx.1, %n
  br i1 %last, label %y, label %x, !llvm.loop !0

y:
  %ty = phi i32 [ 0, %x ], [ %ty.1, %y ]
  %ty.1 = add nuw i32 %ty, 1
  %done = icmp eq i32 %ty.1, %n
  br i1 %done, label %exit, label %y, !llvm.loop !2

exit:
  ret void
}

!0 = distinct !{!0, !1}
!1 = !{!"ptxforge.thread.loop"}
!2 = distinct !{!2, !3}
!3 = !{!"llvm.loop.mustprogress"}

; CHECK:      br i1 %last, label %y, label %x, !llvm.loop [[THREADS:![0-9]+]]
; CHECK:      br i1 %done, label %exit, label %y, !llvm.loop [[OTHER:![0-9]+]]
; CHECK:      [[THREADS]] = distinct !{[[THREADS]], [[MARK:![0-9]+]], [[WIDTH:![0-9]+]], [[ONE:![0-9]+]]}
; CHECK-NEXT: [[MARK]] = !{!"ptxforge.thread.loop"}
; CHECK-NEXT: [[WIDTH]] = !{!"llvm.loop.vectorize.width", i32 16}
; CHECK-NEXT: [[ONE]] = !{!"llvm.loop.interleave.count", i32 1}
; CHECK-NEXT: [[OTHER]] = distinct !{[[OTHER]], [[MP:![0-9]+]]}
; CHECK-NEXT: [[MP]] = !{!"llvm.loop.mustprogress"}

; NONE:      [[THREADS:![0-9]+]] = distinct !{[[THREADS]], [[MARK:![0-9]+]]}
; NONE-NEXT: [[MARK]] = !{!"ptxforge.thread.loop"}
; NONE-NOT:  llvm.loop.vectorize.width
