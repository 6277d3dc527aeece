//===- CPUChannelsLast.cpp - Channels-last activations for oneDNN ---------===//
//
// Implements `amp-cpu-channels-last`: the N x C x H x W buffers (C a
// multiple of 16) that the runtime's convolutions read or write, and those
// the elementwise code around them makes from them, are laid out
// channels-last, which oneDNN reads and writes without reorders (for 16
// channels with AVX-512 it is its blocked layout nChw16c; the runtime hands
// it the others as channels-last). Loops over them run with the channels
// innermost.
//
//===----------------------------------------------------------------------===//

#include "LinalgLibraryCalls.h"
#include "amp/Conversion/Passes.h"
#include "amp/ExecutionEngine/CpuRuntime.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUCHANNELSLAST
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// The physical dims of a channels-last N x C x H x W buffer: N, H, W, C.
constexpr int64_t kChannelsLastOrder[] = {0, 2, 3, 1};

/// The allocation `value` is, or is a cast or a subview of (views that
/// keep its dims in their order), when this pass lays it out channels-last:
/// a static, dense N x C x H x W memref, C a multiple of
/// AMP_CPU_CHANNELS_LAST_MULTIPLE (16), with more than one pixel.
memref::AllocOp getCandidate(Value value) {
  while (true) {
    if (auto cast = value.getDefiningOp<memref::CastOp>())
      value = cast.getSource();
    else if (auto subview = value.getDefiningOp<memref::SubViewOp>();
             subview && subview.getType().getRank() == 4)
      value = subview.getSource();
    else
      break;
  }
  auto alloc = value.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return {};
  MemRefType type = alloc.getType();
  if (type.getRank() != 4 || !type.hasStaticShape() ||
      !type.getLayout().isIdentity() ||
      type.getDimSize(1) % AMP_CPU_CHANNELS_LAST_MULTIPLE != 0 ||
      type.getDimSize(2) * type.getDimSize(3) == 1)
    return {};
  return alloc;
}

/// The image operands (not the filter or its gradient) of a call of the
/// runtime's convolutions, or none for other calls.
SmallVector<Value> getConvolutionImages(func::CallOp call) {
  StringRef callee = call.getCallee();
  if (!callee.starts_with(kCpuConv2D))
    return {};
  unsigned filter = callee.starts_with(kCpuConv2DBackwardWeights) ? 2 : 1;
  SmallVector<Value> images;
  for (auto [index, operand] : llvm::enumerate(call.getOperands()))
    if (index < 3 && index != filter)
      images.push_back(operand);
  return images;
}

/// Whether every use of `value`, a candidate or a view of one, can take a
/// channels-last buffer: linalg ops (any layout, or the physical buffer
/// through their indexing maps), deallocations, copies, casts to unranked
/// memrefs that only the runtime's strided calls read, and subviews whose
/// uses can.
bool usesTakeChannelsLast(Value value) {
  return llvm::all_of(value.getUses(), [](OpOperand &use) {
    Operation *user = use.getOwner();
    // Named ops become generics first, which needs their region builder.
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user))
      return isa<linalg::GenericOp>(user) ||
             static_cast<bool>(linalgOp.getRegionBuilder());
    if (isa<memref::DeallocOp>(user))
      return true;
    // A copy becomes a linalg.copy, which takes ranked memrefs only.
    if (auto copy = dyn_cast<memref::CopyOp>(user))
      return isa<MemRefType>(copy.getSource().getType()) &&
             isa<MemRefType>(copy.getTarget().getType());
    if (auto subview = dyn_cast<memref::SubViewOp>(user))
      return usesTakeChannelsLast(subview.getResult());
    if (auto cast = dyn_cast<memref::CastOp>(user))
      return isa<UnrankedMemRefType>(cast.getType()) &&
             llvm::all_of(cast->getUsers(), [](Operation *castUser) {
               auto call = dyn_cast<func::CallOp>(castUser);
               return call && isCpuLibraryCall(call);
             });
    return false;
  });
}

