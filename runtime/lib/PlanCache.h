//===- PlanCache.h - Matmul plans cached per call site and shape -*- C++ -*-===//
//
// Building a cuBLASLt plan (descriptors, layouts, the heuristic query) costs
// far more than a small matmul, so ampMatmul builds one per distinct call and
// reuses it. The key holds everything a plan depends on: the call site, the
// device, the types, the problem's shape and layouts, and the pointer
// alignments that decide which algorithms the heuristic may return.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_PLANCACHE_H
#define AMP_RUNTIME_PLANCACHE_H

#include "MatmulLayout.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace amp::runtime {

/// The largest alignment the cuBLASLt heuristic distinguishes, in bytes.
constexpr uint64_t kMaxTrackedAlignment = 256;

/// The alignment of `pointer` in bytes, capped at kMaxTrackedAlignment.
uint32_t pointerAlignment(const void *pointer);

struct PlanKey {
  std::array<int64_t, 23> fields;
  bool operator==(const PlanKey &other) const {
    return fields == other.fields;
  }
};

struct PlanKeyHash {
  size_t operator()(const PlanKey &key) const;
};

/// Alignments of the first, second and output operands, in bytes.
struct OperandAlignments {
  uint32_t first = 0, second = 0, output = 0;
};

PlanKey makePlanKey(int64_t callSiteId, int device, const MatmulTypes &types,
                    const MatmulProblem &problem,
                    const OperandAlignments &alignments);

/// Thread-safe map from keys to plans; a plan is created once per key and
/// lives as long as the cache.
template <typename Plan> class PlanCache {
public:
  /// The plan for `key`, built by `create(Plan &)` on a miss. A plan whose
  /// creation fails (create returns false) is not kept; nullptr is returned.
  Plan *getOrCreate(const PlanKey &key,
                    const std::function<bool(Plan &)> &create) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = plans.find(key);
    if (it != plans.end()) {
      ++hitCount;
      return it->second.get();
    }
    ++missCount;
    auto plan = std::make_unique<Plan>();
    if (!create(*plan))
      return nullptr;
    return plans.emplace(key, std::move(plan)).first->second.get();
  }

  int64_t hits() const {
    std::lock_guard<std::mutex> lock(mutex);
    return hitCount;
  }
  int64_t misses() const {
    std::lock_guard<std::mutex> lock(mutex);
    return missCount;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex);
    return plans.size();
  }

private:
  mutable std::mutex mutex;
  std::unordered_map<PlanKey, std::unique_ptr<Plan>, PlanKeyHash> plans;
  int64_t hitCount = 0, missCount = 0;
};

} // namespace amp::runtime

#endif // AMP_RUNTIME_PLANCACHE_H
