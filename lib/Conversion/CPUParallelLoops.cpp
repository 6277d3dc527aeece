//===- CPUParallelLoops.cpp - Outermost parallel loops on threads ---------===//
//
// Implements `amp-cpu-parallel-loops`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUPARALLELLOOPS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// What a loop with a dynamic trip count counts as in the work estimate.
constexpr int64_t kDynamicTripCount = 64;

int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  return llvm::AddOverflow(a, b, sum) ? std::numeric_limits<int64_t>::max()
                                      : sum;
}

int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t product;
  return llvm::MulOverflow(a, b, product)
             ? std::numeric_limits<int64_t>::max()
             : product;
}

/// The trip count of a loop from `lb` to `ub` by `step`, if all three are
/// constants.
std::optional<int64_t> getTripCount(Value lb, Value ub, Value step) {
  std::optional<int64_t> lower = getConstantIntValue(lb),
                         upper = getConstantIntValue(ub),
                         stride = getConstantIntValue(step);
  if (!lower || !upper || !stride || *stride <= 0)
    return std::nullopt;
  return *upper <= *lower ? 0 : llvm::divideCeil(*upper - *lower, *stride);
}

/// The iterations of `loop` (all its dims), if static.
std::optional<int64_t> getTripCount(scf::ParallelOp loop) {
  int64_t trips = 1;
  for (auto [lb, ub, step] : llvm::zip_equal(
           loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> dim = getTripCount(lb, ub, step);
    if (!dim)
      return std::nullopt;
    trips = saturatingMul(trips, *dim);
  }
  return trips;
}

/// The work of one run of `block`: its operations, a vector operation
/// counted per element, a loop's body times its trip count.
int64_t estimateWork(Block &block) {
  int64_t work = 0;
  for (Operation &op : block) {
    int64_t trips = 1;
    if (auto loop = dyn_cast<scf::ForOp>(op))
      trips = getTripCount(loop.getLowerBound(), loop.getUpperBound(),
                           loop.getStep())
                  .value_or(kDynamicTripCount);
    else if (auto loop = dyn_cast<scf::ParallelOp>(op))
      trips = getTripCount(loop).value_or(kDynamicTripCount);
    int64_t each = 0;
    if (op.getNumRegions() == 0) {
      each = 1;
      auto count = [&](Type type) {
        if (auto vector = dyn_cast<VectorType>(type))
          each = std::max(each, vector.getNumElements());
      };
      llvm::for_each(op.getOperandTypes(), count);
      llvm::for_each(op.getResultTypes(), count);
    }
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        each = saturatingAdd(each, estimateWork(inner));
    work = saturatingAdd(work, saturatingMul(trips, each));
  }
  return work;
}

/// Replaces `loop` (without reductions) by a nest of scf.for loops, its
/// first dim outermost: the order in which one thread runs it.
void makeSequential(RewriterBase &rewriter, scf::ParallelOp loop) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> inductionVars;
  for (auto [lb, ub, step] : llvm::zip_equal(
           loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    auto nested = scf::ForOp::create(rewriter, loop.getLoc(), lb, ub, step);
    inductionVars.push_back(nested.getInductionVar());
    rewriter.setInsertionPointToStart(nested.getBody());
  }
  Block *body = loop.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, rewriter.getInsertionBlock(),
                             rewriter.getInsertionPoint(), inductionVars);
  rewriter.eraseOp(loop);
}

/// The dim of `loop` whose iterations are split: the first whose trip
/// count is not 1 (dynamic or above); nullopt when every dim has one
/// iteration.
std::optional<unsigned> getSplitDim(scf::ParallelOp loop) {
  for (unsigned dim = 0; dim < loop.getNumLoops(); ++dim) {
    std::optional<int64_t> trips =
        getTripCount(loop.getLowerBound()[dim], loop.getUpperBound()[dim],
                     loop.getStep()[dim]);
    if (!trips || *trips != 1)
      return dim;
  }
  return std::nullopt;
}

