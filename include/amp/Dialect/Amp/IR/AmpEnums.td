//===- AmpEnums.td - Enums of the amp.* attributes ---------*- tablegen -*-===//
//
// The values `amp.precision` and the `dtype` options take, spelled once here;
// `mlir-tblgen -gen-enum-decls/-gen-enum-defs` generates the C++ enum and its
// symbolize/stringify pair.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPENUMS_TD
#define AMP_DIALECT_AMP_IR_AMPENUMS_TD

include "mlir/IR/EnumAttr.td"

def Amp_Precision : I32EnumAttr<"Precision",
    "a compute precision: the f32 reference or one of the low types", [
      I32EnumAttrCase<"F32", 0, "f32">,
      I32EnumAttrCase<"F16", 1, "f16">,
      I32EnumAttrCase<"BF16", 2, "bf16">
    ]> {
  let cppNamespace = "::mlir::amp";
  // Plain C++ enums: the attributes that hold them are strings.
  let genSpecializedAttr = 0;
}

#endif // AMP_DIALECT_AMP_IR_AMPENUMS_TD
