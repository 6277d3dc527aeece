//===- CPUVectorize.cpp - Vector code for the cheap linalg ops ------------===//
//
// Implements `amp-cpu-vectorize`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Affine/ViewLikeInterfaceUtils.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUVECTORIZE
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// Tile limits, in elements. 16 f32 are one AVX-512 register (two AVX2
/// ones); a 4x16 f32 accumulator tile leaves registers for the operands on
/// AVX2; 8 outer products per K step keep the unrolled code small.
constexpr int64_t kVectorLimit = 16;
constexpr int64_t kContractionMLimit = 4;
constexpr int64_t kContractionKLimit = 8;

/// The largest divisor of `size` not above `limit`: tiles that divide the
/// iteration space are all static, so their vector code needs no masks.
int64_t largestDivisor(int64_t size, int64_t limit) {
  for (int64_t tile = std::min(size, limit); tile > 1; --tile)
    if (size % tile == 0)
      return tile;
  return 1;
}

/// Whether every result of `op` whose indexing map drops the innermost loop
/// (a result that loop reduces into) has integer elements.
bool hasOnlyIntegerReductionsOfInnermostLoop(linalg::LinalgOp op) {
  unsigned innermost = op.getNumLoops() - 1;
  return llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    return map.isFunctionOfDim(innermost) ||
           isa<IntegerType>(getElementTypeOrSelf(init.get().getType()));
  });
}

/// Whether `op` reads or writes an i1 memref along its innermost loop. A
/// vector of i1 is packed bits in memory, a memref of i1 one byte per
/// element: such an access as a vector would read or write the wrong bytes.
bool accessesBoolsAlongInnermostLoop(linalg::LinalgOp op) {
  unsigned innermost = op.getNumLoops() - 1;
  return llvm::any_of(op->getOpOperands(), [&](OpOperand &operand) {
    return getElementTypeOrSelf(operand.get().getType()).isInteger(1) &&
           op.getMatchingIndexingMap(&operand).isFunctionOfDim(innermost);
  });
}

/// Whether the body of `op` raises to integer powers: `llvm.intr.powi`,
/// which `math.fpowi` becomes, takes one scalar exponent, so a vector of
/// exponents has no lowering.
bool hasIntegerPowers(linalg::LinalgOp op) {
  return !op.getBlock()->getOps<math::FPowIOp>().empty();
}

/// A float reduction along the innermost loop, vectorized along that loop,
/// would add in another order than the loops. Moving the innermost parallel
/// loop inside instead keeps the order of every result's additions (vectors
/// then hold independent results: a BatchNorm's channel sums, a softmax's
/// row maxima), so the code computes the loops' bits. Returns the op to
/// vectorize: `op`, or the interchanged one replacing it.
linalg::LinalgOp moveParallelLoopInnermost(RewriterBase &rewriter,
                                           linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || op.getNumLoops() < 2 ||
      linalg::isParallelIterator(op.getIteratorTypesArray().back()) ||
      hasOnlyIntegerReductionsOfInnermostLoop(op))
    return op;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  std::optional<unsigned> parallel;
  for (unsigned loop = 0; loop < iterators.size(); ++loop)
    if (linalg::isParallelIterator(iterators[loop]))
      parallel = loop;
  if (!parallel)
    return op;
  unsigned loop = *parallel;
  if (ShapedType::isDynamic(ranges[loop]) ||
      largestDivisor(ranges[loop], kVectorLimit) == 1 ||
      !llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
        return op.getMatchingIndexingMap(&init).isFunctionOfDim(loop);
      }))
    return op;
  SmallVector<unsigned> permutation;
  for (unsigned other = 0; other < iterators.size(); ++other)
    if (other != loop)
      permutation.push_back(other);
  permutation.push_back(loop);
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::GenericOp> interchanged =
      linalg::interchangeGenericOp(rewriter, generic, permutation);
  return succeeded(interchanged) ? cast<linalg::LinalgOp>(interchanged->getOperation())
                                 : op;
}

/// Whether the rows of `type` (along its last dim) are contiguous.
bool hasUnitInnermostStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.getRank() > 0 &&
         succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// Whether an input of `op` is read along `op`'s innermost loop from
