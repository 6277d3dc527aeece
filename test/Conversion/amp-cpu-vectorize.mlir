// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-cpu-vectorize))" | FileCheck %s
// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-cpu-vectorize{parallel-loops=true}))" | FileCheck %s --check-prefix=PAR

// A low-precision matmul: 4x16 tiles of C, read before the K loop and written
// after it, carried in registers; each K step of 8 reads the f16 operand tiles,
// extends them to f32, then multiplies and adds (separately: no fma) one
// 16-wide row of C per row of the tile.

// CHECK-LABEL: func.func @matmul_f16_into_f32(
// CHECK:         scf.for %[[M:.*]] = %{{.*}} to %{{.*}} step %c4
// CHECK:           scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %c16
// CHECK:             %[[C:.*]] = vector.transfer_read %arg2[%[[M]], %[[N]]]{{.*}} : memref<8x32xf32>, vector<4x16xf32>
// CHECK:             %[[R:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %c8 iter_args(%[[ACC:.*]] = %[[C]]) -> (vector<4x16xf32>)
// CHECK:               %[[A:.*]] = vector.transfer_read %arg0[%[[M]], %[[K]]]{{.*}} : memref<8x16xf16>, vector<4x8xf16>
// CHECK:               %[[B:.*]] = vector.transfer_read %arg1[%[[K]], %[[N]]]{{.*}} : memref<16x32xf16>, vector<8x16xf16>
// CHECK:               %[[AE:.*]] = arith.extf %[[A]] : vector<4x8xf16> to vector<4x8xf32>
// CHECK:               %[[BE:.*]] = arith.extf %[[B]] : vector<8x16xf16> to vector<8x16xf32>
// CHECK:               %[[B0:.*]] = vector.extract %[[BE]][0] : vector<16xf32> from vector<8x16xf32>
// CHECK:               %[[A00:.*]] = vector.extract %[[AE]][0, 0] : f32 from vector<4x8xf32>
// CHECK:               %[[A00V:.*]] = vector.broadcast %[[A00]] : f32 to vector<16xf32>
// CHECK:               %[[C0:.*]] = vector.extract %[[ACC]][0] : vector<16xf32> from vector<4x16xf32>
// CHECK:               %[[P:.*]] = arith.mulf %[[A00V]], %[[B0]] : vector<16xf32>
// CHECK:               arith.addf %[[C0]], %[[P]] : vector<16xf32>
// CHECK-NOT:           vector.fma
// CHECK-NOT:           vector.contract
// CHECK:               scf.yield %{{.*}} : vector<4x16xf32>
// CHECK:             vector.transfer_write %[[R]], %arg2[%[[M]], %[[N]]]

// With parallel-loops (amp-lower-to-llvm's threads above 1), the M and N
// tiles are one scf.parallel, the K loop an scf.for inside it, with the
// accumulator carried as before.

// PAR-LABEL: func.func @matmul_f16_into_f32(
// PAR:         scf.parallel (%[[M:.*]], %[[N:.*]]) = (%c0, %c0) to (%c8, %c32) step (%c4, %c16) {
// PAR:           %[[C:.*]] = vector.transfer_read %arg2[%[[M]], %[[N]]]{{.*}} : memref<8x32xf32>, vector<4x16xf32>
// PAR:           %[[R:.*]] = scf.for %{{.*}} = %c0 to %c16 step %c8 iter_args(%{{.*}} = %[[C]]) -> (vector<4x16xf32>)
// PAR:           vector.transfer_write %[[R]], %arg2[%[[M]], %[[N]]]
// PAR:           scf.reduce

func.func @matmul_f16_into_f32(%a: memref<8x16xf16>, %b: memref<16x32xf16>, %c: memref<8x32xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf16>, memref<16x32xf16>) outs(%c : memref<8x32xf32>)
  return
}

// -----

// A transposed operand is read as stored: A^T's tile comes K-major, as the
// outer products use it.

