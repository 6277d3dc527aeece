#!/usr/bin/env python3
"""Compile-time cost and cast traffic of the AMP passes on large generated training steps.

For each step of a sweep (bench/gen_step.py: MLP and transformer, about 1k, 10k, 30k and
100k ops) it measures, side by side in one run:

- time: `amp-opt FILE -o /dev/null` (the floor: parse, verify, print) against the same
  command with our passes (CONFIGS below), with hyperfine (warmup, several runs, median
  wall time); pass overhead = (ours - floor) / floor. Target: at most 0.5x.
- growth: time per op of what the passes add, and the exponent b of added ~ ops^b fitted
  over the sizes of at least 10k ops (below that, process start-up dominates the floor).
  Target: linear (b close to 1).
- instructions: the same comparison in callgrind instruction counts, which do not depend
  on the load of the machine (small and medium sizes: callgrind is ~50x slower).
- where the time goes: amp-opt's own --mlir-timing of the pipeline on the largest step of
  each model, with and without the verifier that runs after every pass (-verify-each).
- casts: casts and bytes converted per step by amp-insert-casts (its report=) against
  naive per-op casting (every allow op's inputs cast to low and its result back to f32,
  as eager autocast does), which the same report computes (`naive`, see
  lib/Analysis/PrecisionReport.cpp). Target: at most half the naive bytes.

  python3 bench/bench_passes.py            # full sweep, a few minutes
  python3 bench/bench_passes.py --quick    # 1k and 10k ops only
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

from benchutil import machine, pinned_tool, revision, table

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
GEN_STEP = os.path.join(ROOT, "bench", "gen_step.py")

# (model, generator flag, values): about 1k, 10k, 30k and 100k ops each.
SWEEP = [("mlp", "--layers", (10, 100, 300, 1100)),
         ("transformer", "--blocks", (1, 12, 36, 120))]
QUICK_OPS = 12000  # --quick keeps the steps up to this many ops

# What is timed: the floor first, then our passes.
CONFIGS = [
    ("floor", []),
    ("casts", ["--amp-insert-casts"]),
    ("passes", ["--amp-insert-casts", "--amp-loss-scaling", "--amp-guard-update"]),
    ("pipeline", ["--amp-pipeline"]),
    # The pass manager verifies the module after every pass by default; this shows what
    # the passes cost without those extra verifier runs (the floor verifies once).
    ("pipeline-noverify", ["--amp-pipeline", "--verify-each=0"]),
]
OURS = [name for name, _ in CONFIGS[1:]]
CONFIG_HELP = {
    "casts": "--amp-insert-casts",
    "passes": "--amp-insert-casts --amp-loss-scaling --amp-guard-update",
    "pipeline": "--amp-pipeline (the three passes, then canonicalize and cse)",
    "pipeline-noverify": "--amp-pipeline --verify-each=0 (no verifier run after each pass)",
}

OVERHEAD_TARGET = 0.5  # (ours - floor) / floor
BYTES_TARGET = 0.5  # ours / naive
LINEAR_TOLERANCE = 0.15  # exponent at most 1 + this counts as linear
FIT_MIN_OPS = 10000


# ---- parsing (test/python/test_bench.py checks these) ----
def parse_gen_ops(stderr):
    """The op count gen_step.py prints: 'mlp: 1089 ops'."""
    match = re.search(r"^\w+: (\d+) ops$", stderr, re.M)
    if not match:
        raise ValueError(f"no op count in gen_step.py output: {stderr!r}")
    return int(match.group(1))


def parse_callgrind(stderr):
    """Total instructions from callgrind's summary: '==123== Collected : 1509851290'."""
    match = re.search(r"^==\d+== Collected : (\d+)$", stderr, re.M)
    if not match:
        raise ValueError("no 'Collected' line in callgrind output")
    return int(match.group(1))


def parse_mlir_timing(text):
    """Seconds per entry of amp-opt's `--mlir-timing --mlir-timing-display=list` report."""
    times = {}
    for line in text.splitlines():
        match = re.match(r"^\s*([0-9.]+) \(\s*[0-9.]+%\)  (.+?)\s*$", line)
        if match:
            times[match.group(2)] = float(match.group(1))
    if "Total" not in times:
        raise ValueError("no mlir-timing report in amp-opt output")
    return times


