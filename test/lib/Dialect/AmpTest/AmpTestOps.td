//===- AmpTestOps.td - A dialect to test amp's interfaces --*- tablegen -*-===//
//
// Three ops on tensors that give their precision category through
// PrecisionOpInterface, implemented in C++ (AmpTestDialect.cpp), as an
// out-of-tree dialect would: one allow, one deny, one infer.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TEST_AMPTESTOPS_TD
#define AMP_TEST_AMPTESTOPS_TD

include "amp/Interfaces/PrecisionOpInterface.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def AmpTest_Dialect : Dialect {
  let name = "amp_test";
  let summary = "Ops that test amp's PrecisionOpInterface";
  let cppNamespace = "::mlir::amp::test";
}

class AmpTest_Op<string mnemonic, list<Trait> traits = []>
    : Op<AmpTest_Dialect, mnemonic, traits>;

def AmpTest_ContractOp : AmpTest_Op<"contract", [Pure,
    DeclareOpInterfaceMethods<PrecisionOpInterface,
                              ["getPrecisionDefault", "isAccumulator"]>]> {
  let summary = "A contraction into an accumulator: allow";
  let description = [{
    `acc + lhs * rhs` contracted like a matmul. Allow by default, with `acc`
    its accumulator: low inputs, an f32 accumulator and result.
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
                       AnyRankedTensor:$acc);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc attr-dict `:` type($lhs) `,` type($rhs) `,`
    type($acc) `->` type($result)
  }];
}

def AmpTest_LogSumExpOp : AmpTest_Op<"logsumexp", [Pure,
    DeclareOpInterfaceMethods<PrecisionOpInterface, ["getPrecisionDefault"]>]> {
  let summary = "A log-sum-exp: deny";
  let description = [{
    `log(sum(exp(x)))` along its last dimension, whose exponentials overflow
    the low types: deny by default.
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def AmpTest_ScaleOp : AmpTest_Op<"scale", [Pure,
    DeclareOpInterfaceMethods<PrecisionOpInterface, ["getPrecisionDefault"]>]> {
  let summary = "An elementwise product: infer";
  let description = [{
    `input * factor` elementwise, in the type of its inputs: infer by
    default.
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$factor);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `,` $factor attr-dict `:` type($input) `,` type($factor) `->`
    type($result)
  }];
}

#endif // AMP_TEST_AMPTESTOPS_TD
