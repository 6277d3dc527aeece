#!/usr/bin/env python3
"""Generates large synthetic training steps in the training-step IR (docs/spec).

Two models, each a complete fp32 step: forward, softmax cross-entropy loss, `amp.seed`,
a hand-derived backward, and Adam over every parameter in one `amp.update`:

  mlp          LAYERS dense layers (ReLU between them) of WIDTH units
  transformer  BLOCKS pre-LayerNorm transformer blocks (multi-head self-attention with
               softmax, GELU MLP, residuals) on SEQ tokens of FEATURES inputs, mean-pooled
               into a classifier

The input batch is x: tensor<BATCH x (SEQ*FEATURES or FEATURES) x f32> and one-hot
y: tensor<BATCH x CLASSES x f32> (data/make_synthetic.py writes such files). The function
takes the parameters, then the Adam state (first moments, second moments, the step count
as tensor<f32>), then x and y; it returns the loss, then the new state in the same order.

  python3 bench/gen_step.py transformer --blocks 4 -o step.mlir   # prints the op count
  python3 bench/gen_step.py mlp --layers 100 --width 256 -o step.mlir

The op count is every operation in the function, the function included, with those in
linalg bodies (named ops' implicit ones too) and in the update region: what a walk of the
function visits, as `--print-op-stats` counts it. About 1k ops: `mlp --layers 10` or
`transformer --blocks 1`; about 100k: `mlp --layers 1100` or `transformer --blocks 120`.
examples/transformer.mlir is `transformer --blocks 1 --predict` with the digits settings; the numpy
reference of both models is examples/reference/transformer.py and adam_mlp.py.
"""
import argparse
import math
import sys

ADAM_LR, ADAM_B1, ADAM_B2, ADAM_EPS = 1e-3, 0.9, 0.999, 1e-8
LN_EPS = 1e-5
GELU_C, GELU_A = math.sqrt(2.0 / math.pi), 0.044715


def ttype(shape, elt="f32"):
    """tensor<4x?xf32> for shape (4, None): None is a dynamic size."""
    return "tensor<" + "".join("?x" if n is None else f"{n}x" for n in shape) + elt + ">"


def fconst(value, elt="f32"):
    if value == float("-inf"):
        return "0xFFF0000000000000" if elt == "f64" else "0xFF800000"
    return f"{float(value):.17e}" if elt == "f64" else f"{float(value):.9e}"


class V:
    """A tensor SSA value, its shape (None for the dynamic batch) and element type."""

    def __init__(self, name, shape, elt="f32"):
        self.name, self.shape, self.elt = name, tuple(shape), elt

    @property
    def type(self):
        return ttype(self.shape, self.elt)


class Body:
    """Scalar ops of a linalg.generic body (or of the update region)."""

    def __init__(self, gen, indent):
        self.gen, self.indent = gen, indent

    def _op(self, hint, text):
        name = self.gen.fresh(hint)
        self.gen.line(f"{name} = {text}", self.indent)
        return name

    def const(self, value):
        return self._op("c", f"arith.constant {fconst(value, self.gen.elt)} : {self.gen.elt}")

    def bin(self, op, a, b):
        return self._op("s", f"arith.{op} {a}, {b} : {self.gen.elt}")

    def add(self, a, b): return self.bin("addf", a, b)
    def sub(self, a, b): return self.bin("subf", a, b)
    def mul(self, a, b): return self.bin("mulf", a, b)
    def div(self, a, b): return self.bin("divf", a, b)
    def max(self, a, b): return self.bin("maximumf", a, b)

    def math(self, op, a):
        return self._op("s", f"math.{op} {a} : {self.gen.elt}")

    def gt(self, a, b):
        return self._op("p", f"arith.cmpf ogt, {a}, {b} : {self.gen.elt}")

    def select(self, p, a, b):
        return self._op("s", f"arith.select {p}, {a}, {b} : {self.gen.elt}")


