//===- PlanCache.cpp - Plan-cache keys -------------------------------------===//

#include "PlanCache.h"

namespace amp::runtime {

uint32_t pointerAlignment(const void *pointer) {
  auto address = reinterpret_cast<uintptr_t>(pointer);
  uintptr_t lowestBit = address & (~address + 1);
  if (lowestBit == 0 || lowestBit > kMaxTrackedAlignment)
    return kMaxTrackedAlignment;
  return static_cast<uint32_t>(lowestBit);
}

size_t PlanKeyHash::operator()(const PlanKey &key) const {
  // FNV-1a over the fields.
  uint64_t hash = 1469598103934665603ull;
  for (int64_t field : key.fields) {
    hash ^= static_cast<uint64_t>(field);
    hash *= 1099511628211ull;
  }
  return static_cast<size_t>(hash);
}

PlanKey makePlanKey(int64_t callSiteId, int device, const MatmulTypes &types,
                    const MatmulProblem &problem,
                    const OperandAlignments &alignments) {
  auto layout = [](const MatrixLayout &l, int64_t *out) {
    out[0] = static_cast<int64_t>(l.rows);
    out[1] = static_cast<int64_t>(l.cols);
    out[2] = l.ld;
    out[3] = l.batchStride;
  };
  PlanKey key;
  int64_t *f = key.fields.data();
  f[0] = callSiteId;
  f[1] = device;
  f[2] = types.inputs;
  f[3] = types.output;
  f[4] = problem.batchCount;
  f[5] = problem.firstOp;
  f[6] = problem.secondOp;
  layout(problem.first, f + 7);
  layout(problem.second, f + 11);
  layout(problem.output, f + 15);
  f[19] = problem.swapped;
  f[20] = alignments.first;
  f[21] = alignments.second;
  f[22] = alignments.output;
  return key;
}

} // namespace amp::runtime
