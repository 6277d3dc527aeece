"""Tests of the amp_mlir Python package (python-bindings/, docs/Python.md).

The package is the one the build assembles in $AMP_BUILD_DIR/python_packages
(scripts/setup.sh builds it); test_pip_install checks `pip install
./python-bindings` as well.
"""
import copy
import json
import os
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.abspath(os.environ.get("AMP_BUILD_DIR", os.path.join(ROOT, "build")))
PACKAGES = os.path.join(BUILD, "python_packages")
sys.path.insert(0, PACKAGES)

import amp_mlir  # noqa: E402

LINEAR = os.path.join(ROOT, "test", "amp-run", "Inputs", "linear.mlir")
AMP_RUN = os.path.join(BUILD, "bin", "amp-run")
AMP_OPT = os.path.join(BUILD, "bin", "amp-opt")

RNG = np.random.default_rng(0)
X = RNG.normal(size=(8, 3)).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [3.0]], np.float32) + 0.5).astype(np.float32)


def batches(count):
    """Sequential batches of 4 samples, as amp-run --shuffle=false feeds them."""
    for s in range(count):
        first = (s % 2) * 4
        yield X[first:first + 4], Y[first:first + 4]


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# -- compile -------------------------------------------------------------------

def test_compile_text_file_and_kwargs_agree():
    with open(LINEAR) as f:
        text = f.read()
    from_file = amp_mlir.compile(LINEAR, "dtype=f16 init-scale=1024")
    from_text = amp_mlir.compile(text, "dtype=f16 init-scale=1024")
    from_kwargs = amp_mlir.compile(LINEAR, dtype="f16", init_scale=1024)
    assert from_file.ir == from_text.ir == from_kwargs.ir
    assert amp_mlir.options_string("dtype=f16", init_scale=1024, explain=True) == \
        "dtype=f16 init-scale=1024 explain=true"


def test_compile_matches_amp_opt():
    ours = amp_mlir.compile(LINEAR, "dtype=bf16 scaling=dynamic").ir
    theirs = subprocess.run([AMP_OPT, LINEAR, "--amp-pipeline=dtype=bf16 scaling=dynamic"],
                            capture_output=True, text=True, check=True).stdout
    assert ours.strip() == theirs.strip()


def test_compile_result():
    result = amp_mlir.compile(LINEAR, "dtype=f16")
    assert "amp.update" not in result.ir and "amp.seed" not in result.ir
    assert 'amp.state = "scale"' in result.ir and 'amp.state = "found_inf"' in result.ir
    assert "arith.truncf" in result.ir
    report = result.report
    assert report["dtype"] == "f16" and report["policy"] == "torch"
    assert report["casts"]["truncf"] >= 1
    assert report == amp_mlir.Session(LINEAR, "dtype=f16").report
    ops = {e.op for e in result.explanations}
    assert "linalg.matmul" in ops
    matmul = next(e for e in result.explanations if e.op == "linalg.matmul")
    assert matmul.message.startswith("f16 allow: default of linalg.matmul")
    assert matmul.location == f"{LINEAR}:21:9"


def test_compile_report_also_written(tmp_path):
    path = tmp_path / "report.json"
    result = amp_mlir.compile(LINEAR, "dtype=f16", report=path)
    assert json.loads(path.read_text()) == result.report


def test_level_o0_has_no_report():
    result = amp_mlir.compile(LINEAR, "level=O0")
    assert result.report is None and result.explanations == []
    assert "arith.truncf" not in result.ir


@pytest.mark.parametrize("options,message", [
    ("dtype=f8", "option 'dtype' must be f16 or bf16, got 'f8'"),
    ("bogus=1", "no such option bogus"),
    ("growth-factor=1", "option 'growth-factor'"),
    ("policy=/nowhere/p.json", "option 'policy'"),
])
def test_compile_bad_options(options, message):
    with pytest.raises(ValueError, match=message):
        amp_mlir.compile(LINEAR, options)


def test_compile_bad_ir_is_located():
    with pytest.raises(ValueError, match=r"<string>:1:\d+: error"):
        amp_mlir.compile("func.func @f(", "")
    with pytest.raises(ValueError, match=r"linear.mlir:28:10: error: 'arith.addf' is in no list"):
        amp_mlir.compile(LINEAR, policy="tensor-cores-only", unknown_ops="error")


