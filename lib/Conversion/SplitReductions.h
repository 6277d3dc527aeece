//===- SplitReductions.h - Reductions into partial results ------*- C++ -*-===//
//
// A linalg.generic reduction rewritten as two ops: the op with some of its
// reduction loops made parallel, writing partial results, and one op per
// reduced output accumulating the partials into the original init. The
// GPU lowering splits reductions with few outputs over many threads
// (amp-gpu-split-reductions), the CPU lowering over the outer reduction
// loops so that the parallel-loop passes can split them over cores
// (amp-cpu-split-reductions); each pass decides how every loop is split.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CONVERSION_SPLITREDUCTIONS_H
#define AMP_LIB_CONVERSION_SPLITREDUCTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include <optional>

namespace mlir::amp {

/// How a loop is split: `serial` iterations in each of `threads` parallel
/// ones (serial * threads is its size). A parallel loop is not split.
struct LoopSplit {
  bool reduction;
  int64_t serial;
  int64_t threads;
  bool hasSerialLoop() const { return serial > 1 || threads == 1; }
  bool hasThreadLoop() const { return threads > 1; }
};

/// An output the op accumulates into (its indexing map has no reduction
/// loop), with the body op that accumulates and its partial results' start.
struct ReducedOutput {
  unsigned index;
  Operation *combiner;
  TypedAttr identity;
};

struct ReductionSplit {
  /// One per loop of the op, in its order.
  SmallVector<LoopSplit> loops;
  SmallVector<ReducedOutput> reduced;
  /// The products of the sizes of the op's parallel and reduction loops.
  int64_t parallelExtent = 1, reductionExtent = 1;
  /// Whether the parallel parts of the reduction loops come before the
  /// op's own parallel loops in the split op (else after them).
  bool threadLoopsFirst = false;
};

/// The split of `op` with `loops` still to be chosen, when its reduction
/// loops can be split at all: static shapes on tensors, indexing maps that
/// are projected permutations, and outputs that either take one element per
/// iteration (an unscaled gradient) or accumulate with one combiner that has
/// a neutral element (a sum, found_inf).
std::optional<ReductionSplit> analyzeReductionSplit(linalg::GenericOp op);

/// Replaces `op` by an op whose reduction loops are split as `split` says,
/// writing partial results of its reduced outputs, and one op per reduced
/// output that accumulates the partials into the original init, in the
/// order of the partials. Returns those accumulating ops.
SmallVector<linalg::GenericOp> applyReductionSplit(RewriterBase &rewriter,
                                                   linalg::GenericOp op,
                                                   const ReductionSplit &split);

} // namespace mlir::amp

#endif // AMP_LIB_CONVERSION_SPLITREDUCTIONS_H
