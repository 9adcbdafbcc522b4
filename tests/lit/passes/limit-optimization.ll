; passes/LimitOptimization.cpp: a function over the instruction budget is compiled without optimization
; (optnone, noinline, no longer alwaysinline), and a missed-optimization remark says so; smaller ones stay. A
; replay-only function (a kernel's thread function beside its block function) is left unoptimized whatever its
; size, without a remark.
; RUN: ptxforge-opt -passes='ptxforge-limit-optimization<budget=3>' -pass-remarks-missed=ptxforge-budget %s -S 2>&1 | FileCheck %s

define i32 @small(i32 %a) alwaysinline {
  %b = add i32 %a, 1
  ret i32 %b
}

define i32 @big(i32 %a) alwaysinline {
  %b = add i32 %a, 1
  %c = mul i32 %b, %b
  %d = sub i32 %c, %a
  ret i32 %d
}

define i32 @replay(i32 %a) "ptxforge-replay-only" {
  %b = add i32 %a, 1
  ret i32 %b
}

; CHECK-NOT:  remark: {{.*}}replay
; CHECK:      remark: {{.*}}big is compiled without optimization: 4 instructions, more than the budget of 3
; CHECK-NOT:  remark: {{.*}}replay
; CHECK:      define i32 @small(i32 %a) [[INLINE:#[0-9]+]]
; CHECK:      define i32 @big(i32 %a) [[NONE:#[0-9]+]]
; CHECK:      define i32 @replay(i32 %a) [[REPLAY:#[0-9]+]]
; CHECK-DAG:  attributes [[INLINE]] = { alwaysinline }
; CHECK-DAG:  attributes [[NONE]] = { noinline optnone }
; CHECK-DAG:  attributes [[REPLAY]] = { noinline optnone "ptxforge-replay-only" }