// CHECK-LABEL: func.func @matmul_transpose_a(
// CHECK:         scf.for %[[K:.*]] = {{.*}} iter_args
// CHECK:           vector.transfer_read %arg0[%[[K]], %{{.*}}]{{.*}} : memref<16x8xf32>, vector<8x4xf32>
// CHECK-NOT:       vector.transpose
// CHECK:           arith.mulf %{{.*}} : vector<16xf32>

func.func @matmul_transpose_a(%a: memref<16x8xf32>, %b: memref<16x32xf32>, %c: memref<8x32xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : memref<16x8xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  return
}

// -----

// A batch matmul: batch tiles of 1, whose unit dim goes away, so each batch
// is the matmul above (bf16 here).

// CHECK-LABEL: func.func @batch_matmul_bf16(
// CHECK:         scf.for %[[B:.*]] = %{{.*}} to %c2 step %c1
// CHECK:           %[[C:.*]] = vector.transfer_read %arg2[%[[B]], %{{.*}}, %{{.*}}]{{.*}} : memref<2x8x32xf32>, vector<4x16xf32>
// CHECK:           scf.for {{.*}} iter_args(%{{.*}} = %[[C]]) -> (vector<4x16xf32>)
// CHECK:             vector.transfer_read %arg0[%[[B]], {{.*}} : memref<2x8x16xbf16>, vector<4x8xbf16>
// CHECK:             arith.extf %{{.*}} : vector<8x16xbf16> to vector<8x16xf32>
// CHECK:             arith.mulf %{{.*}} : vector<16xf32>
// CHECK-NOT:         vector.reduction
// CHECK:             scf.yield
func.func @batch_matmul_bf16(%a: memref<2x8x16xbf16>, %b: memref<2x16x32xbf16>, %c: memref<2x8x32xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x8x16xbf16>, memref<2x16x32xbf16>) outs(%c : memref<2x8x32xf32>)
  return
}

// -----

// An elementwise op becomes 16-wide vectors along its innermost dim; the
// bias is broadcast by reading it at the column index only.

// CHECK-LABEL: func.func @bias_add_f16(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c1
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %c16
// CHECK:             %[[X:.*]] = vector.transfer_read %arg0[%[[I]], %[[J]]]{{.*}} : memref<4x32xf16>, vector<16xf16>
// CHECK:             %[[B:.*]] = vector.transfer_read %arg1[%[[J]]]{{.*}} : memref<32xf16>, vector<16xf16>
// CHECK:             %[[XE:.*]] = arith.extf %[[X]] : vector<16xf16> to vector<16xf32>
// CHECK:             %[[BE:.*]] = arith.extf %[[B]] : vector<16xf16> to vector<16xf32>
// CHECK:             %[[S:.*]] = arith.addf %[[XE]], %[[BE]] : vector<16xf32>
// CHECK:             %[[T:.*]] = arith.truncf %[[S]] : vector<16xf32> to vector<16xf16>
// CHECK:             vector.transfer_write %[[T]], %arg2[%[[I]], %[[J]]]

func.func @bias_add_f16(%x: memref<4x32xf16>, %b: memref<32xf16>, %y: memref<4x32xf16>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<4x32xf16>, memref<32xf16>) outs(%y : memref<4x32xf16>) {
  ^bb0(%u: f16, %v: f16, %o: f16):
    %ue = arith.extf %u : f16 to f32
    %ve = arith.extf %v : f16 to f32
    %s = arith.addf %ue, %ve : f32
    %t = arith.truncf %s : f32 to f16
    linalg.yield %t : f16
  }
  return
}

// -----

// A sum over an outer dim (a bias gradient) is vectorized along the kept
// dim, the whole dim (10) being the largest divisor up to 16. The loop over
// the kept dim's tiles is outside the reduction, whose sums stay in registers
// while 16 rows at a time are added, one after the other, as the loops do.

