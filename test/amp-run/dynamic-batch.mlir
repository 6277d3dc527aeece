// A step whose batch dimension is dynamic (../Inputs/mlp-dynamic-batch.mlir):
// one compiled step runs every batch size. --batch-size is required; the last
// partial batch of an epoch (100 samples = 6 x 16 + 4) is dropped, or run
// with --keep-last-batch. Resuming continues bit for bit across a partial
// batch. Files are named by amp.name.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; r = np.random.default_rng(0); \
// RUN:   x = r.normal(size=(100, 8)).astype(np.float32); \
// RUN:   y = np.eye(4, dtype=np.float32)[(x @ r.normal(size=(8, 4))).argmax(1)]; \
// RUN:   np.save('%t/x.npy', x); np.save('%t/y.npy', y)"
// RUN: amp-run %S/../Inputs/mlp-dynamic-batch.mlir --data %t/x.npy,%t/y.npy \
// RUN:   --batch-size 16 --epochs 1 --print-every 0 | FileCheck %s --check-prefix=DROP
// DROP: amp-run: @train_step as written (no AMP pipeline), 4 parameter(s), 0 optimizer state, 2 data argument(s) (dynamic batch, 16 samples a step)
// DROP: final: step 6  loss

// RUN: amp-run %S/../Inputs/mlp-dynamic-batch.mlir --data %t/x.npy,%t/y.npy \
// RUN:   --batch-size 16 --keep-last-batch --epochs 2 --seed 3 --save-state %t/full \
// RUN:   --log %t/full.csv | FileCheck %s --check-prefix=KEEP
// KEEP: step 7/14  loss
// KEEP: final: step 14  loss
// RUN: ls %t/full | FileCheck %s --check-prefix=FILES
// FILES:      fc1.bias.npy
// FILES-NEXT: fc1.weight.npy
// FILES-NEXT: fc2.bias.npy
// FILES-NEXT: fc2.weight.npy
// FILES-NEXT: step.npy

// RUN: amp-run %S/../Inputs/mlp-dynamic-batch.mlir --data %t/x.npy,%t/y.npy \
// RUN:   --batch-size 16 --keep-last-batch --steps 5 --seed 3 --save-state %t/half
// RUN: amp-run %S/../Inputs/mlp-dynamic-batch.mlir --data %t/x.npy,%t/y.npy \
// RUN:   --batch-size 16 --keep-last-batch --load-state %t/half --steps 9 \
// RUN:   --save-state %t/resumed --log %t/resumed.csv
// RUN: cmp %t/full/fc1.weight.npy %t/resumed/fc1.weight.npy
// RUN: cmp %t/full/fc2.bias.npy %t/resumed/fc2.bias.npy
// RUN: not cmp %t/half/fc1.weight.npy %t/resumed/fc1.weight.npy
// RUN: diff <(tail -n 9 %t/full.csv | cut -d, -f1-4) <(tail -n 9 %t/resumed.csv | cut -d, -f1-4)

// The AMP pipeline keeps the batch dynamic; f16 and bf16 train too.
// RUN: amp-run %S/../Inputs/mlp-dynamic-batch.mlir --amp=dtype=f16 --data %t/x.npy,%t/y.npy \
// RUN:   --batch-size 32 --keep-last-batch --epochs 3 --print-every 0 | FileCheck %s --check-prefix=F16
// F16: final: step 12  loss {{0\.[0-9]+}}  scale 65536  skipped 0
// RUN: amp-run %S/../Inputs/mlp-dynamic-batch.mlir --amp=dtype=bf16 --data %t/x.npy,%t/y.npy \
// RUN:   --batch-size 32 --epochs 3 --print-every 0 | FileCheck %s --check-prefix=BF16
// BF16: final: step 9  loss {{0\.[0-9]+}}
