"""Pieces shared by the numpy references: losses, layers and gradient checks.

Every reference module (mlp, cnn, transformer) describes its step function the same way:
  MLIR, FUNC         the example file under examples/ and its function name
  PARAMS, OPT_STATE  ordered (name, shape) lists: the function's carried arguments, in
                     argument order, parameters first, then optimizer state (zeros at start)
  DATA               ordered (name, shape) list of the batch arguments that follow
  init_params(rng)   a dict of float32 parameters
  loss_and_grads(params, x, y) -> (loss, grads dict)   forward + hand-written backward
  update(params, state, grads) -> (params, state)      the optimizer, as in the IR
  grads_from_update(params, state, new_params, new_state) -> grads
                     the gradients recovered from one update that started at zero state
The step returns the loss, then the new parameters, then the new optimizer state.
"""
import numpy as np


def softmax_cross_entropy(logits, onehot):
    """Mean cross-entropy over the batch; returns (loss, dlogits for d(loss) = 1)."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    ex = np.exp(shifted)
    total = ex.sum(axis=1, keepdims=True)
    logp = shifted - np.log(total)
    batch = logits.shape[0]
    loss = -(onehot * logp).sum() / batch
    return loss, (ex / total - onehot) / batch


def state_shapes(module):
    return list(module.PARAMS) + list(module.OPT_STATE)


def zeros_state(module, dtype=np.float32):
    return {n: np.zeros(s, dtype) for n, s in module.OPT_STATE}


def random_batch(module, rng):
    """A batch of the module's data shapes: pixels in [0, 1], one-hot labels."""
    (_, xs), (_, ys) = module.DATA
    x = rng.uniform(0.0, 1.0, size=xs).astype(np.float32)
    y = np.eye(ys[1], dtype=np.float32)[rng.integers(0, ys[1], size=ys[0])]
    return x, y


def finite_difference_check(module, params, x, y, rng, samples=6, eps=1e-6):
    """Compares the hand-written backward with central differences, in float64.

    Returns the largest relative error over `samples` random coordinates of every
    parameter and one random direction through all of them together.
    """
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    _, grads = module.loss_and_grads(p64, x64, y64)

    def loss_at(p):
        return module.loss_and_grads(p, x64, y64)[0]

    worst = 0.0
    for name, value in p64.items():
        for _ in range(samples):
            idx = tuple(rng.integers(0, n) for n in value.shape)
            plus = dict(p64); plus[name] = value.copy(); plus[name][idx] += eps
            minus = dict(p64); minus[name] = value.copy(); minus[name][idx] -= eps
            numeric = (loss_at(plus) - loss_at(minus)) / (2 * eps)
            analytic = grads[name][idx]
            worst = max(worst, abs(numeric - analytic) / max(1e-6, abs(numeric) + abs(analytic)))
    direction = {k: rng.standard_normal(v.shape) for k, v in p64.items()}
    plus = {k: v + eps * direction[k] for k, v in p64.items()}
    minus = {k: v - eps * direction[k] for k, v in p64.items()}
    numeric = (loss_at(plus) - loss_at(minus)) / (2 * eps)
    analytic = sum((grads[k] * direction[k]).sum() for k in p64)
    worst = max(worst, abs(numeric - analytic) / max(1e-6, abs(numeric) + abs(analytic)))
    return worst


def directional_check(loss_fn, params, grads, rng, eps):
    """Relative error of grads . d against a central difference of loss_fn along d.

    For fp32 losses (compiled steps): one direction through all parameters is far
    better conditioned than single coordinates.
    """
    direction = {k: rng.standard_normal(v.shape).astype(np.float32) for k, v in params.items()}
    norm = np.sqrt(sum((d.astype(np.float64) ** 2).sum() for d in direction.values()))
    direction = {k: (d / norm).astype(np.float32) for k, d in direction.items()}
    plus = {k: v + eps * direction[k] for k, v in params.items()}
    minus = {k: v - eps * direction[k] for k, v in params.items()}
    numeric = (float(loss_fn(plus)) - float(loss_fn(minus))) / (2 * eps)
    analytic = sum(float((grads[k].astype(np.float64) * direction[k]).sum()) for k in params)
    return abs(numeric - analytic) / max(1e-8, abs(numeric) + abs(analytic)), numeric, analytic


ADAM_LR, ADAM_B1, ADAM_B2, ADAM_EPS = 1e-3, 0.9, 0.999, 1e-8


def adam_state_names(param_names):
    """The Adam state arguments of bench/gen_step.py: first moments, second moments, step."""
    return ([f"m_{n}" for n in param_names] + [f"v_{n}" for n in param_names]
            + ["adam_step"])


def adam(params, state, grads):
    """Adam with bias correction, as the update region of bench/gen_step.py computes it."""
    f32 = np.float32
    step = state["adam_step"] + f32(1)
    bc1 = f32(1) - f32(ADAM_B1) ** step
    bc2 = f32(1) - f32(ADAM_B2) ** step
    new_params, new_state = {}, {"adam_step": np.asarray(step, np.float32)}
    for name, p in params.items():
        g = grads[name]
        m = f32(ADAM_B1) * state[f"m_{name}"] + f32(1 - ADAM_B1) * g
        v = f32(ADAM_B2) * state[f"v_{name}"] + f32(1 - ADAM_B2) * (g * g)
        new_params[name] = p - f32(ADAM_LR) * ((m / bc1) / (np.sqrt(v / bc2) + f32(ADAM_EPS)))
        new_state[f"m_{name}"], new_state[f"v_{name}"] = m, v
    return new_params, new_state


def adam_grads_from_update(params, state, new_params, new_state):
    """From zero moments, the first moment after one step is (1 - b1) * g."""
    return {n: new_state[f"m_{n}"] / np.float32(1 - ADAM_B1) for n in params}
