// A buffer the forward updates (Inputs/buffer.mlir, a running mean as
// BatchNorm keeps): carried from step to step, saved by name with the
// parameters and the state, and never guarded: a skipped step leaves the
// parameters alone and still updates the buffer.

// RUN: rm -rf %t && %python %S/Inputs/make_linear_data.py %t
// RUN: amp-run %S/Inputs/buffer.mlir --data %t/x.npy,%t/y.npy --steps 0 \
// RUN:   --save-state %t/initial
// RUN: amp-run %S/Inputs/buffer.mlir --data %t/x.npy,%t/y.npy --steps 3 \
// RUN:   --shuffle=false --save-state %t/fp32 --save-params %t/model | FileCheck %s
// RUN: amp-run %S/Inputs/buffer.mlir --amp="dtype=f16 init-scale=1e30" \
// RUN:   --data %t/x.npy,%t/y.npy --steps 3 --shuffle=false --save-state %t/f16 \
// RUN:   | FileCheck %s --check-prefix=SKIPPED
// RUN: %python %S/Inputs/check_buffer.py %t %t/fp32 %t/f16 %t/initial

// CHECK: amp-run: @step as written (no AMP pipeline), 2 parameter(s), 1 buffer(s), 0 optimizer state, 2 data argument(s)
// SKIPPED: final: step 3 {{.*}} skipped 3

// Files are named by amp.name; --save-params writes the model (parameters and
// buffers) and --load-params reads it back.
// RUN: ls %t/model | FileCheck %s --check-prefix=MODEL
// MODEL:      fc.bias.npy
// MODEL-NEXT: fc.weight.npy
// MODEL-NEXT: norm.running_mean.npy
// MODEL-NOT:  .npy
// RUN: amp-run %S/Inputs/buffer.mlir --data %t/x.npy,%t/y.npy --steps 0 \
// RUN:   --load-params %t/model --save-params %t/reloaded
// RUN: cmp %t/model/norm.running_mean.npy %t/reloaded/norm.running_mean.npy
// RUN: cmp %t/model/fc.weight.npy %t/reloaded/fc.weight.npy