/// The work of one iteration of `loop`'s dim `dim`: the body's times the
/// iterations of the other dims.
int64_t getIterationWork(scf::ParallelOp loop, unsigned dim) {
  int64_t work = std::max<int64_t>(1, estimateWork(*loop.getBody()));
  for (unsigned other = 0; other < loop.getNumLoops(); ++other)
    if (other != dim)
      work = saturatingMul(work, getTripCount(loop.getLowerBound()[other],
                                              loop.getUpperBound()[other],
                                              loop.getStep()[other])
                                     .value_or(kDynamicTripCount));
  return work;
}

/// The runtime function that runs a split loop's blocks (CpuRuntime.h).
constexpr StringLiteral kParallelFor = "ampCpuParallelFor";

/// The values from above that the body of `loop` uses, its bounds and
/// steps included, apart from the constants, which `constants` gets: the
/// outlined function clones those.
SmallVector<Value> getCapturedValues(scf::ParallelOp loop,
                                     SmallVectorImpl<Operation *> &constants) {
  llvm::SetVector<Value> above;
  for (Value bound : llvm::concat<Value>(loop.getLowerBound(),
                                         loop.getUpperBound(), loop.getStep()))
    above.insert(bound);
  getUsedValuesDefinedAbove(loop.getRegion(), above);
  SmallVector<Value> captured;
  for (Value value : above) {
    Operation *def = value.getDefiningOp();
    if (def && def->getNumResults() == 1 && matchPattern(value, m_Constant()))
      constants.push_back(def);
    else
      captured.push_back(value);
  }
  return captured;
}

/// The context a split loop's blocks read: the span of a block (i64), then
/// the captured values as the LLVM lowering represents them (a memref as
/// its descriptor). Null when a captured type has no LLVM form.
LLVM::LLVMStructType getContextType(const LLVMTypeConverter &converter,
                                    ValueRange captured) {
  MLIRContext *context = &converter.getContext();
  SmallVector<Type> fields = {IntegerType::get(context, 64)};
  for (Value value : captured) {
    Type field = converter.convertType(value.getType());
    if (!field || !LLVM::isCompatibleType(field))
      return nullptr;
    fields.push_back(field);
  }
  return LLVM::LLVMStructType::getLiteral(context, fields);
}

/// `value` as type `type`: itself, or through the cast that the LLVM
/// conversion resolves (a memref and its descriptor, an index and i64).
Value castTo(OpBuilder &builder, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return UnrealizedConversionCastOp::create(builder, loc, type, value)
      .getResult(0);
}

/// Moves the iterations of `loop` into a new private function of the
/// module, `(context: !llvm.ptr, block: i64)`, that runs block `block` of
/// dim `dim` (the iterations from `lb + block * span` up to the upper bound
/// or the next block), and of the other dims all, as scf.for loops in order.
/// It reads the span and `captured` from `context` (`contextType`); the
/// constants the body uses are cloned into it.
func::FuncOp outlineBlock(RewriterBase &rewriter, SymbolTable &symbols,
                          scf::ParallelOp loop, unsigned dim,
                          ArrayRef<Operation *> constants,
                          ValueRange captured,
                          LLVM::LLVMStructType contextType) {
  OpBuilder::InsertionGuard guard(rewriter);
  auto parent = loop->getParentOfType<func::FuncOp>();
  Location loc = loop.getLoc();
  Type pointer = LLVM::LLVMPointerType::get(rewriter.getContext());
  Type i64 = rewriter.getI64Type();
  // Named after the function it comes from, made unique by the table.
  auto function =
      func::FuncOp::create(loc, (parent.getSymName() + "_parallel").str(),
                           rewriter.getFunctionType({pointer, i64}, {}));
  function.setPrivate();
  symbols.insert(function, std::next(Block::iterator(parent)));
  Block *entry = function.addEntryBlock();
  rewriter.setInsertionPointToStart(entry);

  IRMapping mapping;
  for (Operation *constant : constants)
    rewriter.clone(*constant, mapping);
  Value context = LLVM::LoadOp::create(rewriter, loc, contextType,
                                       entry->getArgument(0));
  auto field = [&](int64_t position, Type type) {
    Value value =
        LLVM::ExtractValueOp::create(rewriter, loc, context, position);
    return castTo(rewriter, loc, value, type);
  };
  for (auto [position, value] : llvm::enumerate(captured))
    mapping.map(value, field(position + 1, value.getType()));

  Type index = rewriter.getIndexType();
  Value span = field(0, index);
  Value block = arith::IndexCastOp::create(rewriter, loc, index,
                                           entry->getArgument(1));
  Value lb = mapping.lookupOrDefault(loop.getLowerBound()[dim]);
  Value ub = mapping.lookupOrDefault(loop.getUpperBound()[dim]);
  Value first = arith::AddIOp::create(
      rewriter, loc, lb, arith::MulIOp::create(rewriter, loc, block, span));
  Value last = arith::MinSIOp::create(
      rewriter, loc, ub, arith::AddIOp::create(rewriter, loc, first, span));

  SmallVector<Value> inductionVars;
  for (unsigned d = 0; d < loop.getNumLoops(); ++d) {
    Value from = d == dim ? first : mapping.lookup(loop.getLowerBound()[d]);
    Value to = d == dim ? last : mapping.lookup(loop.getUpperBound()[d]);
    auto nested = scf::ForOp::create(rewriter, loc, from, to,
                                     mapping.lookup(loop.getStep()[d]));
    inductionVars.push_back(nested.getInductionVar());
    rewriter.setInsertionPointToStart(nested.getBody());
  }
  for (auto [old, now] :
       llvm::zip_equal(loop.getInductionVars(), inductionVars))
    mapping.map(old, now);
  for (Operation &op : loop.getBody()->without_terminator())
    rewriter.clone(op, mapping);
  rewriter.setInsertionPointToEnd(entry);
  func::ReturnOp::create(rewriter, loc);
  return function;
}

