; passes/UnmaskFullVectors.cpp: a vectorized thread loop's guard (`if (i < n)`) masks its every load and store.
; The stretch of a block from its first masked access to its last is versioned once: a copy with plain
; accesses runs when every mask is all true; the masked version's accesses each get a plain path for an all-true
; mask and none for an all-false one.
; RUN: ptxforge-opt -passes=ptxforge-unmask-full-vectors %s -S | FileCheck %s

define void @add(ptr addrspace(1) %a, ptr addrspace(1) %c, <4 x i1> %m) {
  %x = call <4 x float> @llvm.masked.load.v4f32.p1(ptr addrspace(1) align 4 %a, <4 x i1> %m, <4 x float> poison)
  %y = fadd <4 x float> %x, %x
  call void @llvm.masked.store.v4f32.p1(<4 x float> %y, ptr addrspace(1) align 4 %c, <4 x i1> %m)
  ret void
}

; The whole stretch, once, when the mask is all true: plain load and store.
; CHECK-LABEL: define void @add(
; CHECK:         [[ALL:%.*]] = call i1 @llvm.vector.reduce.and.v4i1(<4 x i1> %m)
; CHECK-NEXT:    br i1 [[ALL]], label %[[FULL:.*]], label %[[MASKED:.*]], !prof [[LIKELY:![0-9]+]]
; CHECK:       [[FULL]]:
; CHECK-NEXT:    [[X:%.*]] = load <4 x float>, ptr addrspace(1) %a, align 4
; CHECK-NEXT:    [[Y:%.*]] = fadd <4 x float> [[X]], [[X]]
; CHECK-NEXT:    store <4 x float> [[Y]], ptr addrspace(1) %c, align 4
; Otherwise each access: plain when its mask is all true, masked when some lanes are on, skipped when none is.
; CHECK:       [[MASKED]]:
; CHECK:         call i1 @llvm.vector.reduce.and.v4i1(<4 x i1> %m)
; CHECK:         load <4 x float>, ptr addrspace(1) %a, align 4
; CHECK:         call i1 @llvm.vector.reduce.or.v4i1(<4 x i1> %m)
; CHECK:         call <4 x float> @llvm.masked.load.v4f32.p1(ptr addrspace(1) align 4 %a, <4 x i1> %m, <4 x float> poison)
; CHECK:         call i1 @llvm.vector.reduce.and.v4i1(<4 x i1> %m)
; CHECK:         store <4 x float> %y, ptr addrspace(1) %c, align 4
; CHECK:         call i1 @llvm.vector.reduce.or.v4i1(<4 x i1> %m)
; CHECK:         call void @llvm.masked.store.v4f32.p1(<4 x float> %y, ptr addrspace(1) align 4 %c, <4 x i1> %m)
; CHECK:       [[LIKELY]] = !{!"branch_weights", i32 1048575, i32 1}
