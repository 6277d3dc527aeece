#!/usr/bin/env python3
"""Data-parallel training over MPI (docs/DataParallel.md): bytes communicated per step and
step time at 1 and 2 ranks.

The step: an MLP (784-1024-1024-10, ReLU, cross-entropy, SGD with momentum; 1.86M
parameters) exported by amp_mlir.torch with a dynamic batch, so that one compiled step takes
each rank's share.

- Bytes: `amp-opt STEP --amp-pipeline="... data-parallel=mpi grad-comm-dtype=T"`, the sizes
  of the buffers of every `mpi.allreduce`: what each rank hands MPI per step (the bytes on the
  wire depend on MPICH's algorithm), and the number of calls, at the default bucket size and
  at 1 MiB buckets.
- Time: amp-run on random data, global batch 256, in each mode: one process of the step
  without the option, one process with it (a world of one), `mpiexec -n 2` (128 samples
  each), and for comparison one process of half the batch without the option (what each rank
  computes, without communicating). The step time is the median of rank 0's per-step `time_ms` (--log: the call of the
  compiled step, the collectives included; no data loading), the first WARMUP_STEPS left out;
  rounds interleaved so that load on the machine falls on every configuration alike.
- The collective alone: `mpiexec -n 2` of a script that calls, 20 times, what the step
  calls for its one bucket of the MLP's gradients: MPI_Allreduce of f32 (what MPIToLLVM's
  call does), the MPI runtime's f16 and bf16 sums; the median time.

  python3 bench/bench_data_parallel.py              # about 2 minutes on a 2-core machine
  python3 bench/bench_data_parallel.py --rounds 1 --steps 20
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

from bench_steps import parse_step_log
from benchutil import machine, pinned_tool, revision, table

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MODES = [("fp32", "level=O0"), ("f16", "dtype=f16"), ("bf16", "dtype=bf16")]
WARMUP_STEPS = 5  # bench_steps' parse_step_log leaves them out
BATCH = 256
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2}


# ---- parsing (test/python/test_bench.py checks these) ----
def parse_allreduces(ir):
    """(elements, element type) of every `mpi.allreduce` of the IR, from its send buffer's
    type: `mpi.allreduce(%a, %b, MPI_SUM, %w) : memref<212xf16>, memref<212xf16>`."""
    return [(int(n), t) for n, t in
            re.findall(r"mpi\.allreduce\(.*\) : memref<(\d+)x(\w+)>, memref<", ir)]


def export_step(directory):
    """The MLP's training step with a dynamic batch, exported to directory/step.mlir."""
    sys.path.insert(0, os.path.join(os.environ.get("AMP_BUILD_DIR",
                                                   os.path.join(ROOT, "build")),
                                    "python_packages"))
    import torch
    import amp_mlir.torch as amp_torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    batch = (torch.randn(8, 784), torch.randint(0, 10, (8,)))
    amp_torch.export_training_step(
        model, lambda m, x, y: torch.nn.functional.cross_entropy(m(x), y), optimizer,
        batch, directory, dynamic_batch=True)
    return os.path.join(directory, "step.mlir"), sum(p.numel() for p in model.parameters())


def bytes_rows(amp_opt, step):
    rows = []
    f32_bytes = None
    for label, options in [("f32", "level=O0"), ("f16", "dtype=f16"), ("bf16", "dtype=bf16")]:
        for bucket in (None, 1 << 20):
            text = f"{options} data-parallel=mpi" + (f" bucket-size={bucket}" if bucket else "")
            ir = subprocess.run([amp_opt, step, f"--amp-pipeline={text}"], check=True,
                                capture_output=True, text=True).stdout
            calls = parse_allreduces(ir)
            total = sum(n * ELEMENT_BYTES[t] for n, t in calls)
            if label == "f32" and bucket is None:
                f32_bytes = total
            rows.append([f"`{text}`", label, len(calls), f"{total / 1e6:.3f}",
                         f"{total / f32_bytes:.2f}x"])
    return rows


