"""amp_mlir.Session in an MPI job (docs/DataParallel.md): the same script run
by `mpiexec -n 2` trains each rank on its share of every batch and follows
one process on the whole batch; a session of a step without data-parallel=mpi
refuses to start as one of two processes.
"""
import json
import os
import textwrap

import numpy as np

from mpi_runs import PACKAGES, ROOT, needs_mpi, run_script

STEP = os.path.join(ROOT, "test", "amp-run", "Inputs", "linear-dynamic.mlir")
pytestmark = needs_mpi

# Trains 12 steps of global batches of 8 and writes, from rank 0, the losses
# and the parameters; argv: options, output file.
SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {packages!r})
    import numpy as np
    import amp_mlir
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [3.0]], np.float32) + 0.5).astype(np.float32)
    options, out = sys.argv[1], sys.argv[2]
    session = amp_mlir.Session({step!r}, options, seed=3)
    losses = [r.loss for r in session.fit(x, y, steps=12, batch_size=8)]
    session.check_replicas()
    if session.rank == 0:
        json.dump({{"world": session.world_size, "losses": losses,
                    "w": session.parameters["w"].tolist()}}, open(out, "w"))
""")


def run(tmp_path, options, ranks):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.format(packages=PACKAGES, step=STEP))
    out = tmp_path / f"{ranks}.json"
    return run_script(script, [options, out], ranks), out


def test_two_ranks_follow_one(tmp_path):
    # fp32 sums: the summation order alone differs.
    one, one_out = run(tmp_path, "level=O0 data-parallel=mpi", 1)
    two, two_out = run(tmp_path, "level=O0 data-parallel=mpi", 2)
    assert one.returncode == 0, one.stderr
    assert two.returncode == 0, two.stderr
    a, b = json.loads(one_out.read_text()), json.loads(two_out.read_text())
    assert (a["world"], b["world"]) == (1, 2)
    np.testing.assert_allclose(b["losses"], a["losses"], rtol=1e-5)
    np.testing.assert_allclose(b["w"], a["w"], atol=1e-6)


def test_step_without_the_option_refuses_two_ranks(tmp_path):
    result, _ = run(tmp_path, "dtype=f16", 2)
    assert result.returncode != 0
    assert "in an MPI job, but the step is not data-parallel" in result.stderr
