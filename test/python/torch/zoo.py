"""Small training setups from standard torch.nn layers, for the tracer's tests
and the IR fixtures (scripts/torch-fixtures.py).

Each `make_<name>()` returns a `Setup`: a fresh model (seeded), its loss
function `loss_fn(model, *batch)`, an optimizer, `batches(count)` (a list of
example batches, seeded), the options trace_training_step takes for it, and
an optional LR scheduler factory.
"""
import math
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Setup:
    model: nn.Module
    loss_fn: Callable
    optimizer: torch.optim.Optimizer
    batches: Callable[[int], List[tuple]]
    options: Dict = field(default_factory=dict)
    scheduler: Optional[Callable] = None  # scheduler(optimizer) -> LRScheduler


def _generator(seed):
    return torch.Generator().manual_seed(seed)


def _classification_batches(shape, classes, batch_size, seed=1):
    def batches(count):
        g = _generator(seed)
        return [(torch.randn(batch_size, *shape, generator=g),
                 torch.randint(0, classes, (batch_size,), generator=g)) for _ in range(count)]
    return batches


def cross_entropy_loss(model, x, y):
    return F.cross_entropy(model(x), y)


# -- MLP: Linear/ReLU, cross-entropy, SGD with momentum and weight decay --------------

class MLP(nn.Module):
    def __init__(self, inputs=12, hidden=16, classes=5):
        super().__init__()
        self.fc1 = nn.Linear(inputs, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def make_mlp(batch_size=6):
    torch.manual_seed(0)
    model = MLP()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-3)
    return Setup(model, cross_entropy_loss, optimizer,
                 _classification_batches((12,), 5, batch_size))