/// The candidates to lay out channels-last: those the runtime's
/// convolutions read or write, then those a linalg op or copy reads or
/// writes together with one already taken, when all their uses can take
/// the layout.
SmallVector<memref::AllocOp> selectBuffers(func::FuncOp function) {
  llvm::SetVector<Operation *> selected;
  SmallVector<memref::AllocOp> worklist;
  auto consider = [&](Value value) {
    memref::AllocOp alloc = getCandidate(value);
    if (alloc && !selected.contains(alloc) &&
        usesTakeChannelsLast(alloc.getResult())) {
      selected.insert(alloc);
      worklist.push_back(alloc);
    }
  };
  function.walk([&](func::CallOp call) {
    for (Value image : getConvolutionImages(call))
      consider(image);
  });
  while (!worklist.empty()) {
    memref::AllocOp alloc = worklist.pop_back_val();
    for (Operation *user : alloc->getUsers())
      if (isa<linalg::LinalgOp, memref::CopyOp>(user))
        for (Value operand : user->getOperands())
          consider(operand);
  }
  return llvm::map_to_vector(selected, [](Operation *op) {
    return cast<memref::AllocOp>(op);
  });
}

/// `map` reading the physical (N, H, W, C) buffer instead of the logical
/// N x C x H x W one.
AffineMap toChannelsLast(AffineMap map) {
  SmallVector<AffineExpr> results;
  for (int64_t dim : kChannelsLastOrder)
    results.push_back(map.getResult(dim));
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), results,
                        map.getContext());
}

/// Gives each subview of `view` (directly or through other subviews) the
/// result type its new source implies.
void retypeSubviews(RewriterBase &rewriter, Value view) {
  for (Operation *user : view.getUsers()) {
    auto subview = dyn_cast<memref::SubViewOp>(user);
    if (!subview)
      continue;
    MemRefType type = memref::SubViewOp::inferRankReducedResultType(
        subview.getType().getShape(), cast<MemRefType>(view.getType()),
        subview.getMixedOffsets(), subview.getMixedSizes(),
        subview.getMixedStrides());
    rewriter.modifyOpInPlace(subview,
                             [&] { subview.getResult().setType(type); });
    retypeSubviews(rewriter, subview.getResult());
  }
}

/// The loop of each generic that walks the channels of a channels-last
/// operand (its output's, when that is one).
using ChannelLoops = llvm::MapVector<Operation *, unsigned>;

/// Replaces the logical buffer of `alloc` by a channels-last one: linalg
/// ops (copies and named ops become generics first) read and write it
/// through their indexing maps; other users get a transposed view of it,
/// and subviews of that view their new types. Records the generics' channel
/// loops in `channelLoops`.
void layOutChannelsLast(RewriterBase &rewriter, memref::AllocOp alloc,
                        ChannelLoops &channelLoops) {
  MemRefType type = alloc.getType();
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> logicalOrder(4);
  for (auto [physicalDim, logicalDim] : llvm::enumerate(kChannelsLastOrder)) {
    shape.push_back(type.getDimSize(logicalDim));
    logicalOrder[logicalDim] = rewriter.getAffineDimExpr(physicalDim);
  }
  rewriter.setInsertionPoint(alloc);
  Location loc = alloc.getLoc();
  auto physical = memref::AllocOp::create(
      rewriter, loc,
      MemRefType::get(shape, type.getElementType(), MemRefLayoutAttrInterface{},
                      type.getMemorySpace()),
      alloc.getAlignmentAttr());
  auto logical = memref::TransposeOp::create(
      rewriter, loc, physical,
      AffineMapAttr::get(
          AffineMap::get(4, 0, logicalOrder, rewriter.getContext())));

  Value buffer = alloc.getResult();
  llvm::SetVector<Operation *> users(alloc->user_begin(), alloc->user_end());
  for (Operation *user : users) {
    if (auto copy = dyn_cast<memref::CopyOp>(user)) {
      rewriter.setInsertionPoint(copy);
      user = linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(),
                                    copy.getTarget());
      rewriter.eraseOp(copy);
    }
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user)) {
      auto generic = dyn_cast<linalg::GenericOp>(user);
      if (!generic) {
        rewriter.setInsertionPoint(user);
        generic = *linalg::generalizeNamedOp(rewriter, linalgOp);
      }
      SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
      rewriter.modifyOpInPlace(generic, [&] {
        for (OpOperand &operand : generic->getOpOperands()) {
          if (operand.get() != buffer)
            continue;
          AffineMap &map = maps[operand.getOperandNumber()];
          map = toChannelsLast(map);
          operand.set(physical);
          auto channels = dyn_cast<AffineDimExpr>(map.getResult(3));
          if (channels &&
              (generic.isDpsInit(&operand) || !channelLoops.count(generic)))
            channelLoops[generic] = channels.getPosition();
        }
        generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      });
      continue;
    }
    Value replacement = isa<memref::DeallocOp>(user) ? Value(physical)
                                                     : Value(logical);
    rewriter.modifyOpInPlace(user, [&] {
      user->replaceUsesOfWith(buffer, replacement);
    });
  }
  rewriter.eraseOp(alloc);
  if (logical->use_empty())
    rewriter.eraseOp(logical);
  else
    retypeSubviews(rewriter, logical);
}