/// contiguous memory (a channels-last image under BatchNorm's channel sums).
bool readsInnermostLoopContiguously(linalg::LinalgOp op) {
  AffineExpr innermost =
      getAffineDimExpr(op.getNumLoops() - 1, op->getContext());
  return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    AffineMap map = op.getMatchingIndexingMap(input);
    return type && map.getNumResults() > 0 &&
           map.getResults().back() == innermost && hasUnitInnermostStride(type);
  });
}

/// The tile sizes with which `op` becomes vector code, or nothing when it
/// stays loops. With `parallelLoops`, a reduction whose results would fit
/// one vector of 16 (BatchNorm's 16 channel sums) takes vectors of 8
/// instead, so that two threads have a tile each: each result is still
/// summed alone, in the loops' order. Not when an input's rows run along
/// those results: both threads would then read every cache line of it for
/// half of its bytes.
std::optional<SmallVector<int64_t>> getTileSizes(linalg::LinalgOp op,
                                                 bool parallelLoops) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      op.hasDynamicShape() || failed(linalg::vectorizeOpPrecondition(op)) ||
      accessesBoolsAlongInnermostLoop(op) || hasIntegerPowers(op))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> tiles(ranges.size(), 1);

  if (linalg::isaContractionOpInterface(op)) {
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
      return std::nullopt;
    unsigned m = dims->m.back(), n = dims->n.back(), k = dims->k.back();
    tiles[m] = largestDivisor(ranges[m], kContractionMLimit);
    tiles[n] = largestDivisor(ranges[n], kVectorLimit);
    tiles[k] = largestDivisor(ranges[k], kContractionKLimit);
    return tiles;
  }

  // Vectors along the innermost loop. If it is a reduction, each result it
  // reduces is combined horizontally, in another order than the loops':
  // exact only for integers (the overflow check's `or` of i1 flags).
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  bool vectorsOfResults = linalg::isParallelIterator(iterators.back());
  if (!vectorsOfResults && !hasOnlyIntegerReductionsOfInnermostLoop(op))
    return std::nullopt;
  tiles.back() = largestDivisor(ranges.back(), kVectorLimit);
  if (tiles.back() == 1)
    return std::nullopt;
  // A reduction whose results lie along the vectors takes a square tile of
  // its innermost reduction loop at a time, in that loop's order: the rows
  // of its inputs are read whole (a softmax's rows, BatchNorm's channel
  // planes) and transposed in registers, not gathered lane by lane.
  if (!vectorsOfResults)
    return tiles;
  std::optional<int64_t> squareLoop;
  for (int64_t loop = ranges.size() - 2; loop >= 0 && !squareLoop; --loop)
    if (!linalg::isParallelIterator(iterators[loop]))
      squareLoop = loop;
  if (!squareLoop)
    return tiles;
  tiles[*squareLoop] = largestDivisor(ranges[*squareLoop], kVectorLimit);
  if (!parallelLoops)
    return tiles;
  bool oneParallelTile = llvm::all_of(
      llvm::seq<size_t>(0, ranges.size()), [&](size_t loop) {
        return !linalg::isParallelIterator(iterators[loop]) ||
               ranges[loop] == tiles[loop];
      });
  // Half an AVX-512 register at least: a column sum of 10 keeps its 10.
  int64_t half = largestDivisor(ranges.back(), tiles.back() / 2);
  if (oneParallelTile && half >= kVectorLimit / 2 &&
      !readsInnermostLoopContiguously(op)) {
    tiles.back() = half;
    tiles[*squareLoop] = largestDivisor(ranges[*squareLoop], half);
  }
  return tiles;
}

/// The op's loops, parallel ones first, each group in its order. As the
/// order of the loops over tiles, it keeps a reduction's accumulator tile
/// in registers across the reduction loops (a softmax's row sums, moved to
/// the vector lanes, add up whole rows one tile of rows at a time), and
/// the outermost loop is one that threads may split.
SmallVector<unsigned> getParallelLoopsFirst(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (bool parallel : {true, false})
    for (unsigned loop = 0; loop < iterators.size(); ++loop)
      if (linalg::isParallelIterator(iterators[loop]) == parallel)
        order.push_back(loop);
  return order;
}

