"""Tests of amp_mlir.torch.trace_training_step (python-bindings/amp_mlir/torch).

For each model of zoo.py: the traced graph, run in PyTorch, reproduces eager
PyTorch training steps (loss, parameters, buffers, optimizer state), and the
imported module parses in MLIR 22, is linalg on tensors only, and names
every argument and result. Then dynamic batches, errors and hyperparameters.
"""
import functools
import os
import re
import subprocess

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")

import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch_mlir import ir  # noqa: E402

import zoo  # noqa: E402
from conftest import load_tracer  # noqa: E402

torch.set_num_threads(1)
tracer = load_tracer()

MLIR_OPT = os.environ.get("MLIR_OPT", "/usr/lib/llvm-22/bin/mlir-opt")
STATE_ROLES = ("parameter", "buffer", "optimizer_state")
ALLOWED_DIALECTS = {"builtin", "func", "arith", "math", "tensor", "linalg", "scf"}


def trace(setup, **options):
    return tracer.trace_training_step(setup.model, setup.loss_fn, setup.optimizer,
                                      setup.batches(1)[0], **{**setup.options, **options})


@functools.cache
def traced(name, dynamic_batch=False):
    """(setup, step) traced once per session; tests that step eagerly make
    their own setup."""
    setup = zoo.SETUPS[name]()
    return setup, trace(setup, dynamic_batch=dynamic_batch)


def assert_close(actual, expected, what):
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-6, msg=lambda m: f"{what}: {m}")


def eager_step(setup, batch, scheduler=None):
    """One torch.optim step of the setup's model, as a user writes it."""
    setup.optimizer.zero_grad()
    loss = setup.loss_fn(setup.model, *batch)
    loss.backward()
    if setup.options.get("clip_grad_norm") is not None:
        torch.nn.utils.clip_grad_norm_(setup.model.parameters(), setup.options["clip_grad_norm"])
    setup.optimizer.step()
    if scheduler is not None:
        scheduler.step()
    return loss.detach()


def compare_state(step, state, setup, steps_done, what):
    model = setup.model
    for name, value in model.named_parameters():
        assert_close(state[name], value.detach(), f"{what}: parameter {name}")
    for name, value in model.named_buffers():
        # Bool buffers (masks) are carried as int32.
        assert_close(state[name], value.detach().to(state[name].dtype), f"{what}: buffer {name}")
    params = dict(model.named_parameters())
    for record in step.arguments:
        if record.role != "optimizer_state":
            continue
        match = re.fullmatch(r"optimizer\.state\.(.+)\.(\w+)", record.name)
        param_name, key = match.groups()
        torch_state = setup.optimizer.state[params[param_name]]
        if key in torch_state:
            expected = torch.as_tensor(torch_state[key], dtype=torch.float32)
        else:  # SGD's step counter, which torch.optim does not keep
            assert key == "step", record.name
            expected = torch.tensor(float(steps_done))
        assert_close(state[record.name], expected, f"{what}: {record.name}")


# -- numerics: the traced graph is PyTorch's step ---------------------------------

@pytest.mark.parametrize("name", sorted(zoo.SETUPS))
def test_three_steps_match_eager(name):
    """The traced graph reproduces one eager step and, fed its own state,
    three in a row; an LR scheduler's changes come in as hyperparameters."""
    _, step = traced(name)
    setup = zoo.SETUPS[name]()
    scheduler = setup.scheduler(setup.optimizer) if setup.scheduler else None
    state = step.initial_values()
    state.update(step.hyperparameters(setup.optimizer))
    for i, batch in enumerate(setup.batches(3)):
        loss, state, grads = step.reference_step(state, *batch)
        expected_loss = eager_step(setup, batch, scheduler)
        assert_close(loss, expected_loss, f"step {i}: loss")
        compare_state(step, state, setup, i + 1, f"step {i}")
        state.update(step.hyperparameters(setup.optimizer))
    assert set(grads) == {n for n, _ in setup.model.named_parameters()}


