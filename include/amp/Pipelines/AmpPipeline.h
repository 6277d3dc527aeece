//===- AmpPipeline.h - The AMP pipeline and its options ---------*- C++ -*-===//
//
// `amp-pipeline`: cast insertion, loss scaling, the guarded update, cleanup.
// AmpPipelineOptions holds the user-facing options of the spec's table, as
// AmpPipeline.td defines them; amp-opt, amp-run and the C/Python API all
// parse it, through the registered pipeline or parseAmpPipelineOptions.
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

/// The options are declared from AmpPipeline.td: those of the pipeline's
/// passes under their names, and the pipeline's own.
struct AmpPipelineOptions : public PassPipelineOptions<AmpPipelineOptions> {
#define GEN_PASS_PIPELINE_OPTION_DECLS_AMPPIPELINE
#include "amp/Pipelines/AmpPipeline.h.inc"
};

#define GEN_PASS_PIPELINE_PASS_OPTIONS_AMPPIPELINE
#include "amp/Pipelines/AmpPipeline.h.inc"

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
