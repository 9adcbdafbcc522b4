; passes/PrefetchSteppedPointers.cpp: a gather through per-thread pointers the kernel's loop steps by S and
; stores back (sgemm's tile pointers) first prefetches lane 0's and the last lane's p + S, the lines the same
; threads read on the next trip.
; RUN: ptxforge-opt -passes=ptxforge-prefetch-stepped-pointers %s -S | FileCheck %s

; CHECK-LABEL: define <4 x i32> @stepped(
; CHECK:         %ptrs = inttoptr <4 x i64> %next to <4 x ptr addrspace(1)>
; CHECK-NEXT:    [[P0:%.*]] = extractelement <4 x ptr addrspace(1)> %ptrs, i64 0
; CHECK-NEXT:    [[N0:%.*]] = getelementptr i8, ptr addrspace(1) [[P0]], i64 %s
; CHECK-NEXT:    call void @llvm.prefetch.p1(ptr addrspace(1) [[N0]], i32 0, i32 3, i32 1)
; CHECK-NEXT:    [[P3:%.*]] = extractelement <4 x ptr addrspace(1)> %ptrs, i64 3
; CHECK-NEXT:    [[N3:%.*]] = getelementptr i8, ptr addrspace(1) [[P3]], i64 %s
; CHECK-NEXT:    call void @llvm.prefetch.p1(ptr addrspace(1) [[N3]], i32 0, i32 3, i32 1)
; CHECK-NEXT:    %v = call <4 x i32> @llvm.masked.gather.v4i32.v4p1(
define <4 x i32> @stepped(ptr %slots, <4 x i64> %p, i64 %s, <4 x i1> %m) {
  %ins = insertelement <4 x i64> poison, i64 %s, i64 0
  %step = shufflevector <4 x i64> %ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %next = add <4 x i64> %p, %step
  store <4 x i64> %next, ptr %slots, align 8
  %ptrs = inttoptr <4 x i64> %next to <4 x ptr addrspace(1)>
  %v = call <4 x i32> @llvm.masked.gather.v4i32.v4p1(<4 x ptr addrspace(1)> align 4 %ptrs, <4 x i1> %m, <4 x i32> poison)
  ret <4 x i32> %v
}

; A pointer that is not stored back is not the loop's stepped pointer: no prefetch.
; CHECK-LABEL: define <4 x i32> @unstepped(
; CHECK-NOT:     @llvm.prefetch
; CHECK:         ret <4 x i32>
define <4 x i32> @unstepped(<4 x i64> %p, i64 %s, <4 x i1> %m) {
  %ins = insertelement <4 x i64> poison, i64 %s, i64 0
  %step = shufflevector <4 x i64> %ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %next = add <4 x i64> %p, %step
  %ptrs = inttoptr <4 x i64> %next to <4 x ptr addrspace(1)>
  %v = call <4 x i32> @llvm.masked.gather.v4i32.v4p1(<4 x ptr addrspace(1)> align 4 %ptrs, <4 x i1> %m, <4 x i32> poison)
  ret <4 x i32> %v
}
