//===- OneHotMatmulToGather.cpp - Embedding products as row lookups -------===//
//
// Implements `amp-one-hot-matmul-to-gather`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPONEHOTMATMULTOGATHER
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

//===----------------------------------------------------------------------===//
// Matching one-hot matrices
//===----------------------------------------------------------------------===//

/// The integer column each row of a one-hot matrix M x V selects: entry
/// [i, v] is 1 where `indices` read at `map`(i, v) (a function of i alone)
/// equals v, else 0.
struct OneHotRows {
  Value indices;
  AffineMap map;
};

/// The generic whose body computes `value`'s elements over `loops` parallel
/// loops (its outputs read through identity maps), and the value its body
/// yields for it.
std::optional<std::pair<linalg::GenericOp, Value>>
getElementProducer(Value value, unsigned loops) {
  auto result = dyn_cast<OpResult>(value);
  auto generic =
      dyn_cast_or_null<linalg::GenericOp>(result ? result.getOwner() : nullptr);
  if (!generic || generic.getNumLoops() != loops ||
      generic.getNumParallelLoops() != loops ||
      !llvm::all_of(generic.getDpsInitsMutable(), [&](OpOperand &init) {
        return generic.getMatchingIndexingMap(&init).isIdentity();
      }))
    return std::nullopt;
  Operation *yield = generic.getBody()->getTerminator();
  return std::pair{generic, yield->getOperand(result.getResultNumber())};
}

/// The input of `generic` whose element `value` is, when it is one of the
/// body's arguments for the inputs.
OpOperand *getReadInput(linalg::GenericOp generic, Value value) {
  auto argument = dyn_cast<BlockArgument>(value);
  if (!argument || argument.getOwner() != generic.getBody() ||
      argument.getArgNumber() >= generic.getNumDpsInputs())
    return nullptr;
  return generic.getDpsInputOperand(argument.getArgNumber());
}

/// Whether `value`, in the body of `generic`, is the index of loop `dim`:
/// `linalg.index`, integer casts of it, or an input read along that loop
/// whose elements are their own index (an iota).
bool isLoopIndex(linalg::GenericOp generic, Value value, unsigned dim) {
  Operation *def = value.getDefiningOp();
  if (auto index = dyn_cast_or_null<linalg::IndexOp>(def))
    return index.getDim() == dim;
  if (isa_and_nonnull<arith::IndexCastOp, arith::ExtSIOp, arith::ExtUIOp>(def))
    return isLoopIndex(generic, def->getOperand(0), dim);
  OpOperand *input = getReadInput(generic, value);
  if (!input)
    return false;
  AffineMap map = generic.getMatchingIndexingMap(input);
  auto iota = getElementProducer(input->get(), /*loops=*/1);
  return iota && map.getNumResults() == 1 &&
         map.getResult(0) == getAffineDimExpr(dim, map.getContext()) &&
         isLoopIndex(iota->first, iota->second, 0);
}

/// The integer input of `generic` that `value` reads along the rows (loop
/// 0) alone: the indices of a one-hot matrix.
std::optional<OneHotRows> getRowIndices(linalg::GenericOp generic,
                                        Value value) {
  OpOperand *input = getReadInput(generic, value);
  if (!input || !value.getType().isSignlessInteger())
    return std::nullopt;
  AffineMap map = generic.getMatchingIndexingMap(input);
  for (AffineExpr result : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(result);
    auto constant = dyn_cast<AffineConstantExpr>(result);
    if (!(dim && dim.getPosition() == 0) &&
        !(constant && constant.getValue() == 0))
      return std::nullopt;
  }
  if (!map.isFunctionOfDim(0))
    return std::nullopt;
  return OneHotRows{input->get(), map};
}

