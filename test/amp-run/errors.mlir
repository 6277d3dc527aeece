// Bad inputs get an error that names what is wrong, and no crash.

// RUN: rm -rf %t && %python %S/Inputs/make_linear_data.py %t
// RUN: echo "func.func @f(" > %t/unparsable.mlir

// RUN: not amp-run %t/missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING-FILE
// MISSING-FILE: amp-run: error: cannot read {{.*}}missing.mlir: No such file or directory

// RUN: not amp-run %t/unparsable.mlir 2>&1 | FileCheck %s --check-prefix=UNPARSABLE
// UNPARSABLE: unparsable.mlir:1:14: error: expected non-function type
// UNPARSABLE: amp-run: error: cannot parse {{.*}}unparsable.mlir

// RUN: not amp-run %S/Inputs/bad-steps.mlir 2>&1 | FileCheck %s --check-prefix=SEVERAL
// SEVERAL: error: several functions contain an 'amp.update'; name the step function

// RUN: not amp-run %S/Inputs/bad-steps.mlir --func nothing 2>&1 | FileCheck %s --check-prefix=NO-FUNC
// NO-FUNC: error: no function @nothing with a body

// RUN: not amp-run %S/Inputs/bad-steps.mlir --func no_seed 2>&1 | FileCheck %s --check-prefix=NO-SEED
// NO-SEED: bad-steps.mlir:3:1: error: has no 'amp.seed': a runner reads the loss from its operand

// RUN: not amp-run %S/Inputs/bad-steps.mlir --func loss_not_returned 2>&1 | FileCheck %s --check-prefix=LOSS
// LOSS: bad-steps.mlir:12:8: error: takes a loss that the function does not return

// RUN: not amp-run %S/Inputs/bad-steps.mlir --func dynamic_batch --data %t/x.npy 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// DYNAMIC: amp-run: error: the step's batch dimension is dynamic; give a batch size

// RUN: not amp-run %S/Inputs/linear.mlir --data %t/x.npy 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: amp-run: error: the step has 2 data argument(s) (arguments that are not carried state); give as many .npy files with --data, got 1

// RUN: not amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/nothing.npy 2>&1 | FileCheck %s --check-prefix=NO-NPY
// NO-NPY: amp-run: error: {{.*}}nothing.npy: cannot read: No such file or directory

// RUN: not amp-run %S/Inputs/linear.mlir --data %t/x_f64.npy,%t/y.npy 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: amp-run: error: {{.*}}x_f64.npy: holds f64[8x3]; data argument 'arg4' (#4) is f32[4x3] (one batch), so the file needs f32[Nx3]

// RUN: not amp-run %S/Inputs/linear.mlir --data %t/x_wide.npy,%t/y.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: amp-run: error: {{.*}}x_wide.npy: holds f32[8x4]; data argument 'arg4' (#4) is f32[4x3] (one batch), so the file needs f32[Nx3]

// RUN: not amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y_short.npy 2>&1 | FileCheck %s --check-prefix=SAMPLES
// SAMPLES: amp-run: error: {{.*}}y_short.npy: holds 6 samples, {{.*}}x.npy holds 8

// RUN: not amp-run %S/Inputs/linear.mlir --data %t/x_fortran.npy,%t/y.npy 2>&1 | FileCheck %s --check-prefix=FORTRAN
// FORTRAN: amp-run: error: {{.*}}x_fortran.npy: Fortran-order arrays are not supported

// RUN: not amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --data %t/y.npy 2>&1 | FileCheck %s --check-prefix=COUNT3
// COUNT3: give as many .npy files with --data, got 3

// RUN: not amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --load-params %t/nowhere 2>&1 | FileCheck %s --check-prefix=PARAMS
// PARAMS: amp-run: error: {{.*}}nowhere/arg0.npy: cannot read: No such file or directory

// RUN: mkdir -p %t/wrong && cp %t/y.npy %t/wrong/arg0.npy
// RUN: not amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --load-params %t/wrong 2>&1 | FileCheck %s --check-prefix=PARAM-SHAPE
// PARAM-SHAPE: amp-run: error: {{.*}}wrong/arg0.npy: argument 'arg0' (#0) of @step is f32[3x1], got f32[8x1]

// RUN: not amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --load-state %t/wrong 2>&1 | FileCheck %s --check-prefix=STATE
// STATE: amp-run: error: {{.*}}wrong/arg0.npy: argument 'arg0' (#0) of @step is f32[3x1], got f32[8x1]

// RUN: not amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --inject-value zero 2>&1 | FileCheck %s --check-prefix=INJECT
// INJECT: amp-run: error: --inject-value must be nan or inf, got 'zero'

// RUN: not amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --eval %t/x.npy,%t/y.npy 2>&1 | FileCheck %s --check-prefix=EVAL
// EVAL: amp-run: error: --eval needs a function @predict in {{.*}}linear.mlir

// AMP options are those of amp-pipeline, checked by the same code.
// RUN: not amp-run %S/Inputs/linear.mlir --amp="dtype=f8" 2>&1 | FileCheck %s --check-prefix=AMP-DTYPE
// AMP-DTYPE: amp-run: error: --amp: option 'dtype' must be f16 or bf16, got 'f8'
// RUN: not amp-run %S/Inputs/linear.mlir --amp="bogus=1" 2>&1 | FileCheck %s --check-prefix=AMP-NAME
// AMP-NAME: amp-run: error: --amp: invalid amp-pipeline options 'bogus=1': <Pass-Options-Parser>: no such option bogus

// Batch sizes: a static step takes its own, and only a dynamic one runs a
// last partial batch.
// RUN: not amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --batch-size 3 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: amp-run: error: batch size 3: the step takes batches of 4 (data argument 'arg4' is f32[4x3])
// RUN: not amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --keep-last-batch 2>&1 | FileCheck %s --check-prefix=KEEP
// KEEP: amp-run: error: keeping the last partial batch needs a step whose batch dimension is dynamic; this one takes batches of a fixed size