def test_batchnorm_running_statistics_are_updated():
    """aten.native_batch_norm does not declare its running-statistics update;
    functionalization would drop it and the step would return the old values."""
    _, step = traced("cnn")
    setup = zoo.make_cnn()
    state = step.initial_values()
    batch = setup.batches(1)[0]
    _, new_state, _ = step.reference_step(state, *batch)
    eager_step(setup, batch)
    for name in ("bn1.running_mean", "bn1.running_var", "bn2.running_mean", "bn2.running_var"):
        assert not torch.equal(new_state[name], state[name]), name
        assert_close(new_state[name], dict(setup.model.named_buffers())[name], name)
    assert int(new_state["bn1.num_batches_tracked"]) == 1


def test_tracing_changes_neither_model_nor_optimizer():
    setup = zoo.make_cnn()
    before = {k: v.clone() for k, v in setup.model.state_dict().items()}
    trace(setup)
    for key, value in setup.model.state_dict().items():
        assert torch.equal(value, before[key]), key
    assert not setup.optimizer.state


def test_learning_rate_is_an_input():
    """lr is an argument, not a constant: changing it between calls of the
    same graph changes the update as an eager lr change does."""
    _, step = traced("mlp")
    assert [r.name for r in step.arguments if r.role == "hyperparameter"] == [
        "param_groups.0.lr", "param_groups.0.weight_decay", "param_groups.0.momentum",
        "param_groups.0.dampening"]
    batch = zoo.make_mlp().batches(1)[0]
    state = step.initial_values()
    frozen = dict(state, **{"param_groups.0.lr": torch.tensor(0.0)})
    _, new_state, _ = step.reference_step(frozen, *batch)
    assert torch.equal(new_state["fc1.weight"], state["fc1.weight"])

    setup = zoo.make_mlp()
    setup.optimizer.param_groups[0]["lr"] = 0.37
    faster = dict(state, **step.hyperparameters(setup.optimizer))
    assert float(faster["param_groups.0.lr"]) == pytest.approx(0.37)
    _, new_state, _ = step.reference_step(faster, *batch)
    eager_step(setup, batch)
    assert_close(new_state["fc1.weight"], setup.model.fc1.weight.detach(), "fc1.weight")


def test_hyperparameter_that_changes_the_update_is_refused():
    setup, step = traced("gpt_block")  # traced with weight_decay=0
    optimizer = zoo.make_gpt_block().optimizer
    optimizer.param_groups[0]["weight_decay"] = 0.1
    with pytest.raises(tracer.TraceError, match=r"param_groups\[0\] changed its structure"):
        step.hyperparameters(optimizer)


# -- the imported module ------------------------------------------------------------

def parse(text):
    context = ir.Context()
    return context, ir.Module.parse(text, context)


def signature_attributes(module, function_name):
    func = next(op for op in module.body.operations
                if ir.StringAttr(op.attributes["sym_name"]).value == function_name)

    def read(key):
        return [{a.name: ir.StringAttr(a.attr).value for a in ir.DictAttr(d)
                 if isinstance(a.attr, ir.StringAttr)}
                for d in ir.ArrayAttr(func.attributes[key])]
    return func, read("arg_attrs"), read("res_attrs")