/// The value of an indexing map's result `expr` (a dim or a constant) at
/// the outer loops' `ivs`; null for the innermost dim, which `ivs` lacks.
Value evaluateAtOuterLoops(OpBuilder &builder, Location loc, AffineExpr expr,
                           ValueRange ivs) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return dim.getPosition() < ivs.size() ? ivs[dim.getPosition()] : Value();
  return arith::ConstantIndexOp::create(
      builder, loc, cast<AffineConstantExpr>(expr).getValue());
}

/// The row of `memref` along its dim `along` at `offsets` (the other dims'),
/// as a 1-d view of `size` elements.
Value getRow(OpBuilder &builder, Location loc, Value memref,
             ArrayRef<Value> offsets, unsigned along, int64_t size) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<OpFoldResult> mixedOffsets, sizes, strides;
  for (unsigned dim = 0; dim < type.getRank(); ++dim) {
    mixedOffsets.push_back(dim == along ? OpFoldResult(builder.getIndexAttr(0))
                                        : OpFoldResult(offsets[dim]));
    sizes.push_back(builder.getIndexAttr(dim == along ? size : 1));
    strides.push_back(builder.getIndexAttr(1));
  }
  auto rowType = memref::SubViewOp::inferRankReducedResultType(
      {size}, type, mixedOffsets, sizes, strides);
  return memref::SubViewOp::create(builder, loc, cast<MemRefType>(rowType),
                                   memref, mixedOffsets, sizes, strides);
}

