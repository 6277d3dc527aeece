//===- Matmul.cpp - ampMatmul through cuBLASLt ------------------------------===//

#include "Error.h"
#include "MatmulLayout.h"
#include "PlanCache.h"
#include "Runtime.h"

#include <memory>
#include <type_traits>

using namespace amp::runtime;

namespace {

/// cuBLASLt's recommended workspace on Hopper; smaller chips use less.
constexpr uint64_t kWorkspaceBytes = 32ull << 20;

bool createLayout(cublasLtMatrixLayout_t &layout, cudaDataType_t type,
                  const MatrixLayout &shape, int64_t batchCount) {
  if (!AMP_CHECK(cublasLtMatrixLayoutCreate(&layout, type, shape.rows,
                                            shape.cols, shape.ld)))
    return false;
  if (batchCount == 1)
    return true;
  auto count = static_cast<int32_t>(batchCount);
  return AMP_CHECK(cublasLtMatrixLayoutSetAttribute(
             layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
             sizeof(count))) &&
         AMP_CHECK(cublasLtMatrixLayoutSetAttribute(
             layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
             &shape.batchStride, sizeof(shape.batchStride)));
}

bool setPreferences(cublasLtMatmulPreference_t preference,
                    const OperandAlignments &alignments) {
  uint64_t workspace = kWorkspaceBytes;
  // D is written over C, so both have the output's alignment.
  return AMP_CHECK(cublasLtMatmulPreferenceSetAttribute(
             preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
             sizeof(workspace))) &&
         AMP_CHECK(cublasLtMatmulPreferenceSetAttribute(
             preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
             &alignments.first, sizeof(alignments.first))) &&
         AMP_CHECK(cublasLtMatmulPreferenceSetAttribute(
             preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
             &alignments.second, sizeof(alignments.second))) &&
         AMP_CHECK(cublasLtMatmulPreferenceSetAttribute(
             preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
             &alignments.output, sizeof(alignments.output))) &&
         AMP_CHECK(cublasLtMatmulPreferenceSetAttribute(
             preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
             &alignments.output, sizeof(alignments.output)));
}

bool buildPlan(MatmulPlan &plan, cublasLtHandle_t handle,
               const MatmulTypes &types, const MatmulProblem &problem,
               const OperandAlignments &alignments) {
  int32_t firstOp = problem.firstOp;
  int32_t secondOp = problem.secondOp;
  if (!AMP_CHECK(cublasLtMatmulDescCreate(&plan.desc, kComputeType,
                                          kScaleType)) ||
      !AMP_CHECK(cublasLtMatmulDescSetAttribute(
          plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &firstOp,
          sizeof(firstOp))) ||
      !AMP_CHECK(cublasLtMatmulDescSetAttribute(
          plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &secondOp,
          sizeof(secondOp))) ||
      !createLayout(plan.first, types.inputs, problem.first,
                    problem.batchCount) ||
      !createLayout(plan.second, types.inputs, problem.second,
                    problem.batchCount) ||
      !createLayout(plan.output, types.output, problem.output,
                    problem.batchCount))
    return false;

  cublasLtMatmulPreference_t raw = nullptr;
  if (!AMP_CHECK(cublasLtMatmulPreferenceCreate(&raw)))
    return false;
  std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>,
                  void (*)(cublasLtMatmulPreference_t)>
      preference(raw, [](cublasLtMatmulPreference_t p) {
        AMP_CHECK(cublasLtMatmulPreferenceDestroy(p));
      });
  cublasLtMatmulHeuristicResult_t result = {};
  int found = 0;
  if (!setPreferences(preference.get(), alignments) ||
      !AMP_CHECK(cublasLtMatmulAlgoGetHeuristic(
          handle, plan.desc, plan.first, plan.second, plan.output,
          plan.output, preference.get(), 1, &result, &found)))
    return false;
  if (found == 0)
    return recordError(
        AMP_RUNTIME_ERROR_CUBLAS,
        std::string("cublasLtMatmulAlgoGetHeuristic found no algorithm in ") +
            entryPoint() + " for a " + std::to_string(problem.output.rows) +
            "x" + std::to_string(problem.output.cols) + " output");
  plan.algo = result.algo;
  plan.workspaceSize = result.workspaceSize;
  return true;
}

/// The stream's workspace, taken from the idle ones or allocated.
bool streamWorkspace(const CudaDriver &cu, DeviceState &device,
                     CUstream stream, CUdeviceptr &workspace) {
  auto it = device.streamWorkspaces.find(stream);
  if (it != device.streamWorkspaces.end()) {
    workspace = it->second;
    return true;
  }
  if (!device.idleWorkspaces.empty()) {
    workspace = device.idleWorkspaces.back();
    device.idleWorkspaces.pop_back();
  } else if (!AMP_CHECK(cu.cuMemAlloc(&workspace, kWorkspaceBytes))) {
    return false;
  }
  device.streamWorkspaces.emplace(stream, workspace);
  return true;
}

} // namespace