@pytest.mark.parametrize("name", sorted(zoo.SETUPS))
def test_module_parses_in_mlir_22_and_is_linalg_only(name):
    _, step = traced(name)
    run = subprocess.run([MLIR_OPT, "-o", os.devnull], input=step.module_text,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "tm_tensor." not in step.module_text and '"torch.' not in step.module_text
    _, module = parse(step.module_text)
    dialects = set()

    def visit(op):
        dialects.add(op.name.split(".")[0])
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    assert dialects <= ALLOWED_DIALECTS, dialects - ALLOWED_DIALECTS
    # f64 tensors would escape mixed precision; f64 scalar constants are fine.
    assert not re.search(r"tensor<[0-9x?]*f64>", step.module_text)


@pytest.mark.parametrize("name", sorted(zoo.SETUPS))
def test_every_argument_and_result_is_named(name):
    setup, step = traced(name)
    _, module = parse(step.module_text)
    func, args, results = signature_attributes(module, step.function_name)
    assert [(a["amp.import_role"], a["amp.name"]) for a in args] == [
        (r.role, r.name) for r in step.arguments]
    assert [(a["amp.import_role"], a["amp.name"]) for a in results] == [
        (r.role, r.name) for r in step.results]
    assert {r.role for r in step.arguments} <= set(tracer.trace.ARGUMENT_ROLES)
    assert {r.role for r in step.results} <= set(tracer.trace.RESULT_ROLES)
    assert [r.role for r in step.arguments].count("seed") == 1
    assert [r.role for r in step.results][0] == "loss"

    params = [n for n, p in setup.model.named_parameters()]
    assert [r.name for r in step.arguments if r.role == "parameter"] == params
    assert [r.name for r in step.results if r.role == "gradient"] == params
    # Every piece of state comes back exactly once, with its type.
    returned = [(r.role, r.name) for r in step.results if r.role in STATE_ROLES]
    carried = [(r.role, r.name) for r in step.arguments if r.role in STATE_ROLES]
    assert sorted(returned) == sorted(carried) and len(set(returned)) == len(returned)
    by_name = {(r.role, r.name): r for r in step.results}
    for record in step.arguments:
        if record.role in STATE_ROLES:
            result = by_name[(record.role, record.name)]
            assert (result.dtype, result.shape) == (record.dtype, record.shape), record.name
    assert {r.name for r in step.arguments if r.role == "buffer"} == {
        n for n, _ in setup.model.named_buffers()}


FIXTURES = {"mlp_dynamic_batch": ("mlp", True), "cnn_bn": ("cnn", False),
            "resnet_block": ("resnet_block", False), "gpt_block": ("gpt_block", False),
            "lstm": ("lstm", False)}


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_committed_fixture_is_current(fixture):
    """test/Inputs/torch (scripts/torch-fixtures.py) has the signature the
    tracer gives now; regenerate the fixtures when this fails."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "Inputs", "torch",
                        f"{fixture}.mlir")
    with open(path, encoding="utf-8") as file:
        text = file.read()
    _, step = traced(*FIXTURES[fixture])
    _, module = parse(text)
    _, args, results = signature_attributes(module, "train_step")
    assert [(a["amp.import_role"], a["amp.name"]) for a in args] == [
        (r.role, r.name) for r in step.arguments]
    assert [(a["amp.import_role"], a["amp.name"]) for a in results] == [
        (r.role, r.name) for r in step.results]
    fixture_ops = set()

    def visit(op):
        fixture_ops.add(op.name)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    assert {op for op, _ in op_locations(step)} <= fixture_ops


def test_state_arguments_say_how_they_start():
    """amp.init on buffers and optimizer state (a BatchNorm's running variance
    starts at one), amp.value on hyperparameters."""
    _, step = traced("cnn")
    _, module = parse(step.module_text)
    func = signature_attributes(module, step.function_name)[0]
    attributes = {ir.StringAttr(d["amp.name"]).value: d
                  for d in map(ir.DictAttr, ir.ArrayAttr(func.attributes["arg_attrs"]))}
    assert ir.StringAttr(attributes["bn1.running_var"]["amp.init"]).value == "ones"
    assert ir.StringAttr(attributes["bn1.running_mean"]["amp.init"]).value == "zeros"
    assert ir.StringAttr(
        attributes["optimizer.state.fc.weight.momentum_buffer"]["amp.init"]).value == "zeros"
    assert "amp.init" not in attributes["fc.weight"]
    assert ir.FloatAttr(attributes["param_groups.0.lr"]["amp.value"]).value == pytest.approx(0.05)


LOCATION = re.compile(r'loc\(fused\["([^"]+)", "((?:aten|prims)\.[\w.]+)", '
                      r'"(forward|backward|optimizer)"')


def op_locations(step):
    """(op name, location) of every op in the step's function body."""
    _, module = parse(step.module_text)
    found = []

    def visit(op):
        if op.name not in ("builtin.module", "func.func", "func.return"):
            found.append((op.name, str(op.location)))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


@pytest.mark.parametrize("name", sorted(zoo.SETUPS))
def test_every_op_is_located_by_module_path_and_aten_op(name):
    _, step = traced(name)
    unlocated = [(op, loc) for op, loc in op_locations(step) if not LOCATION.search(loc)]
    assert not unlocated, unlocated[:5]


def test_locations_name_the_module_of_forward_backward_and_update_ops():
    """Backward ops carry the path of the forward op they differentiate; the
    user's source line comes last."""
    _, step = traced("resnet_block")
    seen = {LOCATION.search(loc).groups() for _, loc in op_locations(step)}
    assert ("layer1.0.downsample.0", "aten.convolution.default", "forward") in seen
    assert ("layer1.0.downsample.0", "aten.convolution_backward.default", "backward") in seen
    assert {phase for path, _, phase in seen if path == "layer1.0.bn1"} == {"forward",
                                                                            "backward"}
    assert any(path == "<optimizer>/fc.weight" and phase == "optimizer"
               for path, _, phase in seen)
    assert 'zoo.py":' in step.module_text


# -- dynamic batch ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["mlp", "cnn", "resnet_block", "gpt_block", "lstm", "gru"])
def test_dynamic_batch(name):
    setup, step = traced(name, dynamic_batch=True)
    data = [r for r in step.arguments if r.role == "data"]
    assert data and all(r.shape[0] == -1 for r in data)
    assert all(-1 not in r.shape for r in step.arguments if r.role != "data")
    pretty = subprocess.run([MLIR_OPT], input=step.module_text, capture_output=True, text=True)
    assert pretty.returncode == 0, pretty.stderr[-3000:]
    signature = re.search(r"func\.func @train_step\((.*?)\) ->", pretty.stdout, re.S).group(1)
    assert "tensor<?x" in signature
    assert "cf.assert" not in pretty.stdout and step.dropped_size_checks

    # One graph, two batch sizes, each as eager.
    for size in (5, 2):
        fresh = zoo.SETUPS[name]()
        batch = tuple(t[:size] for t in fresh.batches(1)[0])
        loss, state, _ = step.reference_step(step.initial_values(), *batch)
        assert_close(loss, eager_step(fresh, batch), f"batch {size}: loss")
        compare_state(step, state, fresh, 1, f"batch {size}")


def test_dynamic_batch_refuses_a_model_that_fixes_the_batch_size():
    class FixedBatch(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x.reshape(6, 4))

    model = FixedBatch()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(tracer.TraceError, match=r"dynamic_batch.*input0.*6"):
        tracer.trace_training_step(model, lambda m, x: m(x).sum(), optimizer,
                                   [torch.randn(6, 4)], dynamic_batch=True)


OPTIMIZERS = {
    "sgd_maximize": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, maximize=True),
    "sgd_plain": lambda p: torch.optim.SGD(p, lr=0.1),
    "adam_amsgrad_decay": lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.1, amsgrad=True),
    "adam_maximize": lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.8, 0.9), maximize=True),
    "adamw_groups": lambda p: torch.optim.AdamW([{"params": p[:1], "weight_decay": 0.3},
                                                 {"params": p[1:], "lr": 0.03, "eps": 1e-6}],
                                                lr=0.01),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_options(name):
    def make():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.Sigmoid(), nn.Linear(4, 2))
        targets = torch.randn(5, 2, generator=torch.Generator().manual_seed(9))
        return zoo.Setup(model, lambda m, x, y: F.mse_loss(m(x), y),
                         OPTIMIZERS[name](list(model.parameters())),
                         lambda count: [(torch.randn(5, 3, generator=torch.Generator().manual_seed(i)),
                                         targets) for i in range(count)])
    step = trace(make())
    setup = make()
    state = step.initial_values()
    for i, batch in enumerate(setup.batches(2)):
        loss, state, _ = step.reference_step(state, *batch)
        assert_close(loss, eager_step(setup, batch), f"step {i}: loss")
        compare_state(step, state, setup, i + 1, f"step {i}")


