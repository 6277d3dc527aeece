"""The Python API under bad input (docs/Python.md, docs/Reliability.md): every mistake is a
Python exception with a readable message that leaves the session as it was, never a crash;
layouts numpy allows (strided views, Fortran order) give the same bits as C-contiguous
arrays; NaN data is data; a Session used from several threads takes one call at a time."""
import os
import sys
import threading

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("AMP_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.join(BUILD, "python_packages"))

import amp_mlir  # noqa: E402

INPUTS = os.path.join(ROOT, "test", "amp-run", "Inputs")
LINEAR = os.path.join(INPUTS, "linear.mlir")
DYNAMIC = os.path.join(INPUTS, "linear-dynamic.mlir")
RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3)).astype(np.float32)
Y = RNG.standard_normal((4, 1)).astype(np.float32)


def snapshot(s):
    state = s.state_dict()
    return ({k: v.tobytes() for k, v in state["state"].items()}, state["scaler"],
            state["step"], state["seed"])


@pytest.fixture
def session():
    return amp_mlir.Session(LINEAR, "dtype=f16", seed=1)


@pytest.mark.parametrize("value,error,message", [
    (X.astype(np.float64), TypeError, r"'arg4' must be float32\[4, 3\], got dtype float64"),
    (X.astype(">f4"), TypeError, r"got dtype '>f4' \(big-endian float32\)"),
    (X.astype(np.int32), TypeError, "got dtype int32"),
    (np.array([["a"] * 3] * 4), TypeError, "got dtype str"),
    (np.array([[object()] * 3] * 4), TypeError, "got dtype object"),
    (X[:2], ValueError, r"must have shape \(4, 3\) \(float32\), got \(2, 3\)"),
    (X.reshape(12), ValueError, r"got \(12,\)"),
    (np.float32(1.0), ValueError, r"got \(\)"),
])
def test_a_wrong_array_is_an_error_that_changes_nothing(session, value, error, message):
    before = snapshot(session)
    with pytest.raises(error, match=message):
        session.step(value, Y)
    assert snapshot(session) == before
    session.step(X, Y)  # the session still works


def test_strided_and_fortran_arrays_give_the_same_bits():
    wide = np.zeros((4, 6), np.float32)
    wide[:, ::2] = X
    layouts = [X, np.asfortranarray(X), wide[:, ::2], X[::-1][::-1], np.ascontiguousarray(X.T).T]
    results = []
    for x in layouts:
        s = amp_mlir.Session(LINEAR, seed=1)
        losses = [s.step(x, np.asfortranarray(Y)).loss for _ in range(3)]
        results.append((losses, {k: v.tobytes() for k, v in s.parameters.items()}))
    assert all(r == results[0] for r in results)
    # fit's data sets too.
    a, b = amp_mlir.Session(LINEAR, seed=1), amp_mlir.Session(LINEAR, seed=1)
    xs = RNG.standard_normal((8, 3)).astype(np.float32)
    ys = RNG.standard_normal((8, 1)).astype(np.float32)
    assert [r.loss for r in a.fit(xs, ys, steps=4)] == \
        [r.loss for r in b.fit(np.asfortranarray(xs), ys[::-1][::-1], steps=4)]


def test_nan_data_is_data():
    """NaN input is not an error: fp32 computes a NaN loss (and NaN parameters, as
    written); with loss scaling the step is skipped and nothing changes."""
    x = X.copy()
    x[1, 2] = np.nan
    plain = amp_mlir.Session(LINEAR, seed=1)
    assert np.isnan(plain.step(x, Y).loss)
    scaled = amp_mlir.Session(LINEAR, "dtype=f16", seed=1)
    before = snapshot(scaled)[0]
    r = scaled.step(x, Y)
    assert r.found_inf and snapshot(scaled)[0] == before
    assert scaled.scaler.get_scale() == 32768.0


def test_fit_rejects_bad_data_sets(session):
    before = snapshot(session)
    with pytest.raises(ValueError, match=r"data set #0: holds f64\[8x3\]; data argument "
                                          r"'arg4' \(#4\) is f32\[4x3\]"):
        session.fit(np.zeros((8, 3)), np.zeros((8, 1), np.float32))
    with pytest.raises(TypeError, match="has dtype complex128, which no step takes"):
        session.fit(np.zeros((8, 3), complex), np.zeros((8, 1), np.float32))
    with pytest.raises(TypeError, match=r"'>f4' \(big-endian float32\), which no step takes"):
        session.fit(np.zeros((8, 3), ">f4"), np.zeros((8, 1), np.float32))
    with pytest.raises(ValueError):
        session.fit(np.zeros((8, 4), np.float32), np.zeros((8, 1), np.float32))
    with pytest.raises(ValueError):
        session.fit(np.zeros((8, 3), np.float32), np.zeros((6, 1), np.float32))
    with pytest.raises(TypeError, match="takes 2 data set"):
        session.fit(np.zeros((8, 3), np.float32))
    assert snapshot(session) == before


