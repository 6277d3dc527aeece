"""Loads python-bindings/amp_mlir/torch as the package `amp_mlir_torch`:
the tracer needs torch and torch-mlir, not the compiled amp_mlir extension
that `import amp_mlir` loads."""
import importlib.util
import logging
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PACKAGE = os.path.join(ROOT, "python-bindings", "amp_mlir", "torch")


def load_tracer():
    if "amp_mlir_torch" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "amp_mlir_torch", os.path.join(PACKAGE, "__init__.py"),
            submodule_search_locations=[PACKAGE])
        module = importlib.util.module_from_spec(spec)
        sys.modules["amp_mlir_torch"] = module
        spec.loader.exec_module(module)
    return sys.modules["amp_mlir_torch"]


# torch's tracing logs at DEBUG; pytest would print all of it with a failure.
logging.getLogger("torch").setLevel(logging.WARNING)
