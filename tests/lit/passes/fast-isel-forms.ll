; passes/FastISelForms.cpp: what x86's fast instruction selector hands to SelectionDAG becomes forms it selects,
; with the same results: C library calls for fma and roundeven, compare-and-select for integer min/max and
; minnum/maxnum, bit operations for fabs/copysign, half and bfloat conversions on their bits.
; RUN: ptxforge-opt -passes='function(ptxforge-fast-isel-forms)' %s -S | FileCheck %s
; RUN: ptxforge-opt -passes='function(ptxforge-fast-isel-forms)' %s -S \
; RUN:   | llc -O0 -mtriple=x86_64-pc-linux-gnu -mcpu=x86-64-v4 -pass-remarks-missed=sdagisel -o /dev/null 2>&1 \
; RUN:   | FileCheck %s --check-prefix=ISEL

; Only the vector fma and the volatile half are left to SelectionDAG.
; ISEL-NOT: FastISel missed
; ISEL:     FastISel missed call: {{.*}}@llvm.fma.v4f32
; ISEL-NOT: FastISel missed
; ISEL:     FastISel missed: %r = fpext half %h to float (in function: volatile_half)
; ISEL-NOT: FastISel missed

; CHECK-LABEL: define float @fma32(
; CHECK-NEXT:    %r = call float @fmaf(float %a, float %b, float %c)
; CHECK-NEXT:    ret float %r
define float @fma32(float %a, float %b, float %c) {
  %r = call float @llvm.fma.f32(float %a, float %b, float %c)
  ret float %r
}

; CHECK-LABEL: define double @fma64(
; CHECK-NEXT:    %r = call double @fma(double %a, double %b, double %c)
define double @fma64(double %a, double %b, double %c) {
  %r = call double @llvm.fma.f64(double %a, double %b, double %c)
  ret double %r
}

; A vector fma stays: calls element by element would trade one fallback for several calls.
; CHECK-LABEL: define <4 x float> @fma_vector(
; CHECK-NEXT:    call <4 x float> @llvm.fma.v4f32
define <4 x float> @fma_vector(<4 x float> %a, <4 x float> %b, <4 x float> %c) {
  %r = call <4 x float> @llvm.fma.v4f32(<4 x float> %a, <4 x float> %b, <4 x float> %c)
  ret <4 x float> %r
}

; CHECK-LABEL: define float @roundeven32(
; CHECK-NEXT:    %r = call float @roundevenf(float %a)
define float @roundeven32(float %a) {
  %r = call float @llvm.roundeven.f32(float %a)
  ret float %r
}

; CHECK-LABEL: define i32 @umax(
; CHECK-NEXT:    [[C:%.*]] = icmp ugt i32 %a, %b
; CHECK-NEXT:    %r = select i1 [[C]], i32 %a, i32 %b
define i32 @umax(i32 %a, i32 %b) {
  %r = call i32 @llvm.umax.i32(i32 %a, i32 %b)
  ret i32 %r
}

; CHECK-LABEL: define i64 @smin(
; CHECK-NEXT:    [[C:%.*]] = icmp slt i64 %a, %b
; CHECK-NEXT:    %r = select i1 [[C]], i64 %a, i64 %b
define i64 @smin(i64 %a, i64 %b) {
  %r = call i64 @llvm.smin.i64(i64 %a, i64 %b)
  ret i64 %r
}

; CHECK-LABEL: define float @fabs32(
; CHECK-NEXT:    [[I:%.*]] = bitcast float %a to i32
; CHECK-NEXT:    [[M:%.*]] = and i32 [[I]], 2147483647
; CHECK-NEXT:    %r = bitcast i32 [[M]] to float
define float @fabs32(float %a) {
  %r = call float @llvm.fabs.f32(float %a)
  ret float %r
}

; CHECK-LABEL: define double @copysign64(
; CHECK-NEXT:    [[A:%.*]] = bitcast double %a to i64
; CHECK-NEXT:    [[M:%.*]] = and i64 [[A]], 9223372036854775807
; CHECK-NEXT:    [[B:%.*]] = bitcast double %b to i64
; CHECK-NEXT:    [[S:%.*]] = and i64 [[B]], -9223372036854775808
; CHECK-NEXT:    [[R:%.*]] = or i64 [[M]], [[S]]
; CHECK-NEXT:    %r = bitcast i64 [[R]] to double
define double @copysign64(double %a, double %b) {
  %r = call double @llvm.copysign.f64(double %a, double %b)
  ret double %r
}

; x86's minnum: b where b < a, else a; b where a is a NaN.
; CHECK-LABEL: define float @minnum32(
; CHECK-NEXT:    [[LT:%.*]] = fcmp olt float %b, %a
; CHECK-NEXT:    [[MIN:%.*]] = select i1 [[LT]], float %b, float %a
; CHECK-NEXT:    [[NAN:%.*]] = fcmp uno float %a, %a
; CHECK-NEXT:    %r = select i1 [[NAN]], float %b, float [[MIN]]
define float @minnum32(float %a, float %b) {
  %r = call float @llvm.minnum.f32(float %a, float %b)
  ret float %r
}

; CHECK-LABEL: define double @maxnum64(
; CHECK-NEXT:    [[GT:%.*]] = fcmp ogt double %b, %a
define double @maxnum64(double %a, double %b) {
  %r = call double @llvm.maxnum.f64(double %a, double %b)
  ret double %r
}

; A float select on a double compare selects the floats' bits.
; CHECK-LABEL: define float @select_other_compare(
; CHECK-NEXT:    %c = fcmp oeq double %d, 0.000000e+00
; CHECK-NEXT:    [[X:%.*]] = bitcast float %x to i32
; CHECK-NEXT:    [[S:%.*]] = select i1 %c, i32 -2147483648, i32 [[X]]
; CHECK-NEXT:    %r = bitcast i32 [[S]] to float
define float @select_other_compare(double %d, float %x) {
  %c = fcmp oeq double %d, 0.0
  %r = select i1 %c, float -0.0, float %x
  ret float %r
}

; A loaded bfloat is read as an i16 (once for both readers) and widened by a shift; the bfloat load goes.
; CHECK-LABEL: define float @bfloat_to_float(
; CHECK-NEXT:    [[H:%.*]] = load i16, ptr %p, align 2, !tbaa
; CHECK-NEXT:    [[W:%.*]] = zext i16 [[H]] to i32
; CHECK-NEXT:    [[S:%.*]] = shl i32 [[W]], 16
; CHECK-NEXT:    %r = bitcast i32 [[S]] to float
; CHECK-NEXT:    [[W2:%.*]] = zext i16 [[H]] to i32
; CHECK-NEXT:    [[S2:%.*]] = shl i32 [[W2]], 16
; CHECK-NEXT:    %r2 = bitcast i32 [[S2]] to float
; CHECK-NEXT:    %sum = fadd float %r, %r2
; CHECK-NEXT:    ret float %sum
define float @bfloat_to_float(ptr %p) {
  %h = load bfloat, ptr %p, align 2, !tbaa !0
  %r = fpext bfloat %h to float
  %r2 = fpext bfloat %h to float
  %sum = fadd float %r, %r2
  ret float %sum
}

; A half widens on its bits: normal numbers rebiased, infinities and NaNs (made quiet) to float's, subnormals
; through an exact multiply. To double, through float.
; CHECK-LABEL: define double @half_to_double(
; CHECK-NEXT:    [[H:%.*]] = zext i16 %x to i32
; CHECK:         add i32 {{%.*}}, 939524096
; CHECK:         select i1 {{%.*}}, i32 4194304, i32 0
; CHECK:         [[M:%.*]] = sitofp i32 {{%.*}} to float
; CHECK-NEXT:    fmul float [[M]], 0x3E70000000000000
; CHECK:         [[F:%.*]] = bitcast i32 {{%.*}} to float
; CHECK-NEXT:    %r = fpext float [[F]] to double
; CHECK-NEXT:    ret double %r
define double @half_to_double(i16 %x) {
  %h = bitcast i16 %x to half
  %r = fpext half %h to double
  ret double %r
}

; A float rounded to half and read as bits: rounded on the bits (nearest-even), subnormals through a float add.
; CHECK-LABEL: define i16 @float_to_half_bits(
; CHECK-NEXT:    [[I:%.*]] = bitcast float %x to i32
; CHECK:         fadd float {{%.*}}, 5.000000e-01
; CHECK:         %r = trunc i32 {{%.*}} to i16
; CHECK-NEXT:    ret i16 %r
define i16 @float_to_half_bits(float %x) {
  %h = fptrunc float %x to half
  %r = bitcast half %h to i16
  ret i16 %r
}

; A volatile half load stays as it is.
; CHECK-LABEL: define float @volatile_half(
; CHECK-NEXT:    %h = load volatile half, ptr %p
; CHECK-NEXT:    %r = fpext half %h to float
define float @volatile_half(ptr %p) {
  %h = load volatile half, ptr %p, align 2
  %r = fpext half %h to float
  ret float %r
}

!0 = !{!1, !1, i64 0}
!1 = !{!"half", !2}
!2 = !{!"tbaa root"}
