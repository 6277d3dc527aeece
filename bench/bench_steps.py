#!/usr/bin/env python3
"""Step time of the compiled examples (fp32, f16 with dynamic scaling, bf16) against numpy.

For each example (examples/mlp.mlir, cnn.mlir, transformer.mlir) it runs, side by side in
one run:

- amp-run in each MODE on the digits (build/data), one process per mode and round, the
  rounds interleaved so that load on the machine falls on every mode alike. The step time
  is the median of amp-run's per-step `time_ms` (--log: the call of the compiled step
  alone, no data loading), the first WARMUP_STEPS of each process left out. The step CPU
  time is the CPU time of that process minus that of one running only WARMUP_STEPS steps,
  per step (compile and start-up cancel; other processes holding the CPU do not count).
  The JIT compile time is what amp-run prints ("compiled in X s": the AMP pipeline, the
  lowering to LLVM and LLVM's -O3 code generation), the median over the processes.
- the same step in numpy (examples/reference: forward, hand-written backward and the
  optimizer, fp32) on the same batches, timed in this process (wall and process time),
  medians over the steps.

numpy runs on one thread (OPENBLAS/OMP/MKL_NUM_THREADS=1 unless set) because the compiled
steps are single-threaded loops; --numpy-threads changes that.

  python3 bench/bench_steps.py             # about 5 minutes on a loaded 2-core machine
  python3 bench/bench_steps.py --rounds 1 --steps-scale 0.25
"""
import argparse
import csv
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from benchutil import machine, pinned_tool, revision, table

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

# amp-run --amp strings: None runs the step as written (fp32).
MODES = [("fp32", None), ("f16", "dtype=f16 scaling=dynamic"), ("bf16", "dtype=bf16")]
# (example, reference module attribute, steps per amp-run process): about a second of
# steps each, so that the CPU time per step is not lost in the variation of compile time.
EXAMPLES = [("mlp", "mlp", 20000), ("cnn", "cnn", 2000), ("transformer", "transformer", 1000)]
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
def run_amp(amp_run, example, amp, steps, data, log=None):
    """One amp-run process: its printed compile time, the CPU seconds it used (all threads,
    compile included) and, with `log`, the per-step times and skipped steps of its log."""
    cmd = [amp_run, os.path.join(ROOT, "examples", f"{example}.mlir"), "--data", data,
           "--steps", str(steps), "--print-every", "0"] + (["--log", log] if log else [])
    if amp:
        cmd.append(f"--amp={amp}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode:
        sys.exit(f"failed: {' '.join(cmd)}\n{result.stdout[-1000:]}{result.stderr[-2000:]}")
    outcome = {"compile": parse_compile_seconds(result.stdout),
               "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)}
    if log:
        with open(log) as f:
            outcome["step_ms"], outcome["skipped"] = parse_step_log(f)
    return outcome


def time_numpy(module, x_all, y_all, steps):
    """Wall and CPU ms of loss_and_grads + update for each of `steps` sequential batches."""
    import numpy as np
    rng = np.random.default_rng(0)
    params = module.init_params(rng)
    state = {n: np.zeros(s, np.float32) for n, s in module.OPT_STATE}
    batch = module.DATA[0][1][0]
    wall, cpu = [], []
    for s in range(steps + WARMUP_STEPS):
        i = (s * batch) % (len(x_all) - batch + 1)
        x, y = x_all[i:i + batch], y_all[i:i + batch]
        start, start_cpu = time.perf_counter(), time.process_time()
        _, grads = module.loss_and_grads(params, x, y)
        params, state = module.update(params, state, grads)
        cpu.append((time.process_time() - start_cpu) * 1e3)
        wall.append((time.perf_counter() - start) * 1e3)
    return wall[WARMUP_STEPS:], cpu[WARMUP_STEPS:]


def ratio_rows(example, numpy_ms, mode_ms):
    """A table row: numpy and per-mode ms, the ratios to numpy and to fp32."""
    return ([example, f"{numpy_ms:.3f}"] + [f"{mode_ms[m]:.3f}" for m, _ in MODES]
            + [f"{mode_ms[m] / numpy_ms:.2f}" for m, _ in MODES]
            + [f"{mode_ms[m] / mode_ms['fp32']:.2f}" for m, _ in MODES[1:]])


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
    wall_rows, cpu_rows, compile_rows = [], [], []
    with tempfile.TemporaryDirectory(prefix="amp-bench-") as workdir:
        amp_run = pinned_tool(amp_run, workdir)
        log = os.path.join(workdir, "log.csv")
        for example, ref, base_steps in EXAMPLES:
            if args.only and example not in args.only:
                continue
            steps = max(WARMUP_STEPS + 5, int(base_steps * args.steps_scale))
            print(f"{example}: {args.rounds} round(s) of {steps} steps per mode",
                  file=sys.stderr, flush=True)
            compiled, step_ms, cpu_ms = ({m: [] for m, _ in MODES} for _ in range(3))
            skipped = 0
            numpy_wall, numpy_cpu = [], []
            for _ in range(args.rounds):
                for mode, amp in MODES:
                    data = f"{xs},{ys}"
                    long = run_amp(amp_run, example, amp, steps, data, log)
                    # CPU time per step: the difference from a process that does only the
                    # warmup steps, which cancels compile time and start-up.
                    short = run_amp(amp_run, example, amp, WARMUP_STEPS, data)
                    compiled[mode] += [long["compile"], short["compile"]]
                    step_ms[mode] += long["step_ms"]
                    cpu_ms[mode].append((long["cpu"] - short["cpu"]) * 1e3
                                        / (steps - WARMUP_STEPS))
                    skipped += long["skipped"]
                wall, cpu = time_numpy(modules[ref], x_all, y_all, steps)
                numpy_wall += wall
                numpy_cpu += cpu
            median = lambda d: {m: statistics.median(v) for m, v in d.items()}
            wall_rows.append(ratio_rows(example, statistics.median(numpy_wall), median(step_ms))
                             + [skipped])
            cpu_rows.append(ratio_rows(example, statistics.median(numpy_cpu), median(cpu_ms)))
            compile_rows.append([example] + [f"{v:.2f}" for v in median(compiled).values()])

    headers = (["example", "numpy"] + [m for m, _ in MODES] + [f"{m} / numpy" for m, _ in MODES]
               + [f"{m} / fp32" for m, _ in MODES[1:]])
    out = [header, f"amp-run: {os.path.join(args.build, 'bin', 'amp-run')} (a copy); "
           f"{args.rounds} interleaved round(s) per mode; numpy {np.__version__} "
           f"on {os.environ['OPENBLAS_NUM_THREADS']} thread(s)",
           "modes: " + ", ".join(m + (f' (--amp="{a}")' if a else " (as written)")
                                 for m, a in MODES),
           f"\n## Step time, ms: median wall time of every step after the first {WARMUP_STEPS}"
           " of each process (amp-run --log)\n",
           table(headers + ["skipped steps"], wall_rows),
           f"\n## Step CPU time, ms: (CPU of a run of N steps - CPU of a run of {WARMUP_STEPS}) "
           "/ (N - " f"{WARMUP_STEPS}), median over rounds; numpy: median process time per step."
           " Less disturbed by other processes than wall time.\n",
           table(headers, cpu_rows),
           "\n## JIT compile time, s (amp-run's 'compiled in': AMP pipeline + lowering + "
           "LLVM -O1; wall time, median)\n",
           table(["example"] + [m for m, _ in MODES], compile_rows)]
    print("\n".join(out))


if __name__ == "__main__":
    main()
