//===- AmpGPUOps.td - The amp_gpu dialect ------------------*- tablegen -*-===//
//
// Device operations of the GPU lowering that the gpu dialect has no op for:
// calls into the AMP CUDA runtime (runtime/) that take part in the stream
// order of the step like any gpu.launch_func, and the runtime's world size.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMPGPU_IR_AMPGPUOPS_TD
#define AMP_DIALECT_AMPGPU_IR_AMPGPUOPS_TD

include "mlir/Dialect/GPU/IR/GPUBase.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def AmpGPU_Dialect : Dialect {
  let name = "amp_gpu";
  let cppNamespace = "::mlir::amp_gpu";
  let summary = "Calls into the AMP CUDA runtime, ordered by gpu async tokens";
  let description = [{
    The ops of this dialect are asynchronous like `gpu.launch_func`: they
    implement `gpu::AsyncOpInterface`, so `gpu-async-region` threads them into
    the step's stream, and `gpu-to-llvm` (through the dialect's
    `ConvertToLLVMPatternInterface`, registered by
    `registerConvertAmpGPUToLLVMInterface`) lowers each to a runtime call on
    the stream its token stands for.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def AmpGPU_MatmulOp : Op<AmpGPU_Dialect, "matmul", [GPU_AsyncOpInterface]> {
  let summary = "C = alpha * A.B + beta * C through the runtime's cuBLASLt";
  let description = [{
    A matrix product on device memory, lowered to a call of the runtime's
    `ampMatmul` (docs/Runtime.md): `a` is MxK, `b` is KxN and `c` is MxN, or
    the same with a leading batch dimension (rank 3). Transposed operands
    are views (`memref.transpose`): the runtime reads the layout from the
    strides, nothing is copied. `a` and `b` have the same element type (f16,
    bf16 or f32); `c` has theirs or f32. The product accumulates in f32.
    `call_site` identifies the call for the runtime's plan cache.

    ```mlir
    %t1 = amp_gpu.matmul async [%t0] %a, %b, %c
        {alpha = 1.0 : f32, beta = 0.0 : f32, call_site = 3 : i64}
        : memref<64x64xf16>, memref<64x128xf16>, memref<64x128xf32>
    ```
  }];
  let arguments = (ins Variadic<GPU_AsyncToken>:$asyncDependencies,
                       AnyStridedMemRef:$a, AnyStridedMemRef:$b,
                       AnyStridedMemRef:$c, F32Attr:$alpha, F32Attr:$beta,
                       I64Attr:$call_site);
  let results = (outs Optional<GPU_AsyncToken>:$asyncToken);
  let assemblyFormat = [{
    custom<AsyncDependencies>(type($asyncToken), $asyncDependencies)
    $a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c)
  }];
  let hasVerifier = 1;
}

def AmpGPU_AllReduceSumOp : Op<AmpGPU_Dialect, "all_reduce_sum",
                               [GPU_AsyncOpInterface]> {
  let summary = "recv = the sum of send over the ranks, through NCCL";
  let description = [{
    The collective of a data-parallel step on the GPU: `recv` becomes the
    sum, over the ranks of the runtime's communicator, of each rank's
    `send`. Lowered to a call of the runtime's `ampAllReduceSum`
    (docs/Runtime.md): `ncclAllReduce` with `ncclSum`, or a device copy
    without a communicator (a world of one). Both buffers are 1-D and
    contiguous, of one size and element type (f32, f16 or bf16), in device
    memory; every rank must call the same sums in the same order.

    ```mlir
    %t1 = amp_gpu.all_reduce_sum async [%t0] %send, %recv
        : memref<212xf16>, memref<212xf16>
    ```
  }];
  let arguments = (ins Variadic<GPU_AsyncToken>:$asyncDependencies,
                       Arg<AnyStridedMemRef, "", [MemRead]>:$send,
                       Arg<AnyStridedMemRef, "", [MemWrite]>:$recv);
  let results = (outs Optional<GPU_AsyncToken>:$asyncToken);
  let assemblyFormat = [{
    custom<AsyncDependencies>(type($asyncToken), $asyncDependencies)
    $send `,` $recv attr-dict `:` type($send) `,` type($recv)
  }];
  let hasVerifier = 1;
}

def AmpGPU_WorldSizeOp : Op<AmpGPU_Dialect, "world_size", [Pure]> {
  let summary = "The number of ranks of the runtime's communicator";
  let description = [{
    The N that a data-parallel step divides its summed gradients by:
    `ampRuntimeWorldSize()`, the size of the communicator the runtime was
    given (`ampRuntimeInitCommunicator`), 1 without one.

    ```mlir
    %n = amp_gpu.world_size : i32
    ```
  }];
  let results = (outs I32:$size);
  let assemblyFormat = "attr-dict `:` type($size)";
}

#endif // AMP_DIALECT_AMPGPU_IR_AMPGPUOPS_TD
