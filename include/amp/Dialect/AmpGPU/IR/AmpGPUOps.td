//===- AmpGPUOps.td - The amp_gpu dialect ------------------*- tablegen -*-===//
//
// Device operations of the GPU lowering that the gpu dialect has no op for:
// calls into the AMP CUDA runtime (runtime/) that take part in the stream
// order of the step like any gpu.launch_func.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMPGPU_IR_AMPGPUOPS_TD
#define AMP_DIALECT_AMPGPU_IR_AMPGPUOPS_TD

include "mlir/Dialect/GPU/IR/GPUBase.td"
include "mlir/IR/OpBase.td"

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

#endif // AMP_DIALECT_AMPGPU_IR_AMPGPUOPS_TD