# Times the sums of one bucket of `n` elements over the ranks; rank 0 prints JSON.
COLLECTIVE_SCRIPT = """
import ctypes, json, os, statistics, sys, time
import numpy as np
n = int(sys.argv[2])
runtime = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
rank, size = ctypes.c_int32(), ctypes.c_int32()
runtime.ampMpiInitialize(ctypes.byref(rank), ctypes.byref(size))
class Descriptor(ctypes.Structure):
    _fields_ = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                ("offset", ctypes.c_int64), ("size", ctypes.c_int64), ("stride", ctypes.c_int64)]
class Unranked(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int64), ("descriptor", ctypes.c_void_p)]
MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD = 0x4c00040a, 0x58000003, 0x44000000  # MPICH's
def f32(send, recv):
    runtime.MPI_Allreduce(ctypes.c_void_p(send.ctypes.data), ctypes.c_void_p(recv.ctypes.data),
                          n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD)
def half(entry):
    def call(send, recv):
        d = [Descriptor(a.ctypes.data, a.ctypes.data, 0, n, 1) for a in (send, recv)]
        u = [Unranked(1, ctypes.addressof(x)) for x in d]
        getattr(runtime, entry)(ctypes.byref(u[0]), ctypes.byref(u[1]))
    return call
times = {}
for name, dtype, call in [("f32", np.float32, f32),
                          ("f16", np.uint16, half("_mlir_ciface_ampMpiAllreduceSumF16")),
                          ("bf16", np.uint16, half("_mlir_ciface_ampMpiAllreduceSumBF16"))]:
    send, recv = np.ones(n, dtype), np.zeros(n, dtype)
    samples = []
    for i in range(23):
        start = time.perf_counter()
        call(send, recv)
        samples.append((time.perf_counter() - start) * 1e3)
    times[name] = statistics.median(samples[3:])
if rank.value == 0:
    print(json.dumps(times))
"""


def collective_milliseconds(runtime, elements):
    result = subprocess.run(["mpiexec", "-n", "2", sys.executable, "-c", COLLECTIVE_SCRIPT,
                             runtime, str(elements)], check=True, capture_output=True,
                            text=True)
    return json.loads(result.stdout)


def run_amp_run(amp_run, step, data, options, ranks, batch, steps, log):
    command = [amp_run, step, f"--amp={options}", "--data", data, "--batch-size", str(batch),
               "--steps", str(steps), "--print-every", "0", "--log", log]
    if ranks:
        command = ["mpiexec", "-n", str(ranks)] + command
    subprocess.run(command, check=True, capture_output=True, text=True)
    with open(log) as f:
        return parse_step_log(f, warmup=WARMUP_STEPS)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.environ.get("AMP_BUILD_DIR",
                                                          os.path.join(ROOT, "build")))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        amp_opt = pinned_tool(os.path.join(args.build, "bin", "amp-opt"), work)
        amp_run = pinned_tool(os.path.join(args.build, "bin", "amp-run"), work)
        step, parameters = export_step(os.path.join(work, "mlp"))
        print(machine())
        print(f"revision: {revision()}")
        print(f"step: MLP 784-1024-1024-10, {parameters} parameters, SGD with momentum, "
              f"exported by amp_mlir.torch with a dynamic batch\n")

        print("Bytes each rank hands MPI per step (the gradients in grad-comm-dtype):\n")
        print(table(["options", "sums in", "mpi.allreduce calls", "MB per step", "vs f32"],
                    bytes_rows(amp_opt, step)))

        import numpy as np
        rng = np.random.default_rng(0)
        x, y = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
        np.save(x, rng.normal(size=(4096, 784)).astype(np.float32))
        np.save(y, rng.integers(0, 10, size=4096).astype(np.int64))
        configs = [("1 process x 256, no option", 0, "", BATCH),
                   ("1 process x 256, data-parallel", 0, " data-parallel=mpi", BATCH),
                   ("2 ranks x 128, data-parallel", 2, " data-parallel=mpi", BATCH),
                   ("1 process x 128, no option", 0, "", BATCH // 2)]
        times = {}
        for _ in range(args.rounds):
            for mode, options in MODES:
                for config, ranks, extra, batch in configs:
                    log = os.path.join(work, "log.csv")
                    times.setdefault((mode, config), []).extend(
                        run_amp_run(amp_run, step, f"{x},{y}", options + extra, ranks, batch,
                                    args.steps, log))
        rows = []
        for mode, _ in MODES:
            base = statistics.median(times[(mode, configs[0][0])])
            for config, _, _, _ in configs:
                median = statistics.median(times[(mode, config)])
                rows.append([mode, config, f"{median:.2f}", f"{base / median:.2f}x"])
        print(f"\nStep time, median of rank 0's time_ms over {args.rounds} x "
              f"{args.steps - WARMUP_STEPS} steps; speed-up against 1 process x {BATCH} "
              "without the option:\n")
        print(table(["mode", "run", "ms per step", "speed-up"], rows))

        collective = collective_milliseconds(
            os.path.join(args.build, "lib", "libAmpMpiRuntime.so"), parameters)
        print(f"\nThe collective alone, 2 ranks, one bucket of {parameters} elements, median "
              "of 20 calls:\n")
        print(table(["sums in", "MB", "ms"],
                     [[t, f"{parameters * ELEMENT_BYTES[t] / 1e6:.3f}", f"{collective[t]:.2f}"]
                      for t in ("f32", "f16", "bf16")]))
        print(f"\n{machine()}")


if __name__ == "__main__":
    main()
