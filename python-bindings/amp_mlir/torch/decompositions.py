"""What tracing a training step replaces, so that torch-mlir lowers the
step to linalg on tensors without `tm_tensor`, `cf.assert` or f64 tensors.

- `table()`: make_fx's decomposition table, torch-mlir's own plus ours.
- `TORCH_FUNCTION_OVERRIDES`: functions replaced above autograd and
  functionalization (the tracer's TorchFunctionMode calls them instead).
- `check_module`: layers the traced step cannot express, refused by name.
"""
import functools
import math

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

__all__ = ["table", "TORCH_FUNCTION_OVERRIDES", "check_module", "random_call", "PINNED_F32",
           "UnsupportedLayerError"]

aten = torch.ops.aten


class UnsupportedLayerError(ValueError):
    """A layer configuration the traced step cannot express."""


def check_module(module: torch.nn.Module, path: str) -> None:
    if (isinstance(module, torch.nn.modules.batchnorm._BatchNorm) and module.training
            and module.track_running_stats and module.momentum is None):
        raise UnsupportedLayerError(
            f"module '{path}' ({type(module).__name__}): momentum=None (a cumulative average "
            "over num_batches_tracked) is not supported; give it a momentum")


# -- above autograd -------------------------------------------------------------

def _batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
                momentum=0.1, eps=1e-5):
    """F.batch_norm, written out. In training mode: aten.native_batch_norm's
    schema does not say that it updates the running statistics, so
    functionalization would drop that update silently; here it is an
    in-place copy that functionalization sees. In eval mode: torch-mlir
    fails on native_batch_norm's empty saved statistics."""
    dims = [0] + list(range(2, input.dim()))
    channel_shape = [1, -1] + [1] * (input.dim() - 2)
    tracked = running_mean is not None and running_var is not None
    if training or not tracked:
        # Mean and variance as means, not var_mean: var_mean's backward divides
        # by a float of the element count, which a dynamic batch makes a
        # symbolic float that torch-mlir's importer cannot take.
        mean = input.mean(dims, keepdim=True)
        centered = input - mean
        squares = centered * centered
        output = centered * torch.rsqrt(squares.mean(dims, keepdim=True) + eps)
    else:
        output = ((input - running_mean.reshape(channel_shape))
                  * torch.rsqrt(running_var.reshape(channel_shape) + eps))
    if weight is not None:
        output = output * weight.reshape(channel_shape)
    if bias is not None:
        output = output + bias.reshape(channel_shape)
    if training and tracked:
        with torch.no_grad():
            count = input.shape[0]
            for size in input.shape[2:]:
                count = count * size
            # The unbiased variance as eager's kernel: sum / (n - 1).
            unbiased = squares.sum(dims) / (count - 1)
            running_mean.copy_(momentum * mean.reshape(-1) + (1 - momentum) * running_mean)
            running_var.copy_(momentum * unbiased + (1 - momentum) * running_var)
    return output


def _recurrent(input_form, data_form):
    """A recurrent layer (torch._VF.lstm, gru, ...) as torch's Python
    recurrence. The C++ one reads sizes as plain integers, which fixes a
    dynamic batch size while tracing; it also dispatches to
    aten.mkldnn_rnn_layer, which torch-mlir cannot lower."""
    def run(*args, **kwargs):
        # (input, hx, params, ...) or, for packed sequences, (data, batch_sizes, hx, params, ...)
        packed = not isinstance(args[2], (list, tuple))
        with _Overridden():  # its cells call F.linear on 3-d states
            return (data_form if packed else input_form)(*args, **kwargs)
    return run


def _recurrent_overrides():
    from torch._decomp import decompositions as torch_decompositions

    return {torch._VF.lstm: _recurrent(torch_decompositions.lstm_impl,
                                       torch_decompositions.lstm_data_impl),
            torch._VF.gru: _recurrent(torch_decompositions.gru_impl,
                                      torch_decompositions.gru_impl_data),
            torch._VF.rnn_tanh: _recurrent(torch_decompositions.rnn_tanh_input,
                                           torch_decompositions.rnn_tanh_data),
            torch._VF.rnn_relu: _recurrent(torch_decompositions.rnn_relu_input,
                                           torch_decompositions.rnn_relu_data)}


