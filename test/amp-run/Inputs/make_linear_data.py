"""Writes the data of Inputs/linear.mlir to the directory argv[1]: 8 samples
of y = x . (1, -2, 3) + 0.5, in every dtype variant the tests need."""
import os
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
x = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32)
y = (x @ np.array([[1.0], [-2.0], [3.0]], np.float32) + 0.5).astype(np.float32)
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "y.npy"), y)
np.save(os.path.join(out, "x_f64.npy"), x.astype(np.float64))
np.save(os.path.join(out, "x_wide.npy"), np.zeros((8, 4), np.float32))
np.save(os.path.join(out, "y_short.npy"), y[:6])
np.save(os.path.join(out, "x_fortran.npy"), np.asfortranarray(x))
