"""The benchmark scripts' parsing and arithmetic (bench/*.py), on recorded tool output and
on a small generated step; the benchmarks themselves are not run here (bench/README.md)."""
import argparse
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import bench_data_parallel  # noqa: E402
import bench_passes  # noqa: E402
import bench_steps  # noqa: E402

BUILD = os.environ.get("AMP_BUILD_DIR", os.path.join(ROOT, "build"))

MLIR_TIMING = """\
===-------------------------------------------------------------------------===
                         ... Execution time report ...
===-------------------------------------------------------------------------===
  Total Execution Time: 1.7790 seconds

  ----Wall Time----  ----Name----
    1.7790 (100.0%)  root
    0.4494 ( 25.3%)  Parser
    0.4445 ( 25.0%)  Canonicalizer
    0.0620 (  3.5%)  AmpInsertCasts
    0.0000 (  0.0%)  (A) DominanceInfo
    0.0464 (  2.6%)  Rest
    1.7790 (100.0%)  Total
"""


def test_parse_mlir_timing():
    times = bench_passes.parse_mlir_timing(MLIR_TIMING)
    assert times["Parser"] == 0.4494
    assert times["AmpInsertCasts"] == 0.062
    assert times["(A) DominanceInfo"] == 0.0
    assert times["Total"] == 1.779
    with pytest.raises(ValueError):
        bench_passes.parse_mlir_timing("no report")


def test_parse_callgrind():
    stderr = "==893== Callgrind, a call-graph generating cache profiler\n" \
             "==893== Events    : Ir\n==893== Collected : 1509851290\n==893==\n"
    assert bench_passes.parse_callgrind(stderr) == 1509851290
    with pytest.raises(ValueError):
        bench_passes.parse_callgrind("==1== Events : Ir\n")


def test_fit_exponent():
    ops = [1e4, 3e4, 1e5]
    assert bench_passes.fit_exponent(ops, [2e-6 * n for n in ops]) == pytest.approx(1.0)
    assert bench_passes.fit_exponent(ops, [1e-9 * n * n for n in ops]) == pytest.approx(2.0)
    # A negative difference (noise) is left out; one point fits nothing.
    assert bench_passes.fit_exponent(ops[:2], [1.0, -1.0]) is None


def fake_step(model, ops, floor, ours, casts_bytes, naive_bytes):
    time = {"floor": floor}
    time.update({n: ours for n in bench_passes.OURS})
    return {"model": model, "setting": f"--x {ops}", "ops": ops, "size_mb": ops / 1e4,
            "cpu": time, "wall": time,
            "casts": {"casts": 1, "naive_casts": 2, "bytes": casts_bytes,
                      "naive_bytes": naive_bytes, "bytes_ratio": casts_bytes / naive_bytes,
                      "dynamic_casts": 0}}


def test_report_verdicts():
    args = argparse.Namespace(build="build", runs=1, warmup=0)
    # Linear, 0.4x over the floor, a third of the naive bytes: every target met.
    good = [fake_step(m, n, 1e-5 * n, 1.4e-5 * n, 1, 3)
            for m in ("mlp", "transformer") for n in (10000, 30000, 100000)]
    for s in good:
        s["instructions"] = {n: 5e5 * s["ops"] for n in bench_passes.OURS}
        s["instructions"]["floor"] = 4e5 * s["ops"]
    text = bench_passes.report(good, args, "machine")
    assert "NOT" not in text
    assert "| mlp         | --x 10000  | 10000  | 4000         | +0.25x | +0.25x |" in text
    assert "mlp passes: added instructions ~ ops^1.00 (10000 to 100000 ops): linear" in text
    assert ("passes overhead <= 0.5x the floor (CPU time, steps >= 10000 ops, worst +0.40x): "
            "met") in text
    assert "mlp passes: added CPU time ~ ops^1.00: linear" in text
    assert "bytes converted <= 0.5 x naive (worst 0.33): met" in text
    # Quadratic passes, 0.6 of the naive bytes: the verdicts say so.
    bad = [fake_step(m, n, 1e-5 * n, 1e-5 * n + 1e-10 * n * n, 3, 5)
           for m in ("mlp", "transformer") for n in (10000, 30000, 100000)]
    text = bench_passes.report(bad, args, "machine")
    assert "mlp pipeline: added CPU time ~ ops^2.00: NOT linear" in text
    assert "bytes converted <= 0.5 x naive (worst 0.60): NOT met" in text
    assert "worst +1.00x): NOT met" in text


