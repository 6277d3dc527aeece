// f16 and bf16 steps (casts from amp-insert-casts) train, and give the same
// bits on the host CPU and on a generic x86-64 without F16C or native bf16
// instructions, where conversions go through runtime routines.

// RUN: rm -rf %t && %python %S/Inputs/make_linear_data.py %t
// RUN: amp-run %S/Inputs/linear.mlir --data %t/x.npy,%t/y.npy --steps 200 \
// RUN:   --print-every 0 --save-params %t/f32

// RUN: amp-opt %S/Inputs/linear.mlir --amp-insert-casts="dtype=bf16" -o %t/bf16.mlir
// RUN: FileCheck %s --check-prefix=CASTS < %t/bf16.mlir
// CASTS: arith.truncf {{.*}} to tensor<4x3xbf16>
// RUN: amp-run %t/bf16.mlir --data %t/x.npy,%t/y.npy --steps 200 --print-every 0 \
// RUN:   --save-params %t/bf16-host | FileCheck %s --check-prefix=BF16
// RUN: amp-run %t/bf16.mlir --data %t/x.npy,%t/y.npy --steps 200 --print-every 0 \
// RUN:   --save-params %t/bf16-generic --mcpu=x86-64
// RUN: cmp %t/bf16-host/arg0.npy %t/bf16-generic/arg0.npy
// RUN: not cmp %t/bf16-host/arg0.npy %t/f32/arg0.npy
// BF16: final: step 200  loss 0.00

// RUN: amp-opt %S/Inputs/linear.mlir --amp-insert-casts="dtype=f16" -o %t/f16.mlir
// RUN: amp-run %t/f16.mlir --data %t/x.npy,%t/y.npy --steps 200 --print-every 0 \
// RUN:   --save-params %t/f16-host | FileCheck %s --check-prefix=F16
// RUN: amp-run %t/f16.mlir --data %t/x.npy,%t/y.npy --steps 200 --print-every 0 \
// RUN:   --save-params %t/f16-generic --mcpu=x86-64
// RUN: cmp %t/f16-host/arg0.npy %t/f16-generic/arg0.npy
// F16: final: step 200  loss 0.00

// RUN: not amp-run %t/f16.mlir --data %t/x.npy,%t/y.npy --mcpu=nonsense 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CPU
// CPU: amp-run: error: {{.*}}f16.mlir: no target machine for CPU 'nonsense': not a CPU of
