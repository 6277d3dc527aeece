"""numpy reference of the MLP steps of bench/gen_step.py (dense layers, ReLU, Adam)."""
import numpy as np

from . import common


class AdamMLP:
    FUNC = "train_step"

    def __init__(self, layers=4, width=256, features=64, classes=10, batch=64):
        self.layers = layers
        self.widths = [features] + [width] * (layers - 1) + [classes]
        self.PARAMS = []
        for i in range(layers):
            self.PARAMS += [(f"w{i}", (self.widths[i], self.widths[i + 1])),
                            (f"b{i}", (self.widths[i + 1],))]
        shape_of = dict(self.PARAMS)
        self.OPT_STATE = [(n, shape_of.get(n[2:], ())) for n in
                          common.adam_state_names([n for n, _ in self.PARAMS])]
        self.DATA = [("x", (batch, features)), ("y", (batch, classes))]
        self.MLIR = None
        self.__name__ = f"adam_mlp{layers}"

    def init_params(self, rng):
        return {n: (rng.standard_normal(s) * (np.sqrt(2 / s[0]) if len(s) == 2 else 0.1))
                .astype(np.float32) for n, s in self.PARAMS}

    def forward(self, p, x):
        """Returns the logits (what @predict computes) and what the backward needs."""
        h, saved = x, []
        for i in range(self.layers):
            a = h @ p[f"w{i}"] + p[f"b{i}"]
            saved.append((h, a))
            h = np.maximum(a, 0) if i + 1 < self.layers else a
        return h, saved

    def loss_and_grads(self, p, x, y):
        h, saved = self.forward(p, x)
        loss, delta = common.softmax_cross_entropy(h, y)
        g = {}
        for i in reversed(range(self.layers)):
            inp, a = saved[i]
            if i + 1 < self.layers:
                delta = np.where(a > 0, delta, 0)
            g[f"w{i}"], g[f"b{i}"] = inp.T @ delta, delta.sum(0)
            delta = delta @ p[f"w{i}"].T
        return loss, g

    update = staticmethod(common.adam)
    grads_from_update = staticmethod(common.adam_grads_from_update)
