// RUN: amp-opt %s --split-input-file --amp-lower-to-llvm="vectorize=false library=false" | FileCheck %s
// RUN: amp-opt %s --split-input-file --amp-lower-to-llvm="library=false" | FileCheck %s --check-prefix=VEC
// RUN: amp-opt %s --split-input-file --amp-lower-to-llvm="vectorize=false library=false approximate-math=false" | FileCheck %s --check-prefix=LIBM
// RUN: amp-opt %s --split-input-file --amp-lower-to-llvm="library=false native-bf16=false" | FileCheck %s --check-prefix=SOFT

// Tensor-level casts of the AMP pipeline become one fused loop
// (amp-fuse-elementwise: no bf16 buffer between them) of scalar conversions
// (vectorize=false) or of vector conversions (the default); the result
// becomes a caller-allocated out-parameter (the second descriptor) and nothing
// but the LLVM dialect remains.

// CHECK-LABEL: llvm.func @casts(
// CHECK-SAME:      %arg4: i64, %arg5: !llvm.ptr, %arg6: !llvm.ptr, %arg7: i64, %arg8: i64, %arg9: i64) {
// CHECK-NOT:     tensor
// CHECK-NOT:     memref
// CHECK:         llvm.fptrunc %{{.*}} : f32 to bf16
// CHECK:         llvm.fpext %{{.*}} : bf16 to f32
// CHECK:         llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// CHECK:         llvm.return
// VEC-LABEL:   llvm.func @casts(
// VEC-NOT:       memref
// VEC:           %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<4xf32>
// VEC:           %[[H:.*]] = llvm.fptrunc %[[X]] : vector<4xf32> to vector<4xbf16>
// VEC-NEXT:      %[[F:.*]] = llvm.fpext %[[H]] : vector<4xbf16> to vector<4xf32>
// VEC:           llvm.store %[[F]], %{{.*}} : vector<4xf32>, !llvm.ptr
// VEC-NOT:       bf16
// VEC:           llvm.return
// For a CPU without AVX512-BF16 (native-bf16=false) the rounding is integer
// code (amp-cpu-round-to-bf16); the extension stays LLVM's.
// SOFT-LABEL:  llvm.func @casts(
// SOFT-NOT:      llvm.fptrunc
// SOFT:          %[[BITS:.*]] = llvm.bitcast %{{.*}} : vector<4xf32> to vector<4xi32>
// SOFT:          llvm.select %{{.*}}, %{{.*}}, %{{.*}} : vector<4xi1>, vector<4xi32>
// SOFT:          %[[HIGH:.*]] = llvm.trunc %{{.*}} : vector<4xi32> to vector<4xi16>
// SOFT:          %[[H:.*]] = llvm.bitcast %[[HIGH]] : vector<4xi16> to vector<4xbf16>
// SOFT:          llvm.fpext %[[H]] : vector<4xbf16> to vector<4xf32>
// SOFT-NOT:      llvm.fptrunc
// SOFT:          llvm.return
func.func @casts(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = arith.truncf %x : tensor<4xf32> to tensor<4xbf16>
  %f = arith.extf %h : tensor<4xbf16> to tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

// A low-precision matmul with an f32 accumulator: the f16 operands are
// extended, multiplied and summed in f32. The temporary is freed. Vectorized,
// the 4x2 accumulator tile is four vector<2xf32> carried through the K loop
// (a block argument), and each outer product is a multiply and an add.

// CHECK-LABEL: llvm.func @matmul_f16_into_f32(
// CHECK:         %[[BUF:.*]] = llvm.call @malloc
// CHECK:         %[[A:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f16
// CHECK:         %[[B:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f16
// CHECK:         %[[C:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK:         %[[AE:.*]] = llvm.fpext %[[A]] : f16 to f32
// CHECK:         %[[BE:.*]] = llvm.fpext %[[B]] : f16 to f32
// CHECK:         %[[P:.*]] = llvm.fmul %[[AE]], %[[BE]] : f32
// CHECK:         llvm.fadd %[[C]], %[[P]] : f32
// CHECK:         llvm.call @free(%[[BUF]])
// VEC-LABEL:   llvm.func @matmul_f16_into_f32(
// VEC:           llvm.call @malloc
// VEC:         ^bb{{.*}}(%{{.*}}: i64, %{{.*}}: !llvm.array<4 x vector<2xf32>>):
// VEC:           llvm.load %{{.*}} : !llvm.ptr -> vector<8xf16>
// VEC:           llvm.load %{{.*}} : !llvm.ptr -> vector<2xf16>
// VEC:           llvm.fpext %{{.*}} : vector<8xf16> to vector<8xf32>
// VEC:           llvm.fpext %{{.*}} : vector<2xf16> to vector<2xf32>
// VEC:           %[[P:.*]] = llvm.fmul %{{.*}}, %{{.*}} : vector<2xf32>
// VEC-NEXT:      llvm.fadd %{{.*}}, %[[P]] : vector<2xf32>
// VEC-NOT:       llvm.intr.fmuladd
// VEC:           llvm.call @free
func.func @matmul_f16_into_f32(%a: tensor<4x8xf32>, %b: tensor<8x2xf16>)
    -> tensor<4x2xf32> {
  %ah = arith.truncf %a : tensor<4x8xf32> to tensor<4x8xf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %c = linalg.matmul ins(%ah, %b : tensor<4x8xf16>, tensor<8x2xf16>)
                     outs(%acc : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// -----

// A returned argument (a skipped update returns its state operand) is copied
// into its out-parameter; a 0-d i1 result (found_inf) is a one-byte buffer.

// CHECK-LABEL: llvm.func @returned_argument(
// CHECK-DAG:     "llvm.intr.memcpy"
// CHECK-DAG:     llvm.store %{{.*}}, %{{.*}} : i1, !llvm.ptr
// CHECK:         llvm.return
func.func @returned_argument(%w: tensor<3xf32>, %flag: i1)
    -> (tensor<3xf32>, tensor<i1>) {
  %f = tensor.from_elements %flag : tensor<i1>
  return %w, %f : tensor<3xf32>, tensor<i1>
}

// -----

// f32 exp and erf become polynomial approximations (approximate-math, the
// default): arithmetic, no intrinsic, no libm call. Without them, math
// functions without an LLVM intrinsic become libm calls, the others
// intrinsics.

// CHECK-LABEL: llvm.func @math(
// CHECK-NOT:     llvm.intr.exp
// CHECK-NOT:     llvm.call @erff
// CHECK:         llvm.fmul
// CHECK-NOT:     llvm.intr.exp
// CHECK-NOT:     llvm.call @erff
// CHECK:         llvm.return
// LIBM-LABEL: llvm.func @erff(f32) -> f32
// LIBM-LABEL: llvm.func @math(
// LIBM:         llvm.intr.exp(%{{.*}}) : (f32) -> f32
// LIBM:         llvm.call @erff(%{{.*}}) : (f32) -> f32
func.func @math(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = math.exp %x : tensor<4xf32>
  %r = math.erf %e : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A loop of the step that yields new tensors bufferizes.

// CHECK-LABEL: llvm.func @loop(
// CHECK:         llvm.cond_br
// CHECK:         llvm.fadd %{{.*}}, %{{.*}} : f32
func.func @loop(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %x) -> tensor<4xf32> {
    %n = arith.addf %acc, %x : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
