// RUN: amp-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(func.func(amp-gpu-emulate-on-host))"

func.func @scaled(%a: memref<8x8xf16>, %b: memref<8x8xf16>, %c: memref<8x8xf32>) {
  // expected-error @+1 {{is emulated on the host with alpha = 1, beta = 0 or 1 and an f32 output only}}
  amp_gpu.matmul %a, %b, %c {alpha = 1.0 : f32, beta = 0.5 : f32, call_site = 0 : i64}
      : memref<8x8xf16>, memref<8x8xf16>, memref<8x8xf32>
  return
}

// -----

func.func @half_output(%a: memref<8x8xf16>, %b: memref<8x8xf16>, %c: memref<8x8xf16>) {
  // expected-error @+1 {{is emulated on the host with alpha = 1, beta = 0 or 1 and an f32 output only}}
  amp_gpu.matmul %a, %b, %c {alpha = 1.0 : f32, beta = 0.0 : f32, call_site = 0 : i64}
      : memref<8x8xf16>, memref<8x8xf16>, memref<8x8xf16>
  return
}

// -----

func.func @asynchronous(%a: memref<8xf32>) {
  // expected-error @+1 {{is asynchronous: emulate the step on the host before gpu-async-region}}
  %t0 = gpu.wait async
  return
}

// -----

func.func @shared_memory(%n: index) {
  // expected-error @+1 {{is emulated on the host without clusters, memory attributions or control flow only}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %n, %gz = %n)
             threads(%tx, %ty, %tz) in (%sx = %n, %sy = %n, %sz = %n)
             workgroup(%shared : memref<32xf32, #gpu.address_space<workgroup>>) {
    gpu.terminator
  }
  return
}
