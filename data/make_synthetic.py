#!/usr/bin/env python3
"""Writes a synthetic classification data set of any size for benchmarks.

Inputs are standard normal float32 rows; the labels come from a fixed random linear
teacher (argmax of x @ T), so the data is learnable and the loss goes down. Deterministic
for a given seed.

  python3 data/make_synthetic.py OUT_DIR --samples 65536 --features 1024 --classes 10 --seed 0
writes OUT_DIR/<prefix>_x.npy float32 [samples, features], <prefix>_y.npy float32 one-hot
[samples, classes] and <prefix>_labels.npy int32 [samples].
"""
import argparse
import os

import numpy as np


def make(samples, features, classes, seed):
    """Returns (x, one_hot, labels)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((samples, features), dtype=np.float32)
    teacher = rng.standard_normal((features, classes), dtype=np.float32)
    labels = np.argmax(x @ teacher, axis=1).astype(np.int32)
    return x, np.eye(classes, dtype=np.float32)[labels], labels


def positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--samples", type=positive, default=4096)
    parser.add_argument("--features", type=positive, default=64)
    parser.add_argument("--classes", type=positive, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--prefix", default="synthetic")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    x, y, labels = make(args.samples, args.features, args.classes, args.seed)
    base = os.path.join(args.out_dir, args.prefix)
    np.save(base + "_x.npy", x)
    np.save(base + "_y.npy", y)
    np.save(base + "_labels.npy", labels)
    print(f"{args.prefix}: x {x.shape}, y {y.shape} -> {args.out_dir}")


if __name__ == "__main__":
    main()