def test_compiler_warnings_become_python_warnings():
    text = open(LINEAR).read().replace("grads(%gw, %gb :", "grads(%gw, %b :")
    pattern = r"<string>:77:12: warning: gradient #1 does not depend on the loss seed"
    with pytest.warns(amp_mlir.AmpWarning, match=pattern) as caught:
        amp_mlir.compile(text, "dtype=f16")
    assert len(caught) == 1 and "note: the loss seed is here" in str(caught[0].message)
    with pytest.warns(amp_mlir.AmpWarning, match=pattern):
        amp_mlir.Session(text, "dtype=f16")


def test_validate_policy(tmp_path):
    amp_mlir.validate_policy("tf")
    bad = tmp_path / "bad.json"
    bad.write_text('{"base": "torch",\n "allow": [3]}')
    with pytest.raises(ValueError, match=r"bad.json:1:2: error: \$.base: unknown key"):
        amp_mlir.validate_policy(bad)
    assert "torch" in amp_mlir.presets()


# -- run -----------------------------------------------------------------------

def test_fp32_session_matches_amp_run(tmp_path):
    """Python and amp-run share the runner: same parameters bit for bit."""
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "y.npy", Y)
    subprocess.run([AMP_RUN, LINEAR, f"--data={tmp_path}/x.npy,{tmp_path}/y.npy", "--steps=6",
                    "--shuffle=false", "--seed=3", "--print-every=0",
                    f"--save-state={tmp_path}/state"], check=True, capture_output=True)
    session = amp_mlir.Session(LINEAR, seed=3)
    assert [a.role for a in session.arguments] == \
        ["parameter"] * 2 + ["optimizer_state"] * 2 + ["data"] * 2
    for x, y in batches(6):
        result = session.step(x, y)
        assert result.scale is None and not result.found_inf
    for name, array in {**session.parameters, **session.optimizer_state}.items():
        assert same_bits(array, np.load(tmp_path / "state" / f"{name}.npy")), name
    assert session.steps_done == 6
    assert same_bits(session.result(session._step.loss_result),
                     np.array(result.loss, np.float32))


def test_f16_dynamic_scaling_and_overflow():
    session = amp_mlir.Session(LINEAR, "dtype=f16 init-scale=256")
    for x, y in batches(2):
        assert not session.step(x, y).found_inf
    before = session.state_dict()
    assert before["scaler"]["scale"] == 256.0 and before["scaler"]["_growth_tracker"] == 2
    x, y = next(batches(1))
    x = x.copy()
    x[0, 0] = np.inf
    result = session.step(arg4=x, arg5=y)
    assert result.found_inf and result.scale == 256.0
    after = session.state_dict()
    assert after["scaler"]["scale"] == 128.0 and after["scaler"]["_growth_tracker"] == 0
    for name in before["state"]:  # the step was skipped bit for bit
        assert same_bits(before["state"][name], after["state"][name])


BF16_STEP = open(LINEAR).read().replace(
    "%x: tensor<4x3xf32>, %y: tensor<4x1xf32>)",
    "%xb: tensor<4x3xbf16>, %yh: tensor<4x1xf16>)").replace(
    "  %zero = arith.constant 0.0 : f32\n",
    "  %zero = arith.constant 0.0 : f32\n"
    "  %x = arith.extf %xb : tensor<4x3xbf16> to tensor<4x3xf32>\n"
    "  %y = arith.extf %yh : tensor<4x1xf16> to tensor<4x1xf32>\n", 1) + textwrap.dedent("""
    func.func @round_bf16(%v: tensor<4x3xf32>) -> (tensor<4x3xbf16>, tensor<4x3xf16>) {
      %b = arith.truncf %v : tensor<4x3xf32> to tensor<4x3xbf16>
      %h = arith.truncf %v : tensor<4x3xf32> to tensor<4x3xf16>
      return %b, %h : tensor<4x3xbf16>, tensor<4x3xf16>
    }
    """)


