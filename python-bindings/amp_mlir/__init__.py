"""amp_mlir: automatic mixed precision for MLIR training steps, from Python.

- ``compile(source, options, **kwargs)``: the AMP pipeline on a training step
  (docs/TrainingStepIR.md); returns the transformed IR, the JSON report and
  the per-op explanations.
- ``Session(source, options, ...)``: the step JIT-compiled for the CPU; each
  ``step(*batch)`` runs it once with numpy arrays and carries the parameters,
  optimizer state and scaler state to the next call, as amp-run does.
- ``Session.scaler``: the loss scaler's state with PyTorch GradScaler's
  ``state_dict()`` keys.

Options are those of ``amp-opt --amp-pipeline="..."`` (the same parser),
given as a string, as keyword arguments (``init_scale=1024`` is
``init-scale=1024``), or both. docs/Python.md is the reference.
"""
import functools
import json
import os
import threading
import warnings
from dataclasses import dataclass
from typing import Dict, List, Optional

import numpy as np

from . import _amp_mlir

try:
    import ml_dtypes
    _BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # bf16 arrays need ml_dtypes; everything else works
    _BFLOAT16 = None

__all__ = ["AmpWarning", "compile", "import_step", "options_string", "validate_policy", "presets", "Session",
           "GradScalerState", "CompileResult", "Explanation", "ArgumentInfo",
           "StepResult", "gpu_available"]

_NUMPY_DTYPES = {
    "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
    "f16": np.dtype(np.float16), "i8": np.dtype(np.int8),
    "i32": np.dtype(np.int32), "i64": np.dtype(np.int64),
    "bool": np.dtype(np.bool_),
}
if _BFLOAT16 is not None:
    _NUMPY_DTYPES["bf16"] = _BFLOAT16


def _numpy_dtype(name):
    if name not in _NUMPY_DTYPES:
        raise TypeError(f"the step uses {name} arrays, which need the ml_dtypes package")
    return _NUMPY_DTYPES[name]


def _describe_dtype(dtype):
    """float64, or '>f4' (big-endian float32) where the name alone would not say why."""
    if dtype.byteorder not in ("=", "|") and dtype.newbyteorder("=") != dtype:
        order = "big" if dtype.byteorder == ">" else "little"
        return f"'{dtype.str}' ({order}-endian {dtype.name})"
    return dtype.name


def _dtype_name(dtype):
    for name, candidate in _NUMPY_DTYPES.items():
        if candidate == dtype:
            return name
    return None


def options_string(options: Optional[str] = None, **kwargs) -> str:
    """The option string for ``options`` plus keyword options:
    ``options_string("dtype=f16", init_scale=1024, explain=True)`` is
    ``"dtype=f16 init-scale=1024 explain=true"``."""
    parts = [options] if options else []
    for key, value in kwargs.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, os.PathLike):
            value = os.fspath(value)
        parts.append(f"{key.replace('_', '-')}={value}")
    return " ".join(parts)


class AmpWarning(UserWarning):
    """A warning of the compiler (e.g. a gradient that does not depend on
    the loss seed), with its location."""


def _warn(text):
    """One warning per diagnostic, its notes included."""
    messages = []
    for line in text.splitlines():
        if ": note: " in line and messages:
            messages[-1] += "\n" + line
        elif line.strip():
            messages.append(line)
    for message in messages:
        warnings.warn(message, AmpWarning, stacklevel=3)


def _read_source(source):
    """(text, name): a path (str or os.PathLike naming an existing file) is
    read, any other str is IR text."""
    if isinstance(source, os.PathLike) or (
            isinstance(source, str) and "\n" not in source and os.path.isfile(source)):
        path = os.fspath(source)
        with open(path, encoding="utf-8") as file:
            return file.read(), path
    if not isinstance(source, str):
        raise TypeError(f"source must be IR text or a path, got {type(source).__name__}")
    return source, "<string>"


@dataclass(frozen=True)
class Explanation:
    """Why one op got its precision (docs/Precision.md)."""
    op: str
    location: str
    message: str


@dataclass(frozen=True)
class CompileResult:
    ir: str
    #: The JSON report as a dict (None at level=O0, where no casts are placed).
    report: Optional[dict]
    explanations: List[Explanation]


