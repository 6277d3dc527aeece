// --eval: the accuracy of @predict with the trained parameters, over a data
// set that is not a multiple of the batch, equals NumPy's; labels may be
// class indices or one-hot rows.

// RUN: rm -rf %t && %python %S/Inputs/check_eval.py %t make
// RUN: amp-run %amp_src_root/examples/mlp.mlir --data %t/x.npy,%t/onehot.npy \
// RUN:   --steps 3 --print-every 0 --save-params %t/params \
// RUN:   --eval %t/x.npy,%t/labels.npy > %t/indices.txt
// RUN: %python %S/Inputs/check_eval.py %t %t/indices.txt
// RUN: amp-run %amp_src_root/examples/mlp.mlir --data %t/x.npy,%t/onehot.npy \
// RUN:   --steps 3 --print-every 0 --eval %t/x.npy,%t/onehot.npy > %t/onehot.txt
// RUN: diff <(grep eval %t/indices.txt) <(grep eval %t/onehot.txt)
// RUN: FileCheck %s < %t/indices.txt
// CHECK: eval: accuracy 0.{{[0-9]+}}

// RUN: not amp-run %amp_src_root/examples/mlp.mlir --data %t/x.npy,%t/onehot.npy \
// RUN:   --steps 1 --eval %t/x.npy 2>&1 | FileCheck %s --check-prefix=ONE-FILE
// ONE-FILE: amp-run: error: --eval takes two .npy files: inputs,labels
// RUN: not amp-run %amp_src_root/examples/mlp.mlir --data %t/x.npy,%t/onehot.npy \
// RUN:   --steps 1 --eval %t/x.npy,%t/params/arg1.npy 2>&1 | FileCheck %s --check-prefix=LABELS
// LABELS: amp-run: error: {{.*}}arg1.npy: holds f32[128]; expected 100 class indices or one-hot rows of 10