def test_bf16_and_f16_arrays_in_and_out():
    bf16 = amp_mlir.Session(BF16_STEP, functions=["round_bf16"])
    data = [a for a in bf16.arguments if a.role == "data"]
    assert data[0].dtype == np.dtype(ml_dtypes.bfloat16) and data[1].dtype == np.float16
    f32 = amp_mlir.Session(LINEAR)
    # Values exact in bf16 and f16: both steps compute the same.
    x = (np.round(X[:4] * 4) / 4).astype(np.float32)
    y = (np.round(Y[:4] * 4) / 4).astype(np.float32)
    for _ in range(3):
        a = bf16.step(x.astype(ml_dtypes.bfloat16), y.astype(np.float16))
        b = f32.step(x, y)
        assert a.loss == b.loss
    for name in f32.parameters:
        assert same_bits(bf16.parameters[name], f32.parameters[name])
    with pytest.raises(TypeError, match="data argument 'arg4' must be bfloat16"):
        bf16.step(x, y.astype(np.float16))
    rounded_bf16, rounded_f16 = bf16.call("round_bf16", X[:4])
    assert same_bits(rounded_bf16, X[:4].astype(ml_dtypes.bfloat16))
    assert same_bits(rounded_f16, X[:4].astype(np.float16))


def test_predict_on_mlp():
    mlp = os.path.join(ROOT, "examples", "mlp.mlir")
    session = amp_mlir.Session(mlp, "dtype=f16", functions=["predict"])
    x = np.load(os.path.join(BUILD, "data", "digits_train_x.npy"))[:64]
    y = np.load(os.path.join(BUILD, "data", "digits_train_y.npy"))[:64]
    session.step(x, y)
    logits = session.predict(x)
    assert logits.shape == (64, 10) and logits.dtype == np.float32
    assert np.all(np.isfinite(logits))


# -- errors --------------------------------------------------------------------

@pytest.fixture(scope="module")
def linear_f16():
    return amp_mlir.Session(LINEAR, "dtype=f16")


def test_step_errors_name_the_argument(linear_f16):
    s = linear_f16
    x, y = next(batches(1))
    before = s.state_dict()
    with pytest.raises(TypeError, match=r"missing data argument\(s\): 'arg5' \(float32\[4, 1\]\)"):
        s.step(x)
    with pytest.raises(TypeError, match="takes 2 data argument"):
        s.step(x, y, y)
    with pytest.raises(TypeError, match="data argument 'arg4' must be float32.*float64"):
        s.step(x.astype(np.float64), y)
    with pytest.raises(ValueError, match=r"data argument 'arg5' must have shape \(4, 1\)"):
        s.step(x, Y)
    with pytest.raises(TypeError, match="unexpected argument 'labels'"):
        s.step(x, labels=y)
    with pytest.raises(TypeError, match="two values for argument 'arg4'"):
        s.step(x, y, arg4=x)
    after = s.state_dict()
    assert after["step"] == before["step"]
    for name in before["state"]:
        assert same_bits(before["state"][name], after["state"][name])


def test_session_errors(tmp_path):
    with pytest.raises(ValueError, match="no function @nothing with a body"):
        amp_mlir.Session(LINEAR, functions=["nothing"])
    with pytest.raises(ValueError, match="has no 'amp.seed'"):
        amp_mlir.Session(os.path.join(ROOT, "test", "amp-run", "Inputs", "bad-steps.mlir"),
                         func="no_seed")
    with pytest.raises(ValueError, match="option 'hysteresis'"):
        amp_mlir.Session(LINEAR, hysteresis=0)
    with pytest.raises(NotImplementedError, match="CPU only"):
        amp_mlir.Session(LINEAR, device="gpu")
    assert not amp_mlir.gpu_available()
    with pytest.raises(TypeError, match="source must be IR text or a path"):
        amp_mlir.Session(42)


