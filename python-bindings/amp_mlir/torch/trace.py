"""One PyTorch training step as one functional graph, imported as linalg-on-tensors MLIR.

`trace_training_step(model, loss_fn, optimizer, example_inputs)` builds the step

    (parameters, buffers, optimizer state, hyperparameters, data, seed)
        -> (loss, gradients, new parameters, new optimizer state, new buffers)

as plain PyTorch: the loss through `torch.func.functional_call`, the gradients
through `torch.func.vjp` pulled back from the explicit `seed` argument (so the
backward's start is an input that a later pass replaces by `amp.seed` of the
loss), the optimizer as tensor math (optim.py), buffers (BatchNorm's running
statistics) cloned inside and returned. It traces that with
`make_fx(functionalize(step))` and this package's decompositions, imports the
graph with torch-mlir, lowers it to linalg on tensors, and prints it in
generic form (torch-mlir's MLIR is newer than the project's; text crosses).

The signature (what a structuring pass reads; `TracedStep.arguments` and
`.results` hold the same as records):
- Every argument and result has `amp.import_role` and `amp.name`.
  Arguments, in this order: "parameter" (named as in
  `model.named_parameters()`, "fc1.weight"), "buffer" (`named_buffers()`,
  "bn1.running_mean"), "optimizer_state" ("optimizer.state.<param>.<key>"
  with torch.optim's keys: step, momentum_buffer, exp_avg, exp_avg_sq,
  max_exp_avg_sq), "hyperparameter" (0-d f32, "param_groups.<g>.<key>":
  lr, weight_decay, momentum, dampening, beta1, beta2, eps; with
  `amp.value`, its value at trace time), "data" ("input<i>", the batch in
  loss_fn's order), "seed" (one, 0-d f32, "seed": the cotangent the
  backward starts from; a step is exact with seed = 1).
- Results: "loss" (first), "gradient" (one per parameter, in parameter
  order, named by it, unclipped), then the new "parameter",
  "optimizer_state" and "buffer" values: each state argument has exactly
  one result of the same role, name and type.
- Buffers and optimizer state that start uniformly at 0 or 1 carry
  `amp.init = "zeros" | "ones"` (a BatchNorm running variance starts at 1).
- Every op is located `loc(fused["<module path>", "<aten op>", "<phase>",
  "<file>":<line>:0])`: the module path as in `named_modules()`
  ("layer1.0.downsample.0"; "<root>" for the model's own forward, "<loss>"
  for loss_fn outside the model, "<optimizer>/<param>" and
  "<optimizer>/clip_grad_norm" for the update), the aten op the model
  called (before decompositions), the phase ("forward", "backward" for the
  gradient of that module's op, "optimizer"), and the user's source line.
  Ops in the bodies of named linalg ops and folded constants are unknown.
- With a dynamic batch, dimension 0 of every data argument is `?` (one
  batch size for all); torch-mlir's cf.assert size checks are removed.
- Bool buffers and data inputs are carried as int32 (converted inside);
  every i1 tensor the step computes is stored as i8 (_store_masks_as_bytes:
  a CPU lowering bug reads broadcast i1 masks wrong).
- Ops located at a lookup the decompositions write as one-hot matmuls
  (embedding, gather, x[i] and their gradients) or at pow carry
  `amp.precision = "f32"`: PyTorch copies looked-up values exactly and keeps
  pow in f32.
- With `forward_inputs`, the module also holds the model's eval-mode forward
  (`TracedStep.forward`): (parameters, buffers, inputs) -> outputs, without
  amp.* attributes, its ops located the same way (phase "forward").
- Dropout with p > 0 in training mode and ops that draw random numbers are a
  TraceError naming the module: the step has no random number generator.
"""
import contextlib
import operator
import os
import re
import sys
import sysconfig
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch
import torch.fx.traceback as fx_traceback
import torch.utils._pytree as pytree
from torch.fx.experimental.proxy_tensor import make_fx
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.overrides import TorchFunctionMode

from . import decompositions
from .optim import FunctionalOptimizer, UnsupportedOptimizerError

__all__ = ["trace_training_step", "model_inputs", "TracedStep", "TracedForward",
           "TensorRecord", "TraceError"]

ARGUMENT_ROLES = ("parameter", "buffer", "optimizer_state", "hyperparameter", "data", "seed")
RESULT_ROLES = ("loss", "gradient", "parameter", "optimizer_state", "buffer")

# What the imported module may contain besides builtin.module.
ALLOWED_DIALECTS = ("func", "arith", "math", "tensor", "linalg", "scf")

# Module paths of ops outside the model's modules.
LOSS_PATH = "<loss>"
ROOT_PATH = "<root>"
OPTIMIZER_PATH = "<optimizer>"

_DTYPE_NAMES = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8",
    torch.uint8: "ui8", torch.bool: "i1",
}


class TraceError(RuntimeError):
    """The training step could not be traced or imported; the message names
    the reason and, for an op, the aten op and the module it comes from."""


@dataclass(frozen=True)
class TensorRecord:
    """One argument or result of the step function."""
    role: str
    name: str
    dtype: str  # "f32", "i64", ...
    shape: Tuple[int, ...]  # -1 for a dynamic dimension


# -- provenance -----------------------------------------------------------------

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_STDLIB_DIR = sysconfig.get_paths()["stdlib"] + os.sep
_SKIPPED_FILES = {os.path.abspath(decompositions.__file__)}


def _display_path(path: str) -> str:
    """Installed files from their package root, others relative to the
    working directory when under it (fixtures stay the same across checkouts)."""
    marker = os.sep + "site-packages" + os.sep
    if marker in path:
        return path.split(marker, 1)[1]
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _user_frame() -> Optional[Tuple[str, int]]:
    """(file, line) of the innermost caller outside torch, the standard
    library and decompositions.py: the user's line for model and loss ops,
    optim.py's for the optimizer."""
    frame = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename
        if not (path.startswith("<") or path.startswith(_TORCH_DIR)
                or path.startswith(_STDLIB_DIR) or os.path.abspath(path) in _SKIPPED_FILES):
            return _display_path(path), frame.f_lineno
        frame = frame.f_back
    return None