def fit_exponent(ops, values):
    """Least-squares slope b of log(value) = a + b log(ops); None without two usable points."""
    points = [(math.log(n), math.log(v)) for n, v in zip(ops, values) if v > 0]
    if len(points) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in points) / sxx


def overhead(ours, floor):
    return (ours - floor) / floor


def cast_summary(report):
    """Ours against naive per-op casting, from an amp-insert-casts report."""
    ours, naive = report["casts"], report["naive"]
    return {"casts": ours["casts"], "naive_casts": naive["casts"],
            "bytes": ours["bytes"], "naive_bytes": naive["bytes"],
            "bytes_ratio": ours["bytes"] / naive["bytes"] if naive["bytes"] else None,
            "dynamic_casts": ours["dynamic_casts"] + naive["dynamic_casts"]}


# ---- running ----
def run(cmd, **kwargs):
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode:
        sys.exit(f"failed ({result.returncode}): {' '.join(cmd)}\n{result.stderr[-2000:]}")
    return result


def generate(model, flag, value, workdir):
    path = os.path.join(workdir, f"{model}{value}.mlir")
    result = run([sys.executable, GEN_STEP, model, flag, str(value), "-o", path])
    return path, parse_gen_ops(result.stderr)


def amp_opt_cmd(amp_opt, path, flags, extra=()):
    return [amp_opt, path, *flags, *extra, "-o", os.devnull]


def time_hyperfine(amp_opt, path, runs, warmup, workdir):
    """Median wall seconds of every config."""
    out = os.path.join(workdir, "hyperfine.json")
    cmd = ["hyperfine", "-N", "--style", "none", "--warmup", str(warmup), "--runs", str(runs),
           "--export-json", out]
    for name, flags in CONFIGS:
        cmd += ["-n", name, " ".join(amp_opt_cmd(amp_opt, path, flags))]
    run(cmd)
    with open(out) as f:
        results = json.load(f)["results"]
    return {r["command"]: r["median"] for r in results}


def time_cpu(amp_opt, path, runs, warmup):
    """Median CPU seconds (user + system) of every config, the configs run in turn in each
    round so that changes in the machine's load fall on all of them alike."""
    times = {name: [] for name, _ in CONFIGS}
    for round in range(warmup + runs):
        for name, flags in CONFIGS:
            cmd = amp_opt_cmd(amp_opt, path, flags)
            process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            stderr = process.stderr.read()
            _, status, usage = os.wait4(process.pid, 0)
            if status:
                sys.exit(f"failed: {' '.join(cmd)}\n{stderr.decode()[-2000:]}")
            if round >= warmup:
                times[name].append(usage.ru_utime + usage.ru_stime)
    return {name: statistics.median(values) for name, values in times.items()}


def count_instructions(amp_opt, path):
    counts = {}
    for name, flags in CONFIGS:
        result = run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={os.devnull}",
                      *amp_opt_cmd(amp_opt, path, flags, ["--mlir-disable-threading"])])
        counts[name] = parse_callgrind(result.stderr)
    return counts


def pass_timing(amp_opt, path):
    """--mlir-timing of the pipeline, with the verifier after each pass and without it."""
    timings = {}
    for label, extra in (("verify-each", []), ("no-verify", ["--verify-each=0"])):
        result = run(amp_opt_cmd(amp_opt, path, ["--amp-pipeline"],
                                 extra + ["--mlir-timing", "--mlir-timing-display=list"]))
        timings[label] = parse_mlir_timing(result.stderr)
    return timings