def _linear(input, weight, bias=None):
    """F.linear with the leading dimensions folded in Python, as eager folds
    them: the C++ composite reads them as plain integers, which fixes a
    dynamic batch size while tracing."""
    if input.dim() <= 2:
        return F.linear(input, weight, bias)
    folded = F.linear(input.reshape(-1, input.shape[-1]), weight, bias)
    return folded.reshape(*input.shape[:-1], weight.shape[0])


TORCH_FUNCTION_OVERRIDES = {F.batch_norm: _batch_norm, F.linear: _linear,
                            **_recurrent_overrides()}

# Functions that draw a dropout mask: (position, name and default of the
# probability, of the training flag; a flag of None: the call always trains).
_DROPOUTS = {
    **{f: (1, "p", 0.5, 2, "training", True) for f in (F.dropout, F.dropout1d, F.dropout2d,
                                                  F.dropout3d)},
    **{f: (1, "p", 0.5, 2, "training", False) for f in (F.alpha_dropout, F.feature_alpha_dropout)},
    **{f: (1, "p", 0.0, 2, "train", True) for f in (torch.dropout, torch.alpha_dropout,
                                               torch.feature_dropout,
                                               torch.feature_alpha_dropout)},
    F.scaled_dot_product_attention: (4, "dropout_p", 0.0, None, None, True),
    F.multi_head_attention_forward: (10, "dropout_p", 0.0, 13, "training", True),
}


def random_call(func, args, kwargs):
    """A description of `func(*args, **kwargs)` if it draws a dropout mask
    (p > 0 in training mode), else None."""
    spec = _DROPOUTS.get(func)
    if spec is None:
        return None
    p_index, p_name, p_default, train_index, train_name, train_default = spec

    def argument(index, name, default):
        if index is not None and index < len(args):
            return args[index]
        return kwargs.get(name, default)

    p = float(argument(p_index, p_name, p_default))
    if p == 0.0 or not argument(train_index, train_name, train_default):
        return None
    return f"{getattr(func, '__name__', str(func))}({p_name}={p:g})"


class _Overridden(TorchFunctionMode):
    """TORCH_FUNCTION_OVERRIDES inside an override (the tracer's own mode is
    off while an override runs)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return TORCH_FUNCTION_OVERRIDES.get(func, func)(*args, **(kwargs or {}))


# -- below autograd: the decomposition table --------------------------------------------

@functools.cache
def table():
    """torch-mlir's decomposition table, with ours taking precedence."""
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    decompositions = dict(get_decomposition_table())
    for op in _KEPT:
        decompositions.pop(op, None)
    decompositions.update(_OURS)
    return decompositions


# Left to torch-mlir: their decompositions allocate with explicit strides,
# which with a dynamic batch are sym_max expressions the importer rejects.
_KEPT = [aten.zeros.default, aten.ones.default, aten.full.default]


# -- index lookups as one-hot compares ---------------------------------------------
# torch-mlir lowers gather, scatter and embedding lookups to tm_tensor ops
# (which MLIR 22 does not know) or to tensor.extract with cf.assert bounds
# checks. A compare with an iota and a masked sum (or a matmul with the
# one-hot matrix) does the same in plain linalg, exactly: each output sums
# one selected value with zeros.

def _one_hot(index, classes):
    """index[..., m] -> bool[..., m, classes]."""
    return index.unsqueeze(-1) == torch.arange(classes, device=index.device)


def _on_region(self, sizes, fn):
    """fn applied to self's leading `sizes` region; the rest stays (scatter's
    index may be smaller than self in every dimension)."""
    for d, size in enumerate(sizes):
        if size < self.shape[d]:
            head = _on_region(self.narrow(d, 0, size), sizes, fn)
            return torch.cat([head, self.narrow(d, size, self.shape[d] - size)], d)
    return fn(self)


