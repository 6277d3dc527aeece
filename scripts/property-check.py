#!/usr/bin/env python3
"""Runs generated training steps (test/python/stepgen.py) against the properties of
test/python/properties.py for a time budget, and prints the cases run and every failure
with its seed (docs/Reliability.md).

  python3 scripts/property-check.py --budget 600              # seeds from 1000 on
  python3 scripts/property-check.py --budget 60 --first 5000 --modes sample
  python3 scripts/property-check.py --seed 1234               # one case, every mode

Cases run in a worker process, so that a crash (a signal, an abort) is a failure of its seed
and not the end of the run: the worker is started again at the next seed. `--modes sample`
runs fp32 and two other modes drawn per seed, more cases per hour (measured here: 6 to 9 s a case against 12 to 18 s).
Exits 1 if anything failed.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.environ.get("AMP_BUILD_DIR", os.path.join(ROOT, "build"))
TESTS = os.path.join(ROOT, "test", "python")
sys.path.insert(0, os.path.join(BUILD, "python_packages"))
sys.path.insert(0, TESTS)


def worker():
    """Reads seeds and mode lists (JSON lines) on stdin, writes one JSON line per case."""
    import warnings

    import properties
    import stepgen
    warnings.simplefilter("ignore")
    for line in sys.stdin:
        request = json.loads(line)
        seed, modes = request["seed"], request["modes"]
        try:
            failures = properties.check(stepgen.generate(seed), modes)
        except Exception as error:  # a bug of the checker or an unexpected exception
            failures = [f"seed {seed}: {type(error).__name__}: {error}"]
        print(json.dumps({"seed": seed, "failures": failures}), flush=True)


def modes_for(seed, how):
    import properties
    if how == "all":
        return properties.MODES
    rng = random.Random(seed)
    return [None] + rng.sample(properties.MODES[1:], 2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=300, help="seconds (default 300)")
    parser.add_argument("--first", type=int, default=1000,
                        help="first seed (default 1000: test_properties.py runs lower ones)")
    parser.add_argument("--seed", type=int, help="run this one seed and stop")
    parser.add_argument("--modes", choices=["all", "sample"], default="all")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker()

    start = time.monotonic()
    seeds = [args.seed] if args.seed is not None else None
    seed = args.seed if args.seed is not None else args.first
    cases, failures, crashed = 0, [], []
    proc = None
    while True:
        if seeds is not None and cases == len(seeds):
            break
        if seeds is None and time.monotonic() - start >= args.budget:
            break
        if proc is None:
            proc = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, text=True, cwd=ROOT)
        modes = modes_for(seed, args.modes)
        proc.stdin.write(json.dumps({"seed": seed, "modes": modes}) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        cases += 1
        if not line:
            code = proc.wait()
            crashed.append(seed)
            failures.append(f"seed {seed}: the worker died (exit status {code})")
            print("  " + failures[-1], flush=True)
            proc = None
        else:
            found = json.loads(line)["failures"]
            for failure in found:  # as they come, for a long run
                print("  " + failure, flush=True)
            failures += found
        if cases % 10 == 0:
            print(f"{cases} cases, {len(failures)} failures, "
                  f"{time.monotonic() - start:.0f} s", flush=True)
        seed += 1
    if proc is not None:
        proc.stdin.close()
        proc.wait()
    elapsed = time.monotonic() - start
    last = seed - 1
    print(f"property-check: {cases} cases (seeds {args.seed if args.seed is not None else args.first}"
          f" to {last}), modes {args.modes}, {elapsed:.0f} s, {len(failures)} failure(s)"
          + (f", {len(crashed)} crash(es)" if crashed else ""))
    for failure in failures:
        print("  " + failure)
    if failures:
        print("reproduce one: python3 scripts/property-check.py --seed N; "
              "its IR: python3 test/python/stepgen.py N")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