def cast_report(amp_opt, path, workdir):
    out = os.path.join(workdir, "report.json")
    run(amp_opt_cmd(amp_opt, path, [f"--amp-insert-casts=report={out}"]))
    with open(out) as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.environ.get("AMP_BUILD_DIR",
                                                          os.path.join(ROOT, "build")))
    parser.add_argument("--runs", type=int, default=5, help="hyperfine runs per config")
    parser.add_argument("--warmup", type=int, default=1, help="hyperfine warmup runs")
    parser.add_argument("--quick", action="store_true", help=f"only steps up to {QUICK_OPS} ops")
    parser.add_argument("--callgrind-max-ops", type=int, default=QUICK_OPS,
                        help="count instructions for steps up to this many ops (0: none)")
    parser.add_argument("--json", help="also write every figure to this file")
    args = parser.parse_args()
    amp_opt = os.path.join(args.build, "bin", "amp-opt")
    if not os.access(amp_opt, os.X_OK):
        sys.exit(f"no amp-opt at {amp_opt}: build first (bash scripts/setup.sh)")

    header = f"{machine()}; tree {revision()}"
    steps = []
    with tempfile.TemporaryDirectory(prefix="amp-bench-") as workdir:
        amp_opt = pinned_tool(amp_opt, workdir)
        for model, flag, values in SWEEP:
            for value in values:
                path, ops = generate(model, flag, value, workdir)
                if args.quick and ops > QUICK_OPS:
                    continue
                print(f"{model} {flag} {value}: {ops} ops", file=sys.stderr, flush=True)
                step = {"model": model, "setting": f"{flag} {value}", "ops": ops, "path": path,
                        "size_mb": os.path.getsize(path) / 1e6,
                        "casts": cast_summary(cast_report(amp_opt, path, workdir)),
                        "wall": time_hyperfine(amp_opt, path, args.runs, args.warmup, workdir),
                        "cpu": time_cpu(amp_opt, path, args.runs, args.warmup)}
                if ops <= args.callgrind_max_ops:
                    step["instructions"] = count_instructions(amp_opt, path)
                steps.append(step)
            largest = max((s for s in steps if s["model"] == model), key=lambda s: s["ops"])
            largest["pass_timing"] = pass_timing(amp_opt, largest.pop("path"))
    for step in steps:
        step.pop("path", None)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(steps, f, indent=1)
    print(report(steps, args, header))


