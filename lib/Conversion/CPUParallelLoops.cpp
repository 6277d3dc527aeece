//===- CPUParallelLoops.cpp - Outermost parallel loops on threads ---------===//
//
// Implements `amp-cpu-parallel-loops`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
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

/// Moves the iterations of `loop` into a new private function of the
/// module, `(first, last, captured...)`, that runs the iterations of dim
/// `dim` from `first` to `last` (values of its induction variable), and of
/// the other dims all, as scf.for loops in order. Constants the body uses
/// are cloned into it; every other value from above is an argument, listed
/// in `captured`.
func::FuncOp outlineIterations(RewriterBase &rewriter, SymbolTable &symbols,
                               scf::ParallelOp loop, unsigned dim,
                               SmallVectorImpl<Value> &captured) {
  llvm::SetVector<Value> above;
  for (Value bound : llvm::concat<Value>(loop.getLowerBound(),
                                         loop.getUpperBound(), loop.getStep()))
    above.insert(bound);
  getUsedValuesDefinedAbove(loop.getRegion(), above);
  SmallVector<Operation *> constants;
  for (Value value : above) {
    Operation *def = value.getDefiningOp();
    if (def && def->getNumResults() == 1 && matchPattern(value, m_Constant()))
      constants.push_back(def);
    else
      captured.push_back(value);
  }

  OpBuilder::InsertionGuard guard(rewriter);
  auto parent = loop->getParentOfType<func::FuncOp>();
  Location loc = loop.getLoc();
  SmallVector<Type> inputs(2, rewriter.getIndexType());
  for (Value value : captured)
    inputs.push_back(value.getType());
  // Named after the function it comes from, made unique by the table.
  auto function =
      func::FuncOp::create(loc, (parent.getSymName() + "_parallel").str(),
                           rewriter.getFunctionType(inputs, {}));
  function.setPrivate();
  symbols.insert(function, std::next(Block::iterator(parent)));
  Block *entry = function.addEntryBlock();
  rewriter.setInsertionPointToStart(entry);

  IRMapping mapping;
  for (Operation *constant : constants)
    rewriter.clone(*constant, mapping);
  for (auto [value, argument] :
       llvm::zip_equal(captured, entry->getArguments().drop_front(2)))
    mapping.map(value, argument);
  SmallVector<Value> inductionVars;
  for (unsigned d = 0; d < loop.getNumLoops(); ++d) {
    Value lb = d == dim ? entry->getArgument(0)
                        : mapping.lookup(loop.getLowerBound()[d]);
    Value ub = d == dim ? entry->getArgument(1)
                        : mapping.lookup(loop.getUpperBound()[d]);
    auto nested = scf::ForOp::create(rewriter, loc, lb, ub,
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

/// Replaces `loop` by calls of its outlined iterations over at most
/// `threads` blocks of consecutive iterations of dim `dim`, each at least
/// `minIterations` of them: one block in the calling thread, the others in
/// `async.execute`s it waits for. One block (a dynamic trip count that
/// turns out small) is a plain call.
void splitLoop(RewriterBase &rewriter, SymbolTable &symbols,
               scf::ParallelOp loop, unsigned dim, int64_t threads,
               int64_t minIterations) {
  SmallVector<Value> captured;
  func::FuncOp function =
      outlineIterations(rewriter, symbols, loop, dim, captured);
  rewriter.setInsertionPoint(loop);
  ImplicitLocOpBuilder b(loop.getLoc(), rewriter);
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
  Value blockSpan = b.createOrFold<arith::MulIOp>(blockTrips, step);
  auto call = [&](OpBuilder &builder, Location loc, Value first) {
    Value last = builder.createOrFold<arith::MinSIOp>(
        loc, ub, builder.createOrFold<arith::AddIOp>(loc, first, blockSpan));
    SmallVector<Value> operands = {first, last};
    operands.append(captured);
    func::CallOp::create(builder, loc, function, operands);
  };
  Value several = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, blocks,
                                        index(1));
  scf::IfOp::create(
      b, several,
      [&](OpBuilder &builder, Location loc) {
        ImplicitLocOpBuilder nested(loc, builder);
        Value others = arith::SubIOp::create(nested, blocks, index(1));
        Value group = async::CreateGroupOp::create(
            nested, async::GroupType::get(builder.getContext()), others);
        scf::ForOp::create(
            nested, index(1), blocks, index(1), ValueRange(),
            [&](OpBuilder &builder, Location loc, Value block, ValueRange) {
              Value first = arith::AddIOp::create(
                  builder, loc, lb,
                  arith::MulIOp::create(builder, loc, block, blockSpan));
              auto execute = async::ExecuteOp::create(
                  builder, loc, TypeRange(), ValueRange(), ValueRange(),
                  [&](OpBuilder &builder, Location loc, ValueRange) {
                    call(builder, loc, first);
                    async::YieldOp::create(builder, loc, ValueRange());
                  });
              async::AddToGroupOp::create(builder, loc,
                                          builder.getIndexType(),
                                          execute.getToken(), group);
              scf::YieldOp::create(builder, loc);
            });
        call(builder, loc, lb);
        async::AwaitAllOp::create(nested, group);
        scf::YieldOp::create(nested);
      },
      [&](OpBuilder &builder, Location loc) {
        SmallVector<Value> operands = {lb, ub};
        operands.append(captured);
        func::CallOp::create(builder, loc, function, operands);
        scf::YieldOp::create(builder, loc);
      });
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
    for (scf::ParallelOp loop : split) {
      unsigned dim = *getSplitDim(loop);
      int64_t minIterations = std::max<int64_t>(
          1, llvm::divideCeil(grain, getIterationWork(loop, dim)));
      splitLoop(rewriter, symbols, loop, dim, threads, minIterations);
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