// CHECK-LABEL: func.func @column_sum(
// CHECK:         scf.for %[[J:.*]] = %{{.*}} to %c10 step %c10
// CHECK:           %[[S:.*]] = vector.transfer_read %arg1[%[[J]]]{{.*}} : memref<10xf32>, vector<10xf32>
// CHECK:           scf.for %[[I:.*]] = %{{.*}} to %c64 step %c16 iter_args(%[[ACC:.*]] = %[[S]])
// CHECK:             %[[X:.*]] = vector.transfer_read %arg0[%[[I]], %[[J]]]{{.*}} : memref<64x10xf16>, vector<16x10xf16>
// CHECK:             %[[XE:.*]] = arith.extf %[[X]] : vector<16x10xf16> to vector<16x10xf32>
// CHECK:             %[[X0:.*]] = vector.extract %[[XE]][0]
// CHECK:             %[[R0:.*]] = arith.addf %[[X0]], %[[ACC]] : vector<10xf32>
// CHECK:             %[[X1:.*]] = vector.extract %[[XE]][1]
// CHECK:             arith.addf %[[X1]], %[[R0]] : vector<10xf32>
// CHECK-COUNT-14:    arith.addf
// CHECK:             scf.yield
// CHECK:           vector.transfer_write %{{.*}}, %arg1[%[[J]]]

// With parallel-loops, that outer loop is the parallel one.

// PAR-LABEL: func.func @column_sum(
// PAR:         scf.parallel (%[[J:.*]]) = (%c0) to (%c10) step (%c10)
// PAR:           scf.for %[[I:.*]] = %{{.*}} to %c64 step %c16
// PAR:             vector.transfer_read %arg0[%[[I]], %[[J]]]
// PAR:           vector.transfer_write %{{.*}}, %arg1[%[[J]]]

func.func @column_sum(%x: memref<64x10xf16>, %s: memref<10xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<64x10xf16>) outs(%s : memref<10xf32>) {
  ^bb0(%u: f16, %acc: f32):
    %ue = arith.extf %u : f16 to f32
    %r = arith.addf %ue, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Sums of products down the columns next to plain sums (a LayerNorm's weight
// and bias gradients in one op, amp-fuse-sibling-reductions): the products of
// a 16-row tile are multiplied as vectors and their rows added in order, not
// moved into place element by element.

// CHECK-LABEL: func.func @column_sums_of_products(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %c64 step %c16 iter_args(%[[ACC:.*]] = %{{.*}}, %[[DOT:.*]] = %{{.*}})
// CHECK:           %[[X:.*]] = vector.transfer_read %arg0[%[[I]], %{{.*}}]{{.*}} : memref<64x32xf32>, vector<16x16xf32>
// CHECK:           %[[Y:.*]] = vector.transfer_read %arg1[%[[I]], %{{.*}}]{{.*}} : memref<64x32xf32>, vector<16x16xf32>
// CHECK:           %[[P:.*]] = arith.mulf %[[X]], %[[Y]] : vector<16x16xf32>
// CHECK:           %[[P0:.*]] = vector.extract %[[P]][0] : vector<16xf32> from vector<16x16xf32>
// CHECK:           arith.addf %[[P0]], %[[DOT]] : vector<16xf32>
// CHECK-NOT:       vector.insert
// CHECK:           scf.yield
func.func @column_sums_of_products(%x: memref<64x32xf32>, %y: memref<64x32xf32>,
                                   %s: memref<32xf32>, %d: memref<32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%x, %y : memref<64x32xf32>, memref<64x32xf32>) outs(%s, %d : memref<32xf32>, memref<32xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32, %dot: f32):
    %r = arith.addf %u, %acc : f32
    %p = arith.mulf %u, %v : f32
    %q = arith.addf %p, %dot : f32
    linalg.yield %r, %q : f32, f32
  }
  return
}

// -----

// A float sum along the innermost dim would need a horizontal sum in another
// order than the loops'. The row loop moves inside instead: a vector holds 16
// rows' sums, each adding its elements in the loops' order. A tile of 16 rows
// by 10 elements is read row by row and transposed in registers (a shuffle),
// then its columns are added in order.

