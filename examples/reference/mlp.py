"""numpy reference of examples/mlp.mlir: 64-128-10 MLP, ReLU, softmax CE, SGD."""
import numpy as np

from .common import softmax_cross_entropy

MLIR = "mlp.mlir"
FUNC = "train_step"
BATCH = 64
PARAMS = [("w1", (64, 128)), ("b1", (128,)), ("w2", (128, 10)), ("b2", (10,))]
OPT_STATE = []
DATA = [("x", (BATCH, 64)), ("y", (BATCH, 10))]
LR = 0.1


def init_params(rng):
    return {"w1": (rng.standard_normal((64, 128)) * np.sqrt(2 / 64)).astype(np.float32),
            "b1": np.zeros(128, np.float32),
            "w2": (rng.standard_normal((128, 10)) * np.sqrt(1 / 128)).astype(np.float32),
            "b2": np.zeros(10, np.float32)}


def forward(p, x):
    """Returns the logits (what @predict computes) and what the backward needs."""
    a1 = x @ p["w1"] + p["b1"]
    h = np.maximum(a1, 0)
    return h @ p["w2"] + p["b2"], (a1, h)


def loss_and_grads(p, x, y):
    logits, (a1, h) = forward(p, x)
    loss, dlogits = softmax_cross_entropy(logits, y)
    dh = dlogits @ p["w2"].T
    da1 = np.where(a1 > 0, dh, 0)
    return loss, {"w1": x.T @ da1, "b1": da1.sum(0), "w2": h.T @ dlogits, "b2": dlogits.sum(0)}


def update(p, state, g):
    return {k: p[k] - np.float32(LR) * g[k] for k in p}, {}


def grads_from_update(p, state, new_p, new_state):
    return {k: (p[k] - new_p[k]) / np.float32(LR) for k in p}

