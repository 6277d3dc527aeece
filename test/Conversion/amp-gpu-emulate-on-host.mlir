// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-gpu-emulate-on-host))" | FileCheck %s

// Device buffers become host ones; deallocations are left to the CPU
// lowering; mapped loops stay.
// CHECK-LABEL: func.func @buffers
// CHECK-SAME: (%[[IN:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<8xf32>)
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: memref.copy %[[IN]], %[[TMP]] : memref<8xf32> to memref<8xf32>
// CHECK-NEXT: scf.parallel
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK-NOT: gpu.
// CHECK: return
func.func @buffers(%in: memref<8xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %tmp = gpu.alloc () : memref<8xf32>
  gpu.memcpy %tmp, %in : memref<8xf32>, memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %tmp[%i] : memref<8xf32>
    memref.store %v, %out[%i] : memref<8xf32>
  } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  gpu.dealloc %tmp : memref<8xf32>
  return
}

// -----

// A runtime matmul with beta = 0: a zero fill, then the products summed in
// f32 (the f16 operands extended), the first operand a transposed view.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[AT:.*]]: memref<64x32xf16>, %[[BM:.*]]: memref<64x16xf16>, %[[CM:.*]]: memref<32x16xf32>)
// CHECK: %[[VIEW:.*]] = memref.transpose %[[AT]]
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: linalg.fill ins(%[[ZERO]] : f32) outs(%[[CM]] : memref<32x16xf32>)
// CHECK-NEXT: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[VIEW]], %[[BM]] : {{.*}}) outs(%[[CM]] : memref<32x16xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f16, %[[Y:.*]]: f16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[XF:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT: %[[YF:.*]] = arith.extf %[[Y]] : f16 to f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[XF]], %[[YF]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK-NOT: amp_gpu.matmul
func.func @matmul(%at: memref<64x32xf16>, %b: memref<64x16xf16>, %c: memref<32x16xf32>) {
  %a = memref.transpose %at (i, j) -> (j, i) : memref<64x32xf16> to memref<32x64xf16, strided<[1, 32]>>
  amp_gpu.matmul %a, %b, %c {alpha = 1.0 : f32, beta = 0.0 : f32, call_site = 0 : i64}
      : memref<32x64xf16, strided<[1, 32]>>, memref<64x16xf16>, memref<32x16xf32>
  return
}

// -----

// beta = 1 accumulates into the output as it is; a batch dimension leads.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @batch_accumulate
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
func.func @batch_accumulate(%a: memref<4x8x16xf32>, %b: memref<4x16x2xf32>, %c: memref<4x8x2xf32>) {
  amp_gpu.matmul %a, %b, %c {alpha = 1.0 : f32, beta = 1.0 : f32, call_site = 1 : i64}
      : memref<4x8x16xf32>, memref<4x16x2xf32>, memref<4x8x2xf32>
  return
}

// -----

// A kernel runs for every block and thread in turn, its ids the loops'
// induction variables, after assertions that its launch is within CUDA's
// limits.
// CHECK-LABEL: func.func @kernel
// CHECK-SAME: (%[[OUT:.*]]: memref<64x10xf32>, %[[V:.*]]: f32)
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: cf.assert %{{.*}}, "a kernel's grid size in x exceeds CUDA's limit of 2147483647"
// CHECK: cf.assert %{{.*}}, "a kernel's block size in x exceeds CUDA's limit of 1024"
// CHECK: cf.assert %{{.*}}, "a kernel's grid size in y exceeds CUDA's limit of 65535"
// CHECK: cf.assert %{{.*}}, "a kernel's block size in y exceeds CUDA's limit of 1024"
// CHECK: cf.assert %{{.*}}, "a kernel's grid size in z exceeds CUDA's limit of 65535"
// CHECK: cf.assert %{{.*}}, "a kernel's block size in z exceeds CUDA's limit of 64"
// CHECK: cf.assert %{{.*}}, "a kernel's block exceeds CUDA's limit of 1024"
// CHECK: scf.parallel (%[[BX:.*]], %[[BY:.*]], %[[BZ:.*]]) = (%{{.*}}) to (%[[C4]], %{{.*}}, %{{.*}})
// CHECK-NEXT: scf.parallel (%[[TX:.*]], %[[TY:.*]], %[[TZ:.*]]) = (%{{.*}}) to (%[[C16]], %[[C16]], %{{.*}})
// CHECK: %[[ROW:.*]] = arith.addi %[[TY]], %{{.*}} : index
// CHECK: memref.store %[[V]], %[[OUT]][%[[ROW]], %[[TX]]]
// CHECK-NOT: gpu.
func.func @kernel(%out: memref<64x10xf32>, %v: f32) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c10 = arith.constant 10 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c16, %sz = %c1) {
    %first = arith.muli %bx, %c16 : index
    %row = arith.addi %ty, %first : index
    %in_rows = arith.cmpi ult, %row, %c64 : index
    %in_columns = arith.cmpi ult, %tx, %c10 : index
    %inside = arith.andi %in_rows, %in_columns : i1
    scf.if %inside {
      memref.store %v, %out[%row, %tx] : memref<64x10xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// NCCL's sum and world size become MPI's, which the CPU lowering runs.
// CHECK-LABEL: func.func @sum
// CHECK-SAME: (%[[S:.*]]: memref<8xf16>, %[[R:.*]]: memref<8xf16>)
// CHECK: %[[W:.*]] = mpi.comm_world : !mpi.comm
// CHECK-NEXT: mpi.allreduce(%[[S]], %[[R]], MPI_SUM, %[[W]]) : memref<8xf16>, memref<8xf16>
// CHECK-NEXT: %[[W2:.*]] = mpi.comm_world : !mpi.comm
// CHECK-NEXT: %[[N:.*]] = mpi.comm_size(%[[W2]]) : i32
// CHECK-NEXT: return %[[N]] : i32
func.func @sum(%s: memref<8xf16>, %r: memref<8xf16>) -> i32 {
  amp_gpu.all_reduce_sum %s, %r : memref<8xf16>, memref<8xf16>
  %n = amp_gpu.world_size : i32
  return %n : i32
}