def test_state_errors(linear_f16):
    state = linear_f16.state_dict()
    broken = copy.deepcopy(state)
    del broken["state"]["arg2"]
    with pytest.raises(KeyError, match="arg2"):
        linear_f16.load_state_dict(broken)
    broken = copy.deepcopy(state)
    broken["state"]["arg0"] = np.zeros((1, 3), np.float32)
    with pytest.raises(ValueError, match=r"state 'arg0' must have shape \(3, 1\)"):
        linear_f16.load_state_dict(broken)
    with pytest.raises(ValueError, match="'growth_factor' is 2.0 in the compiled step"):
        linear_f16.scaler.load_state_dict({**state["scaler"], "growth_factor": 4.0})
    with pytest.raises(KeyError, match="scale"):
        linear_f16.scaler.load_state_dict({"_growth_tracker": 1})


def test_errors_do_not_crash_the_interpreter():
    """A fresh interpreter survives every bad call and exits normally."""
    script = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {PACKAGES!r})
        import numpy as np, amp_mlir
        calls = [
            lambda: amp_mlir.compile({LINEAR!r}, "dtype=f16 report=/nowhere/r.json"),
            lambda: amp_mlir.compile("garbage", ""),
            lambda: amp_mlir.compile({LINEAR!r}, "dtype=f16 dot=/nowhere/x.dot"),
            lambda: amp_mlir.Session("module {{}}"),
            lambda: amp_mlir.Session({LINEAR!r})._step.get_argument(99),
            lambda: amp_mlir.Session({LINEAR!r})._step.set_argument(4, "f32", [4, 3], b"x"),
            lambda: amp_mlir.Session({LINEAR!r})._step.set_argument(4, "f32", [4, 2], bytes(32)),
            lambda: amp_mlir.Session({LINEAR!r})._step.set_argument(4, "f7", [4, 3], bytes(48)),
            lambda: amp_mlir.Session({LINEAR!r})._step.call("predict", []),
        ]
        for call in calls:
            try:
                call()
                print("no error")
            except Exception as e:
                print(type(e).__name__)
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["ValueError"] * 9


# -- state_dict ----------------------------------------------------------------

def test_grad_scaler_keys():
    session = amp_mlir.Session(LINEAR, "dtype=f16 init-scale=1024 growth-interval=3")
    assert set(session.scaler.state_dict()) == {
        "scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}
    for x, y in batches(4):  # grows once after 3 finite steps
        session.step(x, y)
    assert session.scaler.state_dict() == {"scale": 2048.0, "growth_factor": 2.0,
                                           "backoff_factor": 0.5, "growth_interval": 3,
                                           "_growth_tracker": 1}
    # A GradScaler's state (as torch.amp.GradScaler.state_dict() gives it).
    torch_state = {"scale": 1024.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                   "growth_interval": 3, "_growth_tracker": 2}
    session.scaler.load_state_dict(torch_state)
    assert session.scaler.state_dict() == torch_state
    assert session.step(*next(batches(1))).scale == 1024.0
    assert session.scaler.get_scale() == 2048.0
    assert amp_mlir.Session(LINEAR, "dtype=bf16").scaler.state_dict() == {}
    assert amp_mlir.Session(LINEAR, "dtype=f16 scaling=static init-scale=8") \
        .scaler.state_dict() == {"scale": 8.0}
    hysteresis = amp_mlir.Session(LINEAR, "dtype=f16 hysteresis=3").scaler.state_dict()
    assert hysteresis["_hysteresis"] == 3


@pytest.mark.parametrize("options", [None, "dtype=f16 growth-interval=2", "dtype=bf16"])
def test_state_dict_round_trip_continues_bit_identically(options, tmp_path):
    first = amp_mlir.Session(LINEAR, options, seed=5)
    for x, y in batches(3):
        first.step(x, y)
    saved = first.state_dict()
    # Through a file, as a user checkpoints.
    np.save(tmp_path / "ckpt.npy", np.array(saved, dtype=object), allow_pickle=True)
    loaded = np.load(tmp_path / "ckpt.npy", allow_pickle=True).item()
    second = amp_mlir.Session(LINEAR, options, seed=99)  # other init, overwritten
    second.load_state_dict(loaded)
    assert second.steps_done == 3
    for x, y in batches(5):
        a, b = first.step(x, y), second.step(x, y)
        assert (a.loss, a.scale, a.found_inf) == (b.loss, b.scale, b.found_inf)
    end_a, end_b = first.state_dict(), second.state_dict()
    assert end_a["scaler"] == end_b["scaler"] and end_a["step"] == end_b["step"] == 8
    for name in end_a["state"]:
        assert same_bits(end_a["state"][name], end_b["state"][name])


# -- packaging -----------------------------------------------------------------

def test_pip_install(tmp_path):
    """`pip install ./python-bindings` installs the package the build made."""
    target = tmp_path / "site"
    run = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(target),
                          "--no-deps", os.path.join(ROOT, "python-bindings")],
                         capture_output=True, text=True, env={**os.environ, "AMP_BUILD_DIR": BUILD})
    assert run.returncode == 0, run.stderr
    check = subprocess.run(
        [sys.executable, "-c", f"import amp_mlir; print(amp_mlir.__file__); "
                               f"print(amp_mlir.compile({LINEAR!r}, 'dtype=f16').report['dtype'])"],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(target), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])})
    assert check.returncode == 0, check.stderr
    assert check.stdout.split() == [str(target / "amp_mlir" / "__init__.py"), "f16"]


