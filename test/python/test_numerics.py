"""End-to-end numerics of the AMP pipeline: training steps compiled and run by amp-run (through
scripts/amprun.py: --log, --save-params, --save-state) on the digits data in build/data.

Each test names its reference and its tolerance. Test accuracy is that of the numpy forward
(examples/reference) with the saved parameters, on the 360 test images: one point is 0.01.
All runs of a comparison use the same seed, so the same initial parameters and batches.

1. f16 with dynamic scaling reaches the fp32 test accuracy within 1 point (MLP).
2. Underflow: the MLP with its loss multiplied by 1e-8. f16 without scaling does not learn;
   f16 with dynamic scaling tracks fp32.
3. Overflow injection: the step is skipped, parameters and optimizer state are bit for bit
   those before it, the scale halves, the tracker resets, training goes on (MLP and CNN).
4. bf16 without scaling trains to within 2 points of fp32 (MLP).
5. The scaler rule: the table of (scale, tracker, hysteresis left, found_inf) cases of the
   loss-scaling issue (PyTorch's _amp_update_scale_ and DeepSpeed's hysteresis, the clamps,
   factors that are not powers of two) runs through compiled code in
   test/Execution/scaler-rule.mlir, compared bit for bit with test/python/scaler_reference.py.
   Here the scale trajectory of whole training runs with overflows at chosen steps follows
   the same reference step by step.

The finite-difference gradient checks of the examples' backward are in test_examples.py;
test_gradient_checks_exist checks that they are there.
"""
import math
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, HERE)

import amprun  # noqa: E402
import scaler_reference  # noqa: E402
from examples.reference import cnn, mlp  # noqa: E402

MLP = os.path.join(ROOT, "examples", "mlp.mlir")
CNN = os.path.join(ROOT, "examples", "cnn.mlir")
EPOCHS = ["--epochs", "10"]  # 220 steps of batch 64
STEPS_PER_EPOCH = 1437 // 64

if not os.path.exists(amprun.AMP_RUN):
    pytest.fail(f"{amprun.AMP_RUN} is not built: run scripts/setup.sh", pytrace=False)


@pytest.fixture(scope="module")
def fp32_mlp(tmp_path_factory):
    """The reference of tests 1 and 4: the MLP step as written, in fp32."""
    return amprun.train(MLP, str(tmp_path_factory.mktemp("fp32")), args=EPOCHS)


def test_f16_dynamic_scaling_matches_fp32_accuracy(fp32_mlp, tmp_path):
    """Reference: fp32. Tolerance: 1 point of test accuracy."""
    f16 = amprun.train(MLP, str(tmp_path), "dtype=f16 scaling=dynamic", args=EPOCHS)
    fp32_acc, f16_acc = amprun.accuracy(mlp, fp32_mlp.params), amprun.accuracy(mlp, f16.params)
    assert fp32_acc > 0.9
    assert abs(f16_acc - fp32_acc) <= 0.01, (f16_acc, fp32_acc)
    assert np.all(f16.scale > 0)  # the log shows the dynamic scale


def test_bf16_without_scaling_matches_fp32_accuracy(fp32_mlp, tmp_path):
    """Reference: fp32. Tolerance: 2 points of test accuracy."""
    bf16 = amprun.train(MLP, str(tmp_path), "dtype=bf16 scaling=none", args=EPOCHS)
    fp32_acc, bf16_acc = amprun.accuracy(mlp, fp32_mlp.params), amprun.accuracy(mlp, bf16.params)
    assert fp32_acc > 0.9
    assert abs(bf16_acc - fp32_acc) <= 0.02, (bf16_acc, fp32_acc)
    assert np.all(np.isnan(bf16.scale)) and not bf16.found_inf.any()  # no scaler at all


TINY = 1e-8


@pytest.fixture(scope="module")
def tiny_loss_step(tmp_path_factory):
    """examples/mlp.mlir with its loss multiplied by 1e-8 and its learning rate by 1e8, so that
    fp32 trains as before while the gradients, about 1e-10, are below f16's smallest subnormal
    (6e-8). The 1/64 of the batch mean scales both the loss and the backward's seed, so the one
    constant carries the factor."""
    text = open(MLP).read()
    edits = [("%inv_batch = arith.constant 0.015625 : f32",
              f"%inv_batch = arith.constant {TINY / 64!r} : f32"),
             ("%lr = arith.constant 0.1 : f32", f"%lr = arith.constant {0.1 / TINY!r} : f32")]
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path_factory.mktemp("tiny") / "mlp_tiny_loss.mlir"
    path.write_text(text)
    return str(path)


