; passes/WarpVectorize.cpp, stream rounds: a grid-stride loop's warps would each walk the whole array, one warp
; after another, every visit 1 KiB (256 threads of i32) a grid's width apart. Instead each warp of a batch (up to
; 64: a flat block group's consecutive blocks, codegen/lib/Lowering.cpp) runs up to the loop and parks there,
; keeping lane 0's index and the block it stores into the fault context; rounds then run one full-copy trip of
; every parked warp after another (a round walks the batch's elements side by side), and a warp whose lanes
; start to leave finishes the loop in its general copy and leaves the parked set. The thread's block
; (udiv of x' by %ntid.x, marked by the lowering) is uniform across a warp: one scalar division.
; RUN: ptxforge-opt -passes='ptxforge-warp-vectorize<lanes=16>' %s -S | FileCheck %s

; CHECK-LABEL: define void @__ptx_block_stream(
; CHECK:       entry:
; CHECK:         %stream.state = alloca [64 x i32]
; CHECK:         %stream.id = alloca [64 x i32]
; CHECK:       stream.batch:
; CHECK:       stream.warp:
; CHECK:         %stream.piece = phi i32 [ 0, %stream.batch ], [ [[NEXTPIECE:%.*]], %{{.*}} ]
; CHECK:         [[G:%.*]] = udiv i32 %warp.base, %nx, !ptxforge.block_of_thread
; CHECK-NEXT:    [[BLK:%.*]] = add i32 %first, [[G]]
; CHECK-NEXT:    store i32 [[BLK]], ptr %ctx
; Every lane enters the loop, its index consecutive: the warp parks.
; CHECK:       warp.park:
; CHECK-NEXT:    [[S:%.*]] = getelementptr inbounds [64 x i32], ptr %stream.state, i32 0, i32 %stream.piece
; CHECK-NEXT:    store i32 %i0{{[0-9]*}}, ptr [[S]]
; CHECK-NEXT:    [[ID:%.*]] = getelementptr inbounds [64 x i32], ptr %stream.id, i32 0, i32 %stream.piece
; CHECK-NEXT:    store i32 [[BLK]], ptr [[ID]]
; CHECK:         or i64 %stream.parked.0,
; CHECK:         [[NEXTPIECE]] = add i32 %stream.piece, 1
; CHECK:         br i1 {{%.*}}, label %stream.warp, label %stream.rounds
; A round: each parked warp in turn (lowest bit first), its state and block back in place, one trip.
; CHECK:       stream.round:
; CHECK:         br i1 {{%.*}}, label %stream.trip, label %stream.next
; CHECK:       stream.trip:
; CHECK:         [[K64:%.*]] = call i64 @llvm.cttz.i64(i64 %stream.left, i1 true)
; CHECK-NEXT:    [[K:%.*]] = trunc i64 [[K64]] to i32
; CHECK-NEXT:    [[SK:%.*]] = getelementptr inbounds [64 x i32], ptr %stream.state, i32 0, i32 [[K]]
; CHECK-NEXT:    [[I:%.*]] = load i32, ptr [[SK]]
; CHECK-NEXT:    [[IDK:%.*]] = getelementptr inbounds [64 x i32], ptr %stream.id, i32 0, i32 [[K]]
; CHECK-NEXT:    [[B:%.*]] = load i32, ptr [[IDK]]
; CHECK-NEXT:    store i32 [[B]], ptr %ctx
; CHECK:       stream.trip.next:
; CHECK:         and i64 %stream.left,
; CHECK:       copy.warp.full{{[0-9]+}}:
; CHECK-NOT:     phi <256 x i1>
; CHECK:       consecutive{{[0-9]+}}:
; CHECK-NEXT:    load <256 x i32>
; CHECK:       consecutive{{[0-9]+}}:
; CHECK-NEXT:    store <256 x i32>
; CHECK:         [[INEXT:%.*]] = add nsw i32 {{%.*}}, %stride
; A warp that finished leaves the parked set; one that goes round again keeps its next index.
; CHECK:       copy.warp.done{{[0-9]+}}:
; CHECK:         xor i64 {{%.*}}, -1
; CHECK:       stream.yield:
; CHECK-NEXT:    [[SY:%.*]] = getelementptr inbounds [64 x i32], ptr %stream.state, i32 0, i32 [[K]]
; CHECK-NEXT:    store i32 [[INEXT]], ptr [[SY]]

; The thread stores to memory after its loop: that store must follow the loop's, so the warps do not park.
; CHECK-LABEL: define void @__ptx_block_store_after(
; CHECK-NOT:   stream.
; CHECK:       warp.lockstep:
; CHECK-NOT:   stream.
; A uniform store in the header to memory the kernel can see (not the context, argument 0) runs once, in the
; warp's own turn: the rounds do not store it again.
; CHECK-LABEL: define void @__ptx_block_stream_visible(
; CHECK:       stream.warp:
; CHECK:         store i32 {{%.*}}, ptr %seen
; CHECK:       stream.trip:
; CHECK-NOT:     ptr %seen
; CHECK:       stream.yield:

define void @__ptx_block_stream(ptr noalias %ctx, ptr noalias %out, ptr noalias %in, i32 %ntid, i32 %first, i32 %nx, i32 %stride, i32 %n) {
entry:
  %empty = icmp eq i32 %ntid, 0
  br i1 %empty, label %exit, label %x

x:
  %tx = phi i32 [ 0, %entry ], [ %tx.1, %latch ]
  %g = udiv i32 %tx, %nx, !ptxforge.block_of_thread !3
  %blk = add i32 %first, %g
  store i32 %blk, ptr %ctx, align 4
  %gnx = mul nuw nsw i32 %g, %nx
  %t = sub nuw nsw i32 %tx, %gnx
  %bnx = mul i32 %blk, %nx
  %i0 = add nsw i32 %bnx, %t
  %enter = icmp slt i32 %i0, %n
  br i1 %enter, label %copy, label %latch

copy:
  %i = phi i32 [ %i0, %x ], [ %i.next, %copy ]
  %i64 = sext i32 %i to i64
  %src = getelementptr inbounds i32, ptr %in, i64 %i64
  %v = load i32, ptr %src, align 4
  %dst = getelementptr inbounds i32, ptr %out, i64 %i64
  store i32 %v, ptr %dst, align 4
  %i.next = add nsw i32 %i, %stride
  %more = icmp slt i32 %i.next, %n
  br i1 %more, label %copy, label %latch

latch:
  %tx.1 = add nuw i32 %tx, 1
  %last = icmp eq i32 %tx.1, %ntid
  br i1 %last, label %exit, label %x, !llvm.loop !0

exit:
  ret void
}

define void @__ptx_block_store_after(ptr noalias %out, ptr noalias %in, ptr noalias %done, i32 %ntid, i32 %base, i32 %stride, i32 %n) {
entry:
  %empty = icmp eq i32 %ntid, 0
  br i1 %empty, label %exit, label %x

x:
  %tx = phi i32 [ 0, %entry ], [ %tx.1, %latch ]
  %i0 = add nsw i32 %base, %tx
  %first = icmp slt i32 %i0, %n
  br i1 %first, label %copy, label %latch

copy:
  %i = phi i32 [ %i0, %x ], [ %i.next, %copy ]
  %i64 = sext i32 %i to i64
  %src = getelementptr inbounds i32, ptr %in, i64 %i64
  %v = load i32, ptr %src, align 4
  %dst = getelementptr inbounds i32, ptr %out, i64 %i64
  store i32 %v, ptr %dst, align 4
  %i.next = add nsw i32 %i, %stride
  %more = icmp slt i32 %i.next, %n
  br i1 %more, label %copy, label %copied

copied:
  %tx64 = zext i32 %tx to i64
  %flag = getelementptr inbounds i8, ptr %done, i64 %tx64
  store i8 1, ptr %flag, align 1
  br label %latch

latch:
  %tx.1 = add nuw i32 %tx, 1
  %last = icmp eq i32 %tx.1, %ntid
  br i1 %last, label %exit, label %x, !llvm.loop !1

exit:
  ret void
}

define void @__ptx_block_stream_visible(ptr noalias %ctx, ptr noalias %seen, ptr noalias %out, i32 %ntid, i32 %base, i32 %stride, i32 %n) {
entry:
  %empty = icmp eq i32 %ntid, 0
  br i1 %empty, label %exit, label %x

x:
  %tx = phi i32 [ 0, %entry ], [ %tx.1, %latch ]
  store i32 %base, ptr %seen, align 4
  %i0 = add nsw i32 %base, %tx
  %enter = icmp slt i32 %i0, %n
  br i1 %enter, label %copy, label %latch

copy:
  %i = phi i32 [ %i0, %x ], [ %i.next, %copy ]
  %i64 = sext i32 %i to i64
  %dst = getelementptr inbounds i32, ptr %out, i64 %i64
  store i32 %i, ptr %dst, align 4
  %i.next = add nsw i32 %i, %stride
  %more = icmp slt i32 %i.next, %n
  br i1 %more, label %copy, label %latch

latch:
  %tx.1 = add nuw i32 %tx, 1
  %last = icmp eq i32 %tx.1, %ntid
  br i1 %last, label %exit, label %x, !llvm.loop !4

exit:
  ret void
}

!0 = distinct !{!0, !2}
!1 = distinct !{!1, !2}
!2 = !{!"ptxforge.thread.loop"}
!3 = !{}
!4 = distinct !{!4, !2}
