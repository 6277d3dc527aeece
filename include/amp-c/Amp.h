/*===- amp-c/Amp.h - C API of the AMP compiler --------------------*- C -*-===*\
|*                                                                            *|
|* Functions over MLIR's C API types (MlirContext, MlirModule,                *|
|* MlirOpPassManager) so that other languages can embed the compiler. Every  *|
|* function that can fail returns an MlirLogicalResult and reports the       *|
|* reason through `onError`, never by aborting. Options are the string of    *|
|* `amp-opt --amp-pipeline="..."` (docs/Embedding.md).                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef AMP_C_AMP_H
#define AMP_C_AMP_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The `amp` dialect: mlirGetDialectHandle__amp__().
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Amp, amp);

/// Inserts every dialect a training step and its lowering use (all upstream
/// dialects and their extensions, plus `amp`) into `registry`: what amp-opt
/// loads.
MLIR_CAPI_EXPORTED void
mlirAmpRegisterAllDialects(MlirDialectRegistry registry);

/// Registers the amp passes and pipelines, and the upstream passes they are
/// built from, with the global pass registry (for mlirParsePassPipeline).
/// Idempotent.
MLIR_CAPI_EXPORTED void mlirAmpRegisterPasses(void);

/// Checks an option string (e.g. "dtype=f16 scaling=dynamic"; empty for the
/// defaults): every name known, every value in its range, the policy
/// loadable. The error names the option.
MLIR_CAPI_EXPORTED MlirLogicalResult mlirAmpValidateOptions(
    MlirStringRef options, MlirStringCallback onError, void *userData);

/// Appends the AMP pipeline configured by `options` to `passManager`, which
/// must run on `builtin.module` (or be op-agnostic). Fails, adding nothing,
/// on invalid options or another anchor.
MLIR_CAPI_EXPORTED MlirLogicalResult mlirAmpPassManagerAddPipeline(
    MlirOpPassManager passManager, MlirStringRef options,
    MlirStringCallback onError, void *userData);

/// Checks that `presetOrPath` names a preset or a valid JSON policy file; an
/// invalid file's error names the file, the JSON path and the line.
MLIR_CAPI_EXPORTED MlirLogicalResult mlirAmpValidatePolicy(
    MlirStringRef presetOrPath, MlirStringCallback onError, void *userData);

/// Receives one explanation: the op's name (empty when several ops share
/// its location), its location ("file:line:col") and why it has its
/// precision ("f16 allow: preset torch: ...").
typedef void (*MlirAmpExplanationCallback)(MlirStringRef opName,
                                           MlirStringRef location,
                                           MlirStringRef message,
                                           void *userData);

/// Applies the AMP pipeline configured by `options` to `module` in place and
/// hands back what amp-opt writes to files or prints as remarks: the JSON
/// report once through `onReport` (not called at level=O0, where no casts
/// are inserted) and one explanation per op through `onExplanation`. Any
/// callback may be null. Errors, including the located diagnostics of the
/// passes ("loc: error: message", one per line), go to `onError` and not to
/// the context's diagnostic handlers.
MLIR_CAPI_EXPORTED MlirLogicalResult mlirAmpTransformModule(
    MlirModule module, MlirStringRef options, MlirStringCallback onReport,
    MlirAmpExplanationCallback onExplanation, MlirStringCallback onError,
    void *userData);

#ifdef __cplusplus
}
#endif

#endif /* AMP_C_AMP_H */
