"""The demo: trains examples/mlp.mlir on the digits with amp-run in fp32, f16 (dynamic loss
scaling) and bf16, and f16 once more through the GPU lowering up to its kernels, emulated on the
CPU (no GPU needed); then the same MLP written in PyTorch, in eager PyTorch and through
amp_mlir.torch in fp32, f16 and bf16 on the same batches; prints one table side by side and
writes a plot of the loss curves.

    python3 scripts/demo.py [--epochs N] [--out DIR]     (scripts/demo.sh builds first)
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import amprun  # noqa: E402
from examples.reference import mlp  # noqa: E402

STEP = os.path.join(amprun.ROOT, "examples", "mlp.mlir")
STEPS_PER_EPOCH = 1437 // 64
# (name, --amp option string or None for the step as written, further amp-run options)
MODES = [("fp32", None, []), ("f16", "dtype=f16 scaling=dynamic", []),
         ("bf16", "dtype=bf16", []),
         ("f16 gpu-emulated", "dtype=f16 scaling=dynamic",
          ["--before-lowering=amp-gpu-host-emulation"])]


def table(rows):
    header = ["mode", "--amp", "final loss", "test acc", "skipped", "final scale", "compile s",
              "train s"]
    cells = [header] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def pytorch_rows(epochs):
    """The MLP as a PyTorch nn.Module (64-128-10, ReLU, cross-entropy, SGD lr 0.1, batch 64),
    trained in eager PyTorch and through amp_mlir.torch.compile_training_step in fp32, f16 and
    bf16, each from the same initial weights on the same shuffled batches (the last partial
    batch of an epoch dropped, as amp-run does): (rows for the table, the largest relative loss
    difference from eager of each compiled run)."""
    sys.path.insert(0, os.path.join(amprun.BUILD, "python_packages"))
    import time

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    import amp_mlir.torch

    torch.set_num_threads(1)
    x = torch.from_numpy(np.load(amprun.digits("train", "x")))
    y = torch.from_numpy(np.load(amprun.digits("train", "labels")).astype(np.int64))
    test_x = torch.from_numpy(np.load(amprun.digits("test", "x")))
    test_y = np.load(amprun.digits("test", "labels"))
    order = np.random.default_rng(0)
    batches = [(x[index], y[index]) for _ in range(epochs)
               for index in order.permutation(len(x))[:STEPS_PER_EPOCH * 64].reshape(-1, 64)]

    def setup():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
        return model, torch.optim.SGD(model.parameters(), lr=0.1)

    def loss_fn(model, images, labels):
        return F.cross_entropy(model(images), labels)

    rows, differences = [], {}
    model, optimizer = setup()
    print("training pytorch eager ...", flush=True)
    started, losses = time.perf_counter(), []
    for images, labels in batches:
        optimizer.zero_grad()
        loss = loss_fn(model, images, labels)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    train_s = time.perf_counter() - started
    eager_losses = np.array(losses)
    with torch.no_grad():
        accuracy = float((model(test_x).argmax(1).numpy() == test_y).mean())
    rows.append(["pytorch eager", "(torch.optim, fp32)",
                 f"{np.mean(losses[-STEPS_PER_EPOCH:]):.4f}", f"{100 * accuracy:.2f}%", 0, "-",
                 "-", f"{train_s:.2f}"])
    for name, amp in (("pytorch fp32", None), ("pytorch f16", "dtype=f16"),
                      ("pytorch bf16", "dtype=bf16")):
        print(f"training {name} ...", flush=True)
        model, optimizer = setup()
        step = amp_mlir.torch.compile_training_step(model, loss_fn, optimizer, batches[0], amp)
        started, losses, skipped = time.perf_counter(), [], 0
        for images, labels in batches:
            result = step(images, labels)
            losses.append(result.loss)
            skipped += result.found_inf
        train_s = time.perf_counter() - started
        differences[name.split()[1]] = np.max(np.abs(np.array(losses) - eager_losses)
                                              / eager_losses)
        predicted = step.evaluate(test_x).argmax(1).numpy()
        rows.append([name, amp or "(none: the step as written)",
                     f"{np.mean(losses[-STEPS_PER_EPOCH:]):.4f}",
                     f"{100 * float((predicted == test_y).mean()):.2f}%", skipped,
                     f"{step.scaler.get_scale():g}" if step.scaler.mode == "dynamic" else "-",
                     f"{step.compile_seconds + step.import_seconds + step.trace_seconds:.2f}",
                     f"{train_s:.2f}"])
    return rows, differences


def plot(runs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    styles = {"fp32": ("black", "-"), "f16": ("tab:orange", "--"), "bf16": ("tab:blue", ":"),
              "f16 gpu-emulated": ("tab:red", "-.")}
    base = runs["fp32"].loss
    for name, run in runs.items():
        color, style = styles[name]
        steps = np.arange(1, len(run.loss) + 1)
        top.plot(steps, run.loss, color=color, linestyle=style, linewidth=1.2, label=name)
        skipped = np.flatnonzero(run.found_inf)
        if len(skipped):
            top.plot(skipped + 1, np.full(len(skipped), base[0]), "x", color=color,
                     label=f"{name}: skipped step")
        if name != "fp32":
            bottom.plot(steps, 100 * (run.loss - base) / base, color=color, linestyle=style,
                        linewidth=1, label=f"{name} - fp32")
    top.set_yscale("log")
    top.set_ylabel("training loss (per batch)")
    top.set_title("MLP 64-128-10 on the digits, compiled by amp-opt, run by amp-run (CPU)")
    top.legend()
    top.grid(alpha=0.3)
    bottom.axhline(0, color="black", linewidth=0.8)
    bottom.set_ylabel("loss difference from fp32 (%)")
    bottom.set_xlabel("step (batch of 64)")
    bottom.legend()
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--out", default=os.path.join(amprun.BUILD, "demo"))
    args = parser.parse_args()

    runs, rows = {}, []
    for name, amp, extra in MODES:
        print(f"training {name} ...", flush=True)
        run = amprun.train(STEP, os.path.join(args.out, name.replace(" ", "-")), amp,
                           args=["--epochs", str(args.epochs), *extra])
        runs[name] = run
        rows.append([name, amp or "(none: the step as written)",
                     f"{run.loss[-STEPS_PER_EPOCH:].mean():.4f}",
                     f"{100 * amprun.accuracy(mlp, run.params):.2f}%",
                     int(run.found_inf.sum()), run.final_scale, f"{run.compile_s:.2f}",
                     f"{run.train_s:.2f}"])
    torch_rows, differences = pytorch_rows(args.epochs)
    rows += torch_rows
    print()
    print(f"MLP on the digits, {args.epochs} epochs of {STEPS_PER_EPOCH} steps (batch 64, SGD "
          "lr 0.1, seed 0); final loss = mean over the last epoch; test accuracy on 360 images.")
    print("pytorch rows: the MLP as an nn.Module (PyTorch's initialization, its own batch order), "
          "eager and through amp_mlir.torch; their compile s includes tracing")
    print(table(rows))
    emulated, cpu = runs["f16 gpu-emulated"].loss, runs["f16"].loss
    print(f"\nf16 through the GPU lowering (its kernels, device memory and cuBLASLt matmuls "
          f"emulated on the CPU) vs the CPU lowering: largest loss difference "
          f"{np.max(np.abs(emulated - cpu) / np.abs(cpu)):.1e} (relative) over {len(cpu)} steps")
    print("the PyTorch MLP through amp_mlir.torch vs eager PyTorch: largest loss difference "
          + ", ".join(f"{mode} {d:.1e}" for mode, d in differences.items())
          + f" (relative) over {len(cpu)} steps")
    path = os.path.join(args.out, "loss_curves.png")
    plot(runs, path)
    print(f"\nloss curves: {path}")


if __name__ == "__main__":
    main()
