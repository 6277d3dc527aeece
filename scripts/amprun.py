"""Trains a step with build/bin/amp-run and reads back what it writes: the per-step --log CSV,
the .npy files of --save-params and --save-state, and the compile and training times it prints.
Shared by scripts/demo.py and test/python/test_numerics.py."""
import csv
import os
import re
import subprocess
import sys
from dataclasses import dataclass

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)
BUILD = os.environ.get("AMP_BUILD_DIR", os.path.join(ROOT, "build"))
AMP_RUN = os.path.join(BUILD, "bin", "amp-run")
DATA = os.path.join(BUILD, "data")


def digits(split, kind):
    """Path of build/data/digits_<split>_<kind>.npy (split: train/test; kind: x/y/labels)."""
    return os.path.join(DATA, f"digits_{split}_{kind}.npy")


@dataclass
class Run:
    loss: np.ndarray       # per step, float64 (nan/inf as logged)
    scale: np.ndarray      # the scale each step used; nan without dynamic scaling
    found_inf: np.ndarray  # bool per step: the step was skipped
    params: dict           # argument number or name -> array (--save-params)
    state: dict            # the same and "step" -> step.npy (--save-state); or {}
    final_scale: str       # as amp-run's summary prints it; "-" without dynamic scaling
    compile_s: float
    train_s: float
    stdout: str


def read_npy_dir(path):
    """The arrays of DIR: {argument number: array} of the unnamed arguments' arg<i>.npy,
    {name: array} of the others (scaler state as "scaler.scale", ...), "step" for step.npy."""
    out = {}
    for name in os.listdir(path):
        match = re.fullmatch(r"arg(\d+)\.npy", name)
        if match:
            out[int(match.group(1))] = np.load(os.path.join(path, name))
        elif name.endswith(".npy"):
            out[name[:-len(".npy")]] = np.load(os.path.join(path, name))
    return out


def train(step, workdir, amp=None, data=None, save_state=False, args=()):
    """Runs amp-run on `step` in `workdir` (created) with --log and --save-params (and
    --save-state); `amp` is the --amp option string (None: fp32 as written), `data` the
    --data files (default: the digits training set), `args` further amp-run options."""
    os.makedirs(workdir, exist_ok=True)
    log, params, state = (os.path.join(workdir, n) for n in ("log.csv", "params", "state"))
    data = data or [digits("train", "x"), digits("train", "y")]
    cmd = [AMP_RUN, step, "--data", ",".join(data), "--log", log, "--save-params", params,
           "--print-every", "0", *args]
    if amp is not None:
        cmd.append(f"--amp={amp}")
    if save_state:
        cmd += ["--save-state", state]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{run.stdout}{run.stderr}")
    with open(log) as f:
        rows = list(csv.DictReader(f))
    compiled = re.search(r"compiled in ([0-9.]+) s", run.stdout)
    final = re.search(r"^final: .*", run.stdout, re.M).group(0)
    scale = re.search(r"\bscale (\S+)", final)
    return Run(loss=np.array([float(r["loss"]) for r in rows]),
               scale=np.array([float(r["scale"]) if r["scale"] else np.nan for r in rows]),
               found_inf=np.array([r["found_inf"] == "1" for r in rows], bool),
               params=read_npy_dir(params),
               state=read_npy_dir(state) if save_state else {},
               final_scale=scale.group(1) if scale else "-",
               compile_s=float(compiled.group(1)),
               train_s=float(re.search(r"time ([0-9.e+-]+) s", final).group(1)),
               stdout=run.stdout)


def accuracy(module, params):
    """Test accuracy on the digits of the numpy forward of `module` (examples/reference), with
    the parameters `params` ({argument number: array}; the examples' parameters come first)."""
    named = {name: params[i].astype(np.float64) for i, (name, _) in enumerate(module.PARAMS)}
    logits, _ = module.forward(named, np.load(digits("test", "x")).astype(np.float64))
    return float((logits.argmax(1) == np.load(digits("test", "labels"))).mean())
