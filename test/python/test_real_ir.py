"""Sessions on the IR real front ends produce: a dynamic batch dimension, buffers the forward
updates, and names (docs/TrainingStepIR.md).

- test/Inputs/mlp-dynamic-batch.mlir: an MLP whose data arguments are tensor<?x...>, in the
  shape torch-mlir gives such steps; its static twins are the same text with the batch size
  written in.
- test/amp-run/Inputs/buffer.mlir: linear regression with a running mean as BatchNorm keeps.
"""
import os
import re
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.abspath(os.environ.get("AMP_BUILD_DIR", os.path.join(ROOT, "build")))
sys.path.insert(0, os.path.join(BUILD, "python_packages"))

import amp_mlir  # noqa: E402

DYNAMIC = os.path.join(ROOT, "test", "Inputs", "mlp-dynamic-batch.mlir")
BUFFER = os.path.join(ROOT, "test", "amp-run", "Inputs", "buffer.mlir")

RNG = np.random.default_rng(0)
X = RNG.normal(size=(21, 8)).astype(np.float32)
Y = np.eye(4, dtype=np.float32)[(X @ RNG.normal(size=(8, 4))).argmax(1)]


def static_twin(batch):
    """The dynamic-batch step with `batch` written in for every `?`."""
    with open(DYNAMIC) as f:
        text = f.read()
    text = re.sub(r"tensor<\?", f"tensor<{batch}", text)
    return text.replace("tensor.empty(%n)", "tensor.empty()")


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("options", [None, "dtype=f16", "dtype=bf16"])
def test_one_compiled_step_serves_every_batch_size(options):
    """Batches of 16 then 5 through one dynamic step equal the same batches through two
    static compilations, started from the same state. Tolerance: none (bit for bit): both
    lowerings keep the loops' summation order."""
    dynamic = amp_mlir.Session(DYNAMIC, options)
    assert [a.shape for a in dynamic.data_arguments] == [(None, 8), (None, 4)]
    assert dynamic.data_arguments[0].describe() == "float32[?, 8]"
    state = dynamic.state_dict()
    results = []
    for batch, rows in ((16, slice(0, 16)), (5, slice(16, 21))):
        twin = amp_mlir.Session(static_twin(batch), options)
        twin.load_state_dict(state)
        expected = twin.step(X[rows], Y[rows])
        got = dynamic.step(X[rows], Y[rows])
        assert got.loss == expected.loss, (batch, got.loss, expected.loss)
        assert got.found_inf == expected.found_inf and got.scale == expected.scale
        for name, value in twin.parameters.items():
            assert same_bits(dynamic.parameters[name], value), (batch, name)
        state = twin.state_dict()
        results.append(got.loss)
    assert results[0] != results[1]


def test_dynamic_batch_errors_name_the_arguments():
    session = amp_mlir.Session(DYNAMIC)
    with pytest.raises(ValueError, match=r"data argument 'y' must have shape \(\?, 4\)"):
        session.step(X[:4], Y[:4, :3])
    with pytest.raises(ValueError, match=r"'x' \(4 rows\), 'y' \(3 rows\) hold batches of "
                                         "different sizes"):
        session.step(X[:4], Y[:3])
    with pytest.raises(ValueError, match=r"must have shape \(\?, 8\)"):
        session.step(X[:0], Y[:0])
    assert session.steps_done == 0


def test_names_key_the_state_dict_and_round_trip():
    first = amp_mlir.Session(DYNAMIC, "dtype=f16", seed=3)
    assert [a.name for a in first.arguments] == [
        "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "x", "y", "scaler.scale",
        "scaler.growth_tracker"]
    first.step(X[:8], Y[:8])
    state = first.state_dict()
    assert set(state["state"]) == {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}
    second = amp_mlir.Session(DYNAMIC, "dtype=f16")
    second.load_state_dict(state)
    a, b = first.step(X[8:20], Y[8:20]), second.step(X[8:20], Y[8:20])
    assert a.loss == b.loss
    for name in state["state"]:
        assert same_bits(first.parameters[name], second.parameters[name]), name
    broken = dict(state, state={**state["state"], "arg0": state["state"]["fc1.weight"]})
    with pytest.raises(KeyError, match="arg0"):
        second.load_state_dict(broken)