class _Provenance(TorchFunctionMode):
    """Tags every traced node with the module it comes from, its phase and
    the user's source line, in `node.meta["custom"]` (fx_traceback's
    preserved node meta copies it onto each node make_fx creates).

    The module path is kept by global forward hooks on the model's modules.
    Backward ops are traced while autograd runs the graph, outside any module
    call: each autograd node created in the forward gets a pre-hook that
    restores the path and line of the forward call that created it. The mode
    also routes calls that tracing would get wrong to decompositions.py
    (`decompositions.TORCH_FUNCTION_OVERRIDES`)."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self._names = {id(m): (name or ROOT_PATH) for name, m in model.named_modules()}
        self._stack: List[str] = []
        self._seen_grad_fns = set()
        self._phase = "forward"
        self._phase_path = LOSS_PATH  # the path outside the forward's modules
        self._hooks = []

    @staticmethod
    def _set(path: str, phase: str, source: Optional[Tuple[str, int]]) -> None:
        fx_traceback.current_meta["custom"] = {"amp_module": path, "amp_phase": phase,
                                               "amp_source": source}

    def _path(self) -> str:
        if self._phase == "forward" and self._stack:
            return self._stack[-1]
        return self._phase_path

    def enter_phase(self, phase: str, path: str) -> None:
        """Ops traced from now on belong to `phase` ("forward", "backward",
        "optimizer") and, outside the model's modules, to `path`."""
        self._phase, self._phase_path = phase, path
        self._set(path, phase, None)

    def _pre_hook(self, module, args):
        name = self._names.get(id(module))
        if name is not None:
            decompositions.check_module(module, name)
            self._stack.append(name)
            self._set(name, self._phase, None)

    def _post_hook(self, module, args, output):
        if self._names.get(id(module)) is not None:
            self._stack.pop()
            self._set(self._path(), self._phase, None)

    def __enter__(self):
        self._hooks = [
            torch.nn.modules.module.register_module_forward_pre_hook(self._pre_hook),
            torch.nn.modules.module.register_module_forward_hook(self._post_hook, always_call=True),
        ]
        return super().__enter__()

    def __exit__(self, *exc):
        for hook in self._hooks:
            hook.remove()
        return super().__exit__(*exc)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        source = None
        if self._phase != "backward":  # backward ops are tagged by the pre-hooks
            source = _user_frame()
            self._set(self._path(), self._phase, source)
        if self._phase == "forward":
            random = decompositions.random_call(func, args, kwargs)
            if random is not None:
                raise decompositions.UnsupportedLayerError(
                    f"module '{self._path()}': {random} in training mode is not supported: "
                    "the compiled step has no random number generator (and its masks could "
                    "not be PyTorch's). Use p=0, or put that module in eval mode "
                    "(module.eval(): its dropout is then the identity) before tracing")
        override = decompositions.TORCH_FUNCTION_OVERRIDES.get(func)
        result = override(*args, **kwargs) if override is not None else func(*args, **kwargs)
        if self._phase == "forward":
            self._tag_backward(result, source)
        return result

    def _tag_backward(self, result, source):
        """Pre-hooks on the autograd nodes that `result` brought into the graph."""
        path = self._path()
        pending = [t.grad_fn for t in pytree.tree_leaves(result)
                   if isinstance(t, torch.Tensor) and t.grad_fn is not None]
        while pending:
            node = pending.pop()
            if node is None or node in self._seen_grad_fns:
                continue
            self._seen_grad_fns.add(node)
            node.register_prehook(
                lambda grad_outputs, path=path: self._set(path, "backward", source))
            pending.extend(next_node for next_node, _ in node.next_functions)


# -- the step -------------------------------------------------------------------

def _as_carried(value: torch.Tensor) -> torch.Tensor:
    """A bool tensor as the step carries it: int32. The runners pass bool
    arrays one byte per element, which the CPU lowering's vector code reads
    as packed bits (see _store_masks_as_bytes); amp-compile's GPU steps take
    no int8. The step converts inside."""
    return value.to(torch.int32) if value.dtype == torch.bool else value


def _from_carried(value: torch.Tensor, is_bool: bool) -> torch.Tensor:
    return value.to(torch.bool) if is_bool else value


class _LossModule(torch.nn.Module):
    """loss_fn(model, *batch) as a module, so that functional_call swaps the
    model's parameters and buffers for the step's arguments."""

    def __init__(self, model, loss_fn):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn

    def forward(self, *batch):
        return self.loss_fn(self.model, *batch)


@dataclass
class _Layout:
    """Names and example values of the step's arguments and results, in order."""
    param_names: List[str]
    params: List[torch.Tensor]
    buffer_names: List[str]
    buffers: List[torch.Tensor]
    optimizer: FunctionalOptimizer
    data: List[torch.Tensor]
    # Which buffers and data inputs are bool tensors (carried as int32).
    bool_buffers: List[bool] = field(default_factory=list)
    bool_data: List[bool] = field(default_factory=list)

    def argument_values(self) -> Dict[str, torch.Tensor]:
        values = dict(zip(self.param_names, self.params))
        values.update(zip(self.buffer_names, self.buffers))
        values.update((s.name, s.initial) for s in self.optimizer.states)
        values.update((h.name, torch.tensor(h.value, dtype=torch.float32))
                      for h in self.optimizer.hyperparameters)
        return values

    def argument_names(self) -> List[Tuple[str, str]]:
        """(role, name) of every argument."""
        return ([("parameter", n) for n in self.param_names]
                + [("buffer", n) for n in self.buffer_names]
                + [("optimizer_state", s.name) for s in self.optimizer.states]
                + [("hyperparameter", h.name) for h in self.optimizer.hyperparameters]
                + [("data", f"input{i}") for i in range(len(self.data))]
                + [("seed", "seed")])

    def result_names(self) -> List[Tuple[str, str]]:
        return ([("loss", "loss")]
                + [("gradient", n) for n in self.param_names]
                + [("parameter", n) for n in self.param_names]
                + [("optimizer_state", s.name) for s in self.optimizer.states]
                + [("buffer", n) for n in self.buffer_names])


