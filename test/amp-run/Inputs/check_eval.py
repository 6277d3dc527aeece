"""Recomputes amp-run's --eval accuracy of examples/mlp.mlir with NumPy.

Usage: check_eval.py DIR OUTPUT: DIR holds x.npy, labels.npy, onehot.npy and
the saved parameters (params/arg0..3.npy); OUTPUT is amp-run's stdout. With
`make` instead of OUTPUT, writes the data: 100 random samples, not a multiple
of the batch of 64, so the last batch is padded."""
import os
import re
import sys

import numpy as np

d = sys.argv[1]
if sys.argv[2] == "make":
    rng = np.random.default_rng(1)
    os.makedirs(d, exist_ok=True)
    x = rng.normal(size=(100, 64)).astype(np.float32)
    labels = rng.integers(0, 10, size=100).astype(np.int32)
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "labels.npy"), labels)
    np.save(os.path.join(d, "onehot.npy"), np.eye(10, dtype=np.float32)[labels])
    sys.exit(0)

w1, b1, w2, b2 = (np.load(os.path.join(d, "params", f"arg{i}.npy")) for i in range(4))
x, labels = np.load(os.path.join(d, "x.npy")), np.load(os.path.join(d, "labels.npy"))
logits = np.maximum(x @ w1 + b1, 0) @ w2 + b2
expected = (logits.argmax(1) == labels).mean()
printed = float(re.search(r"eval: accuracy ([0-9.]+)", open(sys.argv[2]).read()).group(1))
assert abs(printed - expected) < 1e-4, (printed, expected)