namespace amp::runtime {

MatmulPlan::~MatmulPlan() {
  for (cublasLtMatrixLayout_t layout : {first, second, output})
    if (layout)
      AMP_CHECK(cublasLtMatrixLayoutDestroy(layout));
  if (desc)
    AMP_CHECK(cublasLtMatmulDescDestroy(desc));
}

void releaseStreamWorkspace(const CudaDriver &cu, DeviceState &device,
                            CUstream stream) {
  std::lock_guard<std::mutex> lock(device.matmulMutex);
  auto it = device.streamWorkspaces.find(stream);
  if (it == device.streamWorkspaces.end())
    return;
  // The next stream may use the workspace as soon as it is idle, so the
  // matmuls still queued on this one must finish first.
  if (AMP_CHECK(cu.cuStreamSynchronize(stream)))
    device.idleWorkspaces.push_back(it->second);
  device.streamWorkspaces.erase(it);
}

} // namespace amp::runtime

extern "C" void ampMatmul(int64_t rank, const void *a, const void *b, void *c,
                          int32_t aType, int32_t bType, int32_t cType,
                          float alpha, float beta, void *stream,
                          int64_t callSiteId) {
  setEntryPoint(__func__);
  if (hasPendingError())
    return;
  std::string error;
  MatmulTypes types;
  if (!mapMatmulTypes(aType, bType, cType, types, error)) {
    recordError(AMP_RUNTIME_ERROR_INVALID_ARGUMENT, error);
    return;
  }
  if (rank != 2 && rank != 3) {
    recordError(AMP_RUNTIME_ERROR_INVALID_ARGUMENT,
                "ampMatmul: operands have rank " + std::to_string(rank) +
                    " (expected 2, or 3 for a batched matmul)");
    return;
  }
  if (!a || !b || !c) {
    recordError(AMP_RUNTIME_ERROR_INVALID_ARGUMENT,
                "ampMatmul: a memref descriptor pointer is null");
    return;
  }
  MemRefView va = readMemRefDescriptor(rank, a, types.inputSize);
  MemRefView vb = readMemRefDescriptor(rank, b, types.inputSize);
  MemRefView vc = readMemRefDescriptor(rank, c, types.outputSize);
  MatmulProblem problem;
  if (!selectMatmulLayout(va, vb, vc, problem, error)) {
    recordError(AMP_RUNTIME_ERROR_INVALID_ARGUMENT, error);
    return;
  }
  if (problem.empty)
    return;

  DeviceState *device = nullptr;
  const CudaDriver *cu = enterDevice(__func__, &device);
  if (!cu)
    return;
  const char *first = problem.swapped ? vb.data : va.data;
  const char *second = problem.swapped ? va.data : vb.data;
  OperandAlignments alignments{pointerAlignment(first),
                               pointerAlignment(second),
                               pointerAlignment(vc.data)};
  auto cuStream = static_cast<CUstream>(stream);

  std::lock_guard<std::mutex> lock(device->matmulMutex);
  CUdeviceptr workspace = 0;
  if ((!device->cublasLt && !AMP_CHECK(cublasLtCreate(&device->cublasLt))) ||
      !streamWorkspace(*cu, *device, cuStream, workspace))
    return;
  cublasLtHandle_t handle = device->cublasLt;
  PlanKey key =
      makePlanKey(callSiteId, device->ordinal, types, problem, alignments);
  MatmulPlan *plan = device->plans.getOrCreate(key, [&](MatmulPlan &p) {
    return buildPlan(p, handle, types, problem, alignments);
  });
  if (!plan)
    return;
  void *output = const_cast<char *>(vc.data);
  AMP_CHECK(cublasLtMatmul(handle, plan->desc, &alpha, first, plan->first,
                           second, plan->second, &beta, output, plan->output,
                           output, plan->output, &plan->algo,
                           reinterpret_cast<void *>(workspace),
                           plan->workspaceSize, cuStream));
}

extern "C" void ampRuntimeGetPlanCacheStats(int64_t *hits, int64_t *misses) {
  int64_t totalHits = 0, totalMisses = 0;
  forEachDevice([&](DeviceState &device) {
    totalHits += device.plans.hits();
    totalMisses += device.plans.misses();
  });
  if (hits)
    *hits = totalHits;
  if (misses)
    *misses = totalMisses;
}
