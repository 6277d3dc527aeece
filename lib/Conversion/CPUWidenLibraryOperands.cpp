//===- CPUWidenLibraryOperands.cpp - Low-precision operands held in f32 ---===//
//
// Implements `amp-cpu-widen-library-operands`.
//
//===----------------------------------------------------------------------===//

#include "LinalgLibraryCalls.h"
#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUWIDENLIBRARYOPERANDS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// Rewrites values of low-precision types (and the element-moving ops that
/// made them) as f32 ones, each once.
class Widener {
public:
  explicit Widener(MLIRContext *context) : builder(context) {}

  /// `value`, a tensor or scalar, with f32 elements: the same numbers.
  Value widen(Value value);

  /// Makes the other readers of the values that `widen` copied or extended
  /// read the f32 ones instead, and erases the copied ops.
  void finish();

private:
  Value moveWidened(Operation *op);
  Value widenSlice(tensor::ExtractSliceOp slice);
  void readWide(Value value, Value wide, Operation *except);

  OpBuilder builder;
  DenseMap<Value, Value> widened;
  /// Ops copied in f32, producers before their readers.
  SmallVector<Operation *> copied;
  /// The values extended, each with its extension.
  SmallVector<std::pair<Value, Value>> extended;
};

Type withF32Elements(Type type) {
  Type f32 = Float32Type::get(type.getContext());
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.clone(f32);
  return f32;
}

Value Widener::widen(Value value) {
  if (Value known = widened.lookup(value))
    return known;
  Value result;
  if (Operation *op = value.getDefiningOp())
    result = moveWidened(op);
  if (!result) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointAfterValue(value);
    result = builder.createOrFold<arith::ExtFOp>(
        value.getLoc(), withF32Elements(value.getType()), value);
    if (isa<TensorType>(value.getType()) &&
        result.getDefiningOp<arith::ExtFOp>())
      extended.emplace_back(value, result);
  }
  widened[value] = result;
  return result;
}

/// Whether every reader of `slice` can read an f32 copy of it without a
/// rounding back made for it: a loop's or a product's input, or a reshape
/// or transpose (moved in f32 where a product reads them, see finish).
bool readsWideInPlace(Value slice) {
  return llvm::all_of(slice.getUses(), [](OpOperand &use) {
    Operation *user = use.getOwner();
    if (auto structured = dyn_cast<linalg::LinalgOp>(user))
      return structured.isDpsInput(&use) &&
             (isa<linalg::GenericOp, linalg::TransposeOp>(user) ||
              linalg::isaContractionOpInterface(structured) ||
              linalg::isaConvolutionOpInterface(structured));
    return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user);
  });
}

/// The slices that read `source`, when they are all it is read by, are
/// static, do not overlap and hold all of it (the q, k and v of an
/// attention's projection), and their readers read them widened in place;
/// else none. Widening the source for them then stores no more than
/// extending each, and its low-precision copy can go.
SmallVector<tensor::ExtractSliceOp> getSlicesCovering(Value source) {
  auto type = dyn_cast<RankedTensorType>(source.getType());
  if (!type || !type.hasStaticShape())
    return {};
  SmallVector<tensor::ExtractSliceOp> slices;
  int64_t sliced = 0;
  for (Operation *user : source.getUsers()) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
    // A slice reads a tensor only as its source (the rest are indices).
    if (!slice || !slice.hasUnitStride() ||
        ShapedType::isDynamicShape(slice.getStaticOffsets()) ||
        ShapedType::isDynamicShape(slice.getStaticSizes()) ||
        !readsWideInPlace(slice.getResult()))
      return {};
    slices.push_back(slice);
    sliced += slice.getType().getNumElements();
  }
  auto overlap = [](tensor::ExtractSliceOp a, tensor::ExtractSliceOp b) {
    for (auto [offsetA, sizeA, offsetB, sizeB] :
         llvm::zip(a.getStaticOffsets(), a.getStaticSizes(),
                   b.getStaticOffsets(), b.getStaticSizes()))
      if (offsetA + sizeA <= offsetB || offsetB + sizeB <= offsetA)
        return false;
    return true;
  };
  for (size_t i = 0; i < slices.size(); ++i)
    for (size_t j = i + 1; j < slices.size(); ++j)
      if (overlap(slices[i], slices[j]))
        return {};
  if (sliced != type.getNumElements())
    return {};
  return slices;
}