def _clip_grad_norm(grads, max_norm):
    """torch.nn.utils.clip_grad_norm_(norm_type=2) on values, not in place."""
    norms = [torch.linalg.vector_norm(g, 2.0) for g in grads]
    total_norm = torch.linalg.vector_norm(torch.stack(norms), 2.0)
    coefficient = torch.clamp(max_norm / (total_norm + 1e-6), max=1.0)
    return [g * coefficient for g in grads]


def _make_step(layout: _Layout, loss_module: _LossModule, provenance: _Provenance,
               clip_grad_norm: Optional[float]):
    counts = [len(layout.params), len(layout.buffers), len(layout.optimizer.states),
              len(layout.optimizer.hyperparameters), len(layout.data), 1]

    def step(*flat):
        groups, start = [], 0
        for count in counts:
            groups.append(list(flat[start:start + count]))
            start += count
        params, buffers, states, hypers, data, (seed,) = groups

        def loss_of(*trained):
            # Buffers are cloned inside: the model updates them in place.
            state = {f"model.{n}": p for n, p in zip(layout.param_names, trained)}
            new_buffers = [_from_carried(b, is_bool).clone()
                           for b, is_bool in zip(buffers, layout.bool_buffers)]
            state.update((f"model.{n}", b) for n, b in zip(layout.buffer_names, new_buffers))
            batch = tuple(_from_carried(d, is_bool) for d, is_bool in zip(data, layout.bool_data))
            loss = torch.func.functional_call(loss_module, state, batch)
            if not (isinstance(loss, torch.Tensor) and loss.dim() == 0
                    and loss.dtype == torch.float32):
                raise TraceError("loss_fn must return a 0-d float32 tensor (the loss), got "
                                 + (f"{loss.dtype} of shape {tuple(loss.shape)}"
                                    if isinstance(loss, torch.Tensor) else type(loss).__name__))
            return loss, [_as_carried(b) for b in new_buffers]

        provenance.enter_phase("forward", LOSS_PATH)
        loss, pull_back, new_buffers = torch.func.vjp(loss_of, *params, has_aux=True)
        provenance.enter_phase("backward", LOSS_PATH)
        grads = list(pull_back(seed))
        updated = grads
        if clip_grad_norm is not None:
            provenance.enter_phase("optimizer", f"{OPTIMIZER_PATH}/clip_grad_norm")
            updated = _clip_grad_norm(grads, clip_grad_norm)
        provenance.enter_phase("optimizer", OPTIMIZER_PATH)
        new_params, new_states = layout.optimizer.update(
            params, updated, states, hypers,
            annotate=lambda name: provenance.enter_phase("optimizer", f"{OPTIMIZER_PATH}/{name}"))
        return (loss, *grads, *new_params, *new_states, *new_buffers)

    return step


@contextlib.contextmanager
def _without_mkldnn():
    """With mkldnn on, recurrent layers on the CPU run aten.mkldnn_rnn_layer
    (also torch's Python recurrence that decompositions.py routes them to),
    which torch-mlir cannot lower; without it they are the plain recurrence.
    (Switching the flags warns about TF32 on Intel GPUs, irrelevant here.)"""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="TF32 acceleration on top of oneDNN")
        flags = torch.backends.mkldnn.flags(enabled=False)
        flags.__enter__()
    try:
        yield
    finally:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="TF32 acceleration on top of oneDNN")
            flags.__exit__(None, None, None)


def _fake_arguments(values: Sequence[torch.Tensor], dynamic: Sequence[bool]):
    """Fake tensors for tracing; dimension 0 of those marked dynamic is a
    symbolic size, backed by the example's size (which must be at least 2:
    PyTorch specializes sizes 0 and 1)."""
    from torch._dynamo.source import ConstantSource
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import (DimDynamic, ShapeEnv,
                                                       StatelessSymbolicContext)

    mode = FakeTensorMode(shape_env=ShapeEnv(), allow_non_fake_inputs=True)
    fakes = []
    for i, (value, is_dynamic) in enumerate(zip(values, dynamic)):
        sizes = [DimDynamic.STATIC] * value.dim()
        if is_dynamic:
            sizes[0] = DimDynamic.DYNAMIC
        context = StatelessSymbolicContext(dynamic_sizes=sizes)
        fakes.append(mode.from_tensor(value, source=ConstantSource(f"arg{i}"),
                                      symbolic_context=context))
    return fakes


# -- import -----------------------------------------------------------------------

def _node_location(ir, context, node, function_name):
    """loc(fused["<module path>", "<aten op>", "<phase>", "file":line:0]);
    the function's arguments and results are located at its name."""
    if node.op not in ("call_function", "call_method"):
        return ir.Location.name(function_name, context=context)
    target = node.target
    if target is operator.getitem and isinstance(node.args[0], torch.fx.Node):
        node = node.args[0]  # an element of a multi-result op
        target = node.target
    # The op the model called, not what a decomposition made of it.
    target = node.meta.get("original_aten") or target
    op = str(target) if isinstance(target, torch._ops.OpOverload) else getattr(
        target, "__name__", str(target))
    custom = node.meta.get("custom") or {}
    parts = [ir.Location.name(custom.get("amp_module", LOSS_PATH), context=context),
             ir.Location.name(op, context=context),
             ir.Location.name(custom.get("amp_phase", "forward"), context=context)]
    source = custom.get("amp_source")
    if source is not None:
        parts.append(ir.Location.file(source[0], source[1], 0, context=context))
    return ir.Location.fused(parts, context=context)


