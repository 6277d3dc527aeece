//===- PrecisionPainting.cpp - Grappler's painting rules ------------------===//
//
// TensorFlow grappler's auto_mixed_precision rules, each a worklist walk with
// a global visited set, so that painting is linear in nodes and edges
// (docs/Precision.md, section 2). They are ordered passes over the whole
// graph with their own visited sets, not one monotone fixpoint per value,
// which is why they are not written on the upstream dataflow framework.
//
//===----------------------------------------------------------------------===//

#include "PrecisionPainting.h"

using namespace mlir;
using namespace mlir::amp;

void amp::paintPrecisions(MutableArrayRef<PrecisionDecision> nodes,
                          const PrecisionGraph &graph) {
  unsigned numNodes = nodes.size();
  ArrayRef<SmallVector<unsigned, 2>> preds = graph.preds, succs = graph.succs;
  enum class Paint : uint8_t { None, Deny, Allow };
  SmallVector<Paint> paint(numNodes, Paint::None);
  auto is = [&](unsigned node, OpCategory category) {
    return nodes[node].category == category;
  };
  auto mark = [&](unsigned node, Paint color, PaintRule rule, unsigned from) {
    paint[node] = color;
    nodes[node].rule = rule;
    nodes[node].decidedBy = from;
  };
  SmallVector<unsigned> stack;

  // 1. allow ops are low, deny ops f32.
  for (unsigned node = 0; node < numNodes; ++node) {
    if (is(node, OpCategory::Allow))
      paint[node] = Paint::Allow;
    else if (is(node, OpCategory::Deny))
      paint[node] = Paint::Deny;
  }

  // 2. deny spreads forward through infer ops, and through clear ops that
  // lie on a path to a deny or infer op.
  SmallVector<bool> upstreamOfDenyOrInfer(numNodes, false);
  for (unsigned root = 0; root < numNodes; ++root) {
    if (!(is(root, OpCategory::Deny) || is(root, OpCategory::Infer)) ||
        upstreamOfDenyOrInfer[root])
      continue;
    upstreamOfDenyOrInfer[root] = true;
    stack.push_back(root);
    while (!stack.empty()) {
      unsigned node = stack.pop_back_val();
      for (unsigned pred : preds[node]) {
        if (upstreamOfDenyOrInfer[pred] || !is(pred, OpCategory::Clear))
          continue;
        upstreamOfDenyOrInfer[pred] = true;
        stack.push_back(pred);
      }
    }
  }
  for (unsigned root = 0; root < numNodes; ++root) {
    if (!is(root, OpCategory::Deny))
      continue;
    stack.push_back(root);
    while (!stack.empty()) {
      unsigned node = stack.pop_back_val();
      for (unsigned succ : succs[node]) {
        if (paint[succ] != Paint::None || !upstreamOfDenyOrInfer[succ])
          continue;
        mark(succ, Paint::Deny, PaintRule::DenyForward, root);
        stack.push_back(succ);
      }
    }
  }

  // 3. infer and clear ops downstream of an allow op and upstream of
  // another become allow.
  auto openInferOrClear = [&](unsigned node) {
    return paint[node] == Paint::None &&
           (is(node, OpCategory::Infer) || is(node, OpCategory::Clear));
  };
  SmallVector<bool> downstreamOfAllow(numNodes, false);
  for (unsigned root = 0; root < numNodes; ++root) {
    if (paint[root] != Paint::Allow)
      continue;
    stack.push_back(root);
    while (!stack.empty()) {
      unsigned node = stack.pop_back_val();
      for (unsigned succ : succs[node]) {
        if (downstreamOfAllow[succ] || !openInferOrClear(succ))
          continue;
        downstreamOfAllow[succ] = true;
        stack.push_back(succ);
      }
    }
  }
  for (unsigned root = 0; root < numNodes; ++root) {
    if (paint[root] != Paint::Allow || nodes[root].rule != PaintRule::Own)
      continue;
    stack.push_back(root);
    while (!stack.empty()) {
      unsigned node = stack.pop_back_val();
      for (unsigned pred : preds[node]) {
        if (!downstreamOfAllow[pred] || paint[pred] != Paint::None)
          continue;
        mark(pred, Paint::Allow, PaintRule::BetweenAllow, root);
        stack.push_back(pred);
      }
    }
  }

  // 4. allow expands through clear ops, both ways. Unlike in grappler, a
  // contraction hands over an f32 accumulator: the clear ops after it
  // become low only when rule 3 found a low user behind them, otherwise
  // they would add a truncf and an extf where none is needed.
  for (unsigned root = 0; root < numNodes; ++root) {
    if (paint[root] != Paint::Allow ||
        nodes[root].rule == PaintRule::AllowThroughClear)
      continue;
    stack.push_back(root);
    while (!stack.empty()) {
      unsigned node = stack.pop_back_val();
      ArrayRef<unsigned> downstream;
      if (!nodes[node].accumulates)
        downstream = succs[node];
      for (unsigned next : llvm::concat<const unsigned>(
               ArrayRef<unsigned>(preds[node]), downstream)) {
        if (paint[next] != Paint::None || !is(next, OpCategory::Clear))
          continue;
        mark(next, Paint::Allow, PaintRule::AllowThroughClear, root);
        stack.push_back(next);
      }
    }
  }

  // 5. What is left follows its inputs: low when all of them are low (the
  // greatest fixpoint, so a loop that only carries low values stays low).
  // Contractions and reductions hand over f32 accumulators.
  auto outputsLow = [&](unsigned node) {
    return paint[node] != Paint::Deny && !nodes[node].accumulates;
  };
  SmallVector<bool> low(numNodes, false);
  for (unsigned node = 0; node < numNodes; ++node) {
    if (paint[node] != Paint::None)
      continue;
    nodes[node].rule = PaintRule::FollowInputs;
    low[node] = !graph.readsFixedF32[node] && !preds[node].empty();
    for (unsigned pred : preds[node]) {
      if (paint[pred] == Paint::None || outputsLow(pred))
        continue;
      low[node] = false;
      nodes[node].decidedBy = pred;
    }
  }
  for (unsigned node = 0; node < numNodes; ++node)
    if (paint[node] == Paint::None && !low[node])
      stack.push_back(node);
  while (!stack.empty()) {
    unsigned node = stack.pop_back_val();
    for (unsigned succ : succs[node]) {
      if (paint[succ] != Paint::None || !low[succ])
        continue;
      low[succ] = false;
      nodes[succ].decidedBy = node;
      stack.push_back(succ);
    }
  }
  for (unsigned node = 0; node < numNodes; ++node) {
    if (paint[node] == Paint::None && low[node])
      nodes[node].decidedBy = preds[node].front();
    nodes[node].isLow = paint[node] == Paint::Allow ||
                        (paint[node] == Paint::None && low[node]);
  }
}
