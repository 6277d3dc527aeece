// amp-gpu-split-reductions computes what the reductions it splits compute:
// the functions below (the shapes of test/Conversion/amp-gpu-split-reductions.mlir)
// run on the CPU as written and after the pass, and print the same values
// bit for bit. Inputs are small integers, so that every sum is exact in any
// order; found_inf is checked with and without an inf, a NaN and an
// incoming found_inf.

// DEFINE: %{lower} = amp-opt --convert-elementwise-to-linalg \
// DEFINE:   --one-shot-bufferize=bufferize-function-boundaries \
// DEFINE:   --convert-linalg-to-loops --expand-strided-metadata --lower-affine \
// DEFINE:   --convert-scf-to-cf --convert-vector-to-llvm --finalize-memref-to-llvm --convert-math-to-llvm \
// DEFINE:   --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm \
// DEFINE:   --reconcile-unrealized-casts
// DEFINE: %{run} = mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils,%mlir_runner_utils
// DEFINE: %{split} = amp-opt --pass-pipeline="builtin.module(func.func(amp-gpu-split-reductions))"

// RUN: %{split} %s | FileCheck %s --check-prefix=SPLIT
// SPLIT-LABEL: func.func @check_and_unscale
// SPLIT: outs({{.*}} : tensor<64x128xf32>, tensor<128xi1>)
// SPLIT-LABEL: func.func @sum_1d
// SPLIT: outs({{.*}} : tensor<128xf32>)
// SPLIT-LABEL: func.func @loss_subtracts
// SPLIT: outs({{.*}} : tensor<64xf32>)
// SPLIT-LABEL: func.func @row_max
// SPLIT: outs({{.*}} : tensor<4x64xf32>)
// SPLIT-LABEL: func.func @large
// SPLIT: outs({{.*}} : tensor<16384xf32>)

// RUN: amp-opt %s | %{lower} | %{run} | sed 's/base@ = 0x[0-9a-f]*//' > %t.serial
// RUN: %{split} %s | %{lower} | %{run} | sed 's/base@ = 0x[0-9a-f]*//' > %t.split
// RUN: diff %t.serial %t.split
// RUN: FileCheck %s --input-file %t.split

// Sums of ((37 * i) mod 11) - 5, computed by numpy.
// CHECK-LABEL: sum_1d
// CHECK-NEXT: -4
// CHECK-LABEL: loss_subtracts
// CHECK-NEXT: 8
// CHECK-LABEL: row_max
// CHECK-NEXT: 5
// CHECK-NEXT: 5
// CHECK-NEXT: 5
// CHECK-NEXT: 5
// CHECK-LABEL: large
// CHECK-NEXT: -4
// CHECK-LABEL: found_inf finite, inf, nan, incoming
// CHECK-NEXT: 0
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-NEXT: 1
// CHECK-LABEL: unscaled
// CHECK: sizes = [64, 128]

func.func private @printMemrefF32(memref<*xf32>)

func.func @check_and_unscale(%g: tensor<64x128xf32>, %inv: tensor<f32>, %found: tensor<i1>) -> (tensor<64x128xf32>, tensor<i1>) {
  %max = arith.constant 3.40282347E+38 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%g, %inv : tensor<64x128xf32>, tensor<f32>) outs(%e, %found : tensor<64x128xf32>, tensor<i1>) {
  ^bb0(%x: f32, %s: f32, %out: f32, %acc: i1):
    %u = arith.mulf %x, %s : f32
    %a = math.absf %u : f32
    %bad = arith.cmpf ugt, %a, %max : f32
    %f = arith.ori %acc, %bad : i1
    linalg.yield %u, %f : f32, i1
  } -> (tensor<64x128xf32>, tensor<i1>)
  return %r#0, %r#1 : tensor<64x128xf32>, tensor<i1>
}

