"""MindSpore's amp levels (the `level` option, docs/Levels.md) trained end to end: the MLP
example (examples/mlp.mlir) on the digits through amp-run, 10 epochs (220 steps of batch 64), at
O0, O1, O2, O3 and auto beside the fp32 step as written, all from the same seed (same initial
parameters, same batches).

Test accuracy is that of the numpy forward (examples/reference/mlp.py) with the saved
parameters on the 360 test images: one point is 0.01. Run with `pytest -s` to see the table of
figures (bench/RESULTS.md records them); "param drift" is the largest difference of a final
parameter from fp32's, relative to that parameter's largest magnitude.

- O0 is the fp32 step: the same losses and parameters bit for bit.
- O1 (f16 white list, dynamic scaling) within 1 point of fp32, O2 (f16 but the black list and
  the unsafe ops, dynamic scaling) within 2 points; both changed the parameters (they ran in
  f16), neither skipped more than one step.
- O3 (all f16 with f32 accumulation, no scaling) may lose accuracy: it must learn (well above
  the 10% of chance) and is reported as it is.
- O2 with MindSpore's own scaler (init 2^24, x2 every 2000 steps, floor 1) backs off from 2^24
  by skipping steps, then trains like O2.
"""
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import amprun  # noqa: E402
from examples.reference import mlp  # noqa: E402

MLP = os.path.join(ROOT, "examples", "mlp.mlir")
EPOCHS = ["--epochs", "10"]
MINDSPORE_SCALER = ("scaling=dynamic init-scale=16777216 growth-factor=2 growth-interval=2000 "
                    "min-scale=1")
RUNS = {
    "fp32": None,
    "O0": "level=O0",
    "O1": "level=O1",
    "O2": "level=O2",
    "O3": "level=O3",
    "auto": "level=auto",
    "O2 + MindSpore scaler": "level=O2 " + MINDSPORE_SCALER,
}

if not os.path.exists(amprun.AMP_RUN):
    pytest.fail(f"{amprun.AMP_RUN} is not built: run scripts/setup.sh", pytrace=False)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every run of RUNS, trained once for all the tests."""
    out = {}
    for name, amp in RUNS.items():
        workdir = str(tmp_path_factory.mktemp(name.split()[0]))
        out[name] = amprun.train(MLP, workdir, amp, args=EPOCHS)
    return out


def acc(run):
    return amprun.accuracy(mlp, run.params)


def drift(run, reference):
    """The largest difference of a final parameter from the reference's, relative to the
    largest magnitude of that parameter in the reference."""
    return max(np.abs(run.params[i] - p).max() / np.abs(p).max()
               for i, p in reference.params.items())


def test_report(runs):
    """The figures, printed (pytest -s) for bench/RESULTS.md."""
    print(f"\n{'run':<24}{'--amp':<40}{'test acc':>9}{'last-epoch loss':>16}{'skipped':>8}"
          f"{'final scale':>13}{'param drift':>13}")
    for name, run in runs.items():
        amp = RUNS[name] or "(none: fp32 as written)"
        amp = amp.replace(" " + MINDSPORE_SCALER, " <MindSpore scaler>")
        print(f"{name:<24}{amp:<40}{acc(run):>9.4f}{run.loss[-22:].mean():>16.4f}"
              f"{int(run.found_inf.sum()):>8}{run.final_scale:>13}"
              f"{drift(run, runs['fp32']):>13.2e}")
    assert acc(runs["fp32"]) > 0.9


def test_O0_is_the_fp32_step(runs):
    """Reference: fp32 as written. Tolerance: none (bit for bit)."""
    fp32, o0 = runs["fp32"], runs["O0"]
    assert np.array_equal(o0.loss, fp32.loss)
    assert o0.params.keys() == fp32.params.keys()
    for i in fp32.params:
        assert np.array_equal(o0.params[i], fp32.params[i]), i
    assert np.all(np.isnan(o0.scale)) and not o0.found_inf.any()


@pytest.mark.parametrize("level, points", [("O1", 1), ("O2", 2)])
def test_O1_O2_match_fp32_accuracy(runs, level, points):
    """Reference: fp32. Tolerance: 1 point (O1), 2 points (O2) of test accuracy."""
    fp32, run = runs["fp32"], runs[level]
    assert abs(acc(run) - acc(fp32)) <= points / 100, (acc(run), acc(fp32))
    assert np.all(run.scale > 0)  # dynamic scaling by default
    assert run.found_inf.sum() <= 1
    # The step ran in f16: the parameters are not those of fp32.
    assert any(not np.array_equal(run.params[i], fp32.params[i]) for i in fp32.params)


def test_O3_learns_without_scaling(runs):
    """Reference: chance (10%) and the first loss. Tolerance: above 50% accuracy, the last
    epoch's mean loss below a quarter of the first step's. O3's gap to fp32 is reported by
    test_report, not bounded."""
    o3 = runs["O3"]
    assert np.all(np.isnan(o3.scale)) and not o3.found_inf.any()  # no scaler at all
    assert np.all(np.isfinite(o3.loss))
    assert o3.loss[-22:].mean() < 0.25 * o3.loss[0]
    assert acc(o3) > 0.5


def test_O2_with_mindspore_scaler_backs_off_then_trains(runs):
    """Reference: O2 with the default scaler. Tolerance: 2 points of test accuracy. The scale
    starts at 2^24, far above f16's range, so the first steps overflow and halve it; the
    floor of 1 is never reached."""
    ms, o2 = runs["O2 + MindSpore scaler"], runs["O2"]
    skipped = ms.found_inf.sum()
    assert skipped >= 1 and ms.found_inf[:skipped].all()  # the first steps, then no more
    assert ms.scale[0] == 2.0**24 and ms.scale[skipped] == 2.0**24 / 2**skipped
    assert abs(acc(ms) - acc(o2)) <= 0.02, (acc(ms), acc(o2))