def make_mlp_groups(batch_size=6):
    """Two param groups (biases without decay), nesterov, dampening, MSE loss."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
    weights = [p for n, p in model.named_parameters() if n.endswith("weight")]
    biases = [p for n, p in model.named_parameters() if n.endswith("bias")]
    optimizer = torch.optim.SGD([{"params": weights, "weight_decay": 1e-2, "nesterov": True,
                                  "momentum": 0.8},
                                 {"params": biases, "lr": 0.05, "dampening": 0.3}],
                                lr=0.1, momentum=0.5)

    def batches(count):
        g = _generator(1)
        return [(torch.randn(batch_size, 5, generator=g), torch.randn(batch_size, 3, generator=g))
                for _ in range(count)]
    return Setup(model, lambda m, x, y: F.mse_loss(m(x), y), optimizer, batches)


# -- CNN: Conv2d, BatchNorm2d, ReLU, MaxPool2d (overlapping), AvgPool2d, Linear -------

class CNN(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool1 = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)  # overlapping windows
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.pool2 = nn.AvgPool2d(2)
        self.fc = nn.Linear(8 * 2 * 2, classes)

    def forward(self, x):
        x = self.pool1(F.relu(self.bn1(self.conv1(x))))
        x = self.pool2(F.relu(self.bn2(self.conv2(x))))
        return self.fc(torch.flatten(x, 1))


def make_cnn(batch_size=4):
    torch.manual_seed(0)
    model = CNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return Setup(model, cross_entropy_loss, optimizer,
                 _classification_batches((3, 8, 8), 4, batch_size))


# -- ResNet basic block with a downsampling shortcut, adaptive pooling ----------------

class BasicBlock(nn.Module):
    def __init__(self, inputs, outputs, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.downsample = nn.Sequential(nn.Conv2d(inputs, outputs, 1, stride, bias=False),
                                        nn.BatchNorm2d(outputs))

    def forward(self, x):
        identity = self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity  # in place, as torchvision's block
        return self.relu(out)


class ResNetBlock(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1, bias=False)
        self.layer1 = nn.Sequential(BasicBlock(4, 8, 2))
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8, classes)

    def forward(self, x):
        x = self.pool(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(x, 1))


def make_resnet_block(batch_size=3):
    torch.manual_seed(0)
    model = ResNetBlock()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    return Setup(model, cross_entropy_loss, optimizer,
                 _classification_batches((3, 8, 8), 3, batch_size))


# -- GPT-style decoder block: Embedding, LayerNorm, causal attention, GELU, Adam -------

class CausalSelfAttention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        # No bias: a key bias has a gradient of exactly zero in exact arithmetic
        # (softmax ignores a shift along a row); Adam would amplify its rounding.
        self.qkv = nn.Linear(width, 3 * width, bias=False)
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=2)
        shape = (batch, length, self.heads, width // self.heads)
        q, k, v = (t.reshape(shape).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(width // self.heads)
        mask = torch.ones(length, length, dtype=torch.bool).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
        out = F.softmax(scores, dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(batch, length, width))


class GPTBlock(nn.Module):
    def __init__(self, vocab=11, length=6, width=16, heads=2):
        super().__init__()
        self.token = nn.Embedding(vocab, width)
        self.position = nn.Embedding(length, width)
        self.ln1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))
        self.ln_f = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1])
        x = self.token(tokens) + self.position(positions)
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return self.head(self.ln_f(x))


def language_model_loss(model, tokens, targets):
    logits = model(tokens)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def make_gpt_block(batch_size=2, length=6, vocab=11):
    torch.manual_seed(0)
    model = GPTBlock(vocab, length)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.9, 0.98))

    def batches(count):
        g = _generator(1)
        return [(torch.randint(0, vocab, (batch_size, length), generator=g),
                 torch.randint(0, vocab, (batch_size, length), generator=g))
                for _ in range(count)]
    return Setup(model, language_model_loss, optimizer, batches)


# -- the same block from torch.nn's own attention: nn.MultiheadAttention, AdamW -------

class GPTBlockMHA(nn.Module):
    """A pre-norm decoder block as users write it with torch.nn's attention
    layer and a causal mask buffer."""

    def __init__(self, vocab=11, length=6, width=16, heads=2):
        super().__init__()
        self.token = nn.Embedding(vocab, width)
        self.position = nn.Embedding(length, width)
        self.ln1 = nn.LayerNorm(width)
        # No biases: the key part of in_proj_bias has a gradient of exactly zero
        # (softmax ignores a shift along a row); AdamW turns its rounding into
        # steps of size lr, which differ between any two implementations
        # (6e-2 of max|in_proj_bias| between eager and the compiled step after
        # 50 steps, the rest of it within 1e-6).
        self.attn = nn.MultiheadAttention(width, heads, bias=False, batch_first=True)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * width, width))
        self.ln_f = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)
        causal = torch.ones(length, length, dtype=torch.bool).triu(1)  # True: not attended
        self.register_buffer("causal_mask", causal, persistent=False)

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1])
        x = self.token(tokens) + self.position(positions)
        h = self.ln1(x)
        attended, _ = self.attn(h, h, h, attn_mask=self.causal_mask, need_weights=False)
        x = x + attended
        x = x + self.mlp(self.ln2(x))
        return self.head(self.ln_f(x))


def make_gpt_mha(batch_size=2, length=6, vocab=11):
    torch.manual_seed(0)
    model = GPTBlockMHA(vocab, length)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01)

    def batches(count):
        g = _generator(1)
        return [(torch.randint(0, vocab, (batch_size, length), generator=g),
                 torch.randint(0, vocab, (batch_size, length), generator=g))
                for _ in range(count)]
    return Setup(model, language_model_loss, optimizer, batches)


# -- LSTM classifier, BCE with logits, AdamW (amsgrad) --------------------------------

class LSTMClassifier(nn.Module):
    def __init__(self, inputs=4, hidden=8):
        super().__init__()
        self.lstm = nn.LSTM(inputs, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1]).squeeze(1)


def make_lstm(batch_size=3, length=5):
    torch.manual_seed(0)
    model = LSTMClassifier()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.05, amsgrad=True)

    def batches(count):
        g = _generator(1)
        return [(torch.randn(batch_size, length, 4, generator=g),
                 torch.randint(0, 2, (batch_size,), generator=g).float()) for _ in range(count)]
    return Setup(model, lambda m, x, y: F.binary_cross_entropy_with_logits(m(x), y),
                 optimizer, batches)


# -- two-layer GRU, cross-entropy, Adam --------------------------------------------------

class GRUClassifier(nn.Module):
    def __init__(self, inputs=3, hidden=6, classes=3):
        super().__init__()
        self.gru = nn.GRU(inputs, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        out, _ = self.gru(x)
        return self.head(out[:, -1])


def make_gru(batch_size=3, length=4):
    torch.manual_seed(0)
    model = GRUClassifier()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    return Setup(model, cross_entropy_loss, optimizer,
                 _classification_batches((length, 3), 3, batch_size))


# -- MLP with an LR scheduler and gradient clipping (Adam with weight decay) -----------

def make_scheduled(batch_size=6):
    torch.manual_seed(0)
    model = MLP()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=1e-2)
    return Setup(model, cross_entropy_loss, optimizer,
                 _classification_batches((12,), 5, batch_size),
                 options={"clip_grad_norm": 0.5},
                 scheduler=lambda opt: torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5))


SETUPS = {
    "mlp": make_mlp,
    "mlp_groups": make_mlp_groups,
    "cnn": make_cnn,
    "resnet_block": make_resnet_block,
    "gpt_block": make_gpt_block,
    "gpt_mha": make_gpt_mha,
    "lstm": make_lstm,
    "gru": make_gru,
    "scheduled": make_scheduled,
}


# Setups that `SETUPS` builds for the tests against eager PyTorch (test_zoo.py): the
# issue's zoo, one model per line of its list.
ZOO = ["mlp", "mlp_groups", "cnn", "resnet_block", "gpt_block", "gpt_mha", "lstm", "gru",
       "scheduled"]


def eager_step(setup, batch, scheduler=None, autocast_dtype=None):
    """One torch.optim step of the setup's model as a user writes it
    (clip_grad_norm_ from the setup's options), optionally under
    torch.autocast("cpu", autocast_dtype); returns the loss as a float."""
    setup.optimizer.zero_grad()
    with torch.autocast("cpu", dtype=autocast_dtype or torch.bfloat16,
                        enabled=autocast_dtype is not None):
        loss = setup.loss_fn(setup.model, *batch)
    loss.backward()
    if setup.options.get("clip_grad_norm") is not None:
        torch.nn.utils.clip_grad_norm_(setup.model.parameters(), setup.options["clip_grad_norm"])
    setup.optimizer.step()
    if scheduler is not None:
        scheduler.step()
    return float(loss.detach())