class Gen:
    """Emits one step function; tracks names, parameters and the op count. `elt` is the
    float type of every value; `batch` names an index value holding the dynamic batch
    size, which shapes write as None."""

    def __init__(self, elt="f32", batch=None):
        self.lines, self.ops, self.counter = [], 0, 0
        self.params = []  # (V, init) in argument order
        self.elt, self.batch = elt, batch

    def fresh(self, hint):
        self.counter += 1
        return f"%{hint}{self.counter}"

    def line(self, text, indent=1, op=True):
        self.lines.append("  " * indent + text)
        self.ops += op

    def comment(self, text):
        self.line(f"// {text}", op=False)

    def param(self, name, shape):
        value = V(f"%{name}", shape, self.elt)
        self.params.append(value)
        return value

    # ---- tensors ----
    def dims(self, shape):
        """The sizes of `shape`, the dynamic one as the batch value: [%b, 4]."""
        return [self.batch if n is None else str(n) for n in shape]

    def empty(self, shape):
        empty = self.fresh("e")
        dynamic = ", ".join(self.batch for n in shape if n is None)
        self.line(f"{empty} = tensor.empty({dynamic}) : {ttype(shape, self.elt)}")
        return V(empty, shape, self.elt)

    def zeros(self, shape, value=0.0):
        empty = self.empty(shape)
        cst = self.fresh("c")
        self.line(f"{cst} = arith.constant {fconst(value, self.elt)} : {self.elt}")
        out = self.fresh("f")
        self.line(f"{out} = linalg.fill ins({cst} : {self.elt}) outs({empty.name} : {empty.type}) "
                  f"-> {empty.type}")
        self.ops += 1  # the yield of its implicit body
        return V(out, shape, self.elt)

    def generic(self, ins, out_shape, out_dims, loops, body, reduce_dims=(), init=None, hint="t"):
        """A linalg.generic. `ins`: (V, dims) pairs, dims naming loop variables d0..;
        the output is indexed by `out_dims`; loops in `reduce_dims` are reductions.
        `body(b, *scalars, acc)` returns the yielded scalar."""
        dims = ", ".join(f"d{i}" for i in range(loops))
        maps = [f"affine_map<({dims}) -> ({', '.join(d)})>" for _, d in ins]
        maps.append(f"affine_map<({dims}) -> ({', '.join(out_dims)})>")
        iters = ", ".join('"reduction"' if f"d{i}" in reduce_dims else '"parallel"'
                          for i in range(loops))
        if init is None:
            init = self.empty(out_shape)
        out = self.fresh(hint)
        in_names = ", ".join(v.name for v, _ in ins)
        in_types = ", ".join(v.type for v, _ in ins)
        self.line(f"{out} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
                  f"iterator_types = [{iters}]}} ins({in_names} : {in_types}) "
                  f"outs({init.name} : {init.type}) {{")
        args = [self.fresh("a") for _ in range(len(ins) + 1)]
        elts = [v.elt for v, _ in ins] + [init.elt]
        self.line("^bb0(" + ", ".join(f"{a}: {e}" for a, e in zip(args, elts)) + "):", op=False)
        result = body(Body(self, 2), *args)
        self.line(f"linalg.yield {result} : {init.elt}", 2)
        self.line(f"}} -> {init.type}", op=False)
        return V(out, out_shape, init.elt)

    def map(self, fn, *values, hint="t"):
        """Elementwise over values of one shape."""
        shape = values[0].shape
        d = tuple(f"d{i}" for i in range(len(shape)))
        return self.generic([(v, d) for v in values], shape, d, len(shape),
                            lambda b, *a: fn(b, *a[:-1]), hint=hint)

    def reduce_sum(self, value, keep, scale=1.0):
        """Sums `value` over the dims not in `keep` (indices), times `scale`."""
        rank = len(value.shape)
        d = tuple(f"d{i}" for i in range(rank))
        out_dims = tuple(d[i] for i in keep)
        acc = self.zeros(tuple(value.shape[i] for i in keep))
        red = tuple(x for i, x in enumerate(d) if i not in keep)

        def body(b, v, a):
            return b.add(b.mul(v, b.const(scale)), a) if scale != 1.0 else b.add(v, a)
        return self.generic([(value, d)], acc.shape, out_dims, rank, body, red, init=acc, hint="r")

    def matmul(self, a, b, ta=False, tb=False):
        m = a.shape[1] if ta else a.shape[0]
        n = b.shape[0] if tb else b.shape[1]
        out = self.zeros((m, n))
        name = self.fresh("mm")
        maps = ""
        if ta or tb:
            amap = "(k, m)" if ta else "(m, k)"
            bmap = "(n, k)" if tb else "(k, n)"
            maps = (f" indexing_maps = [affine_map<(m, n, k) -> {amap}>, "
                    f"affine_map<(m, n, k) -> {bmap}>, affine_map<(m, n, k) -> (m, n)>]")
        self.line(f"{name} = linalg.matmul{maps} ins({a.name}, {b.name} : {a.type}, {b.type}) "
                  f"outs({out.name} : {out.type}) -> {out.type}")
        self.ops += 3  # its implicit body: mulf, addf, yield
        return V(name, (m, n), self.elt)

    def contract(self, a, a_dims, b, b_dims, out_shape, out_dims, loops, red, scale=1.0):
        """A generic contraction (mul-add body) over the loops in `red`."""
        acc = self.zeros(out_shape)

        def body(bb, x, y, s):
            p = bb.mul(x, y)
            if scale != 1.0:
                p = bb.mul(p, bb.const(scale))
            return bb.add(p, s)
        return self.generic([(a, a_dims), (b, b_dims)], out_shape, out_dims, loops, body, red,
                            init=acc, hint="ct")

    def reshape(self, value, shape, reassoc):
        name = self.fresh("rs")
        groups = "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in reassoc) + "]"
        out = V(name, shape, value.elt)
        if len(shape) > len(value.shape):
            self.line(f"{name} = tensor.expand_shape {value.name} {groups} output_shape "
                      f"[{', '.join(self.dims(shape))}] : {value.type} into {out.type}")
        else:
            self.line(f"{name} = tensor.collapse_shape {value.name} {groups} : "
                      f"{value.type} into {out.type}")
        return out

    def add_bias(self, value, bias):
        """value[n, k] + bias[k]."""
        return self.generic([(value, ("d0", "d1")), (bias, ("d1",))], value.shape, ("d0", "d1"),
                            2, lambda b, x, y, o: b.add(x, y))

    # ---- layers (forward returns what the backward needs) ----
    def softmax_ce(self, logits, onehot):
        """Returns (loss, dlogits) with dlogits computed from the amp.seed value."""
        n, k = logits.shape
        d2 = ("d0", "d1")
        rmax = self.generic([(logits, d2)], (n,), ("d0",), 2, lambda b, v, a: b.max(v, a),
                            ("d1",), init=self.zeros((n,), float("-inf")), hint="max")
        ex = self.generic([(logits, d2), (rmax, ("d0",))], (n, k), d2, 2,
                          lambda b, v, m, o: b.math("exp", b.sub(v, m)), hint="exp")
        rsum = self.reduce_sum(ex, (0,))
        inv = 1.0 / n

        def loss_body(b, v, m, s, t, acc):
            lp = b.sub(b.sub(v, m), b.math("log", s))
            return b.sub(acc, b.mul(b.mul(t, lp), b.const(inv)))
        loss = self.generic([(logits, d2), (rmax, ("d0",)), (rsum, ("d0",)), (onehot, d2)], (),
                            (), 2, loss_body, ("d0", "d1"), init=self.zeros(()), hint="loss")
        self.comment("backward, from d(loss)/d(loss)")
        seed = self.fresh("seed")
        self.line(f"{seed} = amp.seed {loss.name} : tensor<f32>")
        seed = V(seed, ())

        def dlogits_body(b, e, s, t, g, o):
            return b.mul(b.sub(b.div(e, s), t), b.mul(g, b.const(inv)))
        dlogits = self.generic([(ex, d2), (rsum, ("d0",)), (onehot, d2), (seed, ())], (n, k),
                               d2, 2, dlogits_body, hint="dlogits")
        return loss, dlogits

    def layernorm(self, x, gamma, beta):
        n, d = x.shape
        d2 = ("d0", "d1")
        mean = self.reduce_sum(x, (0,), 1.0 / d)
        xc = self.generic([(x, d2), (mean, ("d0",))], x.shape, d2, 2,
                          lambda b, v, m, o: b.sub(v, m), hint="xc")
        sq = self.map(lambda b, v: b.mul(v, v), xc)
        var = self.reduce_sum(sq, (0,), 1.0 / d)
        rstd = self.map(lambda b, v: b.div(b.const(1.0), b.math("sqrt", b.add(v, b.const(LN_EPS)))),
                        var, hint="rstd")
        xhat = self.generic([(xc, d2), (rstd, ("d0",))], x.shape, d2, 2,
                            lambda b, v, r, o: b.mul(v, r), hint="xhat")
        y = self.generic([(xhat, d2), (gamma, ("d1",)), (beta, ("d1",))], x.shape, d2, 2,
                         lambda b, v, g, bt, o: b.add(b.mul(v, g), bt), hint="ln")
        return y, (xhat, rstd, gamma)

    def layernorm_backward(self, dy, saved):
        xhat, rstd, gamma = saved
        n, d = dy.shape
        d2 = ("d0", "d1")
        dgamma = self.reduce_sum(self.map(lambda b, g, h: b.mul(g, h), dy, xhat), (1,))
        dbeta = self.reduce_sum(dy, (1,))
        dxhat = self.generic([(dy, d2), (gamma, ("d1",))], dy.shape, d2, 2,
                             lambda b, g, w, o: b.mul(g, w), hint="dxhat")
        mean_dxhat = self.reduce_sum(dxhat, (0,), 1.0 / d)
        mean_dxhat_xhat = self.reduce_sum(self.map(lambda b, g, h: b.mul(g, h), dxhat, xhat),
                                          (0,), 1.0 / d)

        def dx_body(b, g, h, r, m1, m2, o):
            return b.mul(r, b.sub(b.sub(g, m1), b.mul(h, m2)))
        dx = self.generic([(dxhat, d2), (xhat, d2), (rstd, ("d0",)), (mean_dxhat, ("d0",)),
                           (mean_dxhat_xhat, ("d0",))], dy.shape, d2, 2, dx_body, hint="dln")
        return dx, dgamma, dbeta

    def gelu(self, u):
        def body(b, v):
            inner = b.mul(b.const(GELU_C), b.add(v, b.mul(b.const(GELU_A), b.mul(v, b.mul(v, v)))))
            return b.mul(b.mul(b.const(0.5), v), b.add(b.const(1.0), b.math("tanh", inner)))
        return self.map(body, u, hint="gelu")

    def gelu_backward(self, dg, u):
        def body(b, g, v):
            v2 = b.mul(v, v)
            t = b.math("tanh", b.mul(b.const(GELU_C), b.add(v, b.mul(b.const(GELU_A), b.mul(v, v2)))))
            left = b.mul(b.const(0.5), b.add(b.const(1.0), t))
            dinner = b.mul(b.const(GELU_C), b.add(b.const(1.0), b.mul(b.const(3 * GELU_A), v2)))
            right = b.mul(b.mul(b.const(0.5), v), b.mul(b.sub(b.const(1.0), b.mul(t, t)), dinner))
            return b.mul(g, b.add(left, right))
        return self.map(body, dg, u, hint="dgelu")

    # ---- optimizer ----
    def adam(self, grads):
        """One amp.update: Adam over every parameter. Returns the new state values."""
        params = self.params
        moments = [V(f"%m_{p.name[1:]}", p.shape) for p in params]
        seconds = [V(f"%v_{p.name[1:]}", p.shape) for p in params]
        step = V("%adam_step", ())
        state = params + moments + seconds + [step]
        self.opt_state = moments + seconds + [step]
        results = self.fresh("new")
        gl = ", ".join(g.name for g in grads)
        gt = ", ".join(g.type for g in grads)
        sl = ", ".join(s.name for s in state)
        st = ", ".join(s.type for s in state)
        self.line(f"{results}:{len(state)} = amp.update grads({gl} : {gt}) state({sl} : {st}) {{")
        gargs = [V(self.fresh("g"), g.shape) for g in grads]
        sargs = [V(self.fresh("s"), s.shape) for s in state]
        self.line("^bb0(" + ", ".join(f"{a.name}: {a.type}" for a in gargs + sargs) + "):",
                  op=False)
        k = len(params)
        p_args, m_args, v_args, t_arg = sargs[:k], sargs[k:2 * k], sargs[2 * k:3 * k], sargs[-1]
        new_t = self.map(lambda b, t: b.add(t, b.const(1.0)), t_arg, hint="step")
        body = Body(self, 1)
        t_scalar = self.fresh("tf")
        self.line(f"{t_scalar} = tensor.extract {new_t.name}[] : tensor<f32>")
        bc1 = body.sub(body.const(1.0), body._op("s", f"math.powf {body.const(ADAM_B1)}, {t_scalar} : f32"))
        bc2 = body.sub(body.const(1.0), body._op("s", f"math.powf {body.const(ADAM_B2)}, {t_scalar} : f32"))
        new_p, new_m, new_v = [], [], []
        for g, p, m, v in zip(gargs, p_args, m_args, v_args):
            rank = len(p.shape)
            d = tuple(f"d{i}" for i in range(rank))
            m1 = self.map(lambda b, gg, mm: b.add(b.mul(b.const(ADAM_B1), mm),
                                                  b.mul(b.const(1 - ADAM_B1), gg)), g, m, hint="m")
            v1 = self.map(lambda b, gg, vv: b.add(b.mul(b.const(ADAM_B2), vv),
                                                  b.mul(b.const(1 - ADAM_B2), b.mul(gg, gg))),
                          g, v, hint="v")

            def step_body(b, pp, mm, vv):
                mhat = b.div(mm, bc1)
                denom = b.add(b.math("sqrt", b.div(vv, bc2)), b.const(ADAM_EPS))
                return b.sub(pp, b.mul(b.const(ADAM_LR), b.div(mhat, denom)))
            p1 = self.map(step_body, p, m1, v1, hint="p")
            new_p.append(p1), new_m.append(m1), new_v.append(v1)
        yielded = new_p + new_m + new_v + [new_t]
        self.line(f"amp.yield {', '.join(y.name for y in yielded)} : "
                  f"{', '.join(y.type for y in yielded)}", 2)
        self.line(f"}} : {st}", op=False)
        return [V(f"{results}#{i}", s.shape) for i, s in enumerate(state)]

    def function(self, name, data, results):
        args = self.params + getattr(self, "opt_state", []) + data
        sig = ",\n    ".join(f"{a.name}: {a.type}" for a in args)
        head = [f"func.func @{name}(\n    {sig})\n    -> ({', '.join(r.type for r in results)}) {{"]
        self.line(f"return {', '.join(r.name for r in results)} : "
                  f"{', '.join(r.type for r in results)}")
        self.ops += 1  # the func.func itself
        return "\n".join(head + self.lines + ["}"]) + "\n"


