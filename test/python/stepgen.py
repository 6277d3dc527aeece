"""Random valid training steps (docs/TrainingStepIR.md), reproducible from a seed.

``generate(seed)`` draws a step: a random stack of layers on a [batch, features] activation,
a loss, the backward generated with the forward (every layer emits its own vector-Jacobian
product in linalg/arith as it emits its forward) and an optimizer in one ``amp.update``. The
layers: dense (matmul, the weight stored either way round, so transposed matmuls), elementwise
activations (ReLU, tanh, sigmoid, GELU, softplus), a broadcast scale and shift, layer norm,
softmax over the features, an attention-like block of batch matmuls and transposes on a
reshape, a slice, an ``scf.for`` carrying a tensor, an ``scf.if`` on the data, a convolution
with sum pooling on a reshape to NHWC, and residual blocks around some of them. Static or
dynamic batch; float inputs, or one i32 token id per row embedded by a table (a one-hot
matmul, whose gradient is the table's); softmax cross-entropy on one-hot rows or on i32 class
indices, or a squared error; SGD, momentum or Adam, the learning rate a constant or a
hyperparameter.

The module of a case holds four functions built from the same draw:
  @train_step  the step in the contract's form
  @plain       the same step with the markers replaced by hand: the seed a constant of ones,
               the update's body inlined (what fp32 "as written" must equal bit for bit)
  @loss64      the forward and the loss in f64
  @grads64     the loss and the gradients of every parameter in f64, for finite differences
``Case.poisoned()`` is @train_step with one more data input, `poison` (one float per row, zero
on benign data), whose batch sum is added to one parameter's gradient: the way an inf or NaN
reaches a gradient of a step whose inputs are integers.

  python3 test/python/stepgen.py 17          # prints the module of seed 17
  python3 test/python/stepgen.py 17 --describe

bench/gen_step.py provides the IR emitter (Gen); docs/Reliability.md says what the property
tests (test_properties.py, scripts/property-check.py) check on these steps.
"""
import argparse
import os
import random
import sys
from dataclasses import dataclass, field
from typing import List

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from gen_step import Body, Gen, V, fconst  # noqa: E402

# Layers that keep the width, allowed inside a residual block.
SAME_WIDTH = ("activation", "scale_shift", "layernorm", "softmax", "attention", "loop",
              "branch", "square_dense")
ACTIVATIONS = ("relu", "tanh", "sigmoid", "gelu", "softplus")


@dataclass
class Config:
    """What one seed drew; `build` turns it into IR."""
    seed: int
    batch: int
    dynamic: bool
    features: int
    classes: int
    loss: str        # "ce_onehot", "ce_index", "mse"
    optimizer: str   # "sgd", "momentum", "adam"
    lr_input: bool   # the learning rate as a hyperparameter (an `inputs` operand)
    lr: float
    layers: List[dict] = field(default_factory=list)
    vocab: int = 0   # > 0: the input is one i32 token id per row, below `vocab`

    def describe(self):
        def text(spec):
            if spec["kind"] == "residual":
                return "residual(" + ", ".join(text(s) for s in spec["inner"]) + ")"
            extra = {k: v for k, v in spec.items() if k not in ("kind", "inner")}
            return spec["kind"] + (str(extra) if extra else "")
        inputs = f"token ids below {self.vocab} embedded in " if self.vocab else ""
        return (f"seed {self.seed}: batch {'?' if self.dynamic else ''}{self.batch}, "
                f"{inputs}{self.features} features, {self.classes} classes, {self.loss}, "
                f"{self.optimizer} (lr {self.lr}{' input' if self.lr_input else ''}); "
                + " -> ".join(text(s) for s in self.layers))


