//===- AmpGPUToLLVM.h - amp_gpu to runtime calls ----------------*- C++ -*-===//

#ifndef AMP_CONVERSION_AMPGPUTOLLVM_H
#define AMP_CONVERSION_AMPGPUTOLLVM_H

namespace mlir {
class DialectRegistry;
class LLVMTypeConverter;
class RewritePatternSet;

namespace amp_gpu {

/// Patterns lowering amp_gpu ops to calls of the AMP CUDA runtime. The type
/// converter must map !gpu.async.token to the stream pointer, as
/// gpu-to-llvm's does.
void populateAmpGPUToLLVMConversionPatterns(LLVMTypeConverter &converter,
                                            RewritePatternSet &patterns);

/// Attaches ConvertToLLVMPatternInterface to the amp_gpu dialect, so that
/// gpu-to-llvm (and convert-to-llvm) lower its ops.
void registerConvertAmpGPUToLLVMInterface(DialectRegistry &registry);

} // namespace amp_gpu
} // namespace mlir

#endif // AMP_CONVERSION_AMPGPUTOLLVM_H
