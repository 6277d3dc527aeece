// RUN: amp-opt %s --split-input-file --amp-data-parallel | FileCheck %s --check-prefixes=CHECK,F32
// RUN: amp-opt %s --split-input-file --amp-data-parallel="grad-comm-dtype=f16" | FileCheck %s --check-prefixes=CHECK,F16
// RUN: amp-opt %s --split-input-file --amp-data-parallel="bucket-size=16" | FileCheck %s --check-prefixes=CHECK,SMALL

// Two gradients in one bucket (f32 by default): each is flattened and
// written at its offset, the bucket is summed over MPI_COMM_WORLD from a
// read-only view into a fresh buffer, and each gradient is read back in its
// shape. The update consumes the sums and is marked; the module records the
// MPI ABI. In f16 the gradients are rounded when packed and extended back
// when unpacked. With 16-byte buckets the 24-byte gradient has a bucket of
// its own, as has the 12-byte one after it.

// CHECK:       module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">}
// CHECK-LABEL: func.func @two_grads(
// CHECK-SAME:      %[[GW:[^:]*]]: tensor<2x3xf32>, %[[GB:[^:]*]]: tensor<3xf32>, %[[W:[^:]*]]: tensor<2x3xf32>, %[[B:[^:]*]]: tensor<3xf32>)
// CHECK:         %[[WORLD:.*]] = mpi.comm_world : !mpi.comm
// F32-NEXT:      %[[E:.*]] = tensor.empty() : tensor<9xf32>
// F32-NEXT:      %[[FW:.*]] = tensor.collapse_shape %[[GW]] {{\[\[}}0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// F32-NEXT:      %[[P0:.*]] = tensor.insert_slice %[[FW]] into %[[E]][0] [6] [1] : tensor<6xf32> into tensor<9xf32>
// F32-NEXT:      %[[P1:.*]] = tensor.insert_slice %[[GB]] into %[[P0]][6] [3] [1] : tensor<3xf32> into tensor<9xf32>
// F32-NEXT:      %[[SEND:.*]] = bufferization.to_buffer %[[P1]] read_only : tensor<9xf32> to memref<9xf32>
// F32-NEXT:      %[[RECV:.*]] = memref.alloc() : memref<9xf32>
// F32-NEXT:      mpi.allreduce(%[[SEND]], %[[RECV]], MPI_SUM, %[[WORLD]]) : memref<9xf32>, memref<9xf32>
// F32-NEXT:      %[[SUM:.*]] = bufferization.to_tensor %[[RECV]] restrict writable : memref<9xf32> to tensor<9xf32>
// F32-NEXT:      %[[SW:.*]] = tensor.extract_slice %[[SUM]][0] [6] [1] : tensor<9xf32> to tensor<6xf32>
// F32-NEXT:      %[[NW:.*]] = tensor.expand_shape %[[SW]] {{\[\[}}0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
// F32-NEXT:      %[[SB:.*]] = tensor.extract_slice %[[SUM]][6] [3] [1] : tensor<9xf32> to tensor<3xf32>
// F32-NEXT:      amp.update grads(%[[NW]], %[[SB]] : tensor<2x3xf32>, tensor<3xf32>) state(%[[W]], %[[B]] : tensor<2x3xf32>, tensor<3xf32>)
// F32:           } {amp.data_parallel = "mpi"} : tensor<2x3xf32>, tensor<3xf32>
// F16:           %[[E:.*]] = tensor.empty() : tensor<9xf16>
// F16-NEXT:      %[[FW:.*]] = tensor.collapse_shape %[[GW]]
// F16-NEXT:      %[[SLOT:.*]] = tensor.extract_slice %[[E]][0] [6] [1] : tensor<9xf16> to tensor<6xf16>
// F16-NEXT:      %[[HW:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[FW]] : tensor<6xf32>) outs(%[[SLOT]] : tensor<6xf16>)
// F16-NEXT:      ^bb0(%[[IN:.*]]: f32, %{{.*}}: f16):
// F16-NEXT:        %[[T:.*]] = arith.truncf %[[IN]] : f32 to f16
// F16-NEXT:        linalg.yield %[[T]] : f16
// F16:           %[[P0:.*]] = tensor.insert_slice %[[HW]] into %[[E]][0] [6] [1] : tensor<6xf16> into tensor<9xf16>
// F16:           mpi.allreduce(%{{.*}}, %{{.*}}, MPI_SUM, %[[WORLD]]) : memref<9xf16>, memref<9xf16>
// F16:           %[[SW:.*]] = tensor.extract_slice %{{.*}}[0] [6] [1] : tensor<9xf16> to tensor<6xf16>
// F16-NEXT:      %[[EW:.*]] = tensor.empty() : tensor<6xf32>
// F16-NEXT:      %[[XW:.*]] = linalg.generic {{.*}} ins(%[[SW]] : tensor<6xf16>) outs(%[[EW]] : tensor<6xf32>)
// F16-NEXT:      ^bb0(%[[IN:.*]]: f16, %{{.*}}: f32):
// F16-NEXT:        %[[X:.*]] = arith.extf %[[IN]] : f16 to f32
// F16-NEXT:        linalg.yield %[[X]] : f32
// F16:           %[[NW:.*]] = tensor.expand_shape %[[XW]] {{\[\[}}0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
// F16:           amp.update grads(%[[NW]], %{{.*}} : tensor<2x3xf32>, tensor<3xf32>)
// SMALL:         %[[FW:.*]] = tensor.collapse_shape %[[GW]]
// SMALL-NEXT:    %[[P0:.*]] = tensor.insert_slice %[[FW]] into %{{.*}}[0] [6] [1] : tensor<6xf32> into tensor<6xf32>
// SMALL:         mpi.allreduce({{.*}}) : memref<6xf32>, memref<6xf32>
// SMALL:         %[[P1:.*]] = tensor.insert_slice %[[GB]] into %{{.*}}[0] [3] [1] : tensor<3xf32> into tensor<3xf32>
// SMALL:         mpi.allreduce({{.*}}) : memref<3xf32>, memref<3xf32>
// SMALL-NOT:     mpi.allreduce
// SMALL:         amp.update
func.func @two_grads(%gw: tensor<2x3xf32>, %gb: tensor<3xf32>, %w: tensor<2x3xf32>, %b: tensor<3xf32>)
    -> (tensor<2x3xf32>, tensor<3xf32>) {
  %n:2 = amp.update grads(%gw, %gb : tensor<2x3xf32>, tensor<3xf32>) state(%w, %b : tensor<2x3xf32>, tensor<3xf32>) {
  ^bb0(%dw: tensor<2x3xf32>, %db: tensor<3xf32>, %w0: tensor<2x3xf32>, %b0: tensor<3xf32>):
    %w1 = arith.subf %w0, %dw : tensor<2x3xf32>
    %b1 = arith.subf %b0, %db : tensor<3xf32>
    amp.yield %w1, %b1 : tensor<2x3xf32>, tensor<3xf32>
  } : tensor<2x3xf32>, tensor<3xf32>
  return %n#0, %n#1 : tensor<2x3xf32>, tensor<3xf32>
}

