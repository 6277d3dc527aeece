"""Generated training steps (stepgen.py) against the properties of properties.py, in every
mode: a fixed set of seeds that covers every layer, loss, optimizer and both batch kinds
(about 2 minutes on 2 cores); scripts/property-check.py runs more for a time budget.
docs/Reliability.md describes both."""
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("AMP_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.join(BUILD, "python_packages"))
sys.path.insert(0, HERE)

import amp_mlir  # noqa: E402
import properties  # noqa: E402
import stepgen  # noqa: E402

SEEDS = list(range(14)) + [17, 67]
# Seeds scripts/property-check.py found failing, each with the fix that made it pass.
REGRESSIONS = {
    1013: "amp-cpu-vectorize folded a transfer through an expand_shape (5e87525)",
}


def kinds(layers):
    for spec in layers:
        yield spec["kind"]
        yield from kinds(spec.get("inner", []))
        if spec["kind"] == "activation":
            yield spec["fn"]


def test_seeds_cover_the_generator():
    """The fixed seeds draw every layer, activation, loss and optimizer, and both a static
    and a dynamic batch."""
    drawn = [stepgen.draw(s) for s in SEEDS]
    seen = {k for cfg in drawn for k in kinds(cfg.layers)}
    seen |= {cfg.loss for cfg in drawn} | {cfg.optimizer for cfg in drawn}
    seen |= {"dynamic" if cfg.dynamic else "static" for cfg in drawn}
    seen |= {"lr input" for cfg in drawn if cfg.lr_input}
    seen |= {"token ids" if cfg.vocab else "float input" for cfg in drawn}
    wanted = {"dense", "scale_shift", "layernorm", "softmax", "attention", "slice", "loop",
              "branch", "conv", "residual", *stepgen.ACTIVATIONS, "ce_onehot", "ce_index",
              "mse", "sgd", "momentum", "adam", "dynamic", "static", "lr input", "token ids",
              "float input"}
    assert wanted <= seen, f"not drawn by SEEDS: {sorted(wanted - seen)}"


def test_generation_is_reproducible():
    assert stepgen.generate(3).text == stepgen.generate(3).text
    assert stepgen.generate(3).text != stepgen.generate(4).text


@pytest.mark.parametrize("seed", SEEDS + list(REGRESSIONS))
def test_properties(seed):
    failures = properties.check(stepgen.generate(seed))
    assert not failures, "\n".join(failures)


# The checker itself: each property fails when what it compares is made wrong.

def sabotage(case, function, returned):
    """Squares the loss `function` returns (its first result, named `returned`)."""
    start = case.text.index(f"func.func @{function}")
    end = case.text.index("return", start)
    patched = (case.text[:end] + f"%sabotage = arith.mulf {returned}, {returned} : tensor<"
               + ("f64" if function.endswith("64") else "f32") + ">\n  " + case.text[end:])
    line = patched.index("return", end + 10)
    patched = patched[:line] + patched[line:].replace(returned, "%sabotage", 1)
    case.text = patched
    return case


def first_returned(case, function):
    start = case.text.index(f"func.func @{function}")
    ret = case.text.index("return ", start)
    return case.text[ret + 7:].split(",")[0].split(" ")[0]


@pytest.mark.parametrize("function,expected", [("plain", "plain twin"),
                                               ("loss64", "finite differences")])
def test_checker_sees_a_wrong_twin(function, expected):
    case = stepgen.generate(1)
    sabotage(case, function, first_returned(case, function))
    failures = properties.check(case, modes=[None])
    assert any(expected in f for f in failures), failures


def test_checker_sees_a_loss_out_of_tolerance(monkeypatch):
    monkeypatch.setattr(properties, "LOSS_TOLERANCE", {"f16": 0.0, "bf16": 0.0})
    failures = properties.check(stepgen.generate(1), modes=[None, "dtype=bf16"])
    assert any("vs fp32" in f for f in failures), failures


def test_checker_sees_an_injected_gradient_that_is_not_skipped(monkeypatch):
    """With the poison input left out of the gradient, the step with an inf or NaN in it
    runs normally: the checker must say so."""
    assert stepgen.draw(11).vocab
    monkeypatch.setattr(stepgen.Builder, "poison_gradient",
                        lambda self, params: stepgen.V("%poison", (self.B,), self.elt))
    failures = properties.check(stepgen.generate(11), modes=["dtype=f16"])
    assert any("in a gradient was not skipped" in f for f in failures), failures


LOW_SUM = """
  %s = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<4x8xf16>) outs(%z : tensor<4xf16>) {
  ^bb0(%in: f16, %acc: f16):
    %0 = arith.BODY %in, %acc : f16
    linalg.yield %0 : f16
  } -> tensor<4xf16>
  %m = linalg.matmul ins(%p, %q : tensor<4x8xbf16>, tensor<8x2xbf16>) outs(%o : tensor<4x2xf32>) -> tensor<4x2xf32>
"""


def test_accumulators_finds_low_sums():
    """A reduction that adds in f16 is found; one that takes a maximum (exact in any type)
    and a matmul yielding f32 are not failures."""
    found = dict(properties.accumulators(LOW_SUM.replace("BODY", "addf")))
    assert found == {"the reducing linalg.generic of line 2": "f16", "linalg.matmul": "f32"}
    assert dict(properties.accumulators(LOW_SUM.replace("BODY", "maximumf"))) == \
        {"linalg.matmul": "f32"}


def test_fd_gradients_match_numpy_for_a_dense_step():
    """@grads64 of a one-layer step (the head alone) is the softmax cross-entropy gradient
    written in numpy."""
    cfg = stepgen.draw(0)
    cfg.layers, cfg.loss, cfg.dynamic = [], "ce_onehot", False
    text = "\n".join(stepgen.Builder(cfg, m).build() for m in ("train_step", "grads64"))
    s = amp_mlir.Session(text, func="train_step", functions=["grads64"])
    rng = np.random.default_rng(0)
    x = rng.standard_normal((cfg.batch, cfg.features))
    y = np.eye(cfg.classes)[rng.integers(0, cfg.classes, cfg.batch)]
    w, b = (v.astype(np.float64) for v in s.parameters.values())
    loss, gw, gb = s.call("grads64", w, b, x, y)
    z = x @ w + b
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    assert float(loss) == pytest.approx(-(y * np.log(p)).sum() / cfg.batch, rel=1e-12)
    np.testing.assert_allclose(gw, x.T @ (p - y) / cfg.batch, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(gb, (p - y).sum(0) / cfg.batch, rtol=1e-10, atol=1e-14)