/// The declaration of the runtime's ampCpuParallelFor in `module`.
func::FuncOp getParallelFor(RewriterBase &rewriter, SymbolTable &symbols) {
  if (auto existing = symbols.lookup<func::FuncOp>(kParallelFor))
    return existing;
  OpBuilder::InsertionGuard guard(rewriter);
  MLIRContext *context = rewriter.getContext();
  Type pointer = LLVM::LLVMPointerType::get(context);
  Type i64 = rewriter.getI64Type();
  Type body = rewriter.getFunctionType({pointer, i64}, {});
  auto declaration = func::FuncOp::create(
      UnknownLoc::get(context), kParallelFor,
      rewriter.getFunctionType({body, pointer, i64}, {}));
  declaration.setPrivate();
  symbols.insert(declaration);
  return declaration;
}

/// Replaces `loop` by a call of the runtime's ampCpuParallelFor over at
/// most `threads` blocks of consecutive iterations of dim `dim`, each at
/// least `minIterations` of them, which runs its outlined blocks on the
/// library's OpenMP threads (the calling one among them) and returns when
/// all are done. The captured values cross in a context on the caller's
/// stack, allocated once at the entry of its function.
void splitLoop(RewriterBase &rewriter, SymbolTable &symbols,
               scf::ParallelOp loop, unsigned dim, int64_t threads,
               int64_t minIterations, ArrayRef<Operation *> constants,
               ValueRange captured, LLVM::LLVMStructType contextType) {
  func::FuncOp function = outlineBlock(rewriter, symbols, loop, dim,
                                       constants, captured, contextType);
  func::FuncOp parallelFor = getParallelFor(rewriter, symbols);
  Location loc = loop.getLoc();
  Type pointer = LLVM::LLVMPointerType::get(rewriter.getContext());
  Type i64 = rewriter.getI64Type();

  auto parent = loop->getParentOfType<func::FuncOp>();
  rewriter.setInsertionPointToStart(&parent.getBody().front());
  Value one = LLVM::ConstantOp::create(rewriter, loc, i64,
                                       rewriter.getI64IntegerAttr(1));
  Value contextPointer =
      LLVM::AllocaOp::create(rewriter, loc, pointer, contextType, one);

  rewriter.setInsertionPoint(loop);
  ImplicitLocOpBuilder b(loc, rewriter);
  auto index = [&](int64_t value) {
    return arith::ConstantIndexOp::create(b, value).getResult();
  };
  Value lb = loop.getLowerBound()[dim], ub = loop.getUpperBound()[dim],
        step = loop.getStep()[dim];
  Value trips = b.createOrFold<arith::MaxSIOp>(
      index(0), b.createOrFold<arith::CeilDivSIOp>(
                    b.createOrFold<arith::SubIOp>(ub, lb), step));
  Value blockTrips = b.createOrFold<arith::MaxSIOp>(
      b.createOrFold<arith::CeilDivSIOp>(trips, index(threads)),
      index(minIterations));
  Value blocks = b.createOrFold<arith::CeilDivSIOp>(trips, blockTrips);
  Value span = b.createOrFold<arith::MulIOp>(blockTrips, step);

  Value context = LLVM::PoisonOp::create(b, contextType);
  auto store = [&](Value value, int64_t position) {
    Type type = contextType.getBody()[position];
    context = LLVM::InsertValueOp::create(b, context,
                                          castTo(b, loc, value, type),
                                          position);
  };
  store(span, 0);
  for (auto [position, value] : llvm::enumerate(captured))
    store(value, position + 1);
  LLVM::StoreOp::create(b, context, contextPointer);
  Value body = func::ConstantOp::create(b, function.getFunctionType(),
                                        function.getSymName());
  func::CallOp::create(
      b, parallelFor,
      ValueRange{body, contextPointer,
                 b.createOrFold<arith::IndexCastOp>(i64, blocks)});
  rewriter.eraseOp(loop);
}

