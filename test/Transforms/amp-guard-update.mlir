// RUN: amp-opt %s --split-input-file --amp-loss-scaling --amp-guard-update | FileCheck %s --check-prefixes=CHECK,DYN
// RUN: amp-opt %s --split-input-file --amp-loss-scaling="hysteresis=3 min-scale=1 max-scale=1e9 growth-factor=4 backoff-factor=0.25 growth-interval=100" --amp-guard-update="hysteresis=3 min-scale=1 max-scale=1e9 growth-factor=4 backoff-factor=0.25 growth-interval=100" | FileCheck %s --check-prefixes=CHECK,OPTS
// RUN: amp-opt %s --split-input-file --amp-loss-scaling="scaling=static init-scale=1024" --amp-guard-update="scaling=static init-scale=1024" | FileCheck %s --check-prefixes=CHECK,STATIC
// RUN: amp-opt %s --split-input-file --amp-loss-scaling="dtype=bf16" --amp-guard-update="dtype=bf16" | FileCheck %s --check-prefixes=CHECK,NONE

// amp-loss-scaling gives the input of amp-guard-update; both take the same
// options, as in amp-pipeline.

// Dynamic scaling with PyTorch's defaults: 1/S once; one generic per
// gradient that unscales it and or's its "inf or NaN" flag; the update
// region inlined on the unscaled gradient; the new state selected against
// the old one by the flag; then the scaler update; the scaler state and
// found_inf appended to the results.

