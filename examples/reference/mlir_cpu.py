"""Runs an fp32 training step on the CPU with upstream MLIR tools only, without amp-run.

`strip_amp` turns a step into plain upstream IR: `amp.seed` becomes a constant of ones
(what `scaling=none` does) and each `amp.update` region is inlined (its block arguments
replaced by the grads and state operands, its results by the yielded values). It reads
the pretty form that the examples and bench/gen_step.py print (one op per line as shown
in docs/spec), not arbitrary IR.

`compile_step` lowers that with mlir-opt (one-shot bufferization, linalg to loops, LLVM),
mlir-translate and llc into a shared library, and `Step` calls its C interface through
ctypes with numpy arrays as memref descriptors. This is the fp32 oracle the tests compare
amp-run against, and how the examples' MLIR backward is checked before amp-run exists.
"""
import ctypes
import os
import re
import subprocess
import tempfile

import numpy as np

LLVM_BIN = "/usr/lib/llvm-22/bin"
CPU_PIPELINE = (
    "builtin.module(func.func(llvm-request-c-wrappers),"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "func.func(convert-linalg-to-loops),expand-strided-metadata,convert-scf-to-cf,"
    "convert-to-llvm,reconcile-unrealized-casts)"
)

_SEED = re.compile(r"^(\s*)(%[\w.]+) = amp\.seed %[\w.]+ : (tensor<[^>]*>)\s*$")
_UPDATE = re.compile(
    r"^\s*(%[\w.]+)(?::\d+)? = amp\.update grads\(([^:]*):[^)]*\)\s*$|"
    r"^\s*(%[\w.]+)(?::\d+)? = amp\.update grads\(([^:]*):[^)]*\)\s*state\(([^:]*):[^)]*\) \{\s*$")
_NAMES = re.compile(r"%[\w.]+")


def _names(text):
    return _NAMES.findall(text)


def strip_amp(text):
    """Returns `text` with amp.seed replaced by ones and every amp.update inlined."""
    lines = text.splitlines()
    out = []
    renames = {}  # update result (name or name#i) -> yielded value
    i = 0
    while i < len(lines):
        line = lines[i]
        seed = _SEED.match(line)
        if seed:
            indent, name, ty = seed.groups()
            out.append(f"{indent}{name} = arith.constant dense<1.0> : {ty}")
            i += 1
            continue
        if " = amp.update " not in line:
            out.append(line)
            i += 1
            continue
        # Header: may span lines up to the one ending in '{'.
        header = line
        while not header.rstrip().endswith("{"):
            i += 1
            header += " " + lines[i].strip()
        m = re.match(r"^\s*(%[\w.]+)(?::(\d+))? = amp\.update (?:grads\(([^:]*):[^)]*\)\s*)?"
                     r"state\(([^:]*):[^)]*\)\s*\{\s*$", header)
        if not m:
            raise ValueError(f"unsupported amp.update form: {header}")
        result, count, grads, state = m.groups()
        operands = _names(grads or "") + _names(state)
        # Block header: '^bb0(' ... '):' possibly over several lines.
        i += 1
        block = lines[i]
        while not block.rstrip().endswith("):"):
            i += 1
            block += " " + lines[i].strip()
        args = re.findall(r"(%[\w.]+)\s*:", block)
        if len(args) != len(operands):
            raise ValueError(f"block has {len(args)} arguments for {len(operands)} operands")
        mapping = dict(zip(args, operands))
        i += 1
        while not lines[i].strip().startswith("amp.yield"):
            out.append(_NAMES.sub(lambda n: mapping.get(n.group(0), n.group(0)), lines[i]))
            i += 1
        yielded = [mapping.get(n, n) for n in _names(lines[i].split(":")[0])]
        i += 1  # the '} : types' line
        if not lines[i].strip().startswith("}"):
            raise ValueError(f"expected the end of the update region, got: {lines[i]}")
        i += 1
        if count is None:
            renames[result] = yielded[0]
        else:
            for k, value in enumerate(yielded):
                renames[f"{result}#{k}"] = value
    stripped = "\n".join(out) + "\n"
    return re.sub(r"%[\w.]+(?:#\d+)?", lambda n: renames.get(n.group(0), n.group(0)), stripped)


def compile_step(mlir_text, workdir=None):
    """Lowers a step without amp ops to a shared library; returns its path."""
    workdir = workdir or tempfile.mkdtemp(prefix="amp-step-")
    src = os.path.join(workdir, "step.mlir")
    with open(src, "w") as f:
        f.write(mlir_text)
    llvm_mlir = os.path.join(workdir, "step.llvm.mlir")
    ll = os.path.join(workdir, "step.ll")
    obj = os.path.join(workdir, "step.o")
    lib = os.path.join(workdir, "step.so")
    for cmd in ([f"{LLVM_BIN}/mlir-opt", src, f"--pass-pipeline={CPU_PIPELINE}", "-o", llvm_mlir],
                [f"{LLVM_BIN}/mlir-translate", "--mlir-to-llvmir", llvm_mlir, "-o", ll],
                [f"{LLVM_BIN}/llc", "-O2", "-filetype=obj", "-relocation-model=pic", ll, "-o", obj],
                ["cc", "-shared", obj, "-o", lib, "-lm"]):
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{run.stderr}")
    return lib


def _descriptor_type(rank):
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})


def _descriptor(array):
    desc = _descriptor_type(array.ndim)()
    desc.allocated = desc.aligned = array.ctypes.data
    desc.offset = 0
    if array.ndim:
        desc.sizes[:] = array.shape
        desc.strides[:] = [s // array.itemsize for s in array.strides]
    return desc


def _to_numpy(desc, shape):
    count = int(np.prod(shape)) if shape else 1
    buf = (ctypes.c_float * count).from_address(desc.aligned + 4 * desc.offset)
    return np.frombuffer(buf, dtype=np.float32).reshape(shape).copy()


class Step:
    """The compiled C interface `_mlir_ciface_<name>` of an fp32 step with f32 tensors."""

    def __init__(self, lib_path, name, result_shapes):
        self._lib = ctypes.CDLL(lib_path)
        self._fn = getattr(self._lib, f"_mlir_ciface_{name}")
        self._shapes = [tuple(s) for s in result_shapes]
        self._results = type("Results", (ctypes.Structure,), {"_fields_": [
            (f"r{k}", _descriptor_type(len(s))) for k, s in enumerate(self._shapes)]})

    def __call__(self, *arrays):
        """Calls the step on copies of `arrays` (float32); returns the results."""
        arrays = [np.ascontiguousarray(a, dtype=np.float32).copy() for a in arrays]
        descs = [_descriptor(a) for a in arrays]
        results = self._results()
        self._fn(ctypes.byref(results), *[ctypes.byref(d) for d in descs])
        # Result buffers are leaked on purpose: a test process makes few calls.
        return [_to_numpy(getattr(results, f"r{k}"), s) for k, s in enumerate(self._shapes)]


def load_step(mlir_path, name, result_shapes, workdir=None):
    """strip_amp + compile_step + Step for a step file."""
    with open(mlir_path) as f:
        text = strip_amp(f.read())
    return Step(compile_step(text, workdir), name, result_shapes)
