// A hyperparameter (Inputs/hyper.mlir: the learning rate, an input of the
// update) starts at its amp.value; --hyper sets it for the run, and a wrong
// name or value is an error that names the hyperparameters.

// RUN: rm -rf %t && %python %S/Inputs/make_linear_data.py %t
// RUN: amp-run %S/Inputs/hyper.mlir --data %t/x.npy,%t/y.npy --steps 20 --print-every 0 \
// RUN:   --save-params %t/default | FileCheck %s
// RUN: amp-run %S/Inputs/hyper.mlir --data %t/x.npy,%t/y.npy --steps 20 --print-every 0 \
// RUN:   --hyper lr=0.1 --save-params %t/same
// RUN: amp-run %S/Inputs/hyper.mlir --data %t/x.npy,%t/y.npy --steps 20 --print-every 0 \
// RUN:   --hyper lr=0.01 --save-params %t/slow
// RUN: amp-run %S/Inputs/hyper.mlir --amp=dtype=f16 --data %t/x.npy,%t/y.npy --steps 20 \
// RUN:   --print-every 0 --hyper lr=0 --save-params %t/still
// RUN: amp-run %S/Inputs/hyper.mlir --data %t/x.npy,%t/y.npy --steps 0 --save-params %t/initial
// RUN: cmp %t/default/fc.weight.npy %t/same/fc.weight.npy
// RUN: not cmp %t/default/fc.weight.npy %t/slow/fc.weight.npy
// RUN: cmp %t/initial/fc.weight.npy %t/still/fc.weight.npy
// CHECK: amp-run: @step as written (no AMP pipeline), 2 parameter(s), 0 optimizer state, 1 hyperparameter(s), 2 data argument(s)

// RUN: not amp-run %S/Inputs/hyper.mlir --data %t/x.npy,%t/y.npy --hyper rate=1 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: amp-run: error: --hyper rate=1: the step has no hyperparameter 'rate' (it has: lr)
// RUN: not amp-run %S/Inputs/hyper.mlir --data %t/x.npy,%t/y.npy --hyper lr=fast 2>&1 | FileCheck %s --check-prefix=VALUE
// VALUE: amp-run: error: --hyper lr=fast: expected NAME=VALUE with a number

// Without amp.value a hyperparameter must be set.
// RUN: sed 's/, amp.value = 0.1 : f32//' %S/Inputs/hyper.mlir > %t/unset.mlir
// RUN: not amp-run %t/unset.mlir --data %t/x.npy,%t/y.npy --steps 1 2>&1 | FileCheck %s --check-prefix=UNSET
// UNSET: amp-run: error: hyperparameter 'lr' of @step has no amp.value and has not been set
// RUN: amp-run %t/unset.mlir --data %t/x.npy,%t/y.npy --steps 20 --print-every 0 --hyper lr=0.1 --save-params %t/set
// RUN: cmp %t/default/fc.weight.npy %t/set/fc.weight.npy