// DYN-LABEL: func.func @step(
// DYN-SAME:      %[[X:[^:]*]]: tensor<2x3xf32>, %[[W:[^:]*]]: tensor<2x3xf32>, %[[S:[^:]*]]: tensor<f32> {amp.state = "scale"}, %[[T:[^:]*]]: tensor<i32> {amp.state = "growth_tracker"})
// DYN-SAME:      -> (tensor<2x3xf32>, tensor<f32> {amp.state = "scale"}, tensor<i32> {amp.state = "growth_tracker"}, tensor<i1> {amp.state = "found_inf"})
// DYN-NOT:       amp.update
// DYN:           %[[G:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[X]] : tensor<f32>, tensor<2x3xf32>)
// DYN:           %[[INV:.*]] = linalg.generic {indexing_maps = [#[[MAP0:.*]], #[[MAP0]]], iterator_types = []} ins(%[[S]] : tensor<f32>)
// DYN-NEXT:      ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// DYN-NEXT:        %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// DYN-NEXT:        %[[DIV:.*]] = arith.divf %[[ONE]], %[[IN]] : f32
// DYN-NEXT:        linalg.yield %[[DIV]] : f32
// DYN:           %[[FALSE:.*]] = arith.constant dense<false> : tensor<i1>
// DYN:           %[[E:.*]] = tensor.empty() : tensor<2x3xf32>
// DYN:           %[[U:.*]]:2 = linalg.generic {indexing_maps = [#[[ID:.*]], #[[SC:.*]], #[[ID]], #[[SC]]], iterator_types = ["reduction", "reduction"]}
// DYN-SAME:          ins(%[[G]], %[[INV]] : tensor<2x3xf32>, tensor<f32>) outs(%[[E]], %[[FALSE]] : tensor<2x3xf32>, tensor<i1>)
// DYN-NEXT:      ^bb0(%[[X:.*]]: f32, %[[I:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: i1):
// DYN-NEXT:        %[[M:.*]] = arith.mulf %[[X]], %[[I]] : f32
// DYN-NEXT:        %[[ABS:.*]] = math.absf %[[M]] : f32
// DYN-NEXT:        %[[MAX:.*]] = arith.constant 3.40282347E+38 : f32
// DYN-NEXT:        %[[NF:.*]] = arith.cmpf ugt, %[[ABS]], %[[MAX]] : f32
// DYN-NEXT:        %[[OR:.*]] = arith.ori %[[ACC]], %[[NF]] : i1
// DYN-NEXT:        linalg.yield %[[M]], %[[OR]] : f32, i1
// DYN:           %[[NEW:.*]] = arith.subf %[[W]], %[[U]]#0 : tensor<2x3xf32>
// DYN:           %[[KEPT:.*]] = linalg.generic {indexing_maps = [#[[SC]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// DYN-SAME:          ins(%[[U]]#1, %[[W]] : tensor<i1>, tensor<2x3xf32>) outs(%[[NEW]] : tensor<2x3xf32>)
// DYN-NEXT:      ^bb0(%[[F:.*]]: i1, %[[OLD:.*]]: f32, %[[UPD:.*]]: f32):
// DYN-NEXT:        %[[SEL:.*]] = arith.select %[[F]], %[[OLD]], %[[UPD]] : f32
// DYN-NEXT:        linalg.yield %[[SEL]] : f32
// DYN:           %[[SCALER:.*]]:2 = linalg.generic {indexing_maps = [#[[MAP0]], #[[MAP0]], #[[MAP0]], #[[MAP0]], #[[MAP0]]], iterator_types = []}
// DYN-SAME:          ins(%[[U]]#1, %[[S]], %[[T]] : tensor<i1>, tensor<f32>, tensor<i32>)
// DYN-NEXT:      ^bb0(%[[INF:[^:]*]]: i1, %[[SC0:[^:]*]]: f32, %[[TR0:[^:]*]]: i32,
// DYN-NEXT:        %[[C0:.*]] = arith.constant 0 : i32
// DYN-NEXT:        %[[C1:.*]] = arith.constant 1 : i32
// DYN-NEXT:        %[[WIDE:.*]] = arith.extf %[[SC0]] : f32 to f64
// DYN-NEXT:        %[[COUNTED:.*]] = arith.addi %[[TR0]], %[[C1]] : i32
// DYN-NEXT:        %[[INTERVAL:.*]] = arith.constant 2000 : i32
// DYN-NEXT:        %[[GROWS:.*]] = arith.cmpi eq, %[[COUNTED]], %[[INTERVAL]] : i32
// DYN-NEXT:        %[[GF:.*]] = arith.constant 2.000000e+00 : f64
// DYN-NEXT:        %[[GP:.*]] = arith.mulf %[[WIDE]], %[[GF]] : f64
// DYN-NEXT:        %[[GROWN:.*]] = arith.truncf %[[GP]] : f64 to f32
// DYN-NEXT:        %[[GABS:.*]] = math.absf %[[GROWN]] : f32
// DYN-NEXT:        %[[FINF:.*]] = arith.constant 0x7F800000 : f32
// DYN-NEXT:        %[[GFIN:.*]] = arith.cmpf olt, %[[GABS]], %[[FINF]] : f32
// DYN-NEXT:        %[[S1:.*]] = arith.select %[[GFIN]], %[[GROWN]], %[[SC0]] : f32
// DYN-NEXT:        %[[S2:.*]] = arith.select %[[GROWS]], %[[S1]], %[[SC0]] : f32
// DYN-NEXT:        %[[T2:.*]] = arith.select %[[GROWS]], %[[C0]], %[[COUNTED]] : i32
// DYN-NEXT:        %[[BF:.*]] = arith.constant 5.000000e-01 : f64
// DYN-NEXT:        %[[BP:.*]] = arith.mulf %[[WIDE]], %[[BF]] : f64
// DYN-NEXT:        %[[BACKED:.*]] = arith.truncf %[[BP]] : f64 to f32
// DYN-NEXT:        %[[SN:.*]] = arith.select %[[INF]], %[[BACKED]], %[[S2]] : f32
// DYN-NEXT:        %[[TN:.*]] = arith.select %[[INF]], %[[C0]], %[[T2]] : i32
// DYN-NEXT:        linalg.yield %[[SN]], %[[TN]] : f32, i32
// DYN:           return %[[KEPT]], %[[SCALER]]#0, %[[SCALER]]#1, %[[U]]#1 : tensor<2x3xf32>, tensor<f32>, tensor<i32>, tensor<i1>

// Hysteresis, clamps and factors: the third state value, an overflow backs
// off only with no overflows left (else uses one up), growth refills them;
// growth is capped at max-scale, backoff floored at min-scale.

