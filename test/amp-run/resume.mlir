// Training state saved after 4 steps and resumed for 5 more is bit for bit the
// state of 9 steps in one run: parameters, momentum, step counter and seed,
// with the shuffled order of every epoch (2 batches each) reproduced.

// RUN: rm -rf %t && %python %S/Inputs/make_linear_data.py %t
// RUN: amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --seed 7 \
// RUN:   --steps 9 --save-state %t/full --log %t/full.csv
// RUN: amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --seed 7 \
// RUN:   --steps 4 --save-state %t/half
// RUN: amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy \
// RUN:   --load-state %t/half --steps 5 --save-state %t/resumed \
// RUN:   --log %t/resumed.csv | FileCheck %s
// RUN: cmp %t/full/arg0.npy %t/resumed/arg0.npy
// RUN: cmp %t/full/arg1.npy %t/resumed/arg1.npy
// RUN: cmp %t/full/arg2.npy %t/resumed/arg2.npy
// RUN: cmp %t/full/arg3.npy %t/resumed/arg3.npy
// RUN: cmp %t/full/step.npy %t/resumed/step.npy
// RUN: diff <(tail -n 5 %t/full.csv | cut -d, -f1-4) <(tail -n 5 %t/resumed.csv | cut -d, -f1-4)

// The state of 4 steps differs from that of 9 (the comparison can fail).
// RUN: not cmp %t/half/arg0.npy %t/resumed/arg0.npy

// CHECK-NOT: step 4/9
// CHECK:     step 5/9  loss
// CHECK:     final: step 9  loss