def _gather(self, dim, index, sparse_grad=False):
    if self.dim() == 0:
        return self.clone()
    dim = dim % self.dim()
    source = self
    for d in range(self.dim()):
        if d != dim and index.shape[d] < self.shape[d]:
            source = source.narrow(d, 0, index.shape[d])
    hits = _one_hot(index.movedim(dim, -1), self.shape[dim])  # [..., m, n]
    picked = torch.where(hits, source.movedim(dim, -1).unsqueeze(-2), 0).sum(-1)
    return picked.to(self.dtype).movedim(-1, dim)


def _scatter(self, dim, index, src, combine):
    """combine(self_region, hit_any, contributions) over the region of self
    that index covers; `contributions` sums src at each target position."""
    if self.dim() == 0:  # index is 0 too
        return combine(self, index == 0, torch.as_tensor(src, dtype=self.dtype))
    dim = dim % self.dim()
    sizes = [self.shape[d] if d == dim else index.shape[d] for d in range(self.dim())]

    def update(region):
        hits = _one_hot(index.movedim(dim, -1), self.shape[dim])  # [..., m, n]
        hit_any = hits.any(-2).movedim(-1, dim)
        if isinstance(src, torch.Tensor):
            values = src
            for d in range(src.dim()):
                values = values.narrow(d, 0, index.shape[d])
            values = values.movedim(dim, -1).unsqueeze(-1)  # [..., m, 1]
        else:
            values = torch.full((), src, dtype=self.dtype, device=self.device)
        summed = torch.where(hits, values, 0).sum(-2).to(self.dtype).movedim(-1, dim)
        return combine(region, hit_any, summed)

    return _on_region(self, sizes, update)


def _scatter_value(self, dim, index, value):
    return _scatter(self, dim, index, value, lambda r, hit, s: torch.where(hit, s, r))


def _scatter_src(self, dim, index, src):
    return _scatter(self, dim, index, src, lambda r, hit, s: torch.where(hit, s, r))


def _scatter_add(self, dim, index, src):
    return _scatter(self, dim, index, src, lambda r, hit, s: r + s)


def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    hits = _one_hot(indices.reshape(-1), weight.shape[0]).to(weight.dtype)
    return (hits @ weight).reshape(*indices.shape, weight.shape[1])


def _embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
                              scale_grad_by_freq):
    flat = indices.reshape(-1)
    hits = _one_hot(flat, num_weights)
    if padding_idx >= 0:
        hits = hits & (flat != padding_idx).unsqueeze(-1)
    hits = hits.to(grad_output.dtype)
    grad = grad_output.reshape(flat.shape[0], -1)
    grad_weight = hits.t() @ grad
    if scale_grad_by_freq:
        counts = hits.sum(0).unsqueeze(-1)
        grad_weight = grad_weight / torch.where(counts > 0, counts, 1)
    return grad_weight


def _indexed_dims(self, indices):
    """For x[..., i, j, ...] with index tensors on consecutive dimensions:
    (first indexed dim, their sizes, flat index over them); None for what
    the one-hot form does not cover (masks, separated index tensors)."""
    dims = [d for d, index in enumerate(indices) if index is not None]
    if (not dims or dims != list(range(dims[0], dims[-1] + 1))
            or any(indices[d].dtype in (torch.bool, torch.uint8) for d in dims)):
        return None
    sizes = [self.shape[d] for d in dims]
    flat = None
    for d, size in zip(dims, sizes):
        index = torch.remainder(indices[d], size)  # negative indices count from the end
        flat = index if flat is None else flat * size + index
    return dims[0], sizes, flat


def _merge(self, first, sizes):
    """self with the indexed dimensions merged into one."""
    count = 1
    for size in sizes:
        count = count * size
    shape = list(self.shape)
    return self.reshape(shape[:first] + [count] + shape[first + len(sizes):]), count