func.func @sum_1d(%x: tensor<8192xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<8192xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

func.func @loss_subtracts(%x: tensor<64x64xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x64xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.subf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

func.func @row_max(%x: tensor<4x4096xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x4096xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.maximumf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @large(%x: tensor<1048576xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<1048576xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// ((37 * i) mod 11) - 5, with `special` at index `at` (-1: nowhere).
func.func @values(%at: index, %special: f32) -> tensor<1048576xf32> {
  %e = tensor.empty() : tensor<1048576xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%e : tensor<1048576xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %c37 = arith.constant 37 : index
    %c11 = arith.constant 11 : index
    %c5 = arith.constant 5 : index
    %m = arith.muli %i, %c37 : index
    %r = arith.remui %m, %c11 : index
    %d = arith.subi %r, %c5 : index
    %n = arith.index_cast %d : index to i64
    %v = arith.sitofp %n : i64 to f32
    %hit = arith.cmpi eq, %i, %at : index
    %s = arith.select %hit, %special, %v : f32
    linalg.yield %s : f32
  } -> tensor<1048576xf32>
  return %r : tensor<1048576xf32>
}

func.func @print_f32(%t: tensor<f32>) {
  %v = tensor.extract %t[] : tensor<f32>
  vector.print %v : f32
  return
}

func.func @print_i1(%t: tensor<i1>) {
  %v = tensor.extract %t[] : tensor<i1>
  vector.print %v : i1
  return
}

func.func @main() {
  %none = arith.constant -1 : index
  %c5000 = arith.constant 5000 : index
  %zero = arith.constant 0.0 : f32
  %inf = arith.constant 0x7F800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %one = arith.constant dense<1.0> : tensor<f32>
  %quarter = arith.constant dense<0.25> : tensor<f32>
  %false = arith.constant dense<false> : tensor<i1>
  %true = arith.constant dense<true> : tensor<i1>
  %neg_inf = arith.constant dense<0xFF800000> : tensor<4xf32>
  %all = call @values(%none, %zero) : (index, f32) -> tensor<1048576xf32>
  %with_inf = call @values(%c5000, %inf) : (index, f32) -> tensor<1048576xf32>
  %with_nan = call @values(%c5000, %nan) : (index, f32) -> tensor<1048576xf32>

  vector.print str "sum_1d\n"
  %x8k = tensor.extract_slice %all[0] [8192] [1] : tensor<1048576xf32> to tensor<8192xf32>
  %s = call @sum_1d(%x8k, %one) : (tensor<8192xf32>, tensor<f32>) -> tensor<f32>
  call @print_f32(%s) : (tensor<f32>) -> ()

  vector.print str "loss_subtracts\n"
  %x4k = tensor.extract_slice %all[0] [4096] [1] : tensor<1048576xf32> to tensor<4096xf32>
  %x64 = tensor.expand_shape %x4k [[0, 1]] output_shape [64, 64] : tensor<4096xf32> into tensor<64x64xf32>
  %l = call @loss_subtracts(%x64, %one) : (tensor<64x64xf32>, tensor<f32>) -> tensor<f32>
  call @print_f32(%l) : (tensor<f32>) -> ()

  vector.print str "row_max\n"
  %x16k = tensor.extract_slice %all[0] [16384] [1] : tensor<1048576xf32> to tensor<16384xf32>
  %rows = tensor.expand_shape %x16k [[0, 1]] output_shape [4, 4096] : tensor<16384xf32> into tensor<4x4096xf32>
  %mx = call @row_max(%rows, %neg_inf) : (tensor<4x4096xf32>, tensor<4xf32>) -> tensor<4xf32>
  %mxm = bufferization.to_buffer %mx : tensor<4xf32> to memref<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %mxm[%i] : memref<4xf32>
    vector.print %v : f32
  }

  vector.print str "large\n"
  %lg = call @large(%all, %one) : (tensor<1048576xf32>, tensor<f32>) -> tensor<f32>
  call @print_f32(%lg) : (tensor<f32>) -> ()

  vector.print str "found_inf finite, inf, nan, incoming\n"
  %g = tensor.expand_shape %x8k [[0, 1]] output_shape [64, 128] : tensor<8192xf32> into tensor<64x128xf32>
  %gi8k = tensor.extract_slice %with_inf[0] [8192] [1] : tensor<1048576xf32> to tensor<8192xf32>
  %gi = tensor.expand_shape %gi8k [[0, 1]] output_shape [64, 128] : tensor<8192xf32> into tensor<64x128xf32>
  %gn8k = tensor.extract_slice %with_nan[0] [8192] [1] : tensor<1048576xf32> to tensor<8192xf32>
  %gn = tensor.expand_shape %gn8k [[0, 1]] output_shape [64, 128] : tensor<8192xf32> into tensor<64x128xf32>
  %u0:2 = call @check_and_unscale(%g, %quarter, %false) : (tensor<64x128xf32>, tensor<f32>, tensor<i1>) -> (tensor<64x128xf32>, tensor<i1>)
  %u1:2 = call @check_and_unscale(%gi, %quarter, %false) : (tensor<64x128xf32>, tensor<f32>, tensor<i1>) -> (tensor<64x128xf32>, tensor<i1>)
  %u2:2 = call @check_and_unscale(%gn, %quarter, %false) : (tensor<64x128xf32>, tensor<f32>, tensor<i1>) -> (tensor<64x128xf32>, tensor<i1>)
  %u3:2 = call @check_and_unscale(%g, %quarter, %true) : (tensor<64x128xf32>, tensor<f32>, tensor<i1>) -> (tensor<64x128xf32>, tensor<i1>)
  call @print_i1(%u0#1) : (tensor<i1>) -> ()
  call @print_i1(%u1#1) : (tensor<i1>) -> ()
  call @print_i1(%u2#1) : (tensor<i1>) -> ()
  call @print_i1(%u3#1) : (tensor<i1>) -> ()

  vector.print str "unscaled\n"
  %um = bufferization.to_buffer %u1#0 : tensor<64x128xf32> to memref<64x128xf32>
  %uu = memref.cast %um : memref<64x128xf32> to memref<*xf32>
  call @printMemrefF32(%uu) : (memref<*xf32>) -> ()
  return
}
