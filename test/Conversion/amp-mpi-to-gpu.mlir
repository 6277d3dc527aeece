// RUN: amp-opt %s --split-input-file --amp-mpi-to-gpu | FileCheck %s

// The collectives of a data-parallel step, as amp-data-parallel emits them:
// f32, f16 and bf16 sums become NCCL sums on device buffers (the receive
// buffer a gpu.alloc), and the world size the runtime's.

// CHECK-LABEL: func.func @sums(
// CHECK-SAME:      %[[H:[^:]*]]: tensor<6xf16>, %[[B:[^:]*]]: tensor<3xbf16>, %[[F:[^:]*]]: tensor<4xf32>)
// CHECK-NOT:     mpi.
// CHECK:         %[[HS:.*]] = bufferization.to_buffer %[[H]] read_only
// CHECK-NEXT:    %[[HR:.*]] = gpu.alloc () : memref<6xf16>
// CHECK-NEXT:    amp_gpu.all_reduce_sum %[[HS]], %[[HR]] : memref<6xf16>, memref<6xf16>
// CHECK-NEXT:    %[[HT:.*]] = bufferization.to_tensor %[[HR]] restrict writable
// CHECK:         %[[BR:.*]] = gpu.alloc () : memref<3xbf16>
// CHECK-NEXT:    amp_gpu.all_reduce_sum %{{.*}}, %[[BR]] : memref<3xbf16>, memref<3xbf16>
// CHECK:         %[[FR:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT:    amp_gpu.all_reduce_sum %{{.*}}, %[[FR]] : memref<4xf32>, memref<4xf32>
// CHECK:         %[[N:.*]] = amp_gpu.world_size : i32
// CHECK-NEXT:    %[[NF:.*]] = arith.sitofp %[[N]] : i32 to f32
// CHECK-NOT:     mpi.
// CHECK:         return %[[HT]], %{{.*}}, %{{.*}}, %[[NF]]
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  func.func @sums(%h: tensor<6xf16>, %b: tensor<3xbf16>, %f: tensor<4xf32>)
      -> (tensor<6xf16>, tensor<3xbf16>, tensor<4xf32>, f32) {
    %world = mpi.comm_world : !mpi.comm
    %hs = bufferization.to_buffer %h read_only : tensor<6xf16> to memref<6xf16>
    %hr = memref.alloc() : memref<6xf16>
    mpi.allreduce(%hs, %hr, MPI_SUM, %world) : memref<6xf16>, memref<6xf16>
    %ht = bufferization.to_tensor %hr restrict writable : memref<6xf16> to tensor<6xf16>
    %bs = bufferization.to_buffer %b read_only : tensor<3xbf16> to memref<3xbf16>
    %br = memref.alloc() : memref<3xbf16>
    mpi.allreduce(%bs, %br, MPI_SUM, %world) : memref<3xbf16>, memref<3xbf16>
    %bt = bufferization.to_tensor %br restrict writable : memref<3xbf16> to tensor<3xbf16>
    %fs = bufferization.to_buffer %f read_only : tensor<4xf32> to memref<4xf32>
    %fr = memref.alloc() : memref<4xf32>
    mpi.allreduce(%fs, %fr, MPI_SUM, %world) : memref<4xf32>, memref<4xf32>
    %ft = bufferization.to_tensor %fr restrict writable : memref<4xf32> to tensor<4xf32>
    %size = mpi.comm_size(%world) : i32
    %n = arith.sitofp %size : i32 to f32
    return %ht, %bt, %ft, %n : tensor<6xf16>, tensor<3xbf16>, tensor<4xf32>, f32
  }
}

// -----

// A step without collectives is left alone.

// CHECK-LABEL: func.func @no_collectives
// CHECK-NEXT:    return %arg0
func.func @no_collectives(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
