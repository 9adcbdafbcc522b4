; LLVM 22.1 loop-vectorizer miscompile (llvm/llvm-project#191382, fixed for LLVM 23 by #191498); see
; wrap-predicate-implies.md. Run:
;   lli wrap-predicate-implies.ll; echo $?                                   -> 0 (the scalar loop: no mismatch)
;   opt -passes=loop-vectorize -force-vector-width=8 wrap-predicate-implies.ll | lli; echo $?   -> 12 (LLVM 22.1.8)
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; d[t] = s[2t - (t & 3)] + s[t] for t < n.
define void @gather(ptr noalias %d, ptr noalias %s, i64 %n) {
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



; Returns how many of d[0..15] differ from s[2t - (t & 3)] + s[t] with s[i] = i.
define i32 @main() {
entry:
  %s = alloca [64 x i32], align 4
  %d = alloca [16 x i32], align 4
  br label %fill
fill:
  %i = phi i64 [ 0, %entry ], [ %i.next, %fill ]
  %p = getelementptr i32, ptr %s, i64 %i
  %iv = trunc i64 %i to i32
  store i32 %iv, ptr %p
  %i.next = add i64 %i, 1
  %filled = icmp eq i64 %i.next, 64
  br i1 %filled, label %run, label %fill
run:
  call void @gather(ptr %d, ptr %s, i64 16)
  br label %check
check:
  %t = phi i64 [ 0, %run ], [ %t.next, %check ]
  %bad = phi i32 [ 0, %run ], [ %bad.next, %check ]
  %q = getelementptr i32, ptr %d, i64 %t
  %got = load i32, ptr %q
  %t32 = trunc i64 %t to i32
  %tw = shl i32 %t32, 1
  %lo = and i32 %t32, 3
  %idx = sub i32 %tw, %lo
  %want = add i32 %idx, %t32
  %ne = icmp ne i32 %got, %want
  %inc = zext i1 %ne to i32
  %bad.next = add i32 %bad, %inc
  %t.next = add i64 %t, 1
  %checked = icmp eq i64 %t.next, 16
  br i1 %checked, label %out, label %check
out:
  ret i32 %bad.next
}
