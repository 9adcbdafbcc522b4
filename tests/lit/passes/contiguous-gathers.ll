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

; An interleaved group: each lane copies two words through one pointer (ld.v2/cp.async of 8 bytes, vectorized
; across threads), at %p + 0 and %p + 4. It is tested once, for lane I at lane 0's + I * 8 bytes, and then runs
; as one load of both lanes' words (each lane's mask bit twice) split into the two vectors.
; CHECK-LABEL: define <4 x i32> @pair(
; CHECK:         [[FIRST:%.*]] = extractelement <4 x ptr> %p, i64 0
; CHECK:         [[EXPECTED:%.*]] = add <4 x i64> {{%.*}}, <i64 0, i64 8, i64 16, i64 24>
; CHECK:         br i1 {{%.*}}, label %[[WIDE:.*]], label %[[SLOW:.*]], !prof
; CHECK:       [[WIDE]]:
; CHECK:         [[M2:%.*]] = shufflevector <4 x i1> %m, <4 x i1> poison, <8 x i32> <i32 0, i32 0, i32 1, i32 1, i32 2, i32 2, i32 3, i32 3>
; CHECK:         [[ALL:%.*]] = call <8 x i32> @llvm.masked.load.v8i32.p0(ptr align 4 {{%.*}}, <8 x i1> [[M2]], <8 x i32> poison)
; CHECK:         shufflevector <8 x i32> [[ALL]], <8 x i32> poison, <4 x i32> <i32 0, i32 2, i32 4, i32 6>
; CHECK:         shufflevector <8 x i32> [[ALL]], <8 x i32> poison, <4 x i32> <i32 1, i32 3, i32 5, i32 7>
; CHECK:       [[SLOW]]:
; CHECK:         call <4 x i32> @llvm.masked.gather.v4i32.v4p0(
; CHECK:         call <4 x i32> @llvm.masked.gather.v4i32.v4p0(
; CHECK-NOT:     masked.gather
define <4 x i32> @pair(<4 x ptr> %p, <4 x i1> %m) {
  %a = call <4 x i32> @llvm.masked.gather.v4i32.v4p0(<4 x ptr> align 4 %p, <4 x i1> %m, <4 x i32> poison)
  %q = getelementptr i8, <4 x ptr> %p, i64 4
  %b = call <4 x i32> @llvm.masked.gather.v4i32.v4p0(<4 x ptr> align 4 %q, <4 x i1> %m, <4 x i32> poison)
  %s = add <4 x i32> %a, %b
  ret <4 x i32> %s
}

; The same for scatters (st.v2 of each lane's two words): one store of both vectors interleaved, lane by lane.
; CHECK-LABEL: define void @pair_store(
; CHECK:         br i1 {{%.*}}, label %[[WIDE:.*]], label %[[SLOW:.*]], !prof
; CHECK:       [[WIDE]]:
; CHECK:         [[BOTH:%.*]] = shufflevector <4 x i32> %a, <4 x i32> %b, <8 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7>
; CHECK:         [[LANES:%.*]] = shufflevector <8 x i32> [[BOTH]], <8 x i32> poison, <8 x i32> <i32 0, i32 4, i32 1, i32 5, i32 2, i32 6, i32 3, i32 7>
; CHECK:         call void @llvm.masked.store.v8i32.p0(<8 x i32> [[LANES]], ptr align 4 {{%.*}}, <8 x i1>
; CHECK:       [[SLOW]]:
; CHECK:         call void @llvm.masked.scatter.v4i32.v4p0(<4 x i32> %a,
; CHECK:         call void @llvm.masked.scatter.v4i32.v4p0(<4 x i32> %b,
define void @pair_store(<4 x i32> %a, <4 x i32> %b, <4 x ptr> %p, <4 x i1> %m) {
  call void @llvm.masked.scatter.v4i32.v4p0(<4 x i32> %a, <4 x ptr> align 4 %p, <4 x i1> %m)
  %q = getelementptr i8, <4 x ptr> %p, i64 4
  call void @llvm.masked.scatter.v4i32.v4p0(<4 x i32> %b, <4 x ptr> align 4 %q, <4 x i1> %m)
  ret void
}

; A store between the two loads may change what the second reads: no group, each gather tested alone.
; CHECK-LABEL: define <4 x i32> @split_by_store(
; CHECK-NOT:     masked.load.v8i32
; CHECK:         ret <4 x i32>
define <4 x i32> @split_by_store(<4 x ptr> %p, <4 x i1> %m, ptr %x) {
  %a = call <4 x i32> @llvm.masked.gather.v4i32.v4p0(<4 x ptr> align 4 %p, <4 x i1> %m, <4 x i32> poison)
  store i32 0, ptr %x
  %q = getelementptr i8, <4 x ptr> %p, i64 4
  %b = call <4 x i32> @llvm.masked.gather.v4i32.v4p0(<4 x ptr> align 4 %q, <4 x i1> %m, <4 x i32> poison)
  %s = add <4 x i32> %a, %b
  ret <4 x i32> %s
}

; A 16-byte copy a lane (cp.async, ld.v4 then st.v4): the stored group is the loaded group unchanged, so the wide
; store takes the wide load's vector (a phi with the fallback's gathers interleaved), not the four lane vectors
; de-interleaved from it and interleaved back.
; CHECK-LABEL: define void @copy16(
; CHECK:         [[WIDE:%[0-9]+]] = call <16 x i32> @llvm.masked.load.v16i32.p1(
; CHECK:         [[GROUP:%group]] = phi <16 x i32> [ [[WIDE]], %{{[0-9]+}} ], [ %{{[0-9]+}}, %{{[0-9]+}} ]
; CHECK:         call void @llvm.masked.store.v16i32.p0(<16 x i32> [[GROUP]],
; The fallback stores lane by lane, the members' own values.
; CHECK-COUNT-4: call void @llvm.masked.scatter.v4i32.v4p0(
define void @copy16(<4 x ptr addrspace(1)> %src, <4 x ptr> %dst, <4 x i1> %m) {
  %s1 = getelementptr i8, <4 x ptr addrspace(1)> %src, i64 4
  %s2 = getelementptr i8, <4 x ptr addrspace(1)> %src, i64 8
  %s3 = getelementptr i8, <4 x ptr addrspace(1)> %src, i64 12
  %d1 = getelementptr i8, <4 x ptr> %dst, i64 4
  %d2 = getelementptr i8, <4 x ptr> %dst, i64 8
  %d3 = getelementptr i8, <4 x ptr> %dst, i64 12
  %w0 = call <4 x i32> @llvm.masked.gather.v4i32.v4p1(<4 x ptr addrspace(1)> align 1 %src, <4 x i1> %m, <4 x i32> poison)
  %w1 = call <4 x i32> @llvm.masked.gather.v4i32.v4p1(<4 x ptr addrspace(1)> align 1 %s1, <4 x i1> %m, <4 x i32> poison)
  %w2 = call <4 x i32> @llvm.masked.gather.v4i32.v4p1(<4 x ptr addrspace(1)> align 1 %s2, <4 x i1> %m, <4 x i32> poison)
  %w3 = call <4 x i32> @llvm.masked.gather.v4i32.v4p1(<4 x ptr addrspace(1)> align 1 %s3, <4 x i1> %m, <4 x i32> poison)
  call void @llvm.masked.scatter.v4i32.v4p0(<4 x i32> %w0, <4 x ptr> align 1 %dst, <4 x i1> %m)
  call void @llvm.masked.scatter.v4i32.v4p0(<4 x i32> %w1, <4 x ptr> align 1 %d1, <4 x i1> %m)
  call void @llvm.masked.scatter.v4i32.v4p0(<4 x i32> %w2, <4 x ptr> align 1 %d2, <4 x i1> %m)
  call void @llvm.masked.scatter.v4i32.v4p0(<4 x i32> %w3, <4 x ptr> align 1 %d3, <4 x i1> %m)
  ret void
}

; Stored under another mask, the group's off lanes would differ (the load's pass-through): interleaved again.
; CHECK-LABEL: define void @copy16_other_mask(
; CHECK-NOT:     %group
; CHECK:         ret void
define void @copy16_other_mask(<4 x ptr addrspace(1)> %src, <4 x ptr> %dst, <4 x i1> %m, <4 x i1> %n) {
  %s1 = getelementptr i8, <4 x ptr addrspace(1)> %src, i64 4
  %d1 = getelementptr i8, <4 x ptr> %dst, i64 4
  %w0 = call <4 x i32> @llvm.masked.gather.v4i32.v4p1(<4 x ptr addrspace(1)> align 1 %src, <4 x i1> %m, <4 x i32> zeroinitializer)
  %w1 = call <4 x i32> @llvm.masked.gather.v4i32.v4p1(<4 x ptr addrspace(1)> align 1 %s1, <4 x i1> %m, <4 x i32> zeroinitializer)
  call void @llvm.masked.scatter.v4i32.v4p0(<4 x i32> %w0, <4 x ptr> align 1 %dst, <4 x i1> %n)
  call void @llvm.masked.scatter.v4i32.v4p0(<4 x i32> %w1, <4 x ptr> align 1 %d1, <4 x i1> %n)
  ret void
}