def test_generated_step_and_cast_report(tmp_path):
    """gen_step.py's op count line and amp-insert-casts' report fields are as parsed."""
    path = str(tmp_path / "step.mlir")
    gen = subprocess.run([sys.executable, bench_passes.GEN_STEP, "mlp", "--layers", "2",
                          "--width", "16", "-o", path], capture_output=True, text=True)
    assert gen.returncode == 0, gen.stderr
    assert bench_passes.parse_gen_ops(gen.stderr) > 100
    amp_opt = os.path.join(BUILD, "bin", "amp-opt")
    report = tmp_path / "report.json"
    opt = subprocess.run(bench_passes.amp_opt_cmd(
        amp_opt, path, [f"--amp-insert-casts=report={report}"]), capture_output=True, text=True)
    assert opt.returncode == 0, opt.stderr
    summary = bench_passes.cast_summary(json.loads(report.read_text()))
    assert 0 < summary["casts"] < summary["naive_casts"]
    assert 0 < summary["bytes_ratio"] < 1


def test_parse_amp_run_output():
    line = ("amp-run: @train_step as written (no AMP pipeline), 4 parameter(s), 0 optimizer "
            "state, 2 data argument(s); compiled in 0.39 s\n"
            "final: step 50  loss 1.17  time 0.05 s\n")
    assert bench_steps.parse_compile_seconds(line) == 0.39
    with pytest.raises(ValueError):
        bench_steps.parse_compile_seconds("final: step 50")
    log = ["step,loss,scale,found_inf,time_ms\n"] + [
        f"{i},2.0,65536,{int(i == 7)},{float(i)}\n" for i in range(1, 9)]
    times, skipped = bench_steps.parse_step_log(log, warmup=5)
    assert times == [6.0, 7.0, 8.0]
    assert skipped == 1
    with pytest.raises(ValueError):
        bench_steps.parse_step_log(log[:3], warmup=5)


def test_parse_allreduces_of_a_data_parallel_step():
    # The dynamic MLP's 212 gradient elements, in one bucket or, of 600 bytes, two.
    step = os.path.join(ROOT, "test", "Inputs", "mlp-dynamic-batch.mlir")
    def calls(options):
        ir = subprocess.run([os.path.join(BUILD, "bin", "amp-opt"), step,
                             f"--amp-pipeline={options}"], check=True, capture_output=True,
                            text=True).stdout
        return bench_data_parallel.parse_allreduces(ir)
    assert calls("dtype=f16 data-parallel=mpi") == [(212, "f16")]
    assert calls("level=O0 data-parallel=mpi bucket-size=600") == [(144, "f32"), (68, "f32")]
    assert calls("dtype=f16") == []



def test_bench_vs_torch_selects_variants_and_reports_round_ranges():
    """bench_vs_torch.py: --variants keeps the table's order and the reference, rejects
    unknown labels, and the flags' defaults; each target ratio comes with its rounds' range."""
    bench_vs_torch = pytest.importorskip("bench_vs_torch")
    select = bench_vs_torch.select_variants
    assert select("ours bf16, ours fp32", True, False) == [
        "torch eager fp32", "ours fp32", "ours bf16"]
    assert select(None, False, True) == [
        "torch eager fp32", "torch eager bf16", "ours fp32", "ours f16", "ours bf16",
        "ours bf16 f32-ops"]
    assert "torch.compile bf16" in select(None, True, False)
    with pytest.raises(ValueError, match="'ours bf8'"):
        select("ours bf8", True, False)
    times = {"torch eager fp32": [10.0, 12.0, 11.0], "ours fp32": [9.0, 9.0, 13.2],
             "ours bf16": [9.9, 8.1, 13.2]}
    ratios = {(a, b): rest for a, b, *rest in bench_vs_torch.target_ratios(times)}
    assert set(ratios) == {("ours fp32", "torch eager fp32"), ("ours bf16", "ours fp32")}
    median, low, high = ratios[("ours bf16", "ours fp32")]
    assert median == pytest.approx(9.9 / 9.0)
    assert (low, high) == (pytest.approx(0.9), pytest.approx(1.1))
    median, low, high = ratios[("ours fp32", "torch eager fp32")]
    assert median == pytest.approx(9.0 / 11.0)
    assert (low, high) == (pytest.approx(0.75), pytest.approx(1.2))


def test_bench_vs_torch_names_the_cpu_generation():
    """bench_vs_torch.py's CPU line gives the family and model /proc/cpuinfo has: virtual
    machines often name only the brand, and the rounds' hosts differ by generation."""
    bench_vs_torch = pytest.importorskip("bench_vs_torch")
    try:
        with open("/proc/cpuinfo") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
    except OSError:
        pytest.skip("no /proc/cpuinfo")
    fields = {key.strip(): value.strip() for key, value in fields.items()}
    if "cpu family" not in fields or "model" not in fields:
        pytest.skip("/proc/cpuinfo names no family and model")
    model, isa = bench_vs_torch.cpu_description()
    assert f"(family {fields['cpu family']}, model {fields['model']})" in model
    assert isa == sorted(isa)