def _draw_layer(rng, kind, width):
    """One layer spec on an activation of `width` features and the width it leaves."""
    if kind in ("dense", "square_dense"):
        out = width if kind == "square_dense" else rng.choice([4, 6, 8, 12, 16])
        return dict(kind="dense", out=out, transposed=rng.random() < 0.5,
                    bias=rng.random() < 0.7), out
    if kind == "activation":
        return dict(kind=kind, fn=rng.choice(ACTIVATIONS)), width
    if kind == "attention":
        tokens = [t for t in (2, 3, 4) if width % t == 0 and width // t >= 2]
        if not tokens:
            return None, width
        return dict(kind=kind, tokens=rng.choice(tokens)), width
    if kind == "slice":
        if width < 3:
            return None, width
        size = rng.randint(2, width - 1)
        return dict(kind=kind, offset=rng.randint(0, width - size), size=size), size
    if kind == "loop":
        return dict(kind=kind, trips=rng.randint(1, 3), decay=rng.choice([0.5, 0.75, 0.9])), width
    if kind == "branch":
        return dict(kind=kind), width
    if kind == "conv":
        if width % 16:
            return None, width
        channels, kernel = width // 16, rng.randint(1, 3)
        filters = rng.choice([1, 2, 3])
        pooled = 4 - kernel  # 4x4 input, valid convolution, 2x2 pooling with stride 1
        return dict(kind=kind, channels=channels, kernel=kernel, filters=filters), \
            pooled * pooled * filters
    return dict(kind=kind), width  # scale_shift, layernorm, softmax


def draw(seed) -> Config:
    rng = random.Random(seed)
    cfg = Config(seed=seed, batch=rng.choice([2, 3, 4, 6, 8]), dynamic=rng.random() < 0.3,
                 features=rng.choice([4, 6, 8, 12, 16]), classes=rng.choice([2, 3, 5]),
                 loss=rng.choice(["ce_onehot", "ce_index", "mse"]),
                 optimizer=rng.choice(["sgd", "momentum", "adam"]),
                 lr_input=rng.random() < 0.5, lr=rng.choice([0.01, 0.05, 0.1]))
    if cfg.optimizer == "adam":
        cfg.lr = 0.01
    width = cfg.features
    kinds = ["dense", "activation", "scale_shift", "layernorm", "softmax", "attention",
             "slice", "loop", "branch", "conv", "residual"]
    for _ in range(rng.randint(1, 5)):
        kind = rng.choice(kinds)
        if kind == "conv" and width % 16:
            cfg.layers.append(dict(kind="dense", out=16, transposed=rng.random() < 0.5,
                                   bias=True))
            width = 16
        if kind == "residual":
            inner = []
            for _ in range(rng.randint(1, 2)):
                spec, _ = _draw_layer(rng, rng.choice(SAME_WIDTH), width)
                if spec:
                    inner.append(spec)
            if inner:
                cfg.layers.append(dict(kind="residual", inner=inner))
            continue
        spec, width = _draw_layer(rng, kind, width)
        if spec:
            cfg.layers.append(spec)
    # Drawn apart, so that adding the token inputs left every other seed's draw as it was.
    tokens = random.Random(f"tokens {seed}")
    if tokens.random() < 0.25:
        cfg.vocab = tokens.choice([5, 7, 11])
    return cfg


class Builder:
    """Emits one function of a case. Every layer method emits the forward and returns the
    output and its backward: a function from the output's gradient to the input's, which
    records the parameters' gradients in `self.grads`."""

    def __init__(self, cfg: Config, mode: str, poison=False):
        self.cfg, self.mode, self.poison = cfg, mode, poison
        elt = "f64" if mode.endswith("64") else "f32"
        self.g = Gen(elt, "%batch" if cfg.dynamic else None)
        self.elt = elt
        self.B = None if cfg.dynamic else cfg.batch
        self.args = []       # (V, attributes) in argument order
        self.param_attrs = {}
        self.grads = {}
        self.counter = 0

    # ---- helpers ----
    def line(self, text):
        self.g.line(text)

    def fresh(self, hint):
        return self.g.fresh(hint)

    def param(self, name, shape, init=None):
        v = self.g.param(name.replace(".", "_"), shape)
        attrs = f'amp.name = "{name}"' + (f', amp.init = "{init}"' if init else "")
        self.param_attrs[v.name] = attrs
        return v

    def const_tensor(self, value):
        name = self.fresh("k")
        self.line(f"{name} = arith.constant dense<{fconst(value, self.elt)}> : "
                  f"tensor<{self.elt}>")
        return V(name, (), self.elt)

    def map(self, fn, *values, hint="t"):
        return self.g.map(fn, *values, hint=hint)

    def row(self, fn, value, vec, hint="t"):
        """fn(x[i, j], vec[j]) over a [batch, n] value."""
        return self.g.generic([(value, ("d0", "d1")), (vec, ("d1",))], value.shape,
                              ("d0", "d1"), 2, lambda b, x, y, o: fn(b, x, y), hint=hint)

    def per_row(self, fn, value, col, hint="t"):
        """fn(x[i, j], col[i]) over a [batch, n] value."""
        return self.g.generic([(value, ("d0", "d1")), (col, ("d0",))], value.shape,
                              ("d0", "d1"), 2, lambda b, x, y, o: fn(b, x, y), hint=hint)

    def add(self, a, b):
        return self.map(lambda bb, x, y: bb.add(x, y), a, b, hint="add")

    def row_sum(self, value):
        """Sum over dimension 1 of a [batch, n] value: [batch]."""
        return self.g.reduce_sum(value, (0,))

    def row_max(self, value):
        n = value.shape[0]
        init = self.g.zeros((n,), float("-inf"))
        return self.g.generic([(value, ("d0", "d1"))], (n,), ("d0",), 2,
                              lambda b, v, a: b.max(v, a), ("d1",), init=init, hint="max")

    def batch_sum(self, value):
        """Sum over the batch (dimension 0): a parameter's gradient."""
        return self.g.reduce_sum(value, tuple(range(1, len(value.shape))))

    def transpose(self, value, perm):
        shape = tuple(value.shape[p] for p in perm)
        out = self.g.empty(shape)
        name = self.fresh("tr")
        self.line(f"{name} = linalg.transpose ins({value.name} : {value.type}) "
                  f"outs({out.name} : {out.type}) permutation = [{', '.join(map(str, perm))}]")
        return V(name, shape, self.elt)

    def bmm(self, a, b):
        shape = (a.shape[0], a.shape[1], b.shape[2])
        out = self.g.zeros(shape)
        name = self.fresh("bmm")
        self.line(f"{name} = linalg.batch_matmul ins({a.name}, {b.name} : {a.type}, {b.type}) "
                  f"outs({out.name} : {out.type}) -> {out.type}")
        return V(name, shape, self.elt)

    def dims(self, shape):
        return ", ".join(self.g.dims(shape))

    # ---- layers ----
    def layer(self, h, spec, prefix):
        return getattr(self, "layer_" + spec["kind"])(h, spec, prefix)

    def layer_dense(self, h, spec, prefix):
        d, out = h.shape[1], spec["out"]
        t = spec["transposed"]
        w = self.param(prefix + ".weight", (out, d) if t else (d, out))
        b = self.param(prefix + ".bias", (out,)) if spec["bias"] else None
        y = self.g.matmul(h, w, tb=t)
        if b:
            y = self.row(lambda bb, x, v: bb.add(x, v), y, b, hint="bias")

        def back(dy):
            if b:
                self.grads[b.name] = self.batch_sum(dy)
            self.grads[w.name] = self.g.matmul(dy, h, ta=True) if t else \
                self.g.matmul(h, dy, ta=True)
            return self.g.matmul(dy, w) if t else self.g.matmul(dy, w, tb=True)
        return y, back

    def layer_activation(self, h, spec, prefix):
        fn = spec["fn"]
        if fn == "gelu":
            return self.g.gelu(h), lambda dy: self.g.gelu_backward(dy, h)
        if fn == "relu":
            y = self.map(lambda b, x: b.max(x, b.const(0.0)), h, hint="relu")
            return y, lambda dy: self.map(
                lambda b, d, x: b.select(b.gt(x, b.const(0.0)), d, b.const(0.0)), dy, h,
                hint="drelu")
        if fn == "tanh":
            y = self.map(lambda b, x: b.math("tanh", x), h, hint="tanh")
            return y, lambda dy: self.map(
                lambda b, d, v: b.mul(d, b.sub(b.const(1.0), b.mul(v, v))), dy, y, hint="dtanh")
        sigmoid = lambda b, x: b.div(b.const(1.0), b.add(b.const(1.0),  # noqa: E731
                                                          b.math("exp", b.sub(b.const(0.0), x))))
        if fn == "sigmoid":
            y = self.map(sigmoid, h, hint="sigmoid")
            return y, lambda dy: self.map(
                lambda b, d, v: b.mul(d, b.mul(v, b.sub(b.const(1.0), v))), dy, y, hint="dsig")
        # softplus
        y = self.map(lambda b, x: b.math("log", b.add(b.const(1.0), b.math("exp", x))), h,
                     hint="softplus")
        return y, lambda dy: self.map(lambda b, d, x: b.mul(d, sigmoid(b, x)), dy, h,
                                      hint="dsoftplus")

    def layer_scale_shift(self, h, spec, prefix):
        gamma = self.param(prefix + ".scale", (h.shape[1],), "ones")
        beta = self.param(prefix + ".shift", (h.shape[1],))
        y = self.g.generic([(h, ("d0", "d1")), (gamma, ("d1",)), (beta, ("d1",))], h.shape,
                           ("d0", "d1"), 2, lambda b, x, s, t, o: b.add(b.mul(x, s), t),
                           hint="affine")

        def back(dy):
            self.grads[gamma.name] = self.batch_sum(self.map(lambda b, d, x: b.mul(d, x), dy, h))
            self.grads[beta.name] = self.batch_sum(dy)
            return self.row(lambda b, d, s: b.mul(d, s), dy, gamma)
        return y, back

    def layer_layernorm(self, h, spec, prefix):
        gamma = self.param(prefix + ".weight", (h.shape[1],), "ones")
        beta = self.param(prefix + ".bias", (h.shape[1],))
        y, saved = self.g.layernorm(h, gamma, beta)

        def back(dy):
            dx, dgamma, dbeta = self.g.layernorm_backward(dy, saved)
            self.grads[gamma.name], self.grads[beta.name] = dgamma, dbeta
            return dx
        return y, back

    def layer_softmax(self, h, spec, prefix):
        m = self.row_max(h)
        e = self.per_row(lambda b, x, v: b.math("exp", b.sub(x, v)), h, m, hint="exp")
        s = self.row_sum(e)
        y = self.per_row(lambda b, x, v: b.div(x, v), e, s, hint="softmax")

        def back(dy):
            r = self.row_sum(self.map(lambda b, d, v: b.mul(d, v), dy, y))
            return self.g.generic([(y, ("d0", "d1")), (dy, ("d0", "d1")), (r, ("d0",))],
                                  y.shape, ("d0", "d1"), 2,
                                  lambda b, v, d, rr, o: b.mul(v, b.sub(d, rr)), hint="dsoftmax")
        return y, back

    def layer_attention(self, h, spec, prefix):
        """y = (A A^T / E) A on A = tanh(h) reshaped to [batch, tokens, E] (the tanh
        bounds what is otherwise a cube of the input)."""
        n, d = h.shape
        t = spec["tokens"]
        e = d // t
        inv = 1.0 / e
        th = self.map(lambda b, x: b.math("tanh", x), h, hint="tanh")
        a = self.g.reshape(th, (n, t, e), [[0], [1, 2]])
        at = self.transpose(a, (0, 2, 1))
        s = self.map(lambda b, x: b.mul(x, b.const(inv)), self.bmm(a, at), hint="scores")
        y = self.g.reshape(self.bmm(s, a), (n, d), [[0], [1, 2]])

        def back(dout):
            dy = self.g.reshape(dout, (n, t, e), [[0], [1, 2]])
            ds = self.map(lambda b, x: b.mul(x, b.const(inv)), self.bmm(dy, at), hint="dscores")
            da = self.bmm(self.transpose(s, (0, 2, 1)), dy)
            dsym = self.add(ds, self.transpose(ds, (0, 2, 1)))
            dth = self.g.reshape(self.add(da, self.bmm(dsym, a)), (n, d), [[0], [1, 2]])
            return self.map(lambda b, g, v: b.mul(g, b.sub(b.const(1.0), b.mul(v, v))), dth, th,
                            hint="dtanh")
        return y, back

    def layer_slice(self, h, spec, prefix):
        n, d = h.shape
        o, k = spec["offset"], spec["size"]
        name = self.fresh("slice")
        out = V(name, (n, k), self.elt)
        self.line(f"{name} = tensor.extract_slice {h.name}[0, {o}] [{self.dims((n, k))}] [1, 1] "
                  f": {h.type} to {out.type}")

        def back(dy):
            zero = self.g.zeros((n, d))
            dx = self.fresh("pad")
            self.line(f"{dx} = tensor.insert_slice {dy.name} into {zero.name}[0, {o}] "
                      f"[{self.dims((n, k))}] [1, 1] : {dy.type} into {zero.type}")
            return V(dx, (n, d), self.elt)
        return out, back

    def loop_header(self, trips, carried):
        lo, hi, one, i = (self.fresh(x) for x in ("lo", "hi", "one", "i"))
        self.line(f"{lo} = arith.constant 0 : index")
        self.line(f"{hi} = arith.constant {trips} : index")
        self.line(f"{one} = arith.constant 1 : index")
        names = [self.fresh("it") for _ in carried]
        result = self.fresh("loop")
        self.line(f"{result}:{len(carried)} = scf.for {i} = {lo} to {hi} step {one} iter_args("
                  + ", ".join(f"{n} = {v.name}" for n, v in zip(names, carried)) + ") -> ("
                  + ", ".join(v.type for v in carried) + ") {")
        return result, [V(n, v.shape, v.elt) for n, v in zip(names, carried)]

    def loop_end(self, result, yielded):
        self.line("scf.yield " + ", ".join(v.name for v in yielded) + " : "
                  + ", ".join(v.type for v in yielded))
        self.g.line("}", op=False)
        return [V(f"{result}#{i}", v.shape, v.elt) for i, v in enumerate(yielded)]

    def layer_loop(self, h, spec, prefix):
        """`trips` times y = decay * y + bias: an scf.for carrying the activation; the
        backward is a loop too, carrying the gradient and the bias's sum of it."""
        c = spec["decay"]
        bias = self.param(prefix + ".bias", (h.shape[1],))
        result, (y,) = self.loop_header(spec["trips"], [h])
        (out,) = self.loop_end(result, [self.row(lambda b, x, v: b.add(b.mul(x, b.const(c)), v),
                                                 y, bias, hint="step")])

        def back(dy):
            result, (g, acc) = self.loop_header(spec["trips"], [dy, self.g.zeros(dy.shape)])
            acc2 = self.add(acc, g)
            g2 = self.map(lambda b, x: b.mul(x, b.const(c)), g, hint="decay")
            dx, total = self.loop_end(result, [g2, acc2])
            self.grads[bias.name] = self.batch_sum(total)
            return dx
        return out, back

    def condition(self):
        """x[0, 0] > 0 (token ids: 2 * x[0] > vocab), on the data: a branch taken at run
        time."""
        zero, cst, value, cond = (self.fresh(x) for x in ("c0", "zero", "x00", "cond"))
        self.line(f"{zero} = arith.constant 0 : index")
        if self.cfg.vocab:
            twice = self.fresh("twice")
            self.line(f"{cst} = arith.constant {self.cfg.vocab} : i32")
            self.line(f"{value} = tensor.extract {self.x.name}[{zero}] : {self.x.type}")
            self.line(f"{twice} = arith.addi {value}, {value} : i32")
            self.line(f"{cond} = arith.cmpi sgt, {twice}, {cst} : i32")
            return cond
        self.line(f"{cst} = arith.constant {fconst(0.0, self.elt)} : {self.elt}")
        self.line(f"{value} = tensor.extract {self.x.name}[{zero}, {zero}] : {self.x.type}")
        self.line(f"{cond} = arith.cmpf ogt, {value}, {cst} : {self.elt}")
        return cond

    def branch(self, cond, then, otherwise, like):
        name = self.fresh("if")
        self.line(f"{name} = scf.if {cond} -> ({like.type}) {{")
        for i, fn in enumerate((then, otherwise)):
            if i:
                self.g.line("} else {", op=False)
            v = fn()
            self.line(f"scf.yield {v.name} : {v.type}")
        self.g.line("}", op=False)
        return V(name, like.shape, like.elt)

    def layer_branch(self, h, spec, prefix):
        """ReLU when x[0, 0] > 0, else half the activation."""
        cond = self.condition()
        y = self.branch(cond, lambda: self.map(lambda b, x: b.max(x, b.const(0.0)), h, hint="relu"),
                        lambda: self.map(lambda b, x: b.mul(x, b.const(0.5)), h, hint="half"), h)

        def back(dy):
            return self.branch(
                cond, lambda: self.map(lambda b, d, x: b.select(b.gt(x, b.const(0.0)), d,
                                                                b.const(0.0)), dy, h, hint="drelu"),
                lambda: self.map(lambda b, d: b.mul(d, b.const(0.5)), dy, hint="dhalf"), dy)
        return y, back

    def pool(self, value, out_shape):
        """2x2 sum pooling, stride 1 (NHWC)."""
        window = self.fresh("win")
        self.line(f"{window} = tensor.empty() : tensor<2x2x{self.elt}>")
        out = self.g.zeros(out_shape)
        name = self.fresh("pool")
        self.line(f"{name} = linalg.pooling_nhwc_sum {{dilations = dense<1> : tensor<2xi64>, "
                  f"strides = dense<1> : tensor<2xi64>}} ins({value.name}, {window} : "
                  f"{value.type}, tensor<2x2x{self.elt}>) outs({out.name} : {out.type}) "
                  f"-> {out.type}")
        return V(name, out_shape, self.elt)

    def pad(self, value, pad):
        """Zeros around the two spatial dimensions of an NHWC value."""
        n, hh, ww, c = value.shape
        zero = self.g.zeros((n, hh + 2 * pad, ww + 2 * pad, c))
        name = self.fresh("pad")
        self.line(f"{name} = tensor.insert_slice {value.name} into {zero.name}[0, {pad}, {pad}, 0] "
                  f"[{self.dims(value.shape)}] [1, 1, 1, 1] : {value.type} into {zero.type}")
        return V(name, zero.shape, self.elt)

    def layer_conv(self, h, spec, prefix):
        """NHWC 4x4 convolution (valid, stride 1), then 2x2 average pooling (stride 1)."""
        n = h.shape[0]
        c, k, f = spec["channels"], spec["kernel"], spec["filters"]
        o = 4 - k + 1
        q = o - 1
        w = self.param(prefix + ".weight", (k, k, c, f), "normal:0.3")
        x4 = self.g.reshape(h, (n, 4, 4, c), [[0], [1, 2, 3]])
        z = self.g.zeros((n, o, o, f))
        conv = self.fresh("conv")
        self.line(f"{conv} = linalg.conv_2d_nhwc_hwcf {{dilations = dense<1> : tensor<2xi64>, "
                  f"strides = dense<1> : tensor<2xi64>}} ins({x4.name}, {w.name} : {x4.type}, "
                  f"{w.type}) outs({z.name} : {z.type}) -> {z.type}")
        y = V(conv, z.shape, self.elt)
        pooled = self.map(lambda b, v: b.mul(v, b.const(0.25)), self.pool(y, (n, q, q, f)),
                          hint="avg")
        out = self.g.reshape(pooled, (n, q * q * f), [[0], [1, 2, 3]])

        def back(dout):
            dp = self.map(lambda b, v: b.mul(v, b.const(0.25)),
                          self.g.reshape(dout, (n, q, q, f), [[0], [1, 2, 3]]), hint="davg")
            dy = self.pool(self.pad(dp, 1), (n, o, o, f))
            d7 = tuple(f"d{i}" for i in range(7))
            # dW[kh, kw, c, f] = sum_{b, i, j} x[b, i + kh, j + kw, c] dy[b, i, j, f]
            self.grads[w.name] = self.g.contract(
                x4, ("d4", "d5 + d0", "d6 + d1", "d2"), dy, ("d4", "d5", "d6", "d3"),
                (k, k, c, f), d7[:4], 7, d7[4:])
            flipped = self.g.generic([(w, (f"-d0 + {k - 1}", f"-d1 + {k - 1}", "d2", "d3"))],
                                     w.shape, d7[:4], 4, lambda b, v, o_: v, hint="flip")
            # dx[b, i, j, c] = sum_{kh, kw, f} dy_padded[b, i + kh, j + kw, f] w_flipped[kh, kw, c, f]
            dx = self.g.contract(self.pad(dy, k - 1), ("d0", "d1 + d4", "d2 + d5", "d6"), flipped,
                                 ("d4", "d5", "d3", "d6"), (n, 4, 4, c), d7[:4], 7, d7[4:])
            return self.g.reshape(dx, (n, 4 * 4 * c), [[0], [1, 2, 3]])
        return out, back

    def layer_residual(self, h, spec, prefix):
        y, backs = h, []
        for i, inner in enumerate(spec["inner"]):
            y, back = self.layer(y, inner, f"{prefix}.{i}")
            backs.append(back)
        out = self.add(h, y)

        def back(dy):
            d = dy
            for b in reversed(backs):
                d = b(d)
            return self.add(dy, d)
        return out, back

    # ---- loss ----
    def inverse_batch(self):
        """1 / batch as a 0-d tensor."""
        if not self.cfg.dynamic:
            return self.const_tensor(1.0 / self.cfg.batch)
        elt = self.elt
        i64, fl, one, inv, t = (self.fresh(x) for x in ("bi", "bf", "one", "inv", "invn"))
        self.line(f"{i64} = arith.index_cast %batch : index to i64")
        self.line(f"{fl} = arith.sitofp {i64} : i64 to {elt}")
        self.line(f"{one} = arith.constant {fconst(1.0, elt)} : {elt}")
        self.line(f"{inv} = arith.divf {one}, {fl} : {elt}")
        self.line(f"{t} = tensor.from_elements {inv} : tensor<{elt}>")
        return V(t, (), elt)

    def seed(self, loss):
        if self.mode == "train_step":
            name = self.fresh("seed")
            self.line(f"{name} = amp.seed {loss.name} : {loss.type}")
            return V(name, (), self.elt)
        return self.const_tensor(1.0)

    def one_hot(self, labels, classes):
        n = labels.shape[0]
        init = self.g.empty((n, classes))
        out = self.fresh("onehot")
        self.line(f"{out} = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0)>, "
                  f"affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [\"parallel\", "
                  f"\"parallel\"]}} ins({labels.name} : {labels.type}) outs({init.name} : "
                  f"{init.type}) {{")
        lab, o, j, ji, eq, one, zero, r = (self.fresh(x) for x in
                                           ("l", "o", "j", "ji", "eq", "one", "zero", "r"))
        elt = self.elt
        self.g.line(f"^bb0({lab}: i32, {o}: {elt}):", op=False)
        for text in (f"{j} = linalg.index 1 : index", f"{ji} = arith.index_cast {j} : index to i32",
                     f"{eq} = arith.cmpi eq, {ji}, {lab} : i32",
                     f"{one} = arith.constant {fconst(1.0, elt)} : {elt}",
                     f"{zero} = arith.constant {fconst(0.0, elt)} : {elt}",
                     f"{r} = arith.select {eq}, {one}, {zero} : {elt}",
                     f"linalg.yield {r} : {elt}"):
            self.g.line(text, 2)
        self.g.line(f"}} -> {init.type}", op=False)
        return V(out, (n, classes), elt)

    def loss(self, logits, target, invn):
        """(loss, its gradient function of the seed) for the configured loss."""
        d2 = ("d0", "d1")
        g = self.g
        if self.cfg.loss == "mse":
            diff = self.map(lambda b, z, y: b.sub(z, y), logits, target, hint="diff")
            loss = g.generic([(diff, d2), (invn, ())], (), (), 2,
                             lambda b, v, s, a: b.add(a, b.mul(b.mul(b.const(0.5), b.mul(v, v)), s)),
                             d2, init=g.zeros(()), hint="loss")
            return loss, lambda seed: g.generic(
                [(diff, d2), (invn, ()), (seed, ())], diff.shape, d2, 2,
                lambda b, v, s, sd, o: b.mul(v, b.mul(s, sd)), hint="dlogits")
        m = self.row_max(logits)
        e = self.per_row(lambda b, x, v: b.math("exp", b.sub(x, v)), logits, m, hint="exp")
        s = self.row_sum(e)
        loss = g.generic([(logits, d2), (m, ("d0",)), (s, ("d0",)), (target, d2), (invn, ())], (),
                         (), 2, lambda b, z, mm, ss, t, iv, a: b.sub(a, b.mul(b.mul(
                             t, b.sub(b.sub(z, mm), b.math("log", ss))), iv)),
                         d2, init=g.zeros(()), hint="loss")
        return loss, lambda seed: g.generic(
            [(e, d2), (s, ("d0",)), (target, d2), (invn, ()), (seed, ())], e.shape, d2, 2,
            lambda b, ee, ss, t, iv, sd, o: b.mul(b.sub(b.div(ee, ss), t), b.mul(iv, sd)),
            hint="dlogits")

    # ---- optimizer ----
    def optimizer_state(self, params):
        """The state the update replaces besides the parameters: (name, V, init)."""
        if self.cfg.optimizer == "momentum":
            return [(f"opt.momentum.{self._pname(p)}", V(f"{p.name}_mom", p.shape, self.elt))
                    for p in params]
        if self.cfg.optimizer == "adam":
            return ([(f"opt.exp_avg.{self._pname(p)}", V(f"{p.name}_m", p.shape, self.elt))
                     for p in params]
                    + [(f"opt.exp_avg_sq.{self._pname(p)}", V(f"{p.name}_v", p.shape, self.elt))
                       for p in params]
                    + [("opt.step", V("%adam_step", (), self.elt))])
        return []

    def _pname(self, p):
        return self.param_attrs[p.name].split('"')[1]

    def update_body(self, grads, params, state, lr):
        """The new parameters and state from block arguments (or, in @plain, the values)."""
        cfg = self.cfg
        k = len(params)

        def lr_times(v, fn, hint):
            if lr is None:
                return self.map(lambda b, *a: fn(b, b.const(cfg.lr), *a), *v, hint=hint)
            rank = len(v[0].shape)
            d = tuple(f"d{i}" for i in range(rank))
            return self.g.generic([(x, d) for x in v] + [(lr, ())], v[0].shape, d, rank,
                                  lambda b, *a: fn(b, a[-2], *a[:-2]), hint=hint)

        if cfg.optimizer == "sgd":
            return [lr_times([p, g], lambda b, r, pp, gg: b.sub(pp, b.mul(r, gg)), "sgd")
                    for p, g in zip(params, grads)]
        if cfg.optimizer == "momentum":
            moms = [self.map(lambda b, m, gg: b.add(b.mul(b.const(0.9), m), gg), m, g, hint="mom")
                    for m, g in zip(state, grads)]
            news = [lr_times([p, m], lambda b, r, pp, mm: b.sub(pp, b.mul(r, mm)), "p")
                    for p, m in zip(params, moms)]
            return news + moms
        b1, b2, eps = 0.9, 0.999, 1e-8
        m_state, v_state, step = state[:k], state[k:2 * k], state[-1]
        new_t = self.map(lambda b, t: b.add(t, b.const(1.0)), step, hint="t")
        t = self.fresh("tf")
        self.line(f"{t} = tensor.extract {new_t.name}[] : {new_t.type}")
        body = Body(self.g, 1)
        bc1 = body.sub(body.const(1.0), body._op("s", f"math.powf {body.const(b1)}, {t} : {self.elt}"))
        bc2 = body.sub(body.const(1.0), body._op("s", f"math.powf {body.const(b2)}, {t} : {self.elt}"))
        ms = [self.map(lambda b, m, gg: b.add(b.mul(b.const(b1), m), b.mul(b.const(1 - b1), gg)),
                       m, g, hint="m") for m, g in zip(m_state, grads)]
        vs = [self.map(lambda b, v, gg: b.add(b.mul(b.const(b2), v),
                                              b.mul(b.const(1 - b2), b.mul(gg, gg))),
                       v, g, hint="v") for v, g in zip(v_state, grads)]
        news = [lr_times([p, m, v], lambda b, r, pp, mm, vv: b.sub(pp, b.mul(r, b.div(
            b.div(mm, bc1), b.add(b.math("sqrt", b.div(vv, bc2)), b.const(eps))))), "p")
            for p, m, v in zip(params, ms, vs)]
        return news + ms + vs + [new_t]

    def update(self, params, state, lr):
        grads = [self.grads[p.name] for p in params]
        state_values = [v for _, v in state]
        if self.mode == "plain":
            return self.update_body(grads, params, state_values, lr)
        operands = params + state_values
        inputs = [lr] if lr is not None else []
        results = self.fresh("new")
        text = (f"{results}:{len(operands)} = amp.update grads("
                + ", ".join(g.name for g in grads) + " : " + ", ".join(g.type for g in grads)
                + ") state(" + ", ".join(s.name for s in operands) + " : "
                + ", ".join(s.type for s in operands) + ")")
        if inputs:
            text += f" inputs({lr.name} : {lr.type})"
        self.line(text + " {")
        blocks = [V(self.fresh("g"), v.shape, v.elt) for v in grads + operands + inputs]
        self.g.line("^bb0(" + ", ".join(f"{b.name}: {b.type}" for b in blocks) + "):", op=False)
        k = len(grads)
        ng, ns = blocks[:k], blocks[k:k + len(operands)]
        new = self.update_body(ng, ns[:len(params)], ns[len(params):],
                               blocks[-1] if inputs else None)
        self.line("amp.yield " + ", ".join(v.name for v in new) + " : "
                  + ", ".join(v.type for v in new))
        self.g.line("} : " + ", ".join(s.type for s in operands), op=False)
        return [V(f"{results}#{i}", v.shape, v.elt) for i, v in enumerate(operands)]

    # ---- the function ----
    def build(self):
        cfg, g, elt = self.cfg, self.g, self.elt
        self.x = V("%x", (self.B,), "i32") if cfg.vocab else V("%x", (self.B, cfg.features), elt)
        if cfg.loss == "ce_index":
            target_arg = V("%labels", (self.B,), "i32")
        else:
            target_arg = V("%y", (self.B, cfg.classes), elt)
        if cfg.dynamic:
            c0 = self.fresh("c0")
            self.line(f"{c0} = arith.constant 0 : index")
            self.line(f"%batch = tensor.dim %x, {c0} : {self.x.type}")
        h, backs = self.x, []
        if cfg.vocab:
            h, back = self.layer_dense(self.one_hot(self.x, cfg.vocab),
                                       dict(out=cfg.features, transposed=False, bias=False),
                                       "embed")
            backs.append(back)
        for i, spec in enumerate(cfg.layers):
            h, back = self.layer(h, spec, f"l{i}")
            backs.append(back)
        h, back = self.layer_dense(h, dict(out=cfg.classes, transposed=False, bias=True), "head")
        backs.append(back)
        invn = self.inverse_batch()
        target = self.one_hot(target_arg, cfg.classes) if cfg.loss == "ce_index" else target_arg
        loss, dloss = self.loss(h, target, invn)
        params = list(g.params)
        data = [(self.x, 'amp.name = "x"'), (target_arg, f'amp.name = "{target_arg.name[1:]}"')]
        if self.mode == "loss64":
            return self.function(params, [], [], data, [loss])
        d = dloss(self.seed(loss))
        for back in reversed(backs):
            d = back(d)
        if self.mode == "grads64":
            return self.function(params, [], [], data, [loss] + [self.grads[p.name] for p in params])
        if self.poison:
            data.append((self.poison_gradient(params), 'amp.name = "poison"'))
        state = self.optimizer_state(params)
        lr = V("%lr", (), elt) if cfg.lr_input else None
        hyper = [(lr, f'amp.name = "lr", amp.value = {cfg.lr} : f32')] if lr else []
        new = self.update(params, state, lr)
        return self.function(params, state, hyper, data, [loss] + new)

    def poison_gradient(self, params):
        """Adds the batch sum of a new [batch] input to one parameter's gradient; returns
        the input."""
        poison = V("%poison", (self.B,), self.elt)
        total = self.g.reduce_sum(poison, ())
        p = params[self.cfg.seed % len(params)]
        grad = self.grads[p.name]
        d = tuple(f"d{i}" for i in range(len(grad.shape)))
        self.grads[p.name] = self.g.generic([(grad, d), (total, ())], grad.shape, d, len(d),
                                            lambda b, x, q, o: b.add(x, q), hint="poisoned")
        return poison

    def function(self, params, state, hyper, data, results):
        args = [(p, self.param_attrs[p.name]) for p in params]
        args += [(v, f'amp.name = "{name}"') for name, v in state]
        args += hyper + data
        sig = ",\n    ".join(f"{v.name}: {v.type} {{{attrs}}}" for v, attrs in args)
        self.line("return " + ", ".join(r.name for r in results) + " : "
                  + ", ".join(r.type for r in results))
        head = (f"func.func @{self.mode}(\n    {sig})\n    -> ("
                + ", ".join(r.type for r in results) + ") {")
        return "\n".join([head] + self.g.lines + ["}"]) + "\n"


@dataclass
class Case:
    cfg: Config
    text: str             # the module: @train_step, @plain, @loss64, @grads64
    data_names: List[str]

    @property
    def seed(self):
        return self.cfg.seed

    def batches(self, steps, rng=None, batch=None):
        """Benign data: `steps` batches of (x, target), standard normal inputs (or token
        ids)."""
        rng = rng or np.random.default_rng(self.seed)
        n = batch or self.cfg.batch
        out = []
        for _ in range(steps):
            if self.cfg.vocab:
                x = rng.integers(0, self.cfg.vocab, n).astype(np.int32)
            else:
                x = rng.standard_normal((n, self.cfg.features)).astype(np.float32)
            if self.cfg.loss == "ce_index":
                t = rng.integers(0, self.cfg.classes, n).astype(np.int32)
            elif self.cfg.loss == "ce_onehot":
                t = np.eye(self.cfg.classes, dtype=np.float32)[rng.integers(0, self.cfg.classes, n)]
            else:
                t = rng.standard_normal((n, self.cfg.classes)).astype(np.float32)
            out.append((x, t))
        return out

    def poisoned(self):
        """@train_step with the `poison` input (the module docstring)."""
        return Builder(self.cfg, "train_step", poison=True).build()


def generate(seed) -> Case:
    cfg = draw(seed)
    text = f"// stepgen seed {seed}: {cfg.describe()}\n"
    text += "\n".join(Builder(cfg, mode).build()
                      for mode in ("train_step", "plain", "loss64", "grads64"))
    data = ["x", "labels" if cfg.loss == "ce_index" else "y"]
    return Case(cfg, text, data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seed", type=int)
    parser.add_argument("--describe", action="store_true", help="print the draw only")
    parser.add_argument("-o", "--output", default="-")
    args = parser.parse_args()
    case = generate(args.seed)
    text = case.cfg.describe() + "\n" if args.describe else case.text
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
