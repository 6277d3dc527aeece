// RUN: amp-opt %s --split-input-file --amp-mpi-to-gpu -verify-diagnostics

func.func @max(%s: memref<4xf32>) {
  %world = mpi.comm_world : !mpi.comm
  %r = memref.alloc() : memref<4xf32>
  // expected-error@+1 {{'mpi.allreduce' op reduces with MPI_MAX; the GPU lowering takes sums (MPI_SUM) only}}
  mpi.allreduce(%s, %r, MPI_MAX, %world) : memref<4xf32>, memref<4xf32>
  return
}

// -----

func.func @split_communicator(%s: memref<4xf32>, %color: i32, %key: i32) {
  %world = mpi.comm_world : !mpi.comm
  // expected-error@+1 {{'mpi.comm_split' op has no GPU lowering; of the mpi dialect, the GPU lowering takes what amp-data-parallel emits (mpi.comm_world, mpi.allreduce with MPI_SUM, mpi.comm_size)}}
  %half = mpi.comm_split(%world, %color, %key) : !mpi.comm
  %r = memref.alloc() : memref<4xf32>
  // expected-error@+1 {{'mpi.allreduce' op works on a communicator other than MPI_COMM_WORLD; the GPU runtime has one NCCL communicator, of every rank}}
  mpi.allreduce(%s, %r, MPI_SUM, %half) : memref<4xf32>, memref<4xf32>
  return
}

// -----

func.func @retval(%s: memref<4xf32>) {
  %world = mpi.comm_world : !mpi.comm
  %r = memref.alloc() : memref<4xf32>
  // expected-error@+1 {{'mpi.allreduce' op returns an '!mpi.retval', which the runtime's NCCL call does not give}}
  %err = mpi.allreduce(%s, %r, MPI_SUM, %world) : memref<4xf32>, memref<4xf32> -> !mpi.retval
  return
}

// -----

func.func @f64(%s: memref<4xf64>) {
  %world = mpi.comm_world : !mpi.comm
  %r = memref.alloc() : memref<4xf64>
  // expected-error@+1 {{'mpi.allreduce' op sums 'memref<4xf64>' into 'memref<4xf64>'; the GPU lowering sums 1-D contiguous buffers of one size and of f32, f16 or bf16}}
  mpi.allreduce(%s, %r, MPI_SUM, %world) : memref<4xf64>, memref<4xf64>
  return
}

// -----

func.func @matrix(%s: memref<2x2xf32>) {
  %world = mpi.comm_world : !mpi.comm
  %r = memref.alloc() : memref<2x2xf32>
  // expected-error@+1 {{'mpi.allreduce' op sums 'memref<2x2xf32>' into 'memref<2x2xf32>'; the GPU lowering sums 1-D contiguous buffers}}
  mpi.allreduce(%s, %r, MPI_SUM, %world) : memref<2x2xf32>, memref<2x2xf32>
  return
}

// -----

func.func @host_buffer(%s: memref<4xf32>, %r: memref<4xf32>) {
  %world = mpi.comm_world : !mpi.comm
  // expected-error@+1 {{'mpi.allreduce' op takes a buffer that is neither a memref.alloc nor a bufferization.to_buffer of a tensor, which could be host memory: NCCL sums device buffers}}
  mpi.allreduce(%s, %r, MPI_SUM, %world) : memref<4xf32>, memref<4xf32>
  return
}

// -----

func.func @size_retval() -> i32 {
  %world = mpi.comm_world : !mpi.comm
  // expected-error@+1 {{'mpi.comm_size' op returns an '!mpi.retval'}}
  %err, %size = mpi.comm_size(%world) : !mpi.retval, i32
  return %size : i32
}