def bad_state(s, change):
    state = s.state_dict()
    change(state)
    return state


@pytest.mark.parametrize("change,error,message", [
    (lambda d: d["state"].pop("arg0"), KeyError, r"lacks carried argument\(s\) \['arg0'\]"),
    (lambda d: d["state"].update(bogus=np.zeros(1, np.float32)), KeyError,
     "arrays for no carried argument: \\['bogus'\\]"),
    (lambda d: d["state"].update(arg0=np.zeros((1, 3), np.float32)), ValueError,
     r"state 'arg0' must have shape \(3, 1\)"),
    (lambda d: d["state"].update(arg0=np.zeros((3, 1))), TypeError, "got dtype float64"),
    (lambda d: d.update(state=[1, 2]), TypeError, "'state' must be a dict of arrays"),
    (lambda d: d["scaler"].update(scale=float("nan")), ValueError, "'scale' must be finite"),
    (lambda d: d["scaler"].update(scale="big"), ValueError, "'scale' must be a number"),
    (lambda d: d["scaler"].update(growth_factor=3.0), ValueError, "growth-factor=3.0"),
    (lambda d: d["scaler"].update(_growth_tracker=-1), ValueError,
     r"'_growth_tracker' must be an integer in \[0, 2147483647\]"),
    (lambda d: d["scaler"].pop("scale"), KeyError, "no 'scale'"),
    (lambda d: d.update(scaler=None), TypeError, "scaler state_dict must be a dict"),
    (lambda d: d.update(step="abc"), ValueError, "'step' must be a number"),
    (lambda d: d.update(step=-3), ValueError, "'step' must be an integer"),
    (lambda d: d.update(step=2.5), ValueError, "'step' must be an integer"),
    (lambda d: d.update(seed=2**70), ValueError, "'seed' must be an integer"),
    (lambda d: d.update(hyperparameters={"lr": 1.0}), KeyError, "no hyperparameter: 'lr'"),
])
def test_a_bad_state_dict_is_an_error_that_changes_nothing(session, change, error, message):
    session.step(X, Y)
    state = bad_state(session, change)
    session.step(X, Y)
    before = snapshot(session)
    with pytest.raises(error, match=message):
        session.load_state_dict(state)
    assert snapshot(session) == before


def test_a_64_bit_seed_loads_exactly(session):
    state = session.state_dict()
    state["seed"] = 2**64 - 1
    session.load_state_dict(state)
    assert session.seed == 2**64 - 1


def test_not_a_state_dict(session):
    with pytest.raises(TypeError, match="state_dict must be a dict, got list"):
        session.load_state_dict([1, 2, 3])


def test_hostile_policy_files(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text('{"add": ' + "[" * 100000 + "]" * 100000 + "}")
    with pytest.raises(ValueError, match="deep.json:1:72: error: arrays and objects nested"):
        amp_mlir.validate_policy(deep)
    with pytest.raises(ValueError, match="deep.json:1:72"):
        amp_mlir.compile(LINEAR, policy=deep)
    binary = tmp_path / "binary.json"
    binary.write_bytes(b'{"extends": "torch\xff\x00"}')
    with pytest.raises(ValueError, match="binary.json:1:"):
        amp_mlir.validate_policy(binary)
    truncated = tmp_path / "truncated.json"
    truncated.write_text('{"add": {"deny": ["math.exp"')
    with pytest.raises(ValueError, match="truncated.json:1:28: error: invalid JSON"):
        amp_mlir.validate_policy(truncated)
    with pytest.raises(ValueError, match="cannot read"):
        amp_mlir.validate_policy(tmp_path / "missing.json")


def test_a_session_used_from_threads_takes_one_call_at_a_time():
    """Two threads step one session of a dynamic batch with batches of different sizes:
    without the session's lock, one thread's batch could be set between the other's
    arrays and its run (the step would see two batch sizes, or the wrong batch)."""
    s = amp_mlir.Session(DYNAMIC, seed=1)
    batches = {n: (RNG.standard_normal((n, 3)).astype(np.float32),
                   RNG.standard_normal((n, 1)).astype(np.float32)) for n in (2, 8)}
    errors, losses = [], {2: [], 8: []}
    start = threading.Barrier(2)

    def train(n):
        start.wait()
        try:
            for _ in range(1000):
                losses[n].append(s.step(*batches[n]).loss)
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=train, args=(n,)) for n in batches]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, between any two calls
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors
    assert s.steps_done == 2000
    assert all(np.isfinite(v) for v in losses[2] + losses[8])
