; passes/HideNarrowRecurrences.cpp: LLVM 22's loop vectorizer drops the check that the i2 recurrence of
; `t & 3` does not wrap (llvm/llvm-project#191382) and loads s[2t - (t & 3)] as consecutive elements. The pass
; freezes `t & 3`, so the access is a gather; a loop with no such recurrence is left alone.
; RUN: ptxforge-opt -passes=ptxforge-hide-narrow-recurrences %s -S | FileCheck %s
; RUN: ptxforge-opt -passes=ptxforge-hide-narrow-recurrences,loop-vectorize -force-vector-width=8 \
; RUN:   -force-vector-interleave=1 %s -S | FileCheck %s --check-prefix=VEC

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; d[t] = s[2t - (t & 3)] + s[t]: s[t] needs {0,+,1}<i32> not to wrap, which LLVM 22 takes to imply that the
; i2 recurrence {0,+,1} of `t & 3` does not wrap either.
; CHECK-LABEL: define void @scatter_pairs(
; CHECK:         %low = and i32 %t, 3
; CHECK-NEXT:    %low.fr = freeze i32 %low
; CHECK-NEXT:    %i = sub i32 %twice, %low.fr
; The vector loop loads s[t] whole; s[2t - (t & 3)] lane by lane, never as one consecutive vector.
; VEC-LABEL: define void @scatter_pairs(
; VEC:         vector.body:
; VEC-COUNT-1:   load <8 x i32>
; VEC-NOT:       load <8 x i32>
; VEC:         middle.block:
define void @scatter_pairs(ptr noalias %d, ptr noalias %s, i64 %n) {
entry:
  br label %loop

loop:
  %iv = phi i64 [ 0, %entry ], [ %iv.next, %loop ]
  %t = trunc i64 %iv to i32
  %t.ext = zext i32 %t to i64
  %mine = getelementptr i32, ptr %s, i64 %t.ext
  %w = load i32, ptr %mine, align 4
  %twice = shl i32 %t, 1
  %low = and i32 %t, 3
  %i = sub i32 %twice, %low
  %i.ext = zext i32 %i to i64
  %src = getelementptr i32, ptr %s, i64 %i.ext
  %v = load i32, ptr %src, align 4
  %sum = add i32 %v, %w
  %dst = getelementptr i32, ptr %d, i64 %iv
  store i32 %sum, ptr %dst, align 4
  %iv.next = add nuw nsw i64 %iv, 1
  %done = icmp eq i64 %iv.next, %n
  br i1 %done, label %exit, label %loop

exit:
  ret void
}

; A runtime mask is no recurrence of SCEV's (cuda-samples' scan: t & (size - 1)): nothing to hide.
; CHECK-LABEL: define void @runtime_mask(
; CHECK-NOT:     freeze
; CHECK:         ret void
define void @runtime_mask(ptr noalias %d, ptr noalias %s, i64 %n, i32 %mask) {
entry:
  br label %loop

loop:
  %iv = phi i64 [ 0, %entry ], [ %iv.next, %loop ]
  %t = trunc i64 %iv to i32
  %t.ext = zext i32 %t to i64
  %mine = getelementptr i32, ptr %s, i64 %t.ext
  %w = load i32, ptr %mine, align 4
  %twice = shl i32 %t, 1
  %low = and i32 %t, %mask
  %i = sub i32 %twice, %low
  %i.ext = zext i32 %i to i64
  %src = getelementptr i32, ptr %s, i64 %i.ext
  %v = load i32, ptr %src, align 4
  %sum = add i32 %v, %w
  %dst = getelementptr i32, ptr %d, i64 %iv
  store i32 %sum, ptr %dst, align 4
  %iv.next = add nuw nsw i64 %iv, 1
  %done = icmp eq i64 %iv.next, %n
  br i1 %done, label %exit, label %loop

exit:
  ret void
}

; A narrow recurrence alone keeps its own check (the vector loop runs only where `t & 3` cannot wrap): no
; wider check implies it away, so the pass leaves it.
; CHECK-LABEL: define void @lone_narrow(
; CHECK-NOT:     freeze
; CHECK:         ret void
define void @lone_narrow(ptr noalias %d, ptr noalias %s, i64 %n) {
entry:
  br label %loop

loop:
  %iv = phi i64 [ 0, %entry ], [ %iv.next, %loop ]
  %t = trunc i64 %iv to i32
  %low = and i32 %t, 3
  %low.ext = zext i32 %low to i64
  %src = getelementptr i32, ptr %s, i64 %low.ext
  %v = load i32, ptr %src, align 4
  %dst = getelementptr i32, ptr %d, i64 %iv
  store i32 %v, ptr %dst, align 4
  %iv.next = add nuw nsw i64 %iv, 1
  %done = icmp eq i64 %iv.next, %n
  br i1 %done, label %exit, label %loop

exit:
  ret void
}

; The narrow recurrence is a phi of its own (an i2 counter): the phi's value is frozen where the block's phis end,
; and the counter's increment reads the frozen value, no induction for the vectorizer any more.
; CHECK-LABEL: define void @narrow_phi(
; CHECK:         %j = phi i2
; CHECK-NEXT:    %j.fr = freeze i2 %j
; CHECK:         %low = zext i2 %j.fr to i32
; CHECK:         %j.next = add i2 %j.fr, 1
define void @narrow_phi(ptr noalias %d, ptr noalias %s, i64 %n) {
entry:
  br label %loop

loop:
  %iv = phi i64 [ 0, %entry ], [ %iv.next, %loop ]
  %j = phi i2 [ 0, %entry ], [ %j.next, %loop ]
  %t = trunc i64 %iv to i32
  %t.ext = zext i32 %t to i64
  %mine = getelementptr i32, ptr %s, i64 %t.ext
  %w = load i32, ptr %mine, align 4
  %twice = shl i32 %t, 1
  %low = zext i2 %j to i32
  %i = sub i32 %twice, %low
  %i.ext = zext i32 %i to i64
  %src = getelementptr i32, ptr %s, i64 %i.ext
  %v = load i32, ptr %src, align 4
  %sum = add i32 %v, %w
  %dst = getelementptr i32, ptr %d, i64 %iv
  store i32 %sum, ptr %dst, align 4
  %iv.next = add nuw nsw i64 %iv, 1
  %j.next = add i2 %j, 1
  %done = icmp eq i64 %iv.next, %n
  br i1 %done, label %exit, label %loop

exit:
  ret void
}

; d[t] = s[(4t + 4160) & 0xfffffffc] (cuda-samples' globalToShmemAsyncCopy, a shared-memory row read): SCEV
; writes the mask as the i30 recurrence {1040,+,1}, which could wrap only after 2^30 trips. A loop over a
; block's threads is bounded by %ntid (the lowering gives it `range`, at most 1024 trips), so SCEV proves the
; recurrence never wraps: no predicate, nothing to hide, and the rows load as consecutive vectors.
; CHECK-LABEL: define void @bounded_rows(
; CHECK-NOT:     freeze
; CHECK:         br i1 %done, label %exit, label %loop{{$}}
; VEC-LABEL: define void @bounded_rows(
; VEC:         vector.body:
; VEC:           load <8 x float>
define void @bounded_rows(ptr noalias %d, ptr noalias %s, i32 range(i32 1, 1025) %n) {
entry:
  %trips = zext i32 %n to i64
  br label %loop

loop:
  %iv = phi i64 [ 0, %entry ], [ %iv.next, %loop ]
  %t = trunc i64 %iv to i32
  %four = shl i32 %t, 2
  %row = add i32 %four, 4096
  %row.ext = zext i32 %row to i64
  %next = add i64 %row.ext, 64
  %at = and i64 %next, 4294967292
  %src = getelementptr i8, ptr %s, i64 %at
  %v = load float, ptr %src, align 4
  %dst = getelementptr float, ptr %d, i64 %iv
  store float %v, ptr %dst, align 4
  %iv.next = add i64 %iv, 1
  %done = icmp eq i64 %iv, %trips
  br i1 %done, label %exit, label %loop

exit:
  ret void
}

; The same loop with no bound on its trips: the i30 recurrence may wrap, no value of the loop holds it alone to
; freeze, and the loop is left unvectorized.
; CHECK-LABEL: define void @unbounded_rows(
; CHECK:         br i1 %done, label %exit, label %loop, !llvm.loop [[UNVECTORIZED:![0-9]+]]
; VEC-LABEL: define void @unbounded_rows(
; VEC-NOT:       vector.body:
; VEC:         ret void
define void @unbounded_rows(ptr noalias %d, ptr noalias %s, i32 %n) {
entry:
  %trips = zext i32 %n to i64
  br label %loop

loop:
  %iv = phi i64 [ 0, %entry ], [ %iv.next, %loop ]
  %t = trunc i64 %iv to i32
  %four = shl i32 %t, 2
  %row = add i32 %four, 4096
  %row.ext = zext i32 %row to i64
  %next = add i64 %row.ext, 64
  %at = and i64 %next, 4294967292
  %src = getelementptr i8, ptr %s, i64 %at
  %v = load float, ptr %src, align 4
  %dst = getelementptr float, ptr %d, i64 %iv
  store float %v, ptr %dst, align 4
  %iv.next = add i64 %iv, 1
  %done = icmp eq i64 %iv, %trips
  br i1 %done, label %exit, label %loop

exit:
  ret void
}
; CHECK: [[UNVECTORIZED]] = distinct !{[[UNVECTORIZED]], [[DISABLE:![0-9]+]]}
; CHECK: [[DISABLE]] = !{!"llvm.loop.vectorize.enable", i32 0}
