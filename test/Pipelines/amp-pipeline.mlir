// RUN: amp-opt %s --split-input-file --amp-pipeline="dtype=f16 policy=torch scaling=dynamic" | FileCheck %s --check-prefixes=CHECK,DYN
// RUN: amp-opt %s --split-input-file --amp-pipeline | FileCheck %s --check-prefixes=CHECK,DYN
// RUN: amp-opt %s --split-input-file --amp-pipeline="scaling=static init-scale=256" | FileCheck %s --check-prefixes=CHECK,STATIC
// RUN: amp-opt %s --split-input-file --amp-pipeline="scaling=none" | FileCheck %s --check-prefixes=CHECK,NONE
// RUN: amp-opt %s --split-input-file --amp-pipeline="dtype=bf16" | FileCheck %s --check-prefixes=CHECK,BF16
// A policy file's dtype (bf16 here) is the step's: the casts and the scaling follow it.
// RUN: amp-opt %s --split-input-file --amp-pipeline="policy=%S/../Transforms/Inputs/cbrt-policy.json" | FileCheck %s --check-prefixes=CHECK,BF16
// RUN: amp-opt %s --split-input-file --amp-pipeline="hysteresis=2 min-scale=1 max-scale=16777216 growth-factor=2 growth-interval=1000" | FileCheck %s --check-prefixes=CHECK,HYST
// RUN: amp-opt %s --split-input-file --amp-pipeline="level=O0" | FileCheck %s --check-prefixes=CHECK,O0
// RUN: amp-opt %s --split-input-file --amp-pipeline="level=auto" | FileCheck %s --check-prefixes=CHECK,AUTO
// RUN: amp-opt %amp_src_root/examples/mlp.mlir --amp-pipeline | FileCheck %s --check-prefix=MLP
// RUN: amp-opt %amp_src_root/examples/transformer.mlir --amp-pipeline="hysteresis=2" | FileCheck %s --check-prefix=TRANSFORMER
// RUN: amp-opt %amp_src_root/examples/cnn.mlir --amp-pipeline="dtype=bf16 scaling=static" | FileCheck %s --check-prefix=CNN
// RUN: amp-opt %S/../Inputs/mlp-dynamic-batch.mlir --amp-pipeline="dtype=f16" | FileCheck %s --check-prefix=DYNBATCH -DLOW=f16
// RUN: amp-opt %S/../Inputs/mlp-dynamic-batch.mlir --amp-pipeline="dtype=bf16" | FileCheck %s --check-prefix=DYNBATCH -DLOW=bf16
// RUN: amp-opt %S/../Inputs/mlp-dynamic-batch.mlir --amp-pipeline="dtype=f16 data-parallel=mpi" | FileCheck %s --check-prefixes=DP,DP-SCALED -DCOMM=f16
// RUN: amp-opt %S/../Inputs/mlp-dynamic-batch.mlir --amp-pipeline="dtype=f16 data-parallel=mpi grad-comm-dtype=f32" | FileCheck %s --check-prefixes=DP,DP-SCALED -DCOMM=f32
// RUN: amp-opt %S/../Inputs/mlp-dynamic-batch.mlir --amp-pipeline="dtype=bf16 data-parallel=mpi" | FileCheck %s --check-prefixes=DP,DP-UNSCALED -DCOMM=bf16
// RUN: amp-opt %S/../Inputs/mlp-dynamic-batch.mlir --amp-pipeline="level=O0 data-parallel=mpi" | FileCheck %s --check-prefixes=DP,DP-UNSCALED -DCOMM=f32

// The whole pipeline on one step: the matmuls run in the low type with f32
// accumulators, the backward starts from the scale, the gradient is
// unscaled and checked in one generic, the update is skipped by a select,
// the scaler is updated, and no amp op is left. Canonicalization hoists the
// constants; the order of the computations stays.

// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<2x4xf32>, %[[W:[^:]*]]: tensor<4x3xf32>
// DYN-SAME:        %[[S:[^:]*]]: tensor<f32> {amp.state = "scale"}, %[[T:[^:]*]]: tensor<i32> {amp.state = "growth_tracker"})
// DYN-SAME:        -> (tensor<f32>, tensor<4x3xf32>, tensor<f32> {amp.state = "scale"}, tensor<i32> {amp.state = "growth_tracker"}, tensor<i1> {amp.state = "found_inf"})
// HYST-SAME:       %[[S:[^:]*]]: tensor<f32> {amp.state = "scale"}, %[[T:[^:]*]]: tensor<i32> {amp.state = "growth_tracker"}, %[[H:[^:]*]]: tensor<i32> {amp.state = "hysteresis"})
// HYST-SAME:       -> (tensor<f32>, tensor<4x3xf32>, tensor<f32> {amp.state = "scale"}, tensor<i32> {amp.state = "growth_tracker"}, tensor<i32> {amp.state = "hysteresis"}, tensor<i1> {amp.state = "found_inf"})
// STATIC-SAME:     ) -> (tensor<f32>, tensor<4x3xf32>, tensor<i1> {amp.state = "found_inf"})
// NONE-SAME:       ) -> (tensor<f32>, tensor<4x3xf32>) {
// BF16-SAME:       ) -> (tensor<f32>, tensor<4x3xf32>) {
// O0-SAME:         ) -> (tensor<f32>, tensor<4x3xf32>) {
// AUTO-SAME:       %{{[^:]*}}: tensor<f32> {amp.state = "scale"}, %{{[^:]*}}: tensor<i32> {amp.state = "growth_tracker"})
// CHECK-NOT:     amp.seed
// CHECK-NOT:     amp.update
// CHECK-NOT:     amp.yield
// DYN:           %[[WL:.*]] = arith.truncf %[[W]] : tensor<4x3xf32> to tensor<4x3xf16>
// DYN:           %[[XL:.*]] = arith.truncf %[[X]] : tensor<2x4xf32> to tensor<2x4xf16>
// DYN:           linalg.matmul ins(%[[XL]], %[[WL]] : tensor<2x4xf16>, tensor<4x3xf16>) outs(%{{.*}} : tensor<2x3xf32>)
// DYN:           %[[SL:.*]] = arith.truncf %[[S]] : tensor<f32> to tensor<f16>
// DYN:           %[[DY:.*]] = linalg.generic {{.*}} ins(%[[SL]] : tensor<f16>)
// DYN:           %[[GW:.*]] = linalg.matmul {{.*}} ins(%[[XL]], %[[DY]] : tensor<2x4xf16>, tensor<2x3xf16>) outs(%{{.*}} : tensor<4x3xf32>)
// DYN:           %[[INV:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<f32>)
// DYN:             arith.divf
// DYN:           %[[U:.*]]:2 = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[GW]], %[[INV]] : tensor<4x3xf32>, tensor<f32>)
// DYN:             arith.mulf
// DYN:             arith.cmpf ugt
// DYN:             arith.ori
// DYN:           %[[NEW:.*]] = arith.subf %[[W]], %{{.*}} : tensor<4x3xf32>
// DYN:           %[[KEPT:.*]] = linalg.generic {{.*}} ins(%[[U]]#1, %[[W]] : tensor<i1>, tensor<4x3xf32>) outs(%[[NEW]] : tensor<4x3xf32>)
// DYN:             arith.select
// DYN:           %[[SCALER:.*]]:2 = linalg.generic {{.*}} ins(%[[U]]#1, %[[S]], %[[T]] : tensor<i1>, tensor<f32>, tensor<i32>)
// DYN:           return %{{.*}}, %[[KEPT]], %[[SCALER]]#0, %[[SCALER]]#1, %[[U]]#1 : tensor<f32>, tensor<4x3xf32>, tensor<f32>, tensor<i32>, tensor<i1>
// STATIC:        %[[SEED:.*]] = arith.constant dense<2.560000e+02> : tensor<f16>
// STATIC:        %[[INV:.*]] = arith.constant dense<3.906250e-03> : tensor<f32>
// STATIC:        %[[U:.*]]:2 = linalg.generic {{.*}} ins(%{{.*}}, %[[INV]] : tensor<4x3xf32>, tensor<f32>)
// STATIC:        return %{{.*}}, %{{.*}}, %[[U]]#1 : tensor<f32>, tensor<4x3xf32>, tensor<i1>
// NONE-NOT:      arith.select
// NONE:          return %{{.*}}, %{{.*}} : tensor<f32>, tensor<4x3xf32>
// BF16:          arith.truncf %[[W]] : tensor<4x3xf32> to tensor<4x3xbf16>
// BF16-NOT:      arith.select
// BF16:          return %{{.*}}, %{{.*}} : tensor<f32>, tensor<4x3xf32>
// level=O0 leaves the step as it is: fp32, the seed ones, the update
// inlined, nothing checked. level=auto is MindSpore's auto lists with the
// f16 default of dynamic scaling.
// O0:            arith.constant dense<1.000000e+00> : tensor<f32>
// O0:            linalg.matmul ins(%[[X]], %[[W]] : tensor<2x4xf32>, tensor<4x3xf32>)
// O0-NOT:        arith.truncf
// O0-NOT:        arith.select
// O0:            return %{{.*}}, %{{.*}} : tensor<f32>, tensor<4x3xf32>
// AUTO:          arith.truncf %{{.*}} : tensor<{{.*}}xf32> to tensor<{{.*}}xf16>
// AUTO:          linalg.matmul {{.*}}xf16>
// AUTO:          return {{.*}} : tensor<f32>, tensor<4x3xf32>, tensor<f32>, tensor<i32>, tensor<i1>
// HYST:          %[[SCALER:.*]]:3 = linalg.generic {{.*}} ins(%{{.*}}, %[[S]], %[[T]], %[[H]] : tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>)
// HYST:            arith.minimumf
// HYST:            arith.maximumf
// HYST:            arith.cmpi sle
// HYST:          return %{{.*}}, %{{.*}}, %[[SCALER]]#0, %[[SCALER]]#1, %[[SCALER]]#2, %{{.*}} : tensor<f32>, tensor<4x3xf32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<i1>
func.func @step(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> (tensor<f32>, tensor<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x3xf32>) outs(%z : tensor<2x3xf32>) -> tensor<2x3xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<2x3xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %out: f32) {
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    }
  %seed = amp.seed %loss : tensor<f32>
  %dy = linalg.generic {indexing_maps = [affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%seed : tensor<f32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%s: f32, %o: f32):
    linalg.yield %s : f32
  } -> tensor<2x3xf32>
  %ew = tensor.empty() : tensor<4x3xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<4x3xf32>) -> tensor<4x3xf32>
  %gw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %dy : tensor<2x4xf32>, tensor<2x3xf32>) outs(%zw : tensor<4x3xf32>) -> tensor<4x3xf32>
  %new = amp.update grads(%gw : tensor<4x3xf32>) state(%w : tensor<4x3xf32>) {
  ^bb0(%g: tensor<4x3xf32>, %w0: tensor<4x3xf32>):
    %lr = arith.constant dense<0.1> : tensor<4x3xf32>
    %d = arith.mulf %lr, %g : tensor<4x3xf32>
    %w1 = arith.subf %w0, %d : tensor<4x3xf32>
    amp.yield %w1 : tensor<4x3xf32>
  } : tensor<4x3xf32>
  return %loss, %new : tensor<f32>, tensor<4x3xf32>
}

