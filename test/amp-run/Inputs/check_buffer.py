"""Checks the runs of buffers.mlir: argv = data dir, fp32 state dir, skipped-f16 state dir,
initial state dir. The running mean is 0.9 * mean + 0.1 * batch mean for the batches in order
(2 of 4 rows each); the f16 run skipped every step, so its parameters are the initial ones,
yet its buffer moved exactly as in fp32 (PyTorch updates BatchNorm statistics on a step that
GradScaler skips)."""
import os
import sys

import numpy as np

data, fp32, f16, initial = sys.argv[1:5]
x = np.load(os.path.join(data, "x.npy"))
mean = np.zeros(3, np.float32)
for step in range(3):
    batch = x[(step % 2) * 4:(step % 2) * 4 + 4]
    mean = np.float32(0.9) * mean + np.float32(0.025) * batch.sum(0, dtype=np.float32)


def load(d, name):
    return np.load(os.path.join(d, name + ".npy"))


np.testing.assert_allclose(load(fp32, "norm.running_mean"), mean, rtol=1e-6)
assert load(f16, "norm.running_mean").tobytes() == load(fp32, "norm.running_mean").tobytes()
for name in ("fc.weight", "fc.bias"):
    assert load(f16, name).tobytes() == load(initial, name).tobytes(), name
    assert load(fp32, name).tobytes() != load(initial, name).tobytes(), name
