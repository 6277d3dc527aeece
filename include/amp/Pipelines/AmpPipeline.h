//===- AmpPipeline.h - The AMP pipeline and its options ---------*- C++ -*-===//
//
// `amp-pipeline`: cast insertion, loss scaling, the guarded update, cleanup.
// AmpPipelineOptions is the one definition of the user-facing options of the
// spec's table; amp-opt, amp-run and the C/Python API all parse it, through
// the registered pipeline or parseAmpPipelineOptions.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_PIPELINES_AMPPIPELINE_H
#define AMP_PIPELINES_AMPPIPELINE_H

#include "amp/Transforms/InsertCasts.h"
#include "amp/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/Error.h"
#include <memory>

namespace mlir::amp {

struct AmpPipelineOptions : public PassPipelineOptions<AmpPipelineOptions> {
  /// The defaults live in Passes.td, with the passes' options.
  static AmpGuardUpdateOptions scalingDefaults() { return {}; }

  // Precision assignment and casts (amp-insert-casts).
  Option<std::string> dtype{
      *this, "dtype",
      llvm::cl::desc("Low-precision type: f16 or bf16 (default f16; "
                     "overrides a policy file's dtype)"),
      llvm::cl::init(AmpInsertCastsOptions().dtype)};
  Option<std::string> policy{
      *this, "policy",
      llvm::cl::desc("torch, tf, mindspore, tensor-cores-only, mindspore-o1, "
                     "mindspore-o2, mindspore-o3, or a JSON policy file"),
      llvm::cl::init(AmpInsertCastsOptions().policy)};
  Option<std::string> level{
      *this, "level",
      llvm::cl::desc("MindSpore's amp level, instead of 'policy': O0 (no "
                     "change), O1, O2, O3 (policy mindspore-o1/o2/o3; O3 "
                     "unscaled by default) or auto (policy mindspore)")};
  Option<std::string> unknownOps{
      *this, "unknown-ops",
      llvm::cl::desc("What an op in no list gets: deny, infer, allow or "
                     "error (default: the policy file's or preset's, else "
                     "deny)")};
  Option<bool> explain{
      *this, "explain",
      llvm::cl::desc("One remark per op with its precision and reason"),
      llvm::cl::init(AmpInsertCastsOptions().explain)};
  Option<std::string> report{
      *this, "report",
      llvm::cl::desc("Write JSON statistics of the casts to this path")};
  Option<std::string> dot{
      *this, "dot",
      llvm::cl::desc("Write a Graphviz picture of the step colored by "
                     "precision to this path")};

  // Loss scaling and the guarded update (amp-loss-scaling,
  // amp-guard-update); ranges are checked by ScalingConfig.
  Option<std::string> scaling{
      *this, "scaling",
      llvm::cl::desc("none, static or dynamic (default: dynamic for f16, "
                     "none for bf16)")};
  Option<double> initScale{
      *this, "init-scale",
      llvm::cl::desc("First scale (dynamic), fixed scale (static); > 0"),
      llvm::cl::init(scalingDefaults().initScale)};
  Option<double> growthFactor{
      *this, "growth-factor",
      llvm::cl::desc("Scale factor after growth-interval finite steps; > 1"),
      llvm::cl::init(scalingDefaults().growthFactor)};
  Option<double> backoffFactor{
      *this, "backoff-factor",
      llvm::cl::desc("Scale factor on overflow; in (0, 1)"),
      llvm::cl::init(scalingDefaults().backoffFactor)};
  Option<int64_t> growthInterval{
      *this, "growth-interval",
      llvm::cl::desc("Consecutive finite steps before growth; >= 1"),
      llvm::cl::init(scalingDefaults().growthInterval)};
  Option<double> minScale{
      *this, "min-scale",
      llvm::cl::desc("Floor of the scale; >= 0 (0: no floor)"),
      llvm::cl::init(scalingDefaults().minScale)};
  Option<double> maxScale{
      *this, "max-scale",
      llvm::cl::desc("Cap of the scale; > min-scale (inf: no cap)"),
      llvm::cl::init(scalingDefaults().maxScale)};
  Option<int64_t> hysteresis{
      *this, "hysteresis",
      llvm::cl::desc("Overflows before the scale backs off (DeepSpeed); "
                     ">= 1"),
      llvm::cl::init(scalingDefaults().hysteresis)};

  // Data parallelism (amp-data-parallel); checked by DataParallelConfig.
  Option<std::string> dataParallel{
      *this, "data-parallel",
      llvm::cl::desc("none, or mpi: sum the gradients over the ranks of "
                     "MPI_COMM_WORLD before the guard (docs/DataParallel.md)"),
      llvm::cl::init("none")};
  Option<std::string> gradCommDtype{
      *this, "grad-comm-dtype",
      llvm::cl::desc("The type gradients are summed in: f32, f16 or bf16 "
                     "(default: dtype; f32 at level=O0)")};
  Option<int64_t> bucketSize{
      *this, "bucket-size",
      llvm::cl::desc("Bytes of gradients per all-reduce; >= 1"),
      llvm::cl::init(AmpDataParallelOptions().bucketSize)};
};

/// Whether the step is trained data-parallel (`data-parallel=mpi`): its
/// runner initializes MPI and gives each rank its share of every batch.
bool isDataParallel(const AmpPipelineOptions &options);

/// Checks every option against its allowed range and that the policy loads;
/// the error names the option (or the policy file, JSON path and line).
llvm::Error verifyAmpPipelineOptions(const AmpPipelineOptions &options);

/// Parses options in the syntax of `--amp-pipeline="..."` (e.g.
/// "dtype=f16 scaling=dynamic") and verifies them.
llvm::Expected<std::unique_ptr<AmpPipelineOptions>>
parseAmpPipelineOptions(llvm::StringRef text);

/// Appends the pipeline to `pm` (on builtin.module): amp-insert-casts
/// (except at level=O0), then buildScalingPipeline. `options` must have
/// passed verifyAmpPipelineOptions, as those of parseAmpPipelineOptions and
/// of the registered pipeline have: an invalid `level` is taken as unset
/// here, and the passes report the other options.
void buildAmpPipeline(OpPassManager &pm, const AmpPipelineOptions &options);

/// The pipeline's first stage, as amp::runCastInsertion takes it: the
/// level's or the option's policy, an explicit dtype; none at level=O0,
/// which inserts no casts.
std::optional<CastInsertionOptions>
getCastInsertionOptions(const AmpPipelineOptions &options);

/// The stages after the casts: amp-loss-scaling, amp-data-parallel (with
/// `data-parallel=mpi`), amp-guard-update with the level's default scaling
/// and the policy file's dtype, canonicalize, cse.
void buildScalingPipeline(OpPassManager &pm, const AmpPipelineOptions &options);

/// Registers `amp-pipeline`, which verifies its options when it is parsed.
void registerAmpPipeline();

} // namespace mlir::amp

#endif // AMP_PIPELINES_AMPPIPELINE_H