_LOC = re.compile(r'loc\(fused\["([^"]*)", "([^"]*)", "([^"]*)"')


def _describe_location(location_text: str, fallback_op: str = "an op") -> str:
    """"aten.x.default (module 'layer1.conv', backward)" from one of our
    locations; the op named by torch-mlir (`fallback_op`) for others."""
    match = _LOC.search(location_text)
    if not match:
        return f"{fallback_op} (at {location_text})"
    path, op, phase = match.groups()
    return f"{op} (module '{path}', {phase})"


def _lower(module, context, pipeline: str, what: str):
    """Runs a torch-mlir pass pipeline; a failure raises TraceError naming the
    aten op and module path of the first error."""
    from torch_mlir.passmanager import PassManager

    diagnostics = []

    def collect(diagnostic):
        diagnostics.append((str(diagnostic.location), diagnostic.message))
        return True

    handler = context.attach_diagnostic_handler(collect)
    try:
        with context:
            context.emit_error_diagnostics = True
            PassManager.parse(pipeline).run(module.operation)
    except Exception as error:
        if not diagnostics:
            raise TraceError(f"torch-mlir {what} failed: {error}") from None
        location, message = diagnostics[0]
        # torch-mlir names the op as 'torch.aten.x' or, for ops it has no
        # definition of, as a torch.operator with name = "torch.aten.x".
        named = (re.search(r'name = "torch\.([\w.]+)"', message)
                 or re.search(r"'torch\.([\w.]+)'", message))
        subject = _describe_location(location, named.group(1) if named else "an op")
        raise TraceError(f"torch-mlir cannot lower {subject} to linalg-on-tensors ({what}): "
                         f"{message.splitlines()[0]}") from None
    finally:
        handler.detach()


def _is_shape_check(assert_op) -> bool:
    """Whether a cf.assert tests sizes only: it sits in the function body
    (not in an elementwise body) and its condition reads no tensor element."""
    from torch_mlir import ir

    pending, seen = [assert_op.operands[0]], set()
    while pending:
        owner = pending.pop().owner
        if not isinstance(owner, (ir.Operation, ir.OpView)):
            continue  # a block argument: a function argument's size is read by tensor.dim
        operation = owner.operation
        if operation.name == "tensor.extract":
            return False
        if operation in seen:
            continue
        seen.add(operation)
        pending.extend(operation.operands)
    return True


def _drop_shape_checks(module) -> List[str]:
    """Erases the cf.assert size checks that torch-mlir emits for dynamic
    dimensions (broadcasts, matmul contractions, reshapes) and returns their
    messages. The traced graph already relates every size to the batch
    size, so they hold for any batch of consistent inputs."""
    from torch_mlir import ir

    checks = []
    for func in module.body.operations:
        for block in func.regions[0].blocks:
            checks += [op for op in block.operations if op.operation.name == "cf.assert"
                       and _is_shape_check(op.operation)]
    messages = [ir.StringAttr(op.attributes["msg"]).value for op in checks]
    for op in checks:
        op.operation.erase()
    return messages


def _locate_unknown(module) -> None:
    """Ops that lowering left without a location (the bodies of named linalg
    ops, constants folded or hoisted by canonicalization) get their parent's
    or, at function level, their first user's."""
    from torch_mlir import ir

    def unknown(op):
        return str(op.location) == "loc(unknown)"

    hoisted = []

    def visit(op):
        if op.name in ("builtin.module", "func.func") or not unknown(op):
            return ir.WalkResult.ADVANCE
        parent = op.parent
        if parent is not None and parent.name != "func.func":
            op.location = parent.location
        else:
            hoisted.append(op)
        return ir.WalkResult.ADVANCE

    with module.context:
        module.operation.walk(visit, walk_order=ir.WalkOrder.PRE_ORDER)
        for op in hoisted:
            users = [use.owner for result in op.results for use in result.uses]
            located = [user for user in users if not unknown(user)]
            if located:
                op.location = located[0].location


def _pin_f32(module) -> int:
    """amp.precision = "f32" on the float linalg ops located at an aten op of
    decompositions.PINNED_F32: the lookups that decompositions.py writes as
    one-hot matmuls and masked sums (embedding, gather, x[i], their
    gradients) copy values, which PyTorch never rounds and a low-precision
    matmul would; pow is on PyTorch's fp32 list but decomposed into
    products. Returns how many ops were pinned."""
    from torch_mlir import ir

    pinned = []

    def visit(op):
        if op.name.startswith("linalg.") and op.name not in ("linalg.fill", "linalg.yield"):
            match = _LOC.search(str(op.location))
            floats = any(isinstance(r.type, ir.RankedTensorType)
                         and isinstance(r.type.element_type, ir.FloatType) for r in op.results)
            if match and match.group(2) in decompositions.PINNED_F32 and floats:
                pinned.append(op)
            return ir.WalkResult.SKIP  # not into bodies
        return ir.WalkResult.ADVANCE

    with module.context:
        module.operation.walk(visit, walk_order=ir.WalkOrder.PRE_ORDER)
        for op in pinned:
            op.attributes["amp.precision"] = ir.StringAttr.get("f32")
    return len(pinned)