def mlp(args, predict=False):
    g = Gen()
    widths = [args.features] + [args.width] * (args.layers - 1) + [args.classes]
    x = V("%x", (args.batch, args.features))
    y = V("%y", (args.batch, args.classes))
    weights = []
    for i in range(args.layers):
        weights.append((g.param(f"w{i}", (widths[i], widths[i + 1])),
                        g.param(f"b{i}", (widths[i + 1],))))
    h, saved = x, []
    for i, (w, b) in enumerate(weights):
        g.comment(f"layer {i}")
        a = g.add_bias(g.matmul(h, w), b)
        saved.append((h, a))
        h = g.map(lambda bb, v: bb.max(v, bb.const(0.0)), a, hint="relu") \
            if i + 1 < args.layers else a
    if predict:
        return g.function("predict", [x], [h]), g.ops
    loss, delta = g.softmax_ce(h, y)
    grads = {}
    for i in reversed(range(args.layers)):
        w, b = weights[i]
        inp, a = saved[i]
        if i + 1 < args.layers:
            delta = g.map(lambda bb, d, v: bb.select(bb.gt(v, bb.const(0.0)), d, bb.const(0.0)),
                          delta, a, hint="drelu")
        grads[w.name] = g.matmul(inp, delta, ta=True)
        grads[b.name] = g.reduce_sum(delta, (1,))
        if i:
            delta = g.matmul(delta, w, tb=True)
    new_state = g.adam([grads[p.name] for p in g.params])
    return g.function("train_step", [x, y], [loss] + new_state), g.ops


