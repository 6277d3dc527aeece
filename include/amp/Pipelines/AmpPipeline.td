//===- AmpPipeline.td - The options of amp-pipeline --------*- tablegen -*-===//
//
// The one definition of the user-facing options of docs/TrainingStepIR.md:
// the options of amp-pipeline's passes (Transforms/Passes.td) and the ones
// of the pipeline alone. amp-opt, amp-run, amp-compile, the C API and Python
// all parse these, through AmpPipelineOptions.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_PIPELINES_AMPPIPELINE_TD
#define AMP_PIPELINES_AMPPIPELINE_TD

include "amp/Pipelines/PassPipeline.td"
include "amp/Transforms/Passes.td"

// The modes (dtype, scaling, data-parallel, ...) are strings checked against
// their ODS enums, not enum options with cl::values: cl's parser prints its
// error to stderr, where the C API and Python lose it, and `scaling` and
// `unknown-ops` need an empty value for "the dtype's / the policy's".
def AmpPipeline : PassPipeline<"amp-pipeline"> {
  let options = [
    Option<"level", "level", "std::string", /*default=*/"",
           "MindSpore's amp level, instead of 'policy': O0 (no change), O1, "
           "O2, O3 (policy mindspore-o1/o2/o3; O3 unscaled by default) or "
           "auto (policy mindspore)">,
    Option<"dataParallel", "data-parallel", "std::string",
           /*default=*/"\"none\"",
           "none, or mpi: sum the gradients over the ranks of "
           "MPI_COMM_WORLD before the guard (docs/DataParallel.md)">,
    // amp-data-parallel sums in f32 unless told; the pipeline knows the
    // step's low type and sums in it.
    Option<"gradCommDtype", "grad-comm-dtype", "std::string", /*default=*/"",
           "The type gradients are summed in: f32, f16 or bf16 (default: "
           "dtype; f32 at level=O0)">,
  ];
  // amp-loss-scaling and amp-guard-update take the same scaling options.
  let passes = [AmpInsertCasts, AmpLossScaling, AmpDataParallel,
                AmpGuardUpdate];
}

#endif // AMP_PIPELINES_AMPPIPELINE_TD
