//===- AmpDialect.td - The amp dialect ---------------------*- tablegen -*-===//
//
// The two markers a training step needs so that the AMP pipeline can find the
// loss and the optimizer update (see docs/TrainingStepIR.md).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPDIALECT_TD
#define AMP_DIALECT_AMP_IR_AMPDIALECT_TD

include "mlir/IR/OpBase.td"

def Amp_Dialect : Dialect {
  let name = "amp";
  let summary = "Markers for automatic mixed-precision training steps";
  let description = [{
    A training step is one `func.func` on tensors computing forward, loss,
    explicit backward and optimizer update in fp32. Two ops mark its structure:
    `amp.seed` starts the backward pass from the loss, and `amp.update`
    encloses the optimizer update, which consumes gradients and replaces
    state. The AMP pipeline rewrites both away; only `amp.*` attributes
    remain afterwards.

    Discardable attributes of the dialect:
    - `amp.precision = "f32" | "f16" | "bf16"` on any op pins its compute
      precision. A low-precision pin inside an `amp.update` region, or on an
      op with f64 or integer values, is an error.
    - `amp.init = "zeros" | "ones" | "glorot" | "normal:<std>"` on a function
      argument tells a runner how to initialize carried state.
    - `amp.state = "<name>"` on an argument or result that the pipeline adds
      names a piece of scaler state (`scale`, `growth_tracker`,
      `hysteresis`, `found_inf`).
    - `amp.name = "<name>"` on a function argument or result names it for
      runners, state dicts, saved files, reports and diagnostics (e.g.
      `"fc1.weight"`): letters, digits and `_ . - : [ ]`, not starting with a
      dot. A result named like an argument is that argument's next value;
      when it is computed outside every `amp.update`, the argument is a
      buffer that the forward updates (BatchNorm's running statistics).
    - `amp.value = <number>` on a hyperparameter argument (an input of
      `amp.update`) is the value a runner starts it at.
    - `amp.import_role = "<role>"` on the arguments and results of a step an
      importer produced (torch-mlir's, through `amp_mlir.torch`) tells
      `amp-import-step` what each one is, so that it can form the step.
    - `amp.data_parallel = "mpi"` on an `amp.update` (set by
      `amp-data-parallel`) says that its gradients are sums over the ranks
      of MPI_COMM_WORLD, which `amp-guard-update` divides by the world size.
  }];
  let cppNamespace = "::mlir::amp";
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    static constexpr llvm::StringLiteral kPrecisionAttrName = "amp.precision";
    static constexpr llvm::StringLiteral kInitAttrName = "amp.init";
    static constexpr llvm::StringLiteral kStateAttrName = "amp.state";
    static constexpr llvm::StringLiteral kNameAttrName = "amp.name";
    static constexpr llvm::StringLiteral kValueAttrName = "amp.value";
    static constexpr llvm::StringLiteral kImportRoleAttrName =
        "amp.import_role";
    static constexpr llvm::StringLiteral kDataParallelAttrName =
        "amp.data_parallel";
  }];
}

class Amp_Op<string mnemonic, list<Trait> traits = []>
    : Op<Amp_Dialect, mnemonic, traits>;

#endif // AMP_DIALECT_AMP_IR_AMPDIALECT_TD
