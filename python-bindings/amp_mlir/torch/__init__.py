"""amp_mlir.torch: a PyTorch training setup (model, loss, torch.optim
optimizer) traced into one functional training-step graph and imported by
torch-mlir as linalg-on-tensors MLIR (generic-form text, with `amp.name`
and `amp.import_role` on every argument and result). See trace.py.

Needs torch and torch-mlir, not the compiled amp_mlir extension.
"""
from .trace import TensorRecord, TracedStep, TraceError, trace_training_step

__all__ = ["trace_training_step", "TracedStep", "TensorRecord", "TraceError"]