// -----

// Two updates (parameters, then a separate momentum-like state) share one
// decision: one flag threaded through both gradients' checks.

// CHECK-LABEL: func.func @two_updates(
// DYN:           %[[U1:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<i1>)
// DYN:           %[[U2:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %[[U1]]#1 : tensor<4xf32>, tensor<i1>)
// DYN:           linalg.generic {{.*}} ins(%[[U2]]#1, %{{.*}} : tensor<i1>, tensor<4xf32>)
// DYN:           linalg.generic {{.*}} ins(%[[U2]]#1, %{{.*}} : tensor<i1>, tensor<4xf32>)
// DYN:           return {{.*}}, %[[U2]]#1 : tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i32>, tensor<i1>
func.func @two_updates(%x: tensor<4xf32>, %w: tensor<4xf32>, %v: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %loss = tensor.empty() : tensor<f32>
  %seed = amp.seed %loss : tensor<f32>
  %e = tensor.empty() : tensor<4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i) -> ()>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%seed, %x : tensor<f32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%s: f32, %a: f32, %o: f32):
    %r = arith.mulf %s, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %g2 = arith.addf %g, %g : tensor<4xf32>
  %w1 = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%d: tensor<4xf32>, %w0: tensor<4xf32>):
    %n = arith.subf %w0, %d : tensor<4xf32>
    amp.yield %n : tensor<4xf32>
  } : tensor<4xf32>
  %v1 = amp.update grads(%g2 : tensor<4xf32>) state(%v : tensor<4xf32>) {
  ^bb0(%d: tensor<4xf32>, %v0: tensor<4xf32>):
    %n = arith.subf %v0, %d : tensor<4xf32>
    amp.yield %n : tensor<4xf32>
  } : tensor<4xf32>
  return %w1, %v1 : tensor<4xf32>, tensor<4xf32>
}

