; passes/LaneSequences.cpp: a vector of thread ids built lane by lane (tid + 0, tid + 1, ...), as the loop
; vectorizer builds them on AVX2 targets, becomes one splat plus <0, 1, 2, 3>.
; RUN: ptxforge-opt -passes=ptxforge-lane-sequences %s -S | FileCheck %s

; CHECK-LABEL: define <4 x i32> @ids(
; CHECK-NEXT:    [[SPLATINSERT:%.*]] = insertelement <4 x i32> poison, i32 %tid, i64 0
; CHECK-NEXT:    [[SPLAT:%.*]] = shufflevector <4 x i32> [[SPLATINSERT]], <4 x i32> poison, <4 x i32> zeroinitializer
; CHECK-NEXT:    [[IDS:%.*]] = add <4 x i32> [[SPLAT]], <i32 0, i32 1, i32 2, i32 3>
; CHECK-NEXT:    ret <4 x i32> [[IDS]]
define <4 x i32> @ids(i32 %tid) {
  %t1 = add i32 %tid, 1
  %t2 = add i32 %tid, 2
  %t3 = add i32 %tid, 3
  %v0 = insertelement <4 x i32> poison, i32 %tid, i64 0
  %v1 = insertelement <4 x i32> %v0, i32 %t1, i64 1
  %v2 = insertelement <4 x i32> %v1, i32 %t2, i64 2
  %v3 = insertelement <4 x i32> %v2, i32 %t3, i64 3
  ret <4 x i32> %v3
}

; Lanes that are not one step apart stay as they are.
; CHECK-LABEL: define <4 x i32> @gaps(
; CHECK:         insertelement <4 x i32> {{.*}}, i32 %t2, i64 1
; CHECK:         ret <4 x i32>
define <4 x i32> @gaps(i32 %tid) {
  %t2 = add i32 %tid, 2
  %t4 = add i32 %tid, 4
  %t6 = add i32 %tid, 6
  %v0 = insertelement <4 x i32> poison, i32 %tid, i64 0
  %v1 = insertelement <4 x i32> %v0, i32 %t2, i64 1
  %v2 = insertelement <4 x i32> %v1, i32 %t4, i64 2
  %v3 = insertelement <4 x i32> %v2, i32 %t6, i64 3
  ret <4 x i32> %v3
}
