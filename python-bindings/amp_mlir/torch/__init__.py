"""amp_mlir.torch: PyTorch models into mixed-precision training steps.

- `compile_training_step(model, loss_fn, optimizer, example_inputs, amp=None)`:
  a `TrainingStep` compiled for the CPU (step.py); `step(*batch)` trains,
  `evaluate(*inputs)` runs the eval-mode forward, `sync_to_torch()` /
  `load_from_torch()` move the state between it and PyTorch.
- `export_training_step(..., directory)`: step.mlir and the weights for
  amp-run --load-params, amp-opt and amp-compile; also
  `python -m amp_mlir.torch export FILE.py:FUNCTION -o DIR`.
- `trace_training_step(...)`: the traced step as generic-form MLIR with
  `amp.import_role`s (trace.py), before amp-import-step.

docs/PyTorch.md is the guide. Tracing needs torch and torch-mlir only;
compiling and exporting need the compiled amp_mlir extension too.
"""
from .step import (TrainingStep, amp_options, compile_training_step, export_training_step,
                   trace_and_import)
from .trace import (TensorRecord, TracedForward, TracedStep, TraceError, model_inputs,
                    trace_training_step)

__all__ = ["compile_training_step", "export_training_step", "trace_and_import",
           "TrainingStep", "amp_options",
           "trace_training_step", "model_inputs", "TracedStep", "TracedForward",
           "TensorRecord", "TraceError"]
