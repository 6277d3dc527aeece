//===- AmpGPUToLLVM.cpp - amp_gpu to runtime calls ------------------------===//
//
// amp_gpu.matmul becomes a call of the runtime's
//   void ampMatmul(int64_t rank, const void *a, const void *b, void *c,
//                  int32_t aType, int32_t bType, int32_t cType,
//                  float alpha, float beta, void *stream, int64_t callSiteId);
// (runtime/include/amp/Runtime/AmpRuntime.h). Memref descriptors are passed
// by pointer, as llvm.emit_c_interface wrappers pass them. The patterns run
// inside gpu-to-llvm, whose type converter has already turned the op's async
// token into the stream of the chain it belongs to.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/AmpGPUToLLVM.h"
#include "amp/Dialect/AmpGPU/IR/AmpGPU.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::amp_gpu;

namespace {

struct MatmulOpLowering : public ConvertOpToLLVMPattern<MatmulOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // The call is asynchronous on the stream of the op's one dependency, as
    // gpu-async-region leaves every async op (joining streams is
    // gpu.wait's job).
    if (!op.getAsyncToken() || adaptor.getAsyncDependencies().size() != 1)
      return rewriter.notifyMatchFailure(
          op, "expected the async form with one dependency (run "
              "gpu-async-region first)");
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type();
    Type f32 = rewriter.getF32Type();

    Value stream = adaptor.getAsyncDependencies().front();
    auto constant = [&](Type type, Attribute value) -> Value {
      return LLVM::ConstantOp::create(rewriter, loc, type, value);
    };
    auto typeCode = [&](Value memref) {
      Type element = cast<MemRefType>(memref.getType()).getElementType();
      return constant(i32, rewriter.getI32IntegerAttr(
                               *getRuntimeElementType(element)));
    };
    auto descriptor = [&](Value converted) {
      return getTypeConverter()->promoteOneMemRefDescriptor(loc, converted,
                                                            rewriter);
    };
    int64_t rank = cast<MemRefType>(op.getA().getType()).getRank();
    SmallVector<Value> arguments = {
        constant(i64, rewriter.getI64IntegerAttr(rank)),
        descriptor(adaptor.getA()),
        descriptor(adaptor.getB()),
        descriptor(adaptor.getC()),
        typeCode(op.getA()),
        typeCode(op.getB()),
        typeCode(op.getC()),
        constant(f32, op.getAlphaAttr()),
        constant(f32, op.getBetaAttr()),
        stream,
        constant(i64, op.getCallSiteAttr())};

    auto module = op->getParentWithTrait<OpTrait::SymbolTable>();
    FailureOr<LLVM::LLVMFuncOp> callee = LLVM::lookupOrCreateFn(
        rewriter, module, "ampMatmul", llvm::to_vector(TypeRange(arguments)),
        LLVM::LLVMVoidType::get(getContext()));
    if (failed(callee))
      return failure();
    LLVM::CallOp::create(rewriter, loc, *callee, arguments);

    // Like a lowered gpu.launch_func, the op's token is its stream.
    rewriter.replaceOp(op, stream);
    return success();
  }
};

struct AmpGPUToLLVMInterface : public ConvertToLLVMPatternInterface {
  using ConvertToLLVMPatternInterface::ConvertToLLVMPatternInterface;

  void populateConvertToLLVMConversionPatterns(
      ConversionTarget &target, LLVMTypeConverter &typeConverter,
      RewritePatternSet &patterns) const final {
    target.addIllegalDialect<AmpGPUDialect>();
    populateAmpGPUToLLVMConversionPatterns(typeConverter, patterns);
  }
};

} // namespace

void amp_gpu::populateAmpGPUToLLVMConversionPatterns(
    LLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<MatmulOpLowering>(converter);
}

void amp_gpu::registerConvertAmpGPUToLLVMInterface(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *, AmpGPUDialect *dialect) {
    dialect->addInterfaces<AmpGPUToLLVMInterface>();
  });
}