/// The rows of the one-hot matrix whose entry `value` is, in the body of
/// `generic`: `value` is 0 or 1, 1 where the row's index equals the column.
/// Through conversions that keep 0 and 1 (integer and float casts, a select
/// of 1 and 0) and the generics that compute the inputs elementwise.
std::optional<OneHotRows> matchIndicator(linalg::GenericOp generic,
                                         Value value) {
  if (isa<BlockArgument>(value)) {
    OpOperand *input = getReadInput(generic, value);
    if (!input || !generic.getMatchingIndexingMap(input).isIdentity())
      return std::nullopt;
    auto producer = getElementProducer(input->get(), /*loops=*/2);
    if (!producer)
      return std::nullopt;
    return matchIndicator(producer->first, producer->second);
  }
  Operation *def = value.getDefiningOp();
  if (isa_and_nonnull<arith::ExtUIOp, arith::TruncIOp, arith::UIToFPOp,
                      arith::ExtFOp, arith::TruncFOp>(def))
    return matchIndicator(generic, def->getOperand(0));
  if (auto select = dyn_cast_or_null<arith::SelectOp>(def)) {
    if (!matchPattern(select.getTrueValue(), m_OneFloat()) ||
        !matchPattern(select.getFalseValue(), m_AnyZeroFloat()))
      return std::nullopt;
    return matchIndicator(generic, select.getCondition());
  }
  auto compare = dyn_cast_or_null<arith::CmpIOp>(def);
  if (!compare || compare.getPredicate() != arith::CmpIPredicate::eq)
    return std::nullopt;
  for (auto [row, column] : {std::pair{compare.getLhs(), compare.getRhs()},
                             std::pair{compare.getRhs(), compare.getLhs()}})
    if (isLoopIndex(generic, column, 1))
      if (std::optional<OneHotRows> rows = getRowIndices(generic, row))
        return rows;
  return std::nullopt;
}

/// The rows of `matrix` when it is a one-hot float matrix.
std::optional<OneHotRows> matchOneHot(Value matrix) {
  auto producer = getElementProducer(matrix, /*loops=*/2);
  if (!producer || !isa<FloatType>(getElementTypeOrSelf(matrix.getType())))
    return std::nullopt;
  return matchIndicator(producer->first, producer->second);
}

/// Whether `init` is a tensor filled with zero.
bool isZeroFilled(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

//===----------------------------------------------------------------------===//
// Rewriting
//===----------------------------------------------------------------------===//

/// `index` (an integer of the one-hot's indices) as an index, and whether it
/// names one of `count` columns.
std::pair<Value, Value> getColumn(OpBuilder &builder, Location loc, Value index,
                                  Value count) {
  Value column =
      arith::IndexCastOp::create(builder, loc, builder.getIndexType(), index);
  Value inRange = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult,
                                        column, count);
  return {column, inRange};
}

/// out = onehot(rows) . table: out[i, j] = table[indices(i), j], or 0 where
/// the index names no row of the table.
Value buildGather(OpBuilder &builder, linalg::MatmulOp matmul,
                  const OneHotRows &rows) {
  Location loc = matmul.getLoc();
  Value table = matmul.getDpsInputs()[1];
  auto resultType = cast<RankedTensorType>(matmul.getResultTypes()[0]);
  Type element = resultType.getElementType();
  Value tableRows = tensor::DimOp::create(builder, loc, table, 0);
  Value empty = tensor::EmptyOp::create(
      builder, loc,
      tensor::getMixedSizes(builder, loc, matmul.getDpsInits()[0]), element);
  MLIRContext *context = builder.getContext();
  SmallVector<AffineMap> maps = {rows.map,
                                 AffineMap::getMultiDimIdentityMap(2, context)};
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
  auto gather = linalg::GenericOp::create(
      builder, loc, resultType, rows.indices, empty, maps, iterators,
      [&](OpBuilder &b, Location loc, ValueRange arguments) {
        auto [row, inRange] = getColumn(b, loc, arguments[0], tableRows);
        Value zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);
        Value safeRow =
            arith::SelectOp::create(b, loc, inRange, row, zeroIndex);
        Value column = linalg::IndexOp::create(b, loc, 1);
        // The product's conversion of its operands to the output type.
        Value entry = convertScalarToDtype(
            b, loc,
            tensor::ExtractOp::create(b, loc, table,
                                      ValueRange{safeRow, column}),
            element, /*isUnsignedCast=*/false);
        Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
        linalg::YieldOp::create(
            b, loc,
            ValueRange{arith::SelectOp::create(b, loc, inRange, entry, zero)});
      });
  return gather.getResult(0);
}

