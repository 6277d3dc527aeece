//===- UpstreamPrecisionModels.cpp - PrecisionOpInterface upstream --------===//
//
// External models of PrecisionOpInterface for upstream ops, registered as
// dialect extensions in the style of the bufferization interface's.
//
//===----------------------------------------------------------------------===//

#include "amp/Interfaces/UpstreamPrecisionModels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

using namespace mlir;
using namespace mlir::amp;

ArrayRef<UpstreamPrecisionDefault> amp::getUpstreamPrecisionDefaults() {
  static const UpstreamPrecisionDefault defaults[] = {
#define AMP_DEFAULT(Namespace, Op, Category, Reason)                           \
  {Namespace::Op::getOperationName(), OpCategory::Category, Reason},
#include "UpstreamPrecisionDefaults.def"
  };
  return defaults;
}

const UpstreamPrecisionDefault *
amp::lookupUpstreamPrecisionDefault(StringRef opName) {
  for (const UpstreamPrecisionDefault &entry : getUpstreamPrecisionDefaults())
    if (entry.opName == opName)
      return &entry;
  return nullptr;
}

bool amp::isFilterGradientConvolution(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return false;
  FailureOr<linalg::ConvolutionDimensions> dims =
      linalg::inferConvolutionDims(linalgOp);
  if (failed(dims))
    return false;
  // The batch may be dynamic; the images are not.
  SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
  auto product = [&](ArrayRef<unsigned> loops) -> std::optional<int64_t> {
    int64_t size = 1;
    for (unsigned loop : loops) {
      if (ShapedType::isDynamic(ranges[loop]))
        return std::nullopt;
      size *= ranges[loop];
    }
    return size;
  };
  std::optional<int64_t> window = product(dims->filterLoop),
                         image = product(dims->outputImage);
  return window && image && *window > *image;
}

namespace {

/// An op whose default is its entry in the table.
template <typename OpT>
struct TableModel
    : public PrecisionOpInterface::ExternalModel<TableModel<OpT>, OpT> {
  std::optional<PrecisionDefault> getPrecisionDefault(Operation *op) const {
    static const UpstreamPrecisionDefault &entry =
        *lookupUpstreamPrecisionDefault(OpT::getOperationName());
    return PrecisionDefault{entry.category, entry.reason.str()};
  }
};

/// A linalg structured op: contractions and convolutions are allow, every
/// other op takes its body's category. The inits of ops with reduction
/// loops accumulate. A convolution's output image is stored low.
template <typename OpT>
struct StructuredModel
    : public PrecisionOpInterface::ExternalModel<StructuredModel<OpT>, OpT> {
  std::optional<PrecisionDefault> getPrecisionDefault(Operation *op) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    if (linalg::isaContractionOpInterface(linalgOp))
      return PrecisionDefault{OpCategory::Allow, "a linalg contraction"};
    if (linalg::isaConvolutionOpInterface(linalgOp))
      return PrecisionDefault{OpCategory::Allow, "a linalg convolution"};
    return std::nullopt;
  }

  Block *getPrecisionBody(Operation *op) const {
    return cast<linalg::LinalgOp>(op).getBlock();
  }

  bool isAccumulator(Operation *op, OpOperand &operand) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    return linalgOp.getNumReductionLoops() > 0 && linalgOp.isDpsInit(&operand);
  }

  bool storesLowResult(Operation *op, OpResult result) const {
    return linalg::isaConvolutionOpInterface(cast<linalg::LinalgOp>(op)) &&
           !isFilterGradientConvolution(op);
  }
};

template <typename OpT>
void attachTableModel(MLIRContext *context, Dialect *dialect) {
  if (OpT::getOperationName().split('.').first == dialect->getNamespace())
    OpT::template attachInterface<TableModel<OpT>>(*context);
}

/// Attaches TableModel to the ops of the table in `dialect`.
void attachTableModels(MLIRContext *context, Dialect *dialect) {
#define AMP_DEFAULT(Namespace, Op, Category, Reason)                           \
  attachTableModel<Namespace::Op>(context, dialect);
#include "UpstreamPrecisionDefaults.def"
}

template <typename... Ops> void attachStructuredModels(MLIRContext *context) {
  (Ops::template attachInterface<StructuredModel<Ops>>(*context), ...);
}

} // namespace

void amp::registerAmpPrecisionInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, arith::ArithDialect *d) {
    attachTableModels(context, d);
  });
  registry.addExtension(+[](MLIRContext *context, math::MathDialect *d) {
    attachTableModels(context, d);
  });
  registry.addExtension(+[](MLIRContext *context, tensor::TensorDialect *d) {
    attachTableModels(context, d);
  });
  registry.addExtension(+[](MLIRContext *context, linalg::LinalgDialect *d) {
    attachTableModels(context, d);
    // LinalgOp is an interface, which an external model cannot extend: the
    // model goes on each structured op.
    attachStructuredModels<
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
        >(context);
  });
}

std::optional<StringRef>
amp::findUpstreamOpWithoutPrecisionModel(MLIRContext *context) {
  auto lacksModel = [&](StringRef opName) {
    std::optional<RegisteredOperationName> name =
        RegisteredOperationName::lookup(opName, context);
    return name && !name->hasInterface<PrecisionOpInterface>();
  };
  if (lacksModel(linalg::GenericOp::getOperationName()))
    return linalg::GenericOp::getOperationName();
  for (const UpstreamPrecisionDefault &entry : getUpstreamPrecisionDefaults())
    if (lacksModel(entry.opName))
      return entry.opName;
  return std::nullopt;
}