// -----

// Two updates: the collectives go before the last one and the first moves
// after them; a gradient both read is reduced once. A 0-d gradient is one
// element.

// CHECK-LABEL: func.func @two_updates(
// CHECK-SAME:      %[[G:[^:]*]]: tensor<4xf32>, %[[C:[^:]*]]: tensor<f32>, %[[W:[^:]*]]: tensor<4xf32>, %[[V:[^:]*]]: tensor<4xf32>, %[[K:[^:]*]]: tensor<f32>)
// CHECK:         %[[TWICE:.*]] = arith.addf %[[C]], %[[C]] : tensor<f32>
// CHECK-NEXT:    mpi.comm_world
// CHECK:         tensor.expand_shape %[[TWICE]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// F32:           mpi.allreduce({{.*}}) : memref<5xf32>, memref<5xf32>
// F32:           %[[SC:.*]] = tensor.extract_slice %{{.*}}[4] [1] [1] : tensor<5xf32> to tensor<1xf32>
// F32-NEXT:      %[[NC:.*]] = tensor.collapse_shape %[[SC]] [] : tensor<1xf32> into tensor<f32>
// F32-NOT:       mpi.allreduce
// CHECK:         %[[N1:.*]] = amp.update grads(%[[NG:.*]] : tensor<4xf32>) state(%[[W]] : tensor<4xf32>)
// CHECK:         amp.data_parallel = "mpi"
// CHECK:         %[[N2:.*]]:2 = amp.update grads(%[[NG]], %{{.*}} : tensor<4xf32>, tensor<f32>) state(%[[V]], %[[K]] : tensor<4xf32>, tensor<f32>)
// CHECK:         amp.data_parallel = "mpi"
// CHECK:         return %[[N1]], %[[N2]]#0, %[[N2]]#1
func.func @two_updates(%g: tensor<4xf32>, %c: tensor<f32>, %w: tensor<4xf32>, %v: tensor<4xf32>, %k: tensor<f32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<f32>) {
  %n1 = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%dw: tensor<4xf32>, %w0: tensor<4xf32>):
    %w1 = arith.subf %w0, %dw : tensor<4xf32>
    amp.yield %w1 : tensor<4xf32>
  } : tensor<4xf32>
  %twice = arith.addf %c, %c : tensor<f32>
  %n2:2 = amp.update grads(%g, %twice : tensor<4xf32>, tensor<f32>) state(%v, %k : tensor<4xf32>, tensor<f32>) {
  ^bb0(%dv: tensor<4xf32>, %dk: tensor<f32>, %v0: tensor<4xf32>, %k0: tensor<f32>):
    %v1 = arith.subf %v0, %dv : tensor<4xf32>
    %k1 = arith.subf %k0, %dk : tensor<f32>
    amp.yield %v1, %k1 : tensor<4xf32>, tensor<f32>
  } : tensor<4xf32>, tensor<f32>
  return %n1, %n2#0, %n2#1 : tensor<4xf32>, tensor<4xf32>, tensor<f32>
}

// -----

// A module with a data layout spec gets the entry there, where a DLTI query
// looks; a function without updates is left alone.

// CHECK:       module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i64, "MPI:Implementation" = "MPICH">}
// CHECK-LABEL: func.func @no_update(
// CHECK-NOT:     mpi.
// CHECK:         return
module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i64>} {
  func.func @no_update(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @step(%g: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
    %n = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
    ^bb0(%dw: tensor<4xf32>, %w0: tensor<4xf32>):
      amp.yield %w0 : tensor<4xf32>
    } : tensor<4xf32>
    return %n : tensor<4xf32>
  }
}
