//===- PrecisionEnums.td - Precision categories of ops -----*- tablegen -*-===//
//
// The four categories of TensorFlow grappler's auto_mixed_precision pass,
// which PrecisionOpInterface gives ops and policies override.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INTERFACES_PRECISIONENUMS_TD
#define AMP_INTERFACES_PRECISIONENUMS_TD

include "mlir/IR/EnumAttr.td"

def Amp_OpCategory : I32EnumAttr<"OpCategory",
    "how an op takes part in mixed precision", [
      // Always runs in the low type, accumulating in f32.
      I32EnumAttrCase<"Allow", 0, "allow">,
      // Always runs in f32; its f32-ness flows downstream through infer ops.
      I32EnumAttrCase<"Deny", 1, "deny">,
      // Follows its inputs.
      I32EnumAttrCase<"Infer", 2, "infer">,
      // Moves data with no numeric effect.
      I32EnumAttrCase<"Clear", 3, "clear">
    ]> {
  let cppNamespace = "::mlir::amp";
  let genSpecializedAttr = 0;
}

#endif // AMP_INTERFACES_PRECISIONENUMS_TD