/// Reads the per-channel operands of `generic` (1 x C x 1 x 1: a
/// BatchNorm's statistics and parameters) through 1 x 1 x 1 x C views, the
/// order of its channels-last ones: the vector code then loads the channels
/// of a tile as one vector instead of element by element.
void viewChannelVectorsChannelsLast(RewriterBase &rewriter,
                                    linalg::GenericOp generic) {
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  SmallVector<int64_t> order(std::begin(kChannelsLastOrder),
                             std::end(kChannelsLastOrder));
  auto permutation = AffineMapAttr::get(
      AffineMap::getPermutationMap(order, rewriter.getContext()));
  rewriter.setInsertionPoint(generic);
  for (OpOperand &operand : generic->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || type.getRank() != 4 || !type.hasStaticShape() ||
        !type.isStrided() || type.getNumElements() != type.getDimSize(1) ||
        type.getDimSize(1) == 1)
      continue;
    Value view = memref::TransposeOp::create(rewriter, generic.getLoc(),
                                             operand.get(), permutation);
    AffineMap &map = maps[operand.getOperandNumber()];
    map = toChannelsLast(map);
    rewriter.modifyOpInPlace(generic, [&] { operand.set(view); });
  }
  rewriter.modifyOpInPlace(generic, [&] {
    generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
}

/// Moves the loop that walks the channels of a channels-last operand of
/// `generic` innermost, when it is parallel: the others keep their order,
/// so every sum adds in the same order as before.
void moveChannelsInnermost(RewriterBase &rewriter, linalg::GenericOp generic,
                           unsigned channels) {
  unsigned loops = generic.getNumLoops();
  if (channels == loops - 1 ||
      !linalg::isParallelIterator(generic.getIteratorTypesArray()[channels]))
    return;
  SmallVector<unsigned> order;
  for (unsigned loop = 0; loop < loops; ++loop)
    if (loop != channels)
      order.push_back(loop);
  order.push_back(channels);
  rewriter.setInsertionPoint(generic);
  (void)linalg::interchangeGenericOp(rewriter, generic, order);
}

struct AmpCPUChannelsLast
    : public amp::impl::AmpCPUChannelsLastBase<AmpCPUChannelsLast> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    ChannelLoops channelLoops;
    for (memref::AllocOp alloc : selectBuffers(getOperation()))
      layOutChannelsLast(rewriter, alloc, channelLoops);
    for (auto [op, channels] : channelLoops) {
      auto generic = cast<linalg::GenericOp>(op);
      viewChannelVectorsChannelsLast(rewriter, generic);
      moveChannelsInnermost(rewriter, generic, channels);
    }
  }
};

} // namespace