def compile(source, options: Optional[str] = None, **kwargs) -> CompileResult:
    """Applies the AMP pipeline to a training step (IR text or a path).
    Raises ValueError for invalid options (naming the option) and for IR the
    pipeline rejects (with the located diagnostics)."""
    text, name = _read_source(source)
    ir, report, explanations, warned = _amp_mlir.compile(text, name,
                                                         options_string(options, **kwargs))
    _warn(warned)
    return CompileResult(ir, json.loads(report) if report else None,
                         [Explanation(*e) for e in explanations])


def import_step(source) -> str:
    """``amp-import-step`` on a step an importer produced (arguments and results with
    ``amp.import_role``, as ``amp_mlir.torch`` traces them): the step in the contract's form
    (``amp.seed``, ``amp.update``, ``amp.name``s), as text with the ops' locations. Raises
    ValueError with the located error when the structure is not found."""
    text, name = _read_source(source)
    return _amp_mlir.import_step(text, name)


def validate_policy(preset_or_path) -> None:
    """Raises ValueError naming the file, JSON path and line of a bad policy."""
    _amp_mlir.validate_policy(os.fspath(preset_or_path))


def presets() -> List[str]:
    return _amp_mlir.presets()


def gpu_available() -> bool:
    """Whether Session(device="gpu") can run: never in this version (the CPU
    runner only; GPU steps run through amp-compile and the CUDA runtime)."""
    return False


@dataclass(frozen=True)
class ArgumentInfo:
    """One argument of the step: ``name`` is its ``amp.name``, else
    ``arg<i>`` (its position); scaler state is ``scaler.<state>``."""
    name: str
    index: int
    #: "parameter", "buffer", "optimizer_state", "data" or "scaler_state"
    role: str
    dtype: np.dtype
    #: None for a dynamic dimension (the batch of a data argument).
    shape: tuple
    state_name: str  # the amp.state name of scaler state

    def accepts(self, shape) -> bool:
        return len(shape) == len(self.shape) and all(
            expected is None and size > 0 or size == expected
            for size, expected in zip(shape, self.shape))

    def shape_text(self) -> str:
        """(4, 1), or (?, 1) for a dynamic batch."""
        dims = ["?" if d is None else str(d) for d in self.shape]
        return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"

    def describe(self) -> str:
        """float32[4, 1], or float32[?, 1] for a dynamic batch."""
        return f"{self.dtype.name}[{self.shape_text()[1:-1].rstrip(',')}]"


@dataclass(frozen=True)
class StepResult:
    loss: float
    #: Whether the step found an inf/NaN gradient and was skipped.
    found_inf: bool
    #: The loss scale the step used (dynamic scaling), else None.
    scale: Optional[float]
    milliseconds: float
    #: Bytes of temporaries the step allocated (None with cpu_library=False).
    temporary_bytes: Optional[int] = None