// CHECK-LABEL: func.func @row_sum(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %c64 step %c16
// CHECK:           %[[S:.*]] = vector.transfer_read %arg1[%[[I]]]{{.*}} : memref<64xf32>, vector<16xf32>
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %c10 step %c10 iter_args(%[[ACC:.*]] = %[[S]])
// CHECK:             vector.transfer_read %arg0[%[[I]], %[[J]]]{{.*}} : memref<64x10xf32>, vector<16x10xf32>
// CHECK:             vector.shuffle
// CHECK:             %[[C0:.*]] = vector.extract %{{.*}}[0] : vector<16xf32> from vector<10x16xf32>
// CHECK:             %[[R0:.*]] = arith.addf %[[C0]], %[[ACC]] : vector<16xf32>
// CHECK:             %[[C1:.*]] = vector.extract %{{.*}}[1] : vector<16xf32> from vector<10x16xf32>
// CHECK:             arith.addf %[[C1]], %[[R0]] : vector<16xf32>
// CHECK:           vector.transfer_write %{{.*}}, %arg1[%[[I]]]
// CHECK-NOT:     linalg.generic

// PAR-LABEL: func.func @row_sum(
// PAR:         scf.parallel (%[[I:.*]]) = (%c0) to (%c64) step (%c16)
// PAR:           scf.for %{{.*}} = %{{.*}} to %c10 step %c10
// PAR:           vector.transfer_write %{{.*}}, %arg1[%[[I]]]

