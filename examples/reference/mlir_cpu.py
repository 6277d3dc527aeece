"""Runs an fp32 training step on the CPU with upstream MLIR tools, without amp-run.

`strip_amp` drops the amp markers with `amp-opt --amp-strip-markers` (the seed becomes ones,
each update region is inlined); `compile_step` lowers the result with mlir-opt (one-shot
bufferization, ownership-based deallocation, linalg to loops, LLVM), mlir-translate and llc
into a shared library, and `Step` calls its C interface through ctypes with numpy arrays as
memref descriptors, and frees the buffers it returns (the deallocation pipeline makes every
returned buffer one the caller owns: a returned argument or constant is a clone). This
is the fp32 oracle the tests compare amp-run against, and how the examples' MLIR backward
is checked independently of amp-run.
"""
import ctypes
import os
import subprocess
import tempfile

import numpy as np

LLVM_BIN = "/usr/lib/llvm-22/bin"
CPU_PIPELINE = (
    "builtin.module(func.func(llvm-request-c-wrappers),"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "buffer-deallocation-pipeline,convert-bufferization-to-memref,"
    "func.func(convert-linalg-to-loops),lower-affine,expand-strided-metadata,convert-scf-to-cf,"
    "convert-to-llvm,reconcile-unrealized-casts)"
)


def strip_amp(mlir_path, amp_opt):
    """The fp32 step as written: amp-opt's amp-strip-markers (seed = ones, updates inlined)."""
    run = subprocess.run([amp_opt, "--amp-strip-markers", mlir_path], capture_output=True,
                         text=True)
    if run.returncode:
        raise RuntimeError(f"amp-opt --amp-strip-markers {mlir_path} failed:\n{run.stderr}")
    return run.stdout


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


_free = ctypes.CDLL(None).free
_free.argtypes = [ctypes.c_void_p]


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
        out = [getattr(results, f"r{k}") for k in range(len(self._shapes))]
        values = [_to_numpy(d, s) for d, s in zip(out, self._shapes)]
        for allocated in {d.allocated for d in out}:
            _free(allocated)
        return values


def load_step(mlir_path, name, result_shapes, amp_opt, workdir=None):
    """strip_amp + compile_step + Step for a step file."""
    return Step(compile_step(strip_amp(mlir_path, amp_opt), workdir), name, result_shapes)
