"""Reference implementations of the loss-scaler update rules.

Three rules, each one step (scale, counters, found_inf) -> next state:

- ``torch_update_scale``: a transcription of PyTorch's
  ``torch._amp_update_scale_`` kernel (aten/src/ATen/native/cuda/AmpKernels.cu
  and its CPU twin): f32 scale, i32 growth tracker, double growth/backoff
  factors, growth only if the grown scale is finite.
- ``deepspeed_update_scale``: a transcription of DeepSpeed's
  ``DynamicLossScaler.update_scale`` (runtime/fp16/loss_scaler.py) with its
  default ``consecutive_hysteresis=False``: the scale backs off only when no
  hysteresis is left (else one is used up), growth every ``scale_window``
  iterations since the last overflow refills it. Its state is a Python float
  scale and iteration numbers.
- ``amp_update_scale``: the rule `amp-guard-update` compiles (docs/Scaling.md):
  PyTorch's rule, plus the min-scale floor and max-scale cap, plus DeepSpeed's
  hysteresis.

``python3 scaler_reference.py --self-check`` checks on random sequences that
``amp_update_scale`` is PyTorch's rule when hysteresis=1 and there are no
clamps, and DeepSpeed's when the factors are DeepSpeed's (x2, /2).

``--case N --table`` prints the expected results of the cases of TABLE[N],
which the lit test test/Execution/scaler-rule.mlir runs through compiled code
(one value per line, f32 scales as their bit patterns); ``--case N --driver
--into compiled.mlir`` adds to the compiled step the MLIR ``main`` that calls
it on the same cases and prints the same values.
"""

import argparse
import math
import random
import struct
import sys

import numpy as np

F32 = np.float32


def f32(value):
    """Rounds a Python float (double) to f32, as a C++ static_cast<float>."""
    with np.errstate(over="ignore"):
        return float(F32(value))


def f32_bits(value):
    return struct.unpack("<i", struct.pack("<f", value))[0]


def torch_update_scale(scale, tracker, found_inf, growth_factor,
                       backoff_factor, growth_interval):
    """PyTorch's _amp_update_scale_: returns (scale, tracker)."""
    if found_inf:
        # float * double -> stored as float
        return f32(scale * backoff_factor), 0
    successful = tracker + 1
    if successful == growth_interval:
        new_scale = f32(scale * growth_factor)
        if math.isfinite(new_scale):
            scale = new_scale
        return scale, 0
    return scale, successful


