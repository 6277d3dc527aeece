"""The PyTorch model zoo through amp_mlir.torch: deviations from PyTorch, casts, times.

    python3 bench/torch_zoo.py                      # ~3 minutes on a loaded 2-core machine
    python3 bench/torch_zoo.py --only mlp cnn --fp32-steps 20

For each model of test/python/torch/zoo.py (zoo.ZOO), from the same seeded weights and
batches as an eager PyTorch twin (torch.optim, one thread):

- fp32 (`amp=None`): the largest relative loss difference from eager over the first 10
  steps, and after `--fp32-steps` steps the largest max|ours - torch| / max|torch| over
  every parameter and buffer;
- f16 (dynamic scaling) and bf16: the largest relative loss difference over `--low-steps`
  steps from eager fp32 and from eager under torch.autocast("cpu", bfloat16), and the
  skipped steps;
- casts: the casts the pipeline inserts (f16) and the bytes they convert per step, against
  naive per-op casting (the report's "casts" and "naive" entries; docs/Precision.md);
- times: import (trace with torch-mlir + amp-import-step, wall) and the Session's compile
  time in each mode (AMP pipeline + CPU lowering + LLVM, wall).

Prints Markdown tables for bench/RESULTS.md. Not a test: it never fails on a figure.
"""
import argparse
import datetime
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "python", "torch"))
import benchutil  # noqa: E402


def deviation(ours, theirs):
    ours, theirs = ours.detach().double(), theirs.detach().double()
    scale = float(theirs.abs().max())
    return float((ours - theirs).abs().max()) / (scale if scale > 0 else 1.0)


def measure(name, args, torch, np, amp_torch, zoo):
    def fresh():
        setup = zoo.SETUPS[name]()
        return setup, setup.scheduler(setup.optimizer) if setup.scheduler else None

    def eager(steps, autocast):
        setup, scheduler = fresh()
        dtype = torch.bfloat16 if autocast else None
        return np.array([zoo.eager_step(setup, b, scheduler, dtype)
                         for b in setup.batches(steps)]), setup

    def train(step, setup, scheduler, steps):
        losses, skipped = [], 0
        for batch in setup.batches(steps):
            result = step(*batch)
            losses.append(result.loss)
            skipped += int(result.found_inf)
            if scheduler is not None:
                scheduler.step()
        return np.array(losses), skipped

    row = {"model": name}
    setup, scheduler = fresh()
    started = time.perf_counter()
    traced, text = amp_torch.trace_and_import(setup.model, setup.loss_fn, setup.optimizer,
                                              setup.batches(1)[0], **setup.options)
    row["import_s"] = time.perf_counter() - started

    # fp32 against eager, then the state after all steps.
    step = amp_torch.TrainingStep(setup.model, setup.optimizer, traced, text, None)
    row["compile_fp32_s"] = step.compile_seconds
    losses, _ = train(step, setup, scheduler, args.fp32_steps)
    reference, eager_setup = eager(args.fp32_steps, False)
    row["fp32_loss"] = float(np.max(np.abs(losses[:10] - reference[:10]) / np.abs(reference[:10])))
    step.sync_to_torch()
    theirs = dict(eager_setup.model.named_parameters())
    theirs.update(eager_setup.model.named_buffers())
    ours = dict(setup.model.named_parameters())
    ours.update(setup.model.named_buffers())
    row["fp32_state"] = max(deviation(ours[k], v) for k, v in theirs.items())

    fp32 = reference[:args.low_steps]
    autocast, _ = eager(args.low_steps, True)
    row["autocast_vs_fp32"] = float(np.max(np.abs(autocast - fp32) / np.abs(fp32)))
    for dtype in ("f16", "bf16"):
        setup, scheduler = fresh()
        step = amp_torch.TrainingStep(setup.model, setup.optimizer, traced, text,
                                      f"dtype={dtype}")
        row[f"compile_{dtype}_s"] = step.compile_seconds
        losses, skipped = train(step, setup, scheduler, args.low_steps)
        row[f"{dtype}_vs_fp32"] = float(np.max(np.abs(losses - fp32) / np.abs(fp32)))
        row[f"{dtype}_vs_autocast"] = float(np.max(np.abs(losses - autocast) / np.abs(autocast)))
        row[f"{dtype}_skipped"] = skipped
        report = step.report
        row[f"{dtype}_casts"] = report["casts"]
        row[f"{dtype}_naive"] = report["naive"]
        row["ops"] = report["ops"]["painted"]
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.environ.get("AMP_BUILD_DIR",
                                                          os.path.join(ROOT, "build")))
    parser.add_argument("--only", nargs="*", help="zoo models (default: all of zoo.ZOO)")
    parser.add_argument("--fp32-steps", type=int, default=50)
    parser.add_argument("--low-steps", type=int, default=20)
    args = parser.parse_args()
    if args.low_steps > args.fp32_steps:
        parser.error("--low-steps compares with the fp32 run: at most --fp32-steps")
    sys.path.insert(0, os.path.join(os.path.abspath(args.build), "python_packages"))

    import numpy as np
    import torch

    import amp_mlir.torch as amp_torch
    import zoo

    torch.set_num_threads(1)
    names = args.only or zoo.ZOO
    unknown = sorted(set(names) - set(zoo.SETUPS))
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; the zoo has {', '.join(zoo.ZOO)}")
    rows = []
    for name in names:
        print(f"{name} ...", file=sys.stderr, flush=True)
        rows.append(measure(name, args, torch, np, amp_torch, zoo))

    print(f"{datetime.datetime.now(datetime.timezone.utc):%a %b %d %Y %H:%M} UTC, "
          f"revision {benchutil.revision()}, torch {torch.__version__}")
    print(benchutil.machine())
    print()
    print(f"Deviations from eager PyTorch (relative; fp32 losses over the first 10 steps, "
          f"state after {args.fp32_steps} steps; f16/bf16 losses over {args.low_steps} steps):")
    print()
    print(benchutil.table(
        ["model", "fp32 loss", "fp32 state", "f16 vs fp32", "f16 vs autocast", "f16 skipped",
         "bf16 vs fp32", "bf16 vs autocast", "bf16 skipped", "autocast vs fp32"],
        [[r["model"], f"{r['fp32_loss']:.1e}", f"{r['fp32_state']:.1e}",
          f"{r['f16_vs_fp32']:.1e}", f"{r['f16_vs_autocast']:.1e}", r["f16_skipped"],
          f"{r['bf16_vs_fp32']:.1e}", f"{r['bf16_vs_autocast']:.1e}", r["bf16_skipped"],
          f"{r['autocast_vs_fp32']:.1e}"] for r in rows]))
    print()
    print("Casts the f16 pipeline inserts and the bytes they convert per step, against naive "
          "per-op casting; import and compile times (wall, seconds):")
    print()
    print(benchutil.table(
        ["model", "ops", "casts (naive)", "bytes (naive)", "bytes / naive", "import s",
         "compile fp32 s", "compile f16 s", "compile bf16 s"],
        [[r["model"], r["ops"], f"{r['f16_casts']['casts']} ({r['f16_naive']['casts']})",
          f"{r['f16_casts']['bytes']} ({r['f16_naive']['bytes']})",
          f"{r['f16_casts']['bytes'] / max(r['f16_naive']['bytes'], 1):.2f}",
          f"{r['import_s']:.2f}", f"{r['compile_fp32_s']:.2f}", f"{r['compile_f16_s']:.2f}",
          f"{r['compile_bf16_s']:.2f}"] for r in rows]))


if __name__ == "__main__":
    main()