// The examples: each gives a verified module without amp ops and with the
// spec's signature.

// MLP-LABEL: func.func @train_step(
// MLP-SAME:      %{{[^:]*}}: tensor<64x10xf32>, %{{[^:]*}}: tensor<f32> {amp.state = "scale"}, %{{[^:]*}}: tensor<i32> {amp.state = "growth_tracker"})
// MLP-SAME:      -> (tensor<f32>, tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>, tensor<f32> {amp.state = "scale"}, tensor<i32> {amp.state = "growth_tracker"}, tensor<i1> {amp.state = "found_inf"})
// MLP-NOT:       amp.{{seed|update|yield}}
// MLP:           return

// TRANSFORMER-LABEL: func.func
// TRANSFORMER-SAME:      {amp.state = "scale"}, %{{[^:]*}}: tensor<i32> {amp.state = "growth_tracker"}, %{{[^:]*}}: tensor<i32> {amp.state = "hysteresis"})
// TRANSFORMER-SAME:      tensor<f32> {amp.state = "scale"}, tensor<i32> {amp.state = "growth_tracker"}, tensor<i32> {amp.state = "hysteresis"}, tensor<i1> {amp.state = "found_inf"})
// TRANSFORMER-NOT:       amp.{{seed|update|yield}}
// TRANSFORMER:           return

// CNN-LABEL: func.func
// CNN-NOT:       amp.state = "scale"
// CNN-SAME:      tensor<i1> {amp.state = "found_inf"})
// CNN-NOT:       amp.{{seed|update|yield}}
// CNN:           bf16
// CNN:           return

// A dynamic batch, as torch-mlir imports it: the signature keeps its `?` and
// its amp.names, the matmuls read the low type and accumulate in f32, the
// filled zeros of the ReLU are built in the low type, and no tensor is
// extended back to f32 (tensor.dim reads low values as they are).
// DYNBATCH-LABEL: func.func @train_step(
// DYNBATCH-SAME:      %{{[^:]*}}: tensor<8x16xf32> {amp.name = "fc1.weight"}
// DYNBATCH-SAME:      %{{[^:]*}}: tensor<?x8xf32> {amp.name = "x"}, %{{[^:]*}}: tensor<?x4xf32> {amp.name = "y"}
// DYNBATCH-NOT:     arith.extf %{{.*}} : tensor
// DYNBATCH:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x8x[[LOW]]>, tensor<8x16x[[LOW]]>) outs(%{{.*}} : tensor<?x16xf32>)
// DYNBATCH-NOT:     arith.extf %{{.*}} : tensor
// DYNBATCH:         linalg.fill ins(%{{.*}} : [[LOW]]) outs(%{{.*}} : tensor<?x16x[[LOW]]>)
// DYNBATCH-NOT:     arith.extf %{{.*}} : tensor
// DYNBATCH:         return

// Data-parallel: amp-data-parallel runs between the loss scaling and the
// guard. The four gradients (8x16, 16, 16x4, 4: 212 elements) fit one
// default bucket, summed in grad-comm-dtype (by default the low type, f32 at
// level=O0); the guard divides by the world size, folded into 1/(S * N)
// when scaled, and checks the sums.

// DP:               module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">}
// DP-LABEL:         func.func @train_step(
// DP:               %[[WORLD:.*]] = mpi.comm_world : !mpi.comm
// DP:               mpi.allreduce(%{{.*}}, %{{.*}}, MPI_SUM, %[[WORLD]]) : memref<212x[[COMM]]>, memref<212x[[COMM]]>
// DP-NOT:           mpi.allreduce
// DP:               %[[SIZE:.*]] = mpi.comm_size(%[[WORLD]]) : i32
// DP-NEXT:          %[[N:.*]] = arith.sitofp %[[SIZE]] : i32 to f32
// DP-SCALED:        arith.mulf %{{.*}}, %[[N]] : f32
// DP-UNSCALED:      arith.divf %{{.*}}, %[[N]] : f32
// DP-SCALED:        arith.cmpf ugt
// DP-UNSCALED-NOT:  arith.cmpf ugt
// DP:               return
