// RUN: amp-opt %s --amp-pipeline="level=O0" | FileCheck %s --check-prefixes=CHECK,O0 --implicit-check-not=f16
// RUN: amp-opt %s --amp-pipeline="level=O1" | FileCheck %s --check-prefixes=CHECK,O1
// RUN: amp-opt %s --amp-pipeline="level=O2" | FileCheck %s --check-prefixes=CHECK,O2
// RUN: amp-opt %s --amp-pipeline="level=O3" | FileCheck %s --check-prefixes=CHECK,O3
// RUN: amp-opt %s --amp-pipeline="level=auto" | FileCheck %s --check-prefixes=CHECK,AUTO
// RUN: amp-opt %s --amp-pipeline="level=O3 scaling=dynamic dtype=bf16" | FileCheck %s --check-prefixes=CHECK,O3-BF16
// RUN: amp-opt %s --amp-pipeline="level=O2 unknown-ops=deny" | FileCheck %s --check-prefixes=CHECK,O2-DENY

// level=O0 is the fp32 step as written: the same IR as stripping the
// markers (the seed becomes ones, the update is inlined) and cleaning up.
// RUN: amp-opt %s --amp-pipeline="level=O0" > %t.o0.mlir
// RUN: amp-opt %s --amp-strip-markers --canonicalize --cse > %t.fp32.mlir
// RUN: diff %t.o0.mlir %t.fp32.mlir

// MindSpore's levels on one step: a dense layer (matmul, bias add, ReLU), a
// norm-like statistic (sum of squares, rsqrt) that scales the activations,
// exp, a sum as the loss, the weight gradient and SGD. Where the casts go:
// - O1 (AMP_WHITE_LIST): the matmuls and ReLU's maximum are low; the bias
//   add, the statistics, the scaling, exp and the first backward op stay
//   f32. Dynamic scaling.
// - O2 (everything but AMP_BLACK_LIST and the unsafe ops): all is low but
//   rsqrt (a norm statistic) and exp. The first backward op is low, so the
//   scale itself is read in f16. Dynamic scaling.
// - O3, all is low, rsqrt and exp included; reductions and matmuls still
//   accumulate in f32. No scaling.
// - auto: the mindspore preset (auto lists): elementwise ops follow their
//   inputs, so only the matmuls are low.
// The update region never changes: w stays f32 (the subf on %[[W]]).

// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4x8xf32>, %[[W:[^:]*]]: tensor<8x8xf32>, %[[B:[^:]*]]: tensor<4x8xf32>
// O0-SAME:         ) -> (tensor<f32>, tensor<8x8xf32>) {
// O1-SAME:         %[[S:[^:]*]]: tensor<f32> {amp.state = "scale"}, %{{[^:]*}}: tensor<i32> {amp.state = "growth_tracker"})
// O2-SAME:         %[[S:[^:]*]]: tensor<f32> {amp.state = "scale"}, %{{[^:]*}}: tensor<i32> {amp.state = "growth_tracker"})
// O3-SAME:         ) -> (tensor<f32>, tensor<8x8xf32>) {
// AUTO-SAME:       %[[S:[^:]*]]: tensor<f32> {amp.state = "scale"}, %{{[^:]*}}: tensor<i32> {amp.state = "growth_tracker"})
// O3-BF16-SAME:    %{{[^:]*}}: tensor<f32> {amp.state = "scale"}, %{{[^:]*}}: tensor<i32> {amp.state = "growth_tracker"})

// O0:            %[[Y:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<4x8xf32>, tensor<8x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// O0:            arith.addf %[[Y]], %[[B]] : tensor<4x8xf32>
// O0:            math.rsqrt %{{.*}} : tensor<4xf32>
// O0:            math.exp %{{.*}} : tensor<4x8xf32>
// O0:            return