def test_underflow_f16_without_scaling_does_not_learn(tiny_loss_step, tmp_path):
    """Reference: the loss of the first step and the initial parameters. Tolerance: every
    step's loss within 5% of the first (fp32 falls below 15% of it); the weight matrices,
    whose gradients come out of f16 matmuls, keep their initial values bit for bit."""
    fp32 = amprun.train(tiny_loss_step, str(tmp_path / "fp32"), args=EPOCHS)
    assert fp32.loss[-STEPS_PER_EPOCH:].mean() < 0.15 * fp32.loss[0]
    f16 = amprun.train(tiny_loss_step, str(tmp_path / "f16"), "dtype=f16 scaling=none",
                       args=EPOCHS)
    assert np.all(np.abs(f16.loss / f16.loss[0] - 1) < 0.05), f16.loss
    initial = amprun.train(tiny_loss_step, str(tmp_path / "init"), args=["--steps", "0"])
    for i, (name, _) in enumerate(mlp.PARAMS):
        if name.startswith("w"):
            assert np.array_equal(f16.params[i], initial.params[i]), name
    assert amprun.accuracy(mlp, f16.params) < 0.2


def test_underflow_f16_dynamic_scaling_tracks_fp32(tiny_loss_step, tmp_path):
    """Reference: the fp32 run of the same step. Tolerance: every step's loss within 1% of
    fp32's, test accuracy within 1 point. PyTorch's default scaler (2^16) lifts the gradients
    back into f16's range."""
    fp32 = amprun.train(tiny_loss_step, str(tmp_path / "fp32"), args=EPOCHS)
    f16 = amprun.train(tiny_loss_step, str(tmp_path / "f16"), "dtype=f16 scaling=dynamic",
                       args=EPOCHS)
    assert not f16.found_inf.any()
    np.testing.assert_allclose(f16.loss, fp32.loss, rtol=0.01)
    fp32_acc, f16_acc = amprun.accuracy(mlp, fp32.params), amprun.accuracy(mlp, f16.params)
    assert fp32_acc > 0.9
    assert abs(f16_acc - fp32_acc) <= 0.01, (f16_acc, fp32_acc)


@pytest.mark.parametrize("module,step,value", [(mlp, MLP, "nan"), (cnn, CNN, "inf")],
                         ids=["mlp-nan", "cnn-momentum-inf"])
def test_overflow_injection_skips_the_step(module, step, value, tmp_path):
    """An inf or NaN in the first input of the batch of step K = 10 (f16, dynamic scaling).
    Reference: the state saved after step K-1. Tolerance: none (bit for bit), the scale exactly
    halved; afterwards the mean loss of the last 10 of 66 steps is below that of the 10 steps
    after K."""
    k, amp = 10, "dtype=f16 scaling=dynamic"
    inject = ["--inject-nonfinite-at-step", str(k), "--inject-value", value]
    before = amprun.train(step, str(tmp_path / "before"), amp, save_state=True,
                          args=["--steps", str(k - 1)])
    after = amprun.train(step, str(tmp_path / "after"), amp, save_state=True,
                         args=["--steps", str(k), *inject])
    carried = len(module.PARAMS) + len(module.OPT_STATE)
    scale, tracker = "scaler.scale", "scaler.growth_tracker"
    for i in range(carried):  # parameters, then optimizer state (the CNN's velocities)
        assert before.state[i].dtype == after.state[i].dtype
        assert before.state[i].tobytes() == after.state[i].tobytes(), f"arg{i}"
    assert before.state[scale] == 65536.0 and after.state[scale] == 32768.0
    assert before.state[tracker] == k - 1 and after.state[tracker] == 0
    assert before.state["step"][0] == k - 1 and after.state["step"][0] == k

    run = amprun.train(step, str(tmp_path / "long"), amp, args=["--steps", "66", *inject])
    assert list(np.flatnonzero(run.found_inf) + 1) == [k]
    assert not np.isfinite(run.loss[k - 1]) and np.isfinite(np.delete(run.loss, k - 1)).all()
    assert np.all(run.scale[:k] == 65536.0) and np.all(run.scale[k:] == 32768.0)
    assert run.loss[-10:].mean() < run.loss[k:k + 10].mean()


