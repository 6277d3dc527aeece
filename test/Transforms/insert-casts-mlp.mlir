// RUN: amp-opt %s --amp-insert-casts="report=%t.json" | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.json

// A complete training step (the MLP of examples/mlp.mlir): every matmul
// reads f16 and accumulates in f32; the bias add and ReLU between the two
// forward matmuls (and the ReLU backward between the backward matmuls) run
// in f16; softmax, log and the loss stay f32 (deny) and so do the infer ops
// after them (deny spreads forward); the bias gradients read f16 and
// accumulate in f32; the update region is unchanged. Seven truncf, where
// naive per-op casting needs 15 casts.
// REPORT:      "casts": {
// REPORT-NEXT:   "bytes": {{[0-9]+}},
// REPORT-NEXT:   "casts": 7,
// REPORT-NEXT:   "dynamic_casts": 0,
// REPORT-NEXT:   "elements": {{[0-9]+}},
// REPORT-NEXT:   "extf": 0,
// REPORT-NEXT:   "truncf": 7
// REPORT:      "naive": {
// REPORT-NEXT:   "bytes": {{[0-9]+}},
// REPORT-NEXT:   "casts": 15,
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<64x128xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<128xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<128x10xf32>, %[[ARG3:[A-Za-z0-9_]+]]: tensor<10xf32>, %[[ARG4:[A-Za-z0-9_]+]]: tensor<64x64xf32>, %[[ARG5:[A-Za-z0-9_]+]]: tensor<64x10xf32>) -> (tensor<f32>, tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>) {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG2]] : tensor<128x10xf32> to tensor<128x10xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<128xf32> to tensor<128xf16>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<64x128xf32> to tensor<64x128xf16>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.truncf %[[ARG4]] : tensor<64x64xf32> to tensor<64x64xf16>
// CHECK-NEXT: %[[CST:[A-Za-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[CST_0:[A-Za-z0-9_]+]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[CST_1:[A-Za-z0-9_]+]] = arith.constant 1.562500e-02 : f32
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = tensor.empty() : tensor<64x128xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = tensor.empty() : tensor<64x128xf16>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V4]] : tensor<64x128xf32>) -> tensor<64x128xf32>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V3]], %[[V2]] : tensor<64x64xf16>, tensor<64x128xf16>) outs(%[[V6]] : tensor<64x128xf32>) -> tensor<64x128xf32>
// CHECK-NEXT: %[[V8:[A-Za-z0-9_]+]] = arith.truncf %[[V7]] : tensor<64x128xf32> to tensor<64x128xf16>
// CHECK-NEXT: %[[V9:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel", "parallel"]} ins(%[[V8]], %[[V1]] : tensor<64x128xf16>, tensor<128xf16>) outs(%[[V5]] : tensor<64x128xf16>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f16, %[[IN_2:[A-Za-z0-9_]+]]: f16, %[[OUT:[A-Za-z0-9_]+]]: f16):
// CHECK-NEXT: %[[V43:[A-Za-z0-9_]+]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT: %[[V44:[A-Za-z0-9_]+]] = arith.extf %[[IN_2]] : f16 to f32
// CHECK-NEXT: %[[V45:[A-Za-z0-9_]+]] = arith.addf %[[V43]], %[[V44]] : f32
// CHECK-NEXT: %[[V46:[A-Za-z0-9_]+]] = arith.truncf %[[V45]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[V46]] : f16
// CHECK-NEXT: } -> tensor<64x128xf16>
// CHECK-NEXT: %[[V10:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel", "parallel"]} ins(%[[V9]] : tensor<64x128xf16>) outs(%[[V5]] : tensor<64x128xf16>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f16, %[[OUT:[A-Za-z0-9_]+]]: f16):
// CHECK-NEXT: %[[V43:[A-Za-z0-9_]+]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT: %[[V44:[A-Za-z0-9_]+]] = arith.maximumf %[[V43]], %[[CST]] : f32
// CHECK-NEXT: %[[V45:[A-Za-z0-9_]+]] = arith.truncf %[[V44]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[V45]] : f16
// CHECK-NEXT: } -> tensor<64x128xf16>
// CHECK-NEXT: %[[V11:[A-Za-z0-9_]+]] = tensor.empty() : tensor<64x10xf32>
// CHECK-NEXT: %[[V12:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V11]] : tensor<64x10xf32>) -> tensor<64x10xf32>
// CHECK-NEXT: %[[V13:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V10]], %[[V0]] : tensor<64x128xf16>, tensor<128x10xf16>) outs(%[[V12]] : tensor<64x10xf32>) -> tensor<64x10xf32>
// CHECK-NEXT: %[[V14:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel", "parallel"]} ins(%[[V13]], %[[ARG3]] : tensor<64x10xf32>, tensor<10xf32>) outs(%[[V11]] : tensor<64x10xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f32, %[[IN_2:[A-Za-z0-9_]+]]: f32, %[[OUT:[A-Za-z0-9_]+]]: f32):
// CHECK-NEXT: %[[V43:[A-Za-z0-9_]+]] = arith.addf %[[IN]], %[[IN_2]] : f32
// CHECK-NEXT: linalg.yield %[[V43]] : f32
// CHECK-NEXT: } -> tensor<64x10xf32>
// CHECK-NEXT: %[[V15:[A-Za-z0-9_]+]] = tensor.empty() : tensor<64xf32>
// CHECK-NEXT: %[[V16:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST_0]] : f32) outs(%[[V15]] : tensor<64xf32>) -> tensor<64xf32>
// CHECK-NEXT: %[[V17:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel", "reduction"]} ins(%[[V14]] : tensor<64x10xf32>) outs(%[[V16]] : tensor<64xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f32, %[[OUT:[A-Za-z0-9_]+]]: f32):
// CHECK-NEXT: %[[V43:[A-Za-z0-9_]+]] = arith.maximumf %[[IN]], %[[OUT]] : f32
// CHECK-NEXT: linalg.yield %[[V43]] : f32
// CHECK-NEXT: } -> tensor<64xf32>
// CHECK-NEXT: %[[V18:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel", "parallel"]} ins(%[[V14]], %[[V17]] : tensor<64x10xf32>, tensor<64xf32>) outs(%[[V11]] : tensor<64x10xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f32, %[[IN_2:[A-Za-z0-9_]+]]: f32, %[[OUT:[A-Za-z0-9_]+]]: f32):
// CHECK-NEXT: %[[V43:[A-Za-z0-9_]+]] = arith.subf %[[IN]], %[[IN_2]] : f32
// CHECK-NEXT: %[[V44:[A-Za-z0-9_]+]] = math.exp %[[V43]] : f32
// CHECK-NEXT: linalg.yield %[[V44]] : f32
// CHECK-NEXT: } -> tensor<64x10xf32>
// CHECK-NEXT: %[[V19:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V15]] : tensor<64xf32>) -> tensor<64xf32>
// CHECK-NEXT: %[[V20:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel", "reduction"]} ins(%[[V18]] : tensor<64x10xf32>) outs(%[[V19]] : tensor<64xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f32, %[[OUT:[A-Za-z0-9_]+]]: f32):
// CHECK-NEXT: %[[V43:[A-Za-z0-9_]+]] = arith.addf %[[IN]], %[[OUT]] : f32
// CHECK-NEXT: linalg.yield %[[V43]] : f32
// CHECK-NEXT: } -> tensor<64xf32>
// CHECK-NEXT: %[[V21:[A-Za-z0-9_]+]] = tensor.empty() : tensor<f32>
// CHECK-NEXT: %[[V22:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V21]] : tensor<f32>) -> tensor<f32>
// CHECK-NEXT: %[[V23:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["reduction", "reduction"]} ins(%[[V14]], %[[V17]], %[[V20]], %[[ARG5]] : tensor<64x10xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x10xf32>) outs(%[[V22]] : tensor<f32>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f32, %[[IN_2:[A-Za-z0-9_]+]]: f32, %[[IN_3:[A-Za-z0-9_]+]]: f32, %[[IN_4:[A-Za-z0-9_]+]]: f32, %[[OUT:[A-Za-z0-9_]+]]: f32):
// CHECK-NEXT: %[[V43:[A-Za-z0-9_]+]] = math.log %[[IN_3]] : f32
// CHECK-NEXT: %[[V44:[A-Za-z0-9_]+]] = arith.subf %[[IN]], %[[IN_2]] : f32
// CHECK-NEXT: %[[V45:[A-Za-z0-9_]+]] = arith.subf %[[V44]], %[[V43]] : f32
// CHECK-NEXT: %[[V46:[A-Za-z0-9_]+]] = arith.mulf %[[IN_4]], %[[V45]] : f32
// CHECK-NEXT: %[[V47:[A-Za-z0-9_]+]] = arith.mulf %[[V46]], %[[CST_1]] : f32
// CHECK-NEXT: %[[V48:[A-Za-z0-9_]+]] = arith.subf %[[OUT]], %[[V47]] : f32
// CHECK-NEXT: linalg.yield %[[V48]] : f32
// CHECK-NEXT: } -> tensor<f32>
// CHECK-NEXT: %[[V24:[A-Za-z0-9_]+]] = amp.seed %[[V23]] : tensor<f32>
// CHECK-NEXT: %[[V25:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel", "parallel"]} ins(%[[V18]], %[[V20]], %[[ARG5]], %[[V24]] : tensor<64x10xf32>, tensor<64xf32>, tensor<64x10xf32>, tensor<f32>) outs(%[[V11]] : tensor<64x10xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f32, %[[IN_2:[A-Za-z0-9_]+]]: f32, %[[IN_3:[A-Za-z0-9_]+]]: f32, %[[IN_4:[A-Za-z0-9_]+]]: f32, %[[OUT:[A-Za-z0-9_]+]]: f32):
// CHECK-NEXT: %[[V43:[A-Za-z0-9_]+]] = arith.divf %[[IN]], %[[IN_2]] : f32
// CHECK-NEXT: %[[V44:[A-Za-z0-9_]+]] = arith.subf %[[V43]], %[[IN_3]] : f32
// CHECK-NEXT: %[[V45:[A-Za-z0-9_]+]] = arith.mulf %[[IN_4]], %[[CST_1]] : f32
// CHECK-NEXT: %[[V46:[A-Za-z0-9_]+]] = arith.mulf %[[V44]], %[[V45]] : f32
// CHECK-NEXT: linalg.yield %[[V46]] : f32
// CHECK-NEXT: } -> tensor<64x10xf32>
// CHECK-NEXT: %[[V26:[A-Za-z0-9_]+]] = arith.truncf %[[V25]] : tensor<64x10xf32> to tensor<64x10xf16>
// CHECK-NEXT: %[[V27:[A-Za-z0-9_]+]] = tensor.empty() : tensor<128x10xf32>
// CHECK-NEXT: %[[V28:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V27]] : tensor<128x10xf32>) -> tensor<128x10xf32>
// CHECK-NEXT: %[[V29:[A-Za-z0-9_]+]] = linalg.matmul indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}] ins(%[[V10]], %[[V26]] : tensor<64x128xf16>, tensor<64x10xf16>) outs(%[[V28]] : tensor<128x10xf32>) -> tensor<128x10xf32>
// CHECK-NEXT: %[[V30:[A-Za-z0-9_]+]] = tensor.empty() : tensor<10xf32>
// CHECK-NEXT: %[[V31:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V30]] : tensor<10xf32>) -> tensor<10xf32>
// CHECK-NEXT: %[[V32:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["reduction", "parallel"]} ins(%[[V25]] : tensor<64x10xf32>) outs(%[[V31]] : tensor<10xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f32, %[[OUT:[A-Za-z0-9_]+]]: f32):
// CHECK-NEXT: %[[V43:[A-Za-z0-9_]+]] = arith.addf %[[IN]], %[[OUT]] : f32
// CHECK-NEXT: linalg.yield %[[V43]] : f32
// CHECK-NEXT: } -> tensor<10xf32>
// CHECK-NEXT: %[[V33:[A-Za-z0-9_]+]] = linalg.matmul indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}] ins(%[[V26]], %[[V0]] : tensor<64x10xf16>, tensor<128x10xf16>) outs(%[[V6]] : tensor<64x128xf32>) -> tensor<64x128xf32>
// CHECK-NEXT: %[[V34:[A-Za-z0-9_]+]] = arith.truncf %[[V33]] : tensor<64x128xf32> to tensor<64x128xf16>
// CHECK-NEXT: %[[V35:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel", "parallel"]} ins(%[[V34]], %[[V9]] : tensor<64x128xf16>, tensor<64x128xf16>) outs(%[[V5]] : tensor<64x128xf16>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f16, %[[IN_2:[A-Za-z0-9_]+]]: f16, %[[OUT:[A-Za-z0-9_]+]]: f16):
// CHECK-NEXT: %[[V43:[A-Za-z0-9_]+]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT: %[[V44:[A-Za-z0-9_]+]] = arith.extf %[[IN_2]] : f16 to f32
// CHECK-NEXT: %[[V45:[A-Za-z0-9_]+]] = arith.cmpf ogt, %[[V44]], %[[CST]] : f32
// CHECK-NEXT: %[[V46:[A-Za-z0-9_]+]] = arith.select %[[V45]], %[[V43]], %[[CST]] : f32
// CHECK-NEXT: %[[V47:[A-Za-z0-9_]+]] = arith.truncf %[[V46]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[V47]] : f16
// CHECK-NEXT: } -> tensor<64x128xf16>
// CHECK-NEXT: %[[V36:[A-Za-z0-9_]+]] = tensor.empty() : tensor<64x128xf32>
// CHECK-NEXT: %[[V37:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V36]] : tensor<64x128xf32>) -> tensor<64x128xf32>
// CHECK-NEXT: %[[V38:[A-Za-z0-9_]+]] = linalg.matmul indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}] ins(%[[V3]], %[[V35]] : tensor<64x64xf16>, tensor<64x128xf16>) outs(%[[V37]] : tensor<64x128xf32>) -> tensor<64x128xf32>
// CHECK-NEXT: %[[V39:[A-Za-z0-9_]+]] = tensor.empty() : tensor<128xf32>
// CHECK-NEXT: %[[V40:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V39]] : tensor<128xf32>) -> tensor<128xf32>
// CHECK-NEXT: %[[V41:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["reduction", "parallel"]} ins(%[[V35]] : tensor<64x128xf16>) outs(%[[V40]] : tensor<128xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f16, %[[OUT:[A-Za-z0-9_]+]]: f32):
// CHECK-NEXT: %[[V43:[A-Za-z0-9_]+]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT: %[[V44:[A-Za-z0-9_]+]] = arith.addf %[[V43]], %[[OUT]] : f32
// CHECK-NEXT: linalg.yield %[[V44]] : f32
// CHECK-NEXT: } -> tensor<128xf32>
// CHECK-NEXT: %[[V42:[A-Za-z0-9_]+]]:4 = amp.update grads(%[[V38]], %[[V41]], %[[V29]], %[[V32]] : tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>) state(%[[ARG0]], %[[ARG1]], %[[ARG2]], %[[ARG3]] : tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>) {
// CHECK-NEXT: ^bb0(%[[ARG6:[A-Za-z0-9_]+]]: tensor<64x128xf32>, %[[ARG7:[A-Za-z0-9_]+]]: tensor<128xf32>, %[[ARG8:[A-Za-z0-9_]+]]: tensor<128x10xf32>, %[[ARG9:[A-Za-z0-9_]+]]: tensor<10xf32>, %[[ARG10:[A-Za-z0-9_]+]]: tensor<64x128xf32>, %[[ARG11:[A-Za-z0-9_]+]]: tensor<128xf32>, %[[ARG12:[A-Za-z0-9_]+]]: tensor<128x10xf32>, %[[ARG13:[A-Za-z0-9_]+]]: tensor<10xf32>):
// CHECK-NEXT: %[[CST_2:[A-Za-z0-9_]+]] = arith.constant 1.000000e-01 : f32
// CHECK-NEXT: %[[V43:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel", "parallel"]} ins(%[[ARG10]], %[[ARG6]] : tensor<64x128xf32>, tensor<64x128xf32>) outs(%[[ARG10]] : tensor<64x128xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f32, %[[IN_3:[A-Za-z0-9_]+]]: f32, %[[OUT:[A-Za-z0-9_]+]]: f32):
// CHECK-NEXT: %[[V47:[A-Za-z0-9_]+]] = arith.mulf %[[CST_2]], %[[IN_3]] : f32
// CHECK-NEXT: %[[V48:[A-Za-z0-9_]+]] = arith.subf %[[IN]], %[[V47]] : f32
// CHECK-NEXT: linalg.yield %[[V48]] : f32
// CHECK-NEXT: } -> tensor<64x128xf32>
// CHECK-NEXT: %[[V44:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel"]} ins(%[[ARG11]], %[[ARG7]] : tensor<128xf32>, tensor<128xf32>) outs(%[[ARG11]] : tensor<128xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f32, %[[IN_3:[A-Za-z0-9_]+]]: f32, %[[OUT:[A-Za-z0-9_]+]]: f32):
// CHECK-NEXT: %[[V47:[A-Za-z0-9_]+]] = arith.mulf %[[CST_2]], %[[IN_3]] : f32
// CHECK-NEXT: %[[V48:[A-Za-z0-9_]+]] = arith.subf %[[IN]], %[[V47]] : f32
// CHECK-NEXT: linalg.yield %[[V48]] : f32
// CHECK-NEXT: } -> tensor<128xf32>
// CHECK-NEXT: %[[V45:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel", "parallel"]} ins(%[[ARG12]], %[[ARG8]] : tensor<128x10xf32>, tensor<128x10xf32>) outs(%[[ARG12]] : tensor<128x10xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f32, %[[IN_3:[A-Za-z0-9_]+]]: f32, %[[OUT:[A-Za-z0-9_]+]]: f32):
// CHECK-NEXT: %[[V47:[A-Za-z0-9_]+]] = arith.mulf %[[CST_2]], %[[IN_3]] : f32
// CHECK-NEXT: %[[V48:[A-Za-z0-9_]+]] = arith.subf %[[IN]], %[[V47]] : f32
// CHECK-NEXT: linalg.yield %[[V48]] : f32
// CHECK-NEXT: } -> tensor<128x10xf32>
// CHECK-NEXT: %[[V46:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel"]} ins(%[[ARG13]], %[[ARG9]] : tensor<10xf32>, tensor<10xf32>) outs(%[[ARG13]] : tensor<10xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f32, %[[IN_3:[A-Za-z0-9_]+]]: f32, %[[OUT:[A-Za-z0-9_]+]]: f32):
// CHECK-NEXT: %[[V47:[A-Za-z0-9_]+]] = arith.mulf %[[CST_2]], %[[IN_3]] : f32
// CHECK-NEXT: %[[V48:[A-Za-z0-9_]+]] = arith.subf %[[IN]], %[[V47]] : f32
// CHECK-NEXT: linalg.yield %[[V48]] : f32
// CHECK-NEXT: } -> tensor<10xf32>
// CHECK-NEXT: amp.yield %[[V43]], %[[V44]], %[[V45]], %[[V46]] : tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>
// CHECK-NEXT: } : tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>
// CHECK-NEXT: return %[[V23]], %[[V42]]#0, %[[V42]]#1, %[[V42]]#2, %[[V42]]#3 : tensor<f32>, tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>
// CHECK-NEXT: }

