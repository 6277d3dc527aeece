"""threads=N splits the compiled loops over N threads (amp-cpu-parallel-loops, docs/CPU.md
"Threads"): only their parallel dims, every iteration whole on one thread, so the loops give
the same bits for any N. Checked without the library calls (matmuls and convolutions then
loops too), on the steps torch-mlir gives the zoo's MLP (dynamic batch, 64 rows: its loops
are split at run time), CNN and ResNet block: losses and parameters after three steps on 1
and 2 threads (and 3 for the MLP) are bit-identical, in fp32 and bf16. (The GPT block fixture is too small to
split any loop; test/amp-run/threads.test runs examples/transformer.mlir.) With the library
calls N threads also reach oneDNN, whose sums may be ordered otherwise (test_cpu_library.py's
tolerance).
"""
import os
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.abspath(os.environ.get("AMP_BUILD_DIR", os.path.join(ROOT, "build")))
sys.path.insert(0, os.path.join(BUILD, "python_packages"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import amp_mlir  # noqa: E402
from random_batch import random_batch  # noqa: E402

FIXTURES = os.path.join(ROOT, "test", "Inputs", "torch")
STEPS = 3


def train(text, options, threads, rows):
    session = amp_mlir.Session(text, options, threads=threads, cpu_library=False)
    data = random_batch(session, rows, seed=2)
    losses = [session.step(*data).loss for _ in range(STEPS)]
    return np.array(losses), session.parameters


@pytest.mark.parametrize("options", [None, "dtype=bf16"])
@pytest.mark.parametrize("model,rows", [("mlp_dynamic_batch", 64), ("cnn_bn", 4),
                                        ("resnet_block", 4)])
def test_loops_give_the_same_bits_on_any_number_of_threads(model, rows, options):
    text = amp_mlir.import_step(os.path.join(FIXTURES, model + ".mlir"))
    losses, parameters = train(text, options, 1, rows)
    assert np.all(np.isfinite(losses))
    # 3 threads (blocks of unequal sizes) on the dynamic batch only, to keep the test short.
    for threads in (2, 3) if model == "mlp_dynamic_batch" else (2,):
        other_losses, other = train(text, options, threads, rows)
        assert losses.tobytes() == other_losses.tobytes(), threads
        assert parameters.keys() == other.keys()
        for name, value in parameters.items():
            assert value.tobytes() == other[name].tobytes(), (threads, name)
