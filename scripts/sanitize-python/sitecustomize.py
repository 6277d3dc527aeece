"""Loaded by every Python process of scripts/sanitize.sh's pytest run (PYTHONPATH).

The interpreter is not instrumented, so the sanitizer runtimes must be preloaded into it
before it loads the project's instrumented modules; a process started without them (pytest
itself, or a Python child of a test: an MPI rank, an example script) starts again with them.
Other children (the C compiler, the linker, mlir-opt, mpiexec) are not preloaded: their own
leaks at exit are not findings of the project. So the preload is taken out of the
environment that children inherit, and kept in AMP_SANITIZE_PRELOAD.
"""
import os
import sys

_PRELOAD = os.environ.get("AMP_SANITIZE_PRELOAD")


def _preloaded():
    with open("/proc/self/maps") as maps:
        return "libasan" in maps.read()


if _PRELOAD:
    if not _preloaded():
        os.execve(sys.executable, sys.orig_argv,
                  {**os.environ, "LD_PRELOAD": _PRELOAD})
    os.environ.pop("LD_PRELOAD", None)
