"""Training the multi-exit backbones: vanilla (final classifier only), SDN (ICs with the SDN weight
ramp) and SLIE (SDN ramp + light self-distillation), with one small hand-written optimiser.

The optimiser is SGD with Nesterov momentum 0.9, weight decay and a cosine learning-rate schedule
(the authors' recipe), written out here in a few lines: creating the first ``torch.optim`` optimiser
imports ``torch._dynamo`` and costs 10-25 s on a loaded 2-core machine, more than a quick run.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F

from paperworks.core import torch_threads

from .backbones import MultiExitNet
from .distill import sdn_ic_weights, self_distillation_loss

__all__ = ["NesterovSGD", "TrainConfig", "predict_all", "train_multi_exit"]

MODES = ("vanilla", "sdn", "slie")


@dataclass(frozen=True)
class TrainConfig:
    """``mode``: 'vanilla' (final CE only), 'sdn' (alpha = 0) or 'slie' (alpha, temperature).

    ``threads``: torch intra-op threads while training (restored after); 1 is much the fastest for
    laptop-scale models on a busy machine, ``None`` leaves torch's setting alone.
    """

    mode: str = "slie"
    epochs: int = 10
    batch_size: int = 64
    lr: float = 0.1
    momentum: float = 0.9
    weight_decay: float = 5e-4
    alpha: float = 0.3
    temperature: float = 4.0
    shift: int = 1
    threads: int | None = 1

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode: expected one of {MODES}, got {self.mode!r}")
        if self.epochs < 1 or self.batch_size < 1:
            raise ValueError(f"epochs and batch_size: expected >= 1, got {self.epochs}, {self.batch_size}")
        if not (self.lr > 0 and 0 <= self.momentum < 1 and self.weight_decay >= 0):
            raise ValueError("lr > 0, 0 <= momentum < 1 and weight_decay >= 0 expected")
        if not (0 <= self.alpha <= 1 and self.temperature > 0 and self.shift >= 0):
            raise ValueError("alpha in [0, 1], temperature > 0 and shift >= 0 expected")
        if self.threads is not None and (not isinstance(self.threads, int) or self.threads < 1):
            raise ValueError(f"threads: expected a positive int or None, got {self.threads!r}")


class NesterovSGD:
    """SGD with Nesterov momentum and L2 weight decay over ``params``."""

    def __init__(self, params: list[torch.Tensor], momentum: float = 0.9, weight_decay: float = 5e-4) -> None:
        self.params = [p for p in params if p.requires_grad]
        self.bufs = [torch.zeros_like(p) for p in self.params]
        self.momentum = momentum
        self.weight_decay = weight_decay

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self, lr: float) -> None:
        for p, b in zip(self.params, self.bufs, strict=True):
            if p.grad is None:
                continue
            g = p.grad.add(p, alpha=self.weight_decay)
            b.mul_(self.momentum).add_(g)
            p.sub_(g.add(b, alpha=self.momentum), alpha=lr)


def cosine_lr(base: float, step: int, total: int) -> float:
    """Cosine schedule from ``base`` to 0 over ``total`` steps."""
    return 0.5 * base * (1 + math.cos(math.pi * min(step, total) / max(1, total)))


def _batches(n: int, batch_size: int, gen: torch.Generator) -> Iterator[torch.Tensor]:
    perm = torch.randperm(n, generator=gen)
    for s in range(0, n - batch_size + 1 if n >= batch_size else 1, batch_size):
        yield perm[s : s + batch_size]


def train_multi_exit(
    model: MultiExitNet,
    x: np.ndarray | torch.Tensor,
    y: np.ndarray | torch.Tensor,
    config: TrainConfig,
    *,
    seed: int = 0,
) -> MultiExitNet:
    """Train ``model`` in place on images ``x`` (N, C, S, S) and labels ``y`` (N,); returns it in eval mode.

    Augmentation: a random circular shift of up to ``config.shift`` pixels per batch.
    """
    if config.threads is None:
        return _train(model, x, y, config, seed)
    with torch_threads(config.threads):
        return _train(model, x, y, config, seed)


def _train(
    model: MultiExitNet,
    x: np.ndarray | torch.Tensor,
    y: np.ndarray | torch.Tensor,
    config: TrainConfig,
    seed: int,
) -> MultiExitNet:
    xt = torch.as_tensor(x, dtype=torch.float32)
    yt = torch.as_tensor(y, dtype=torch.int64)
    if xt.dim() != 4 or yt.shape != (xt.shape[0],):
        raise ValueError(
            f"x, y: expected shapes (N, C, S, S) and (N,), got {tuple(xt.shape)}, {tuple(yt.shape)}"
        )
    if xt.shape[0] == 0:
        raise ValueError("x: expected at least one training image")
    gen = torch.Generator().manual_seed(int(seed))
    opt = NesterovSGD(list(model.parameters()), config.momentum, config.weight_decay)
    steps_per_epoch = max(1, xt.shape[0] // config.batch_size)
    total = config.epochs * steps_per_epoch
    costs = model.ic_costs
    step = 0
    model.train()
    for _epoch in range(config.epochs):
        for idx in _batches(xt.shape[0], config.batch_size, gen):
            xb, yb = xt[idx], yt[idx]
            if config.shift:
                dx, dy = (int(v) for v in torch.randint(-config.shift, config.shift + 1, (2,), generator=gen))
                xb = torch.roll(xb, shifts=(dx, dy), dims=(2, 3))
            progress = step / max(1, total - 1)
            final, ics = model(xb)
            if config.mode == "vanilla":
                loss = F.cross_entropy(final, yb)
            else:
                alpha = config.alpha if config.mode == "slie" else 0.0
                w = sdn_ic_weights(costs, progress)
                loss = self_distillation_loss(final, ics, yb, w, alpha=alpha, temperature=config.temperature)
            opt.zero_grad()
            loss.backward()
            opt.step(cosine_lr(config.lr, step, total))
            step += 1
    model.eval()
    return model


@torch.no_grad()
def predict_all(
    model: MultiExitNet, x: np.ndarray | torch.Tensor, batch_size: int = 512
) -> tuple[torch.Tensor, torch.Tensor]:
    """Softmax outputs of the final classifier ``(N, C)`` and of every IC ``(K, N, C)``, in eval mode."""
    xt = torch.as_tensor(x, dtype=torch.float32)
    model.eval()
    finals, ics = [], []
    for s in range(0, xt.shape[0], batch_size):
        f, i = model(xt[s : s + batch_size])
        finals.append(F.softmax(f, -1))
        ics.append(F.softmax(i, -1))
    return torch.cat(finals), torch.cat(ics, dim=1)