def test_train_digits_example(tmp_path):
    """examples/train_digits.py trains both runs and writes the plot."""
    out = tmp_path / "curves.png"
    run = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "train_digits.py"),
                          "--epochs", "2", "--out", str(out)],
                         capture_output=True, text=True, env={**os.environ, "AMP_BUILD_DIR": BUILD})
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].strip().startswith("fp32: 44 steps")
    assert lines[1].strip().startswith("f16 (dynamic scaling): 44 steps")
    accuracy = float(lines[1].split("test accuracy ")[1].split(",")[0])
    assert accuracy > 0.8
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- fit and accuracy: amp-run's batching and evaluation, from Python -----------------

def test_fit_is_the_amp_run_of_the_same_seed(tmp_path):
    """Session.fit feeds the batches amp-run feeds from --data files (the same
    permutation of every epoch, drawn from the seed), so both runs give the same losses
    and parameters, bit for bit, also across a resumed session."""
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "y.npy", Y)
    run = subprocess.run([AMP_RUN, LINEAR, "--amp=dtype=f16", "--seed", "7", "--epochs", "3",
                          "--data", f"{tmp_path}/x.npy,{tmp_path}/y.npy",
                          "--log", str(tmp_path / "log.csv"),
                          "--save-params", str(tmp_path / "params")],
                         capture_output=True, text=True, check=True)
    logged = np.loadtxt(tmp_path / "log.csv", delimiter=",", skiprows=1, usecols=1)
    session = amp_mlir.Session(LINEAR, "dtype=f16", seed=7)
    first = session.fit(X, Y, epochs=1)
    resumed = amp_mlir.Session(LINEAR, "dtype=f16")
    resumed.load_state_dict(session.state_dict())
    rest = resumed.fit(X, Y, steps=4)
    losses = [np.float32(r.loss) for r in first + rest]
    assert np.array_equal(losses, logged.astype(np.float32)), (losses, logged, run.stdout)
    for name, value in resumed.parameters.items():
        assert same_bits(value, np.load(tmp_path / "params" / f"{name}.npy")), name


def test_fit_and_accuracy_errors():
    session = amp_mlir.Session(LINEAR)
    with pytest.raises(TypeError, match="takes 2 data set"):
        session.fit(X)
    with pytest.raises(ValueError, match="holds f32\\[8x4\\]; data argument 'arg4'"):
        session.fit(np.zeros((8, 4), np.float32), Y)
    with pytest.raises(ValueError, match="batch size 3: the step takes batches of 4"):
        session.fit(X, Y, batch_size=3)
    assert session.steps_done == 0


def test_accuracy_on_mlp():
    mlp = os.path.join(ROOT, "examples", "mlp.mlir")
    session = amp_mlir.Session(mlp, functions=["predict"])
    x = np.load(os.path.join(BUILD, "data", "digits_train_x.npy"))
    y = np.load(os.path.join(BUILD, "data", "digits_train_y.npy"))
    before = session.accuracy(x, y)
    session.fit(x, y, epochs=2)
    after = session.accuracy(x, y)
    assert 0.0 <= before < 0.5 < after <= 1.0, (before, after)
