//===- TransformsEnums.td - Modes of the AMP passes --------*- tablegen -*-===//
//
// The modes that the `scaling` and `data-parallel` options select.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TRANSFORMS_TRANSFORMSENUMS_TD
#define AMP_TRANSFORMS_TRANSFORMSENUMS_TD

include "mlir/IR/EnumAttr.td"

// How the loss is scaled (`scaling`, docs/Scaling.md).
def Amp_ScalingMode : I32EnumAttr<"ScalingMode", "the loss scaling mode", [
      // The seed is ones; nothing is checked.
      I32EnumAttrCase<"None", 0, "none">,
      // A fixed scale; overflowing steps are skipped.
      I32EnumAttrCase<"Static", 1, "static">,
      // PyTorch GradScaler's scale, carried from step to step.
      I32EnumAttrCase<"Dynamic", 2, "dynamic">
    ]> {
  let cppNamespace = "::mlir::amp";
  let genSpecializedAttr = 0;
}

// How the ranks of a job share the gradients (`data-parallel`,
// docs/DataParallel.md).
def Amp_DataParallelMode : I32EnumAttr<"DataParallelMode",
    "how a step is trained over several processes", [
      // One process.
      I32EnumAttrCase<"None", 0, "none">,
      // Gradients summed over the ranks of MPI_COMM_WORLD.
      I32EnumAttrCase<"Mpi", 1, "mpi">
    ]> {
  let cppNamespace = "::mlir::amp";
  let genSpecializedAttr = 0;
}

#endif // AMP_TRANSFORMS_TRANSFORMSENUMS_TD