class GradScalerState:
    """The loss scaler of a Session, with the keys of PyTorch's
    ``torch.amp.GradScaler.state_dict()`` so that a run can move between
    the two. The growth and backoff factors and the interval are compiled
    into the step: loading different values raises ValueError."""

    def __init__(self, session):
        self._session = session
        values = session._option_values
        self.growth_factor = float(values["growth-factor"])
        self.backoff_factor = float(values["backoff-factor"])
        self.growth_interval = int(values["growth-interval"])
        self.init_scale = float(values["init-scale"])

    @property
    def mode(self) -> str:
        """"dynamic", "static" or "none"."""
        s = self._session
        if s._state_index("scale") is not None:
            return "dynamic"
        return "static" if s._step.found_inf_result is not None else "none"

    def is_enabled(self) -> bool:
        return self.mode != "none"

    def get_scale(self) -> float:
        """The scale the next step uses (1.0 without scaling)."""
        mode = self.mode
        if mode == "dynamic":
            return float(self._session._get("scale")[()])
        return self.init_scale if mode == "static" else 1.0

    def state_dict(self) -> Dict:
        """{} without scaling (as a disabled GradScaler), {"scale": S} with
        a static scale, else GradScaler's five keys (plus "_hysteresis", the
        overflows left, when the step was compiled with hysteresis > 1)."""
        mode = self.mode
        if mode == "none":
            return {}
        if mode == "static":
            return {"scale": self.init_scale}
        state = {"scale": self.get_scale(), "growth_factor": self.growth_factor,
                 "backoff_factor": self.backoff_factor,
                 "growth_interval": self.growth_interval,
                 "_growth_tracker": int(self._session._get("growth_tracker")[()])}
        if self._session._state_index("hysteresis") is not None:
            state["_hysteresis"] = int(self._session._get("hysteresis")[()])
        return state

    def load_state_dict(self, state: Dict) -> None:
        for key, array in self._arrays(state):
            self._session._put(key, array)

    def _arrays(self, state: Dict):
        """The scaler state arguments `state` sets, as (state name, array), all checked."""
        if not isinstance(state, dict):
            raise TypeError(f"scaler state_dict must be a dict, got {type(state).__name__}")
        mode = self.mode
        if mode == "none":
            if state:
                raise ValueError("the step was compiled without loss scaling; "
                                 "it has no scaler state to load")
            return []
        if "scale" not in state:
            raise KeyError("scaler state_dict has no 'scale'")
        scale = _number(state, "scale", float)
        if mode == "static":
            if scale != self.init_scale:
                raise ValueError(f"'scale' is the static scale {self.init_scale} compiled "
                                 f"into the step, got {state['scale']}")
            return []
        for key, compiled in (("growth_factor", self.growth_factor),
                              ("backoff_factor", self.backoff_factor),
                              ("growth_interval", self.growth_interval)):
            if key in state and state[key] != compiled:
                option = key.replace("_", "-")
                raise ValueError(f"'{key}' is {compiled} in the compiled step, got "
                                 f"{state[key]}; compile with {option}={state[key]}")
        scale = np.float32(scale)
        if not np.isfinite(scale) or scale <= 0:
            raise ValueError(f"'scale' must be finite and > 0, got {state['scale']}")
        arrays = [("scale", np.full((), scale, np.float32)),
                  ("growth_tracker", np.full((), _count(state, "_growth_tracker"), np.int32))]
        if "_hysteresis" in state and self._session._state_index("hysteresis") is not None:
            arrays.append(("hysteresis", np.full((), _count(state, "_hysteresis"), np.int32)))
        return arrays


def _number(state, key, kind):
    """state[key] as a Python number of `kind`, or a ValueError naming the key."""
    value = state[key]
    try:
        if isinstance(value, (bool, str, bytes)) or np.ndim(value) != 0:
            raise TypeError
        return kind(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"'{key}' must be a number, got {value!r}") from None


def _count(state, key, default=0, limit=2**31 - 1):
    """state[key] (default if absent) as an integer in [0, limit]."""
    if key not in state:
        return default
    value = state[key]
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        count = int(value)  # exactly: a 64-bit seed does not fit a double
    else:
        number = _number(state, key, float)
        count = int(number) if number.is_integer() else None
    if count is None or not 0 <= count <= limit:
        raise ValueError(f"'{key}' must be an integer in [0, {limit}], got {state[key]!r}")
    return count


#: The carried arguments a state_dict holds by name (the scaler apart).
_CARRIED_ROLES = ("parameter", "buffer", "optimizer_state")


def _exclusive(method):
    """Runs a Session method holding the session's lock: its arguments and state live in
    one set of buffers, so calls from several threads take turns, each whole."""
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return locked


