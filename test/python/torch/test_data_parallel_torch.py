"""The PyTorch front end under `mpiexec -n 2` (docs/DataParallel.md): a step
compiled with data_parallel="mpi" sums the gradients over the ranks, so two
ranks each calling it on half of every batch follow one process calling it
on the whole batch.
"""
import json
import os
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("torch_mlir")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from mpi_runs import PACKAGES, needs_mpi, run_script  # noqa: E402

pytestmark = needs_mpi

# 10 SGD steps with momentum of a small classifier on global batches of 8, each rank
# on its rows; rank 0 writes the losses and the parameters to argv[1].
SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {packages!r})
    import torch
    import amp_mlir.torch as amp_torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = lambda m, x, y: torch.nn.functional.cross_entropy(m(x), y)
    g = torch.Generator().manual_seed(1)
    data = [(torch.randn(8, 4, generator=g), torch.randint(0, 2, (8,), generator=g))
            for _ in range(10)]
    step = amp_torch.compile_training_step(model, loss_fn, optimizer, data[0], dynamic_batch=True,
                                           amp={{"level": "O0", "data_parallel": "mpi"}})
    rank, ranks = step.session.rank, step.session.world_size
    rows = 8 // ranks
    losses = [step(x[rank * rows:(rank + 1) * rows], y[rank * rows:(rank + 1) * rows]).loss
              for x, y in data]
    step.session.check_replicas()
    step.sync_to_torch()
    if rank == 0:
        json.dump({{"ranks": ranks, "losses": losses,
                    "params": [p.detach().numpy().ravel().tolist() for p in model.parameters()]}},
                  open(sys.argv[1], "w"))
""")


def run(tmp_path, ranks):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.format(packages=PACKAGES))
    out = tmp_path / f"{ranks}.json"
    result = run_script(script, [out], ranks)
    assert result.returncode == 0, result.stderr
    return json.loads(out.read_text())


def test_two_ranks_follow_one(tmp_path):
    one, two = run(tmp_path, 1), run(tmp_path, 2)
    assert (one["ranks"], two["ranks"]) == (1, 2)
    # Each rank's loss is the mean over its half: their mean is the batch's.
    for a, b in zip(one["params"], two["params"]):
        np.testing.assert_allclose(b, a, atol=1e-5)