func.func @row_sum(%x: memref<64x10xf32>, %s: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x10xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %r = arith.addf %u, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// BatchNorm's channel sums (over batch, height and width): 16 channels' sums
// per vector, the channel tiles outermost; 16x16 tiles of 16 channels' rows
// are transposed by AVX-512's unpack and permute sequence (vector.shuffle,
// no vector.transpose left), then added in the loops' order.

// CHECK-LABEL: func.func @channel_sum(
// CHECK:         scf.for %[[C:.*]] = %{{.*}} to %c32 step %c16
// CHECK:           vector.transfer_read %arg1[%[[C]]]
// CHECK:           scf.for %[[N:.*]] = %{{.*}} to %c2 step %c1
// CHECK:             scf.for %[[H:.*]] = %{{.*}} to %c4 step %c1
// CHECK:               scf.for %[[W:.*]] = %{{.*}} to %c32 step %c16
// CHECK:                 vector.transfer_read %arg0[%[[N]], %[[C]], %[[H]], %[[W]]]{{.*}} : memref<2x32x4x32xf32>, vector<16x16xf32>
// CHECK:                 vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29]
// CHECK-NOT:             vector.transpose
// CHECK-COUNT-16:        arith.addf %{{.*}} : vector<16xf32>
// CHECK:           vector.transfer_write %{{.*}}, %arg1[%[[C]]]

// PAR-LABEL: func.func @channel_sum(
// PAR:         scf.parallel (%[[C:.*]]) = (%c0) to (%c32) step (%c16)
// PAR-COUNT-3:   scf.for
// PAR:           vector.transfer_write %{{.*}}, %arg1[%[[C]]]

func.func @channel_sum(%x: memref<2x32x4x32xf32>, %s: memref<32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : memref<2x32x4x32xf32>) outs(%s : memref<32xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %r = arith.addf %u, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// 16 channels, one vector of sums: with parallel-loops, vectors of 8 sums
// and 8x8 tiles instead, so that two threads have a tile of channels each
// (each sum still added in the loops' order); without, one 16x16 tile.

// CHECK-LABEL: func.func @channel_sum_one_vector(
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c16 step %c16
// CHECK:           vector.transfer_read %arg0{{.*}} : memref<2x16x4x32xf32>, vector<16x16xf32>
// CHECK-COUNT-16:  arith.addf %{{.*}} : vector<16xf32>

// PAR-LABEL: func.func @channel_sum_one_vector(
// PAR:         scf.parallel (%[[C:.*]]) = (%c0) to (%c16) step (%c8)
// PAR:           scf.for
// PAR:             scf.for
// PAR:               scf.for %{{.*}} = %{{.*}} to %c32 step %c8
// PAR:                 vector.transfer_read %arg0{{.*}} : memref<2x16x4x32xf32>, vector<8x8xf32>
// PAR-COUNT-8:         arith.addf %{{.*}} : vector<8xf32>
// PAR:           vector.transfer_write %{{.*}}, %arg1[%[[C]]] {{.*}} : vector<8xf32>, memref<16xf32>

func.func @channel_sum_one_vector(%x: memref<2x16x4x32xf32>, %s: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : memref<2x16x4x32xf32>) outs(%s : memref<16xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %r = arith.addf %u, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The same sums over a channels-last image: its rows hold the 16 channels, so
// halves of them would make both threads read every cache line. One vector
// of 16 sums with parallel-loops too.

// CHECK-LABEL: func.func @channel_sum_channels_last(
// CHECK:         vector.transfer_read %arg0{{.*}} : memref<2x4x32x16xbf16>, vector<16x16xbf16>

// PAR-LABEL: func.func @channel_sum_channels_last(
// PAR:         scf.parallel (%{{.*}}) = (%c0) to (%c16) step (%c16)
// PAR:           vector.transfer_read %arg0{{.*}} : memref<2x4x32x16xbf16>, vector<16x16xbf16>
// PAR-COUNT-16:  arith.addf %{{.*}} : vector<16xf32>
// PAR:           vector.transfer_write %{{.*}}, %arg1[%{{.*}}] {{.*}} : vector<16xf32>, memref<16xf32>

func.func @channel_sum_channels_last(%x: memref<2x4x32x16xbf16>, %s: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>], iterator_types = ["reduction", "reduction", "reduction", "parallel"]}
      ins(%x : memref<2x4x32x16xbf16>) outs(%s : memref<16xf32>) {
  ^bb0(%u: bf16, %acc: f32):
    %e = arith.extf %u : bf16 to f32
    %r = arith.addf %e, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The overflow check reduces i1 flags with `or` along the innermost loop too:
// exact in any order, so it is vectorized, the unscaled gradient written 16 at
// a time and the flags of each vector or-ed into the carried flag.

// CHECK-LABEL: func.func @unscale_check(
// CHECK:         %[[F0:.*]] = vector.transfer_read %arg3[]
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[F0]]) -> (vector<i1>)
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %c128 step %c16 iter_args
// CHECK:             %[[X:.*]] = vector.transfer_read %arg0[%{{.*}}, %[[J]]]{{.*}} : memref<64x128xf32>, vector<16xf32>
// CHECK:             %[[U:.*]] = arith.mulf %[[X]], %{{.*}} : vector<16xf32>
// CHECK:             arith.cmpf ugt, %{{.*}} : vector<16xf32>
// CHECK:             arith.ori %{{.*}} : vector<1xi1>
// CHECK:             vector.transfer_write %[[U]], %arg2[%{{.*}}, %[[J]]]
// CHECK:         vector.transfer_write %{{.*}}, %arg3[] : vector<i1>, memref<i1>
func.func @unscale_check(%g: memref<64x128xf32>, %s: memref<f32>, %out: memref<64x128xf32>, %inf: memref<i1>) {
  %max = arith.constant 3.40282347E+38 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%g, %s : memref<64x128xf32>, memref<f32>) outs(%out, %inf : memref<64x128xf32>, memref<i1>) {
  ^bb0(%x: f32, %sc: f32, %o: f32, %f: i1):
    %u = arith.mulf %x, %sc : f32
    %a = math.absf %u : f32
    %c = arith.cmpf ugt, %a, %max : f32
    %r = arith.ori %f, %c : i1
    linalg.yield %u, %r : f32, i1
  }
  return
}

// -----

// Ops whose vector would have one element (17 is prime) or whose shape is
// dynamic stay linalg ops.

