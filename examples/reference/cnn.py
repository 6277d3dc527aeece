"""numpy reference of examples/cnn.mlir: conv 3x3 -> 8 channels, ReLU, 2x2 average
pooling, dense 72 -> 10, softmax CE, momentum SGD."""
import numpy as np

from .common import softmax_cross_entropy

MLIR = "cnn.mlir"
FUNC = "train_step"
BATCH = 64
PARAMS = [("k", (3, 3, 1, 8)), ("bk", (8,)), ("wd", (72, 10)), ("bd", (10,))]
OPT_STATE = [("vk", (3, 3, 1, 8)), ("vbk", (8,)), ("vwd", (72, 10)), ("vbd", (10,))]
DATA = [("x", (BATCH, 64)), ("y", (BATCH, 10))]
LR, MOMENTUM = 0.05, 0.9


def init_params(rng):
    return {"k": (rng.standard_normal((3, 3, 1, 8)) / 3).astype(np.float32),
            "bk": (0.1 * rng.standard_normal(8)).astype(np.float32),
            "wd": (rng.standard_normal((72, 10)) / np.sqrt(72)).astype(np.float32),
            "bd": np.zeros(10, np.float32)}


def patches(img):
    """img [n, 8, 8, c] -> [n, 6, 6, 3, 3, c]: the 3x3 window at each output position."""
    return np.stack([np.stack([img[:, a:a + 6, b:b + 6, :] for b in range(3)], axis=3)
                     for a in range(3)], axis=3)


def forward(p, x):
    """Returns the logits (what @predict computes) and what the backward needs."""
    n = x.shape[0]
    win = patches(x.reshape(n, 8, 8, 1))
    z = np.einsum("nhwabc,abcf->nhwf", win, p["k"]) + p["bk"]
    pool = np.maximum(z, 0).reshape(n, 3, 2, 3, 2, 8).mean(axis=(2, 4))
    flat = pool.reshape(n, 72)
    return flat @ p["wd"] + p["bd"], (win, z, flat)


def loss_and_grads(p, x, y):
    n = x.shape[0]
    logits, (win, z, flat) = forward(p, x)
    loss, dlogits = softmax_cross_entropy(logits, y)
    dpool = (dlogits @ p["wd"].T).reshape(n, 3, 3, 8)
    dact = np.broadcast_to(dpool[:, :, None, :, None, :] / 4, (n, 3, 2, 3, 2, 8)).reshape(n, 6, 6, 8)
    dz = np.where(z > 0, dact, 0)
    return loss, {"k": np.einsum("nhwabc,nhwf->abcf", win, dz), "bk": dz.sum((0, 1, 2)),
                  "wd": flat.T @ dlogits, "bd": dlogits.sum(0)}


def update(p, state, g):
    names = [n for n, _ in PARAMS]
    velocity = {n: np.float32(MOMENTUM) * state[f"v{n}"] + g[n] for n in names}
    return ({n: p[n] - np.float32(LR) * velocity[n] for n in names},
            {f"v{n}": velocity[n] for n in names})


def grads_from_update(p, state, new_p, new_state):
    """From zero velocity, the new velocity is the gradient."""
    return {n: new_state[f"v{n}"] for n, _ in PARAMS}
