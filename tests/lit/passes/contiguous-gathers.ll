; passes/ContiguousGathers.cpp: a gather whose active lanes turn out, at run time, to point at consecutive
; elements from lane 0 on (per-thread pointers read back from per-thread arrays) runs as a masked vector load.
; RUN: ptxforge-opt -passes=ptxforge-contiguous-gathers %s -S | FileCheck %s

; Lane I must point I * 4 bytes past lane 0, lane 0 must be on, and off lanes do not count.
; CHECK-LABEL: define <4 x float> @gather(
; CHECK:         [[FIRST:%.*]] = extractelement <4 x ptr addrspace(1)> %p, i64 0
; CHECK:         [[EXPECTED:%.*]] = add <4 x i64> {{%.*}}, <i64 0, i64 4, i64 8, i64 12>
; CHECK:         [[SAME:%.*]] = icmp eq <4 x i64> {{%.*}}, [[EXPECTED]]
; CHECK:         [[LANE0:%.*]] = extractelement <4 x i1> %m, i64 0
; CHECK:         [[OFF:%.*]] = xor <4 x i1> %m, splat (i1 true)
; CHECK:         [[OK:%.*]] = or <4 x i1> {{%.*}}, [[OFF]]
; CHECK:         [[ALL:%.*]] = call i1 @llvm.vector.reduce.and.v4i1(<4 x i1> [[OK]])
; CHECK:         [[CONTIGUOUS:%.*]] = and i1 [[ALL]], [[LANE0]]
; CHECK-NEXT:    br i1 [[CONTIGUOUS]], label %[[VEC:.*]], label %[[GATHER:.*]], !prof
; CHECK:       [[VEC]]:
; CHECK-NEXT:    [[LOADED:%.*]] = call <4 x float> @llvm.masked.load.v4f32.p1(ptr addrspace(1) align 4 [[FIRST]], <4 x i1> %m, <4 x float> zeroinitializer)
; CHECK:       [[GATHER]]:
; CHECK-NEXT:    [[GATHERED:%.*]] = call <4 x float> @llvm.masked.gather.v4f32.v4p1(
; CHECK:         phi <4 x float> [ [[LOADED]], %[[VEC]] ], [ [[GATHERED]], %[[GATHER]] ]
define <4 x float> @gather(<4 x ptr addrspace(1)> %p, <4 x i1> %m) {
  %v = call <4 x float> @llvm.masked.gather.v4f32.v4p1(<4 x ptr addrspace(1)> align 4 %p, <4 x i1> %m, <4 x float> zeroinitializer)
  ret <4 x float> %v
}

; An all-true mask (an unconditional thread loop): a plain vector store.
; CHECK-LABEL: define void @scatter(
; CHECK:         [[FIRST:%.*]] = extractelement <4 x ptr addrspace(1)> %p, i64 0
; CHECK:         [[ALL:%.*]] = call i1 @llvm.vector.reduce.and.v4i1(
; CHECK-NEXT:    br i1 [[ALL]], label %[[VEC:.*]], label %[[SCATTER:.*]], !prof
; CHECK:       [[VEC]]:
; CHECK-NEXT:    store <4 x float> %v, ptr addrspace(1) [[FIRST]], align 4
; CHECK:       [[SCATTER]]:
; CHECK-NEXT:    call void @llvm.masked.scatter.v4f32.v4p1(
define void @scatter(<4 x float> %v, <4 x ptr addrspace(1)> %p) {
  call void @llvm.masked.scatter.v4f32.v4p1(<4 x float> %v, <4 x ptr addrspace(1)> align 4 %p, <4 x i1> splat (i1 true))
  ret void
}