/// out = onehot(rows)^T . gradient, out zero before: each row i of
/// `gradient` added to row indices(i) of out, in the order of i (rows whose
/// index names no row of out are dropped).
Value buildScatterAdd(OpBuilder &builder, linalg::MatmulOp matmul,
                      const OneHotRows &rows) {
  Location loc = matmul.getLoc();
  Value gradient = matmul.getDpsInputs()[1];
  Value init = matmul.getDpsInits()[0];
  auto resultType = cast<RankedTensorType>(init.getType());
  Type element = resultType.getElementType();
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  Value count = tensor::DimOp::create(builder, loc, gradient, 0);
  Value outRows = tensor::DimOp::create(builder, loc, init, 0);
  OpFoldResult width = tensor::getMixedSize(builder, loc, gradient, 1);
  auto loop = scf::ForOp::create(
      builder, loc, zero, count, one, ValueRange{init},
      [&](OpBuilder &b, Location loc, Value i, ValueRange accumulated) {
        // The index of row i, read where the one-hot read it.
        SmallVector<Value> at;
        for (AffineExpr result : rows.map.getResults())
          at.push_back(isa<AffineDimExpr>(result) ? i : zero);
        Value index = tensor::ExtractOp::create(b, loc, rows.indices, at);
        auto [row, inRange] = getColumn(b, loc, index, outRows);
        Value sum = accumulated[0];
        auto ifOp = scf::IfOp::create(
            b, loc, inRange,
            [&](OpBuilder &b, Location loc) {
              SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), width};
              SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
              Value target = tensor::ExtractSliceOp::create(
                  b, loc, sum,
                  SmallVector<OpFoldResult>{row, b.getIndexAttr(0)}, sizes,
                  strides);
              Value source = tensor::ExtractSliceOp::create(
                  b, loc, gradient,
                  SmallVector<OpFoldResult>{i, b.getIndexAttr(0)}, sizes,
                  strides);
              AffineMap identity =
                  AffineMap::getMultiDimIdentityMap(2, b.getContext());
              auto add = linalg::GenericOp::create(
                  b, loc, target.getType(), source, target,
                  SmallVector<AffineMap>{identity, identity},
                  SmallVector<utils::IteratorType>(
                      2, utils::IteratorType::parallel),
                  [&](OpBuilder &b, Location loc, ValueRange arguments) {
                    Value addend =
                        convertScalarToDtype(b, loc, arguments[0], element,
                                             /*isUnsignedCast=*/false);
                    linalg::YieldOp::create(b, loc,
                                            ValueRange{arith::AddFOp::create(
                                                b, loc, arguments[1], addend)});
                  });
              Value updated = tensor::InsertSliceOp::create(
                  b, loc, add.getResult(0), sum,
                  SmallVector<OpFoldResult>{row, b.getIndexAttr(0)}, sizes,
                  strides);
              scf::YieldOp::create(b, loc, updated);
            },
            [&](OpBuilder &b, Location loc) {
              scf::YieldOp::create(b, loc, sum);
            });
        scf::YieldOp::create(b, loc, ifOp.getResults());
      });
  return loop.getResult(0);
}

/// A matmul on tensors with the default maps into a zero-filled output,
/// whose first operand is a one-hot matrix (a lookup of table rows) or its
/// transpose (the gradient of that lookup): a gather or a scatter-add.
struct OneHotMatmulToGather : public OpRewritePattern<linalg::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::MatmulOp matmul,
                                PatternRewriter &rewriter) const override {
    if (!matmul.hasPureTensorSemantics() || matmul.hasUserDefinedMaps() ||
        !isZeroFilled(matmul.getDpsInits()[0]))
      return failure();
    Value lhs = matmul.getDpsInputs()[0];
    if (std::optional<OneHotRows> rows = matchOneHot(lhs)) {
      auto tableType =
          cast<RankedTensorType>(matmul.getDpsInputs()[1].getType());
      if (tableType.isDynamicDim(0) || tableType.getDimSize(0) == 0)
        return failure();
      rewriter.replaceOp(matmul, buildGather(rewriter, matmul, *rows));
      return success();
    }
    auto transpose = lhs.getDefiningOp<linalg::TransposeOp>();
    if (!transpose || transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
      return failure();
    std::optional<OneHotRows> rows = matchOneHot(transpose.getInput());
    if (!rows)
      return failure();
    rewriter.replaceOp(matmul, buildScatterAdd(rewriter, matmul, *rows));
    return success();
  }
};

struct OneHotMatmulToGatherPass
    : public amp::impl::AmpOneHotMatmulToGatherBase<OneHotMatmulToGatherPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<OneHotMatmulToGather>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