// CHECK-LABEL: func.func @prime_and_dynamic(
// CHECK:         linalg.fill {{.*}} memref<17xf32>
// CHECK:         linalg.fill {{.*}} memref<?xf32>
// CHECK-NOT:     vector.

func.func @prime_and_dynamic(%x: memref<17xf32>, %y: memref<?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%x : memref<17xf32>)
  linalg.fill ins(%zero : f32) outs(%y : memref<?xf32>)
  return
}

// -----

// A vector of i1 is packed bits in memory, a memref of i1 one byte per
// element: ops that write or read i1 buffers along their innermost loop stay
// linalg ops (a mask, and the select that reads it), while the float-only op
// beside them is vectorized.

// CHECK-LABEL: func.func @bool_buffers(
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%{{.*}} : memref<64xi1>)
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : memref<64xi1>, memref<64xf32>)
// CHECK:         vector.transfer_read %arg1
// CHECK-NOT:     linalg.generic

func.func @bool_buffers(%x: memref<64xf32>, %y: memref<64xf32>, %mask: memref<64xi1>, %out: memref<64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<64xf32>) outs(%mask : memref<64xi1>) {
  ^bb0(%a: f32, %m: i1):
    %c = arith.cmpf ogt, %a, %zero : f32
    linalg.yield %c : i1
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%mask, %x : memref<64xi1>, memref<64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%m: i1, %a: f32, %o: f32):
    %s = arith.select %m, %a, %zero : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%y : memref<64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// llvm.intr.powi takes one scalar exponent: integer powers stay loops.

// CHECK-LABEL: func.func @integer_power(
// CHECK:         linalg.generic
// CHECK:           math.fpowi
// CHECK-NOT:     vector.

func.func @integer_power(%x: memref<64xf32>, %out: memref<64xf32>) {
  %n = arith.constant 5 : i64
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = math.fpowi %a, %n : f32, i64
    linalg.yield %p : f32
  }
  return
}

// -----

// A batch matmul on a reshaped operand (stepgen seed 1013, an attention block):
// the tile of A spans the expanded group [2, 3] of one row of %x. It is read
// through the expand_shape; folded into %x it would read across rows of %x
// (and past its end for the last batch).

// CHECK-LABEL: func.func @batch_matmul_of_expand_shape(
// CHECK:         %[[A:.*]] = memref.expand_shape %arg0
// CHECK:         vector.transfer_read %arg2
// CHECK:         scf.for {{.*}} iter_args
// CHECK-NOT:       affine.linearize_index
// CHECK-NOT:       vector.transfer_read %arg0
// CHECK:           vector.transfer_read %[[A]][%{{.*}}, %{{.*}}, %{{.*}}]{{.*}} : memref<6x2x3xf32>, vector<2x3xf32>

func.func @batch_matmul_of_expand_shape(%x: memref<6x6xf32>, %bt: memref<6x3x2xf32>, %c: memref<6x2x2xf32>) {
  %a = memref.expand_shape %x [[0], [1, 2]] output_shape [6, 2, 3] : memref<6x6xf32> into memref<6x2x3xf32>
  linalg.batch_matmul ins(%a, %bt : memref<6x2x3xf32>, memref<6x3x2xf32>) outs(%c : memref<6x2x2xf32>)
  return
}

// -----

// A copy into a strided buffer (a pad's interior) becomes vectors along its
// rows; a contiguous copy stays a memref.copy (memcpy).

// CHECK-LABEL: func.func @copy_into_interior(
// CHECK:         vector.transfer_read %arg0{{.*}} : memref<2x32xf32>, vector<16xf32>
// CHECK:         vector.transfer_write {{.*}} : vector<16xf32>, memref<4x34xf32>
// CHECK:         memref.copy %arg0, %arg2 : memref<2x32xf32> to memref<2x32xf32>
func.func @copy_into_interior(%x: memref<2x32xf32>, %padded: memref<4x34xf32>, %y: memref<2x32xf32>) {
  %interior = memref.subview %padded[1, 1] [2, 32] [1, 1] : memref<4x34xf32> to memref<2x32xf32, strided<[34, 1], offset: 35>>
  memref.copy %x, %interior : memref<2x32xf32> to memref<2x32xf32, strided<[34, 1], offset: 35>>
  memref.copy %x, %y : memref<2x32xf32> to memref<2x32xf32>
  return
}

