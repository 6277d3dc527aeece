"""numpy reference of the transformer steps of bench/gen_step.py; EXAMPLE is
examples/transformer.mlir (one block on the digits: 8 tokens of 8 pixels)."""
import math

import numpy as np

from . import common

LN_EPS = 1e-5
GELU_C, GELU_A = math.sqrt(2.0 / math.pi), 0.044715
BLOCK_PARAMS = ("ln1_g", "ln1_b", "wq", "wk", "wv", "wo", "ln2_g", "ln2_b", "w1", "b1", "w2", "b2")


def layernorm(x, g, b):
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    rstd = 1 / np.sqrt((xc * xc).mean(-1, keepdims=True) + LN_EPS)
    xhat = xc * rstd
    return xhat * g + b, (xhat, rstd, g)


def layernorm_backward(dy, saved):
    xhat, rstd, g = saved
    dxhat = dy * g
    dx = rstd * (dxhat - dxhat.mean(-1, keepdims=True)
                 - xhat * (dxhat * xhat).mean(-1, keepdims=True))
    return dx, (dy * xhat).sum(0), dy.sum(0)


def gelu(u):
    return 0.5 * u * (1 + np.tanh(GELU_C * (u + GELU_A * u ** 3)))


def gelu_backward(dg, u):
    t = np.tanh(GELU_C * (u + GELU_A * u ** 3))
    return dg * (0.5 * (1 + t) + 0.5 * u * (1 - t * t) * GELU_C * (1 + 3 * GELU_A * u * u))


