; passes/WarpRendezvous.cpp for matrix collectives (Markers.h: CutOperands::Buffer): the thread keeps its fragment
; registers in a buffer of its own (the lowering's scratch alloca), and at the cut deposits the buffer's address
; (warp.buffer), the register counts of mma (warp.b) and a full member mask (the collective is the whole warp's),
; for the dispatcher to compute the warp's product in place; after the edge it reads D from the buffer. ldmatrix
; deposits its row address as the value, movmatrix its register, whose result comes back in warp.out.
; RUN: ptxforge-opt -passes=ptxforge-warp-rendezvous %s -S | FileCheck %s
; A buffer that is not the thread's own alloca breaks the thread contract: the function stays as it is.
; RUN: sed 's/ptr %0, i32 2375953, i32 67371524, ptr %regs)/ptr %0, i32 2375953, i32 67371524, ptr %1)/' %s \
; RUN:   | ptxforge-opt -passes=ptxforge-warp-rendezvous -pass-remarks-missed=ptxforge-regions -S 2>&1 \
; RUN:   | FileCheck %s --check-prefix=BROKEN

; CHECK-LABEL: define void @__ptx_kernel_mma(
; CHECK:         %regs = alloca i32, i32 14
; CHECK-DAG:     %warp.value = alloca i64, align 8, !ptxforge.warp_slot ![[VALUE:[0-9]+]]
; CHECK-DAG:     %warp.b = alloca i32, align 4, !ptxforge.warp_slot ![[B:[0-9]+]]
; CHECK-DAG:     %warp.mask = alloca i32, align 4, !ptxforge.warp_slot ![[MASK:[0-9]+]]
; CHECK-DAG:     %warp.out = alloca i32, align 4, !ptxforge.warp_slot ![[OUT:[0-9]+]]
; CHECK-DAG:     %warp.buffer = alloca i64, align 8, !ptxforge.warp_slot ![[BUFFER:[0-9]+]]
; ldmatrix.x4: the row address and the buffer.
; CHECK:         [[ROW:%.*]] = ptrtoint ptr addrspace(1) %row to i64
; CHECK-NEXT:    store i64 [[ROW]], ptr %warp.value
; CHECK-NEXT:    [[BUF:%.*]] = ptrtoint ptr %regs to i64
; CHECK-NEXT:    store i64 [[BUF]], ptr %warp.buffer
; CHECK-NEXT:    store i32 -1, ptr %warp.mask
; CHECK:         br label %after.collective, !ptxforge.cut_edge ![[LDMATRIX:[0-9]+]]
; mma: its register counts and the buffer.
; CHECK:         store i32 67371524, ptr %warp.b
; CHECK-NEXT:    [[BUF2:%.*]] = ptrtoint ptr %regs to i64
; CHECK-NEXT:    store i64 [[BUF2]], ptr %warp.buffer
; CHECK-NEXT:    store i32 -1, ptr %warp.mask
; CHECK:         br label %after.collective{{[0-9]+}}, !ptxforge.cut_edge ![[MMA:[0-9]+]]
; CHECK:       after.collective{{[0-9]+}}:
; CHECK-NEXT:    %d0.p = getelementptr inbounds i32, ptr %regs, i32 10
; movmatrix: the register in, the result out.
; CHECK:         [[V:%.*]] = zext i32 %d0 to i64
; CHECK-NEXT:    store i64 [[V]], ptr %warp.value
; CHECK-NEXT:    store i32 -1, ptr %warp.mask
; CHECK:         br label %after.collective{{[0-9]+}}, !ptxforge.cut_edge ![[MOV:[0-9]+]]
; CHECK:         [[T:%.*]] = load i32, ptr %warp.out
; CHECK-NOT:     call
; CHECK:         ret void
; CHECK-DAG:   ![[BUFFER]] = !{i32 6}
; Kinds (RegionCuts.h): 9 mma with ptxrt_mma's code, 10 ldmatrix with x4 (4 * 2 + 0), 12 movmatrix.
; CHECK-DAG:   ![[LDMATRIX]] = !{i32 10, i32 8, i32 0}
; CHECK-DAG:   ![[MMA]] = !{i32 9, i32 2375953, i32 0}
; CHECK-DAG:   ![[MOV]] = !{i32 12, i32 0, i32 0}

; BROKEN: remark: {{.*}}kernel runs on fibers: region builder contract broken in __ptx_kernel_mma: a cut's register buffer is not an alloca of the thread
; BROKEN: call void @ptxrt_mma(
; BROKEN-NOT: !ptxforge.cut_edge

%ThreadContext = type { [3 x i32], [3 x i32], [3 x i32], [3 x i32], i32, i32, i32, i32, ptr, ptr, i32, i32, i32, i32, i32, i32, i64 }

; The lowering's form of: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {a0..a3}, [row]; then
; mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 with A = a0..a3, B = a0, a1, C = 0 (4 + 2 + 4 registers, padded
; to 10 words, D after them); movmatrix.sync.aligned.m8n8.trans.b16 of D's first register.
define void @__ptx_kernel_mma(ptr %0, ptr noalias readonly dereferenceable(8) %1) {
entry:
  %regs = alloca i32, i32 14, align 4
  br label %body

body:
  %shared = load ptr, ptr %1, align 8
  %row = addrspacecast ptr %shared to ptr addrspace(1)
  call void @ptxrt_ldmatrix(ptr %0, ptr addrspace(1) %row, i32 8, ptr %regs), !ptxforge.cut !0
  call void @ptxrt_mma(ptr %0, i32 2375953, i32 67371524, ptr %regs), !ptxforge.cut !1
  %d0.p = getelementptr inbounds i32, ptr %regs, i32 10
  %d0 = load i32, ptr %d0.p, align 4
  %t = call i32 @ptxrt_movmatrix(ptr %0, i32 %d0), !ptxforge.cut !2
  %out = addrspacecast ptr %shared to ptr addrspace(1)
  store i32 %t, ptr addrspace(1) %out, align 4
  ret void
}

declare void @ptxrt_ldmatrix(ptr, ptr addrspace(1), i32, ptr)
declare void @ptxrt_mma(ptr, i32, i32, ptr)
declare i32 @ptxrt_movmatrix(ptr, i32)

!0 = !{i32 10, i32 2, i32 1, i32 -1, i32 -1, i32 -1, i32 -1, i32 3}
!1 = !{i32 9, i32 1, i32 -1, i32 2, i32 -1, i32 -1, i32 -1, i32 3}
!2 = !{i32 12, i32 -1, i32 1, i32 -1, i32 -1, i32 -1, i32 -1, i32 -1}
