"""The properties every generated step (stepgen.py) must have, in every mode.

``check(case, modes)`` runs one case and returns its failures (strings naming the mode); no
failure is an exception, so that one case reports everything it breaks. What is checked, per
docs/Reliability.md:

- fp32 as written (no options): the step compiles and runs; it equals @plain, the step with the
  markers replaced by hand, bit for bit (loss, parameters and optimizer state, step after
  step); its f64 twin's gradients agree with central finite differences of its f64 loss;
- every other mode: the pipeline's output compiles and runs with finite losses, the first
  step's loss (and, until a step is skipped, the following ones) within LOSS_TOLERANCE of
  fp32's, as long as fp32's losses stay benign (finite, at most BENIGN_LOSS: a draw may be an
  unstable model); no op the report files as deny computes in the low type, and no op that computes
  math.exp does, except at O3; every op that sums over a reduction dimension (linalg matmul,
  batch matmul and convolution, and every linalg.generic with a reduction iterator and an
  arith.addf in its body: generic contractions such as the convolutions' backward, row and
  batch sums) yields f32 (the f32 accumulator), at every level; level=O0 equals fp32 bit for
  bit;
- with loss scaling: a NaN or inf injected at a random step marks the step skipped, leaves
  parameters and optimizer state bit-identical and backs the dynamic scale off; it goes into
  the float input, or, for steps whose input is token ids, into a gradient (through the
  `poison` input of Case.poisoned());
- in every mode: saving a checkpoint (Session.save) at a random step, training on, then
  loading it and training again over the same batches gives the same losses and state bit for
  bit (the injection check restores its state with state_dict and load_state_dict).
"""
import re
import tempfile

import numpy as np

import amp_mlir

# Every mode a case runs in: None is fp32 as written.
MODES = [None, "dtype=f16", "dtype=f16 scaling=static init-scale=256", "dtype=bf16",
         "policy=tf", "policy=mindspore", "policy=tensor-cores-only", "level=O0", "level=O1",
         "level=O2", "level=O3", "level=auto"]
# |loss - fp32 loss| <= tolerance * max(1, |fp32 loss|), by the low type.
LOSS_TOLERANCE = {"f16": 2e-2, "bf16": 6e-2}
# Data is benign while fp32's losses stay below this: a draw can be an unstable model
# (a large rate on a deep stack), whose later steps no low type need follow.
BENIGN_LOSS = 1e3
STEPS = 4
FD_SAMPLES = 4
FD_EPS = 1e-6
FD_RTOL, FD_ATOL = 1e-5, 1e-7
CONTRACTIONS = re.compile(r"= linalg\.(matmul|batch_matmul|conv_\w+)\b.*-> tensor<[^>]*x(\w+)>")
REDUCING_GENERIC = re.compile(r"= linalg\.generic .*iterator_types = \[[^\]]*\"reduction\"")
RESULT_ELEMENT = re.compile(r"^\s*\} -> tensor<(?:[^>]*x)?(\w+)>")


def accumulators(ir):
    """(what, element type of the result) of every op of `ir` that sums over a reduction
    dimension: named contractions, and generics with a reduction iterator that add."""
    for match in CONTRACTIONS.finditer(ir):
        yield f"linalg.{match.group(1)}", match.group(2)
    lines = ir.splitlines()
    for i, line in enumerate(lines):
        if not REDUCING_GENERIC.search(line):
            continue
        j, adds = i + 1, False
        while not RESULT_ELEMENT.match(lines[j]):
            adds |= "arith.addf" in lines[j]
            j += 1
        if adds:
            yield f"the reducing linalg.generic of line {i + 1}", \
                RESULT_ELEMENT.match(lines[j]).group(1)


def bits(a):
    return np.ascontiguousarray(a).view(np.uint8).tobytes()


def state_bits(s):
    return {k: bits(v) for k, v in {**s.parameters, **s.optimizer_state}.items()}


def as64(a):
    """A float array in f64; integers (token ids, class indices) as they are."""
    return a if a.dtype.kind == "i" else a.astype(np.float64)


def low_type(mode):
    return "bf16" if mode and "bf16" in mode else "f16"


def step_function(case):
    """@train_step's text, with @grads64 to tell whether an injected value reaches the
    gradients: not @plain, which is no step, nor anything a mode's pipeline would cast."""
    text = case.text
    return (text[text.index("func.func @train_step"):text.index("func.func @plain")]
            + text[text.index("func.func @grads64"):])


