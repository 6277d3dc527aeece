// RUN: amp-opt %s --split-input-file --amp-mpi-to-cpu-runtime -verify-diagnostics

// The MPI runtime and MPIToLLVM follow MPICH's ABI.
// expected-error@+1 {{has MPI ops but its DLTI spec does not name MPICH as "MPI:Implementation" (amp-data-parallel sets it); the MPI runtime and MPIToLLVM's default follow MPICH's ABI}}
module {
  func.func @no_abi(%a: memref<4xf32>, %b: memref<4xf32>) {
    %world = mpi.comm_world : !mpi.comm
    mpi.allreduce(%a, %b, MPI_SUM, %world) : memref<4xf32>, memref<4xf32>
    return
  }
}

// -----

module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  // MPIToLLVM would send the 2 elements of dimension 0 alone.
  func.func @matrix(%a: memref<2x3xf32>, %b: memref<2x3xf32>) {
    %world = mpi.comm_world : !mpi.comm
    // expected-error@+1 {{'mpi.allreduce' op takes a buffer of type 'memref<2x3xf32>'; the MPI lowering counts the elements of dimension 0, so it needs 1-D contiguous buffers}}
    mpi.allreduce(%a, %b, MPI_SUM, %world) : memref<2x3xf32>, memref<2x3xf32>
    return
  }
}

// -----

module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  func.func @strided(%a: memref<4xf32, strided<[2]>>, %b: memref<4xf32>) {
    %world = mpi.comm_world : !mpi.comm
    // expected-error@+1 {{'mpi.allreduce' op takes a buffer of type 'memref<4xf32, strided<[2]>>'; the MPI lowering counts the elements of dimension 0, so it needs 1-D contiguous buffers}}
    mpi.allreduce(%a, %b, MPI_SUM, %world) : memref<4xf32, strided<[2]>>, memref<4xf32>
    return
  }
}

// -----

module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  func.func @max_of_halves(%a: memref<4xf16>, %b: memref<4xf16>) {
    %world = mpi.comm_world : !mpi.comm
    // expected-error@+1 {{'mpi.allreduce' op takes a buffer of 'f16', which has no MPI datatype; of f16 and bf16 the MPI runtime takes sums (mpi.allreduce with MPI_SUM) only}}
    mpi.allreduce(%a, %b, MPI_MAX, %world) : memref<4xf16>, memref<4xf16>
    return
  }
}

// -----

module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  func.func @send_halves(%a: memref<4xbf16>, %tag: i32, %dest: i32) {
    %world = mpi.comm_world : !mpi.comm
    // expected-error@+1 {{'mpi.send' op takes a buffer of 'bf16', which has no MPI datatype; of f16 and bf16 the MPI runtime takes sums (mpi.allreduce with MPI_SUM) only}}
    mpi.send(%a, %tag, %dest, %world) : memref<4xbf16>, i32, i32
    return
  }
}

// -----

module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  func.func @size_with_retval() -> i32 {
    %world = mpi.comm_world : !mpi.comm
    // expected-error@+1 {{'mpi.comm_size' op returns an '!mpi.retval', which the MPI runtime's call does not give}}
    %retval, %size = mpi.comm_size(%world) : !mpi.retval, i32
    return %size : i32
  }
}

// -----

module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  func.func @size_of_split(%color: i32, %key: i32) -> i32 {
    %world = mpi.comm_world : !mpi.comm
    %part = mpi.comm_split(%world, %color, %key) : !mpi.comm
    // expected-error@+1 {{'mpi.comm_size' op asks for the size of a communicator other than MPI_COMM_WORLD, which the MPI runtime does not know}}
    %size = mpi.comm_size(%part) : i32
    return %size : i32
  }
}
