"""python -m amp_mlir.torch export FILE.py:FUNCTION -o DIR [options]

Runs FILE.py, calls FUNCTION() and exports its training setup with
amp_mlir.torch.export_training_step: DIR/step.mlir, DIR/params/*.npy,
DIR/manifest.json. FUNCTION returns (model, loss_fn, optimizer,
example_inputs), or a dict with those keys plus any of export's options
(amp, dynamic_batch, clip_grad_norm, forward_inputs); options given on the
command line take precedence.
"""
import argparse
import importlib.util
import os
import sys

REQUIRED = ("model", "loss_fn", "optimizer", "example_inputs")
OPTIONS = ("amp", "dynamic_batch", "clip_grad_norm", "forward_inputs")


def _load_setup(target: str):
    """FUNCTION() of FILE.py as a dict of REQUIRED (and OPTIONS) keys."""
    path, sep, function = target.rpartition(":")
    if not sep or not path or not function:
        raise SystemExit(f"error: expected FILE.py:FUNCTION, got '{target}'")
    if not os.path.isfile(path):
        raise SystemExit(f"error: no file '{path}'")
    directory = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, directory)  # the file's own imports
    spec = importlib.util.spec_from_file_location("_amp_export_setup", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    make = getattr(module, function, None)
    if not callable(make):
        raise SystemExit(f"error: '{path}' has no function '{function}'")
    setup = make()
    if isinstance(setup, dict):
        missing = [k for k in REQUIRED if k not in setup]
        unknown = sorted(set(setup) - set(REQUIRED) - set(OPTIONS))
        if missing or unknown:
            raise SystemExit(f"error: {function}() returned a dict "
                             + (f"without {', '.join(missing)}" if missing else "")
                             + ("; " if missing and unknown else "")
                             + (f"with unknown keys {', '.join(unknown)}" if unknown else "")
                             + f"; expected {', '.join(REQUIRED)} and optionally "
                             + ", ".join(OPTIONS))
        return setup
    if isinstance(setup, (tuple, list)) and len(setup) == 4:
        return dict(zip(REQUIRED, setup))
    raise SystemExit(f"error: {function}() must return (model, loss_fn, optimizer, "
                     "example_inputs) or a dict with those keys, got "
                     + type(setup).__name__)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m amp_mlir.torch",
                                     description="PyTorch training setups for amp-mlir's tools")
    commands = parser.add_subparsers(dest="command", required=True)
    export = commands.add_parser("export", help="write step.mlir and the weights",
                                 description=__doc__.split("\n\n", 1)[1])
    export.add_argument("target", metavar="FILE.py:FUNCTION")
    export.add_argument("-o", "--output", required=True, metavar="DIR")
    export.add_argument("--amp", help='--amp-pipeline options to check the step with, '
                        'e.g. "dtype=f16" (recorded in the manifest)')
    export.add_argument("--dynamic-batch", action="store_true", default=None,
                        help="dimension 0 of every data input dynamic")
    export.add_argument("--clip-grad-norm", type=float, metavar="MAX_NORM")
    args = parser.parse_args(argv)

    from . import TraceError, export_training_step

    setup = _load_setup(args.target)
    options = {k: setup[k] for k in OPTIONS if k in setup}
    for key in ("amp", "dynamic_batch", "clip_grad_norm"):
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
    try:
        manifest = export_training_step(setup["model"], setup["loss_fn"], setup["optimizer"],
                                        setup["example_inputs"], args.output, **options)
    except (TraceError, ValueError, TypeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    roles = [a["role"] for a in manifest["arguments"]]
    print(f"{os.path.join(args.output, 'step.mlir')}: @{manifest['function']} "
          f"({roles.count('parameter')} parameter(s), {roles.count('buffer')} buffer(s), "
          f"{roles.count('optimizer_state')} optimizer state, "
          f"{roles.count('hyperparameter')} hyperparameter(s), {roles.count('data')} data "
          f"argument(s)) and @{manifest['forward']}")
    print(f"{os.path.join(args.output, 'params')}: the model's parameters and buffers "
          "(amp-run --load-params)")
    print(f"run: (cd {args.output} && {manifest['amp_run']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