class Checker:
    def __init__(self, case, rng):
        self.case, self.rng = case, rng
        self.failures = []
        self.batches = case.batches(STEPS, np.random.default_rng(case.seed + 1),
                                    batch=self._batch_size())

    def _batch_size(self):
        cfg = self.case.cfg
        return cfg.batch + 1 if cfg.dynamic else cfg.batch

    def fail(self, mode, message):
        self.failures.append(f"seed {self.case.seed} [{mode or 'fp32'}]: {message}")

    def session(self, mode, text=None, functions=()):
        try:
            return amp_mlir.Session(text or self.case.text, mode, func="train_step",
                                    functions=list(functions))
        except ValueError as error:
            self.fail(mode, f"does not compile: {error}")
            return None

    # ---- fp32 ----
    def fp32(self):
        s = self.session(None, functions=["plain", "loss64", "grads64"])
        if s is None:
            return None
        self.gradients(s)
        names = [a.name for a in s.arguments]
        losses = []
        for k, batch in enumerate(self.batches):
            values = {**s.parameters, **s.optimizer_state, **s.hyperparameters,
                      **dict(zip(self.case.data_names, batch))}
            plain = s.call("plain", *(values[n] for n in names))
            result = s.step(*batch)
            losses.append(result.loss)
            if bits(s.result(0)) != bits(plain[0]):
                self.fail(None, f"step {k + 1}: loss {s.result(0)} != plain twin's {plain[0]}")
            carried = [a.name for a in s.arguments if a.role in ("parameter", "optimizer_state")]
            now = {**s.parameters, **s.optimizer_state}
            for name, value in zip(carried, plain[1:]):
                if bits(now[name]) != bits(value):
                    self.fail(None, f"step {k + 1}: '{name}' differs from the plain twin's")
                    break
        final = state_bits(s)
        self.resume(s, None)
        return losses, final

    @staticmethod
    def benign(fp32_losses, k):
        """Whether step k comes before fp32 training leaves the benign range."""
        return all(np.isfinite(v) and abs(v) <= BENIGN_LOSS for v in fp32_losses[:k + 1])

    def gradients(self, s):
        """Finite differences of @loss64 against @grads64 at the initial parameters."""
        params = {k: v.astype(np.float64) for k, v in s.parameters.items()}
        order = list(params)
        data = [as64(a) for a in self.batches[0]]
        grads = s.call("grads64", *params.values(), *data)[1:]
        for _ in range(FD_SAMPLES):
            i = int(self.rng.integers(len(order)))
            p = params[order[i]]
            j = int(self.rng.integers(p.size))
            value = p.flat[j]
            plus, minus = dict(params), dict(params)
            plus[order[i]] = p.copy()
            plus[order[i]].flat[j] = value + FD_EPS
            minus[order[i]] = p.copy()
            minus[order[i]].flat[j] = value - FD_EPS
            lp = s.call("loss64", *plus.values(), *data)[0]
            lm = s.call("loss64", *minus.values(), *data)[0]
            fd = (float(lp) - float(lm)) / (2 * FD_EPS)
            g = float(grads[i].flat[j])
            if abs(fd - g) > FD_ATOL + FD_RTOL * max(abs(fd), abs(g)):
                self.fail(None, f"gradient of '{order[i]}'[{j}] is {g}, finite differences "
                                f"give {fd}")

    # ---- the other modes ----
    def low(self, mode, fp32_losses, fp32_final):
        text = step_function(self.case)
        try:
            compiled = amp_mlir.compile(text, mode)
        except ValueError as error:
            self.fail(mode, f"the pipeline fails: {error}")
            return
        self.decisions(mode, text, compiled)
        s = self.session(mode, text, functions=["grads64"])
        if s is None:
            return
        losses, skipped = [], False
        for k, batch in enumerate(self.batches):
            r = s.step(*batch)
            losses.append(r.loss)
            skipped |= r.found_inf
            if fp32_losses and not self.benign(fp32_losses, k):
                continue
            if not np.isfinite(r.loss):
                self.fail(mode, f"step {k + 1}: loss {r.loss} on benign data")
            elif fp32_losses and (k == 0 or not skipped) and mode != "level=O0":
                ref = fp32_losses[k]
                tol = LOSS_TOLERANCE[low_type(mode)] * max(1.0, abs(ref))
                if abs(r.loss - ref) > tol:
                    self.fail(mode, f"step {k + 1}: loss {r.loss} vs fp32 {ref} "
                                    f"(tolerance {tol:.3g})")
        if mode == "level=O0" and fp32_losses is not None:
            if [bits(np.float64(v)) for v in losses] != [bits(np.float64(v)) for v in fp32_losses] \
                    or state_bits(s) != fp32_final:
                self.fail(mode, "differs from fp32 as written")
        if s.scaler.is_enabled():
            if self.case.cfg.vocab:
                self.gradient_injection(mode)
            else:
                self.injection(mode, s)
        self.resume(s, mode)

    def decisions(self, mode, text, compiled):
        lines = text.splitlines()
        exp_lines = set()
        for i, line in enumerate(lines):
            if "= linalg.generic" in line:
                j = i + 1
                while not lines[j].lstrip().startswith("} -> tensor"):
                    if "math.exp" in lines[j]:
                        exp_lines.add(i + 1)
                    j += 1
        for d in (compiled.report or {}).get("decisions", []):
            if d["role"] != "painted":
                continue
            line = int(d["location"].split(":")[-2])
            if d.get("category") == "deny" and d["precision"] != "f32":
                self.fail(mode, f"{d['op']} at {d['location']} is deny but computes in "
                                f"{d['precision']}")
            if line in exp_lines and d["precision"] != "f32" and mode != "level=O3":
                self.fail(mode, f"{d['op']} at {d['location']} computes math.exp in "
                                f"{d['precision']}")
        step_ir = compiled.ir[compiled.ir.index("func.func @train_step"):]
        step_ir = step_ir[:step_ir.find("func.func @", 1)]
        for what, elt in accumulators(step_ir):
            if elt != "f32":
                self.fail(mode, f"{what} yields {elt}, not the f32 accumulator")

    def reaches_gradients(self, s, x, t):
        """Whether the f64 gradients at the current parameters are not all finite: an inf
        in the input may rightly vanish (softmax of -inf, tanh of inf)."""
        params = [v.astype(np.float64) for v in s.parameters.values()]
        with np.errstate(all="ignore"):
            out = s.call("grads64", *params, as64(x), as64(t))
        return not all(np.isfinite(v).all() for v in out)

    def injection(self, mode, s):
        """A NaN or inf in the input at a random step that makes a gradient non-finite
        skips the step."""
        snapshot = s.state_dict()
        at, value = self.draw_injection()
        for k, (x, t) in enumerate(self.batches):
            if k == at:
                x = x.copy()
                x.flat[int(self.rng.integers(x.size))] = value
            self.expect_skipped(mode, s, k, value, "the input",
                                k == at and self.reaches_gradients(s, x, t), (x, t))
        s.load_state_dict(snapshot)

    def gradient_injection(self, mode):
        """For token-id inputs: a NaN or inf added to a gradient at a random step (the
        `poison` input of Case.poisoned()) skips the step."""
        s = self.session(mode, self.case.poisoned())
        if s is None:
            return
        at, value = self.draw_injection()
        for k, (x, t) in enumerate(self.batches):
            poison = np.zeros(len(x), np.float32)
            if k == at:
                poison[int(self.rng.integers(len(x)))] = value
            self.expect_skipped(mode, s, k, value, "a gradient", k == at, (x, t, poison))

    def draw_injection(self):
        at = int(self.rng.integers(len(self.batches)))
        return at, [np.nan, np.inf, -np.inf][int(self.rng.integers(3))]

    def expect_skipped(self, mode, s, k, value, where, expected, batch):
        """Runs step k on `batch`; when `expected`, checks that it was skipped."""
        before, scale = state_bits(s), s.scaler.get_scale()
        r = s.step(*batch)
        if not expected:
            return
        if not r.found_inf:
            self.fail(mode, f"step {k + 1} with {value} in {where} was not skipped")
        elif state_bits(s) != before:
            self.fail(mode, f"step {k + 1} was skipped but changed the parameters or "
                            "optimizer state")
        if s.scaler.mode == "dynamic" and s.scaler.get_scale() != scale * s.scaler.backoff_factor:
            self.fail(mode, f"step {k + 1} was skipped; the scale went from {scale} to "
                            f"{s.scaler.get_scale()}")

    def resume(self, s, mode):
        """Save at a random step (to disk, as a checkpoint), train on, load and train again:
        the same bits."""
        start = s.state_dict()
        at = int(self.rng.integers(1, len(self.batches)))
        losses = []
        with tempfile.TemporaryDirectory() as checkpoint:
            for k, batch in enumerate(self.batches):
                if k == at:
                    s.save(checkpoint)
                r = s.step(*batch)
                if k >= at:
                    losses.append(r.loss)
            final = state_bits(s)
            s.load(checkpoint)
        again = [s.step(*batch).loss for batch in self.batches[at:]]
        if [bits(np.float64(v)) for v in again] != [bits(np.float64(v)) for v in losses] \
                or state_bits(s) != final:
            self.fail(mode, f"resuming from the checkpoint of step {at} does not continue "
                            "bit for bit")
        s.load_state_dict(start)


def check(case, modes=MODES, seed=0):
    """Runs `case` in `modes`; returns the failures."""
    c = Checker(case, np.random.default_rng([case.seed, seed]))
    fp32_losses = fp32_final = None
    if None in modes:
        fp32_losses, fp32_final = c.fp32() or (None, None)
    for mode in modes:
        if mode is not None:
            c.low(mode, fp32_losses, fp32_final)
    return c.failures