# -- decompositions: each one computes what the aten op computes --------------------

aten = torch.ops.aten


def decomposed(op, *args, **kwargs):
    return tracer.decompositions.table()[op](*args, **kwargs)


def test_gather_and_scatter_decompositions():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 5, 4, generator=g)
    for dim, index_shape in ((1, (3, 2, 4)), (1, (2, 3, 4)), (-1, (3, 5, 6)), (0, (4, 5, 4))):
        size = x.shape[dim]
        index = torch.randint(0, size, index_shape, generator=g)
        torch.testing.assert_close(decomposed(aten.gather.default, x, dim, index),
                                   aten.gather.default(x, dim, index))
    # Position rows selected by an expanded index (what embedding layers do).
    positions = torch.arange(4).expand(3, 4).unsqueeze(-1).expand(3, 4, 5)
    table_rows = torch.randn(3, 6, 5, generator=g)
    torch.testing.assert_close(decomposed(aten.gather.default, table_rows, 1, positions),
                               torch.gather(table_rows, 1, positions))
    # One target per row (cross-entropy's label gradient), and a smaller index.
    target = torch.randint(0, 5, (3, 1, 4), generator=g)
    src = torch.randn(3, 1, 4, generator=g)
    for op, args in ((aten.scatter.value, (-1.0,)), (aten.scatter.src, (src,)),
                     (aten.scatter_add.default, (src,))):
        torch.testing.assert_close(decomposed(op, x, 1, target, *args), op(x, 1, target, *args))
    small = torch.randint(0, 5, (2, 1, 3), generator=g)
    torch.testing.assert_close(decomposed(aten.scatter_add.default, x, 1, small, src),
                               aten.scatter_add.default(x, 1, small, src))


