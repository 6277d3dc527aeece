"""Functional versions of torch.optim.SGD, Adam and AdamW for one traced step.

A `FunctionalOptimizer` reads a real `torch.optim` instance once: its
param groups, hyperparameters and state. `update` is then plain tensor math
on (parameters, gradients, state, hyperparameters) that returns the new
parameters and state, numerically as PyTorch's single-tensor (for-loop)
implementation, which is what torch.optim runs on the CPU by default.

What a scheduler or a user may change between steps (lr, momentum,
dampening, weight_decay, betas, eps) is a 0-d f32 tensor input, one per
param group and name ("param_groups.0.lr"). What changes the structure of
the update (a weight decay or momentum of exactly 0, nesterov, amsgrad,
maximize) is read at trace time; `hyperparameters` refuses an optimizer
whose structure no longer matches the trace.

State follows torch.optim's state keys, per parameter:
"optimizer.state.<param>.<key>". SGD keeps a "step" counter besides its
"momentum_buffer", because PyTorch's first step sets the buffer to the
gradient itself (not momentum * 0 + (1 - dampening) * g).
"""
from dataclasses import dataclass
from typing import Callable, Dict, List, Sequence

import torch

__all__ = ["FunctionalOptimizer", "StateSpec", "HyperparameterSpec", "UnsupportedOptimizerError"]


class UnsupportedOptimizerError(ValueError):
    """An optimizer (or an option of one) that the traced step cannot express."""


@dataclass(frozen=True)
class StateSpec:
    name: str  # "optimizer.state.fc1.weight.exp_avg"
    param_index: int
    key: str  # torch.optim's state key: "exp_avg", "step", ...
    initial: torch.Tensor


@dataclass(frozen=True)
class HyperparameterSpec:
    name: str  # "param_groups.0.lr"
    group: int
    key: str  # "lr", "momentum", "beta1", ...
    value: float


def _state_name(param_name, key):
    return f"optimizer.state.{param_name}.{key}"


