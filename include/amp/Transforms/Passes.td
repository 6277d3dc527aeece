//===- Passes.td - AMP transformation passes ---------------*- tablegen -*-===//
//
// The passes of the AMP pipeline, in pipeline order. Option names are the
// ones of the pipeline's option table (docs/TrainingStepIR.md).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TRANSFORMS_PASSES_TD
#define AMP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AmpImportStep : Pass<"amp-import-step", "ModuleOp"> {
  let summary = "Form a training step from an imported functional step";
  let description = [{
    Turns a functional training step that an importer produced (torch-mlir's
    output through `amp_mlir.torch`) into the contract's form
    (docs/TrainingStepIR.md). The importer tells what each argument and
    result is with `amp.import_role`:
    arguments `parameter`, `buffer`, `optimizer_state`, `hyperparameter`,
    `data`, `seed`; results `loss`, `gradient` (one per parameter, in
    parameter order), and the new `parameter`, `optimizer_state` and
    `buffer` values, each named (`amp.name`) like its argument. Then:

    - the `seed` argument (what the backward starts from) becomes
      `amp.seed` of the loss, right after the loss is computed, and leaves
      the signature;
    - the optimizer, the ops the new parameters and optimizer state are
      computed from, back to the gradients, the state arguments and the
      hyperparameters, moves into one `amp.update` with the gradients as
      `grads`, the parameters and optimizer state as `state` and the
      hyperparameters it reads as `inputs`; what the rest of the step
      still uses is copied, not moved;
    - the gradient results leave the signature, the new state results are
      the update's results, buffers stay as they are;
    - `amp.import_role` is removed; `amp.name`, `amp.init` and `amp.value`
      stay.

    Functions without `amp.import_role` are left alone. A step whose
    structure is not found is a located error: no seed or loss, a state
    argument without its result, gradients that do not match the
    parameters, a backward that reads the seed before the loss, or an
    optimizer that reads anything but gradients, state and
    hyperparameters (the error names that value and where it comes from).
  }];
  let dependentDialects = ["AmpDialect"];
}

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
    Option<"dtype", "dtype", "std::string", /*default=*/"\"\"",
           "Low-precision type: f16 or bf16 (default: the policy file's, "
           "else f16)">,
    Option<"policy", "policy", "std::string", /*default=*/"\"torch\"",
           "torch, tf, mindspore, tensor-cores-only, mindspore-o1, "
           "mindspore-o2, mindspore-o3, or a JSON policy file">,
    Option<"unknownOps", "unknown-ops", "std::string", /*default=*/"\"\"",
           "What an op in no list gets: deny, infer, allow or error "
           "(default: the policy file's or preset's, else deny)">,
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

// The loss scaler's options, shared by amp-loss-scaling and amp-guard-update:
// give both passes the same values (amp-pipeline does).
defvar AmpScalingOptions = [
  Option<"dtype", "dtype", "std::string", /*default=*/"\"f16\"",
         "Low-precision type, f16 or bf16; selects the default scaling mode">,
  Option<"scaling", "scaling", "std::string", /*default=*/"\"\"",
         "none, static or dynamic (default: dynamic for f16, none for bf16)">,
  Option<"initScale", "init-scale", "double", /*default=*/"65536.0",
         "The first scale of dynamic scaling, the scale of static scaling; "
         "> 0">,
  Option<"growthFactor", "growth-factor", "double", /*default=*/"2.0",
         "Factor of the scale after growth-interval finite steps; > 1">,
  Option<"backoffFactor", "backoff-factor", "double", /*default=*/"0.5",
         "Factor of the scale on overflow; in (0, 1)">,
  Option<"growthInterval", "growth-interval", "int64_t", /*default=*/"2000",
         "Consecutive finite steps before the scale grows; >= 1">,
  Option<"minScale", "min-scale", "double", /*default=*/"0.0",
         "Floor of the scale on backoff; >= 0 (0: no floor)">,
  Option<"maxScale", "max-scale", "double",
         /*default=*/"std::numeric_limits<double>::infinity()",
         "Cap of the scale on growth; > min-scale (inf: no cap)">,
  Option<"hysteresis", "hysteresis", "int64_t", /*default=*/"1",
         "Overflows before the scale backs off (DeepSpeed); >= 1">,
];