// O1:            %[[WL:.*]] = arith.truncf %[[W]] : tensor<8x8xf32> to tensor<8x8xf16>
// O1:            %[[XL:.*]] = arith.truncf %[[X]] : tensor<4x8xf32> to tensor<4x8xf16>
// O1:            %[[Y:.*]] = linalg.matmul ins(%[[XL]], %[[WL]] : tensor<4x8xf16>, tensor<8x8xf16>) outs(%{{.*}} : tensor<4x8xf32>)
// O1-NEXT:       %[[A:.*]] = arith.addf %[[Y]], %[[B]] : tensor<4x8xf32>
// O1-NEXT:       %[[AL:.*]] = arith.truncf %[[A]] : tensor<4x8xf32> to tensor<4x8xf16>
// O1-NEXT:       %[[HL:.*]] = arith.maximumf %[[AL]], %{{.*}} : tensor<4x8xf16>
// O1-NEXT:       %[[H:.*]] = arith.extf %[[HL]] : tensor<4x8xf16> to tensor<4x8xf32>
// O1-NEXT:       arith.mulf %[[H]], %[[H]] : tensor<4x8xf32>
// O1:            linalg.reduce ins(%{{.*}} : tensor<4x8xf32>) outs(%{{.*}} : tensor<4xf32>)
// O1:            math.rsqrt %{{.*}} : tensor<4xf32>
// O1-NEXT:       linalg.generic {{.*}} ins(%[[H]], %{{.*}} : tensor<4x8xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// O1:            %[[P:.*]] = math.exp %{{.*}} : tensor<4x8xf32>
// O1:            linalg.reduce ins(%[[P]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<f32>)
// O1:            %[[DY:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[P]] : tensor<f32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// O1:            %[[DYL:.*]] = arith.truncf %[[DY]] : tensor<4x8xf32> to tensor<4x8xf16>
// O1:            linalg.matmul {{.*}} ins(%[[XL]], %[[DYL]] : tensor<4x8xf16>, tensor<4x8xf16>) outs(%{{.*}} : tensor<8x8xf32>)
// O1:            arith.subf %[[W]], %{{.*}} : tensor<8x8xf32>

// O2:            %[[BL:.*]] = arith.truncf %[[B]] : tensor<4x8xf32> to tensor<4x8xf16>
// O2:            %[[WL:.*]] = arith.truncf %[[W]] : tensor<8x8xf32> to tensor<8x8xf16>
// O2:            %[[XL:.*]] = arith.truncf %[[X]] : tensor<4x8xf32> to tensor<4x8xf16>
// O2:            %[[Y:.*]] = linalg.matmul ins(%[[XL]], %[[WL]] : tensor<4x8xf16>, tensor<8x8xf16>) outs(%{{.*}} : tensor<4x8xf32>)
// O2-NEXT:       %[[YL:.*]] = arith.truncf %[[Y]] : tensor<4x8xf32> to tensor<4x8xf16>
// O2-NEXT:       %[[A:.*]] = arith.addf %[[YL]], %[[BL]] : tensor<4x8xf16>
// O2-NEXT:       %[[H:.*]] = arith.maximumf %[[A]], %{{.*}} : tensor<4x8xf16>
// O2-NEXT:       arith.mulf %[[H]], %[[H]] : tensor<4x8xf16>
// O2:            %[[SUM:.*]] = linalg.reduce ins(%{{.*}} : tensor<4x8xf16>) outs(%{{.*}} : tensor<4xf32>)
// O2:            %[[R:.*]] = math.rsqrt %[[SUM]] : tensor<4xf32>
// O2-NEXT:       %[[RL:.*]] = arith.truncf %[[R]] : tensor<4xf32> to tensor<4xf16>
// O2-NEXT:       %[[N:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[RL]] : tensor<4x8xf16>, tensor<4xf16>) outs(%{{.*}} : tensor<4x8xf16>)
// O2:            %[[NF:.*]] = arith.extf %[[N]] : tensor<4x8xf16> to tensor<4x8xf32>
// O2-NEXT:       %[[P:.*]] = math.exp %[[NF]] : tensor<4x8xf32>
// O2-NEXT:       %[[PL:.*]] = arith.truncf %[[P]] : tensor<4x8xf32> to tensor<4x8xf16>
// O2:            linalg.reduce ins(%[[PL]] : tensor<4x8xf16>) outs(%{{.*}} : tensor<f32>)
// O2:            %[[SL:.*]] = arith.truncf %[[S]] : tensor<f32> to tensor<f16>
// O2-NEXT:       %[[DY:.*]] = linalg.generic {{.*}} ins(%[[SL]], %[[PL]] : tensor<f16>, tensor<4x8xf16>) outs(%{{.*}} : tensor<4x8xf16>)
// O2:            linalg.matmul {{.*}} ins(%[[XL]], %[[DY]] : tensor<4x8xf16>, tensor<4x8xf16>) outs(%{{.*}} : tensor<8x8xf32>)
// O2:            arith.subf %[[W]], %{{.*}} : tensor<8x8xf32>

