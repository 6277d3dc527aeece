"""amp-cpu-approximate-math (docs/CPU.md, "Math functions"): the polynomial approximations of
f32 exp, expm1, log, log1p, tanh and erf against float64 references, in units in the last
place of the f32 result, over the ranges a training step meets (and tiny arguments, where
expm1, log1p, tanh and erf are about x), with the special values: infinities, NaN, zeros,
overflow and underflow. The pass runs on a linalg body; upstream mlir-opt, mlir-translate
and llc compile the rest (examples/reference/mlir_cpu.py), so the lowering under test is the
approximation alone.
"""
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import special

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)

from examples.reference import mlir_cpu  # noqa: E402

BUILD = os.environ.get("AMP_BUILD_DIR", os.path.join(ROOT, "build"))
AMP_OPT = os.path.join(BUILD, "bin", "amp-opt")
N = 1 << 15

# name: (float64 reference, draws of f32 arguments, the largest error allowed in ulp; the
# measured maxima of 2^17 arguments were 0.95, 2.35, 0.74, 2.32, 4.21 and 4.04).
FUNCTIONS = {
    "exp": (np.exp, lambda r: [r.uniform(-87, 88, N), r.uniform(-1, 1, N)], 1.5),
    "expm1": (np.expm1, lambda r: [r.uniform(-20, 20, N), r.uniform(-1e-3, 1e-3, N)], 3),
    "log": (np.log, lambda r: [np.exp(r.uniform(-80, 80, 2 * N))], 1.5),
    "log1p": (np.log1p, lambda r: [r.uniform(-0.999, 1, N), np.exp(r.uniform(-20, 20, N))], 3),
    "tanh": (np.tanh, lambda r: [r.uniform(-10, 10, N), r.uniform(-1e-3, 1e-3, N)], 5),
    "erf": (special.erf, lambda r: [r.uniform(-5, 5, N), r.uniform(-1e-3, 1e-3, N)], 5),
}

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 89.0, -104.0, 1e38, -1e38, -1.0, -2.0],
                   dtype=np.float32)


def approximated(name, size, workdir):
    """The C interface of `f(x) = <name>(x)` elementwise on `size` f32 values, its math op
    rewritten by amp-cpu-approximate-math, built in `workdir`."""
    text = f"""
func.func @f(%x: tensor<{size}xf32>) -> tensor<{size}xf32> {{
  %e = tensor.empty() : tensor<{size}xf32>
  %y = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}}
      ins(%x : tensor<{size}xf32>) outs(%e : tensor<{size}xf32>) {{
  ^bb0(%a: f32, %b: f32):
    %r = math.{name} %a : f32
    linalg.yield %r : f32
  }} -> tensor<{size}xf32>
  return %y : tensor<{size}xf32>
}}"""
    run = subprocess.run([AMP_OPT, "--amp-cpu-approximate-math"], input=text,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert f"math.{name}" not in run.stdout
    return mlir_cpu.Step(mlir_cpu.compile_step(run.stdout, str(workdir)), "f", [(size,)])


@pytest.mark.parametrize("name", FUNCTIONS)
def test_approximation_is_within_its_ulps(name, tmp_path):
    reference, draw, tolerance = FUNCTIONS[name]
    x = np.concatenate(draw(np.random.default_rng(0)) + [SPECIAL]).astype(np.float32)
    got = approximated(name, x.size, tmp_path)(x)[0].astype(np.float64)
    with np.errstate(all="ignore"):
        exact = reference(x.astype(np.float64))
        rounded = exact.astype(np.float32)
    # Where the f32 result is NaN, an infinity or a zero, the approximation gives it exactly.
    exactly = np.isnan(rounded) | np.isinf(rounded) | (rounded == 0)
    np.testing.assert_array_equal(got[exactly], rounded[exactly])
    ulp = np.spacing(np.abs(rounded[~exactly])).astype(np.float64)
    error = np.abs(got[~exactly] - exact[~exactly]) / ulp
    assert error.max() <= tolerance, (name, error.max(), x[~exactly][error.argmax()])


def test_log_of_a_subnormal_is_that_of_the_smallest_normal(tmp_path):
    """The approximation reads a subnormal argument of log as the smallest normal number
    (docs/CPU.md says so): about -87.34 where libm gives down to -103.3."""
    x = np.array([1e-40, np.finfo(np.float32).tiny], dtype=np.float32)
    got = approximated("log", x.size, tmp_path)(x)[0]
    assert got[0] == got[1]
    assert abs(got[1] - np.log(np.float64(x[1]))) < 1e-4