def _index(self, indices):
    """x[..., i, j, ...] as a matmul with the one-hot matrix of the flat index."""
    found = _indexed_dims(self, indices)
    if found is None:
        return NotImplemented
    first, sizes, flat = found
    merged, count = _merge(self, first, sizes)
    hits = _one_hot(flat.reshape(-1), count).to(self.dtype)  # [m, count]
    picked = torch.matmul(merged.movedim(first, -1).unsqueeze(-2), hits.t()).squeeze(-2)
    picked = picked.movedim(-1, first)  # [..., m, ...]
    shape = list(self.shape)
    return picked.reshape(shape[:first] + list(flat.shape) + shape[first + len(sizes):])


def _index_put(self, indices, values, accumulate=False):
    """The gradient of x[..., i, j, ...] (accumulate=True) and its assignment:
    the values summed into their flat positions by a one-hot matmul."""
    found = _indexed_dims(self, indices)
    if found is None:
        return NotImplemented
    first, sizes, flat = found
    merged, count = _merge(self, first, sizes)
    shape = list(self.shape)
    post = shape[first + len(sizes):]
    values = values.expand(shape[:first] + list(flat.shape) + post)
    values = values.reshape(shape[:first] + [-1] + post).movedim(first, -1)  # [..., m]
    hits = _one_hot(flat.reshape(-1), count).to(self.dtype)  # [m, count]
    summed = torch.matmul(values.unsqueeze(-2), hits).squeeze(-2).movedim(-1, first)
    if accumulate:
        result = merged + summed
    else:
        hit = hits.sum(0) > 0
        result = torch.where(hit.reshape([count] + [1] * len(post)), summed, merged)
    return result.reshape(shape)


# -- pooling backward as shifted, strided placements ------------------------------------
# Each kernel offset (kh, kw) sends output position (oh, ow) to input row
# oh * stride - padding + kh * dilation (and the same for columns). The
# gradient of every offset is spread onto a stride-spaced grid (zeros in
# between), shifted to its offset, and the offsets are summed: no scatter.

def _place(values, offset, stride, size, dim):
    """values along `dim` (length o) placed at offset + stride * i on a
    zero axis of length `size`; positions outside it are dropped."""
    if stride > 1:
        # [..., o, ...] -> [..., o, stride, ...] holding each value first, then zeros.
        first = torch.arange(stride, device=values.device) == 0
        first = first.reshape([stride] + [1] * (values.dim() - dim - 1))
        values = torch.where(first, values.unsqueeze(dim + 1), 0).flatten(dim, dim + 1)
    if offset < 0:
        values = values.narrow(dim, min(-offset, values.shape[dim]),
                               max(values.shape[dim] + offset, 0))
        offset = 0
    length = values.shape[dim]
    if offset + length > size:
        values = values.narrow(dim, 0, max(size - offset, 0))
        length = values.shape[dim]
    return _pad_axis(values, dim, offset, size - offset - length)


def _pad_axis(values, dim, before, after):
    """Zeros before and after `values` along `dim`, by concatenation: F.pad
    would fix a dynamic batch size while tracing (its decomposition guards
    on every dimension)."""
    def zeros(length):
        shape = list(values.shape)
        shape[dim] = length
        return values.new_zeros(shape)
    parts = ([zeros(before)] if before else []) + [values] + ([zeros(after)] if after else [])
    return torch.cat(parts, dim) if len(parts) > 1 else values


def _pool_parameters(kernel_size, stride, padding, dilation=1):
    def pair(value, default=None):
        if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
            value = default
        if isinstance(value, (list, tuple)):
            return tuple(value) * (2 // len(value))  # [k] means [k, k]
        return (value,) * 2
    kernel = pair(kernel_size)
    return kernel, pair(stride, kernel), pair(padding), pair(dilation)


def _max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation,
                                      ceil_mode, indices):
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = _pool_parameters(kernel_size, stride, padding,
                                                              dilation)
    height, width = self.shape[-2:]
    out_h, out_w = grad_output.shape[-2:]
    rows = torch.arange(out_h, device=self.device).unsqueeze(-1) * sh - ph
    cols = torch.arange(out_w, device=self.device) * sw - pw
    grad_input = torch.zeros_like(self)
    for i in range(kh):
        for j in range(kw):
            row = rows + i * dh
            col = cols + j * dw
            inside = (row >= 0) & (row < height) & (col >= 0) & (col < width)
            taken = (indices == row * width + col) & inside
            contribution = torch.where(taken, grad_output, 0)
            placed = _place(contribution, i * dh - ph, sh, height, self.dim() - 2)
            grad_input = grad_input + _place(placed, j * dw - pw, sw, width, self.dim() - 1)
    return grad_input


