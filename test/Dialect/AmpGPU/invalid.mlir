// RUN: amp-opt %s --split-input-file --verify-diagnostics

func.func @rank(%a: memref<8xf16>, %b: memref<8xf16>, %c: memref<8xf16>) {
  // expected-error@+1 {{'amp_gpu.matmul' op operands must have rank 2 or 3, got 1}}
  amp_gpu.matmul %a, %b, %c {alpha = 1.0 : f32, beta = 0.0 : f32, call_site = 0 : i64} : memref<8xf16>, memref<8xf16>, memref<8xf16>
  return
}

// -----

func.func @mixed(%a: memref<8x4xf16>, %b: memref<4x2xbf16>, %c: memref<8x2xf32>) {
  // expected-error@+1 {{'amp_gpu.matmul' op operands 'a' and 'b' must have the same element type}}
  amp_gpu.matmul %a, %b, %c {alpha = 1.0 : f32, beta = 0.0 : f32, call_site = 0 : i64} : memref<8x4xf16>, memref<4x2xbf16>, memref<8x2xf32>
  return
}

// -----

func.func @output(%a: memref<8x4xf16>, %b: memref<4x2xf16>, %c: memref<8x2xbf16>) {
  // expected-error@+1 {{'amp_gpu.matmul' op operand 'c' must have the element type of 'a' or f32}}
  amp_gpu.matmul %a, %b, %c {alpha = 1.0 : f32, beta = 0.0 : f32, call_site = 0 : i64} : memref<8x4xf16>, memref<4x2xf16>, memref<8x2xbf16>
  return
}

// -----

func.func @int(%a: memref<8x4xi8>, %b: memref<4x2xi8>, %c: memref<8x2xi8>) {
  // expected-error@+1 {{'amp_gpu.matmul' op operand 'a' must have f16, bf16 or f32 elements}}
  amp_gpu.matmul %a, %b, %c {alpha = 1.0 : f32, beta = 0.0 : f32, call_site = 0 : i64} : memref<8x4xi8>, memref<4x2xi8>, memref<8x2xi8>
  return
}

// -----

func.func @shapes(%a: memref<8x4xf16>, %b: memref<5x2xf16>, %c: memref<8x2xf32>) {
  // expected-error@+1 {{'amp_gpu.matmul' op operand shapes do not form a matrix product}}
  amp_gpu.matmul %a, %b, %c {alpha = 1.0 : f32, beta = 0.0 : f32, call_site = 0 : i64} : memref<8x4xf16>, memref<5x2xf16>, memref<8x2xf32>
  return
}

// -----

func.func @sum_of_matrices(%a: memref<2x3xf32>, %b: memref<2x3xf32>) {
  // expected-error@+1 {{'amp_gpu.all_reduce_sum' op buffers must be 1-D and contiguous, got 'memref<2x3xf32>' and 'memref<2x3xf32>'}}
  amp_gpu.all_reduce_sum %a, %b : memref<2x3xf32>, memref<2x3xf32>
  return
}

// -----

func.func @sum_strided(%a: memref<4xf32, strided<[2]>>, %b: memref<4xf32>) {
  // expected-error@+1 {{'amp_gpu.all_reduce_sum' op buffers must be 1-D and contiguous}}
  amp_gpu.all_reduce_sum %a, %b : memref<4xf32, strided<[2]>>, memref<4xf32>
  return
}

// -----

func.func @sum_into_another_type(%a: memref<4xf16>, %b: memref<4xf32>) {
  // expected-error@+1 {{'amp_gpu.all_reduce_sum' op buffers must have one size and element type, got 'memref<4xf16>' and 'memref<4xf32>'}}
  amp_gpu.all_reduce_sum %a, %b : memref<4xf16>, memref<4xf32>
  return
}

// -----

func.func @sum_of_integers(%a: memref<4xi32>, %b: memref<4xi32>) {
  // expected-error@+1 {{'amp_gpu.all_reduce_sum' op buffers must have f16, bf16 or f32 elements}}
  amp_gpu.all_reduce_sum %a, %b : memref<4xi32>, memref<4xi32>
  return
}