// OPTS-LABEL: func.func @step(
// OPTS-SAME:      %[[S:[^:]*]]: tensor<f32> {amp.state = "scale"}, %[[T:[^:]*]]: tensor<i32> {amp.state = "growth_tracker"}, %[[H:[^:]*]]: tensor<i32> {amp.state = "hysteresis"})
// OPTS-SAME:      -> (tensor<2x3xf32>, tensor<f32> {amp.state = "scale"}, tensor<i32> {amp.state = "growth_tracker"}, tensor<i32> {amp.state = "hysteresis"}, tensor<i1> {amp.state = "found_inf"})
// OPTS:          %[[U:.*]]:2 = linalg.generic
// OPTS:          %[[SCALER:.*]]:3 = linalg.generic {{.*}} ins(%[[U]]#1, %[[S]], %[[T]], %[[H]] : tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>)
// OPTS-NEXT:     ^bb0(%[[INF:[^:]*]]: i1, %[[SC0:[^:]*]]: f32, %[[TR0:[^:]*]]: i32, %[[LEFT:[^:]*]]: i32,
// OPTS:            %[[INTERVAL:.*]] = arith.constant 100 : i32
// OPTS:            %[[GROWS:.*]] = arith.cmpi eq, %{{.*}}, %[[INTERVAL]] : i32
// OPTS:            %[[GF:.*]] = arith.constant 4.000000e+00 : f64
// OPTS:            %[[GROWN:.*]] = arith.truncf
// OPTS:            %[[GFIN:.*]] = arith.cmpf olt
// OPTS-NEXT:       %[[CAP:.*]] = arith.constant 1.000000e+09 : f32
// OPTS-NEXT:       %[[CAPPED:.*]] = arith.minimumf %[[GROWN]], %[[CAP]] : f32
// OPTS-NEXT:       %[[S1:.*]] = arith.select %[[GFIN]], %[[CAPPED]], %[[SC0]] : f32
// OPTS-NEXT:       %[[S2:.*]] = arith.select %[[GROWS]], %[[S1]], %[[SC0]] : f32
// OPTS-NEXT:       %[[T2:.*]] = arith.select %[[GROWS]], %{{.*}}, %{{.*}} : i32
// OPTS-NEXT:       %[[BF:.*]] = arith.constant 2.500000e-01 : f64
// OPTS-NEXT:       %[[BP:.*]] = arith.mulf %{{.*}}, %[[BF]] : f64
// OPTS-NEXT:       %[[BACKED:.*]] = arith.truncf %[[BP]] : f64 to f32
// OPTS-NEXT:       %[[FLOOR:.*]] = arith.constant 1.000000e+00 : f32
// OPTS-NEXT:       %[[FLOORED:.*]] = arith.maximumf %[[BACKED]], %[[FLOOR]] : f32
// OPTS-NEXT:       %[[NONE_LEFT:.*]] = arith.cmpi sle, %[[LEFT]], %[[C1:.*]] : i32
// OPTS-NEXT:       %[[SO:.*]] = arith.select %[[NONE_LEFT]], %[[FLOORED]], %[[SC0]] : f32
// OPTS-NEXT:       %[[USED:.*]] = arith.subi %[[LEFT]], %[[C1]] : i32
// OPTS-NEXT:       %[[HO:.*]] = arith.select %[[NONE_LEFT]], %[[LEFT]], %[[USED]] : i32
// OPTS-NEXT:       %[[N:.*]] = arith.constant 3 : i32
// OPTS-NEXT:       %[[HF:.*]] = arith.select %[[GROWS]], %[[N]], %[[LEFT]] : i32
// OPTS-NEXT:       %[[SN:.*]] = arith.select %[[INF]], %[[SO]], %[[S2]] : f32
// OPTS-NEXT:       %[[TN:.*]] = arith.select %[[INF]], %{{.*}}, %[[T2]] : i32
// OPTS-NEXT:       %[[HN:.*]] = arith.select %[[INF]], %[[HO]], %[[HF]] : i32
// OPTS-NEXT:       linalg.yield %[[SN]], %[[TN]], %[[HN]] : f32, i32, i32
// OPTS:          return %{{.*}}, %[[SCALER]]#0, %[[SCALER]]#1, %[[SCALER]]#2, %[[U]]#1 : tensor<2x3xf32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<i1>
// STATIC-LABEL: func.func @step(
// STATIC-SAME:      %[[X:[^:]*]]: tensor<2x3xf32>, %[[W:[^:]*]]: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<i1> {amp.state = "found_inf"})
// STATIC:           %[[G:.*]] = linalg.generic
// STATIC:           %[[INV:.*]] = arith.constant dense<9.765625E-4> : tensor<f32>
// STATIC:           %[[U:.*]]:2 = linalg.generic {{.*}} ins(%[[G]], %[[INV]] : tensor<2x3xf32>, tensor<f32>)
// STATIC:           %[[NEW:.*]] = arith.subf %[[W]], %[[U]]#0 : tensor<2x3xf32>
// STATIC:           %[[KEPT:.*]] = linalg.generic {{.*}} ins(%[[U]]#1, %[[W]] : tensor<i1>, tensor<2x3xf32>) outs(%[[NEW]] : tensor<2x3xf32>)
// STATIC-NOT:       linalg.generic
// STATIC:           return %[[KEPT]], %[[U]]#1 : tensor<2x3xf32>, tensor<i1>