// -----

// An embedding lookup added to another operand (amp-one-hot-matmul-to-gather's
// generic, fused): each output row reads a row of the table at an index of
// its own. The index, its range check and the clamped row are computed once
// per row, in loops over the outer dims; the row of the table, of the other
// operand and of the output are 1-d views, which a generic adds as 16-wide
// vectors (read from the buffers themselves once the views fold in).

// CHECK-LABEL: func.func @row_gather(
// CHECK:         scf.for %[[B:.*]] = %c0 to %c2 step %c1
// CHECK:           scf.for %[[T:.*]] = %c0 to %c4 step %c1
// CHECK:             %[[I:.*]] = memref.load %arg1[%[[T]], %c0] : memref<4x1xi64>
// CHECK:             %[[INDEX:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK:             %[[IN:.*]] = arith.cmpi ult, %[[INDEX]], %c8
// CHECK:             %[[ROW:.*]] = arith.select %[[IN]], %[[INDEX]], %c0
// CHECK:             %[[MASK:.*]] = vector.broadcast %[[IN]] : i1 to vector<16xi1>
// CHECK:             scf.for %[[J:.*]] = %c0 to %c32 step %c16
// CHECK:               %[[X:.*]] = vector.transfer_read %arg0[%[[B]], %[[T]], %[[J]]]{{.*}} vector<16xf32>
// CHECK:               %[[E:.*]] = vector.transfer_read %arg2[%[[ROW]], %[[J]]]{{.*}} vector<16xf32>
// CHECK:               %[[M:.*]] = arith.select %[[MASK]], %[[E]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK:               %[[S:.*]] = arith.addf %[[X]], %[[M]] : vector<16xf32>
// CHECK:               vector.transfer_write %[[S]], %arg3[%[[B]], %[[T]], %[[J]]]
// CHECK-NOT:     memref.load %arg2

func.func @row_gather(%x: memref<2x4x32xf32>, %tokens: memref<4x1xi64>, %table: memref<8x32xf32>, %y: memref<2x4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(b, t, j) -> (b, t, j)>, affine_map<(b, t, j) -> (t, 0)>, affine_map<(b, t, j) -> (b, t, j)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %tokens : memref<2x4x32xf32>, memref<4x1xi64>) outs(%y : memref<2x4x32xf32>) {
  ^bb0(%in: f32, %token: i64, %out: f32):
    %j = linalg.index 2 : index
    %index = arith.index_cast %token : i64 to index
    %inside = arith.cmpi ult, %index, %c8 : index
    %row = arith.select %inside, %index, %c0 : index
    %element = memref.load %table[%row, %j] : memref<8x32xf32>
    %masked = arith.select %inside, %element, %zero : f32
    %sum = arith.addf %in, %masked : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A load whose row changes along the innermost loop (a column of the table)
// is no row gather: the op stays as it is, for the loops.

// CHECK-LABEL: func.func @column_gather(
// CHECK:         linalg.generic
// CHECK:           memref.load %arg1[%{{.*}}, %{{.*}}] : memref<32x8xf32>
// CHECK-NOT:     vector.transfer_read

func.func @column_gather(%tokens: memref<4x1xi64>, %table: memref<32x8xf32>, %y: memref<4x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(t, j) -> (t, 0)>, affine_map<(t, j) -> (t, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tokens : memref<4x1xi64>) outs(%y : memref<4x32xf32>) {
  ^bb0(%token: i64, %out: f32):
    %j = linalg.index 1 : index
    %index = arith.index_cast %token : i64 to index
    %element = memref.load %table[%j, %index] : memref<32x8xf32>
    linalg.yield %element : f32
  }
  return
}
