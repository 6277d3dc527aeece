"""What the tests of data-parallel sessions share: where the build is, whether
MPI can run (MPICH's mpiexec and the MPI runtime), and running a script as
one process or as the ranks of `mpiexec -n N`."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.abspath(os.environ.get("AMP_BUILD_DIR", os.path.join(ROOT, "build")))
PACKAGES = os.path.join(BUILD, "python_packages")
MPIEXEC = shutil.which("mpiexec")

needs_mpi = pytest.mark.skipif(
    MPIEXEC is None or not os.path.exists(os.path.join(BUILD, "lib", "libAmpMpiRuntime.so")),
    reason="needs MPICH (mpiexec) and the MPI runtime")


def run_script(path, arguments, ranks, timeout=300):
    """Runs the Python script `path` with `arguments`, under `mpiexec -n ranks`
    when ranks > 1; returns the CompletedProcess (text output)."""
    command = [sys.executable, str(path)] + [str(a) for a in arguments]
    if ranks > 1:
        command = [MPIEXEC, "-n", str(ranks)] + command
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)
