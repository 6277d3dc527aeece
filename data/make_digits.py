#!/usr/bin/env python3
"""Converts scikit-learn's bundled digits data set (1797 8x8 grey images, shipped
inside the package: no download) into .npy files for the examples and amp-run.

Writes into OUT_DIR:
  digits_train_x.npy   float32 [N_train, 64], pixels scaled to [0, 1]
  digits_train_y.npy   float32 [N_train, 10], one-hot labels
  digits_train_labels.npy int32 [N_train], class indices
  digits_test_x.npy / digits_test_y.npy / digits_test_labels.npy: the same for the test split
The split is deterministic: a fixed-seed permutation, the last TEST_SIZE images are the
test set. Every example step takes the x rows as tensor<64x64xf32> batches and the one-hot
rows as tensor<64x10xf32>.
"""
import argparse
import os

import numpy as np
from sklearn.datasets import load_digits

TEST_SIZE = 360
SEED = 0


def split():
    """Returns ((train_x, train_labels), (test_x, test_labels))."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)  # pixel values are 0..16
    labels = digits.target.astype(np.int32)
    order = np.random.RandomState(SEED).permutation(len(x))
    x, labels = x[order], labels[order]
    return (x[:-TEST_SIZE], labels[:-TEST_SIZE]), (x[-TEST_SIZE:], labels[-TEST_SIZE:])


def one_hot(labels, classes=10):
    return np.eye(classes, dtype=np.float32)[labels]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name, (x, labels) in zip(("train", "test"), split()):
        np.save(os.path.join(args.out_dir, f"digits_{name}_x.npy"), x)
        np.save(os.path.join(args.out_dir, f"digits_{name}_y.npy"), one_hot(labels))
        np.save(os.path.join(args.out_dir, f"digits_{name}_labels.npy"), labels)
        print(f"digits {name}: {len(x)} images -> {args.out_dir}")


if __name__ == "__main__":
    main()