def _avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
                         count_include_pad, divisor_override):
    (kh, kw), (sh, sw), (ph, pw), _ = _pool_parameters(kernel_size, stride, padding)
    height, width = self.shape[-2:]
    out_h, out_w = grad_output.shape[-2:]

    def window_sizes(out_size, size, kernel, step, pad):
        """PyTorch's divisor factor along one axis: each window's length
        within the padded input, or within the input itself."""
        start = torch.arange(out_size, device=self.device) * step - pad
        end = torch.clamp(start + kernel, max=size + pad)
        if count_include_pad:
            return end - start
        return torch.clamp(end, max=size) - torch.clamp(start, min=0)

    if divisor_override:
        divisor = torch.full((out_h, out_w), float(divisor_override), device=self.device)
    else:
        divisor = (window_sizes(out_h, height, kh, sh, ph).unsqueeze(-1)
                   * window_sizes(out_w, width, kw, sw, pw)).to(grad_output.dtype)
    share = grad_output / divisor
    grad_input = torch.zeros_like(self)
    for i in range(kh):
        placed = _place(share, i - ph, sh, height, self.dim() - 2)
        for j in range(kw):
            grad_input = grad_input + _place(placed, j - pw, sw, width, self.dim() - 1)
    return grad_input


# -- convolution backward as convolutions ------------------------------------------------

def _convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                          transposed, output_padding, groups, output_mask):
    """A 2-D convolution's gradients as two convolutions. torch-mlir's own
    lowering fails on the weight gradient of a grouped convolution, and of
    any convolution with a dynamic batch (it groups by the batch size)."""
    if transposed or input.dim() != 4:
        return NotImplemented
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        # The transposed convolution, with the output padding that gives back
        # the input's size.
        extra = [input.shape[2 + i] - ((grad_output.shape[2 + i] - 1) * stride[i]
                                       - 2 * padding[i] + dilation[i] * (weight.shape[2 + i] - 1)
                                       + 1) for i in range(2)]
        grad_input = aten.convolution.default(grad_output, weight, None, stride, padding,
                                              dilation, True, extra, groups)
    if output_mask[1]:
        # grad_w[o, i, a, b] = sum over n, y, x of g[n, o, y, x] * x[n, i, y s + a d, x s + b d]
        # (x zero-padded, i and o in one group): a convolution of the input, its
        # channels of a group as the batch and (group, batch) as channels, by the
        # gradient; stride and dilation swapped, cut to the kernel size.
        batch, channels = input.shape[:2]
        per_group = channels // groups
        spatial = list(input.shape[2:])
        images = input.reshape(batch, groups, per_group, *spatial).permute(2, 1, 0, 3, 4)
        images = images.reshape(per_group, groups * batch, *spatial)
        out_spatial = list(grad_output.shape[2:])
        kernels = grad_output.reshape(batch, groups, -1, *out_spatial).permute(1, 2, 0, 3, 4)
        kernels = kernels.reshape(-1, batch, *out_spatial)
        swapped = aten.convolution.default(images, kernels, None, dilation, padding, stride,
                                           False, [0, 0], groups)
        grad_weight = swapped.narrow(2, 0, weight.shape[2]).narrow(3, 0, weight.shape[3])
        grad_weight = grad_weight.transpose(0, 1)
    if output_mask[2]:
        grad_bias = grad_output.sum([0, 2, 3])
    return grad_input, grad_weight, grad_bias


# -- arithmetic ---------------------------------------------------------------------

