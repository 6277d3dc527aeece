// RUN: amp-opt %s | amp-opt | FileCheck %s

// CHECK-LABEL: func.func @matmul
// CHECK: amp_gpu.matmul %arg0, %arg1, %arg2 {alpha = 1.000000e+00 : f32, beta = 0.000000e+00 : f32, call_site = 0 : i64} : memref<8x4xf16>, memref<4x2xf16>, memref<8x2xf32>
// CHECK: %[[T:.*]] = gpu.wait async
// CHECK: %{{.*}} = amp_gpu.matmul async [%[[T]]] %arg3, %arg4, %arg5 {{.*}} : memref<3x8x4xbf16>, memref<3x4x2xbf16, strided<[8, 1, 4]>>, memref<3x8x2xbf16>
func.func @matmul(%a: memref<8x4xf16>, %b: memref<4x2xf16>, %c: memref<8x2xf32>,
                  %ba: memref<3x8x4xbf16>, %bb: memref<3x4x2xbf16, strided<[8, 1, 4]>>, %bc: memref<3x8x2xbf16>) {
  amp_gpu.matmul %a, %b, %c {alpha = 1.0 : f32, beta = 0.0 : f32, call_site = 0 : i64}
      : memref<8x4xf16>, memref<4x2xf16>, memref<8x2xf32>
  %t = gpu.wait async
  %t2 = amp_gpu.matmul async [%t] %ba, %bb, %bc {alpha = 1.0 : f32, beta = 1.0 : f32, call_site = 1 : i64}
      : memref<3x8x4xbf16>, memref<3x4x2xbf16, strided<[8, 1, 4]>>, memref<3x8x2xbf16>
  gpu.wait [%t2]
  return
}

// CHECK-LABEL: func.func @all_reduce_sum
// CHECK: amp_gpu.all_reduce_sum %arg0, %arg1 : memref<212xf16>, memref<212xf16>
// CHECK: %[[T:.*]] = gpu.wait async
// CHECK: %{{.*}} = amp_gpu.all_reduce_sum async [%[[T]]] %arg2, %arg3 : memref<6xf32>, memref<6xf32, strided<[1], offset: 2>>
// CHECK: %{{.*}} = amp_gpu.world_size : i32
func.func @all_reduce_sum(%a: memref<212xf16>, %b: memref<212xf16>, %c: memref<6xf32>,
                          %d: memref<6xf32, strided<[1], offset: 2>>) -> i32 {
  amp_gpu.all_reduce_sum %a, %b : memref<212xf16>, memref<212xf16>
  %t = gpu.wait async
  %t2 = amp_gpu.all_reduce_sum async [%t] %c, %d : memref<6xf32>, memref<6xf32, strided<[1], offset: 2>>
  gpu.wait [%t2]
  %n = amp_gpu.world_size : i32
  return %n : i32
}
