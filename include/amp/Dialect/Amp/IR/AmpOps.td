//===- AmpOps.td - amp dialect operations ------------------*- tablegen -*-===//

#ifndef AMP_DIALECT_AMP_IR_AMPOPS_TD
#define AMP_DIALECT_AMP_IR_AMPOPS_TD

include "amp/Dialect/Amp/IR/AmpDialect.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/OpBase.td"

def Amp_SeedOp : Amp_Op<"seed", [Pure, SameOperandsAndResultType]> {
  let summary = "The start of the backward pass: d(loss)/d(loss)";
  let description = [{
    Takes the loss and yields a tensor of the same type filled with ones,
    the gradient of the loss with respect to itself. Every backward
    computation starts from this value. Loss scaling rewrites it into the
    loss scale S, so the backward computes the gradients of S * loss; without
    scaling it becomes a constant of ones. At most one per function.

    ```mlir
    %seed = amp.seed %loss : tensor<f32>
    ```
  }];
  let arguments = (ins AnyType:$loss);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$loss attr-dict `:` type($loss)";
  let hasVerifier = 1;
}

def Amp_UpdateOp : Amp_Op<"update", [
    AttrSizedOperandSegments, IsolatedFromAbove, RecursiveMemoryEffects,
    SingleBlock]> {
  let summary = "The optimizer update: gradients in, new state out";
  let description = [{
    Encloses the optimizer update of a training step. `grads` are the
    gradients it consumes, `state` everything it replaces (parameters,
    momentum, Adam moments, step counters), `inputs` values it only reads
    (hyperparameters a scheduler changes between steps, such as learning
    rates). The region's block takes the grads, then the state, then the
    inputs, and yields the new state; the op returns it. The region is
    isolated from above.

    The AMP pipeline never casts inside the region (master weights and
    optimizer state stay fp32). All updates of a function share one overflow
    decision: when any gradient is inf or NaN, every result is its state
    operand and the step is skipped.

    ```mlir
    %w1 = amp.update grads(%gw : tensor<4x4xf32>) state(%w : tensor<4x4xf32>)
                     inputs(%lr : tensor<f32>) {
    ^bb0(%g: tensor<4x4xf32>, %w0: tensor<4x4xf32>, %rate: tensor<f32>):
      ...
      amp.yield %n : tensor<4x4xf32>
    } : tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$grads, Variadic<AnyType>:$state,
                       Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`grads` `(` $grads^ `:` type($grads) `)`)?
    `state` `(` $state `:` type($state) `)`
    (`inputs` `(` $inputs^ `:` type($inputs) `)`)? $body attr-dict
    `:` type($results)
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The block arguments that stand for the gradients and the state.
    mlir::Block::BlockArgListType getGradArguments() {
      return getBody().getArguments().take_front(getGrads().size());
    }
    mlir::Block::BlockArgListType getStateArguments() {
      return getBody().getArguments().slice(getGrads().size(),
                                            getState().size());
    }
    mlir::Block::BlockArgListType getInputArguments() {
      return getBody().getArguments().take_back(getInputs().size());
    }
    /// Whether `operand` is one of the state operands, which the update
    /// replaces rather than reads.
    bool isStateOperand(mlir::OpOperand &operand) {
      unsigned number = operand.getOperandNumber();
      return number >= getGrads().size() &&
             number < getGrads().size() + getState().size();
    }
    YieldOp getYield();
  }];
}

def Amp_YieldOp : Amp_Op<"yield", [
    Pure, HasParent<"UpdateOp">, ReturnLike, Terminator]> {
  let summary = "Yields the new state from an `amp.update` region";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, mlir::ValueRange()); }]>];
}

#endif // AMP_DIALECT_AMP_IR_AMPOPS_TD
