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
