"""Installs amp_mlir from a built AMP tree.

The extension is built by the project's CMake build (target
``amp-mlir-python``, python-bindings/CMakeLists.txt) against the same
libraries as amp-opt and amp-run; this script builds that target in the tree
named by ``AMP_BUILD_DIR`` (default: ``build/`` next to this folder, which
``scripts/setup.sh`` configures) and installs the assembled package:

    bash scripts/setup.sh && pip install ./python-bindings
"""
import os
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(os.environ.get("AMP_BUILD_DIR", os.path.join(HERE, "..", "build")))
PACKAGE = os.path.join(BUILD, "python_packages", "amp_mlir")


class BuildFromTree(build_py):
    def run(self):
        if not os.path.exists(os.path.join(BUILD, "CMakeCache.txt")):
            raise SystemExit(f"amp_mlir: no configured AMP build in {BUILD}; run "
                             "scripts/setup.sh first or set AMP_BUILD_DIR")
        subprocess.check_call(["cmake", "--build", BUILD, "--target", "amp-mlir-python",
                               "-j", os.environ.get("AMP_JOBS", "2")])
        target = os.path.join(self.build_lib, "amp_mlir")
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(PACKAGE, target)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(packages=["amp_mlir", "amp_mlir.torch"], cmdclass={"build_py": BuildFromTree}, distclass=BinaryDistribution)
