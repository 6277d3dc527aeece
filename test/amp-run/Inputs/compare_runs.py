"""Compares two amp-run runs of one step: the .npy files of two directories
(--save-params or --save-state) and optionally the losses of two --log CSV
files, step by step. Prints the largest differences and fails when they
exceed the tolerances: absolute for the saved arrays, relative for the
losses.

usage: compare_runs.py DIR_A DIR_B --atol X [--logs A.csv B.csv --rtol Y]
"""
import argparse
import os
import sys

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("a")
parser.add_argument("b")
parser.add_argument("--atol", type=float, required=True)
parser.add_argument("--logs", nargs=2)
parser.add_argument("--rtol", type=float, default=0.0)
args = parser.parse_args()

failed = False
names = sorted(n for n in os.listdir(args.a) if n.endswith(".npy") and n != "step.npy")
if names != sorted(n for n in os.listdir(args.b) if n.endswith(".npy") and n != "step.npy"):
    sys.exit("the directories hold different files")
for name in names:
    a = np.load(os.path.join(args.a, name)).astype(np.float64)
    b = np.load(os.path.join(args.b, name)).astype(np.float64)
    diff = float(np.abs(a - b).max())
    print(f"{name}: max |a - b| = {diff:.3g}")
    failed |= not diff <= args.atol
if args.logs:
    a, b = (np.loadtxt(f, delimiter=",", skiprows=1, usecols=(0, 1)) for f in args.logs)
    if a.shape != b.shape or not (a[:, 0] == b[:, 0]).all():
        sys.exit("the logs hold different steps")
    diff = float((np.abs(a[:, 1] - b[:, 1]) / np.abs(a[:, 1])).max())
    print(f"loss over {len(a)} steps: max |a - b| / |a| = {diff:.3g}")
    failed |= not diff <= args.rtol
if failed:
    sys.exit(f"beyond the tolerance (atol {args.atol}, rtol {args.rtol})")
print("within the tolerance")