def AmpLossScaling : Pass<"amp-loss-scaling", "ModuleOp"> {
  let summary = "Start the backward pass from the loss scale S";
  let description = [{
    Rewrites the `amp.seed` of every training step into the loss scale S
    broadcast to the loss type, so that the backward computes the gradients
    of S * loss; the loss itself stays unscaled.

    - `scaling=dynamic`: S is a new function argument `scale: tensor<f32>`,
      followed by `growth_tracker: tensor<i32>` and, when `hysteresis > 1`,
      `hysteresis: tensor<i32>`, each with its `amp.state` attribute. A
      runner feeds them the values the step returned the step before.
    - `scaling=static`: S is the constant `init-scale`.
    - `scaling=none`: the seed becomes ones.

    A step with an `amp.update` needs an `amp.seed` unless `scaling=none`. A
    gradient that does not depend on the seed gets a warning: it is not a
    gradient of the loss, yet it will be unscaled as one.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect"];
  let options = AmpScalingOptions;
}

def AmpDataParallel : Pass<"amp-data-parallel", "ModuleOp"> {
  let summary = "Sum the gradients of every rank over MPI before the guard";
  let description = [{
    Data-parallel training: every rank (MPI process) runs the same step on
    its own share of the batch, and this pass makes the gradients the
    updates consume the sum over all ranks of `MPI_COMM_WORLD`. It runs
    after `amp-loss-scaling` and before `amp-guard-update`, so the guard
    checks the summed (still scaled) gradients for inf/NaN and every rank
    reaches the same skip decision without a second collective;
    `amp-guard-update` then divides by the world size (folded into the
    unscale factor 1/(S * world size) with loss scaling).

    - The gradients of all `amp.update`s of a step, in order (a value used
      twice is reduced once), are flattened, converted to
      `grad-comm-dtype` and packed into buckets of at most `bucket-size`
      bytes (a gradient larger than that alone); each bucket is one
      `mpi.allreduce` with `MPI_SUM`, from a read-only `bufferization.to_buffer`
      of the packed tensor into a `memref.alloc` that
      `bufferization.to_tensor restrict writable` turns back into a tensor.
      The parts of the reduced buckets, converted back to each gradient's
      type, become the updates' gradients.
    - Every `amp.update` gets `amp.data_parallel = "mpi"`: its gradients are
      sums over the world, to be divided by its size.
    - The updates move right before the last one (after the collectives);
      the new state of an update may only be used after the last update.
    - The module gets the DLTI entry `"MPI:Implementation" = "MPICH"`, the
      ABI the runners' MPI runtime is built for; a module that names
      another implementation is an error.

    Gradients must be float tensors of static shape. Buffers (values the
    forward updates, BatchNorm's statistics) are not reduced: they stay per
    rank, as in PyTorch DDP without SyncBatchNorm.
  }];
  let dependentDialects = ["bufferization::BufferizationDialect",
                           "DLTIDialect", "linalg::LinalgDialect",
                           "memref::MemRefDialect", "mpi::MPIDialect",
                           "tensor::TensorDialect"];
  let options = [
    Option<"gradCommDtype", "grad-comm-dtype", "std::string",
           /*default=*/"\"f32\"",
           "The type gradients are summed in: f32, f16 or bf16">,
    Option<"bucketSize", "bucket-size", "int64_t",
           /*default=*/"25 * 1024 * 1024",
           "Bytes of gradients (in grad-comm-dtype) per all-reduce, as "
           "PyTorch DDP's bucket_cap_mb; >= 1">,
  ];
}

def AmpGuardUpdate : Pass<"amp-guard-update", "ModuleOp"> {
  let summary = "Unscale and check the gradients, skip the update on "
                "overflow, and update the scaler";
  let description = [{
    Runs after `amp-loss-scaling`, with the same options, and removes every
    `amp.update`:

    1. One `linalg.generic` per gradient reads it once to produce both the
       unscaled gradient g * (1/S) (1/S computed once, in f32) and the "some
       element is inf or NaN" flag, or'ed into the flag of the gradients
       before: one decision for all updates of the step.
    2. The update regions are inlined on the unscaled gradients, and each new
       state value is selected elementwise against its old value by that
       flag (a `linalg.generic` with `arith.select`): a skipped step returns
       its state bit for bit, and the decision never leaves the device.
    3. With dynamic scaling, one 0-d `linalg.generic` updates the scaler by
       PyTorch GradScaler's rule (backoff and tracker reset on overflow,
       growth after `growth-interval` finite steps if the grown scale is
       finite), clamped to [`min-scale`, `max-scale`], with DeepSpeed's
       hysteresis when `hysteresis > 1`.

    The step returns the new scaler state (dynamic mode) and then
    `found_inf: tensor<i1>` (dynamic and static), with `amp.state`
    attributes. With `scaling=none` the regions are inlined on the gradients
    as they are and nothing is checked.

    Updates marked `amp.data_parallel = "mpi"` by `amp-data-parallel` (all
    of a step's or none) consume sums over the ranks: the unscale factor
    becomes 1/(S * N), N the size of MPI_COMM_WORLD (`mpi.comm_size`), and
    with `scaling=none` each gradient is multiplied by 1/N.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "math::MathDialect", "mpi::MPIDialect",
                           "tensor::TensorDialect"];
  let options = AmpScalingOptions;
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
