"""Gradient and numerics checks of the example training steps (examples/*.mlir).

- The numpy references' hand-written backward against finite differences (float64).
- Each example parses and verifies with amp-opt.
- Each example, with the amp markers stripped and lowered by upstream MLIR passes (and, once
  it is built, run by amp-run in fp32), computes the same loss, new parameters and optimizer
  state as its numpy reference, and @predict the same logits.
- The gradients inside each compiled MLIR step, recovered from its update, agree with the
  numpy backward and with a finite difference of the compiled loss.
- Each example trains on the digits; generated steps verify and count their ops right.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)

from examples.reference import adam_mlp, cnn, common, mlir_cpu, mlp, transformer  # noqa: E402

BUILD = os.environ.get("AMP_BUILD_DIR", os.path.join(ROOT, "build"))
AMP_OPT = os.path.join(BUILD, "bin", "amp-opt")
AMP_RUN = os.path.join(BUILD, "bin", "amp-run")
GEN_STEP = os.path.join(ROOT, "bench", "gen_step.py")

# Small steps of bench/gen_step.py, checked like the examples: (reference, generator args).
GENERATED = {
    "gen_mlp3": (adam_mlp.AdamMLP(layers=3, width=32, features=64, classes=10, batch=16),
                 ["mlp", "--layers", "3", "--width", "32", "--batch", "16", "--predict"]),
    "gen_transformer2": (
        transformer.Transformer(blocks=2, batch=4, seq=6, features=5, dmodel=12, heads=3, ff=20,
                                classes=7),
        ["transformer", "--blocks", "2", "--batch", "4", "--seq", "6", "--features", "5",
         "--dmodel", "12", "--heads", "3", "--ff", "20", "--classes", "7", "--predict"]),
}
MODULES = [mlp, cnn, transformer.EXAMPLE] + [model for model, _ in GENERATED.values()]
IDS = ["mlp", "cnn", "transformer"] + list(GENERATED)


def generate(args, path):
    """Runs bench/gen_step.py; returns the op count it prints."""
    run = subprocess.run([sys.executable, GEN_STEP, *args, "-o", path], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    return int(run.stderr.split(":")[1].split()[0])


_paths = {}


def mlir_path(module, tmp_path_factory):
    if module.MLIR:
        return os.path.join(ROOT, "examples", module.MLIR)
    if module not in _paths:
        name, args = next((k, a) for k, (m, a) in GENERATED.items() if m is module)
        _paths[module] = str(tmp_path_factory.mktemp(name) / "step.mlir")
        generate(args, _paths[module])
    return _paths[module]


_libs = {}


def library(module, tmp_path_factory):
    """The upstream-lowered fp32 module of `module`, compiled once per session."""
    if module not in _libs:
        text = mlir_cpu.strip_amp(mlir_path(module, tmp_path_factory), AMP_OPT)
        _libs[module] = mlir_cpu.compile_step(text, str(tmp_path_factory.mktemp("lib")))
    return _libs[module]


def compiled(module, tmp_path_factory):
    shapes = [()] + [s for _, s in common.state_shapes(module)]
    return mlir_cpu.Step(library(module, tmp_path_factory), module.FUNC, shapes)


class AmpRunStep:
    """One fp32 step through amp-run, called like mlir_cpu.Step: the carried state goes in
    with --load-state (arg<i>.npy, step.npy), comes back from --save-state, and the loss
    from the --log CSV."""

    def __init__(self, path, module, workdir):
        self.path, self.module, self.workdir = path, module, workdir
        self.carried = len(module.PARAMS) + len(module.OPT_STATE)

    def __call__(self, *arrays):
        load, save = os.path.join(self.workdir, "load"), os.path.join(self.workdir, "save")
        for d in (load, save):
            os.makedirs(d, exist_ok=True)
        for i, a in enumerate(arrays[:self.carried]):
            np.save(os.path.join(load, f"arg{i}.npy"), np.asarray(a, np.float32))
        np.save(os.path.join(load, "step.npy"), np.zeros(2, np.int64))
        data = []
        for (name, _), a in zip(self.module.DATA, arrays[self.carried:]):
            data.append(os.path.join(self.workdir, f"{name}.npy"))
            np.save(data[-1], np.asarray(a, np.float32))
        log = os.path.join(self.workdir, "log.csv")
        run = subprocess.run([AMP_RUN, self.path, "--data", ",".join(data), "--steps", "1",
                              "--shuffle=false", "--load-state", load, "--save-state", save,
                              "--log", log, "--print-every", "0"],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stdout + run.stderr
        with open(log) as f:
            header, row = f.read().split()[:2]
        loss = float(row.split(",")[header.split(",").index("loss")])
        return [np.float32(loss)] + [np.load(os.path.join(save, f"arg{i}.npy"))
                                     for i in range(self.carried)]


EXECUTORS = ["upstream", "amp-run"]


def executor_step(executor, module, tmp_path_factory):
    """The fp32 step of `module` run by upstream MLIR passes (ctypes) or by amp-run."""
    if executor == "upstream":
        return compiled(module, tmp_path_factory)
    if not os.path.exists(AMP_RUN):
        pytest.fail(f"{AMP_RUN} is not built: run scripts/setup.sh", pytrace=False)
    return AmpRunStep(mlir_path(module, tmp_path_factory), module,
                      str(tmp_path_factory.mktemp("amp-run")))


def compiled_predict(module, tmp_path_factory):
    batch, classes = module.DATA[1][1]
    return mlir_cpu.Step(library(module, tmp_path_factory), "predict", [(batch, classes)])


def call(module, step, params, state, x, y):
    """Runs the compiled step; returns (loss, new params, new state) as dicts."""
    args = [params[n] for n, _ in module.PARAMS] + [state[n] for n, _ in module.OPT_STATE]
    out = step(*args, x, y)
    names = [n for n, _ in module.PARAMS]
    new_params = dict(zip(names, out[1:1 + len(names)]))
    new_state = dict(zip([n for n, _ in module.OPT_STATE], out[1 + len(names):]))
    return float(out[0]), new_params, new_state


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_reference_backward_matches_finite_differences(module):
    rng = np.random.default_rng(1)
    params = module.init_params(rng)
    x, y = common.random_batch(module, rng)
    assert common.finite_difference_check(module, params, x, y, rng) < 1e-4


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_example_verifies_with_amp_opt(module, tmp_path_factory):
    run = subprocess.run([AMP_OPT, mlir_path(module, tmp_path_factory)], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    assert "amp.seed" in run.stdout and "amp.update" in run.stdout


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_compiled_step_matches_reference(module, executor, tmp_path_factory):
    step = executor_step(executor, module, tmp_path_factory)
    rng = np.random.default_rng(2)
    params = module.init_params(rng)
    state = common.zeros_state(module)
    x, y = common.random_batch(module, rng)
    # Two steps, so optimizer state that starts at zero is also checked when it is not.
    for _ in range(2):
        loss, new_params, new_state = call(module, step, params, state, x, y)
        ref_loss, grads = module.loss_and_grads(params, x, y)
        ref_params, ref_state = module.update(params, state, grads)
        assert loss == pytest.approx(float(ref_loss), rel=1e-5)
        for name, value in ref_params.items():
            np.testing.assert_allclose(new_params[name], value, rtol=1e-4, atol=1e-6,
                                       err_msg=name)
        for name, value in ref_state.items():
            np.testing.assert_allclose(new_state[name], value, rtol=1e-4, atol=1e-6,
                                       err_msg=name)
        params, state = new_params, new_state


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_compiled_gradients_match_finite_differences(module, executor, tmp_path_factory):
    step = executor_step(executor, module, tmp_path_factory)
    rng = np.random.default_rng(3)
    params = module.init_params(rng)
    zeros = common.zeros_state(module)
    x, y = common.random_batch(module, rng)
    _, new_params, new_state = call(module, step, params, zeros, x, y)
    grads = module.grads_from_update(params, zeros, new_params, new_state)
    _, ref_grads = module.loss_and_grads(
        {k: v.astype(np.float64) for k, v in params.items()},
        x.astype(np.float64), y.astype(np.float64))
    for name, value in ref_grads.items():
        scale = np.abs(value).max()
        np.testing.assert_allclose(grads[name], value, rtol=0, atol=2e-3 * scale + 1e-7,
                                   err_msg=name)

    def loss(p):
        return call(module, step, p, zeros, x, y)[0]

    error, numeric, analytic = common.directional_check(loss, params, grads, rng, eps=1e-2)
    assert error < 2e-2, (numeric, analytic)


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_compiled_predict_matches_reference(module, tmp_path_factory):
    predict = compiled_predict(module, tmp_path_factory)
    rng = np.random.default_rng(4)
    params = module.init_params(rng)
    x, _ = common.random_batch(module, rng)
    (logits,) = predict(*[params[n] for n, _ in module.PARAMS], x)
    np.testing.assert_allclose(logits, module.forward(params, x)[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("module,epochs,accuracy", [(mlp, 3, 0.9), (cnn, 6, 0.85),
                                                    (transformer.EXAMPLE, 8, 0.8)],
                         ids=IDS[:3])
def test_example_learns_digits(module, epochs, accuracy, tmp_path_factory):
    """The compiled fp32 step trains on the digits data (build/data) to a test accuracy."""
    data = os.path.join(BUILD, "data")
    x, y = (np.load(os.path.join(data, f"digits_train_{k}.npy")) for k in ("x", "y"))
    test_x, test_labels = (np.load(os.path.join(data, f"digits_test_{k}.npy"))
                           for k in ("x", "labels"))
    step, predict = compiled(module, tmp_path_factory), compiled_predict(module, tmp_path_factory)
    params = module.init_params(np.random.default_rng(5))
    state = common.zeros_state(module)
    batch = module.DATA[0][1][0]
    for _ in range(epochs):
        for first in range(0, len(x) - batch + 1, batch):
            _, params, state = call(module, step, params, state, x[first:first + batch],
                                    y[first:first + batch])
    correct = 0
    for first in range(0, len(test_x) - batch + 1, batch):
        (logits,) = predict(*[params[n] for n, _ in module.PARAMS], test_x[first:first + batch])
        correct += (logits.argmax(1) == test_labels[first:first + batch]).sum()
    assert correct / (len(test_x) // batch * batch) > accuracy


@pytest.mark.parametrize("args", [["mlp", "--layers", "10"], ["transformer", "--blocks", "1"],
                                  ["transformer", "--blocks", "120"]],
                         ids=["mlp-1k", "transformer-1k", "transformer-100k"])
def test_generated_step_verifies_and_counts_ops(args, tmp_path):
    """Large generated steps verify, and the op count printed is what MLIR counts."""
    path = str(tmp_path / "step.mlir")
    ops = generate(args, path)
    run = subprocess.run([AMP_OPT, path, "--print-op-stats", "-o", os.devnull],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    counted = sum(int(line.split(",")[1]) for line in run.stderr.splitlines()
                  if "," in line and "builtin.module" not in line)
    assert counted == ops
    assert ops >= (100000 if args[-1] == "120" else 1000)