# Scaler configurations for test 5: (id, amp-pipeline options as scaler_reference's keyword
# arguments, init-scale, 1-based batches of an epoch whose first input is made inf). Small
# growth intervals so that growth happens within a few steps.
TRAJECTORIES = [
    ("torch-interval-3", {"growth_interval": 3}, 65536.0, [5, 6, 14]),
    ("factors-3-0.3", {"growth_factor": 3.0, "backoff_factor": 0.3, "growth_interval": 2,
                       "max_scale": 1e6}, 1000.0, [4, 9, 10, 11]),
    ("clamps", {"growth_interval": 2, "min_scale": 256.0, "max_scale": 4096.0}, 1024.0,
     [3, 4, 5, 6, 20]),
    ("hysteresis-2", {"growth_interval": 4, "hysteresis": 2, "max_scale": 2.0 ** 20}, 4096.0,
     [3, 5, 6, 7, 15, 16]),
]


@pytest.mark.parametrize("options,init,bad_batches", [t[1:] for t in TRAJECTORIES],
                         ids=[t[0] for t in TRAJECTORIES])
def test_scale_trajectory_follows_reference(options, init, bad_batches, tmp_path):
    """Three epochs (66 steps) of the MLP in f16 with dynamic scaling, in order, on digits
    whose batches `bad_batches` have an inf. Reference: scaler_reference.amp_update_scale fed
    with each step's found_inf. Tolerance: none: every step's scale (the log prints f32 with 9
    digits) and the final tracker and hysteresis counter equal the reference's. Every injected
    step overflows; the others overflow only where the scale grew past f16's range."""
    x = np.load(amprun.digits("train", "x"))
    for b in bad_batches:
        x[(b - 1) * 64, 0] = np.inf
    np.save(tmp_path / "x.npy", x)
    data = [str(tmp_path / "x.npy"), amprun.digits("train", "y")]
    amp = (f"dtype=f16 scaling=dynamic init-scale={init!r} "
           + scaler_reference.options_string(options))
    run = amprun.train(MLP, str(tmp_path / "run"), amp, data=data, save_state=True,
                       args=["--epochs", "3", "--shuffle=false"])

    injected = [e * STEPS_PER_EPOCH + b for e in range(3) for b in bad_batches]
    assert set(injected) <= set(np.flatnonzero(run.found_inf) + 1)
    hysteresis = options.get("hysteresis", 1)
    state = (init, 0, hysteresis)
    for t, found_inf in enumerate(run.found_inf):
        assert np.float32(run.scale[t]) == np.float32(state[0]), (t + 1, run.scale[t], state)
        state = scaler_reference.amp_update_scale(*state, bool(found_inf), **options)
    assert run.state["scaler.scale"] == np.float32(state[0])
    assert run.state["scaler.growth_tracker"] == state[1]
    if hysteresis > 1:
        assert run.state["scaler.hysteresis"] == state[2]
    # The trajectory exercises what the configuration is about.
    scales = np.append(run.scale, state[0])
    assert np.any(scales[1:] > scales[:-1]) and np.any(scales[1:] < scales[:-1])
    if "min_scale" in options:
        assert scales.min() == options["min_scale"] and scales.max() == options["max_scale"]
    if hysteresis > 1:  # some overflow left the scale unchanged
        assert any(run.found_inf[t] and scales[t + 1] == scales[t] for t in range(len(run.loss)))


def test_gradient_checks_exist():
    """The finite-difference checks of every example's backward (numpy reference and compiled
    step) are in test_examples.py, over the three examples."""
    import test_examples
    for name in ("test_reference_backward_matches_finite_differences",
                 "test_compiled_gradients_match_finite_differences"):
        assert callable(getattr(test_examples, name)), name
    assert {"mlp", "cnn", "transformer"} <= set(test_examples.IDS)