def test_buffers_are_carried_saved_and_never_guarded():
    """Every step of the f16 session overflows (init-scale 1e30) and is skipped: the
    parameters stay, the running mean moves as in fp32, as PyTorch updates BatchNorm's
    statistics on a step GradScaler skips. Tolerance: none."""
    x = RNG.normal(size=(4, 3)).astype(np.float32)
    y = RNG.normal(size=(4, 1)).astype(np.float32)
    fp32 = amp_mlir.Session(BUFFER)
    skipped = amp_mlir.Session(BUFFER, "dtype=f16 init-scale=1e30")
    assert [a.role for a in fp32.arguments] == ["parameter", "parameter", "buffer", "data",
                                                "data"]
    initial = skipped.parameters
    for _ in range(3):
        fp32.step(x, y)
        assert skipped.step(x, y).found_inf
    for name, value in initial.items():
        assert same_bits(skipped.parameters[name], value), name
    mean = np.zeros(3, np.float32)
    for _ in range(3):
        mean = np.float32(0.9) * mean + np.float32(0.025) * x.sum(0, dtype=np.float32)
    np.testing.assert_allclose(fp32.buffers["norm.running_mean"], mean, rtol=1e-6)
    assert same_bits(skipped.buffers["norm.running_mean"], fp32.buffers["norm.running_mean"])
    assert "norm.running_mean" in skipped.state_dict()["state"]


# -- a recurrent step: scf.for loops whose hidden state starts as a fill -----------------

RNN = os.path.join(ROOT, "test", "Inputs", "rnn-scf-for.mlir")
RNN_X = RNG.normal(size=(4, 4, 3)).astype(np.float32)
RNN_Y = np.eye(2, dtype=np.float32)[(RNN_X.sum((1, 2)) > 0).astype(int)]


