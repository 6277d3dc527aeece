#!/usr/bin/env python3
"""Step time of the compiled examples (fp32, f16 with dynamic scaling, bf16) against numpy.

For each example (examples/mlp.mlir, cnn.mlir, transformer.mlir) it runs, side by side in
one run:

- amp-run in each MODE on the digits (build/data), one process per mode and round, the
  rounds interleaved so that load on the machine falls on every mode alike. The step time
  is the median of amp-run's per-step `time_ms` (--log: the call of the compiled step
  alone, no data loading), the first WARMUP_STEPS of each process left out. The JIT
  compile time is what amp-run prints ("compiled in X s": the AMP pipeline, the lowering
  to LLVM and LLVM's -O3 code generation), the median over the rounds.
- the same step in numpy (examples/reference: forward, hand-written backward and the
  optimizer, fp32) on the same batches, timed in this process, median over the steps.

numpy runs on one thread (OPENBLAS/OMP/MKL_NUM_THREADS=1 unless set) because the compiled
steps are single-threaded loops; --numpy-threads changes that.

  python3 bench/bench_steps.py             # a minute or two
  python3 bench/bench_steps.py --rounds 1 --steps-scale 0.25
"""
import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from benchutil import machine, pinned_tool, revision, table

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

# amp-run --amp strings: None runs the step as written (fp32).
MODES = [("fp32", None), ("f16", "dtype=f16 scaling=dynamic"), ("bf16", "dtype=bf16")]
# (example, reference module attribute, steps per amp-run process)
EXAMPLES = [("mlp", "mlp", 300), ("cnn", "cnn", 300), ("transformer", "transformer", 40)]
WARMUP_STEPS = 5


# ---- parsing (test/python/test_bench.py checks these) ----
def parse_compile_seconds(stdout):
    """amp-run's header line: '...; compiled in 0.39 s'."""
    match = re.search(r"compiled in ([0-9.]+) s", stdout)
    if not match:
        raise ValueError("no 'compiled in' in amp-run output")
    return float(match.group(1))


def parse_step_log(lines, warmup=WARMUP_STEPS):
    """Per-step milliseconds from an amp-run CSV log (step,loss,scale,found_inf,time_ms),
    without the first `warmup` steps; also the number of skipped steps."""
    rows = list(csv.DictReader(lines))
    if not rows:
        raise ValueError("empty amp-run log")
    times = [float(r["time_ms"]) for r in rows[warmup:]]
    if not times:
        raise ValueError(f"no step after the {warmup} warmup steps")
    return times, sum(r["found_inf"] == "1" for r in rows)


# ---- running ----
def run_amp(amp_run, example, amp, steps, data, workdir):
    log = os.path.join(workdir, "log.csv")
    cmd = [amp_run, os.path.join(ROOT, "examples", f"{example}.mlir"), "--data", data,
           "--steps", str(steps), "--print-every", "0", "--log", log]
    if amp:
        cmd.append(f"--amp={amp}")
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"failed: {' '.join(cmd)}\n{result.stdout[-1000:]}{result.stderr[-2000:]}")
    with open(log) as f:
        times, skipped = parse_step_log(f)
    return parse_compile_seconds(result.stdout), times, skipped