struct CPUParallelLoopsPass
    : public amp::impl::AmpCPUParallelLoopsBase<CPUParallelLoopsPass> {
  using Base::Base;

  /// Whether `loop` is split: not nested in another parallel loop, and with
  /// at least two blocks' work (or a dynamic trip count, decided at run
  /// time).
  bool isSplit(scf::ParallelOp loop) const {
    if (threads == 1 || loop->getParentOfType<scf::ParallelOp>())
      return false;
    std::optional<unsigned> dim = getSplitDim(loop);
    if (!dim)
      return false;
    std::optional<int64_t> trips =
        getTripCount(loop.getLowerBound()[*dim], loop.getUpperBound()[*dim],
                     loop.getStep()[*dim]);
    if (!trips)
      return true;
    return *trips > 1 && saturatingMul(*trips, getIterationWork(loop, *dim)) >=
                             saturatingMul(2, grain);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (threads < 1 || grain < 1) {
      module.emitError("amp-cpu-parallel-loops: threads=")
          << threads.getValue() << " grain=" << grain.getValue()
          << ": both must be positive integers";
      return signalPassFailure();
    }

    // Decided on the loops as they are, then rewritten innermost first.
    SmallVector<scf::ParallelOp> sequential, split;
    module.walk([&](scf::ParallelOp loop) {
      if (!loop.getInitVals().empty())
        return;
      if (isSplit(loop))
        split.push_back(loop);
      else
        sequential.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : sequential)
      makeSequential(rewriter, loop);
    SymbolTable symbols(module);
    LLVMTypeConverter converter(&getContext());
    for (scf::ParallelOp loop : split) {
      SmallVector<Operation *> constants;
      SmallVector<Value> captured = getCapturedValues(loop, constants);
      LLVM::LLVMStructType contextType = getContextType(converter, captured);
      // A value the LLVM lowering has no type for cannot cross to a thread.
      if (!contextType) {
        makeSequential(rewriter, loop);
        continue;
      }
      unsigned dim = *getSplitDim(loop);
      int64_t minIterations = std::max<int64_t>(
          1, llvm::divideCeil(grain, getIterationWork(loop, dim)));
      splitLoop(rewriter, symbols, loop, dim, threads, minIterations,
                constants, captured, contextType);
    }

    // The ceil divisions, which the LLVM lowering lacks.
    SmallVector<Operation *> divisions;
    module.walk([&](Operation *op) {
      if (isa<arith::CeilDivSIOp>(op))
        divisions.push_back(op);
    });
    RewritePatternSet expand(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(expand);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    if (failed(applyOpPatternsGreedily(divisions, std::move(expand), config))) {
      module.emitError("amp-cpu-parallel-loops: expanding the divisions did "
                       "not converge");
      return signalPassFailure();
    }
  }
};

} // namespace