/// Splits an elementwise generic that gathers rows (`memref.load %table[i,
/// j]` with `j` its innermost loop and `i` the same along it: an embedding
/// lookup) into loops over its outer dims around a 1-d generic on rows:
/// the table's row and the operands' rows as views, the values that do not
/// vary along a row computed once per row. The linalg vectorizer takes no
/// loads; the rows it does. Returns whether `op` was split.
bool splitRowGather(RewriterBase &rewriter, linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.hasDynamicShape() ||
      op.getNumLoops() < 2 || op.getNumReductionLoops() != 0)
    return false;
  unsigned innermost = op.getNumLoops() - 1;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  Block *body = op.getBlock();
  // Values that vary along a row: the innermost index, the elements of
  // operands read along it, and what is computed from them.
  llvm::DenseSet<Value> varying;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    // Operands are read through their dims (or constants): a row is a view.
    if (!llvm::all_of(map.getResults(), [](AffineExpr expr) {
          return isa<AffineDimExpr, AffineConstantExpr>(expr);
        }))
      return false;
    if (!map.isFunctionOfDim(innermost)) {
      // Every output is written along the rows.
      if (op.isDpsInit(&operand))
        return false;
      continue;
    }
    varying.insert(op.getMatchingBlockArgument(&operand));
  }
  SmallVector<memref::LoadOp> gathers;
  for (Operation &inner : body->without_terminator()) {
    if (inner.getNumRegions() != 0)
      return false;
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      if (index.getDim() == innermost)
        varying.insert(index);
      continue;
    }
    bool varies = llvm::any_of(inner.getOperands(), [&](Value operand) {
      return varying.contains(operand);
    });
    if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      // Loaded once per row, it must not read what the op writes.
      if (llvm::is_contained(op.getDpsInits(), load.getMemRef()))
        return false;
      ValueRange indices = load.getIndices();
      auto index =
          indices.empty() ? nullptr
                          : indices.back().getDefiningOp<linalg::IndexOp>();
      if (varies) {
        if (!index || index.getDim() != innermost ||
            !hasUnitInnermostStride(load.getMemRefType()) ||
            llvm::any_of(indices.drop_back(), [&](Value value) {
              return varying.contains(value);
            }))
          return false;
        gathers.push_back(load);
      }
    } else if (!isMemoryEffectFree(&inner)) {
      return false;
    }
    if (varies)
      for (Value result : inner.getResults())
        varying.insert(result);
  }
  if (gathers.empty())
    return false;

  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  SmallVector<Value> ivs;
  for (unsigned dim = 0; dim < innermost; ++dim) {
    auto loop = scf::ForOp::create(
        rewriter, loc, arith::ConstantIndexOp::create(rewriter, loc, 0),
        arith::ConstantIndexOp::create(rewriter, loc, ranges[dim]),
        arith::ConstantIndexOp::create(rewriter, loc, 1));
    ivs.push_back(loop.getInductionVar());
    rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  }
  // Once per row: the elements of operands not read along it, and what
  // does not vary along it.
  IRMapping once;
  SmallVector<Value> rowInputs, rowOutputs;
  SmallVector<Value> rowArguments;
  auto evaluate = [&](AffineMap map) {
    SmallVector<Value> offsets;
    for (AffineExpr expr : map.getResults())
      offsets.push_back(evaluateAtOuterLoops(rewriter, loc, expr, ivs));
    return offsets;
  };
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    BlockArgument argument = op.getMatchingBlockArgument(&operand);
    if (varying.contains(argument)) {
      unsigned along = *map.getResultPosition(
          rewriter.getAffineDimExpr(innermost));
      Value row = getRow(rewriter, loc, operand.get(), evaluate(map), along,
                         ranges[innermost]);
      (op.isDpsInit(&operand) ? rowOutputs : rowInputs).push_back(row);
      if (!op.isDpsInit(&operand))
        rowArguments.push_back(argument);
      continue;
    }
    if (!argument.use_empty())
      once.map(argument, memref::LoadOp::create(rewriter, loc, operand.get(),
                                                evaluate(map)));
  }
  for (Operation &inner : body->without_terminator()) {
    if (llvm::any_of(inner.getResults(),
                     [&](Value result) { return varying.contains(result); }))
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      once.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    rewriter.clone(inner, once);
  }
  for (memref::LoadOp load : gathers) {
    SmallVector<Value> offsets;
    for (Value index : load.getIndices().drop_back())
      offsets.push_back(once.lookupOrDefault(index));
    offsets.push_back(Value());
    rowInputs.push_back(getRow(rewriter, loc, load.getMemRef(), offsets,
                               load.getMemRefType().getRank() - 1,
                               ranges[innermost]));
  }

  AffineMap identity = rewriter.getMultiDimIdentityMap(1);
  SmallVector<AffineMap> maps(rowInputs.size() + rowOutputs.size(), identity);
  linalg::GenericOp::create(
      rewriter, loc, rowInputs, rowOutputs, maps,
      {utils::IteratorType::parallel},
      [&](OpBuilder &builder, Location bodyLoc, ValueRange arguments) {
        IRMapping each = once;
        size_t next = 0;
        for (Value argument : rowArguments)
          each.map(argument, arguments[next++]);
        for (memref::LoadOp load : gathers)
          each.map(load.getResult(), arguments[next++]);
        for (OpOperand &init : op.getDpsInitsMutable())
          each.map(op.getMatchingBlockArgument(&init), arguments[next++]);
        for (Operation &inner : body->without_terminator()) {
          if (!llvm::any_of(inner.getResults(), [&](Value result) {
                return varying.contains(result);
              }) ||
              each.contains(inner.getResult(0)))
            continue;
          if (isa<linalg::IndexOp>(inner)) {
            each.map(inner.getResult(0),
                     linalg::IndexOp::create(builder, bodyLoc, 0));
            continue;
          }
          builder.clone(inner, each);
        }
        SmallVector<Value> yielded;
        for (Value value : body->getTerminator()->getOperands())
          yielded.push_back(each.lookupOrDefault(value));
        linalg::YieldOp::create(builder, bodyLoc, yielded);
      });
  rewriter.eraseOp(op);
  return true;
}

/// Tiles `op` and replaces its tile by vector code; the loops over tiles of
/// parallel dims are scf.parallel with `parallelLoops`, else scf.for. Ops
/// without tiles or whose tile cannot be vectorized are left as they are.
void tileAndVectorize(RewriterBase &rewriter, linalg::LinalgOp op,
                      bool parallelLoops) {
  if (!getTileSizes(op, parallelLoops) && op.hasPureBufferSemantics() &&
      !op.hasDynamicShape())
    op = moveParallelLoopInnermost(rewriter, op);
  std::optional<SmallVector<int64_t>> tiles = getTileSizes(op, parallelLoops);
  if (!tiles)
    return;
  rewriter.setInsertionPoint(op);
  linalg::LinalgTilingOptions tiling;
  tiling.setTileSizes(*tiles);
  tiling.setInterchange(getParallelLoopsFirst(op));
  if (parallelLoops)
    tiling.setLoopType(linalg::LinalgTilingLoopType::ParallelLoops);
  FailureOr<linalg::TiledLinalgOp> tiled =
      linalg::tileLinalgOp(rewriter, op, tiling);
  if (failed(tiled))
    return;
  rewriter.eraseOp(op);
  // The precondition held for the whole op, so it holds for its tile.
  rewriter.setInsertionPoint(tiled->op);
  if (succeeded(linalg::vectorize(rewriter, tiled->op)))
    rewriter.eraseOp(tiled->op);
}