def _store_masks_as_bytes(module) -> int:
    """Works around a CPU lowering bug: amp-cpu-vectorize turns accesses of
    i1 tensors into loads and stores of <N x i1> vectors, which LLVM packs
    into bits, while scalar loops read one byte per i1. A mask written by a
    vectorized op and read by a loop (a [n] mask reshaped to [n, 1] and
    broadcast) reads wrong, run-dependent values; so does the reverse. So
    every i1 tensor an op of the step computes is stored as i8 here (one
    byte per element whichever way it is accessed): linalg bodies truncate
    what they read to i1 and extend what they yield, constants and fills
    are i8, shape ops follow. i1 function arguments and results are left
    (the zoo has none). Returns the number of values retyped.
    Remove once the CPU lowering stores i1 tensors as bytes."""
    from torch_mlir import ir
    from torch_mlir.dialects import arith

    i1, i8 = ir.IntegerType.get_signless(1, module.context), ir.IntegerType.get_signless(8, module.context)

    def is_mask(type_):
        return (isinstance(type_, ir.RankedTensorType) and isinstance(type_.element_type, ir.IntegerType)
                and type_.element_type.width == 1)

    def as_bytes(type_):
        return ir.RankedTensorType.get(type_.shape, i8, type_.encoding)

    retyped = 0
    with module.context, ir.Location.unknown():
        for func in module.body.operations:
            if func.operation.name != "func.func":
                continue
            for block in func.regions[0].blocks:
                for op in list(block.operations):
                    retyped += _mask_op_as_bytes(op.operation, is_mask, as_bytes, i1, i8, ir, arith)
    return retyped


def _mask_op_as_bytes(op, is_mask, as_bytes, i1, i8, ir, arith) -> int:
    """One function-level op of _store_masks_as_bytes (its operands are
    already retyped)."""
    name = op.name
    if name == "func.return":
        return 0  # i1 results are left as they are
    if name == "arith.constant" and is_mask(op.results[0].type):
        dense = ir.DenseElementsAttr(op.attributes["value"])
        kind = as_bytes(op.results[0].type)
        if dense.is_splat:
            value = ir.BoolAttr(dense.get_splat_value()).value
            attribute = ir.DenseElementsAttr.get_splat(kind, ir.IntegerAttr.get(i8, int(value)))
        else:
            import numpy as np
            flags = np.array([bool(dense[i]) for i in range(len(dense))], dtype=np.int8)
            attribute = ir.DenseElementsAttr.get(flags.reshape(kind.shape), type=kind)
        with ir.InsertionPoint(op), op.location:
            replacement = arith.ConstantOp(kind, attribute)
        op.results[0].replace_all_uses_with(replacement.result)
        op.erase()
        return 1
    if name == "tensor.extract" and isinstance(op.operands[0].type, ir.RankedTensorType) \
            and op.operands[0].type.element_type == i8 and op.results[0].type == i1:
        # Reads a byte now: narrow it after.
        result = op.results[0]
        result.set_type(i8)
        with ir.InsertionPoint.after(op), op.location:
            narrowed = arith.TruncIOp(i1, result)
        result.replace_all_uses_except(narrowed.result, narrowed.operation)
        return 1
    count = 0
    for result in op.results:
        if is_mask(result.type):
            result.set_type(as_bytes(result.type))
            count += 1
    if name == "linalg.fill" and op.operands[0].type == i1 and \
            op.results and op.results[0].type.element_type == i8:
        with ir.InsertionPoint(op), op.location:
            op.operands[0] = arith.ExtUIOp(i8, op.operands[0]).result
    for region in op.regions:  # linalg bodies, tensor.pad's padding value
        for body in region.blocks:
            _mask_body_as_bytes(op, body, i1, i8, ir, arith)
    return count


def _mask_body_as_bytes(op, body, i1, i8, ir, arith) -> None:
    """Block arguments of retyped operands become i8 (truncated at the top);
    yielded i1 values of retyped results are extended."""
    if op.name.startswith("linalg."):
        operand_types = [v.type for v in op.operands]
        element_types = [t.element_type if isinstance(t, ir.ShapedType) else t
                         for t in operand_types]
        for argument, element in zip(body.arguments, element_types):
            if argument.type == i1 and element == i8:
                argument.set_type(i8)
                with ir.InsertionPoint.at_block_begin(body), op.location:
                    narrowed = arith.TruncIOp(i1, argument)
                argument.replace_all_uses_except(narrowed.result, narrowed.operation)
    results = [r.type.element_type for r in op.results if isinstance(r.type, ir.ShapedType)]
    terminator = list(body.operations)[-1]
    if terminator.name in ("linalg.yield", "tensor.yield"):
        for i, value in enumerate(terminator.operands):
            if value.type == i1 and i < len(results) and results[i] == i8:
                with ir.InsertionPoint(terminator), op.location:
                    terminator.operands[i] = arith.ExtUIOp(i8, value).result


def _check_dialects(module):
    """TraceError for the first op outside ALLOWED_DIALECTS (tm_tensor, torch,
    cf, ...), naming it with its aten op and module path."""
    from torch_mlir import ir

    found = []

    def visit(op):
        name = op.name
        if name != "builtin.module" and name.split(".")[0] not in ALLOWED_DIALECTS:
            found.append((name, str(op.location)))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if found:
        # Name an op that does the work, not a region terminator.
        name, location = next(((n, l) for n, l in found if not n.endswith(".yield")), found[0])
        others = sorted({n for n, _ in found} - {name})
        raise TraceError(
            f"the imported step still contains '{name}', lowered from "
            f"{_describe_location(location)}; the step must be "
            f"{', '.join(ALLOWED_DIALECTS)} only. Add a decomposition to "
            "amp_mlir/torch/decompositions.py"
            + (f"; also left: {', '.join(others)}" if others else ""))