#id2     = affine_map<(i, j) -> (i, j)>
#row     = affine_map<(i, j) -> (i)>
#col     = affine_map<(i, j) -> (j)>
#scalar2 = affine_map<(i, j) -> ()>
#id1     = affine_map<(i) -> (i)>
// matmul operand maps: C(m, n) += A(m, k) * B(k, n), with A or B transposed.
#mA  = affine_map<(m, n, k) -> (m, k)>
#mAt = affine_map<(m, n, k) -> (k, m)>
#mB  = affine_map<(m, n, k) -> (k, n)>
#mBt = affine_map<(m, n, k) -> (n, k)>
#mC  = affine_map<(m, n, k) -> (m, n)>

func.func @train_step(%w1: tensor<64x128xf32>, %b1: tensor<128xf32>,
                      %w2: tensor<128x10xf32>, %b2: tensor<10xf32>,
                      %x: tensor<64x64xf32>, %y: tensor<64x10xf32>)
    -> (tensor<f32>, tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %inv_batch = arith.constant 0.015625 : f32  // 1/64

  // ---- forward: hidden = relu(x @ w1 + b1) ----
  %e_h = tensor.empty() : tensor<64x128xf32>
  %z_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<64x128xf32>) -> tensor<64x128xf32>
  %xw1 = linalg.matmul ins(%x, %w1 : tensor<64x64xf32>, tensor<64x128xf32>)
                       outs(%z_h : tensor<64x128xf32>) -> tensor<64x128xf32>
  %a1 = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xw1, %b1 : tensor<64x128xf32>, tensor<128xf32>) outs(%e_h : tensor<64x128xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<64x128xf32>
  %h = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a1 : tensor<64x128xf32>) outs(%e_h : tensor<64x128xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x128xf32>

  // ---- forward: logits = hidden @ w2 + b2 ----
  %e_l = tensor.empty() : tensor<64x10xf32>
  %z_l = linalg.fill ins(%zero : f32) outs(%e_l : tensor<64x10xf32>) -> tensor<64x10xf32>
  %hw2 = linalg.matmul ins(%h, %w2 : tensor<64x128xf32>, tensor<128x10xf32>)
                       outs(%z_l : tensor<64x10xf32>) -> tensor<64x10xf32>
  %logits = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%hw2, %b2 : tensor<64x10xf32>, tensor<10xf32>) outs(%e_l : tensor<64x10xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<64x10xf32>

  // ---- softmax cross-entropy: loss = -mean_i sum_j y log softmax(logits) ----
  %e_r = tensor.empty() : tensor<64xf32>
  %ninf_r = linalg.fill ins(%ninf : f32) outs(%e_r : tensor<64xf32>) -> tensor<64xf32>
  %rmax = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%logits : tensor<64x10xf32>) outs(%ninf_r : tensor<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.maximumf %v, %acc : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  %ex = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %rmax : tensor<64x10xf32>, tensor<64xf32>) outs(%e_l : tensor<64x10xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<64x10xf32>
  %zero_r = linalg.fill ins(%zero : f32) outs(%e_r : tensor<64xf32>) -> tensor<64xf32>
  %rsum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<64x10xf32>) outs(%zero_r : tensor<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %e_s = tensor.empty() : tensor<f32>
  %zero_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  // sum_ij y * (logits - max - log(sum)) / -64
  %loss = linalg.generic {indexing_maps = [#id2, #row, #row, #id2, #scalar2], iterator_types = ["reduction", "reduction"]}
      ins(%logits, %rmax, %rsum, %y : tensor<64x10xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x10xf32>)
      outs(%zero_s : tensor<f32>) {
  ^bb0(%v: f32, %m: f32, %s: f32, %t: f32, %acc: f32):
    %ls = math.log %s : f32
    %d = arith.subf %v, %m : f32
    %lp = arith.subf %d, %ls : f32
    %tl = arith.mulf %t, %lp : f32
    %sc = arith.mulf %tl, %inv_batch : f32
    %r = arith.subf %acc, %sc : f32
    linalg.yield %r : f32
  } -> tensor<f32>

  // ---- backward, from d(loss)/d(loss) ----
  %seed = amp.seed %loss : tensor<f32>
  // dlogits = (softmax - y) * seed / 64
  %dlogits = linalg.generic {indexing_maps = [#id2, #row, #id2, #scalar2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %rsum, %y, %seed : tensor<64x10xf32>, tensor<64xf32>, tensor<64x10xf32>, tensor<f32>)
      outs(%e_l : tensor<64x10xf32>) {
  ^bb0(%e: f32, %s: f32, %t: f32, %g: f32, %o: f32):
    %p = arith.divf %e, %s : f32
    %d = arith.subf %p, %t : f32
    %gb = arith.mulf %g, %inv_batch : f32
    %r = arith.mulf %d, %gb : f32
    linalg.yield %r : f32
  } -> tensor<64x10xf32>
  // dw2 = hidden^T @ dlogits, db2 = sum over the batch
  %e_w2 = tensor.empty() : tensor<128x10xf32>
  %z_w2 = linalg.fill ins(%zero : f32) outs(%e_w2 : tensor<128x10xf32>) -> tensor<128x10xf32>
  %dw2 = linalg.matmul indexing_maps = [#mAt, #mB, #mC]
      ins(%h, %dlogits : tensor<64x128xf32>, tensor<64x10xf32>)
      outs(%z_w2 : tensor<128x10xf32>) -> tensor<128x10xf32>
  %e_b2 = tensor.empty() : tensor<10xf32>
  %z_b2 = linalg.fill ins(%zero : f32) outs(%e_b2 : tensor<10xf32>) -> tensor<10xf32>
  %db2 = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dlogits : tensor<64x10xf32>) outs(%z_b2 : tensor<10xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<10xf32>
  // dhidden = dlogits @ w2^T, through the ReLU
  %dh = linalg.matmul indexing_maps = [#mA, #mBt, #mC]
      ins(%dlogits, %w2 : tensor<64x10xf32>, tensor<128x10xf32>)
      outs(%z_h : tensor<64x128xf32>) -> tensor<64x128xf32>
  %da1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%dh, %a1 : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e_h : tensor<64x128xf32>) {
  ^bb0(%g: f32, %a: f32, %o: f32):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x128xf32>
  // dw1 = x^T @ da1, db1 = sum over the batch
  %e_w1 = tensor.empty() : tensor<64x128xf32>
  %z_w1 = linalg.fill ins(%zero : f32) outs(%e_w1 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %dw1 = linalg.matmul indexing_maps = [#mAt, #mB, #mC]
      ins(%x, %da1 : tensor<64x64xf32>, tensor<64x128xf32>)
      outs(%z_w1 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %e_b1 = tensor.empty() : tensor<128xf32>
  %z_b1 = linalg.fill ins(%zero : f32) outs(%e_b1 : tensor<128xf32>) -> tensor<128xf32>
  %db1 = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%da1 : tensor<64x128xf32>) outs(%z_b1 : tensor<128xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<128xf32>

  // ---- SGD: p <- p - lr * g ----
  %new:4 = amp.update grads(%dw1, %db1, %dw2, %db2 : tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>)
                      state(%w1, %b1, %w2, %b2 : tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>) {
  ^bb0(%gw1: tensor<64x128xf32>, %gb1: tensor<128xf32>, %gw2: tensor<128x10xf32>, %gb2: tensor<10xf32>,
       %pw1: tensor<64x128xf32>, %pb1: tensor<128xf32>, %pw2: tensor<128x10xf32>, %pb2: tensor<10xf32>):
    %lr = arith.constant 0.1 : f32
    %uw1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%pw1, %gw1 : tensor<64x128xf32>, tensor<64x128xf32>) outs(%pw1 : tensor<64x128xf32>) {
    ^bb0(%p: f32, %g: f32, %o: f32):
      %s = arith.mulf %lr, %g : f32
      %r = arith.subf %p, %s : f32
      linalg.yield %r : f32
    } -> tensor<64x128xf32>
    %ub1 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
        ins(%pb1, %gb1 : tensor<128xf32>, tensor<128xf32>) outs(%pb1 : tensor<128xf32>) {
    ^bb0(%p: f32, %g: f32, %o: f32):
      %s = arith.mulf %lr, %g : f32
      %r = arith.subf %p, %s : f32
      linalg.yield %r : f32
    } -> tensor<128xf32>
    %uw2 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%pw2, %gw2 : tensor<128x10xf32>, tensor<128x10xf32>) outs(%pw2 : tensor<128x10xf32>) {
    ^bb0(%p: f32, %g: f32, %o: f32):
      %s = arith.mulf %lr, %g : f32
      %r = arith.subf %p, %s : f32
      linalg.yield %r : f32
    } -> tensor<128x10xf32>
    %ub2 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
        ins(%pb2, %gb2 : tensor<10xf32>, tensor<10xf32>) outs(%pb2 : tensor<10xf32>) {
    ^bb0(%p: f32, %g: f32, %o: f32):
      %s = arith.mulf %lr, %g : f32
      %r = arith.subf %p, %s : f32
      linalg.yield %r : f32
    } -> tensor<10xf32>
    amp.yield %uw1, %ub1, %uw2, %ub2 : tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>
  } : tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>

  return %loss, %new#0, %new#1, %new#2, %new#3
      : tensor<f32>, tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>
}
