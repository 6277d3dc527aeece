//===- Passes.td - AMP transformation passes ---------------*- tablegen -*-===//
//
// The passes of the AMP pipeline, in pipeline order. Option names are the
// ones of the pipeline's option table (docs/TrainingStepIR.md).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TRANSFORMS_PASSES_TD
#define AMP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AmpInsertCasts : Pass<"amp-insert-casts", "ModuleOp"> {
  let summary = "Assign a precision to every op by policy and insert casts";
  let description = [{
    Decides for every op outside `amp.update` regions whether it computes in
    the low type (`dtype`) or in f32, from the policy's allow / deny / infer /
    clear lists and grappler-style graph propagation over SSA use-def chains,
    then inserts `arith.truncf` / `arith.extf` on tensors at the boundaries
    between low and f32 regions: at most one cast per (value, type), shared
    by all users. Low-precision contractions keep f32 accumulators and
    reductions accumulate in f32. Function signatures, f64/integer values and
    update regions never change.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect"];
  let options = [
    Option<"dtype", "dtype", "std::string", /*default=*/"\"f16\"",
           "Low-precision type: f16 or bf16 (overrides a policy file's dtype)">,
    Option<"policy", "policy", "std::string", /*default=*/"\"torch\"",
           "torch, tf, mindspore, tensor-cores-only, or a JSON policy file">,
    Option<"unknownOps", "unknown-ops", "std::string", /*default=*/"\"\"",
           "What an op in no list gets: deny, infer or error (default: the "
           "policy file's, else deny)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit one remark per op with its precision and the reason">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Write JSON statistics (ops per category and precision, casts, "
           "bytes converted) to this path">,
    Option<"dot", "dot", "std::string", /*default=*/"\"\"",
           "Write a Graphviz picture of the step colored by precision to "
           "this path">,
  ];
}

def AmpStripMarkers : Pass<"amp-strip-markers", "ModuleOp"> {
  let summary = "Run a training step in fp32 as written: drop the amp markers";
  let description = [{
    The fp32 reference of a step, without mixed precision or loss scaling:
    `amp.seed` becomes a constant of ones (the gradient of the unscaled loss)
    and every `amp.update` region is inlined in place of the op, its block
    arguments replaced by the grads and state operands. The result is plain
    upstream IR that `amp-lower-to-llvm` can lower; `amp-run` applies it when
    it is given no AMP options.
  }];
  let dependentDialects = ["arith::ArithDialect"];
}

#endif // AMP_TRANSFORMS_PASSES_TD
