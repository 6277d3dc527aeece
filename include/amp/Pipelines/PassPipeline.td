//===- PassPipeline.td - Pass pipelines with options -------*- tablegen -*-===//
//
// A pass pipeline whose options are those of its passes: amp-tblgen
// -gen-pass-pipeline-options declares its PassPipelineOptions struct from
// the Option records, so that an option is written once for the passes and
// the pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_PIPELINES_PASSPIPELINE_TD
#define AMP_PIPELINES_PASSPIPELINE_TD

include "mlir/Pass/PassBase.td"

// The options struct is `<record name>Options`. Its options are `options`,
// then every option of `passes` whose argument is not taken yet, under the
// pass's name and C++ name; an option of the pipeline with a pass option's
// argument replaces that one in the pipeline (it must have its type). For
// each pass P, `POptions getPOptions(const <record name>Options &)` gives P
// the pipeline's values of its options.
class PassPipeline<string arg> {
  string argument = arg;
  list<Option> options = [];
  list<Pass> passes = [];
}

#endif // AMP_PIPELINES_PASSPIPELINE_TD
