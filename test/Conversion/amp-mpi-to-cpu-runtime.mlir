// RUN: amp-opt %s --split-input-file --amp-mpi-to-cpu-runtime | FileCheck %s

// Sums of 16-bit floats and the world size become calls of the MPI runtime,
// declared once with their C interface; f32 sums stay for MPIToLLVM.

// CHECK-LABEL: func.func @sums(
// CHECK-SAME:      %[[H0:[^:]*]]: memref<6xf16>, %[[H1:[^:]*]]: memref<6xf16>, %[[B0:[^:]*]]: memref<3xbf16>, %[[B1:[^:]*]]: memref<3xbf16>, %[[F0:[^:]*]]: memref<4xf32>, %[[F1:[^:]*]]: memref<4xf32>)
// CHECK:         %[[WORLD:.*]] = mpi.comm_world : !mpi.comm
// CHECK-NEXT:    %[[US:.*]] = memref.cast %[[H0]] : memref<6xf16> to memref<*xf16>
// CHECK-NEXT:    %[[UR:.*]] = memref.cast %[[H1]] : memref<6xf16> to memref<*xf16>
// CHECK-NEXT:    call @ampMpiAllreduceSumF16(%[[US]], %[[UR]]) : (memref<*xf16>, memref<*xf16>) -> ()
// CHECK:         call @ampMpiAllreduceSumBF16(%{{.*}}, %{{.*}}) : (memref<*xbf16>, memref<*xbf16>) -> ()
// CHECK-NEXT:    mpi.allreduce(%[[F0]], %[[F1]], MPI_SUM, %[[WORLD]]) : memref<4xf32>, memref<4xf32>
// CHECK-NEXT:    %[[SIZE:.*]] = call @ampMpiWorldSize() : () -> i32
// CHECK-NEXT:    return %[[SIZE]] : i32
// CHECK:       func.func private @ampMpiAllreduceSumF16(memref<*xf16>, memref<*xf16>) attributes {llvm.emit_c_interface}
// CHECK:       func.func private @ampMpiAllreduceSumBF16(memref<*xbf16>, memref<*xbf16>) attributes {llvm.emit_c_interface}
// CHECK:       func.func private @ampMpiWorldSize() -> i32 attributes {llvm.emit_c_interface}
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  func.func @sums(%h0: memref<6xf16>, %h1: memref<6xf16>, %b0: memref<3xbf16>, %b1: memref<3xbf16>,
                  %f0: memref<4xf32>, %f1: memref<4xf32>) -> i32 {
    %world = mpi.comm_world : !mpi.comm
    mpi.allreduce(%h0, %h1, MPI_SUM, %world) : memref<6xf16>, memref<6xf16>
    mpi.allreduce(%b0, %b1, MPI_SUM, %world) : memref<3xbf16>, memref<3xbf16>
    mpi.allreduce(%f0, %f1, MPI_SUM, %world) : memref<4xf32>, memref<4xf32>
    %size = mpi.comm_size(%world) : i32
    return %size : i32
  }
}

// -----

// A module without MPI ops needs no DLTI entry and is left alone.

// CHECK-LABEL: func.func @no_mpi(
// CHECK-NEXT:    return
func.func @no_mpi(%m: memref<4xf16>) {
  return
}
