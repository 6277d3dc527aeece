"""The CPU runtime's library calls (OpenBLAS or oneDNN matmuls, oneDNN convolutions, the
buffer pool) against the compiled loops, on the steps torch-mlir gives real models
(test/Inputs/torch): the same losses and parameters up to summation order, in fp32, f16 and
bf16; and the thread count.

Tolerances, after three steps: losses within 1e-5 (fp32) or 3e-2 (f16, bf16) relative; each
parameter within 1e-5 relative plus 1e-3 (fp32) or 3e-2 (f16, bf16) of the largest change the
loops made to it, but in f16 and bf16 for one element in a hundred (at least one) of each
tensor, which may be up to twice that change apart. A different summation order changes gradients by rounding
errors, which Adam's division by the root of the second moment turns into visible steps for
near-zero gradients (in the GPT block's f16 step, OpenBLAS's order moves two of 256 elements
of a projection by a different part of Adam's first step), and which a low-precision rounding
(bf16 has 8 bits) may carry to the neighbouring number.
"""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.abspath(os.environ.get("AMP_BUILD_DIR", os.path.join(ROOT, "build")))
sys.path.insert(0, os.path.join(BUILD, "python_packages"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import amp_mlir  # noqa: E402
from random_batch import random_batch  # noqa: E402

# torch-mlir (the PyTorch front end's importer) carries its own LLVM: loaded after a step's
# JIT, it finds LLVM's command-line options registered already and aborts; loaded first, it
# does not. The convolution tests below trace PyTorch models.
try:
    import torch
    import torch_mlir.ir  # noqa: F401
    from amp_mlir.torch import trace_training_step
except ImportError:
    torch = trace_training_step = None

FIXTURES = os.path.join(ROOT, "test", "Inputs", "torch")
MODELS = ["mlp_dynamic_batch", "cnn_bn", "resnet_block", "gpt_block", "lstm"]
STEPS = 3


def train(text, options, rows=4, **session_options):
    session = amp_mlir.Session(text, options, **session_options)
    data = random_batch(session, rows, seed=1)
    start = session.parameters
    losses = [session.step(*data).loss for _ in range(STEPS)]
    return np.array(losses), start, session.parameters


@pytest.fixture(scope="module", params=MODELS)
def step_text(request):
    return amp_mlir.import_step(os.path.join(FIXTURES, request.param + ".mlir"))


def assert_library_matches_loops(text, options, every_parameter_moves=False, rows=4,
                                 threads=1):
    """Trains `text` (`rows` rows where the batch is dynamic) with the library calls on
    `threads` threads and with loops: the same losses and parameters within the stated
    tolerances (relative to how far each parameter moved)."""
    losses, start, library = train(text, options, rows, cpu_library=True, threads=threads)
    loop_losses, _, loops = train(text, options, rows, cpu_library=False)
    assert_same_training(options, start, losses, library, loop_losses, loops,
                         every_parameter_moves)


def assert_same_training(options, start, losses, library, loop_losses, loops,
                         every_parameter_moves=False):
    """Losses and parameters (`library`) of a run from `start` against another run's
    (`loop_losses`, `loops`), within the tolerances of a different summation order."""
    loss_tolerance, change_tolerance = (1e-5, 1e-3) if options is None else (3e-2, 3e-2)
    np.testing.assert_allclose(losses, loop_losses, rtol=loss_tolerance, atol=1e-6)
    for name, value in library.items():
        change = np.abs(loops[name] - start[name]).max()
        if every_parameter_moves:
            assert change > 0, name
        tolerance = change_tolerance * change + 1e-7
        close = np.isclose(value, loops[name], rtol=1e-5, atol=tolerance)
        # Adam moves a parameter whose gradient is near zero (about its epsilon) by anything up
        # to a full step either way, so another rounding of a low-precision gradient may move
        # it elsewhere: allowed in f16 and bf16 for one element in a hundred (at least one),
        # within two steps.
        far = np.flatnonzero(~close)
        allowed = 0 if options is None else max(1, value.size // 100)
        assert far.size <= allowed, (
            f"{name}: {far.size} of {value.size} elements differ by more than {tolerance:.3g}")
        np.testing.assert_allclose(value, loops[name], rtol=1e-5, atol=2 * change + tolerance,
                                   err_msg=name)


@pytest.mark.parametrize("options", [None, "dtype=f16", "dtype=bf16"])
def test_library_calls_match_the_loops(step_text, options):
    assert_library_matches_loops(step_text, options)


def test_one_thread_is_deterministic_and_two_agree(step_text):
    losses, _, first = train(step_text, "dtype=bf16")
    again_losses, _, again = train(step_text, "dtype=bf16")
    assert losses.tobytes() == again_losses.tobytes()
    for name, value in first.items():
        assert value.tobytes() == again[name].tobytes(), name
    two_losses, _, _ = train(step_text, "dtype=bf16", threads=2)
    np.testing.assert_allclose(two_losses, losses, rtol=3e-2)


def test_bf16_steps_for_a_cpu_without_bf16_instructions(step_text):
    """Compiled for x86-64-v3 (AVX2, no AVX512-BF16: every host of this project runs it), a
    bf16 step rounds to bf16 with integer code and the JIT moves bf16 vectors as i16 ones
    (docs/CPU.md): the same losses and parameters as compiled for the host. Bit for bit on
    hosts without AVX512-BF16; with it, within 1e-6, for the host's instruction flushes f32
    denormals to zero before rounding."""
    losses, _, host = train(step_text, "dtype=bf16")
    avx2_losses, _, avx2 = train(step_text, "dtype=bf16", cpu="x86-64-v3")
    np.testing.assert_allclose(avx2_losses, losses, rtol=1e-6, atol=0)
    for name, value in host.items():
        np.testing.assert_allclose(avx2[name], value, rtol=1e-6, atol=1e-30, err_msg=name)


def test_large_conversions_split_over_threads_match_the_loops():
    """Without native kernels for f16 (AVX512-FP16) the runtime extends the inputs to f32 and
    rounds the products to f16 itself, split over the threads for large operands: at 2
    threads with 4096 rows (products of 65536 elements, two blocks), what the loops compute."""
    text = amp_mlir.import_step(os.path.join(FIXTURES, "mlp_dynamic_batch.mlir"))
    assert_library_matches_loops(text, "dtype=f16", rows=4096, threads=2)


def test_threads_must_be_positive(step_text):
    with pytest.raises(ValueError, match="threads=0"):
        amp_mlir.Session(step_text, threads=0)



def temporaries(text, options, rows=4, **session_options):
    session = amp_mlir.Session(text, options, **session_options)
    data = random_batch(session, rows, seed=1)
    return [session.step(*data).temporary_bytes for _ in range(STEPS)]


def test_temporaries_are_counted(step_text):
    """Every step of a run on one batch shape allocates the same temporaries, counted by
    the buffer pool of the library path only."""
    for options in (None, "dtype=f16", "dtype=bf16"):
        counts = temporaries(step_text, options)
        assert counts[0] > 0 and len(set(counts)) == 1, options
    assert temporaries(step_text, None, cpu_library=False) == [None] * STEPS


@pytest.mark.parametrize("options", ["dtype=f16", "dtype=bf16"])
def test_f32_operands_multiply_the_same_numbers(step_text, options):
    """Session(f32_operands=True) stores the low-precision operands of the products that this
    host's library computes in f32 in f32, rounded to their type, where the runtime would
    extend them in each call: the library multiplies the same numbers. Bit for bit where it
    reads both alike (OpenBLAS, and oneDNN on AVX2: test/amp-run/f32-operands.test); here
    within 1e-6 relative of each tensor's largest value, which unrounded operands miss. The
    step allocates at least the bytes it did (more where the host computes in f32)."""
    losses, _, base = train(step_text, options)
    wide_losses, _, wide = train(step_text, options, f32_operands=True)
    np.testing.assert_allclose(wide_losses, losses, rtol=1e-6, atol=0)
    for name, value in base.items():
        np.testing.assert_allclose(wide[name], value, rtol=0,
                                   atol=1e-6 * np.abs(value).max(), err_msg=name)
    assert (temporaries(step_text, options, f32_operands=True)[0]
            >= temporaries(step_text, options)[0])


@pytest.mark.parametrize("model,rows", [("mlp_dynamic_batch", 32), ("resnet_block", 3)])
def test_bf16_stores_fewer_bytes_than_fp32(model, rows):
    """Where the activations outweigh the parameters, bf16 (activations stored in bf16, the
    weights' bf16 copies added) allocates fewer bytes than fp32. Not so for the LSTM fixture
    (3 sequences of 5 steps) or the MLP at 4 rows, whose weight copies weigh more, nor for
    cnn_bn (205974 bytes against 202230), whose batch-norm, ReLU and pooling outputs stay f32
    (as under autocast) so that the bf16 copies of the convolutions' inputs only add."""
    text = amp_mlir.import_step(os.path.join(FIXTURES, model + ".mlir"))
    assert temporaries(text, "dtype=bf16", rows)[0] < temporaries(text, None, rows)[0]


# -- convolutions and their gradients ------------------------------------------------------
# Two convolutions traced from PyTorch (the second one's input gradient feeds the first
# one's weight gradient) on images of odd sizes, for the geometries whose backward goes to
# oneDNN's convolution_backward_weights and convolution_backward_data: the same tolerances
# as the models above, library against loops.

CONVOLUTIONS = {  # name: (stride, padding, kernel, dilation) of the second convolution
    "stride1_pad1": (1, 1, 3, 1),
    "stride2_pad1": (2, 1, 3, 1),
    "stride2_1x1": (2, 0, 1, 1),
    "stride2_pad2_dilation2": (2, 2, 3, 2),
}


def convolution_step(stride, padding, kernel, dilation, channels=(5, 6), image=(9, 7)):
    if trace_training_step is None:
        pytest.skip("needs torch and torch-mlir")

    class TwoConvolutions(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(3, channels[0], 3, 1, 1, bias=False)
            self.b = torch.nn.Conv2d(*channels, kernel, stride, padding, dilation=dilation)

        def forward(self, x):
            return self.b(torch.relu(self.a(x)))

    def loss(model, x, target):
        return torch.nn.functional.mse_loss(model(x), target)

    torch.manual_seed(0)
    model = TwoConvolutions()
    x = torch.randn(3, 3, *image)
    with torch.no_grad():
        target = torch.randn(model(x).shape)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return amp_mlir.import_step(
        trace_training_step(model, loss, optimizer, (x, target)).module_text)


@pytest.fixture(scope="module", params=sorted(CONVOLUTIONS))
def convolution(request):
    return request.param, convolution_step(*CONVOLUTIONS[request.param])


def lowered_after(text, options, pass_name, lowering=""):
    """`text` under `options` as the CPU lowering (with amp-lower-to-llvm's options
    `lowering`) leaves it after `pass_name`."""
    return subprocess.run(
        [os.path.join(BUILD, "bin", "amp-opt"), "-",
         f"--amp-pipeline={options}" if options else "--amp-strip-markers",
         f"--amp-lower-to-llvm=library=true vectorize=true {lowering}",
         f"--mlir-print-ir-after={pass_name}", "-o", os.devnull],
        input=text, capture_output=True, text=True, check=True).stderr


def library_calls(text, options, lowering=""):
    """The runtime functions the CPU lowering calls for `text` under `options`."""
    lowered = lowered_after(text, options, "amp-linalg-to-cpu-library", lowering)
    return set(re.findall(r"call @(ampCpu\w+)", lowered))


@pytest.mark.parametrize("options", [None, "dtype=f16", "dtype=bf16"])
def test_convolution_gradients_match_the_loops(convolution, options):
    name, text = convolution
    stride = CONVOLUTIONS[name][0]
    suffix = {None: "F32", "dtype=f16": "F16", "dtype=bf16": "BF16"}[options]
    calls = library_calls(text, options)
    assert f"ampCpuConv2DBackwardWeights{suffix}" in calls, calls
    input_gradient = any(call.startswith(f"ampCpuConv2DBackwardData{suffix}")
                         for call in calls)
    assert input_gradient == (stride > 1), calls
    # A low step stores the forward image in the low type, which oneDNN writes.
    assert (f"ampCpuConv2D{suffix}To{suffix}" in calls) == (options is not None), calls
    assert_library_matches_loops(text, options, every_parameter_moves=True)


@pytest.mark.parametrize("options", [None, "dtype=f16", "dtype=bf16"])
def test_channels_last_convolutions_match_the_loops(options):
    """With 16 or 32 channels the images of the convolutions and the code between them are
    laid out channels-last (amp-cpu-channels-last), which oneDNN reads in place: a stride-2
    convolution from 16 to 32 channels after a ReLU, its weight and input gradients,
    library against loops within the tolerances above; channels-last=false keeps NCHW."""
    text = convolution_step(2, 1, 3, 1, channels=(16, 32))
    channels_last = [r"memref.alloc\(\) .*: memref<3x9x7x16x",
                     r"memref.alloc\(\) .*: memref<3x5x4x32x"]
    after = "amp-mpi-to-cpu-runtime"  # the pass after amp-cpu-channels-last
    for layout in channels_last:
        assert re.search(layout, lowered_after(text, options, after)), layout
        assert not re.search(layout, lowered_after(
            text, options, after, "channels-last=false")), layout
    assert_library_matches_loops(text, options, every_parameter_moves=True)


def channel_block():
    """The runtime's ampCpuChannelBlock: the channels of one block of the image layout
    oneDNN's convolutions choose on this host (16 with AVX-512, 8 with AVX2)."""
    import ctypes
    return ctypes.CDLL(os.path.join(BUILD, "lib", "libAmpCpuRuntime.so")).ampCpuChannelBlock()


@pytest.mark.parametrize("options", [None, "dtype=bf16"])
def test_channels_last_16_channels_match_nchw(options):
    """16-channel images channels-last (Session's channels_last, the default) give the bits
    of NCHW ones where oneDNN blocks channels by 16 (AVX-512): it runs the same kernels on the
    same bytes, and the loops moved to the channels add every sum in its order. Where it
    blocks by 8 (AVX2) it reads them with its channels-last kernels, which sum in another
    order: the tolerances of the library against the loops."""
    text = convolution_step(1, 1, 3, 1, channels=(16, 16))
    losses, start, laid_out = train(text, options, channels_last=True)
    nchw_losses, _, nchw = train(text, options, channels_last=False)
    if channel_block() == 16:
        assert losses.tobytes() == nchw_losses.tobytes()
        for name, value in laid_out.items():
            assert value.tobytes() == nchw[name].tobytes(), name
        return
    assert_same_training(options, start, losses, laid_out, nchw_losses, nchw)


ONE_STEP = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import amp_mlir
from random_batch import random_batch
session = amp_mlir.Session(open(sys.argv[2]).read(), sys.argv[3] or None)
session.step(*random_batch(session, 4, seed=1))
"""


def run_one_step(path, options, **env):
    """Runs one step of the training step in file `path` under `options`, in a fresh Python
    process with the variables `env` set (the runtime reads its own, oneDNN's and OpenMP's
    once per process). The caller's PYTHONPATH stays after this directory's:
    scripts/sanitize.sh puts the sanitizer runtimes' loader there."""
    python_path = [os.path.dirname(os.path.abspath(__file__)),
                   *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return subprocess.run(
        [sys.executable, "-c", ONE_STEP, os.path.join(BUILD, "python_packages"), str(path),
         options or ""],
        capture_output=True, text=True, check=True,
        env={**os.environ, **env, "PYTHONPATH": os.pathsep.join(python_path)})


@pytest.mark.parametrize("options", [None, "dtype=bf16"])
@pytest.mark.parametrize("isa", ["AVX2", "AVX512_CORE"])
def test_channels_last_images_of_16_channels_are_not_reordered(isa, options, tmp_path):
    """oneDNN's convolutions read and write 16-channel channels-last images in place whatever
    the ISA (capped by DNNL_MAX_CPU_ISA): with AVX-512 they are its blocked layout (nChw16c),
    and its AVX2 kernels, whose blocks are 8 channels, take them as channels-last rather than
    have the runtime reorder each one in and out (14% of the benchmark CNN's fp32 step on AMD
    Zen 3, bench/RESULTS.md). Its verbose log shows no reorder of a 3x16x9x7 image."""
    with open("/proc/cpuinfo") as cpuinfo:
        if isa == "AVX512_CORE" and "avx512f" not in cpuinfo.read():
            pytest.skip("the host has no AVX-512")
    path = tmp_path / "step.mlir"
    path.write_text(convolution_step(1, 1, 3, 1, channels=(16, 16)))
    run = run_one_step(path, options, ONEDNN_VERBOSE="1", DNNL_MAX_CPU_ISA=isa)
    executed = [line.split(",") for line in run.stdout.splitlines()
                if line.startswith("onednn_verbose,exec,cpu,")]
    assert any(fields[3] == "convolution" for fields in executed), run.stdout[-2000:]
    image_reorders = [fields for fields in executed
                      if fields[3] == "reorder" and "3x16x9x7" in fields]
    assert not image_reorders, image_reorders


# -- matmul epilogues ----------------------------------------------------------------------

def odd_mlp_step():
    """A torch MLP 13-19-17-5 at batch 7 (no size a multiple of a tile) with SGD, traced by
    amp_mlir.torch: the matmul + bias (+ ReLU) pattern of every nn.Linear."""
    if trace_training_step is None:
        pytest.skip("needs torch and torch-mlir")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(13, 19), torch.nn.ReLU(), torch.nn.Linear(19, 17),
                                torch.nn.ReLU(), torch.nn.Linear(17, 5))
    batch = (torch.randn(7, 13), torch.randint(0, 5, (7,)))

    def loss(module, x, y):
        return torch.nn.functional.cross_entropy(module(x), y)

    traced = trace_training_step(model, loss, torch.optim.SGD(model.parameters(), lr=0.1), batch)
    return amp_mlir.import_step(traced.module_text)


@pytest.mark.parametrize("options,fused", [
    (None, {"ampCpuMatmulF32Bias"}),
    ("dtype=f16", {"ampCpuMatmulF16ToF16", "ampCpuMatmulF16Bias"}),
    ("dtype=bf16", {"ampCpuMatmulBF16ToBF16", "ampCpuMatmulBF16Bias"}),
])
def test_fused_epilogues_match_the_loops(options, fused):
    """Matmuls with their epilogue in the library call (the logits' f32 bias; in f16 and bf16
    the product written in the low type where the next loop rounds it) give the loops'
    results within the tolerances above; epilogues=false fuses none."""
    text = odd_mlp_step()
    assert fused <= library_calls(text, options)
    assert not fused & library_calls(text, options, "epilogues=false")
    assert_library_matches_loops(text, options)


THREAD_COUNTS = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import amp_mlir
text = open(sys.argv[2]).read()
for threads in (1, 2, 1):
    amp_mlir.Session(text, threads=threads).step(np.ones((4, 3), np.float32),
                                                  np.ones((4, 1), np.float32))
"""


def test_each_thread_count_has_its_own_primitive():
    """oneDNN divides a primitive's work among the threads it was created with: a step at 2
    threads after one at 1 creates its matmul anew (oneDNN's verbose log says so), and a
    third step at 1 thread finds the first one (no third creation). The matmuls go to oneDNN
    on every host (AMP_CPU_GEMM)."""
    run = subprocess.run(
        [sys.executable, "-c", THREAD_COUNTS, os.path.join(BUILD, "python_packages"),
         os.path.join(ROOT, "test", "amp-run", "Inputs", "linear.mlir")],
        capture_output=True, text=True, check=True,
        env={**os.environ, "DNNL_VERBOSE": "2", "AMP_CPU_GEMM": "onednn"})
    created = [line for line in run.stdout.splitlines()
               if line.startswith("onednn_verbose,create:") and ",matmul," in line]
    assert len(created) == 2, created


def test_batches_of_small_products_go_to_onednn(tmp_path):
    """Where OpenBLAS computes the f32 matrix products (AMP_CPU_GEMM=openblas chooses it on
    any host), batched products of small matrices go to oneDNN, which splits the batch over
    its threads where OpenBLAS computes one matrix after another: the GPT block's attention
    products (3-d) appear in oneDNN's verbose log, its 2-d products do not."""
    path = tmp_path / "step.mlir"
    path.write_text(amp_mlir.import_step(os.path.join(FIXTURES, "gpt_block.mlir")))
    run = run_one_step(path, None, ONEDNN_VERBOSE="1", AMP_CPU_GEMM="openblas")
    shapes = [line.split(",")[-2] for line in run.stdout.splitlines()
              if line.startswith("onednn_verbose,exec,cpu,matmul,")]
    ranks = {len(shape.split(":")[0].split("x")) for shape in shapes}
    assert shapes and ranks >= {3} and 2 not in ranks, shapes


def has_amx():
    with open("/proc/cpuinfo") as cpuinfo:
        return "amx_bf16" in cpuinfo.read()


@pytest.mark.parametrize("options", [None, "dtype=bf16"])
@pytest.mark.parametrize("name", ["stride2_pad1", "stride2_1x1"])
def test_strided_input_gradient_runs_on_a_direct_kernel(name, options, tmp_path):
    """oneDNN's first choice for the input gradient of a strided convolution of 16 into 32
    channels (the CNN's), a brgemm kernel, is 2-4x slower than its direct jit kernel without
    AMX (bench/RESULTS.md, eighth round): the runtime takes the jit one there (oneDNN's
    verbose log names the kernel that ran)."""
    if has_amx():
        pytest.skip("with AMX the brgemm kernels are the fast ones")
    path = tmp_path / "step.mlir"
    path.write_text(convolution_step(*CONVOLUTIONS[name], channels=(16, 32), image=(16, 16)))
    run = run_one_step(path, options, ONEDNN_VERBOSE="1")
    executed = [line.split(",") for line in run.stdout.splitlines()
                if line.startswith("onednn_verbose,exec,cpu,convolution,")]
    backward_data = [fields[4] for fields in executed if fields[5] == "backward_data"]
    assert backward_data and all(kernel.startswith("jit") for kernel in backward_data), executed