class Transformer:
    MLIR = None
    FUNC = "train_step"

    def __init__(self, blocks=1, batch=64, seq=8, features=8, dmodel=32, heads=2, ff=64,
                 classes=10, mlir=None):
        self.blocks, self.batch, self.seq, self.features = blocks, batch, seq, features
        self.dmodel, self.heads, self.ff, self.classes = dmodel, heads, ff, classes
        self.MLIR = mlir
        d = dmodel
        shapes = {"ln1_g": (d,), "ln1_b": (d,), "wq": (d, d), "wk": (d, d), "wv": (d, d),
                  "wo": (d, d), "ln2_g": (d,), "ln2_b": (d,), "w1": (d, ff), "b1": (ff,),
                  "w2": (ff, d), "b2": (d,)}
        self.PARAMS = [("w_embed", (features, d)), ("b_embed", (d,)), ("pos", (seq, d))]
        for i in range(blocks):
            self.PARAMS += [(f"{k}_{i}", shapes[k]) for k in BLOCK_PARAMS]
        self.PARAMS += [("w_cls", (d, classes)), ("b_cls", (classes,))]
        shape_of = dict(self.PARAMS)
        self.OPT_STATE = [(n, shape_of.get(n[2:], ())) for n in
                          common.adam_state_names([n for n, _ in self.PARAMS])]
        self.DATA = [("x", (batch, seq * features)), ("y", (batch, classes))]
        self.__name__ = f"transformer{blocks}"

    def init_params(self, rng):
        params = {}
        for name, shape in self.PARAMS:
            if name.startswith(("ln1_g", "ln2_g")):
                value = 1 + 0.1 * rng.standard_normal(shape)
            elif len(shape) == 1 or name == "pos":
                value = 0.1 * rng.standard_normal(shape)
            else:
                value = rng.standard_normal(shape) / np.sqrt(shape[0])
            params[name] = value.astype(np.float32)
        return params

    def forward(self, p, x):
        """Returns the logits (what @predict computes) and what the backward needs."""
        bsz, t, h = self.batch, self.seq, self.heads
        d = self.dmodel
        dh, n = d // h, bsz * t
        scale = 1 / math.sqrt(dh)
        tokens = x.reshape(n, self.features)
        xs = ((tokens @ p["w_embed"] + p["b_embed"]).reshape(bsz, t, d) + p["pos"]).reshape(n, d)
        heads = lambda v: v.reshape(bsz, t, h, dh)
        saved = []
        for i in range(self.blocks):
            q_ = lambda k: p[f"{k}_{i}"]
            ln1, ln1_s = layernorm(xs, q_("ln1_g"), q_("ln1_b"))
            q, k, v = heads(ln1 @ q_("wq")), heads(ln1 @ q_("wk")), heads(ln1 @ q_("wv"))
            scores = np.einsum("bihe,bjhe->bhij", q, k) * scale
            ex = np.exp(scores - scores.max(-1, keepdims=True))
            probs = ex / ex.sum(-1, keepdims=True)
            att2 = np.einsum("bhij,bjhe->bihe", probs, v).reshape(n, d)
            x1 = xs + att2 @ q_("wo")
            ln2, ln2_s = layernorm(x1, q_("ln2_g"), q_("ln2_b"))
            u = ln2 @ q_("w1") + q_("b1")
            gu = gelu(u)
            xs = x1 + (gu @ q_("w2") + q_("b2"))
            saved.append(dict(ln1=ln1, ln1_s=ln1_s, q=q, k=k, v=v, probs=probs, att2=att2,
                              ln2=ln2, ln2_s=ln2_s, u=u, gu=gu))
        pooled = xs.reshape(bsz, t, d).mean(1)
        return pooled @ p["w_cls"] + p["b_cls"], (tokens, saved, pooled)

    def loss_and_grads(self, p, x, y):
        bsz, t, h = self.batch, self.seq, self.heads
        d = self.dmodel
        dh, n = d // h, bsz * t
        scale = 1 / math.sqrt(dh)
        heads = lambda v: v.reshape(bsz, t, h, dh)
        logits, (tokens, saved, pooled) = self.forward(p, x)
        loss, dlogits = common.softmax_cross_entropy(logits, y)
        g = {"w_cls": pooled.T @ dlogits, "b_cls": dlogits.sum(0)}
        dpooled = dlogits @ p["w_cls"].T
        dxs = np.repeat(dpooled[:, None, :] / t, t, axis=1).reshape(n, d)
        for i in reversed(range(self.blocks)):
            s = saved[i]
            q_ = lambda k: p[f"{k}_{i}"]
            g[f"w2_{i}"], g[f"b2_{i}"] = s["gu"].T @ dxs, dxs.sum(0)
            du = gelu_backward(dxs @ q_("w2").T, s["u"])
            g[f"w1_{i}"], g[f"b1_{i}"] = s["ln2"].T @ du, du.sum(0)
            dln2, g[f"ln2_g_{i}"], g[f"ln2_b_{i}"] = layernorm_backward(du @ q_("w1").T,
                                                                        s["ln2_s"])
            dx1 = dxs + dln2
            g[f"wo_{i}"] = s["att2"].T @ dx1
            datt = heads(dx1 @ q_("wo").T)
            dprobs = np.einsum("bihe,bjhe->bhij", datt, s["v"])
            dv = np.einsum("bhij,bihe->bjhe", s["probs"], datt)
            dscores = s["probs"] * (dprobs - (dprobs * s["probs"]).sum(-1, keepdims=True))
            dq = np.einsum("bhij,bjhe->bihe", dscores, s["k"]) * scale
            dk = np.einsum("bhij,bihe->bjhe", dscores, s["q"]) * scale
            dln1 = 0
            for w, dw in (("wq", dq), ("wk", dk), ("wv", dv)):
                flat = dw.reshape(n, d)
                g[f"{w}_{i}"] = s["ln1"].T @ flat
                dln1 = dln1 + flat @ q_(w).T
            dx0, g[f"ln1_g_{i}"], g[f"ln1_b_{i}"] = layernorm_backward(dln1, s["ln1_s"])
            dxs = dx1 + dx0
        g["w_embed"], g["b_embed"] = tokens.T @ dxs, dxs.sum(0)
        g["pos"] = dxs.reshape(bsz, t, d).sum(0)
        return loss, g

    update = staticmethod(common.adam)
    grads_from_update = staticmethod(common.adam_grads_from_update)


EXAMPLE = Transformer(mlir="transformer.mlir")