def test_embedding_decompositions():
    g = torch.Generator().manual_seed(0)
    weight = torch.randn(7, 3, generator=g)
    indices = torch.tensor([[0, 2, 2], [6, 1, 2]])
    torch.testing.assert_close(decomposed(aten.embedding.default, weight, indices),
                               aten.embedding.default(weight, indices))
    grad = torch.randn(2, 3, 3, generator=g)
    for padding_idx, by_frequency in ((-1, False), (2, False), (-1, True)):
        torch.testing.assert_close(
            decomposed(aten.embedding_dense_backward.default, grad, indices, 7, padding_idx,
                       by_frequency),
            aten.embedding_dense_backward.default(grad, indices, 7, padding_idx, by_frequency))


@pytest.mark.parametrize("indices", [[None, [1, 1, 4, 0]], [[0, 2, 2, -1], [1, 1, 4, 0]],
                                     [[0, 2, 2, -1]], [None, None, [[0, 2], [1, 1]]]])
def test_advanced_indexing_decompositions(indices):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 5, 3, generator=g)
    indices = [None if i is None else torch.tensor(i) for i in indices]
    picked = aten.index.Tensor(x, indices)
    torch.testing.assert_close(decomposed(aten.index.Tensor, x, indices), picked)
    values = torch.randn(picked.shape, generator=g)
    torch.testing.assert_close(decomposed(aten.index_put.default, x, indices, values, True),
                               aten.index_put.default(x, indices, values, True))


def test_step_with_advanced_indexing():
    """A loss that picks log-probabilities by x[rows, labels]: its gradient is
    an index_put, which torch-mlir lowers to tm_tensor.scatter."""
    def make():
        torch.manual_seed(0)
        model = nn.Linear(6, 4)
        return model, torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)

    def loss_fn(m, x, y):
        return -m(x).log_softmax(-1)[torch.arange(x.shape[0]), y].mean()

    batch = (torch.randn(5, 6), torch.tensor([0, 3, 3, 1, 2]))
    model, optimizer = make()
    step = tracer.trace_training_step(model, loss_fn, optimizer, batch)
    assert "tm_tensor" not in step.module_text
    loss, state, _ = step.reference_step(step.initial_values(), *batch)
    model, optimizer = make()
    setup = zoo.Setup(model, loss_fn, optimizer, None)
    assert_close(loss, eager_step(setup, batch), "loss")
    compare_state(step, state, setup, 1, "step")


POOLS = [  # kernel, stride, padding, dilation, ceil_mode
    ((3, 3), (2, 2), (1, 1), (1, 1), False),  # overlapping windows, as ResNet's stem
    ((2, 2), (2, 2), (0, 0), (1, 1), False),
    ((3, 2), (1, 2), (1, 0), (1, 1), True),
    ((2, 2), (2, 1), (0, 1), (2, 1), False),
    ((3, 3), (2, 2), (0, 0), (1, 1), True),
]