/// a * b + c as a multiply and an add, each rounded, like the scalar loops:
/// `vector.fma` would become `llvm.fmuladd`, fused or not depending on the
/// target CPU, and results would then differ between CPUs.
struct SplitFMA : public OpRewritePattern<vector::FMAOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::FMAOp op,
                                PatternRewriter &rewriter) const override {
    Value product =
        arith::MulFOp::create(rewriter, op.getLoc(), op.getLhs(), op.getRhs());
    rewriter.replaceOpWithNewOp<arith::AddFOp>(op, op.getAcc(), product);
    return success();
  }
};

/// A contraction that sums the elementwise product of two operands read
/// through the same map over its reduction dims, as that product and a
/// vector.multi_reduction. Such contractions come from reductions of
/// products down the columns of a tile (a LayerNorm's weight gradient next
/// to its bias gradient): without M and N dims, the contraction lowerings
/// would move every element on its own. The rows are added in order, as
/// the loops add them.
struct ElementwiseContractToReduction
    : public OpRewritePattern<vector::ContractionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    auto accType = dyn_cast<VectorType>(op.getAccType());
    if (op.getKind() != vector::CombiningKind::ADD || op.isMasked() ||
        !accType || !isa<FloatType>(accType.getElementType()) ||
        maps[0] != maps[1] || !maps[0].isIdentity())
      return failure();
    SmallVector<bool> reduced;
    SmallVector<AffineExpr> kept;
    for (auto [dim, iterator] : llvm::enumerate(op.getIteratorTypesArray())) {
      reduced.push_back(iterator == vector::IteratorType::reduction);
      if (!reduced.back())
        kept.push_back(rewriter.getAffineDimExpr(dim));
    }
    if (maps[2] !=
        AffineMap::get(maps[0].getNumDims(), 0, kept, op.getContext()))
      return failure();
    Location loc = op.getLoc();
    auto extend = [&](Value operand) -> Value {
      auto type = cast<VectorType>(operand.getType());
      if (type.getElementType() == accType.getElementType())
        return operand;
      return arith::ExtFOp::create(
          rewriter, loc, type.clone(accType.getElementType()), operand);
    };
    Value product = arith::MulFOp::create(rewriter, loc, extend(op.getLhs()),
                                          extend(op.getRhs()));
    rewriter.replaceOpWithNewOp<vector::MultiDimReductionOp>(
        op, product, op.getAcc(), reduced, vector::CombiningKind::ADD);
    return success();
  }
};

/// A transfer of a tile (a subview, maybe rank-reducing) as a transfer of
/// the buffer it is a view of. MLIR's fold-memref-alias-ops patterns also fold
/// reshapes, and in MLIR 22 fold a transfer of a memref.expand_shape whose
/// vector spans an expanded group into one that reads across the rows of
/// the source (a batch matmul on a reshaped operand read other rows, and
/// past the buffer's end).
template <typename TransferOp>
struct FoldSubViewIntoTransfer : public OpRewritePattern<TransferOp> {
  using OpRewritePattern<TransferOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(TransferOp op,
                                PatternRewriter &rewriter) const override {
    auto subview = op.getBase().template getDefiningOp<memref::SubViewOp>();
    if (!subview)
      return failure();
    // The dimensions of the view are those of the source it keeps.
    llvm::SmallBitVector dropped = subview.getDroppedDims();
    unsigned rank = subview.getSourceType().getRank();
    SmallVector<AffineExpr> kept;
    for (unsigned dim = 0; dim < rank; ++dim)
      if (!dropped.test(dim))
        kept.push_back(rewriter.getAffineDimExpr(dim));
    AffineMap map = op.getPermutationMap().replaceDimsAndSymbols(
        kept, {}, rank, 0);
    SmallVector<Value> indices;
    affine::resolveIndicesIntoOpWithOffsetsAndStrides(
        rewriter, op.getLoc(), subview.getMixedOffsets(),
        subview.getMixedStrides(), subview.getDroppedDims(),
        getAsOpFoldResult(op.getIndices()), indices);
    rewriter.modifyOpInPlace(op, [&] {
      op.getBaseMutable().assign(subview.getSource());
      op.getIndicesMutable().assign(indices);
      op.setPermutationMapAttr(AffineMapAttr::get(map));
    });
    return success();
  }
};