def _set_signature_attributes(module, function_name, arguments, results, argument_values):
    from torch_mlir import ir

    with module.context, ir.Location.unknown():
        func = next(op for op in module.body.operations
                    if op.operation.name == "func.func"
                    and ir.StringAttr(op.attributes["sym_name"]).value == function_name)

        def attributes(record, value=None):
            entries = {"amp.name": ir.StringAttr.get(record.name),
                       "amp.import_role": ir.StringAttr.get(record.role)}
            if record.role == "hyperparameter":
                entries["amp.value"] = ir.FloatAttr.get(ir.F32Type.get(), float(value))
            elif record.role in ("buffer", "optimizer_state") and value is not None:
                # How a runner starts it (running variances start at one).
                for init, fill in (("zeros", 0), ("ones", 1)):
                    if bool((value == fill).all()):
                        entries["amp.init"] = ir.StringAttr.get(init)
            return ir.DictAttr.get(entries)

        func.attributes["arg_attrs"] = ir.ArrayAttr.get([
            attributes(r, argument_values.get(r.name)) for r in arguments])
        func.attributes["res_attrs"] = ir.ArrayAttr.get([attributes(r) for r in results])


def _specialized(size) -> bool:
    """Whether a symbolic size was fixed to a constant by a guard while tracing."""
    if not isinstance(size, torch.SymInt):
        return True
    return size.node.shape_env.replace(size.node.expr).is_number


def _records(names, values) -> List[TensorRecord]:
    """Records of traced values (fake tensors: a symbolic size is dynamic)."""
    records = []
    for (role, name), value in zip(names, values):
        dtype = _DTYPE_NAMES.get(value.dtype)
        if dtype is None:
            raise TraceError(f"{role} '{name}' has dtype {value.dtype}, which the step "
                             "cannot carry")
        shape = tuple(int(s) if isinstance(s, int) else -1 for s in value.shape)
        records.append(TensorRecord(role, name, dtype, shape))
    return records


def _new_context():
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_dialect

    context = ir.Context()
    torch_dialect.register_dialect(context)
    return context


def _import(gm, function_name, context):
    """The traced graph as a linalg-on-tensors torch_mlir module in `context`."""
    from torch_mlir import ir
    from torch_mlir.extras.fx_importer import ContextCache, FxImporter

    class LocatingContextCache(ContextCache):
        """The importer locates ops by their stack trace only; this adds the
        module path, the aten op and the phase."""
        __slots__ = ()

        def get_node_location(self, node):
            return _node_location(ir, context, node, function_name)

    importer = FxImporter(context=context)
    importer._cc = LocatingContextCache(context, py_attr_tracker=importer._py_attr_tracker)
    try:
        importer.import_stateless_graph(gm.graph, func_name=function_name)
    except Exception as error:  # an FX node the importer has no conversion for
        raise TraceError(f"torch-mlir could not import the traced graph: {error}") from error
    module = importer.module
    _lower(module, context,
           "builtin.module(func.func(torch-match-quantized-custom-ops),"
           " torchdynamo-export-to-torch-backend-pipeline{ extra-library=})",
           "to the torch backend")
    _lower(module, context,
           "builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline"
           "{allow-non-finites=true})",
           "torch backend to linalg-on-tensors")
    return module


# -- the traced step ------------------------------------------------------------------

class TracedStep:
    """One training step: its MLIR (generic form), its signature, and the FX
    graph it came from (`run_reference` runs that graph in PyTorch)."""

    def __init__(self, module_text: str, function_name: str, arguments: List[TensorRecord],
                 results: List[TensorRecord], graph_module: torch.fx.GraphModule,
                 initial_values: Dict[str, torch.Tensor], optimizer: FunctionalOptimizer,
                 dropped_size_checks: List[str], forward: Optional["TracedForward"] = None):
        self.module_text = module_text
        self.function_name = function_name
        self.arguments = arguments
        self.results = results
        self.graph_module = graph_module
        #: Messages of the cf.assert size checks removed from a dynamic-batch
        #: step (they hold when all data inputs share one batch size).
        self.dropped_size_checks = dropped_size_checks
        self._initial_values = initial_values
        self._optimizer = optimizer
        #: The eval-mode forward traced along (forward_inputs), else None.
        self.forward = forward

    @property
    def optimizer(self) -> FunctionalOptimizer:
        """The traced update: its state and hyperparameter names, and how
        they map to torch.optim's state (`state_values`, `load_state`)."""
        return self._optimizer

    def initial_values(self) -> Dict[str, torch.Tensor]:
        """The state and hyperparameter arguments at trace time, by name:
        the model's parameters and buffers, the optimizer's state (zeros
        before its first step) and hyperparameters."""
        return {name: value.detach().clone() for name, value in self._initial_values.items()}

    def hyperparameters(self, optimizer: torch.optim.Optimizer) -> Dict[str, torch.Tensor]:
        """`optimizer`'s current hyperparameters (after a scheduler step, say)
        as the step's inputs, by name."""
        try:
            return self._optimizer.hyperparameter_values(optimizer)
        except UnsupportedOptimizerError as error:
            raise TraceError(str(error)) from None

    def run_reference(self, *args: torch.Tensor) -> List[torch.Tensor]:
        """The traced graph run in PyTorch on the arguments in order."""
        with torch.no_grad():
            return list(self.graph_module(*args))

    def reference_step(self, state: Dict[str, torch.Tensor], *batch: torch.Tensor):
        """One step of the traced graph: `state` maps every parameter, buffer,
        optimizer state and hyperparameter name to its value; the seed is 1.
        Returns (loss, new state (hyperparameters kept), gradients by name)."""
        args = []
        data = iter(batch)
        for record in self.arguments:
            if record.role == "data":
                args.append(_as_carried(next(data)))
            elif record.role == "seed":
                args.append(torch.ones((), dtype=torch.float32))
            else:
                args.append(state[record.name])
        outputs = self.run_reference(*args)
        new_state = {r.name: state[r.name] for r in self.arguments if r.role == "hyperparameter"}
        grads = {}
        for record, value in zip(self.results, outputs):
            if record.role == "gradient":
                grads[record.name] = value
            elif record.role != "loss":
                new_state[record.name] = value
        return outputs[0], new_state, grads


