// Overflow injection through compiled code (f16, dynamic scaling from 256,
// small enough for these gradients to stay finite in f16): a NaN in
// one batch at step 3 skips that step; parameters and momentum are bit for bit
// those after step 2, the scale halves, the growth tracker resets, and
// training goes on.

// RUN: rm -rf %t && %python %S/Inputs/make_linear_data.py %t
// RUN: amp-run %S/Inputs/linear.mlir --amp="dtype=f16 init-scale=256" --data %t/x.npy,%t/y.npy \
// RUN:   --steps 2 --save-state %t/before | FileCheck %s --check-prefix=BEFORE
// RUN: amp-run %S/Inputs/linear.mlir --amp="dtype=f16 init-scale=256" --data %t/x.npy,%t/y.npy \
// RUN:   --steps 3 --inject-nonfinite-at-step 3 --save-state %t/after \
// RUN:   --log %t/after.csv | FileCheck %s --check-prefix=AFTER
// RUN: cmp %t/before/arg0.npy %t/after/arg0.npy
// RUN: cmp %t/before/arg1.npy %t/after/arg1.npy
// RUN: cmp %t/before/arg2.npy %t/after/arg2.npy
// RUN: cmp %t/before/arg3.npy %t/after/arg3.npy
// RUN: %python -c "import numpy as np; d = '%t'; \
// RUN:   assert np.load(d + '/before/scaler.scale.npy') == 256.0; \
// RUN:   assert np.load(d + '/before/scaler.growth_tracker.npy') == 2; \
// RUN:   assert np.load(d + '/after/scaler.scale.npy') == 128.0; \
// RUN:   assert np.load(d + '/after/scaler.growth_tracker.npy') == 0"
// RUN: FileCheck %s --check-prefix=LOG < %t/after.csv

// BEFORE: step 2/2  loss {{[0-9.]+}}  scale 256  skipped 0
// AFTER:  step 2/3  loss {{[0-9.]+}}  scale 256  skipped 0
// AFTER:  step 3/3  loss nan  scale 256  skipped 1
// AFTER:  final: step 3  loss nan  scale 128  skipped 1
// LOG:    2,{{[0-9.e+-]+}},256,0,
// LOG:    3,nan,256,1,

// A longer run with an inf: one skipped step, then the loss keeps falling.
// RUN: amp-run %S/Inputs/linear.mlir --amp="dtype=f16 init-scale=256" --data %t/x.npy,%t/y.npy \
// RUN:   --steps 200 --inject-nonfinite-at-step 5 --inject-value inf \
// RUN:   --print-every 0 | FileCheck %s --check-prefix=LONG
// LONG: final: step 200  loss 0.00{{[0-9]+}}  scale 128  skipped 1
