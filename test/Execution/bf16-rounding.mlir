// amp-lower-to-llvm{native-bf16=false} rounds f32 to bf16 with integer code
// (amp-cpu-round-to-bf16); with native-bf16=true LLVM rounds (one
// instruction with AVX512-BF16, else __truncsfbf2). Without AVX512-BF16 both
// print the same bf16 bits for ties to even, overflow to infinity, signed
// zeros, denormals, NaNs with payloads and infinities; the CHECK line is what
// ml_dtypes' bfloat16 gives for these inputs. The AVX512-BF16 instruction
// (vcvtneps2bf16) flushes denormal inputs and results to zero and keeps a
// quiet NaN's upper payload bits; the FLUSH line holds those differences.

// DEFINE: %{run} = mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils,%mlir_runner_utils

// RUN: amp-opt %s --amp-lower-to-llvm="library=false native-bf16=false" | %{run} | sed "s/base@ = 0x[0-9a-f]*//" > %t.integer
// RUN: amp-opt %s --amp-lower-to-llvm="library=false native-bf16=true" | %{run} | sed "s/base@ = 0x[0-9a-f]*//" > %t.llvm
// RUN: %if avx512-bf16 %{ FileCheck %s --check-prefix=FLUSH --input-file %t.llvm %} %else %{ diff %t.integer %t.llvm %}
// RUN: FileCheck %s --input-file %t.integer

// CHECK: [16256,  16256,  16258,  32640,  32768,  1,  32704,  65472,  32640,  65408,  18304,  0,  2,  49088,  15821,  16256]
// FLUSH: [16256,  16256,  16258,  32640,  32768,  0,  32704,  65473,  32640,  65408,  18304,  0,  0,  49088,  15821,  16256]

func.func private @printMemrefI32(memref<*xi32>) attributes {llvm.emit_c_interface}

func.func @round(%in: memref<16xf32>, %out: memref<16xi32>) {
  %c0 = arith.constant 0 : index
  %x = vector.load %in[%c0] : memref<16xf32>, vector<16xf32>
  %h = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  %b = arith.bitcast %h : vector<16xbf16> to vector<16xi16>
  %w = arith.extui %b : vector<16xi16> to vector<16xi32>
  vector.store %w, %out[%c0] : memref<16xi32>, vector<16xi32>
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %in = memref.alloc() : memref<16xf32>
  %out = memref.alloc() : memref<16xi32>
  // 1, ties to even down and up, the largest finite (rounds to inf), -0,
  // a denormal, signalling and quiet NaNs with payloads, +-inf, 65504, the
  // smallest denormal, a tie in the denormals, -1.5, 0.1, and a value just
  // below a tie.
  %x = arith.constant dense<[0x3F800000, 0x3F808000, 0x3F818000, 0x7F7FFFFF,
                             0x80000000, 0x00012345, 0x7F800001, 0xFFC12345,
                             0x7F800000, 0xFF800000, 0x477FE000, 0x00000001,
                             0x00018000, 0xBFC00000, 0x3DCCCCCD, 0x3F807FFF]> : vector<16xf32>
  vector.store %x, %in[%c0] : memref<16xf32>, vector<16xf32>
  call @round(%in, %out) : (memref<16xf32>, memref<16xi32>) -> ()
  %u = memref.cast %out : memref<16xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}
