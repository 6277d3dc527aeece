"""Training steps against PyTorch on the same machine, in one run, interleaved.

For each model (an MLP 784-1024-1024-10 at batch 256 with SGD, a GPT-style decoder block
d=256, 4 heads, T=64, batch 8, vocab 512 with Adam, a CNN of ResNet basic blocks on 32x32
images at batch 64 with SGD and momentum) and each thread count, the variants

    torch eager fp32, torch eager with autocast bf16 (CPU), torch.compile fp32 and bf16,
    ours fp32, f16 (dynamic loss scaling) and bf16

run the same step from the same weights on the same batch. The rounds take turns, each
variant running a few steps per round, so that the machine's noise falls on all of them
alike; the table gives the median time per step, each variant's ratio to eager fp32, our
compile time, the GEMM and convolution FLOPs of the step (PyTorch's FlopCounterMode on its
forward and backward) against the machine's GEMM rate measured in the same run (at
256x1024x1024, the faster of torch.mm, the library PyTorch calls, and our runtime's matmul in
the library it chose, `amp-gemm-rates`): the fraction of that floor a step reaches.

    python3 bench/bench_vs_torch.py [--models mlp,gpt,cnn] [--threads 1,2] [--rounds 5]
                                    [--steps 5] [--no-compile] [--f32-operands]
                                    [--variants "ours fp32,ours bf16,..."]

"ours bf16 f32-ops" runs the bf16 step with Session(f32_operands=True): on a host whose library
computes bf16 products in f32, their operands stored in f32; --f32-operands adds it.
--no-compile leaves out the torch.compile variants. --variants runs the variants it names
instead (torch eager fp32, the reference of every ratio, always runs): many short rounds of a
few variants, e.g. without PyTorch's bf16 steps where it has no fast bf16 kernels (about a
second a step on AVX2), measure the ratios between ours more closely. The last line of each
table gives the targets' ratios of the medians, and in brackets the range of the ratios of the
rounds, which shows how noisy the machine was.

Ours runs through amp_mlir.torch's tracer, amp-import-step and amp_mlir.Session (the
build in $AMP_BUILD_DIR, default build/).
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.abspath(os.environ.get("AMP_BUILD_DIR", os.path.join(ROOT, "build")))
sys.path.insert(0, os.path.join(BUILD, "python_packages"))

import amp_mlir  # noqa: E402
from amp_mlir.torch import trace_training_step  # noqa: E402


# -- the models ------------------------------------------------------------------------

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(784, 1024), nn.Linear(1024, 1024), nn.Linear(1024, 10)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class DecoderBlock(nn.Module):
    def __init__(self, vocab=512, d=256, heads=4, seq=64):
        super().__init__()
        self.heads, self.seq = heads, seq
        self.embed, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.ln1, self.ln2, self.ln_f = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.fc_out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.head = nn.Linear(d, vocab)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq) == 0)

    def forward(self, tokens):
        b, t = tokens.shape
        x = self.embed(tokens) + self.pos(torch.arange(t))
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        shape = (b, t, self.heads, -1)
        q, k, v = (z.reshape(shape).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
        att = att.masked_fill(self.mask[:, :, :t, :t], float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, -1)
        x = x + self.proj(y)
        x = x + self.fc_out(F.gelu(self.fc(self.ln2(x))))
        return self.head(self.ln_f(x))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNetSmall(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(16)
        self.layer1, self.layer2 = BasicBlock(16, 16, 1), BasicBlock(16, 32, 2)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.layer2(self.layer1(F.relu(self.bn(self.stem(x)))))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def cross_entropy(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def make_model(name, seed=0):
    """(model, optimizer factory, batch) of a benchmark model."""
    torch.manual_seed(seed)
    if name == "mlp":
        model = MLP()
        batch = (torch.randn(256, 784), torch.randint(0, 10, (256,)))
        return model, lambda m: torch.optim.SGD(m.parameters(), lr=0.01), batch
    if name == "gpt":
        model = DecoderBlock()
        tokens = torch.randint(0, 512, (8, 64))
        batch = (tokens, torch.roll(tokens, -1, 1))
        return model, lambda m: torch.optim.Adam(m.parameters(), lr=1e-3), batch
    if name == "cnn":
        model = ResNetSmall()
        batch = (torch.randn(64, 3, 32, 32), torch.randint(0, 10, (64,)))
        return model, lambda m: torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9), batch
    raise ValueError(f"unknown model {name!r}")


# -- the variants: each a callable running one step ------------------------------------

def torch_step(model, optimizer, batch, autocast):
    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = cross_entropy(model, *batch)
        loss.backward()
        optimizer.step()
        return loss.item()
    return step


def compiled_torch_step(model, optimizer, batch, autocast):
    def train(x, y):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = cross_entropy(model, x, y)
        loss.backward()
        optimizer.step()
        return loss
    compiled = torch.compile(train)
    start = time.perf_counter()
    compiled(*batch)
    seconds = time.perf_counter() - start
    return (lambda: float(compiled(*batch))), seconds


def our_step(name, options, threads, **session_options):
    """A Session on the traced step (Session's keyword options `session_options`), started
    from the same weights as the torch variants; returns (step, compile seconds, a function
    giving the bytes of temporaries the last step allocated)."""
    model, make_optimizer, batch = make_model(name)
    traced = trace_training_step(model, cross_entropy, make_optimizer(model), batch)
    step_text = amp_mlir.import_step(traced.module_text)
    start = time.perf_counter()
    session = amp_mlir.Session(step_text, options, threads=threads, **session_options)
    seconds = time.perf_counter() - start
    state = session.state_dict()
    initial = traced.initial_values()
    for key in state["state"]:
        state["state"][key] = initial[key].numpy()
    session.load_state_dict(state)
    data = [b.numpy() for b in batch]
    last = {}

    def step():
        last["result"] = session.step(*data)
        return last["result"].loss
    return step, seconds, lambda: last["result"].temporary_bytes


def step_flops(name):
    """FLOPs of the GEMMs and convolutions one fp32 forward and backward of the model needs, as
    PyTorch's FlopCounterMode counts them (matmuls and convolutions, the backward ones from the
    forward shapes: a strided convolution's input gradient at its own cost, not at that of the
    stride-1 convolution over a zero-interleaved gradient that the imported step computes)."""
    from torch.utils.flop_counter import FlopCounterMode
    model, _, batch = make_model(name)
    with FlopCounterMode(display=False) as counter:
        cross_entropy(model, *batch).backward()
    return counter.get_total_flops()


def gemm_rate(dtype):
    """GFLOP/s of torch.mm (PyTorch's CPU GEMM library) at 256x1024 by 1024x1024."""
    a, b = torch.randn(256, 1024, dtype=dtype), torch.randn(1024, 1024, dtype=dtype)
    for _ in range(3):
        torch.mm(a, b)
    reps, start = 20, time.perf_counter()
    for _ in range(reps):
        torch.mm(a, b)
    return 2 * 256 * 1024 * 1024 * reps / (time.perf_counter() - start) / 1e9


def library_rates(threads):
    """GFLOP/s of our runtime's matmul at 256x1024x1024 (amp-gemm-rates: in the library it
    chose for this host, OpenBLAS or oneDNN, bf16 and f16 in our packed GEMM where OpenBLAS
    computes f32), by input type, and the library's name."""
    out = subprocess.run([os.path.join(BUILD, "bin", "amp-gemm-rates"), "--threads",
                          str(threads)], capture_output=True, text=True, check=True).stdout
    rates, library, packed = {}, "runtime", False
    for line in out.splitlines():
        fields = line.split()
        if fields[:1] == ["runtime"] and fields[4:5] == ["GFLOP/s"]:
            rates[fields[1]] = float(fields[3])
            library = fields[5].rstrip(",")
            packed = packed or line.endswith("converted as packed")
    return library + (", bf16 packed" if packed else ""), rates


def cpu_description():
    fields = {}  # the first processor's /proc/cpuinfo lines, by key
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    model = platform.processor() or "unknown"
    if model in ("unknown", "x86_64"):
        model = fields.get("model name", model)
    # Virtual machines often name only the brand ("AMD EPYC"): the family and model tell
    # its generations apart (25 / 1 is Zen 3, 25 / 17 Zen 4).
    if "cpu family" in fields and "model" in fields:
        model += f" (family {fields['cpu family']}, model {fields['model']})"
    flags = set(fields.get("flags", "").split())
    isa = sorted(f for f in flags if f.startswith(("avx512", "amx")) or f in ("avx2", "fma", "f16c"))
    return model, isa


# Every variant: PyTorch's as (compiled, autocast bf16), ours as (options, Session options).
TORCH_VARIANTS = {"torch eager fp32": (False, False), "torch eager bf16": (False, True),
                  "torch.compile fp32": (True, False), "torch.compile bf16": (True, True)}
OUR_VARIANTS = {"ours fp32": (None, {}), "ours f16": ("dtype=f16", {}),
                "ours bf16": ("dtype=bf16", {}),
                "ours bf16 f32-ops": ("dtype=bf16", {"f32_operands": True})}
REFERENCE = "torch eager fp32"


def is_compiled(label):
    """Whether the variant `label` runs through torch.compile."""
    return TORCH_VARIANTS.get(label, (False, False))[0]


def select_variants(variants, with_compile, with_f32_operands):
    """The labels to run, in the table's order: those `variants` names (a comma-separated
    string, or None for the defaults the two flags adjust), and always the reference."""
    known = list(TORCH_VARIANTS) + list(OUR_VARIANTS)
    if variants is None:
        return [label for label in known
                if (with_compile or not is_compiled(label))
                and (with_f32_operands or label != "ours bf16 f32-ops")]
    named = [label.strip() for label in variants.split(",") if label.strip()]
    unknown = [label for label in named if label not in known]
    if unknown:
        raise ValueError(f"unknown variant(s) {', '.join(map(repr, unknown))}; "
                         f"known: {', '.join(known)}")
    return [label for label in known if label in named or label == REFERENCE]


def benchmark(name, threads, rounds, steps, labels):
    torch.set_num_threads(threads)
    os.environ["OMP_NUM_THREADS"] = str(threads)
    variants, compile_seconds = {}, {}
    if any(is_compiled(label) for label in labels):
        # Dynamo keys its cache on `train`'s code, shared by every model and thread count:
        # without a reset, the later ones hit its recompile limit and run eagerly.
        torch._dynamo.reset()
    for label in labels:
        if label not in TORCH_VARIANTS:
            continue
        compiled, autocast = TORCH_VARIANTS[label]
        model, make_optimizer, batch = make_model(name)
        if compiled:
            variants[label], compile_seconds[label] = compiled_torch_step(
                model, make_optimizer(model), batch, autocast)
        else:
            variants[label] = torch_step(model, make_optimizer(model), batch, autocast)
    temporaries = {}
    for label in labels:
        if label in OUR_VARIANTS:
            options, session_options = OUR_VARIANTS[label]
            variants[label], compile_seconds[label], temporaries[label] = our_step(
                name, options, threads, **session_options)
    flops = step_flops(name)
    times = {label: [] for label in variants}
    for _ in range(rounds):
        for label, run in variants.items():
            run()  # the first step of a round warms its caches
            start = time.perf_counter()
            for _ in range(steps):
                run()
            times[label].append((time.perf_counter() - start) / steps * 1e3)
    library, library_gemm_rates = library_rates(threads)
    rates = {"torch.mm": {"f32": gemm_rate(torch.float32), "bf16": gemm_rate(torch.bfloat16)},
             "ours (%s)" % library: library_gemm_rates}
    eager = statistics.median(times[REFERENCE])
    rows = []
    for label, samples in times.items():
        ms = statistics.median(samples)
        # A bf16 step's GEMMs run at the faster of the bf16 and the f32 rate: without bf16
        # kernels (an AVX2 host) the inputs are converted and an f32 kernel runs.
        dtypes = ("bf16", "f32") if "bf16" in label else ("f32",)
        rate = max(by_type.get(dtype, 0) for by_type in rates.values() for dtype in dtypes)
        floor_ms = flops / (rate * 1e9) * 1e3
        temporary_bytes = temporaries[label]() if label in temporaries else None
        rows.append((label, ms, ms / eager, compile_seconds.get(label), floor_ms / ms,
                     temporary_bytes))
    return rows, rates, flops, times


def target_ratios(times):
    """The issue's targets as (a, b, ratio of the medians, lowest and highest ratio of a
    round), from each variant's times per round."""
    pairs = (("ours fp32", "torch eager fp32"), ("ours bf16", "torch eager bf16"),
             ("ours bf16", "torch.compile bf16"), ("ours bf16", "ours fp32"),
             ("ours f16", "ours fp32"), ("ours bf16 f32-ops", "ours fp32"))
    ratios = []
    for a, b in pairs:
        if a in times and b in times:
            per_round = [x / y for x, y in zip(times[a], times[b])]
            ratios.append((a, b, statistics.median(times[a]) / statistics.median(times[b]),
                           min(per_round), max(per_round)))
    return ratios


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="mlp,gpt,cnn")
    parser.add_argument("--threads", default=f"1,{os.cpu_count()}")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--no-compile", action="store_true", help="leave out torch.compile")
    parser.add_argument("--f32-operands", action="store_true",
                        help="add ours bf16 with Session(f32_operands=True)")
    parser.add_argument("--variants", help="the variants to run, comma-separated (torch eager "
                        "fp32 always runs): " + ", ".join(list(TORCH_VARIANTS) + list(OUR_VARIANTS)))
    args = parser.parse_args()
    if args.variants is not None and (args.no_compile or args.f32_operands):
        parser.error("--variants names every variant to run: no --no-compile or --f32-operands")
    try:
        labels = select_variants(args.variants, not args.no_compile, args.f32_operands)
    except ValueError as error:
        parser.error(str(error))
    model, isa = cpu_description()
    print(f"CPU: {model}; {os.cpu_count()} cores; ISA: {' '.join(isa)}")
    print(f"torch {torch.__version__}; {args.rounds} rounds of {args.steps} steps, interleaved")
    for name in args.models.split(","):
        for threads in sorted({int(t) for t in args.threads.split(",")}):
            rows, rates, flops, times = benchmark(name, threads, args.rounds, args.steps,
                                                  labels)
            rate_text = "; ".join(
                f"{library} {by_type.get('f32', 0):.0f} GFLOP/s f32, {by_type.get('bf16', 0):.0f} bf16"
                for library, by_type in rates.items())
            print(f"\n{name}, {threads} thread(s): GEMM/conv {flops / 1e9:.3f} GFLOP per step; "
                  f"{rate_text}")
            print(f"{'variant':<20} {'ms/step':>9} {'vs eager fp32':>14} {'compile s':>10} "
                  f"{'of floor':>9} {'temporaries MB':>15}")
            for label, ms, ratio, seconds, floor, temporary_bytes in rows:
                compile_text = f"{seconds:.2f}" if seconds is not None else "-"
                bytes_text = f"{temporary_bytes / 1e6:.1f}" if temporary_bytes is not None else "-"
                print(f"{label:<20} {ms:>9.2f} {ratio:>13.2f}x {compile_text:>10} {floor:>8.0%} "
                      f"{bytes_text:>15}")
            print("; ".join(f"{a} / {b}: {r:.2f}x ({low:.2f}-{high:.2f})"
                            for a, b, r, low, high in target_ratios(times)))


if __name__ == "__main__":
    main()
