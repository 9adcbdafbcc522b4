; passes/PointerProvenance.cpp: a kernel's 64-bit parameter is loaded as a pointer, and an address computed from
; it as an integer (inttoptr of parameter + offset) becomes a getelementptr based on that pointer, so alias
; analysis and SCEV see where the access points.
; RUN: ptxforge-opt -passes=ptxforge-pointer-provenance %s -S | FileCheck %s

; CHECK-LABEL: define void @kernel(
; CHECK-NEXT:    [[A:%.*]] = load ptr addrspace(1), ptr %params, align 8
; CHECK:         [[OFFSET:%.*]] = sub i64 %addr, {{%.*}}
; CHECK-NEXT:    [[P:%.*]] = getelementptr nusw i8, ptr addrspace(1) [[A]], i64 [[OFFSET]]
; CHECK-NEXT:    store float 1.000000e+00, ptr addrspace(1) [[P]], align 4
; CHECK-NOT:     inttoptr
define void @kernel(ptr %ctx, ptr noalias readonly %params, i64 %i) {
  %a = load i64, ptr %params, align 8
  %off = shl i64 %i, 2
  %addr = add i64 %a, %off
  %p = inttoptr i64 %addr to ptr addrspace(1)
  store float 1.0, ptr addrspace(1) %p, align 4
  ret void
}