@pytest.mark.parametrize("kernel, stride, padding, dilation, ceil_mode", POOLS)
def test_max_pool_backward_decomposition(kernel, stride, padding, dilation, ceil_mode):
    x = torch.randn(2, 3, 7, 8, generator=torch.Generator().manual_seed(0))
    out, indices = aten.max_pool2d_with_indices.default(x, kernel, stride, padding, dilation,
                                                       ceil_mode)
    grad = torch.randn(out.shape, generator=torch.Generator().manual_seed(1))
    args = (grad, x, kernel, stride, padding, dilation, ceil_mode, indices)
    torch.testing.assert_close(
        decomposed(aten.max_pool2d_with_indices_backward.default, *args),
        aten.max_pool2d_with_indices_backward.default(*args))


@pytest.mark.parametrize("kernel, stride, padding, _, ceil_mode", POOLS)
@pytest.mark.parametrize("count_include_pad, divisor", [(True, None), (False, None), (True, 5)])
def test_avg_pool_backward_decomposition(kernel, stride, padding, _, ceil_mode,
                                         count_include_pad, divisor):
    if padding[0] * 2 > kernel[0] or padding[1] * 2 > kernel[1]:
        pytest.skip("avg_pool2d wants padding at most half the kernel")
    x = torch.randn(2, 3, 7, 8, generator=torch.Generator().manual_seed(0))
    out = aten.avg_pool2d.default(x, kernel, stride, padding, ceil_mode, count_include_pad,
                                  divisor)
    grad = torch.randn(out.shape, generator=torch.Generator().manual_seed(1))
    args = (grad, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor)
    torch.testing.assert_close(decomposed(aten.avg_pool2d_backward.default, *args),
                               aten.avg_pool2d_backward.default(*args))


@pytest.mark.parametrize("stride, padding, dilation, groups", [((1, 1), (1, 1), (1, 1), 1),
                                                               ((2, 2), (1, 1), (1, 1), 1),
                                                               ((2, 1), (0, 2), (2, 1), 1),
                                                               ((2, 2), (1, 1), (1, 1), 2),
                                                               ((1, 1), (1, 1), (1, 1), 6)])
def test_convolution_backward_decomposition(stride, padding, dilation, groups):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 6, 9, 8, generator=g)
    weight = torch.randn(6, 6 // groups, 3, 2, generator=g)
    out = aten.convolution.default(x, weight, None, stride, padding, dilation, False, [0, 0],
                                   groups)
    grad = torch.randn(out.shape, generator=g)
    args = (grad, x, weight, [6], stride, padding, dilation, False, [0, 0], groups,
            [True, True, True])
    for actual, expected in zip(decomposed(aten.convolution_backward.default, *args),
                                aten.convolution_backward.default(*args)):
        torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5)


def test_var_mean_decomposition_stays_in_f32():
    x = torch.randn(2, 6, 16, generator=torch.Generator().manual_seed(0))
    for dims, correction in (([-1], 0), ([0, 2], 1), (None, 1)):
        var, mean = decomposed(aten.var_mean.correction, x, dims, correction=correction,
                               keepdim=True)
        expected_var, expected_mean = aten.var_mean.correction(x, dims, correction=correction,
                                                               keepdim=True)
        assert var.dtype == mean.dtype == torch.float32
        torch.testing.assert_close(var, expected_var)
        torch.testing.assert_close(mean, expected_mean)


# -- errors ---------------------------------------------------------------------------------

class Spectral(nn.Module):
    def forward(self, x):
        return torch.fft.rfft(x).abs()


class CumulativeSum(nn.Module):
    def forward(self, x):
        return x.cumsum(1)


@pytest.mark.parametrize("layer, aten_op", [(Spectral, "aten._fft_r2c"),
                                            (CumulativeSum, "aten.cumsum")])
def test_unlowerable_op_is_named_with_its_module_path(layer, aten_op):
    model = nn.Sequential(nn.Linear(8, 8), nn.Sequential(nn.ReLU(), layer()))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(tracer.TraceError) as error:
        tracer.trace_training_step(model, lambda m, x: m(x).sum(), optimizer,
                                   [torch.randn(4, 8)])
    message = str(error.value)
    assert aten_op in message and "module '1.1'" in message, message


def test_unsupported_optimizer_is_refused():
    model = nn.Linear(3, 2)
    optimizer = torch.optim.RMSprop(model.parameters())
    with pytest.raises(tracer.TraceError, match="RMSprop is not supported"):
        tracer.trace_training_step(model, lambda m, x: m(x).sum(), optimizer, [torch.randn(2, 3)])