class FunctionalOptimizer:
    """The update of `optimizer` over the parameters `param_names` (the
    model's parameter names, in the order the traced step passes them)."""

    def __init__(self, optimizer: torch.optim.Optimizer, params: Sequence[torch.Tensor],
                 param_names: Sequence[str]):
        kind = type(optimizer)
        if kind is torch.optim.SGD:
            self.kind = "sgd"
        elif kind is torch.optim.AdamW:
            self.kind = "adamw"
        elif kind is torch.optim.Adam:
            self.kind = "adamw" if optimizer.defaults.get("decoupled_weight_decay") else "adam"
        else:
            raise UnsupportedOptimizerError(
                f"{kind.__module__}.{kind.__name__} is not supported; the traced step knows "
                "torch.optim.SGD, Adam and AdamW")
        self.param_names = list(param_names)
        index_of = {id(p): i for i, p in enumerate(params)}
        self.group_of: List[int] = [-1] * len(params)
        for g, group in enumerate(optimizer.param_groups):
            for p in group["params"]:
                if id(p) not in index_of:
                    raise UnsupportedOptimizerError(
                        f"param_groups[{g}] holds a tensor of shape {tuple(p.shape)} that is "
                        "not a trainable parameter of the model (not the model's, or frozen "
                        "with requires_grad=False)")
                self.group_of[index_of[id(p)]] = g
        untrained = [n for n, g in zip(self.param_names, self.group_of) if g < 0]
        if untrained:
            raise UnsupportedOptimizerError(
                f"parameter(s) {', '.join(untrained)} are in no param group of the optimizer; "
                "freeze them with requires_grad_(False) or add them to the optimizer")
        self.groups = [self._structure(g, group) for g, group in enumerate(optimizer.param_groups)]
        self.hyperparameters = [
            HyperparameterSpec(f"param_groups.{g}.{key}", g, key, value)
            for g, group in enumerate(optimizer.param_groups)
            for key, value in self._hyperparameter_values(group, self.groups[g]).items()]
        self.states = self._state_specs(optimizer, params)

    # -- structure -------------------------------------------------------------
    def _structure(self, g, group):
        """What the update of param group g does, fixed at trace time."""
        if group.get("differentiable"):
            raise UnsupportedOptimizerError(f"param_groups[{g}]: differentiable=True is not "
                                            "supported")
        if isinstance(group["lr"], torch.Tensor) and group["lr"].numel() != 1:
            raise UnsupportedOptimizerError(f"param_groups[{g}]: lr must be a scalar")
        if self.kind == "sgd":
            return {"weight_decay": group["weight_decay"] != 0, "momentum": group["momentum"] != 0,
                    "nesterov": bool(group["nesterov"]), "maximize": bool(group["maximize"])}
        return {"weight_decay": group["weight_decay"] != 0, "amsgrad": bool(group["amsgrad"]),
                "maximize": bool(group["maximize"])}

    def _hyperparameter_values(self, group, structure) -> Dict[str, float]:
        """The group's inputs, by key: only those the update reads."""
        values = {"lr": float(group["lr"])}
        if structure["weight_decay"]:
            values["weight_decay"] = float(group["weight_decay"])
        if self.kind == "sgd":
            if structure["momentum"]:
                values["momentum"] = float(group["momentum"])
                values["dampening"] = float(group["dampening"])
        else:
            beta1, beta2 = group["betas"]
            values.update(beta1=float(beta1), beta2=float(beta2), eps=float(group["eps"]))
        return values

    def _state_keys(self, group):
        if self.kind == "sgd":
            return ["step", "momentum_buffer"] if self.groups[group]["momentum"] else []
        keys = ["step", "exp_avg", "exp_avg_sq"]
        return keys + ["max_exp_avg_sq"] if self.groups[group]["amsgrad"] else keys

    def _state_value(self, state, key, p) -> torch.Tensor:
        """The step's value of state `key` of parameter `p` from torch.optim's
        per-parameter `state` dict (empty before the first step)."""
        if key == "step":
            # SGD has no counter of its own: a momentum buffer means a step was made.
            if self.kind == "sgd":
                count = 1.0 if state.get("momentum_buffer") is not None else 0.0
            else:
                count = float(state.get("step", 0.0))
            return torch.tensor(count, dtype=torch.float32)
        value = state.get(key)
        if value is None:
            return torch.zeros_like(p, memory_format=torch.contiguous_format)
        return value.detach().clone().to(torch.float32)

    def _state_specs(self, optimizer, params) -> List[StateSpec]:
        """The state arguments, initialized from the optimizer's state (which
        is empty before its first step)."""
        specs = []
        for i, (name, p) in enumerate(zip(self.param_names, params)):
            state = optimizer.state.get(p, {})
            for key in self._state_keys(self.group_of[i]):
                specs.append(StateSpec(_state_name(name, key), i, key,
                                       self._state_value(state, key, p)))
        return specs

    # -- torch.optim's state <-> the step's state arguments ---------------------------
    def state_values(self, optimizer: torch.optim.Optimizer,
                     params: Sequence[torch.Tensor]) -> Dict[str, torch.Tensor]:
        """`optimizer`'s current state as the step's state arguments, by name
        (zeros where torch.optim has none yet). `params`: the traced
        parameters, in order."""
        return {s.name: self._state_value(optimizer.state.get(params[s.param_index], {}),
                                          s.key, params[s.param_index])
                for s in self.states}

    def load_state(self, optimizer: torch.optim.Optimizer, params: Sequence[torch.Tensor],
                   values: Dict[str, torch.Tensor]) -> None:
        """Writes the step's state arguments `values` (by name) into
        `optimizer.state` as torch.optim keeps it: nothing for a parameter
        before its first step; SGD's "momentum_buffer"; Adam's "step" (a 0-d
        f32 tensor), "exp_avg", "exp_avg_sq" and with amsgrad
        "max_exp_avg_sq". The step's SGD counter is not torch.optim state."""
        by_param: Dict[int, Dict[str, torch.Tensor]] = {}
        for s in self.states:
            by_param.setdefault(s.param_index, {})[s.key] = values[s.name]
        for i, state in by_param.items():
            p = params[i]
            if float(state["step"]) == 0:  # no step made yet
                optimizer.state.pop(p, None)
                continue
            kept = {key: value.detach().clone().to(p.dtype).reshape(p.shape)
                    for key, value in state.items() if key != "step"}
            if self.kind != "sgd":
                kept = {"step": torch.tensor(float(state["step"]), dtype=torch.float32), **kept}
            optimizer.state[p] = kept

    # -- values between steps -----------------------------------------------------
    def hyperparameter_values(self, optimizer: torch.optim.Optimizer) -> Dict[str, torch.Tensor]:
        """The current hyperparameters of `optimizer` (e.g. after a scheduler
        step) as the step's 0-d f32 inputs, by name. Raises if the optimizer
        changed in a way the traced update cannot follow (a weight decay
        that was 0 at trace time, a different number of groups, ...)."""
        if len(optimizer.param_groups) != len(self.groups):
            raise UnsupportedOptimizerError(
                f"the step was traced with {len(self.groups)} param group(s), the optimizer "
                f"has {len(optimizer.param_groups)}")
        values = {}
        for g, group in enumerate(optimizer.param_groups):
            if self._structure(g, group) != self.groups[g]:
                raise UnsupportedOptimizerError(
                    f"param_groups[{g}] changed its structure since the trace "
                    f"({self._structure(g, group)} vs {self.groups[g]}); trace the step again")
            for key, value in self._hyperparameter_values(group, self.groups[g]).items():
                values[f"param_groups.{g}.{key}"] = torch.tensor(value, dtype=torch.float32)
        return values

    # -- the update -------------------------------------------------------------------
    def update(self, params: Sequence[torch.Tensor], grads: Sequence[torch.Tensor],
               states: Sequence[torch.Tensor], hypers: Sequence[torch.Tensor],
               annotate: Callable[[str], None] = lambda param_name: None):
        """(new params, new states): one optimizer step, out of place.
        `annotate(param_name)` is called before each parameter's update
        (the tracer locates the ops it records after it)."""
        hyper = {(h.group, h.key): value for h, value in zip(self.hyperparameters, hypers)}
        state = {(s.param_index, s.key): value for s, value in zip(self.states, states)}
        new_state = dict(state)
        new_params = []
        for i, (param, grad) in enumerate(zip(params, grads)):
            g = self.group_of[i]
            h = {key: value for (group, key), value in hyper.items() if group == g}
            s = {key: value for (index, key), value in state.items() if index == i}
            step = self._sgd if self.kind == "sgd" else self._adam
            annotate(self.param_names[i])
            new_param, updated = step(self.groups[g], h, param, grad, s)
            new_params.append(new_param)
            new_state.update({(i, key): value for key, value in updated.items()})
        return new_params, [new_state[(s.param_index, s.key)] for s in self.states]

    @staticmethod
    def _sgd(structure, h, param, grad, s):
        """torch.optim.sgd._single_tensor_sgd, out of place."""
        if structure["maximize"]:
            grad = -grad
        if structure["weight_decay"]:
            grad = grad + h["weight_decay"] * param
        updated = {}
        if structure["momentum"]:
            continued = s["momentum_buffer"] * h["momentum"] + (1 - h["dampening"]) * grad
            # PyTorch's first step starts the buffer at the gradient itself.
            buf = torch.where(s["step"] == 0, grad, continued)
            updated = {"momentum_buffer": buf, "step": s["step"] + 1}
            grad = grad + h["momentum"] * buf if structure["nesterov"] else buf
        return param - h["lr"] * grad, updated

    def _adam(self, structure, h, param, grad, s):
        """torch.optim.adam._single_tensor_adam (not capturable), out of place;
        AdamW's decay is decoupled, Adam's is added to the gradient."""
        if structure["maximize"]:
            grad = -grad
        step = s["step"] + 1
        lr = h["lr"]
        if structure["weight_decay"]:
            if self.kind == "adamw":
                param = param * (1 - lr * h["weight_decay"])
            else:
                grad = grad + h["weight_decay"] * param
        beta1, beta2 = h["beta1"], h["beta2"]
        exp_avg = torch.lerp(s["exp_avg"], grad, 1 - beta1)
        exp_avg_sq = s["exp_avg_sq"] * beta2 + (1 - beta2) * grad * grad
        bias_correction1 = 1 - torch.pow(beta1, step)
        bias_correction2_sqrt = torch.sqrt(1 - torch.pow(beta2, step))
        step_size = lr / bias_correction1
        updated = {"step": step, "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}
        second_moment = exp_avg_sq
        if structure["amsgrad"]:
            second_moment = torch.maximum(s["max_exp_avg_sq"], exp_avg_sq)
            updated["max_exp_avg_sq"] = second_moment
        denom = torch.sqrt(second_moment) / bias_correction2_sqrt + h["eps"]
        return param - step_size * (exp_avg / denom), updated
