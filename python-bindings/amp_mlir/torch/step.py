"""PyTorch training setups compiled by amp_mlir: `compile_training_step`
gives a `TrainingStep` that trains on the CPU; `export_training_step`
writes the step and the model's weights for amp-run, amp-opt and
amp-compile. docs/PyTorch.md is the user's guide.

The route: trace.py traces (model, loss_fn, optimizer) into one functional
step plus the model's eval-mode forward (@forward) in one module;
`amp_mlir.import_step` (the amp-import-step pass) puts it into the
contract's form (amp.seed, amp.update); `amp_mlir.Session` compiles it with
the AMP pipeline and runs it, carrying parameters, buffers, optimizer and
scaler state from step to step. The TrainingStep moves the torch model's
and optimizer's state in and out of the Session by the step's argument
names, which are torch's own (`fc1.weight`, `bn1.running_var`,
`optimizer.state.fc1.weight.exp_avg`, `param_groups.0.lr`).
"""
import json
import os
import shutil
import subprocess
import time
import warnings
from typing import Callable, Dict, Optional, Sequence, Union

import numpy as np
import torch
import torch.utils._pytree as pytree

from .trace import TracedStep, TraceError, model_inputs, trace_training_step

__all__ = ["compile_training_step", "export_training_step", "trace_and_import", "TrainingStep",
           "amp_options"]

FORWARD = "forward"


def amp_options(amp: Union[None, str, Dict]) -> Optional[str]:
    """The --amp-pipeline option string for `amp`: None (fp32 as written),
    a string of options, or a dict of keyword options as amp_mlir.compile
    takes them ({"dtype": "f16", "init_scale": 1024})."""
    import amp_mlir

    if amp is None or isinstance(amp, str):
        return amp or None
    if isinstance(amp, dict):
        return amp_mlir.options_string(**amp) or None
    raise TypeError(f"amp must be None, an option string or a dict of options, got "
                    f"{type(amp).__name__}")


def _numpy(value: torch.Tensor, dtype: Optional[np.dtype] = None) -> np.ndarray:
    array = value.detach().cpu().contiguous().numpy()
    return array if dtype is None else array.astype(dtype, copy=False)


def _batch_array(value, dtype: np.dtype) -> np.ndarray:
    """A batch tensor as the step takes it: bool tensors are carried as int32
    (trace.py's _as_carried); other dtypes must match as they are."""
    array = _numpy(value) if isinstance(value, torch.Tensor) else np.asarray(value)
    if array.dtype == np.bool_ and dtype == np.int32:
        array = array.astype(np.int32)
    return array


def _trace(model, loss_fn, optimizer, example_inputs, dynamic_batch, clip_grad_norm,
           forward_inputs):
    """(TracedStep with its forward, the step in the contract's form, seconds
    to trace, seconds to import)."""
    import amp_mlir

    started = time.perf_counter()
    example_inputs = list(example_inputs)
    if forward_inputs is None:
        forward_inputs = model_inputs(model, loss_fn, example_inputs)
    traced = trace_training_step(model, loss_fn, optimizer, example_inputs,
                                 dynamic_batch=dynamic_batch, clip_grad_norm=clip_grad_norm,
                                 forward_inputs=forward_inputs, forward_name=FORWARD)
    traced_at = time.perf_counter()
    text = _import_step(traced.module_text)
    return traced, text, traced_at - started, time.perf_counter() - traced_at