def _graph(fn, fake_args, provenance: _Provenance, dynamic_batch: bool, what: str):
    """make_fx(functionalize(fn)) with this package's decompositions and
    provenance; failures become TraceErrors."""
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(fx_traceback.preserve_node_meta())
            stack.enter_context(_without_mkldnn())
            # Attention as its math (matmuls, softmax): the CPU's flash-attention
            # kernel has a backward torch-mlir cannot lower.
            stack.enter_context(sdpa_kernel([SDPBackend.MATH]))
            stack.enter_context(provenance)
            gm = make_fx(torch.func.functionalize(fn, remove="mutations"),
                         decomposition_table=decompositions.table(),
                         tracing_mode="fake")(*fake_args)
    except TraceError:
        raise
    except decompositions.UnsupportedLayerError as error:
        raise TraceError(str(error)) from None
    except Exception as error:
        reason = "".join(traceback.format_exception_only(type(error), error)).strip()
        if dynamic_batch and ("symbolic" in reason.lower() or "guard" in reason.lower()):
            raise TraceError(f"dynamic_batch: the model cannot be traced with a dynamic batch "
                             f"dimension: {reason}") from error
        raise TraceError(f"tracing {what} failed: {reason}") from error
    _check_random(gm)
    return gm


def _check_random(gm) -> None:
    """A TraceError for an op that draws random numbers (torch.rand,
    bernoulli, ... in user code): the compiled step has no generator."""
    for node in gm.graph.nodes:
        target = node.target
        if (node.op == "call_function" and isinstance(target, torch._ops.OpOverload)
                and torch.Tag.nondeterministic_seeded in target.tags):
            custom = node.meta.get("custom") or {}
            op = node.meta.get("original_aten") or target
            raise TraceError(
                f"{op} (module '{custom.get('amp_module', LOSS_PATH)}', "
                f"{custom.get('amp_phase', 'forward')}) draws random numbers, which the "
                "compiled step cannot: it has no random number generator")


def _check_placeholders(gm, argument_names, dynamic):
    """The placeholders' values; a TraceError if a dynamic batch got fixed."""
    placeholders = [n.meta["val"] for n in gm.graph.nodes if n.op == "placeholder"]
    for (role, name), value, is_dynamic in zip(argument_names, placeholders, dynamic):
        if is_dynamic and _specialized(value.shape[0]):
            raise TraceError(
                f"dynamic_batch: the model fixes dimension 0 of {name} to {int(value.shape[0])} "
                "(a shape computed from constants, such as a reshape to a fixed batch size); "
                "derive it from the input's size, or trace without dynamic_batch")
    return placeholders


def _output_values(gm):
    outputs = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    return [node.meta["val"] for node in outputs]


def _check_inputs(example_inputs, dynamic_batch, what="example_inputs"):
    example_inputs = list(example_inputs)
    for i, value in enumerate(example_inputs):
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{what}[{i}] must be a tensor, got {type(value).__name__}")
        if dynamic_batch and (value.dim() == 0 or value.shape[0] < 2):
            raise TraceError(f"dynamic_batch: {what}[{i}] needs a batch dimension of "
                             f"size 2 or more (PyTorch fixes sizes 0 and 1), got shape "
                             f"{tuple(value.shape)}")
    return example_inputs


class _Captured(Exception):
    """Stops loss_fn at the model's call (model_inputs)."""


def model_inputs(model: torch.nn.Module, loss_fn: Callable,
                 batch: Sequence[torch.Tensor]) -> List[torch.Tensor]:
    """The tensors `loss_fn(model, *batch)` calls `model` with (its
    positional arguments), found by running loss_fn up to that call: the
    model's forward does not run, so nothing (BatchNorm statistics) changes.
    A TraceError if loss_fn never calls the model, or calls it with
    keyword or non-tensor arguments."""
    captured = {}

    def stop(module, args, kwargs):
        captured["args"], captured["kwargs"] = args, kwargs
        raise _Captured

    handle = model.register_forward_pre_hook(stop, with_kwargs=True)
    try:
        with torch.no_grad():
            loss_fn(model, *batch)
    except _Captured:
        pass
    finally:
        handle.remove()
    if "args" not in captured:
        raise TraceError("loss_fn(model, *batch) never calls model(...); pass the model's "
                         "inputs as forward_inputs")
    args, kwargs = captured["args"], captured["kwargs"]
    if kwargs or not all(isinstance(a, torch.Tensor) for a in args):
        raise TraceError("loss_fn calls the model with keyword or non-tensor arguments; "
                         "the eval forward takes tensors in order: pass forward_inputs")
    return [a.detach().clone() for a in args]


@dataclass
class TracedForward:
    """The model's eval-mode forward, a second function of the step's module:
    (parameters, buffers, inputs) -> outputs, the parameters and buffers in
    the step's argument order (as amp-run --eval-func and Session.predict
    pass them)."""
    function_name: str
    arguments: List[TensorRecord]  # roles parameter, buffer, data ("input<i>")
    results: List[TensorRecord]  # role "output", "output<i>"
    output_spec: pytree.TreeSpec  # rebuilds the model's output structure from the results
    graph_module: torch.fx.GraphModule


@contextlib.contextmanager
def _eval_mode(model: torch.nn.Module):
    """The model in eval mode; every module's own flag restored after."""
    flags = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        yield
    finally:
        for module, training in flags:
            module.training = training


