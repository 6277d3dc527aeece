//===- PrecisionPainting.h - Grappler's painting rules ----------*- C++ -*-===//
//
// Painting, the second step of the precision analysis: classified nodes
// (painted ops and carried values) and the edges between them in, a
// precision per node out. Knows nothing of IR.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_ANALYSIS_PRECISIONPAINTING_H
#define AMP_LIB_ANALYSIS_PRECISIONPAINTING_H

#include "amp/Analysis/PrecisionAnalysis.h"

namespace mlir::amp {

/// The nodes' use-def edges.
struct PrecisionGraph {
  /// Edges from the node that produces a value to each node that converts
  /// it to its own precision, by node id.
  SmallVector<SmallVector<unsigned, 2>> preds, succs;
  /// Whether a node reads an f32 value from outside the graph (a function
  /// argument, a fixed op) through an operand it converts.
  SmallVector<bool> readsFixedF32;
};

/// Applies grappler's rules, in its order, to the classified `nodes`: sets
/// each node's `isLow`, `rule` and `decidedBy`. Linear in nodes and edges.
void paintPrecisions(MutableArrayRef<PrecisionDecision> nodes,
                     const PrecisionGraph &graph);

} // namespace mlir::amp

#endif // AMP_LIB_ANALYSIS_PRECISIONPAINTING_H