struct CPUVectorizePass
    : public amp::impl::AmpCPUVectorizeBase<CPUVectorizePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    MLIRContext *context = &getContext();
    auto fail = [&](StringRef what) {
      function.emitError("amp-cpu-vectorize: the rewrites ")
          << what << " this function did not converge";
      signalPassFailure();
    };

    IRRewriter rewriter(context);
    // A copy between strided buffers (a pad's interior, a transposed view)
    // is an element-by-element loop of the runtime's memrefCopy, indexing
    // each element anew; as a linalg.copy it becomes vectors along its rows.
    // Contiguous copies stay memcpy.
    SmallVector<memref::CopyOp> copies;
    function.walk([&](memref::CopyOp copy) {
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (source && target && source.hasStaticShape() &&
          target.hasStaticShape() && hasUnitInnermostStride(source) &&
          hasUnitInnermostStride(target) &&
          !(memref::isStaticShapeAndContiguousRowMajor(source) &&
            memref::isStaticShapeAndContiguousRowMajor(target)))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      rewriter.eraseOp(copy);
    }

    SmallVector<linalg::GenericOp> generics;
    function.walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics)
      splitRowGather(rewriter, op);

    SmallVector<linalg::LinalgOp> ops;
    function.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops)
      tileAndVectorize(rewriter, op, parallelLoops);

    // Multiply + reduce over K becomes vector.contract of the extended
    // operands, without the vectorizer's broadcasts to the iteration space.
    {
      RewritePatternSet patterns(context);
      vector::populateVectorReductionToContractPatterns(patterns);
      vector::populateSinkVectorOpsPatterns(patterns);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      if (failed(applyPatternsGreedily(function, std::move(patterns))))
        return fail("vectorizing");
    }
    // Then unit dims (tiles of 1: batch dims, outer dims of elementwise ops)
    // go away; before the above, they would keep the broadcasts apart from
    // the contraction.
    {
      RewritePatternSet patterns(context);
      vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
      vector::populateVectorTransferDropUnitDimsPatterns(patterns);
      vector::TransferReadOp::getCanonicalizationPatterns(patterns, context);
      vector::TransferWriteOp::getCanonicalizationPatterns(patterns, context);
      if (failed(applyPatternsGreedily(function, std::move(patterns))))
        return fail("vectorizing");
    }
    // Transfers index the buffers themselves, not subviews of them:
    // hoisting leaves transfers of views alone (they might alias).
    {
      RewritePatternSet patterns(context);
      patterns.add<FoldSubViewIntoTransfer<vector::TransferReadOp>,
                   FoldSubViewIntoTransfer<vector::TransferWriteOp>>(context);
      if (failed(applyPatternsGreedily(function, std::move(patterns))))
        return fail("folding the tiles' subviews in");
    }
    // The accumulator tile stays in registers across the K loop.
    linalg::hoistRedundantVectorTransfers(function);
    {
      RewritePatternSet patterns(context);
      vector::populateVectorContractLoweringPatterns(
          patterns, vector::VectorContractLowering::OuterProduct);
      vector::populateVectorOuterProductLoweringPatterns(patterns);
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerParallel);
      // The reductions' 16x16 tiles as AVX-512's unpack and permute
      // sequence (other sizes as one shuffle of the flattened tile).
      vector::populateVectorTransposeLoweringPatterns(
          patterns, vector::VectorTransposeLowering::Shuffle16x16);
      patterns.add<SplitFMA, ElementwiseContractToReduction>(context,
                                                             /*benefit=*/2);
      if (failed(applyPatternsGreedily(function, std::move(patterns))))
        return fail("lowering the contractions of");
    }
  }
};

} // namespace