// No scaling (bf16's default): the region is inlined on the gradient as it
// is; nothing is checked and the signature stays.

// NONE-LABEL: func.func @step(
// NONE-SAME:      %[[X:[^:]*]]: tensor<2x3xf32>, %[[W:[^:]*]]: tensor<2x3xf32>) -> tensor<2x3xf32>
// NONE:           %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// NONE:           %[[G:.*]] = linalg.generic {{.*}} ins(%[[ONES]], %[[X]] : tensor<f32>, tensor<2x3xf32>)
// NONE:           } -> tensor<2x3xf32>
// NONE-NEXT:      %[[NEW:.*]] = arith.subf %[[W]], %[[G]] : tensor<2x3xf32>
// NONE-NEXT:      return %[[NEW]] : tensor<2x3xf32>
func.func @step(%x: tensor<2x3xf32>, %w: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %loss = tensor.empty() : tensor<f32>
  %seed = amp.seed %loss : tensor<f32>
  %e = tensor.empty() : tensor<2x3xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%seed, %x : tensor<f32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%s: f32, %v: f32, %o: f32):
    %m = arith.mulf %s, %v : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  %new = amp.update grads(%g : tensor<2x3xf32>) state(%w : tensor<2x3xf32>) {
  ^bb0(%dw: tensor<2x3xf32>, %w0: tensor<2x3xf32>):
    %w1 = arith.subf %w0, %dw : tensor<2x3xf32>
    amp.yield %w1 : tensor<2x3xf32>
  } : tensor<2x3xf32>
  return %new : tensor<2x3xf32>
}

// -----

// Two updates share one decision: the flag is threaded through the checks of
// all gradients (in f32 for an f16 gradient of dynamic shape, compared with
// f16's largest finite value), and every select uses the last flag. An
// integer state value is selected like the others; one that the update
// returns unchanged needs no select.

