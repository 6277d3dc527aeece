//===- PolicyEnums.td - Options of precision policies ------*- tablegen -*-===//

#ifndef AMP_ANALYSIS_POLICYENUMS_TD
#define AMP_ANALYSIS_POLICYENUMS_TD

include "mlir/IR/EnumAttr.td"

// What an op gets that neither the policy nor its precision interface gives
// a category (the `unknown-ops` option). The first three are named after the
// category they give; `allow` serves MindSpore's O2 and O3, which convert
// every op outside their lists.
def Amp_UnknownOpMode : I32EnumAttr<"UnknownOpMode",
    "what an op with no category gets", [
      I32EnumAttrCase<"Deny", 0, "deny">,
      I32EnumAttrCase<"Infer", 1, "infer">,
      I32EnumAttrCase<"Allow", 2, "allow">,
      // An error at the op.
      I32EnumAttrCase<"Error", 3, "error">
    ]> {
  let cppNamespace = "::mlir::amp";
  let genSpecializedAttr = 0;
}

#endif // AMP_ANALYSIS_POLICYENUMS_TD