// O3:            %[[Y:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<8x8xf16>) outs(%{{.*}} : tensor<4x8xf32>)
// O3-NEXT:       %[[YL:.*]] = arith.truncf %[[Y]] : tensor<4x8xf32> to tensor<4x8xf16>
// O3-NEXT:       arith.addf %[[YL]], %{{.*}} : tensor<4x8xf16>
// O3:            %[[SUM:.*]] = linalg.reduce ins(%{{.*}} : tensor<4x8xf16>) outs(%{{.*}} : tensor<4xf32>)
// O3:            %[[SUML:.*]] = arith.truncf %[[SUM]] : tensor<4xf32> to tensor<4xf16>
// O3-NEXT:       math.rsqrt %[[SUML]] : tensor<4xf16>
// O3:            %[[P:.*]] = math.exp %{{.*}} : tensor<4x8xf16>
// O3:            linalg.reduce ins(%[[P]] : tensor<4x8xf16>) outs(%{{.*}} : tensor<f32>)
// O3:            %[[DY:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[P]] : tensor<f16>, tensor<4x8xf16>) outs(%{{.*}} : tensor<4x8xf16>)
// O3:            linalg.matmul {{.*}} ins(%{{.*}}, %[[DY]] : tensor<4x8xf16>, tensor<4x8xf16>) outs(%{{.*}} : tensor<8x8xf32>)
// O3-NOT:        arith.select
// O3:            arith.subf %[[W]], %{{.*}} : tensor<8x8xf32>
// O3:            return %{{.*}}, %{{.*}} : tensor<f32>, tensor<8x8xf32>

// AUTO:          linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<8x8xf16>) outs(%{{.*}} : tensor<4x8xf32>)
// AUTO-NEXT:     arith.addf %{{.*}}, %[[B]] : tensor<4x8xf32>
// AUTO-NEXT:     arith.maximumf %{{.*}}, %{{.*}} : tensor<4x8xf32>
// AUTO:          math.rsqrt %{{.*}} : tensor<4xf32>
// AUTO:          math.exp %{{.*}} : tensor<4x8xf32>
// AUTO:          linalg.generic {{.*}} ins(%[[S]], %{{.*}} : tensor<f32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// AUTO:          linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<4x8xf16>) outs(%{{.*}} : tensor<8x8xf32>)

// A level's scaling default gives way to an explicit `scaling`, its dtype to
// `dtype`; `unknown-ops` overrides the preset's allow (O2's elementwise ops
// in no list become deny, like O1's).
// O3-BF16:       linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<8x8xbf16>) outs(%{{.*}} : tensor<4x8xf32>)
// O3-BF16:       math.rsqrt %{{.*}} : tensor<4xbf16>
// O3-BF16:       arith.select
// O2-DENY:       linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<8x8xf16>) outs(%{{.*}} : tensor<4x8xf32>)
// O2-DENY-NEXT:  arith.addf %{{.*}}, %[[B]] : tensor<4x8xf32>
// O2-DENY-NEXT:  arith.maximumf %{{.*}}, %{{.*}} : tensor<4x8xf32>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<4x8xf32>) -> (tensor<f32>, tensor<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = arith.addf %y, %b : tensor<4x8xf32>
  %h = arith.maximumf %a, %zeros : tensor<4x8xf32>
  %sq = arith.mulf %h, %h : tensor<4x8xf32>
  %er = tensor.empty() : tensor<4xf32>
  %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %ms = linalg.reduce ins(%sq : tensor<4x8xf32>) outs(%zr : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %r = math.rsqrt %ms : tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %r : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %t = arith.mulf %v, %s : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %p = math.exp %n : tensor<4x8xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%p : tensor<4x8xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %seed = amp.seed %loss : tensor<f32>
  %dy = linalg.generic {indexing_maps = [#all, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%seed, %p : tensor<f32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%s: f32, %v: f32, %o: f32):
    %t = arith.mulf %s, %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %ew = tensor.empty() : tensor<8x8xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<8x8xf32>) -> tensor<8x8xf32>
  %gw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %dy : tensor<4x8xf32>, tensor<4x8xf32>) outs(%zw : tensor<8x8xf32>) -> tensor<8x8xf32>
  %new = amp.update grads(%gw : tensor<8x8xf32>) state(%w : tensor<8x8xf32>) {
  ^bb0(%g: tensor<8x8xf32>, %w0: tensor<8x8xf32>):
    %lr = arith.constant dense<0.1> : tensor<8x8xf32>
    %d = arith.mulf %lr, %g : tensor<8x8xf32>
    %w1 = arith.subf %w0, %d : tensor<8x8xf32>
    amp.yield %w1 : tensor<8x8xf32>
  } : tensor<8x8xf32>
  return %loss, %new : tensor<f32>, tensor<8x8xf32>
}