/// `slice` taken out of its source widened, where the source is widened
/// already, or its slices cover it (getSlicesCovering): then all of them are
/// taken out of the f32 source, so that nothing reads the low-precision one.
/// Else null: the slice is extended itself.
Value Widener::widenSlice(tensor::ExtractSliceOp slice) {
  Value source = slice.getSource();
  SmallVector<tensor::ExtractSliceOp> slices;
  if (!widened.contains(source)) {
    slices = getSlicesCovering(source);
    // A sibling extended already (before a product that read the source
    // itself went) keeps its extension.
    if (slices.empty() || llvm::any_of(slices, [&](tensor::ExtractSliceOp s) {
          return widened.contains(s.getResult());
        }))
      return {};
  } else {
    slices = {slice};
  }
  // The slices are collected first: the source's extension reads it too.
  Value wideSource = widen(source);
  Value result;
  for (tensor::ExtractSliceOp sibling : slices) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointAfter(sibling);
    Value wide = tensor::ExtractSliceOp::create(
        builder, sibling.getLoc(),
        cast<RankedTensorType>(withF32Elements(sibling.getType())),
        wideSource, sibling.getMixedOffsets(), sibling.getMixedSizes(),
        sibling.getMixedStrides());
    widened[sibling.getResult()] = wide;
    copied.push_back(sibling);
    if (sibling == slice)
      result = wide;
  }
  return result;
}

/// `op` again on the widened values of its operands, when it only moves
/// elements (the same op moves f32 ones the same way); else null. The
/// structured ops are built anew for their bodies' types. A slice taken out
/// of a value moves where widenSlice says.
Value Widener::moveWidened(Operation *op) {
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return widenSlice(slice);
  if (!isa<linalg::TransposeOp, linalg::BroadcastOp, linalg::FillOp,
           tensor::EmptyOp, tensor::PadOp, tensor::InsertSliceOp,
           tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
    return {};
  auto pad = dyn_cast<tensor::PadOp>(op);
  Value padding = pad ? pad.getConstantPaddingValue() : Value();
  // A padding value made in the pad's own region would be widened there.
  if (pad && (!padding || padding.getParentRegion() == &pad.getRegion()))
    return {};
  auto fill = dyn_cast<linalg::FillOp>(op);
  // Index operands (sizes, offsets) stay, and a fill's destination, which
  // gives only its shape; the elements widen.
  IRMapping mapping;
  for (OpOperand &operand : op->getOpOperands()) {
    Value value = operand.get();
    if (!isa<IndexType>(value.getType()) &&
        !(fill && operand.getOperandNumber() == 1))
      mapping.map(value, widen(value));
  }
  Value paddingF32 = pad ? widen(padding) : Value();

  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointAfter(op);
  Location loc = op->getLoc();
  auto get = [&](Value operand) { return mapping.lookup(operand); };
  Value result;
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
    result = linalg::TransposeOp::create(
                 builder, loc, get(transpose.getInput()),
                 get(transpose.getInit()), transpose.getPermutation())
                 ->getResult(0);
  } else if (auto broadcast = dyn_cast<linalg::BroadcastOp>(op)) {
    result = linalg::BroadcastOp::create(
                 builder, loc, get(broadcast.getInput()),
                 get(broadcast.getInit()), broadcast.getDimensions())
                 ->getResult(0);
  } else if (fill) {
    Value empty = tensor::EmptyOp::create(
        builder, loc, tensor::getMixedSizes(builder, loc, fill.output()),
        builder.getF32Type());
    result = linalg::FillOp::create(builder, loc, get(fill.value()), empty)
                 .getResult(0);
  } else if (pad) {
    result = tensor::PadOp::create(builder, loc, withF32Elements(pad.getType()),
                                   get(pad.getSource()), pad.getMixedLowPad(),
                                   pad.getMixedHighPad(), paddingF32,
                                   pad.getNofold());
  } else {
    Operation *clone = builder.clone(*op, mapping);
    result = clone->getResult(0);
    result.setType(withF32Elements(result.getType()));
  }
  copied.push_back(op);
  return result;
}

/// Makes `use`, a loop (linalg.generic) reading the elements of a
/// low-precision value, read `wide`, the same numbers in f32, instead: its
/// extensions of them to f32 read them as they are, anything else their
/// exact rounding back. False if `use` is no such loop's input.
bool readWideInLoop(OpBuilder &builder, OpOperand &use, Value wide) {
  auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!generic || !generic.isDpsInput(&use))
    return false;
  BlockArgument element = generic.getMatchingBlockArgument(&use);
  Type lowElement = element.getType();
  use.set(wide);
  element.setType(getElementTypeOrSelf(wide.getType()));
  Value rounded;
  for (OpOperand &read : llvm::make_early_inc_range(element.getUses())) {
    auto extension = dyn_cast<arith::ExtFOp>(read.getOwner());
    if (extension && extension.getType() == element.getType()) {
      extension.replaceAllUsesWith(element);
      extension.erase();
      continue;
    }
    if (!rounded) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(element.getOwner());
      rounded = arith::TruncFOp::create(builder, element.getLoc(), lowElement,
                                        element);
    }
    read.set(rounded);
  }
  return true;
}