def _var_mean(self, dim=None, *, correction=None, keepdim=False):
    """Two passes in the input's precision: torch-mlir computes var_mean
    (LayerNorm's statistics) in f64 tensors, which the AMP passes never touch."""
    dims = sorted(d % self.dim() for d in dim) if dim else list(range(self.dim()))
    count = 1
    for d in dims:
        count = count * self.shape[d]
    mean = self.sum(dims, keepdim=True) / count
    centered = self - mean
    correction = 1 if correction is None else correction
    var = (centered * centered).sum(dims, keepdim=keepdim) / (count - correction)
    return var, (mean if keepdim else mean.squeeze(dims))


def _var(self, dim=None, *, correction=None, keepdim=False):
    return _var_mean(self, dim, correction=correction, keepdim=keepdim)[0]


def _reciprocal(self):
    """1 / x as a division: torch-mlir's reciprocal asserts a nonzero input
    (cf.assert) inside the elementwise body."""
    return torch.ones_like(self) / self


# The aten ops whose float ops the tracer pins to f32 (amp.precision): the
# lookups that the decompositions above write as one-hot matmuls and masked
# sums (they copy values, exactly), and pow, on PyTorch's fp32 list, which
# its decomposition turns into products that the policy would not deny.
PINNED_F32 = frozenset(str(op) for op in (
    aten.gather.default, aten.scatter.value, aten.scatter.src, aten.scatter_add.default,
    aten.index.Tensor, aten.index_put.default, aten.embedding.default,
    aten.embedding_dense_backward.default, aten.pow.Tensor_Scalar))

def _pow_tensor_scalar(self, exponent):
    """x ** n for n in 0, 1, 2, 3, -1, -2 as products, as PyTorch's CPU kernel
    computes them (pow's backward asks for x ** (n - 1)): torch-mlir lowers
    an integer exponent to math.fpowi with an i64 exponent, which the CPU
    lowering cannot take (llvm.intr.powi wants i32)."""
    if (isinstance(exponent, bool) or not isinstance(exponent, (int, float))
            or float(exponent) not in (0.0, 1.0, 2.0, 3.0, -1.0, -2.0)
            or not self.is_floating_point()):
        return NotImplemented
    n = int(exponent)
    if n == 0:
        return torch.ones_like(self)
    power = {1: self.clone(), 2: self * self, 3: self * self * self}[abs(n)]
    return torch.ones_like(self) / power if n < 0 else power


_GELU_SCALE = math.sqrt(2.0 / math.pi)
_GELU_CUBIC = 0.044715


def _gelu(self, approximate="none"):
    """GELU's tanh approximation with products: torch-mlir's lowering
    computes x ** 3 with math.fpowi (see _pow_tensor_scalar)."""
    if approximate != "tanh":
        return NotImplemented
    inner = _GELU_SCALE * (self + _GELU_CUBIC * (self * self * self))
    return 0.5 * self * (1 + torch.tanh(inner))


def _gelu_backward(grad_output, self, approximate="none"):
    if approximate != "tanh":
        return NotImplemented
    squared = self * self
    tanh = torch.tanh(_GELU_SCALE * (self + _GELU_CUBIC * squared * self))
    slope = _GELU_SCALE * (1 + 3 * _GELU_CUBIC * squared)
    return grad_output * (0.5 * (1 + tanh) + 0.5 * self * (1 - tanh * tanh) * slope)


_OURS = {
    aten.convolution_backward.default: _convolution_backward,
    aten.var_mean.correction: _var_mean,
    aten.var.correction: _var,
    aten.reciprocal.default: _reciprocal,
    aten.pow.Tensor_Scalar: _pow_tensor_scalar,
    aten.gelu.default: _gelu,
    aten.gelu_backward.default: _gelu_backward,
    aten.gather.default: _gather,
    aten.scatter.value: _scatter_value,
    aten.scatter.src: _scatter_src,
    aten.scatter_add.default: _scatter_add,
    aten.index.Tensor: _index,
    aten.index_put.default: _index_put,
    aten.embedding.default: _embedding,
    aten.embedding_dense_backward.default: _embedding_dense_backward,
    aten.max_pool2d_with_indices_backward.default: _max_pool2d_with_indices_backward,
    aten.avg_pool2d_backward.default: _avg_pool2d_backward,
}
