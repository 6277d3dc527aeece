// RUN: amp-opt %s --amp-lower-to-llvm="f32-matmul-types=bf16" | FileCheck %s
// RUN: amp-opt %s --amp-lower-to-llvm | FileCheck %s --check-prefix=LOW
// RUN: amp-opt %s --amp-lower-to-llvm="f32-matmul-types=bf16 library=false" | FileCheck %s --check-prefix=LOOPS

// A bf16 layer and the product of its input gradient by the same weight, as
// the AMP pipeline writes them: with `f32-matmul-types=bf16` both products
// are f32 ones of f32 operands rounded to bf16, the weight's rounding is one
// loop storing f32, and the runtime extends nothing; by default the runtime
// takes bf16 operands; without the library the option does nothing.

// CHECK-LABEL: llvm.func @layer(
// CHECK-NOT:     llvm.call @ampCpuMatmulBF16
// CHECK:         llvm.call @ampCpuMatmulF32
// CHECK-NOT:     llvm.call @ampCpuMatmulBF16
// CHECK:         llvm.call @ampCpuMatmulF32
// CHECK-NOT:     llvm.call @ampCpuMatmulBF16
// CHECK:         llvm.return
// LOW-LABEL:   llvm.func @layer(
// LOW-NOT:       llvm.call @ampCpuMatmulF32
// LOW:           llvm.call @ampCpuMatmulBF16
// LOW-NOT:       llvm.call @ampCpuMatmulF32
// LOW:           llvm.return
// LOOPS-LABEL: llvm.func @layer(
// LOOPS-NOT:     llvm.call @ampCpuMatmul
// LOOPS:         llvm.return
func.func @layer(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>, %dy: tensor<8x32xf32>)
    -> (tensor<8x32xf32>, tensor<8x16xf32>) {
  %xl = arith.truncf %x : tensor<8x16xf32> to tensor<8x16xbf16>
  %wl = arith.truncf %w : tensor<32x16xf32> to tensor<32x16xbf16>
  %dyl = arith.truncf %dy : tensor<8x32xf32> to tensor<8x32xbf16>
  %e = tensor.empty() : tensor<16x32xbf16>
  %wt = linalg.transpose ins(%wl : tensor<32x16xbf16>) outs(%e : tensor<16x32xbf16>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %y0 = tensor.empty() : tensor<8x32xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%y0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = linalg.matmul ins(%xl, %wt : tensor<8x16xbf16>, tensor<16x32xbf16>) outs(%yz : tensor<8x32xf32>) -> tensor<8x32xf32>
  %dx0 = tensor.empty() : tensor<8x16xf32>
  %dxz = linalg.fill ins(%zero : f32) outs(%dx0 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %dx = linalg.matmul ins(%dyl, %wl : tensor<8x32xbf16>, tensor<32x16xbf16>) outs(%dxz : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y, %dx : tensor<8x32xf32>, tensor<8x16xf32>
}