def test_loss_must_be_a_scalar():
    model = nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(tracer.TraceError, match="0-d float32"):
        tracer.trace_training_step(model, lambda m, x: m(x), optimizer, [torch.randn(2, 3)])


# -- the eval forward, masks, pins and dropout ---------------------------------------------

def test_eval_forward_is_traced_into_the_same_module():
    """@forward takes the parameters and buffers in the step's order, then the
    model's inputs (found by model_inputs without running the forward: the
    BatchNorm statistics stay), and computes model.eval()'s outputs."""
    setup = zoo.make_cnn()
    batch = setup.batches(1)[0]
    before = {k: v.clone() for k, v in setup.model.state_dict().items()}
    inputs = tracer.model_inputs(setup.model, setup.loss_fn, batch)
    assert len(inputs) == 1 and torch.equal(inputs[0], batch[0])
    step = tracer.trace_training_step(setup.model, setup.loss_fn, setup.optimizer, batch,
                                      forward_inputs=inputs)
    for key, value in setup.model.state_dict().items():
        assert torch.equal(value, before[key]), key
    assert setup.model.training and all(m.training for m in setup.model.modules())
    forward = step.forward
    state = [(r.role, r.name) for r in step.arguments if r.role in ("parameter", "buffer")]
    assert [(r.role, r.name) for r in forward.arguments if r.role != "data"] == state
    _, module = parse(step.module_text)
    assert [ir.StringAttr(op.attributes["sym_name"]).value
            for op in module.body.operations] == ["train_step", "forward"]
    values = step.initial_values()
    arguments = [values[name] for _, name in state] + inputs
    with torch.no_grad():
        (traced_output,) = forward.graph_module(*arguments)
        setup.model.eval()
        assert_close(traced_output, setup.model(*inputs), "eval forward")


def test_bool_masks_are_carried_as_int32_and_stored_as_bytes():
    """No i1 tensor is left in memory (the CPU lowering's vector code packs
    them into bits); the causal mask buffer is an int32 argument."""
    _, step = traced("gpt_mha")
    mask = next(r for r in step.arguments if r.name == "causal_mask")
    assert (mask.role, mask.dtype) == ("buffer", "i32")
    assert not re.search(r"tensor<[0-9x?]*xi1>", step.module_text)
    assert re.search(r"tensor<[0-9x?]*xi8>", step.module_text)


def test_lookups_and_pow_are_pinned_to_f32():
    _, step = traced("gpt_block")
    pinned = [loc for op, loc in op_locations(step) if op == "linalg.matmul"
              and '"aten.embedding' in loc]
    assert pinned
    assert step.module_text.count('amp.precision = "f32"') >= len(pinned)


@pytest.mark.parametrize("make", [
    lambda: nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.2)),
    lambda: nn.Sequential(nn.Linear(4, 4), nn.Dropout2d(0.5)),
    lambda: nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, batch_first=True),
])
def test_dropout_in_training_mode_is_refused_by_module(make):
    model = make()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(2, 3, 4)
    with pytest.raises(tracer.TraceError, match=r"module '[\w.]+': \w+\((dropout_)?p=0\.\d\) in training mode"):
        tracer.trace_training_step(model, lambda m, x: m(x).sum(), optimizer, [x])


def test_attention_without_dropout_traces_as_its_math():
    """nn.MultiheadAttention's CPU kernel (flash attention) has a backward
    torch-mlir cannot lower; its math does, and matches eager."""
    def make():
        torch.manual_seed(0)
        model = nn.MultiheadAttention(8, 2, batch_first=True)
        return model, torch.optim.SGD(model.parameters(), lr=0.1)

    def loss_fn(m, x):
        return m(x, x, x, need_weights=False, is_causal=False)[0].square().mean()

    x = torch.randn(2, 5, 8, generator=torch.Generator().manual_seed(1))
    model, optimizer = make()
    step = tracer.trace_training_step(model, loss_fn, optimizer, [x])
    loss, state, _ = step.reference_step(step.initial_values(), x)
    model, optimizer = make()
    setup = zoo.Setup(model, loss_fn, optimizer, None)
    assert_close(loss, eager_step(setup, [x]), "loss")
    compare_state(step, state, setup, 1, "step")
