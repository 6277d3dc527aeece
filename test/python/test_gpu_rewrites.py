"""The GPU lowering, checked on the CPU: no GPU has run the compiled steps yet, so this is where
what `amp-lower-to-nvvm` computes is checked, short of its device code and runtime.

- `amp-gpu-tensor-rewrites`: its rewrites of the step on tensors (scalar reads sunk into kernels,
  elementwise producers fused into their consumers, large reductions split over threads);
- `amp-gpu-host-emulation`: everything up to its kernels (those rewrites, device bufferization
  with one fill per writer, the views and beta chosen for the runtime matmuls, kernels with their
  launch sizes, thread indexing and guards), with device memory, the matmuls and the kernels run
  on the host (`amp-gpu-emulate-on-host`, which also asserts CUDA's launch limits); `matmul-f32`
  also sends the f32 contractions of the fp32 steps through the matmul. Not checked here: the
  NVVM code, how the runtime reads the views' strides into cuBLASLt layouts.

Every example, in fp32, f16 and bf16, trains 10 steps on the digits through amp-run with and
without them (`--before-lowering`), from the same parameters and batches.

Tolerances: split reductions add in another order (f32 accumulators), so the losses and the
parameters may differ by float32 rounding, amplified a little by the bf16/f16 casts after them:
1e-4 relative for the loss, 1e-3 of each parameter's largest magnitude (measured: at most 6.4e-6
and 3.2e-7 relative on the losses). The scaler's state and the skip decisions must be the same.
"""
import os
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import amprun  # noqa: E402

STEPS = ["--steps", "10", "--shuffle=false"]
MODES = {"fp32": None, "f16": "dtype=f16", "bf16": "dtype=bf16"}


@pytest.fixture(scope="module", autouse=True)
def require_amp_run():
    assert os.path.exists(amprun.AMP_RUN), f"{amprun.AMP_RUN} is not built"


PIPELINES = ["amp-gpu-tensor-rewrites", "amp-gpu-host-emulation",
             "amp-gpu-host-emulation{matmul-f32}"]


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("example", ["mlp", "cnn", "transformer"])
def test_gpu_lowering_computes_the_same_step(example, mode, pipeline, tmp_path):
    step = os.path.join(ROOT, "examples", f"{example}.mlir")
    cpu = amprun.train(step, str(tmp_path / "cpu"), amp=MODES[mode], args=STEPS)
    rewritten = amprun.train(step, str(tmp_path / "gpu"), amp=MODES[mode],
                             args=STEPS + [f"--before-lowering={pipeline}"])
    np.testing.assert_allclose(rewritten.loss, cpu.loss, rtol=1e-4, atol=0)
    np.testing.assert_array_equal(rewritten.scale, cpu.scale)
    np.testing.assert_array_equal(rewritten.found_inf, cpu.found_inf)
    assert rewritten.params.keys() == cpu.params.keys()
    for index, expected in cpu.params.items():
        bound = 1e-3 * np.abs(expected).max()
        np.testing.assert_allclose(rewritten.params[index], expected, rtol=0, atol=bound,
                                   err_msg=f"parameter {index}")


def test_bad_pipeline_is_reported(tmp_path):
    step = os.path.join(ROOT, "examples", "mlp.mlir")
    with pytest.raises(RuntimeError, match="the passes to run before lowering, 'no-such-pass'"):
        amprun.train(step, str(tmp_path), args=STEPS + ["--before-lowering=no-such-pass"])


def test_anchored_pipeline_runs_the_same_passes(tmp_path):
    """`builtin.module(...)`, as written for amp-opt, runs its passes (not on modules nested in
    the step's module, of which there are none)."""
    step = os.path.join(ROOT, "examples", "mlp.mlir")
    plain = amprun.train(step, str(tmp_path / "plain"), amp=MODES["f16"],
                         args=STEPS + ["--before-lowering=amp-gpu-tensor-rewrites"])
    anchored = amprun.train(step, str(tmp_path / "anchored"), amp=MODES["f16"],
                            args=STEPS + ["--before-lowering=builtin.module(amp-gpu-tensor-rewrites)"])
    np.testing.assert_array_equal(anchored.loss, plain.loss)
    with pytest.raises(RuntimeError, match="'no-such-pass' does not refer to a registered pass"):
        amprun.train(step, str(tmp_path / "bad"),
                     args=STEPS + ["--before-lowering=builtin.module(no-such-pass)"])
