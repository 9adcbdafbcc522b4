; passes/StreamingStores.cpp: a block function's plain full-vector .global store in a memory-bound loop gets a
; streaming (non-temporal) path, taken when the vector is aligned and the launch (%ntid * %nctaid threads, read
; from the context, argument 0) writes at least the threshold through it; an sfence precedes the return.
; The store's .global scope comes from ptxforge-memory-scopes, as in the compile pipeline.
; RUN: ptxforge-opt -mcpu=x86-64-v4 -passes='ptxforge-memory-scopes,function(ptxforge-streaming-stores<threshold=1024>)' %s -S | FileCheck %s

; 1024 bytes at 4 bytes per thread (a lane of the vector): streamed from 256 threads of the launch on.
; CHECK-LABEL: define void @__ptx_block_fill(
; CHECK:         %stream = icmp uge i64 {{%.*}}, 256
; CHECK:       loop:
; CHECK:         [[ADDR:%.*]] = ptrtoint ptr addrspace(1) %p to i64
; CHECK-NEXT:    [[LOW:%.*]] = and i64 [[ADDR]], 31
; CHECK-NEXT:    [[ALIGNED:%.*]] = icmp eq i64 [[LOW]], 0
; CHECK-NEXT:    [[TAKE:%.*]] = and i1 %stream, [[ALIGNED]]
; CHECK-NEXT:    br i1 [[TAKE]], label %[[NT:.*]], label %[[PLAIN:.*]]
; CHECK:       [[NT]]:
; CHECK-NEXT:    store <8 x float> splat (float 1.000000e+00), ptr addrspace(1) %p, align 32, {{.*}}!nontemporal
; CHECK:       [[PLAIN]]:
; CHECK-NEXT:    store <8 x float> splat (float 1.000000e+00), ptr addrspace(1) %p, align 4, !alias.scope
; CHECK-NOT:     !nontemporal
; CHECK:       done:
; CHECK-NEXT:    call void @llvm.x86.sse.sfence()
; CHECK-NEXT:    ret void
define void @__ptx_block_fill(ptr %ctx, ptr addrspace(1) %out, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %p = getelementptr <8 x float>, ptr addrspace(1) %out, i64 %i
  store <8 x float> splat (float 1.0), ptr addrspace(1) %p, align 4, !ptxforge.access !0
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}

; Not a block function (no thread context to count the launch's threads by): its stores stay.
; CHECK-LABEL: define void @helper(
; CHECK-NOT:     !nontemporal
; CHECK-NOT:     sfence
; CHECK:         ret void
define void @helper(ptr %ctx, ptr addrspace(1) %out, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %p = getelementptr <8 x float>, ptr addrspace(1) %out, i64 %i
  store <8 x float> splat (float 1.0), ptr addrspace(1) %p, align 4, !ptxforge.access !0
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}

!0 = !{i32 1}