// CHECK-LABEL: func.func @two_updates(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4xf32>, %[[H:[^:]*]]: tensor<?xf16>, %[[W:[^:]*]]: tensor<4xf32>, %[[V:[^:]*]]: tensor<?xf32>, %[[STEP:[^:]*]]: tensor<i32>, %[[M:[^:]*]]: tensor<4xf32>
// DYN:           %[[FALSE:.*]] = arith.constant dense<false> : tensor<i1>
// DYN:           %[[U1:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %[[FALSE]] : tensor<4xf32>, tensor<i1>)
// DYN:           %[[C0:.*]] = arith.constant 0 : index
// DYN:           %[[D:.*]] = tensor.dim %[[G2:.*]], %[[C0]] : tensor<?xf16>
// DYN:           %[[E2:.*]] = tensor.empty(%[[D]]) : tensor<?xf16>
// DYN:           %[[U2:.*]]:2 = linalg.generic {{.*}} ins(%[[G2]], %{{.*}} : tensor<?xf16>, tensor<f32>) outs(%[[E2]], %[[U1]]#1 : tensor<?xf16>, tensor<i1>)
// DYN-NEXT:      ^bb0(%[[XI:.*]]: f16, %[[I:.*]]: f32, %{{.*}}: f16, %[[ACC:.*]]: i1):
// DYN-NEXT:        %[[XW:.*]] = arith.extf %[[XI]] : f16 to f32
// DYN-NEXT:        %[[MUL:.*]] = arith.mulf %[[XW]], %[[I]] : f32
// DYN-NEXT:        %[[MN:.*]] = arith.truncf %[[MUL]] : f32 to f16
// DYN-NEXT:        %[[ABS:.*]] = math.absf %[[MN]] : f16
// DYN-NEXT:        %[[MAX:.*]] = arith.constant 6.550400e+04 : f16
// DYN-NEXT:        %[[NF:.*]] = arith.cmpf ugt, %[[ABS]], %[[MAX]] : f16
// DYN-NEXT:        %[[OR:.*]] = arith.ori %[[ACC]], %[[NF]] : i1
// DYN-NEXT:        linalg.yield %[[MN]], %[[OR]] : f16, i1
// DYN:           %[[NW:.*]] = linalg.generic {{.*}} ins(%[[U2]]#1, %[[W]] : tensor<i1>, tensor<4xf32>)
// DYN:           %[[NSTEP:.*]] = linalg.generic {{.*}} ins(%[[U2]]#1, %[[STEP]] : tensor<i1>, tensor<i32>)
// DYN-NEXT:      ^bb0(%[[F:.*]]: i1, %[[OLD:.*]]: i32, %[[UPD:.*]]: i32):
// DYN-NEXT:        arith.select %[[F]], %[[OLD]], %[[UPD]] : i32
// DYN:           %[[NV:.*]] = linalg.generic {{.*}} ins(%[[U2]]#1, %[[V]] : tensor<i1>, tensor<?xf32>)
// DYN-NOT:       ins(%[[U2]]#1, %[[M]]
// DYN:           %[[SCALER:.*]]:2 = linalg.generic {{.*}} ins(%[[U2]]#1,
// DYN:           return %[[NW]], %[[NSTEP]], %[[NV]], %[[M]], %[[SCALER]]#0, %[[SCALER]]#1, %[[U2]]#1 :
// STATIC:        return %{{.*}}, %{{.*}}, %{{.*}}, %[[M]], %{{.*}}#1 : tensor<4xf32>, tensor<i32>, tensor<?xf32>, tensor<4xf32>, tensor<i1>
// NONE:          return %{{.*}}, %{{.*}}, %{{.*}}, %[[M]] : tensor<4xf32>, tensor<i32>, tensor<?xf32>, tensor<4xf32>{{$}}
func.func @two_updates(%x: tensor<4xf32>, %h: tensor<?xf16>, %w: tensor<4xf32>, %v: tensor<?xf32>,
                       %step: tensor<i32>, %m: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<i32>, tensor<?xf32>, tensor<4xf32>) {
  %loss = tensor.empty() : tensor<f32>
  %seed = amp.seed %loss : tensor<f32>
  %e = tensor.empty() : tensor<4xf32>
  %g1 = linalg.generic {indexing_maps = [affine_map<(i) -> ()>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                        iterator_types = ["parallel"]}
      ins(%seed, %x : tensor<f32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%s: f32, %a: f32, %o: f32):
    %r = arith.mulf %s, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %g2 = linalg.generic {indexing_maps = [affine_map<(i) -> ()>, affine_map<(i) -> (i)>],
                        iterator_types = ["parallel"]}
      ins(%seed : tensor<f32>) outs(%h : tensor<?xf16>) {
  ^bb0(%s: f32, %a: f16):
    %t = arith.truncf %s : f32 to f16
    %r = arith.mulf %t, %a : f16
    linalg.yield %r : f16
  } -> tensor<?xf16>
  %n1:2 = amp.update grads(%g1 : tensor<4xf32>) state(%w, %step : tensor<4xf32>, tensor<i32>) {
  ^bb0(%dw: tensor<4xf32>, %w0: tensor<4xf32>, %s0: tensor<i32>):
    %w1 = arith.subf %w0, %dw : tensor<4xf32>
    %one = arith.constant dense<1> : tensor<i32>
    %s1 = arith.addi %s0, %one : tensor<i32>
    amp.yield %w1, %s1 : tensor<4xf32>, tensor<i32>
  } : tensor<4xf32>, tensor<i32>
  %n2:2 = amp.update grads(%g2 : tensor<?xf16>) state(%v, %m : tensor<?xf32>, tensor<4xf32>) {
  ^bb0(%dv: tensor<?xf16>, %v0: tensor<?xf32>, %m0: tensor<4xf32>):
    %dvf = arith.extf %dv : tensor<?xf16> to tensor<?xf32>
    %v1 = arith.subf %v0, %dvf : tensor<?xf32>
    amp.yield %v1, %m0 : tensor<?xf32>, tensor<4xf32>
  } : tensor<?xf32>, tensor<4xf32>
  return %n1#0, %n1#1, %n2#0, %n2#1 : tensor<4xf32>, tensor<i32>, tensor<?xf32>, tensor<4xf32>
}

// -----

// A step without an update still carries its scaler: nothing overflowed.

// CHECK-LABEL: func.func @no_update(
// DYN-SAME:        %[[S:[^:]*]]: tensor<f32> {amp.state = "scale"}, %[[T:[^:]*]]: tensor<i32> {amp.state = "growth_tracker"})
// DYN:           %[[FALSE:.*]] = arith.constant dense<false> : tensor<i1>
// DYN:           %[[SCALER:.*]]:2 = linalg.generic {{.*}} ins(%[[FALSE]], %[[S]], %[[T]] : tensor<i1>, tensor<f32>, tensor<i32>)
// DYN:           return %{{.*}}, %[[SCALER]]#0, %[[SCALER]]#1, %[[FALSE]] : tensor<f32>, tensor<f32>, tensor<i32>, tensor<i1>
func.func @no_update(%loss: tensor<f32>) -> tensor<f32> {
  %seed = amp.seed %loss : tensor<f32>
  return %seed : tensor<f32>
}

// -----

// Gradients summed over the ranks (amp-data-parallel's mark): the world
// size N joins the unscale factor, 1/(S * N) once per step, so the check
// still reads each gradient once. Static scaling computes 1/(1024 * N);
// without scaling each gradient is multiplied by 1/N and nothing is
// checked.

// CHECK-LABEL: func.func @summed(
// CHECK-NOT:     amp.data_parallel
// CHECK:         %[[WORLD:.*]] = mpi.comm_world : !mpi.comm
// CHECK-NEXT:    %[[SIZE:.*]] = mpi.comm_size(%[[WORLD]]) : i32
// CHECK-NEXT:    %[[N:.*]] = arith.sitofp %[[SIZE]] : i32 to f32
// DYN:           %[[INV:.*]] = linalg.generic {{.*}} ins(%[[S:.*]] : tensor<f32>)
// DYN-NEXT:      ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// DYN-NEXT:        %[[SN:.*]] = arith.mulf %[[IN]], %[[N]] : f32
// DYN-NEXT:        %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// DYN-NEXT:        %[[DIV:.*]] = arith.divf %[[ONE]], %[[SN]] : f32
// DYN:           %[[U:.*]]:2 = linalg.generic {{.*}} ins(%{{.*}}, %[[INV]] : tensor<2x3xf32>, tensor<f32>)
// STATIC:        %[[INV:.*]] = linalg.generic {{.*}} iterator_types = []} outs(
// STATIC-NEXT:   ^bb0(%{{.*}}: f32):
// STATIC-NEXT:     %[[S:.*]] = arith.constant 1.024000e+03 : f32
// STATIC-NEXT:     %[[SN:.*]] = arith.mulf %[[S]], %[[N]] : f32
// STATIC:        %[[U:.*]]:2 = linalg.generic {{.*}} ins(%{{.*}}, %[[INV]] : tensor<2x3xf32>, tensor<f32>)
// NONE:          %[[INV:.*]] = linalg.generic {{.*}} iterator_types = []} outs(
// NONE-NEXT:     ^bb0(%{{.*}}: f32):
// NONE-NEXT:       %[[S:.*]] = arith.constant 1.000000e+00 : f32
// NONE-NEXT:       %[[SN:.*]] = arith.mulf %[[S]], %[[N]] : f32
// NONE-NEXT:       %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// NONE-NEXT:       %[[DIV:.*]] = arith.divf %[[ONE]], %[[SN]] : f32
// NONE:          %[[MEAN:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%{{.*}}, %[[INV]] : tensor<2x3xf32>, tensor<f32>)
// NONE-NEXT:     ^bb0(%[[G:.*]]: f32, %[[I:.*]]: f32, %{{.*}}: f32):
// NONE-NEXT:       %[[M:.*]] = arith.mulf %[[G]], %[[I]] : f32
// NONE-NEXT:       linalg.yield %[[M]] : f32
// NONE:          %[[NEW:.*]] = arith.subf %{{.*}}, %[[MEAN]] : tensor<2x3xf32>
// NONE-NEXT:     return %[[NEW]] : tensor<2x3xf32>
func.func @summed(%x: tensor<2x3xf32>, %w: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %loss = tensor.empty() : tensor<f32>
  %seed = amp.seed %loss : tensor<f32>
  %e = tensor.empty() : tensor<2x3xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%seed, %x : tensor<f32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%s: f32, %v: f32, %o: f32):
    %m = arith.mulf %s, %v : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  %new = amp.update grads(%g : tensor<2x3xf32>) state(%w : tensor<2x3xf32>) {
  ^bb0(%dw: tensor<2x3xf32>, %w0: tensor<2x3xf32>):
    %w1 = arith.subf %w0, %dw : tensor<2x3xf32>
    amp.yield %w1 : tensor<2x3xf32>
  } {amp.data_parallel = "mpi"} : tensor<2x3xf32>
  return %new : tensor<2x3xf32>
}