def transformer(args, predict=False):
    g = Gen()
    bsz, t, f, d, h = args.batch, args.seq, args.features, args.dmodel, args.heads
    if d % h:
        sys.exit(f"gen_step.py: --dmodel {d} is not a multiple of --heads {h}")
    dh, n = d // h, bsz * t
    x = V("%x", (bsz, t * f))
    y = V("%y", (bsz, args.classes))
    we, be, pos = g.param("w_embed", (f, d)), g.param("b_embed", (d,)), g.param("pos", (t, d))
    blocks = []
    for i in range(args.blocks):
        blocks.append({k: g.param(f"{k}_{i}", s) for k, s in (
            ("ln1_g", (d,)), ("ln1_b", (d,)), ("wq", (d, d)), ("wk", (d, d)), ("wv", (d, d)),
            ("wo", (d, d)), ("ln2_g", (d,)), ("ln2_b", (d,)), ("w1", (d, args.ff)),
            ("b1", (args.ff,)), ("w2", (args.ff, d)), ("b2", (d,)))})
    wc, bc = g.param("w_cls", (d, args.classes)), g.param("b_cls", (args.classes,))
    d3, d4 = ("d0", "d1", "d2"), ("d0", "d1", "d2", "d3")

    g.comment("embedding: tokens are the SEQ rows of FEATURES inputs, plus a position embedding")
    tokens = g.reshape(g.reshape(x, (bsz, t, f), [[0], [1, 2]]), (n, f), [[0, 1], [2]])
    emb = g.reshape(g.add_bias(g.matmul(tokens, we), be), (bsz, t, d), [[0, 1], [2]])
    emb = g.generic([(emb, d3), (pos, ("d1", "d2"))], emb.shape, d3, 3,
                    lambda b, v, p, o: b.add(v, p), hint="emb")
    xs = g.reshape(emb, (n, d), [[0, 1], [2]])
    saved = []
    scale = 1.0 / math.sqrt(dh)
    # (b, i, j, h, e) loop order for attention: i query, j key, e head feature.
    heads = lambda v: g.reshape(v, (bsz, t, h, dh), [[0, 1], [2, 3]])
    for i, p in enumerate(blocks):
        g.comment(f"block {i}: attention")
        ln1, ln1_saved = g.layernorm(xs, p["ln1_g"], p["ln1_b"])
        q, k, v = (heads(g.matmul(ln1, p[w])) for w in ("wq", "wk", "wv"))
        # scores[b, h, i, j] = scale * sum_e q[b, i, h, e] k[b, j, h, e]
        scores = g.contract(q, ("d0", "d2", "d1", "d4"), k, ("d0", "d3", "d1", "d4"),
                            (bsz, h, t, t), d4, 5, ("d4",), scale)
        smax = g.generic([(scores, d4)], (bsz, h, t), d3, 4, lambda b, s, a: b.max(s, a),
                         ("d3",), init=g.zeros((bsz, h, t), float("-inf")), hint="smax")
        sexp = g.generic([(scores, d4), (smax, d3)], scores.shape, d4, 4,
                         lambda b, s, m, o: b.math("exp", b.sub(s, m)), hint="sexp")
        ssum = g.reduce_sum(sexp, (0, 1, 2))
        probs = g.generic([(sexp, d4), (ssum, d3)], scores.shape, d4, 4,
                          lambda b, e, s, o: b.div(e, s), hint="probs")
        # att[b, i, h, e] = sum_j probs[b, h, i, j] v[b, j, h, e]
        att = g.contract(probs, ("d0", "d2", "d1", "d3"), v, ("d0", "d3", "d2", "d4"),
                         (bsz, t, h, dh), ("d0", "d1", "d2", "d4"), 5, ("d3",))
        att2 = g.reshape(att, (n, d), [[0, 1], [2, 3]])
        x1 = g.map(lambda b, a, c: b.add(a, c), xs, g.matmul(att2, p["wo"]), hint="res")
        g.comment(f"block {i}: GELU MLP")
        ln2, ln2_saved = g.layernorm(x1, p["ln2_g"], p["ln2_b"])
        u = g.add_bias(g.matmul(ln2, p["w1"]), p["b1"])
        gu = g.gelu(u)
        x2 = g.map(lambda b, a, c: b.add(a, c), x1, g.add_bias(g.matmul(gu, p["w2"]), p["b2"]),
                   hint="res")
        saved.append(dict(ln1=ln1, ln1_saved=ln1_saved, q=q, k=k, v=v, probs=probs, att2=att2,
                          ln2=ln2, ln2_saved=ln2_saved, u=u, gu=gu))
        xs = x2
    g.comment("head: mean over tokens, linear classifier")
    pooled = g.reduce_sum(g.reshape(xs, (bsz, t, d), [[0, 1], [2]]), (0, 2), 1.0 / t)
    logits = g.add_bias(g.matmul(pooled, wc), bc)
    if predict:
        return g.function("predict", [x], [logits]), g.ops
    loss, dlogits = g.softmax_ce(logits, y)
    grads = {wc.name: g.matmul(pooled, dlogits, ta=True), bc.name: g.reduce_sum(dlogits, (1,))}
    dpooled = g.matmul(dlogits, wc, tb=True)
    dxs = g.generic([(dpooled, ("d0", "d2"))], (bsz, t, d), d3, 3,
                    lambda b, v, o: b.mul(v, b.const(1.0 / t)), hint="dpool")
    dxs = g.reshape(dxs, (n, d), [[0, 1], [2]])
    for i in reversed(range(args.blocks)):
        p, s = blocks[i], saved[i]
        g.comment(f"block {i} backward: GELU MLP")
        grads[p["w2"].name] = g.matmul(s["gu"], dxs, ta=True)
        grads[p["b2"].name] = g.reduce_sum(dxs, (1,))
        du = g.gelu_backward(g.matmul(dxs, p["w2"], tb=True), s["u"])
        grads[p["w1"].name] = g.matmul(s["ln2"], du, ta=True)
        grads[p["b1"].name] = g.reduce_sum(du, (1,))
        dln2, grads[p["ln2_g"].name], grads[p["ln2_b"].name] = g.layernorm_backward(
            g.matmul(du, p["w1"], tb=True), s["ln2_saved"])
        dx1 = g.map(lambda b, a, c: b.add(a, c), dxs, dln2, hint="dres")
        g.comment(f"block {i} backward: attention")
        grads[p["wo"].name] = g.matmul(s["att2"], dx1, ta=True)
        datt = heads(g.matmul(dx1, p["wo"], tb=True))
        # dprobs[b, h, i, j] = sum_e datt[b, i, h, e] v[b, j, h, e]
        dprobs = g.contract(datt, ("d0", "d2", "d1", "d4"), s["v"], ("d0", "d3", "d1", "d4"),
                            (bsz, h, t, t), d4, 5, ("d4",))
        # dv[b, j, h, e] = sum_i probs[b, h, i, j] datt[b, i, h, e]
        dv = g.contract(s["probs"], ("d0", "d2", "d3", "d1"), datt, ("d0", "d3", "d2", "d4"),
                        (bsz, t, h, dh), ("d0", "d1", "d2", "d4"), 5, ("d3",))
        rowdot = g.reduce_sum(g.map(lambda b, a, c: b.mul(a, c), dprobs, s["probs"]), (0, 1, 2))
        dscores = g.generic([(s["probs"], d4), (dprobs, d4), (rowdot, d3)], dprobs.shape, d4, 4,
                            lambda b, pp, dp, r, o: b.mul(pp, b.sub(dp, r)), hint="dscores")
        # dq[b, i, h, e] = scale * sum_j dscores[b, h, i, j] k[b, j, h, e]
        dq = g.contract(dscores, ("d0", "d2", "d1", "d3"), s["k"], ("d0", "d3", "d2", "d4"),
                        (bsz, t, h, dh), ("d0", "d1", "d2", "d4"), 5, ("d3",), scale)
        # dk[b, j, h, e] = scale * sum_i dscores[b, h, i, j] q[b, i, h, e]
        dk = g.contract(dscores, ("d0", "d2", "d3", "d1"), s["q"], ("d0", "d3", "d2", "d4"),
                        (bsz, t, h, dh), ("d0", "d1", "d2", "d4"), 5, ("d3",), scale)
        dln1 = None
        for w, dw in (("wq", dq), ("wk", dk), ("wv", dv)):
            flat = g.reshape(dw, (n, d), [[0, 1], [2, 3]])
            grads[p[w].name] = g.matmul(s["ln1"], flat, ta=True)
            part = g.matmul(flat, p[w], tb=True)
            dln1 = part if dln1 is None else g.map(lambda b, a, c: b.add(a, c), dln1, part,
                                                   hint="dsum")
        dx0, grads[p["ln1_g"].name], grads[p["ln1_b"].name] = g.layernorm_backward(
            dln1, s["ln1_saved"])
        dxs = g.map(lambda b, a, c: b.add(a, c), dx1, dx0, hint="dres")
    g.comment("embedding backward")
    grads[we.name] = g.matmul(tokens, dxs, ta=True)
    grads[be.name] = g.reduce_sum(dxs, (1,))
    grads[pos.name] = g.reduce_sum(g.reshape(dxs, (bsz, t, d), [[0, 1], [2]]), (1, 2))
    new_state = g.adam([grads[q.name] for q in g.params])
    return g.function("train_step", [x, y], [loss] + new_state), g.ops


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="model", required=True)
    for name in ("mlp", "transformer"):
        p = sub.add_parser(name)
        p.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
        p.add_argument("--batch", type=int, default=64)
        p.add_argument("--classes", type=int, default=10)
        p.add_argument("--predict", action="store_true",
                       help="also emit @predict(parameters..., x) -> logits (amp-run --eval)")
        if name == "mlp":
            p.add_argument("--layers", type=int, default=4, help="dense layers (>= 1)")
            p.add_argument("--width", type=int, default=256)
            p.add_argument("--features", type=int, default=64)
        else:
            p.add_argument("--blocks", type=int, default=1)
            p.add_argument("--seq", type=int, default=8, help="tokens per sample")
            p.add_argument("--features", type=int, default=8, help="inputs per token")
            p.add_argument("--dmodel", type=int, default=32)
            p.add_argument("--heads", type=int, default=2)
            p.add_argument("--ff", type=int, default=64, help="hidden units of the MLP")
    args = parser.parse_args()
    for key, value in vars(args).items():
        if type(value) is int and value < 1:
            sys.exit(f"gen_step.py: --{key} must be >= 1, got {value}")
    model = mlp if args.model == "mlp" else transformer
    text, ops = model(args)
    if args.predict:
        forward, forward_ops = model(args, predict=True)
        text, ops = text + "\n" + forward, ops + forward_ops
    settings = " ".join(f"--{k} {v}" for k, v in vars(args).items()
                        if k not in ("model", "output", "predict"))
    settings += " --predict" if args.predict else ""
    text = (f"// Generated by bench/gen_step.py {args.model} {settings} ({ops} ops).\n"
            "// A training step per docs/spec: forward, softmax cross-entropy, amp.seed,\n"
            "// hand-derived backward, Adam in one amp.update (lr 1e-3, betas 0.9/0.999).\n"
            + text)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    print(f"{args.model}: {ops} ops", file=sys.stderr)


if __name__ == "__main__":
    main()