def _amp_opt() -> Optional[str]:
    """The amp-opt of the build this package comes from (its bin/ beside
    python_packages/), $AMP_OPT, or one on PATH."""
    import amp_mlir

    candidates = [os.environ.get("AMP_OPT"),
                  os.path.join(os.path.dirname(os.path.abspath(amp_mlir.__file__)), "..", "..",
                               "bin", "amp-opt"),
                  shutil.which("amp-opt")]
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def _import_step(text: str) -> str:
    """amp-import-step on the traced module, keeping its locations (the
    provenance of every op, which the report's decisions and the errors
    show). amp_mlir.import_step prints without locations; until it keeps
    them, amp-opt prints them (--mlir-print-debuginfo)."""
    import amp_mlir

    try:
        imported = amp_mlir.import_step(text)
    except ValueError as error:  # a located error of amp-import-step
        raise TraceError(f"amp-import-step could not form the step: {error}") from None
    if "loc(" in imported:
        return imported
    amp_opt = _amp_opt()
    if amp_opt is None:
        warnings.warn("amp_mlir.import_step dropped the ops' locations and no amp-opt was "
                      "found to keep them: the report's decisions name no aten op or module",
                      stacklevel=3)
        return imported
    run = subprocess.run([amp_opt, "--amp-import-step", "--mlir-print-debuginfo"], input=text,
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise TraceError(f"amp-import-step could not form the step: {run.stderr.strip()}")
    return run.stdout


class TrainingStep:
    """A torch training setup compiled for the CPU (`compile_training_step`).

    `step(*batch)` runs one training step on the batch (torch tensors or
    numpy arrays, in loss_fn's order) and returns the Session's StepResult
    (loss, found_inf, scale, milliseconds). The state lives in the compiled
    step between calls; `sync_to_torch()` writes it into the model and the
    optimizer, `load_from_torch()` reads it from them.

    `TrainingStep(model, optimizer, traced, module_text, options)` compiles a
    step that trace_and_import gave, for `model` and `optimizer` of the
    traced structure (the same parameter and buffer names and shapes), with
    `options` (None: fp32 as written; an --amp-pipeline option string).
    """

    def __init__(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                 traced: TracedStep, module_text: str, options: Optional[str], seed: int = 0,
                 trace_seconds: float = 0.0, import_seconds: float = 0.0, threads: int = 1,
                 f32_operands: bool = False):
        import amp_mlir

        self.model = model
        self.optimizer = optimizer
        #: The traced step (signature records, the FX graph, the eval forward).
        self.traced = traced
        #: The step in the contract's form (amp.seed, amp.update), with @forward.
        self.module_text = module_text
        self.options = options
        self.trace_seconds = trace_seconds
        self.import_seconds = import_seconds
        self.session = amp_mlir.Session(module_text, options, func=traced.function_name,
                                        seed=seed, functions=[FORWARD], threads=threads,
                                        f32_operands=f32_operands)
        self._arguments = {a.name: a for a in self.session.arguments}
        named = dict(model.named_parameters())
        traced_params = [r.name for r in traced.arguments if r.role == "parameter"]
        missing = [n for n in traced_params if n not in named]
        if missing:
            raise ValueError(f"the model has no parameter(s) {', '.join(missing)} of the "
                             "traced step; trace this model")
        # The traced parameters in the step's order (the optimizer's state is keyed by them).
        self._params = [named[n] for n in traced_params]
        self._hyper_set: Dict[str, float] = {}
        self.load_from_torch()

    # -- what it is ------------------------------------------------------------
    @property
    def report(self) -> Optional[dict]:
        """The pipeline's JSON report (report["decisions"]: one entry per op)."""
        return self.session.report

    @property
    def explanations(self):
        return self.session.explanations

    @property
    def compile_seconds(self) -> float:
        return self.session.compile_seconds

    @property
    def scaler(self):
        """The loss scaler, with torch.amp.GradScaler's state_dict() keys."""
        return self.session.scaler

    @property
    def steps_done(self) -> int:
        return self.session.steps_done

    # -- training ----------------------------------------------------------------
    def _data(self, values, arguments, what):
        if len(values) != len(arguments):
            raise TypeError(f"{what} takes {len(arguments)} tensor(s) "
                            f"({', '.join(a.describe() for a in arguments)}), got {len(values)}")
        return [_batch_array(value, a.dtype) for value, a in zip(values, arguments)]

    def sync_hyperparameters(self) -> None:
        """Sets every hyperparameter that changed in `optimizer.param_groups`
        (a scheduler's learning rate) in the compiled step; `step()` does this
        before each step."""
        for name, value in self.traced.hyperparameters(self.optimizer).items():
            number = float(np.float32(value.item()))
            if self._hyper_set.get(name) != number:
                self.session.set_hyperparameter(name, number)
                self._hyper_set[name] = number

    def __call__(self, *batch):
        """One training step on `batch` (loss_fn's arguments after the model)."""
        self.sync_hyperparameters()
        arrays = self._data(batch, self.session.data_arguments, "step()")
        result = self.session.step(*arrays)
        # What optimizer.step() records for LR schedulers, which warn about
        # scheduler.step() before any optimizer step otherwise.
        self.optimizer._opt_called = True
        return result

    step = __call__

    # -- the eval-mode forward ------------------------------------------------------
    def evaluate(self, *inputs):
        """The model's eval-mode forward (BatchNorm with its running statistics)
        on the current weights, compiled along with the step; returns the
        outputs as torch tensors, in the model's output structure. A forward
        traced for a static batch takes any number of rows: they run in
        chunks of its batch size, the last one padded (its padding dropped)."""
        forward = self.traced.forward
        data_records = [r for r in forward.arguments if r.role == "data"]
        if len(inputs) != len(data_records):
            raise TypeError(f"evaluate() takes {len(data_records)} input(s), got {len(inputs)}")
        arrays = [_batch_array(x, np.dtype(np.int32) if r.dtype == "i32" else None)
                  for x, r in zip(inputs, data_records)]
        state = {**self.session.parameters, **self.session.buffers}
        weights = [state[r.name] for r in forward.arguments if r.role != "data"]
        static = all(r.shape and r.shape[0] > 0 for r in data_records)
        rows = {a.shape[0] for a in arrays if a.ndim}
        if static and rows and rows != {data_records[0].shape[0]}:
            outputs = self._evaluate_in_chunks(weights, arrays, data_records[0].shape[0])
        else:
            outputs = self.session.call(FORWARD, *weights, *arrays)
        tensors = [torch.from_numpy(np.require(o, requirements="C")) for o in outputs]
        return pytree.tree_unflatten(tensors, forward.output_spec)

    def _evaluate_in_chunks(self, weights, arrays, batch):
        if len({a.shape[0] for a in arrays}) != 1:
            raise ValueError("evaluate(): the inputs hold different numbers of rows")
        total = arrays[0].shape[0]
        pieces = []
        for start in range(0, total, batch):
            chunk = [a[start:start + batch] for a in arrays]
            used = chunk[0].shape[0]
            if used < batch:  # pad with copies of the last row (zeros may not be valid input)
                chunk = [np.concatenate([c, np.repeat(c[-1:], batch - used, 0)]) for c in chunk]
            outputs = self.session.call(FORWARD, *weights, *chunk)
            if any(o.ndim == 0 or o.shape[0] != batch for o in outputs):
                raise ValueError(f"evaluate(): the forward was traced for batches of {batch}, "
                                 "and an output has no batch dimension to join chunks along; "
                                 f"pass {batch} rows")
            pieces.append([o[:used] for o in outputs])
        return [np.concatenate(parts) for parts in zip(*pieces)]

    # -- state ------------------------------------------------------------------------
    def _torch_state(self) -> Dict[str, torch.Tensor]:
        """The model's parameters and buffers and the optimizer's state as the
        step's carried arguments, by name."""
        values = {n: p for n, p in self.model.named_parameters() if p.requires_grad}
        values.update(self.model.named_buffers())
        values.update(self.traced.optimizer.state_values(self.optimizer, self._params))
        return values

    def load_from_torch(self) -> None:
        """Reads the model's parameters and buffers, the optimizer's state
        and its hyperparameters into the compiled step (the scaler and the
        step count stay)."""
        state = self.session.state_dict()
        carried = state["state"]
        values = self._torch_state()
        missing = sorted(set(carried) - set(values))
        if missing:
            raise KeyError(f"the model or optimizer has no value for {missing}")
        for name in carried:
            carried[name] = _numpy(values[name], self._arguments[name].dtype)
        self.session.load_state_dict(state)
        self._hyper_set.clear()
        self.sync_hyperparameters()

    def sync_to_torch(self) -> None:
        """Writes the compiled step's parameters, buffers and optimizer state
        into the model and the optimizer (torch.optim's own state structure),
        so that training can continue in PyTorch or be saved with torch.save."""
        state = self.session.state_dict()["state"]
        with torch.no_grad():
            named = dict(self.model.named_parameters())
            named.update(self.model.named_buffers())
            for name, tensor in named.items():
                if name in state:
                    tensor.copy_(torch.from_numpy(state[name]).to(tensor.dtype))
        optimizer_state = {r.name: torch.from_numpy(state[r.name])
                           for r in self.traced.arguments if r.role == "optimizer_state"}
        self.traced.optimizer.load_state(self.optimizer, self._params, optimizer_state)

    def state_dict(self) -> Dict:
        """The Session's state_dict: carried arrays by name, hyperparameters,
        the scaler (GradScaler keys), the step count."""
        return self.session.state_dict()

    def load_state_dict(self, state: Dict) -> None:
        self.session.load_state_dict(state)
        self._hyper_set = {name: float(np.float32(value)) for name, value
                           in self.session.hyperparameters.items()}


def trace_and_import(model: torch.nn.Module, loss_fn: Callable,
                     optimizer: torch.optim.Optimizer, example_inputs: Sequence[torch.Tensor],
                     *, dynamic_batch: bool = False, clip_grad_norm: Optional[float] = None,
                     forward_inputs: Optional[Sequence[torch.Tensor]] = None):
    """(TracedStep, module text in the contract's form): what
    compile_training_step compiles, for compiling one trace several ways:
    `TrainingStep(model, optimizer, traced, text, options)` builds a step
    for any model and optimizer of the same structure (same names and
    shapes), e.g. fresh copies for runs in fp32, f16 and bf16."""
    traced, text, _, _ = _trace(model, loss_fn, optimizer, example_inputs, dynamic_batch,
                                clip_grad_norm, forward_inputs)
    return traced, text


def compile_training_step(model: torch.nn.Module, loss_fn: Callable,
                          optimizer: torch.optim.Optimizer,
                          example_inputs: Sequence[torch.Tensor],
                          amp: Union[None, str, Dict] = None, *, dynamic_batch: bool = False,
                          clip_grad_norm: Optional[float] = None, seed: int = 0,
                          forward_inputs: Optional[Sequence[torch.Tensor]] = None,
                          threads: int = 1, f32_operands: bool = False) -> TrainingStep:
    """Compiles one training step of `model` for the CPU.

    `loss_fn(model, *batch)` returns the 0-d f32 loss; `optimizer` is a
    torch.optim SGD, Adam or AdamW over the model's parameters;
    `example_inputs` is a batch that fixes the shapes and dtypes (with
    `dynamic_batch`, dimension 0 is free). `amp`: None runs fp32 as written,
    else the --amp-pipeline options as a string ("dtype=f16") or a dict of
    keyword options ({"dtype": "bf16"}). `clip_grad_norm` clips the
    unscaled gradients by their global norm inside the guarded update.
    `forward_inputs` (default: what loss_fn passes the model) fixes the eval
    forward's inputs. `threads`: the cores of the library calls and the
    compiled loops (1, the default, is deterministic). `f32_operands`: store
    the low-precision operands of the products that this host's runtime
    extends to f32 in each call in f32, rounded to their type (Session's option of that
    name: the same numbers, fewer conversions, more memory). The model's current parameters and buffers
    and the optimizer's state are loaded; the model and optimizer are not
    changed.
    """
    traced, text, trace_s, import_s = _trace(model, loss_fn, optimizer, example_inputs,
                                             dynamic_batch, clip_grad_norm, forward_inputs)
    return TrainingStep(model, optimizer, traced, text, amp_options(amp), seed,
                        trace_s, import_s, threads, f32_operands)


def _save(path: str, array: np.ndarray) -> None:
    # C order, shape kept (ascontiguousarray would make a 0-d array 1-d).
    np.save(path, np.require(array, requirements="C"))


def export_training_step(model: torch.nn.Module, loss_fn: Callable,
                         optimizer: torch.optim.Optimizer,
                         example_inputs: Sequence[torch.Tensor], directory: str,
                         amp: Union[None, str, Dict] = None, *, dynamic_batch: bool = False,
                         clip_grad_norm: Optional[float] = None,
                         forward_inputs: Optional[Sequence[torch.Tensor]] = None) -> Dict:
    """Writes the training step for the command-line tools:

    - `DIR/step.mlir`: the step in the contract's form (amp.seed, amp.update,
      amp.name on every argument and result) as @train_step, and the model's
      eval-mode forward as @forward (parameters and buffers in the step's
      order, then the model's inputs: amp-run's --eval-func forward);
    - `DIR/params/<amp.name>.npy`: the model's current parameters and buffers,
      the layout `amp-run --load-params DIR/params` reads;
    - `DIR/optimizer/<amp.name>.npy`: the optimizer's state, only when it has
      any (a fresh optimizer's is zeros, where amp-run starts it anyway);
    - `DIR/manifest.json`: the arguments (name, role, dtype, shape), the
      hyperparameters' values, the `amp` options and an amp-run command line.

    `amp`, if given, is checked by compiling the step with it. Returns the
    manifest."""
    import amp_mlir

    traced, text, trace_s, import_s = _trace(model, loss_fn, optimizer, example_inputs,
                                             dynamic_batch, clip_grad_norm, forward_inputs)
    options = amp_options(amp)
    if options is not None:
        amp_mlir.compile(text, options)  # a ValueError naming a bad option
    os.makedirs(os.path.join(directory, "params"), exist_ok=True)
    step_path = os.path.join(directory, "step.mlir")
    with open(step_path, "w", encoding="utf-8") as file:
        file.write(text)

    params = [p for _, p in model.named_parameters() if p.requires_grad]
    values = {n: p for n, p in model.named_parameters() if p.requires_grad}
    values.update(model.named_buffers())
    for record in traced.arguments:
        if record.role in ("parameter", "buffer"):
            array = _numpy(values[record.name])
            if array.dtype == np.bool_:  # carried as int32 (trace.py's _as_carried)
                array = array.astype(np.int32)
            _save(os.path.join(directory, "params", f"{record.name}.npy"), array)
    optimizer_state = traced.optimizer.state_values(optimizer, params)
    has_state = any(optimizer.state.get(p) for p in params)
    if has_state:
        os.makedirs(os.path.join(directory, "optimizer"), exist_ok=True)
        for name, value in optimizer_state.items():
            _save(os.path.join(directory, "optimizer", f"{name}.npy"), _numpy(value))

    hyperparameters = {name: float(value) for name, value
                       in traced.hyperparameters(optimizer).items()}
    data = [r for r in traced.arguments if r.role == "data"]
    command = ["amp-run", "step.mlir", "--load-params", "params",
               "--data", ",".join(f"{r.name}.npy" for r in data)]
    if dynamic_batch:
        command += ["--batch-size", str(int(example_inputs[0].shape[0]))]
    if options:
        command.append(f'--amp="{options}"')
    manifest = {
        "step": "step.mlir", "function": traced.function_name, "forward": FORWARD,
        "amp": options, "dynamic_batch": dynamic_batch, "clip_grad_norm": clip_grad_norm,
        "arguments": [{"name": r.name, "role": r.role, "dtype": r.dtype,
                       "shape": [None if d < 0 else d for d in r.shape]}
                      for r in traced.arguments if r.role != "seed"],
        "forward_arguments": [{"name": r.name, "role": r.role, "dtype": r.dtype,
                               "shape": [None if d < 0 else d for d in r.shape]}
                              for r in traced.forward.arguments],
        "hyperparameters": hyperparameters,
        "optimizer_state": "optimizer" if has_state else None,
        "amp_run": " ".join(command),
        "trace_seconds": round(trace_s, 3), "import_seconds": round(import_s, 3),
        "torch": torch.__version__,
    }
    with open(os.path.join(directory, "manifest.json"), "w", encoding="utf-8") as file:
        json.dump(manifest, file, indent=2)
        file.write("\n")
    return manifest