class DeepSpeedScaler:
    """DeepSpeed's DynamicLossScaler, the part update_scale uses."""

    def __init__(self, init_scale, scale_factor, scale_window, min_scale,
                 delayed_shift, consecutive_hysteresis=False):
        self.cur_scale = init_scale
        self.cur_iter = 0
        self.last_overflow_iter = -1
        self.scale_factor = scale_factor
        self.scale_window = scale_window
        self.min_scale = min_scale
        self.delayed_shift = delayed_shift
        self.cur_hysteresis = delayed_shift
        self.consecutive_hysteresis = consecutive_hysteresis

    def update_scale(self, overflow):
        if overflow:
            if self.delayed_shift == 1 or self.cur_hysteresis == 1:
                self.cur_scale = max(self.cur_scale / self.scale_factor,
                                     self.min_scale)
            else:
                self.cur_hysteresis -= 1
            self.last_overflow_iter = self.cur_iter
        else:
            if self.consecutive_hysteresis:
                self.cur_hysteresis = self.delayed_shift
            if (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
                if not self.consecutive_hysteresis:
                    self.cur_hysteresis = self.delayed_shift
                self.cur_scale *= self.scale_factor
        self.cur_iter += 1


def amp_update_scale(scale, tracker, hysteresis_left, found_inf, *,
                     growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, min_scale=0.0,
                     max_scale=math.inf, hysteresis=1):
    """The compiled rule: returns (scale, tracker, hysteresis_left)."""
    if found_inf:
        if hysteresis > 1 and hysteresis_left > 1:
            return scale, 0, hysteresis_left - 1
        backed_off = f32(scale * backoff_factor)
        if f32(min_scale) > 0:
            backed_off = max(backed_off, f32(min_scale))
        return backed_off, 0, hysteresis_left
    counted = tracker + 1
    if counted != growth_interval:
        return scale, counted, hysteresis_left
    grown = f32(scale * growth_factor)
    if math.isfinite(grown):
        if not math.isinf(f32(max_scale)):
            grown = min(grown, f32(max_scale))
        scale = grown
    return scale, 0, hysteresis


# The cases run through compiled code: (options, [(scale, tracker,
# hysteresis_left, found_inf), ...]). Finite steps use normal scales, so that
# 1/S is finite and the step's own check finds no overflow.
TABLE = [
    ({}, [
        (65536.0, 0, 1, False),
        (65536.0, 1998, 1, False),
        (65536.0, 1999, 1, False),      # grows
        (65536.0, 1234, 1, True),       # backs off, tracker reset
        (1.0, 0, 1, True),
        (f32(3e38), 1999, 1, False),    # x2 is inf: no growth, tracker reset
        (1.401298464324817e-45, 7, 1, True),  # the smallest f32 halves to 0
    ]),
    ({"growth_factor": 3.0, "backoff_factor": 0.3, "growth_interval": 3}, [
        (1.0, 2, 1, False),
        (f32(0.1), 2, 1, False),        # rounded once, from the double product
        (1.0, 1, 1, True),
        (f32(0.7), 0, 1, True),
    ]),
    ({"min_scale": 1.0, "max_scale": 1024.0, "growth_interval": 2}, [
        (1.5, 0, 1, True),              # floored
        (1000.0, 1, 1, False),          # capped
        (1024.0, 1, 1, False),          # stays at the cap
        (4.0, 0, 1, False),
    ]),
    ({"hysteresis": 3, "growth_interval": 4}, [
        (256.0, 2, 3, True),            # uses one up, no backoff
        (256.0, 2, 2, True),
        (256.0, 2, 1, True),            # none left: backs off
        (256.0, 3, 1, False),           # grows and refills
        (256.0, 1, 2, False),
    ]),
]


def options_string(options):
    names = {"growth_factor": "growth-factor", "backoff_factor": "backoff-factor",
             "growth_interval": "growth-interval", "min_scale": "min-scale",
             "max_scale": "max-scale", "hysteresis": "hysteresis"}
    return " ".join(f"{names[k]}={v!r}" for k, v in options.items())


# The parameter of the driver's step: w' = w - g/S with g = S * x.
PARAMETER = F32(0.1)


def expected_parameter(scale, found_inf):
    """w' of the step, in f32 arithmetic: w itself, bit for bit, when the
    step is skipped; else w minus the gradient unscaled by 1/S."""
    if found_inf:
        return float(PARAMETER)
    s = F32(scale)
    unscaled = (s * F32(1.0)) * (F32(1.0) / s)
    return float(PARAMETER - unscaled)


def expected_lines(options):
    """What the driver prints: per case the new parameter's bits, the new
    scale's bits, the tracker, the hysteresis counter if there is one, and
    found_inf."""
    lines = []
    for scale, tracker, left, found_inf in case_rows(options):
        new = amp_update_scale(scale, tracker, left, found_inf, **options)
        lines.append(str(f32_bits(expected_parameter(scale, found_inf))))
        lines += [str(f32_bits(new[0])), str(new[1])]
        if options.get("hysteresis", 1) > 1:
            lines.append(str(new[2]))
        lines.append("1" if found_inf else "0")
    return lines


def case_rows(options):
    for table_options, rows in TABLE:
        if table_options == options:
            return rows
    raise KeyError(options)


def driver(options):
    """An MLIR main calling @step(x, w, scale, tracker[, hysteresis]) on
    every case of `options`, printing what expected_lines lists."""
    hyst = options.get("hysteresis", 1) > 1
    state_types = ["tensor<f32>", "tensor<i32>"] + (["tensor<i32>"] if hyst else [])
    result_types = ["tensor<1xf32>"] + state_types + ["tensor<i1>"]
    out = ["  func.func @main() {"]
    for i, (scale, tracker, left, found_inf) in enumerate(case_rows(options)):
        x = "0x7F800000" if found_inf else "1.0"
        out.append(f"    %x{i} = arith.constant dense<{x}> : tensor<1xf32>")
        out.append(f"    %w{i} = arith.constant dense<0x{f32_bits(float(PARAMETER)):08X}> : tensor<1xf32>")
        out.append(f"    %s{i} = arith.constant dense<0x{f32_bits(scale) & 0xffffffff:08X}> : tensor<f32>")
        out.append(f"    %t{i} = arith.constant dense<{tracker}> : tensor<i32>")
        args = [f"%x{i}", f"%w{i}", f"%s{i}", f"%t{i}"]
        if hyst:
            out.append(f"    %h{i} = arith.constant dense<{left}> : tensor<i32>")
            args.append(f"%h{i}")
        out.append(f"    %r{i}:{len(result_types)} = func.call @step({', '.join(args)}) : "
                   f"(tensor<1xf32>, tensor<1xf32>, {', '.join(state_types)}) -> "
                   f"({', '.join(result_types)})")
        out.append(f"    %c0_{i} = arith.constant 0 : index")
        out.append(f"    %wv{i} = tensor.extract %r{i}#0[%c0_{i}] : tensor<1xf32>")
        out.append(f"    %wb{i} = arith.bitcast %wv{i} : f32 to i32")
        out.append(f"    vector.print %wb{i} : i32")
        out.append(f"    %sv{i} = tensor.extract %r{i}#1[] : tensor<f32>")
        out.append(f"    %sb{i} = arith.bitcast %sv{i} : f32 to i32")
        out.append(f"    vector.print %sb{i} : i32")
        for k in range(2, len(result_types)):
            elem = "i1" if k == len(result_types) - 1 else "i32"
            out.append(f"    %v{i}_{k} = tensor.extract %r{i}#{k}[] : {result_types[k]}")
            out.append(f"    vector.print %v{i}_{k} : {elem}")
    out += ["    return", "  }"]
    return "\n".join(out)


def self_check(trials=2000, length=60):
    rng = random.Random(0)
    # PyTorch: hysteresis 1, no clamps, any factors.
    for _ in range(trials):
        growth = rng.choice([2.0, 3.0, 1.5, 10.0])
        backoff = rng.choice([0.5, 0.25, 0.3, 0.9])
        interval = rng.randint(1, 5)
        scale, tracker = f32(2.0 ** rng.randint(-20, 120)), 0
        ours = (scale, tracker, 1)
        for _ in range(length):
            found_inf = rng.random() < 0.3
            scale, tracker = torch_update_scale(scale, tracker, found_inf,
                                                growth, backoff, interval)
            ours = amp_update_scale(*ours, found_inf, growth_factor=growth,
                                    backoff_factor=backoff,
                                    growth_interval=interval)
            assert ours[:2] == (scale, tracker), (ours, scale, tracker)
    # DeepSpeed: factor 2 both ways, a floor, hysteresis N.
    for _ in range(trials):
        window = rng.randint(1, 5)
        delayed = rng.randint(1, 4)
        min_scale = rng.choice([0.0, 1.0, 4.0])
        init = 2.0 ** rng.randint(2, 16)
        ds = DeepSpeedScaler(init, 2.0, window, min_scale, delayed)
        ours = (init, 0, delayed)
        for _ in range(length):
            overflow = rng.random() < 0.4
            ds.update_scale(overflow)
            ours = amp_update_scale(*ours, overflow, growth_factor=2.0,
                                    backoff_factor=0.5, growth_interval=window,
                                    min_scale=min_scale, hysteresis=delayed)
            assert ours[0] == ds.cur_scale, (ours, ds.cur_scale)
            assert ours[2] == ds.cur_hysteresis, (ours, ds.cur_hysteresis)
            # DeepSpeed counts iterations since the last overflow.
            assert ours[1] == (ds.cur_iter - ds.last_overflow_iter - 1) % window
    # The table's single steps against the original rules.
    for options, rows in TABLE:
        for scale, tracker, left, found_inf in rows:
            ours = amp_update_scale(scale, tracker, left, found_inf, **options)
            if options.get("hysteresis", 1) == 1 and "min_scale" not in options:
                torch = torch_update_scale(
                    scale, tracker, found_inf, options.get("growth_factor", 2.0),
                    options.get("backoff_factor", 0.5),
                    options.get("growth_interval", 2000))
                assert ours[:2] == torch, (options, scale, ours, torch)
    print("scaler reference: PyTorch and DeepSpeed rules agree")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--self-check", action="store_true")
    parser.add_argument("--case", type=int, help="index into TABLE")
    parser.add_argument("--table", action="store_true",
                        help="print the expected values of --case")
    parser.add_argument("--driver", action="store_true",
                        help="print the MLIR main of --case")
    parser.add_argument("--options", action="store_true",
                        help="print the pass options of --case")
    parser.add_argument("--into", metavar="MODULE",
                        help="with --driver: print MODULE (a printed "
                             "builtin.module holding @step) with main added")
    args = parser.parse_args()
    if args.self_check:
        self_check()
    if args.case is None:
        return
    options = TABLE[args.case][0]
    if args.options:
        print(options_string(options))
    if args.table:
        print("\n".join(expected_lines(options)))
    if args.driver:
        if not args.into:
            print(driver(options))
            return
        module = open(args.into).read().rstrip()
        if not module.endswith("}"):
            sys.exit(f"{args.into}: not a printed module")
        print(module[:-1] + driver(options) + "\n}")


if __name__ == "__main__":
    sys.exit(main())
