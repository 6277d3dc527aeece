#!/usr/bin/env python3
"""Compares the loss curve of a compiled step on the GPU (amp-train --log)
with the CPU one (amp-run --log) of the same step, initial parameters and
batches. Prints one verdict line; exits 1 when the curves disagree.

usage: compare-curves.py MODE EXPECTED.csv ACTUAL.csv   (MODE: fp32, f16, bf16)

Tolerances, per step: |gpu - cpu| <= ABS + REL * |cpu|, and the skipped steps
(found_inf) must be the same. The GPU computes contractions with cuBLASLt
(f32 accumulation, its own summation order) and reductions in another order
than the CPU, so the curves drift apart by rounding; low precision makes the
drift larger.
"""
import csv
import sys

TOLERANCE = {"fp32": (1e-4, 1e-3), "f16": (2e-3, 2e-2), "bf16": (5e-3, 5e-2)}


def read(path):
    with open(path) as f:
        return [(float(r["loss"]), int(float(r["found_inf"]))) for r in csv.DictReader(f)]


def main():
    mode, expected_path, actual_path = sys.argv[1:4]
    absolute, relative = TOLERANCE[mode]
    expected, actual = read(expected_path), read(actual_path)
    if len(actual) != len(expected):
        print("%d steps, expected %d" % (len(actual), len(expected)))
        return 1
    worst, worst_step = 0.0, 0
    for step, ((cpu, cpu_skip), (gpu, gpu_skip)) in enumerate(zip(expected, actual), 1):
        if cpu_skip != gpu_skip:
            print("step %d skipped on one side only (cpu %d, gpu %d)" % (step, cpu_skip, gpu_skip))
            return 1
        excess = abs(gpu - cpu) / (absolute + relative * abs(cpu))
        if excess > worst or gpu != gpu:
            worst, worst_step = (excess if gpu == gpu else float("inf")), step
    verdict = "PASS" if worst <= 1 else "FAIL"
    print("%s: %d steps, final loss gpu %.5f cpu %.5f, worst step %d at %.2f of tolerance"
          % (verdict, len(expected), actual[-1][0], expected[-1][0], worst_step, worst))
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