def _trace_forward(model, inputs, dynamic_batch, function_name):
    """(TracedForward, example argument values) of model.eval()'s forward."""
    named_params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    named_buffers = list(model.named_buffers())
    state_names = [n for n, _ in named_params] + [n for n, _ in named_buffers]
    argument_names = ([("parameter", n) for n, _ in named_params]
                      + [("buffer", n) for n, _ in named_buffers]
                      + [("data", f"input{i}") for i in range(len(inputs))])
    example = [p.detach() for _, p in named_params] + [b.detach() for _, b in named_buffers]
    example += inputs
    is_bool = [value.dtype == torch.bool for value in example]
    example = [_as_carried(value) for value in example]
    dynamic = [dynamic_batch and role == "data" for role, _ in argument_names]
    provenance = _Provenance(model)
    spec = {}

    def forward(*flat):
        flat = [_from_carried(value, b) for value, b in zip(flat, is_bool)]
        state = dict(zip(state_names, flat[:len(state_names)]))
        provenance.enter_phase("forward", ROOT_PATH)
        outputs = torch.func.functional_call(model, state, tuple(flat[len(state_names):]))
        leaves, spec["tree"] = pytree.tree_flatten(outputs)
        if not leaves or not all(isinstance(t, torch.Tensor) for t in leaves):
            raise TraceError("the model's forward must return tensors (or tuples, lists or "
                             "dicts of them), got " + type(outputs).__name__)
        # A result that is an argument itself would alias the caller's array.
        return tuple(_as_carried(t.clone() if any(t is a for a in flat) else t) for t in leaves)

    with _eval_mode(model):
        gm = _graph(forward, _fake_arguments(example, dynamic), provenance, dynamic_batch,
                    "the eval-mode forward")
    placeholders = _check_placeholders(gm, argument_names, dynamic)
    results = _output_values(gm)
    return TracedForward(function_name, _records(argument_names, placeholders),
                         _records([("output", f"output{i}") for i in range(len(results))],
                                  results),
                         spec["tree"], gm)


def _append_functions(module, other) -> None:
    """Moves every function of `other` (same context) to the end of `module`."""
    for op in list(other.body.operations):
        module.body.append(op.operation)


def trace_training_step(model: torch.nn.Module, loss_fn: Callable, optimizer: torch.optim.Optimizer,
                        example_inputs: Sequence[torch.Tensor], *, dynamic_batch: bool = False,
                        clip_grad_norm: Optional[float] = None,
                        model_name: str = "train_step",
                        forward_inputs: Optional[Sequence[torch.Tensor]] = None,
                        forward_name: str = "forward") -> TracedStep:
    """Traces one training step of `model` and imports it as MLIR.

    `loss_fn(model, *example_inputs)` returns the 0-d f32 loss. `optimizer`
    is a torch.optim.SGD, Adam or AdamW over the model's parameters (any
    param groups). `clip_grad_norm=max_norm` clips the gradients by their
    global L2 norm first, as torch.nn.utils.clip_grad_norm_. With
    `dynamic_batch`, dimension 0 of every data input is dynamic (one batch
    size for all of them, as traced); a model that fixes it is refused.
    With `forward_inputs` (the model's own inputs, e.g. `model_inputs(...)`),
    the module also holds the model's eval-mode forward as `@forward_name`
    (`TracedStep.forward`). The model and optimizer are not changed."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    example_inputs = _check_inputs(example_inputs, dynamic_batch)
    if forward_inputs is not None:
        forward_inputs = _check_inputs(forward_inputs, dynamic_batch, "forward_inputs")
        if forward_name == model_name:
            raise ValueError(f"the forward and the step cannot both be named '{model_name}'")
    named_params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    named_buffers = list(model.named_buffers())
    try:
        functional_optimizer = FunctionalOptimizer(
            optimizer, [p for _, p in named_params], [n for n, _ in named_params])
    except UnsupportedOptimizerError as error:
        raise TraceError(str(error)) from None
    layout = _Layout([n for n, _ in named_params], [p.detach() for _, p in named_params],
                     [n for n, _ in named_buffers],
                     [_as_carried(b.detach()) for _, b in named_buffers],
                     functional_optimizer, [_as_carried(x) for x in example_inputs],
                     [b.dtype == torch.bool for _, b in named_buffers],
                     [x.dtype == torch.bool for x in example_inputs])
    argument_names = layout.argument_names()
    initial = layout.argument_values()
    example_args = [initial[name] for role, name in argument_names
                    if role not in ("data", "seed")]
    example_args += layout.data + [torch.ones((), dtype=torch.float32)]
    dynamic = [dynamic_batch and role == "data" for role, _ in argument_names]

    provenance = _Provenance(model)
    step = _make_step(layout, _LossModule(model, loss_fn), provenance, clip_grad_norm)
    gm = _graph(step, _fake_arguments(example_args, dynamic), provenance, dynamic_batch,
                "the training step")
    placeholders = _check_placeholders(gm, argument_names, dynamic)
    arguments = _records(argument_names, placeholders)
    results = _records(layout.result_names(), _output_values(gm))
    forward = (_trace_forward(model, forward_inputs, dynamic_batch, forward_name)
               if forward_inputs is not None else None)

    context = _new_context()
    module = _import(gm, model_name, context)
    if forward is not None:
        _append_functions(module, _import(forward.graph_module, forward_name, context))
    dropped_checks = _drop_shape_checks(module) if dynamic_batch else []
    if dropped_checks:
        _lower(module, module.context, "builtin.module(func.func(canonicalize, cse, lower-affine))",
               "cleanup after dropping size checks")
    _locate_unknown(module)
    _check_dialects(module)
    _pin_f32(module)
    _store_masks_as_bytes(module)
    _set_signature_attributes(module, model_name, arguments, results, initial)
    text = module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)
    return TracedStep(text, model_name, arguments, results, gm, initial, functional_optimizer,
                      dropped_checks, forward)
