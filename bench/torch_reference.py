#!/usr/bin/env python3
"""PyTorch references of scripts/gpu-check.sh, on the GPU machine (PyTorch
with CUDA, no MLIR):

  torch_reference.py matmul N          # N^3 f16 and bf16 torch.matmul: TFLOP/s
  torch_reference.py step mlp|transformer f16|bf16
      # one eager AMP training step (autocast + GradScaler for f16) at the
      # sizes of examples/mlp.mlir / examples/transformer.mlir: ms per step

The models are examples/reference/mlp.py (64-128-10 ReLU MLP, softmax
cross-entropy, SGD lr 0.1) and examples/reference/transformer.py (one
pre-LN block, batch 64, 8 tokens of 8 features, d 32, 2 heads, ff 64, GELU
tanh, mean pooling, Adam lr 1e-3), in PyTorch's idiomatic form.
"""
import math
import sys

import torch
import torch.nn.functional as F


def timed(fn, warmup=20, iterations=200):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iterations):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iterations


def matmul(n):
    for name, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        ms = timed(lambda: torch.matmul(a, b), warmup=5, iterations=20)
        print("%-5s %d: %.1f TFLOP/s" % (name, n, 2 * n ** 3 / ms / 1e9))


class Block(torch.nn.Module):
    def __init__(self, d=32, heads=2, ff=64):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.wq, self.wk, self.wv, self.wo = (torch.nn.Linear(d, d, bias=False) for _ in range(4))
        self.w1, self.w2 = torch.nn.Linear(d, ff), torch.nn.Linear(ff, d)

    def forward(self, x):
        b, t, d = x.shape
        h, dh = self.heads, d // self.heads
        y = self.ln1(x)
        q, k, v = (w(y).view(b, t, h, dh).transpose(1, 2) for w in (self.wq, self.wk, self.wv))
        probs = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(dh), dim=-1)
        x = x + self.wo((probs @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.w2(F.gelu(self.w1(self.ln2(x)), approximate="tanh"))


class Transformer(torch.nn.Module):
    def __init__(self, seq=8, features=8, d=32, classes=10):
        super().__init__()
        self.seq, self.features = seq, features
        self.embed = torch.nn.Linear(features, d)
        self.pos = torch.nn.Parameter(0.1 * torch.randn(seq, d))
        self.block = Block(d)
        self.cls = torch.nn.Linear(d, classes)

    def forward(self, x):
        x = self.embed(x.view(x.shape[0], self.seq, self.features)) + self.pos
        return self.cls(self.block(x).mean(1))


def step(example, mode):
    torch.manual_seed(0)
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[mode]
    if example == "mlp":
        model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                    torch.nn.Linear(128, 10)).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    else:
        model = Transformer().cuda()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda", enabled=mode == "f16")
    x = torch.rand(64, 64, device="cuda")
    y = F.one_hot(torch.randint(0, 10, (64,), device="cuda"), 10).float()

    def train_step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

    print("%.4f" % timed(train_step))


if __name__ == "__main__":
    if not torch.cuda.is_available():
        sys.exit("torch_reference.py: no CUDA device")
    if sys.argv[1] == "matmul":
        matmul(int(sys.argv[2]))
    else:
        step(sys.argv[2], sys.argv[3])