def time_numpy(module, x_all, y_all, steps):
    """Median ms of loss_and_grads + update over `steps` sequential batches."""
    import numpy as np
    rng = np.random.default_rng(0)
    params = module.init_params(rng)
    state = {n: np.zeros(s, np.float32) for n, s in module.OPT_STATE}
    batch = module.DATA[0][1][0]
    times = []
    for s in range(steps + WARMUP_STEPS):
        i = (s * batch) % (len(x_all) - batch + 1)
        x, y = x_all[i:i + batch], y_all[i:i + batch]
        start = time.perf_counter()
        _, grads = module.loss_and_grads(params, x, y)
        params, state = module.update(params, state, grads)
        times.append((time.perf_counter() - start) * 1e3)
    return times[WARMUP_STEPS:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.environ.get("AMP_BUILD_DIR",
                                                          os.path.join(ROOT, "build")))
    parser.add_argument("--rounds", type=int, default=2,
                        help="amp-run processes per example and mode, interleaved")
    parser.add_argument("--steps-scale", type=float, default=1.0,
                        help="multiply every example's steps per process")
    parser.add_argument("--numpy-threads", type=int, default=1)
    parser.add_argument("--only", choices=[e for e, _, _ in EXAMPLES], action="append",
                        help="run only this example (repeatable)")
    args = parser.parse_args()
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(args.numpy_threads))
    import numpy as np  # after the thread settings
    sys.path.insert(0, ROOT)
    from examples.reference import cnn, mlp, transformer
    modules = {"mlp": mlp, "cnn": cnn, "transformer": transformer.EXAMPLE}

    amp_run = os.path.join(args.build, "bin", "amp-run")
    xs, ys = (os.path.join(args.build, "data", f"digits_train_{k}.npy") for k in ("x", "y"))
    for path in (amp_run, xs, ys):
        if not os.path.exists(path):
            sys.exit(f"missing {path}: build first (bash scripts/setup.sh)")
    x_all, y_all = np.load(xs), np.load(ys)

    header = f"{machine()}; tree {revision()}"
    rows, compile_rows = [], []
    with tempfile.TemporaryDirectory(prefix="amp-bench-") as workdir:
        amp_run = pinned_tool(amp_run, workdir)
        for example, ref, base_steps in EXAMPLES:
            if args.only and example not in args.only:
                continue
            steps = max(WARMUP_STEPS + 5, int(base_steps * args.steps_scale))
            print(f"{example}: {args.rounds} round(s) of {steps} steps per mode",
                  file=sys.stderr, flush=True)
            compiled = {m: [] for m, _ in MODES}
            step_ms = {m: [] for m, _ in MODES}
            skipped = {m: 0 for m, _ in MODES}
            numpy_ms = []
            for _ in range(args.rounds):
                for mode, amp in MODES:
                    seconds, times, skips = run_amp(amp_run, example, amp, steps,
                                                    f"{xs},{ys}", workdir)
                    compiled[mode].append(seconds)
                    step_ms[mode] += times
                    skipped[mode] += skips
                numpy_ms += time_numpy(modules[ref], x_all, y_all, steps)
            med = {m: statistics.median(step_ms[m]) for m, _ in MODES}
            np_med = statistics.median(numpy_ms)
            rows.append([example, f"{np_med:.3f}"] + [f"{med[m]:.3f}" for m, _ in MODES]
                        + [f"{med[m] / np_med:.2f}" for m, _ in MODES]
                        + [f"{med[m] / med['fp32']:.2f}" for m, _ in MODES[1:]]
                        + [sum(skipped.values())])
            compile_rows.append([example] + [f"{statistics.median(compiled[m]):.2f}"
                                             for m, _ in MODES])

    out = [header, f"amp-run: {os.path.join(args.build, 'bin', 'amp-run')} (a copy); "
           f"{args.rounds} interleaved round(s) per mode; median step time over every step "
           f"after the first {WARMUP_STEPS} of each process; numpy {np.__version__} "
           f"on {os.environ['OPENBLAS_NUM_THREADS']} thread(s)",
           "modes: " + ", ".join(m + (f' (--amp="{a}")' if a else " (as written)")
                                 for m, a in MODES), "",
           "## Step time, ms (median), and ratios\n",
           table(["example", "numpy"] + [m for m, _ in MODES]
                 + [f"{m} / numpy" for m, _ in MODES]
                 + [f"{m} / fp32" for m, _ in MODES[1:]] + ["skipped steps"], rows),
           "\n## JIT compile time, s (AMP pipeline + lowering + LLVM -O3; median)\n",
           table(["example"] + [m for m, _ in MODES], compile_rows)]
    print("\n".join(out))


if __name__ == "__main__":
    main()