/// Makes the readers of `value` but `except` read `wide`, the same numbers
/// in f32: loops in place, any other reader an exact rounding of it, made
/// once, right where `wide` is.
void Widener::readWide(Value value, Value wide, Operation *except) {
  Value rounded;
  for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
    if (use.getOwner() == except || readWideInLoop(builder, use, wide))
      continue;
    if (!rounded) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointAfterValue(wide);
      rounded = arith::TruncFOp::create(builder, value.getLoc(),
                                        value.getType(), wide);
    }
    use.set(rounded);
  }
}

void Widener::finish() {
  // Readers first, so that each copy is read by nothing when it goes.
  for (Operation *op : llvm::reverse(copied)) {
    Value result = op->getResult(0);
    readWide(result, widened.lookup(result), /*except=*/nullptr);
    op->erase();
  }
  copied.clear();
  for (auto [value, wide] : extended)
    readWide(value, wide, /*except=*/wide.getDefiningOp());
  extended.clear();
}

/// Whether `op` is a product the CPU runtime takes (getCpuProductInputType),
/// on tensors, of inputs of one of `convolutionTypes` for a convolution, of
/// `matmulTypes` for a matmul.
bool isWidenedProduct(linalg::LinalgOp op, ArrayRef<Type> matmulTypes,
                      ArrayRef<Type> convolutionTypes) {
  Type input = getCpuProductInputType(op);
  ArrayRef<Type> types = linalg::isaConvolutionOpInterface(op)
                             ? convolutionTypes
                             : matmulTypes;
  return input && op.hasPureTensorSemantics() &&
         llvm::is_contained(types, input);
}

/// `product` on `inputs`: a named op builds its body from its operands'
/// types.
Operation *rebuild(OpBuilder &builder, linalg::LinalgOp product,
                   ValueRange inputs) {
  // The builders add the segment sizes and the default indexing maps; the
  // op's own maps go on after.
  SmallVector<NamedAttribute> attributes =
      llvm::filter_to_vector(product->getAttrs(), [](NamedAttribute attribute) {
        return attribute.getName() != "operandSegmentSizes" &&
               attribute.getName() != "indexing_maps";
      });
  auto create = [&](auto op) -> Operation * {
    Operation *rebuilt = decltype(op)::create(
        builder, product.getLoc(), product->getResultTypes(), inputs,
        product.getDpsInits(), attributes);
    if (Attribute maps = product->getAttr("indexing_maps"))
      rebuilt->setAttr("indexing_maps", maps);
    return rebuilt;
  };
  if (auto matmul = dyn_cast<linalg::MatmulOp>(product.getOperation()))
    return create(matmul);
  if (auto batch = dyn_cast<linalg::BatchMatmulOp>(product.getOperation()))
    return create(batch);
  return create(cast<linalg::Conv2DNchwFchwOp>(product.getOperation()));
}

struct CPUWidenLibraryOperandsPass
    : public amp::impl::AmpCPUWidenLibraryOperandsBase<
          CPUWidenLibraryOperandsPass> {
  using AmpCPUWidenLibraryOperandsBase::AmpCPUWidenLibraryOperandsBase;

  LogicalResult initialize(MLIRContext *context) override {
    if (failed(parseTypes(context, matmulTypeNames, "matmul-types",
                          matmulTypes)) ||
        failed(parseTypes(context, convolutionTypeNames, "convolution-types",
                          convolutionTypes)))
      return failure();
    return success();
  }

  static LogicalResult parseTypes(MLIRContext *context,
                                  ArrayRef<std::string> names, StringRef option,
                                  SmallVector<Type, 2> &types) {
    for (const std::string &name : names) {
      if (name == "bf16")
        types.push_back(BFloat16Type::get(context));
      else if (name == "f16")
        types.push_back(Float16Type::get(context));
      else
        return emitError(UnknownLoc::get(context))
               << "amp-cpu-widen-library-operands: unknown type '" << name
               << "' in `" << option << "` (bf16, f16)";
    }
    return success();
  }

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> products;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isWidenedProduct(op, matmulTypes, convolutionTypes))
        products.push_back(op);
    });
    Widener widener(&getContext());
    OpBuilder builder(&getContext());
    for (linalg::LinalgOp product : products) {
      SmallVector<Value> inputs =
          llvm::map_to_vector(product.getDpsInputs(), [&](Value input) {
            return widener.widen(input);
          });
      builder.setInsertionPoint(product);
      Operation *widened = rebuild(builder, product, inputs);
      product->replaceAllUsesWith(widened);
      product->erase();
    }
    widener.finish();
  }

  SmallVector<Type, 2> matmulTypes, convolutionTypes;
};

} // namespace
