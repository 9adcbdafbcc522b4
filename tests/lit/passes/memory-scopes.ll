; passes/MemoryScopes.cpp: the lowering's marks of each access's memory class become alias scopes, so that
; .global, .shared and ptxforge's own memory are disjoint for LLVM, and ld.global.nc reads alias no write.
; RUN: ptxforge-opt -passes=ptxforge-memory-scopes %s -S | FileCheck %s

; CHECK-LABEL: define void @copy(
; CHECK-NEXT:    load float, ptr addrspace(1) %g, align 4, !alias.scope [[GLOBAL:![0-9]+]], !noalias [[NOT_GLOBAL:![0-9]+]]
; CHECK-NEXT:    store float %v, ptr %shared, align 4, !alias.scope [[SHARED:![0-9]+]], !noalias [[NOT_SHARED:![0-9]+]]
; CHECK-NEXT:    load float, ptr addrspace(1) %nc, align 4, !alias.scope [[GLOBAL_NC:![0-9]+]], !noalias [[NOT_GLOBAL]]
; CHECK-NEXT:    store float %w, ptr %slot, align 4, !alias.scope [[INTERNAL:![0-9]+]], !noalias [[NOT_INTERNAL:![0-9]+]]
; CHECK-NOT:     !ptxforge.access
; CHECK:       [[GLOBAL]] = !{[[G:![0-9]+]]}
; CHECK-NEXT:  [[G]] = distinct !{[[G]], [[SPACE:![0-9]+]], !"ptx.global"}
; CHECK-NEXT:  [[SPACE]] = distinct !{[[SPACE]], !"ptx.space"}
; CHECK-NEXT:  [[NOT_GLOBAL]] = !{[[S:![0-9]+]], [[I:![0-9]+]]}
; CHECK-NEXT:  [[S]] = distinct !{[[S]], [[SPACE]], !"ptx.shared"}
; CHECK-NEXT:  [[I]] = distinct !{[[I]], [[SPACE]], !"ptxforge.internal"}
; CHECK-NEXT:  [[SHARED]] = !{[[S]]}
; Every write, the .shared store too, is disjoint from the read-only (.nc) load.
; CHECK-NEXT:  [[NOT_SHARED]] = !{[[G]], [[I]], [[NC:![0-9]+]]}
; CHECK-NEXT:  [[NC]] = distinct !{[[NC]], {{![0-9]+}}, !"ptx.nc"}
; CHECK:       [[GLOBAL_NC]] = !{[[G]], [[NC]]}
; CHECK-NEXT:  [[INTERNAL]] = !{[[I]]}
; CHECK-NEXT:  [[NOT_INTERNAL]] = !{[[S]], [[G]], [[NC]]}
define void @copy(ptr addrspace(1) %g, ptr %shared, ptr %slot, ptr addrspace(1) %nc) {
  %v = load float, ptr addrspace(1) %g, align 4, !ptxforge.access !1
  store float %v, ptr %shared, align 4, !ptxforge.access !0
  %w = load float, ptr addrspace(1) %nc, align 4, !ptxforge.access !1, !ptxforge.readonly !4
  store float %w, ptr %slot, align 4, !ptxforge.access !3
  ret void
}

!0 = !{i32 0}
!1 = !{i32 1}
!3 = !{i32 3}
!4 = !{}
