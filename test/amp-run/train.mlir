// A tiny fp32 training run: linear regression with momentum (Inputs/linear.mlir)
// learns its exact solution; the saved parameters are .npy files NumPy reads;
// the per-step log is CSV or JSON by its extension.

// RUN: rm -rf %t && %python %S/Inputs/make_linear_data.py %t
// RUN: amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --steps 200 \
// RUN:   --print-every 100 --save-params %t/params --log %t/log.csv | FileCheck %s
// RUN: %python -c "import numpy as np; w = np.load('%t/params/arg0.npy'); \
// RUN:   b = np.load('%t/params/arg1.npy'); \
// RUN:   assert w.dtype == np.float32 and w.shape == (3, 1), w; \
// RUN:   assert np.abs(w.ravel() - [1, -2, 3]).max() < 1e-2, w; \
// RUN:   assert abs(b[0] - 0.5) < 1e-2, b"
// RUN: FileCheck %s --check-prefix=CSV < %t/log.csv

// CHECK:      amp-run: @step as written (no AMP pipeline), 2 parameter(s), 2 optimizer state, 2 data argument(s)
// CHECK-NEXT: step 100/200  loss
// CHECK-NEXT: step 200/200  loss 0.0000
// CHECK-NEXT: final: step 200  loss 0.0000

// CSV:      step,loss,scale,found_inf,time_ms
// CSV-NEXT: 1,{{[0-9.e+-]+}},,0,{{[0-9.e+-]+$}}
// CSV:      200,

// Epochs count batches of the argument's batch size (8 samples, 4 a batch);
// a JSON log has one object per step.

// RUN: amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --epochs 3 \
// RUN:   --print-every 0 --log %t/log.json | FileCheck %s --check-prefix=EPOCHS
// RUN: %python -c "import json; log = json.load(open('%t/log.json')); \
// RUN:   assert [r['step'] for r in log] == [1, 2, 3, 4, 5, 6], log; \
// RUN:   assert log[0]['scale'] is None and log[0]['found_inf'] is False, log"
// EPOCHS-NOT: step 1/6
// EPOCHS:     final: step 6  loss

// The same seed gives the same run; another seed another one.

// RUN: amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --steps 3 --seed 5 > %t/a.txt
// RUN: amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --steps 3 --seed 5 > %t/b.txt
// RUN: amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --steps 3 --seed 6 > %t/c.txt
// RUN: diff <(grep loss %t/a.txt | grep -v final) <(grep loss %t/b.txt | grep -v final)
// RUN: not diff <(grep "step 3/3" %t/a.txt) <(grep "step 3/3" %t/c.txt)

// An injected NaN in the data reaches the loss at that step, and only then.

// RUN: amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --steps 3 \
// RUN:   --inject-nonfinite-at-step 3 | FileCheck %s --check-prefix=NAN
// NAN: step 2/3  loss {{[0-9]}}
// NAN: step 3/3  loss nan
