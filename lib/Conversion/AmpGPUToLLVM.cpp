//===- AmpGPUToLLVM.cpp - amp_gpu to runtime calls ------------------------===//
//
// amp_gpu.matmul becomes a call of the runtime's
//   void ampMatmul(int64_t rank, const void *a, const void *b, void *c,
//                  int32_t aType, int32_t bType, int32_t cType,
//                  float alpha, float beta, void *stream, int64_t callSiteId);
// and amp_gpu.all_reduce_sum and amp_gpu.world_size calls of
//   void ampAllReduceSum(const void *send, void *recv, int64_t count,
//                        int32_t elementType, void *stream);
//   int32_t ampRuntimeWorldSize(void);
// (runtime/include/amp/Runtime/AmpRuntime.h). Matmul operands are memref
// descriptors passed by pointer, as llvm.emit_c_interface wrappers pass
// them; a sum's buffers, 1-D and contiguous, are their first elements. The
// patterns run inside gpu-to-llvm, whose type converter has already turned
// an op's async token into the stream of the chain it belongs to.
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

/// Calls the runtime's `name` with `arguments`, declaring it on first use.
FailureOr<LLVM::CallOp> callRuntime(ConversionPatternRewriter &rewriter,
                                    Operation *op, StringRef name,
                                    ValueRange arguments, Type result) {
  auto module = op->getParentWithTrait<OpTrait::SymbolTable>();
  FailureOr<LLVM::LLVMFuncOp> callee = LLVM::lookupOrCreateFn(
      rewriter, module, name, llvm::to_vector(TypeRange(arguments)), result);
  if (failed(callee))
    return failure();
  return LLVM::CallOp::create(rewriter, op->getLoc(), *callee, arguments);
}

Value typeCode(ConversionPatternRewriter &rewriter, Location loc,
               Value memref) {
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  return LLVM::ConstantOp::create(
      rewriter, loc, rewriter.getI32Type(),
      rewriter.getI32IntegerAttr(*getRuntimeElementType(element)));
}

/// An async op as a void runtime call on the stream of its one dependency,
/// as gpu-async-region leaves every async op (joining streams is gpu.wait's
/// job); like a lowered gpu.launch_func, the op's token is its stream.
template <typename OpT>
struct AsyncRuntimeCallLowering : public ConvertOpToLLVMPattern<OpT> {
  using ConvertOpToLLVMPattern<OpT>::ConvertOpToLLVMPattern;
  using OpAdaptor = typename OpT::Adaptor;

  /// The callee and its arguments, which take the stream.
  virtual StringRef getCallee() const = 0;
  virtual SmallVector<Value> getArguments(OpT op, OpAdaptor adaptor,
                                          Value stream,
                                          ConversionPatternRewriter &rewriter)
      const = 0;

  LogicalResult
  matchAndRewrite(OpT op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    if (!op.getAsyncToken() || adaptor.getAsyncDependencies().size() != 1)
      return rewriter.notifyMatchFailure(
          op, "expected the async form with one dependency (run "
              "gpu-async-region first)");
    Value stream = adaptor.getAsyncDependencies().front();
    if (failed(callRuntime(rewriter, op, getCallee(),
                           getArguments(op, adaptor, stream, rewriter),
                           LLVM::LLVMVoidType::get(op.getContext()))))
      return failure();
    rewriter.replaceOp(op, stream);
    return success();
  }
};

struct MatmulOpLowering : public AsyncRuntimeCallLowering<MatmulOp> {
  using AsyncRuntimeCallLowering::AsyncRuntimeCallLowering;

  StringRef getCallee() const override { return "ampMatmul"; }

  SmallVector<Value>
  getArguments(MatmulOp op, OpAdaptor adaptor, Value stream,
               ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i64 = rewriter.getI64Type(), f32 = rewriter.getF32Type();
    auto constant = [&](Type type, Attribute value) -> Value {
      return LLVM::ConstantOp::create(rewriter, loc, type, value);
    };
    auto descriptor = [&](Value converted) {
      return getTypeConverter()->promoteOneMemRefDescriptor(loc, converted,
                                                            rewriter);
    };
    int64_t rank = cast<MemRefType>(op.getA().getType()).getRank();
    return {constant(i64, rewriter.getI64IntegerAttr(rank)),
            descriptor(adaptor.getA()),
            descriptor(adaptor.getB()),
            descriptor(adaptor.getC()),
            typeCode(rewriter, loc, op.getA()),
            typeCode(rewriter, loc, op.getB()),
            typeCode(rewriter, loc, op.getC()),
            constant(f32, op.getAlphaAttr()),
            constant(f32, op.getBetaAttr()),
            stream,
            constant(i64, op.getCallSiteAttr())};
  }
};

struct AllReduceSumOpLowering
    : public AsyncRuntimeCallLowering<AllReduceSumOp> {
  using AsyncRuntimeCallLowering::AsyncRuntimeCallLowering;

  StringRef getCallee() const override { return "ampAllReduceSum"; }

  SmallVector<Value>
  getArguments(AllReduceSumOp op, OpAdaptor adaptor, Value stream,
               ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto firstElement = [&](Value converted, Value original) {
      return MemRefDescriptor(converted).bufferPtr(
          rewriter, loc, *getTypeConverter(),
          cast<MemRefType>(original.getType()));
    };
    // The verifier makes both buffers 1-D, contiguous and of one size.
    Value count = MemRefDescriptor(adaptor.getSend()).size(rewriter, loc, 0);
    if (count.getType() != rewriter.getI64Type())
      count = LLVM::SExtOp::create(rewriter, loc, rewriter.getI64Type(), count);
    return {firstElement(adaptor.getSend(), op.getSend()),
            firstElement(adaptor.getRecv(), op.getRecv()), count,
            typeCode(rewriter, loc, op.getSend()), stream};
  }
};

struct WorldSizeOpLowering : public ConvertOpToLLVMPattern<WorldSizeOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(WorldSizeOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<LLVM::CallOp> call = callRuntime(
        rewriter, op, "ampRuntimeWorldSize", {}, rewriter.getI32Type());
    if (failed(call))
      return failure();
    rewriter.replaceOp(op, call->getResult());
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
  patterns.add<AllReduceSumOpLowering, MatmulOpLowering, WorldSizeOpLowering>(
      converter);
}

void amp_gpu::registerConvertAmpGPUToLLVMInterface(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *, AmpGPUDialect *dialect) {
    dialect->addInterfaces<AmpGPUToLLVMInterface>();
  });
}