def rnn_loss(params, x, y):
    """The step's loss in f64: an Elman RNN from h = 0 over 4 steps, a linear head,
    softmax cross-entropy, mean over the batch."""
    wx, wh, wo, bo = (params[n].astype(np.float64) for n in
                      ("rnn.weight_ih", "rnn.weight_hh", "head.weight", "head.bias"))
    h = np.zeros((x.shape[0], wh.shape[0]))
    for t in range(x.shape[1]):
        h = np.tanh(x[:, t] @ wx + h @ wh)
    logits = h @ wo + bo
    logits -= logits.max(1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    return -(y * logp).sum() / x.shape[0]


def test_rnn_gradients_match_finite_differences():
    """One fp32 SGD step (lr 0.1) gives the gradient (old - new) / lr of every parameter,
    compared with central differences of rnn_loss in f64 (eps 1e-5). Tolerance: 2e-4
    absolute plus 1e-3 relative, the f32 rounding of a 4-step recurrence."""
    session = amp_mlir.Session(RNN)
    before = session.parameters
    result = session.step(RNN_X, RNN_Y)
    assert abs(result.loss - rnn_loss(before, RNN_X, RNN_Y)) < 1e-5
    after = session.parameters
    for name, value in before.items():
        grad = (value.astype(np.float64) - after[name]) / 0.1
        numeric = np.zeros_like(grad)
        for index in np.ndindex(value.shape):
            plus = {k: v.astype(np.float64) for k, v in before.items()}
            minus = {k: v.astype(np.float64) for k, v in before.items()}
            plus[name][index] += 1e-5
            minus[name][index] -= 1e-5
            numeric[index] = (rnn_loss(plus, RNN_X, RNN_Y) - rnn_loss(minus, RNN_X, RNN_Y)) / 2e-5
        np.testing.assert_allclose(grad, numeric, atol=2e-4, rtol=1e-3, err_msg=name)


@pytest.mark.parametrize("options", ["dtype=f16", "dtype=bf16"])
def test_rnn_trains_in_low_precision(options):
    """60 steps on one batch from the same start: the low-precision loss curve stays within
    0.05 (f16) / 0.1 (bf16) absolute of fp32's and ends below half the first loss."""
    fp32, low = amp_mlir.Session(RNN), amp_mlir.Session(RNN, options)
    low.load_state_dict({**fp32.state_dict(), "scaler": low.scaler.state_dict()})
    tolerance = 0.05 if "f16" in options and "bf16" not in options else 0.1
    first = None
    for _ in range(60):
        a, b = fp32.step(RNN_X, RNN_Y), low.step(RNN_X, RNN_Y)
        first = first or a.loss
        assert not b.found_inf
        assert abs(a.loss - b.loss) < tolerance, (a.loss, b.loss)
    assert b.loss < first / 2


# -- a CNN brought in from PyTorch through torch-mlir ------------------------------------

CNN = os.path.join(ROOT, "test", "Inputs", "torch", "cnn_bn.mlir")


@pytest.fixture(scope="module")
def imported_cnn():
    return amp_mlir.import_step(CNN)


@pytest.mark.parametrize("options", [None, "dtype=f16", "dtype=bf16"])
def test_imported_cnn_trains_with_its_hyperparameters(imported_cnn, options):
    """The CNN fixture (Conv2d, BatchNorm2d, ReLU, max and average pooling, Linear,
    cross-entropy, SGD with momentum) in the contract's form: its BatchNorm statistics are
    buffers, its learning rate a hyperparameter that starts at the traced value and can be
    changed between steps. BatchNorm weights start at one, as in PyTorch; 30 steps on one
    batch halve the loss."""
    session = amp_mlir.Session(imported_cnn, options)
    roles = {a.name: a.role for a in session.arguments}
    assert roles["bn1.running_var"] == "buffer" and roles["param_groups.0.lr"] == "hyperparameter"
    assert session.hyperparameters["param_groups.0.lr"] == np.float32(0.05)
    state = session.state_dict()
    for name in ("bn1.weight", "bn2.weight"):
        state["state"][name] = np.ones_like(state["state"][name])
    session.load_state_dict(state)
    x = RNG.normal(size=(4, 3, 8, 8)).astype(np.float32)
    y = np.array([0, 1, 2, 3], np.int64)
    first = session.step(x, y).loss
    for _ in range(29):
        last = session.step(x, y)
    assert not last.found_inf and last.loss < first / 2, (first, last.loss)
    assert np.all(session.buffers["bn1.running_var"] != 1.0)
    assert session.buffers["bn1.num_batches_tracked"] == 30
    # A learning rate of zero stops the parameters, not the statistics.
    session.set_hyperparameter("param_groups.0.lr", 0.0)
    frozen, statistics = session.parameters, session.buffers
    session.step(x, y)
    for name, value in session.parameters.items():
        assert same_bits(value, frozen[name]), name
    assert not same_bits(session.buffers["bn1.running_mean"], statistics["bn1.running_mean"])
    with pytest.raises(KeyError, match="no hyperparameter 'lr'"):
        session.set_hyperparameter("lr", 0.1)


def test_import_step_keeps_the_importers_locations(imported_cnn):
    """The front end's locations (module path, aten op) survive amp-import-step, so the
    pipeline's diagnostics and report still name them."""
    assert 'loc("pool1")' in imported_cnn
    assert "aten.max_pool2d_with_indices_backward.default" in imported_cnn


def test_import_step_errors_are_located():
    with open(CNN) as f:
        text = f.read()
    broken = text.replace('amp.import_role = "seed"', 'amp.import_role = "data"', 1)
    with pytest.raises(ValueError, match="has no argument of role 'seed'"):
        amp_mlir.import_step(broken)
