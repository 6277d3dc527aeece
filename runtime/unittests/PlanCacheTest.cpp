//===- PlanCacheTest.cpp - Plan-cache keys, hits and misses ---------------===//

#include "PlanCache.h"

#include "gtest/gtest.h"

using namespace amp::runtime;

namespace {

MatmulProblem rowMajorProblem(uint64_t m, uint64_t n, uint64_t k) {
  MatmulProblem p;
  p.swapped = true;
  p.first = {n, k, static_cast<int64_t>(n), 0};
  p.second = {k, m, static_cast<int64_t>(k), 0};
  p.output = {n, m, static_cast<int64_t>(n), 0};
  return p;
}

const MatmulTypes kF16ToF32{CUDA_R_16F, CUDA_R_32F, 2, 4};
const OperandAlignments kAligned{256, 256, 256};

struct CountingCache {
  PlanCache<int> cache;
  int created = 0;
  int *get(const PlanKey &key) {
    return cache.getOrCreate(key, [&](int &plan) {
      plan = ++created;
      return true;
    });
  }
};

TEST(PlanCache, SameCallSiteAndShapeHits) {
  CountingCache c;
  PlanKey key = makePlanKey(7, 0, kF16ToF32, rowMajorProblem(64, 32, 16),
                            kAligned);
  int *first = c.get(key);
  int *second = c.get(makePlanKey(7, 0, kF16ToF32,
                                  rowMajorProblem(64, 32, 16), kAligned));
  EXPECT_EQ(first, second);
  EXPECT_EQ(c.created, 1);
  EXPECT_EQ(c.cache.hits(), 1);
  EXPECT_EQ(c.cache.misses(), 1);
}

TEST(PlanCache, EachKeyFieldMisses) {
  CountingCache c;
  MatmulProblem base = rowMajorProblem(64, 32, 16);
  c.get(makePlanKey(7, 0, kF16ToF32, base, kAligned));

  c.get(makePlanKey(8, 0, kF16ToF32, base, kAligned)); // call site
  c.get(makePlanKey(7, 1, kF16ToF32, base, kAligned)); // device
  c.get(makePlanKey(7, 0, MatmulTypes{CUDA_R_16BF, CUDA_R_32F, 2, 4}, base,
                    kAligned)); // types
  c.get(makePlanKey(7, 0, kF16ToF32, rowMajorProblem(64, 32, 17),
                    kAligned)); // shape
  MatmulProblem transposed = base;
  transposed.firstOp = CUBLAS_OP_T;
  c.get(makePlanKey(7, 0, kF16ToF32, transposed, kAligned));
  MatmulProblem padded = base;
  padded.output.ld = 40;
  c.get(makePlanKey(7, 0, kF16ToF32, padded, kAligned));
  MatmulProblem batched = base;
  batched.batchCount = 4;
  c.get(makePlanKey(7, 0, kF16ToF32, batched, kAligned));
  c.get(makePlanKey(7, 0, kF16ToF32, base, OperandAlignments{256, 256, 16}));
  EXPECT_EQ(c.created, 9);
  EXPECT_EQ(c.cache.misses(), 9);
  EXPECT_EQ(c.cache.hits(), 0);
  EXPECT_EQ(c.cache.size(), 9u);
}

TEST(PlanCache, FailedCreationIsNotCached) {
  PlanCache<int> cache;
  PlanKey key = makePlanKey(1, 0, kF16ToF32, rowMajorProblem(8, 8, 8),
                            kAligned);
  EXPECT_EQ(cache.getOrCreate(key, [](int &) { return false; }), nullptr);
  int *plan = cache.getOrCreate(key, [](int &p) {
    p = 42;
    return true;
  });
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(*plan, 42);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(PlanCache, PointerAlignmentIsCappedAt256) {
  EXPECT_EQ(pointerAlignment(reinterpret_cast<void *>(0x10000)), 256u);
  EXPECT_EQ(pointerAlignment(reinterpret_cast<void *>(0x10100)), 256u);
  EXPECT_EQ(pointerAlignment(reinterpret_cast<void *>(0x10080)), 128u);
  EXPECT_EQ(pointerAlignment(reinterpret_cast<void *>(0x10010)), 16u);
  EXPECT_EQ(pointerAlignment(reinterpret_cast<void *>(0x10002)), 2u);
  EXPECT_EQ(pointerAlignment(nullptr), 256u);
}

} // namespace