class Session:
    """A training step compiled for the CPU, with its training state.

    ``Session(source, options=None, *, func=None, seed=0, functions=(),
    cpu=None, threads=1, cpu_library=True, channels_last=True, f32_operands=False,
    device="cpu", **kwargs)``:
    ``options`` (and keyword options)
    as for ``compile``; None with no keyword options runs the step in fp32
    as written. Parameters start from ``seed`` as in amp-run (Glorot for
    rank >= 2, zeros otherwise, or the argument's ``amp.init``), optimizer
    state at zero, the scaler at its options. ``functions`` names other
    functions of the module compiled along (e.g. "predict"), for ``call``
    and ``predict``. ``threads``: the cores the matmul and convolution
    library calls and the compiled loops use (1, the default, is
    deterministic; the loops give the same bits on any number); ``cpu_library``:
    whether they go to oneDNN (else compiled loops, with the same results up
    to summation order), as amp-run's ``--threads`` and ``--cpu-library``;
    ``channels_last``: whether the convolutions' images are laid out
    channels-last for oneDNN (amp-run's ``--channels-last``; the same bits
    for 16 channels where oneDNN blocks channels by 16, AVX-512; within rounding
    for wider ones and on AVX2); ``f32_operands``:
    whether the bf16 and f16 operands of the matmuls and convolutions that
    this host's runtime extends to f32 in each call are stored in f32,
    rounded to their type (amp-run's ``--f32-operands``; the same bits, fewer conversions,
    more memory).

    With ``data_parallel="mpi"`` the session is one rank of an MPI job
    (``mpiexec -n N python3 train.py``; MPI is initialized here and finalized
    at exit): ``fit`` trains on this rank's share of every batch and the
    gradients are summed over the ranks (docs/DataParallel.md). A session
    without it refuses to start as one of several MPI processes.
    """

    def __init__(self, source, options: Optional[str] = None, *, func: Optional[str] = None,
                 seed: int = 0, functions=(), cpu: Optional[str] = None, threads: int = 1,
                 cpu_library: bool = True, channels_last: bool = True,
                 f32_operands: bool = False, device: str = "cpu", **kwargs):
        if device != "cpu":
            raise NotImplementedError(
                f"device={device!r}: amp_mlir runs steps on the CPU only; GPU execution "
                "is not available from Python in this version")
        self._lock = threading.RLock()
        text, name = _read_source(source)
        option_text = options_string(options, **kwargs) if (options or kwargs) else None
        self._option_values = _amp_mlir.option_values(option_text or "")
        if not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads={threads!r}: expected a positive integer")
        self._step = _amp_mlir.Step(text, name, option_text, func or "",
                                    list(functions), cpu or "", threads, bool(cpu_library),
                                    bool(channels_last), bool(f32_operands))
        _warn(self._step.warnings)
        self.options = option_text
        self.arguments = [
            ArgumentInfo(name, i, role, _numpy_dtype(dtype),
                         tuple(None if d < 0 else d for d in shape), state)
            for i, (name, role, dtype, shape, state, _) in enumerate(self._step.arguments)]
        self._next_result = {i: a[5] for i, a in enumerate(self._step.arguments)}
        self.steps_done = 0
        self.seed = seed
        self._step.initialize(seed)
        self.scaler = GradScalerState(self)

    # -- introspection -------------------------------------------------------
    @property
    def rank(self) -> int:
        """This process's rank in the MPI job of a data-parallel session; 0 otherwise."""
        return self._step.rank

    @property
    def world_size(self) -> int:
        """The number of ranks of a data-parallel session; 1 otherwise."""
        return self._step.world_size

    def check_replicas(self) -> None:
        """Compares a hash of the parameters, optimizer and scaler state across the
        ranks of a data-parallel session (every rank must call it); raises ValueError
        naming the ranks that differ from rank 0."""
        self._step.check_replicas()

    @property
    def name(self) -> str:
        return self._step.name

    @property
    def report(self) -> Optional[dict]:
        return json.loads(self._step.report) if self._step.report else None

    @property
    def explanations(self) -> List[Explanation]:
        return [Explanation(*e) for e in self._step.explanations]

    @property
    def compile_seconds(self) -> float:
        return self._step.compile_seconds

    def _role(self, role):
        return [a for a in self.arguments if a.role == role]

    @property
    def data_arguments(self) -> List[ArgumentInfo]:
        return self._role("data")

    @property
    def parameters(self) -> Dict[str, np.ndarray]:
        """Copies of the parameters, by argument name."""
        return {a.name: self._get(a.index) for a in self._role("parameter")}

    @property
    def hyperparameters(self) -> Dict[str, np.ndarray]:
        """Copies of the values the update only reads (learning rates ...), by
        argument name: each starts at its ``amp.value``."""
        return {a.name: self._get(a.index) for a in self._role("hyperparameter")}

    @_exclusive
    def set_hyperparameter(self, name: str, value) -> None:
        """Sets hyperparameter ``name`` for the next steps (an LR scheduler's new
        rate); a number fills it in its dtype."""
        named = {a.name: a for a in self._role("hyperparameter")}
        if name not in named:
            raise KeyError(f"no hyperparameter '{name}'; the step has "
                           f"{', '.join(sorted(named)) or 'none'}")
        a = named[name]
        self._put(a.index, np.full(a.shape, value, a.dtype)
                  if np.isscalar(value) else value, "hyperparameter")

    @property
    def buffers(self) -> Dict[str, np.ndarray]:
        """Copies of the buffers the forward updates (BatchNorm's running
        statistics), by argument name."""
        return {a.name: self._get(a.index) for a in self._role("buffer")}

    @property
    def optimizer_state(self) -> Dict[str, np.ndarray]:
        return {a.name: self._get(a.index) for a in self._role("optimizer_state")}

    # -- buffers ---------------------------------------------------------------
    def _state_index(self, state_name):
        for a in self.arguments:
            if a.role == "scaler_state" and a.state_name == state_name:
                return a.index
        return None

    def _get(self, key) -> np.ndarray:
        index = key if isinstance(key, int) else self._state_index(key)
        a = self.arguments[index]
        shape = self._step.argument_shape(index)
        return np.frombuffer(self._step.get_argument(index), a.dtype).reshape(shape).copy()

    def _check(self, a: ArgumentInfo, value, what) -> np.ndarray:
        array = np.asarray(value)
        if array.dtype != a.dtype:
            raise TypeError(f"{what} '{a.name}' must be {a.describe()}, "
                            f"got dtype {_describe_dtype(array.dtype)}")
        if not a.accepts(array.shape):
            raise ValueError(f"{what} '{a.name}' must have shape {a.shape_text()} "
                             f"({a.dtype.name}), got {array.shape}")
        # ascontiguousarray makes 0-d arrays 1-d.
        return np.ascontiguousarray(array).reshape(array.shape)

    def _put(self, key, value, what="argument"):
        index = key if isinstance(key, int) else self._state_index(key)
        a = self.arguments[index]
        array = self._check(a, value, what)
        name = _dtype_name(array.dtype)
        self._step.set_argument(index, name, list(array.shape), array.tobytes())

    # -- running ---------------------------------------------------------------
    @_exclusive
    def step(self, *data, **named) -> StepResult:
        """Runs one step on a batch: the data arguments in order, or by name
        (``arg4=x``, or the argument's ``amp.name``). A step whose batch
        dimension is dynamic takes batches of any size, the same for every
        data argument. Wrong, missing or extra arrays raise TypeError or
        ValueError naming the argument; the state is then unchanged."""
        inputs = self.data_arguments
        if len(data) > len(inputs):
            raise TypeError(f"step() takes {len(inputs)} data argument(s) "
                            f"({', '.join(a.name for a in inputs)}), got {len(data)}")
        given = {a.name: value for a, value in zip(inputs, data)}
        names = {a.name for a in inputs}
        for key, value in named.items():
            if key not in names:
                raise TypeError(f"step() got an unexpected argument '{key}'; the data "
                                f"arguments are {', '.join(sorted(names)) or 'none'}")
            if key in given:
                raise TypeError(f"step() got two values for argument '{key}'")
            given[key] = value
        missing = [a for a in inputs if a.name not in given]
        if missing:
            raise TypeError("step() missing data argument(s): " + ", ".join(
                f"'{a.name}' ({a.describe()})" for a in missing))
        checked = [(a, self._check(a, given[a.name], "data argument")) for a in inputs]
        batches = {array.shape[0] for a, array in checked if a.shape[0] is None}
        if len(batches) > 1:
            raise ValueError("data arguments " + ", ".join(
                f"'{a.name}' ({array.shape[0]} rows)" for a, array in checked)
                + " hold batches of different sizes; a step takes one batch size")
        for a, array in checked:
            self._put(a.index, array, "data argument")
        loss, scale, found_inf, ms, temporaries = self._step.run()
        self.steps_done += 1
        return StepResult(loss, found_inf, scale, ms, temporaries)

    @_exclusive
    def fit(self, *data, steps: Optional[int] = None, epochs: Optional[int] = None,
            batch_size: Optional[int] = None, shuffle: bool = True,
            keep_last_batch: bool = False, save_every: Optional[int] = None,
            save_to=None) -> List[StepResult]:
        """Trains on data sets holding every sample along dimension 0, one per data
        argument, exactly as amp-run does with its --data files: batches of the step's
        size (or ``batch_size`` for a dynamic batch), a new permutation every epoch
        drawn from the session's seed and the epoch number (``shuffle``), for ``steps``
        steps or ``epochs`` epochs (default one epoch), continuing from ``steps_done``
        so that a resumed session continues the same run. In a data-parallel session
        each rank takes its share of every batch (``batch_size`` is the batch of all
        ranks together), and each result has the loss of the whole batch.
        ``save_every=K, save_to=path``: ``save(path)`` after every K steps of the run
        and at the end (amp-run's ``--save-every``), so that an interrupted run
        resumes with ``load(path)`` and loses at most K steps."""
        inputs = self.data_arguments
        if len(data) != len(inputs):
            raise TypeError(f"fit() takes {len(inputs)} data set(s), one per data "
                            f"argument ({', '.join(a.name for a in inputs)}), got {len(data)}")
        if steps is not None and epochs is not None:
            raise TypeError("fit() takes steps or epochs, not both")
        if (save_every is None) != (save_to is None) or (
                save_every is not None and (not isinstance(save_every, int) or save_every < 1)):
            raise ValueError("fit() takes save_every (an integer >= 1) and save_to together, "
                             f"got save_every={save_every!r}, save_to={save_to!r}")
        sets = []
        for a, value in zip(inputs, data):
            array = np.ascontiguousarray(np.asarray(value))
            name = _dtype_name(array.dtype)
            if name is None:
                raise TypeError(f"data set for '{a.name}' has dtype "
                                f"{_describe_dtype(array.dtype)}, which no step takes")
            sets.append((name, list(array.shape), array.tobytes()))
        try:
            outcomes = self._step.fit(sets, -1 if steps is None else steps,
                                      1 if epochs is None else epochs, self.steps_done,
                                      batch_size or 0, keep_last_batch, shuffle, self.seed,
                                      save_every or 0, os.fspath(save_to or ""))
        finally:  # a KeyboardInterrupt between steps keeps the count of those run
            self.steps_done += self._step.fit_steps
        return [StepResult(loss, found_inf, scale, ms, temporaries)
                for loss, scale, found_inf, ms, temporaries in outcomes]

    @_exclusive
    def accuracy(self, inputs, labels, function: str = "predict",
                 batch_size: Optional[int] = None) -> float:
        """The accuracy of ``function`` (compiled along, as amp-run's --eval-func) on the
        current model: logits [batch, classes] against class indices [N] or one-hot rows
        [N, C]; ``batch_size`` for a function of a dynamic batch."""
        def raw(value):
            array = np.ascontiguousarray(np.asarray(value))
            return (_dtype_name(array.dtype), list(array.shape), array.tobytes())
        return self._step.accuracy(function, raw(inputs), raw(labels), batch_size or 0)

    def result(self, index: int) -> np.ndarray:
        """Result ``index`` of the last step (e.g. the loss array)."""
        results = self._step.results
        if not 0 <= index < len(results):
            raise IndexError(f"the step has {len(results)} results, no #{index}")
        carried = [i for i, r in self._next_result.items() if r == index]
        if carried:  # its buffer moved to the argument
            return self._get(carried[0])
        dtype, shape = results[index]
        return np.frombuffer(self._step.get_result(index), _numpy_dtype(dtype)).reshape(shape).copy()

    @_exclusive
    def call(self, function: str, *arrays) -> List[np.ndarray]:
        """Calls a function compiled along (``functions``) on arrays of its
        argument types; returns its results."""
        arg_types, result_types = self._step.function_types(function)
        if len(arrays) != len(arg_types):
            raise TypeError(f"@{function} takes {len(arg_types)} argument(s), got {len(arrays)}")
        inputs = []
        batch = None
        for i, (value, (dtype, shape)) in enumerate(zip(arrays, arg_types)):
            array = np.asarray(value)
            expected = ArgumentInfo(f"#{i}", i, "", _numpy_dtype(dtype),
                                    tuple(None if d < 0 else d for d in shape), "")
            if array.dtype != expected.dtype or not expected.accepts(array.shape):
                raise TypeError(f"argument #{i} of @{function} must be {expected.describe()}, "
                                f"got {array.dtype.name}{list(array.shape)}")
            if shape and shape[0] < 0:
                if batch not in (None, array.shape[0]):
                    raise ValueError(f"arguments of @{function} hold batches of {batch} and "
                                     f"{array.shape[0]} rows; a call takes one batch size")
                batch = array.shape[0]
            inputs.append((dtype, list(array.shape), np.ascontiguousarray(array).tobytes()))
        outputs = self._step.call(function, inputs)
        return [np.frombuffer(data, _numpy_dtype(dtype)).reshape(
                    [batch if d < 0 else d for d in shape]).copy()
                for data, (dtype, shape) in zip(outputs, result_types)]

    @_exclusive
    def predict(self, x, function: str = "predict") -> np.ndarray:
        """``function`` (a forward function compiled along, as amp-run's
        --eval-func) on the current parameters and buffers in argument order
        and one input batch ``x``; returns its first result."""
        model = [self._get(a.index) for a in self.arguments
                 if a.role in ("parameter", "buffer")]
        return self.call(function, *model, x)[0]

    # -- state -------------------------------------------------------------------
    @_exclusive
    def state_dict(self) -> Dict:
        """Everything the next step depends on besides its batch: the carried
        arrays by argument name, the scaler (GradScaler keys) and the step
        count. ``load_state_dict`` on a Session of the same step and options
        continues bit for bit."""
        carried = {a.name: self._get(a.index) for a in self.arguments
                   if a.role in _CARRIED_ROLES}
        return {"step": self.steps_done, "seed": self.seed, "state": carried,
                "hyperparameters": self.hyperparameters,
                "scaler": self.scaler.state_dict()}

    @_exclusive
    def load_state_dict(self, state: Dict) -> None:
        """Sets everything `state` (a ``state_dict()``) holds; everything is checked
        first, so that an error (KeyError, TypeError, ValueError naming the key) leaves
        the session as it was."""
        if not isinstance(state, dict):
            raise TypeError(f"state_dict must be a dict, got {type(state).__name__}")
        arrays = state.get("state", {})
        if not isinstance(arrays, dict):
            raise TypeError(f"state_dict's 'state' must be a dict of arrays, got "
                            f"{type(arrays).__name__}")
        expected = {a.name: a for a in self.arguments if a.role in _CARRIED_ROLES}
        unknown = sorted(set(arrays) - set(expected))
        if unknown:
            raise KeyError(f"state_dict has arrays for no carried argument: {unknown}")
        missing = sorted(set(expected) - set(arrays))
        if missing:
            raise KeyError(f"state_dict lacks carried argument(s) {missing}")
        for name, value in arrays.items():  # all checked before any is set
            self._check(expected[name], value, "state")
        hyperparameters = state.get("hyperparameters", {})
        named = {a.name: a for a in self._role("hyperparameter")}
        for name, value in hyperparameters.items():
            if name not in named:
                raise KeyError(f"state_dict has a value for no hyperparameter: '{name}'")
            a = named[name]
            self._check(a, np.full(a.shape, value, a.dtype) if np.isscalar(value) else value,
                        "hyperparameter")
        scaler = self.scaler._arrays(state.get("scaler", {}))
        steps = _count(state, "step", limit=2**63 - 1)
        seed = _count(state, "seed", self.seed, limit=2**64 - 1)
        for name, value in arrays.items():
            self._put(expected[name].index, value, "state")
        for name, value in hyperparameters.items():
            self.set_hyperparameter(name, value)
        for key, value in scaler:
            self._put(key, value)
        self.steps_done, self.seed = steps, seed

    @_exclusive
    def save(self, path) -> None:
        """Writes the training state (as ``state_dict``) to directory ``path`` in the
        format of ``amp-run --save-state``: atomically, so that a process killed while
        saving leaves the previous checkpoint whole (docs/Reliability.md). An existing
        ``path`` must hold nothing but .npy files: it is replaced."""
        self._step.save_checkpoint(os.fspath(path), self.steps_done, self.seed)

    @_exclusive
    def load(self, path) -> None:
        """Loads a directory ``save`` or ``amp-run --save-state`` wrote; the session then
        continues that run bit for bit. Every file is checked before anything is set."""
        self.steps_done, self.seed = self._step.load_checkpoint(os.fspath(path))
