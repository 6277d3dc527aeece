//===- PrecisionOpInterface.td - An op's part in AMP -------*- tablegen -*-===//
//
// What an op says about itself to amp-insert-casts: the precision category it
// has when no policy names it, which operands accumulate in f32, and which
// accumulated results are stored in the low type.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INTERFACES_PRECISIONOPINTERFACE_TD
#define AMP_INTERFACES_PRECISIONOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def PrecisionOpInterface : OpInterface<"PrecisionOpInterface"> {
  let description = [{
    How an op takes part in automatic mixed precision (docs/Precision.md).
    Its default category is one of grappler's four: allow (computes in the
    low type), deny (in f32), infer (follows its inputs) or clear (moves data
    with no numeric effect). An op's category is, in this order: its
    `amp.precision` pin; the policy's entry for its name (a preset or a JSON
    policy file); its default here, if the policy takes defaults of that
    category; else the `unknown-ops` mode.

    A dialect implements the interface for its own ops, in ODS or C++; amp
    attaches it to the upstream arith, math, tensor and linalg ops as
    external models (`registerAmpPrecisionInterfaceExternalModels`, which
    `registerAllAmpDialects` calls).
  }];
  let cppNamespace = "::mlir::amp";
  let methods = [
    InterfaceMethod<
      /*desc=*/[{
        The category the op has when no policy names it, and why, in a few
        words that follow "default of <op>: " in explanations ("a linalg
        contraction"). std::nullopt when the op's category is that of the
        ops in `getPrecisionBody`, or, for an op without a body, when it
        has no default (it gets the `unknown-ops` mode).
      }],
      /*retType=*/"std::optional<::mlir::amp::PrecisionDefault>",
      /*methodName=*/"getPrecisionDefault"
    >,
    InterfaceMethod<
      /*desc=*/[{
        For an op without a default of its own: the block whose ops decide
        its category, the strictest of theirs (deny, then infer, allow,
        clear). Ops that compute no floats (index math, constants,
        conversions) are skipped; a block without others is clear.
      }],
      /*retType=*/"::mlir::Block *",
      /*methodName=*/"getPrecisionBody",
      /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return nullptr;"
    >,
    InterfaceMethod<
      /*desc=*/[{
        Whether `operand` is an accumulator: an init that the op reads and
        updates in f32 whatever its precision (the init of a contraction or
        a reduction). An op with an accumulator reads its other operands in
        the low type when it is low, and its results stay f32.
      }],
      /*retType=*/"bool",
      /*methodName=*/"isAccumulator",
      /*args=*/(ins "::mlir::OpOperand &":$operand),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return false;"
    >,
    InterfaceMethod<
      /*desc=*/[{
        Whether `result`, accumulated in f32 when the op is low, is stored
        rounded to the low type: an activation or input gradient that the
        next ops and the backward read (a convolution's output image), as
        autocast and grappler store it. Its readers in f32 read it rounded
        and extended. Other accumulated results (a filter gradient, a sum)
        stay f32.
      }],
      /*retType=*/"bool",
      /*methodName=*/"storesLowResult",
      /*args=*/(ins "::mlir::OpResult":$result),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return false;"
    >
  ];
}

#endif // AMP_INTERFACES_PRECISIONOPINTERFACE_TD
