"""Trains the MLP example (examples/mlp.mlir) on the digits data from Python,
in fp32 and in f16 with dynamic loss scaling, and plots both loss curves.

    python3 examples/train_digits.py [--epochs 10] [--out build/train_digits.png]

It needs the built tree (scripts/setup.sh): the amp_mlir package (installed
with `pip install ./python-bindings`, or found in build/python_packages) and
the digits data in build/data. docs/Python.md explains the API it uses.
"""
import argparse
import os
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.environ.get("AMP_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path.append(os.path.join(BUILD, "python_packages"))  # if not pip-installed

import amp_mlir  # noqa: E402


def load(name):
    return np.load(os.path.join(BUILD, "data", f"digits_{name}.npy"))


def train(options, epochs, seed, data):
    """Trains a fresh session; returns (per-step losses, skipped steps,
    test accuracy, session)."""
    session = amp_mlir.Session(os.path.join(ROOT, "examples", "mlp.mlir"), options,
                               seed=seed, functions=["predict"])
    x_arg, y_arg = session.data_arguments
    batch = x_arg.shape[0]
    x, y, test_x, test_labels = data
    order_rng = np.random.default_rng(seed)
    losses, skipped = [], 0
    for _ in range(epochs):
        order = order_rng.permutation(len(x))
        for first in range(0, len(x) - batch + 1, batch):
            rows = order[first:first + batch]
            result = session.step(x[rows], y[rows])
            losses.append(result.loss)
            skipped += result.found_inf
    correct = 0
    for first in range(0, len(test_x), batch):
        chunk = test_x[first:first + batch]
        padded = np.zeros(x_arg.shape, np.float32)
        padded[:len(chunk)] = chunk
        logits = session.predict(padded)[:len(chunk)]
        correct += int(np.sum(np.argmax(logits, axis=1) == test_labels[first:first + len(chunk)]))
    return np.array(losses), skipped, correct / len(test_x), session


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=os.path.join(BUILD, "train_digits.png"))
    args = parser.parse_args()
    data = (load("train_x"), load("train_y"), load("test_x"), load("test_labels"))

    runs = {"fp32": None, "f16 (dynamic scaling)": "dtype=f16 scaling=dynamic"}
    curves = {}
    for label, options in runs.items():
        losses, skipped, accuracy, session = train(options, args.epochs, args.seed, data)
        curves[label] = losses
        scale = session.scaler.state_dict().get("scale")
        print(f"{label:>22}: {len(losses)} steps, final loss {losses[-1]:.4f}, "
              f"test accuracy {accuracy:.4f}, skipped {skipped}"
              + (f", final scale {scale:g}" if scale else ""))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    # The curves lie on top of each other; the lower panel shows how far apart.
    fig, (ax, diff) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True,
                                   gridspec_kw={"height_ratios": [2, 1]})
    for label, losses in curves.items():
        ax.plot(np.arange(1, len(losses) + 1), losses, label=label, linewidth=1, alpha=0.8)
    ax.set_yscale("log")
    ax.set_ylabel("training loss (cross-entropy)")
    ax.set_title(f"MLP on the digits, {args.epochs} epochs, from Python (amp_mlir)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    (fp32, f16) = curves.values()
    gap = np.abs(f16 - fp32)
    diff.plot(np.arange(1, len(gap) + 1), np.maximum(gap, 1e-9), color="C2", linewidth=1)
    diff.set_yscale("log")
    diff.set_xlabel("step")
    diff.set_ylabel("|f16 - fp32|")
    diff.grid(True, which="both", alpha=0.3)
    print(f"largest loss difference f16 vs fp32: {gap.max():.2e}")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fig.savefig(args.out, dpi=100)
    print(f"plot: {args.out}")


if __name__ == "__main__":
    main()