def report(steps, args, header):
    """The tables and verdicts; `header` says where and when the figures were taken."""
    out = [header, f"amp-opt: {os.path.join(args.build, 'bin', 'amp-opt')} (a copy); "
           f"per config {args.runs} runs after {args.warmup} warmup: CPU time (user + system) "
           "of runs taking turns, median; wall time by hyperfine, median. Configs:"]
    out += [f"  {name}: {CONFIG_HELP[name]}" for name in OURS]
    verdicts = []

    out.append("\n## Pass time against the floor (amp-opt FILE -o /dev/null)\n")
    key = lambda s: [s["model"], s["setting"], s["ops"]]
    out.append("CPU time, ms:\n")
    out.append(table(["model", "setting", "ops", "MB"] + [n for n, _ in CONFIGS],
                     [key(s) + [f"{s['size_mb']:.1f}"]
                      + [f"{s['cpu'][n] * 1e3:.0f}" for n, _ in CONFIGS] for s in steps]))
    for measure, title in (("cpu", "CPU time"), ("wall", "wall time (more disturbed by load)")):
        out.append(f"\nOverhead (ours - floor) / floor, {title}:\n")
        out.append(table(["model", "setting", "ops"] + OURS,
                         [key(s) + [f"{overhead(s[measure][n], s[measure]['floor']):+.2f}x"
                                    for n in OURS] for s in steps]))
    big = [s for s in steps if s["ops"] >= FIT_MIN_OPS] or steps
    for name in OURS:
        worst = max(overhead(s["cpu"][name], s["cpu"]["floor"]) for s in big)
        verdicts.append(f"{name} overhead <= {OVERHEAD_TARGET}x the floor (CPU time, steps >= "
                        f"{FIT_MIN_OPS} ops, worst {worst:+.2f}x): "
                        f"{'met' if worst <= OVERHEAD_TARGET else 'NOT met'}")

    out.append(f"\n## Growth: CPU time the passes add per op, and the exponent b of added ~ ops^b "
               f"(steps >= {FIT_MIN_OPS} ops)\n")
    rows = []
    for model, _, _ in SWEEP:
        mine = [s for s in steps if s["model"] == model]
        fit = [s for s in mine if s["ops"] >= FIT_MIN_OPS]
        for name in ["floor"] + OURS:
            added = lambda s: s["cpu"][name] - (0 if name == "floor" else s["cpu"]["floor"])
            b = fit_exponent([s["ops"] for s in fit], [added(s) for s in fit])
            rows.append([model, name if name == "floor" else f"{name} - floor"]
                        + [f"{added(s) / s['ops'] * 1e6:.2f}" for s in mine]
                        + ["-" if b is None else f"{b:.2f}"])
            if name != "floor" and b is not None:
                verdicts.append(f"{model} {name}: added CPU time ~ ops^{b:.2f}: "
                                f"{'linear' if b <= 1 + LINEAR_TOLERANCE else 'NOT linear'}")
    sizes = max(len([s for s in steps if s["model"] == m]) for m, _, _ in SWEEP)
    out.append(table(["model", "time"] + [f"us/op (size {i + 1})" for i in range(sizes)]
                     + ["exponent b"], rows))

    counted = [s for s in steps if "instructions" in s]
    if counted:
        out.append("\n## Instructions (callgrind, --mlir-disable-threading): overhead "
                   "(ours - floor) / floor, repeatable\n")
        rows = []
        for s in counted:
            ins = s["instructions"]
            rows.append([s["model"], s["setting"], s["ops"], f"{ins['floor'] / 1e6:.0f}"]
                        + [f"{overhead(ins[n], ins['floor']):+.2f}x" for n in OURS]
                        + [f"{(ins[n] - ins['floor']) / s['ops']:.0f}"
                           for n in ("passes", "pipeline")])
        out.append(table(["model", "setting", "ops", "floor Minstr"] + OURS
                         + [f"{n} - floor, instr/op" for n in ("passes", "pipeline")], rows))
        for model, _, _ in SWEEP:
            mine = [s for s in counted if s["model"] == model]
            for name in OURS:
                b = fit_exponent([s["ops"] for s in mine],
                                 [s["instructions"][name] - s["instructions"]["floor"]
                                  for s in mine])
                if b is not None:
                    verdicts.append(f"{model} {name}: added instructions ~ ops^{b:.2f} "
                                    f"({mine[0]['ops']} to {mine[-1]['ops']} ops): "
                                    f"{'linear' if b <= 1 + LINEAR_TOLERANCE else 'NOT linear'}")

    timed = [s for s in steps if "pass_timing" in s]
    if timed:
        out.append("\n## Where the pipeline's time goes (--mlir-timing, one run, seconds; "
                   "'verify' = with the verifier after each pass, as by default)\n")
        names = []
        for s in timed:
            for label in ("verify-each", "no-verify"):
                names += [n for n in s["pass_timing"][label] if n not in names]
        names = [n for n in names if n not in ("root", "(A) DominanceInfo")]
        headers = ["entry"]
        for s in timed:
            headers += [f"{s['model']} {s['ops']} verify", f"{s['model']} {s['ops']} no-verify"]
        rows = [[n] + [f"{s['pass_timing'][label].get(n, 0):.3f}" for s in timed
                       for label in ("verify-each", "no-verify")] for n in names]
        out.append(table(headers, rows))

    out.append("\n## Casts and bytes converted per step (amp-insert-casts, f16, torch) against "
               "naive per-op casting\n")
    rows = []
    for s in steps:
        c = s["casts"]
        rows.append([s["model"], s["setting"], s["ops"], c["casts"], c["naive_casts"],
                     f"{c['bytes'] / 1e6:.2f}", f"{c['naive_bytes'] / 1e6:.2f}",
                     f"{c['bytes_ratio']:.2f}", c["dynamic_casts"]])
    out.append(table(["model", "setting", "ops", "casts", "naive casts", "MB converted",
                      "naive MB", "bytes / naive", "dynamic casts"], rows))
    worst = max(s["casts"]["bytes_ratio"] for s in steps)
    verdicts.append(f"bytes converted <= {BYTES_TARGET} x naive (worst {worst:.2f}): "
                    f"{'met' if worst <= BYTES_TARGET else 'NOT met'}")

    out.append("\n## Targets\n")
    out += [f"- {v}" for v in verdicts]
    return "\n".join(out)


if __name__ == "__main__":
    main()
