"""Backbone, training loops and the continual-learning metrics (average accuracy, backward transfer).

``R[i, j]`` is the test accuracy on task ``j`` after training task ``i`` (``j <= i``). Average accuracy
after the last task ``ACC = mean_j R[T-1, j]``; backward transfer
``BWT = mean_{j < T-1} (R[T-1, j] - R[j, j])`` (Lopez-Paz & Ranzato, 2017): negative means forgetting.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .adapter import ContinualAdapter
from .baselines import PerTaskLoRA
from .data import ContinualStream

__all__ = [
    "MLP",
    "Adam",
    "StreamResult",
    "TrainConfig",
    "average_accuracy",
    "backward_transfer",
    "pretrain_backbone",
    "run_stream",
]


class Adam:
    """Adam (Kingma & Ba, 2015) with torch.optim.Adam's defaults, in a few tensor ops.

    Used instead of ``torch.optim.Adam`` only because creating the first torch optimiser imports
    ``torch._dynamo`` (about 10 s on this machine), which would dominate the quick reproduction.
    """

    def __init__(
        self, params, lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8
    ) -> None:
        self.params = [p for p in params]
        if not self.params:
            raise ValueError("params: expected at least one parameter to train")
        self.lr, (self.b1, self.b2), self.eps = lr, betas, eps
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        c1, c2 = 1 - self.b1**self.t, 1 - self.b2**self.t
        for p, m, v in zip(self.params, self.m, self.v, strict=True):
            if p.grad is None:
                continue
            m.mul_(self.b1).add_(p.grad, alpha=1 - self.b1)
            v.mul_(self.b2).addcmul_(p.grad, p.grad, value=1 - self.b2)
            p.addcdiv_(m, (v / c2).sqrt_().add_(self.eps), value=-self.lr / c1)


class MLP(nn.Module):
    """Backbone ``fc1 -> ReLU -> fc2 -> ReLU -> fc3``: (n, d_in) -> (n, n_classes) logits."""

    def __init__(self, d_in: int = 64, hidden: int = 128, n_classes: int = 10) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


@dataclass(frozen=True)
class TrainConfig:
    """Per-task training budget, shared by every method: full-batch Adam for ``steps`` steps."""

    steps: int = 200
    lr: float = 5e-3
    pretrain_steps: int = 300
    pretrain_lr: float = 1e-2

    def __post_init__(self) -> None:
        for name in ("steps", "pretrain_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: expected a positive int, got {getattr(self, name)!r}")
        for name in ("lr", "pretrain_lr"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: expected a positive learning rate, got {getattr(self, name)!r}")


def pretrain_backbone(x: torch.Tensor, y: torch.Tensor, cfg: TrainConfig, hidden: int = 128) -> MLP:
    model = MLP(x.shape[1], hidden, int(y.max()) + 1)
    opt = Adam(model.parameters(), lr=cfg.pretrain_lr)
    for _ in range(cfg.pretrain_steps):
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return model


@torch.inference_mode()
def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    return float((model(x).argmax(1) == y).float().mean())


def average_accuracy(R: np.ndarray) -> float:
    """``mean_j R[T-1, j]`` of a (T, T) accuracy matrix."""
    R = _check_R(R)
    return float(R[-1].mean())


def backward_transfer(R: np.ndarray) -> float:
    """``mean_{j < T-1} (R[T-1, j] - R[j, j])``; 0 for a single task."""
    R = _check_R(R)
    T = R.shape[0]
    if T == 1:
        return 0.0
    return float(np.mean(R[-1, :-1] - np.diag(R)[:-1]))


def _check_R(R: np.ndarray) -> np.ndarray:
    R = np.asarray(R, dtype=float)
    if R.ndim != 2 or R.shape[0] != R.shape[1] or R.shape[0] == 0:
        raise ValueError(f"R: expected a square (T, T) accuracy matrix, got shape {R.shape}")
    if np.isnan(np.tril(R)).any():
        raise ValueError("R: lower triangle (accuracy on seen tasks) contains NaN")
    return R


@dataclass
class StreamResult:
    R: np.ndarray  # (T, T), NaN above the diagonal
    params: list[int]  # stored adapter parameters after each task
    train_s: list[float]  # seconds of training per task
    merge_s: list[float]  # seconds of end_task (merge/freeze) per task
    orth_error: float  # max |A_t V| seen after training (PM-LoRA), 0 for others


def run_stream(
    backbone: nn.Module,
    stream: ContinualStream,
    make: Callable[[nn.Module], ContinualAdapter],
    cfg: TrainConfig,
) -> StreamResult:
    """Train one continual method over the stream on a copy of ``backbone``; return its matrix ``R``."""
    adapter = make(copy.deepcopy(backbone))
    T = len(stream.tasks)
    R = np.full((T, T), np.nan)
    params, train_s, merge_s, orth = [], [], [], 0.0
    for i, task in enumerate(stream.tasks):
        adapter.begin_task()
        opt = Adam(list(adapter.trainable_parameters()), lr=cfg.lr)
        t0 = time.perf_counter()
        for _ in range(cfg.steps):
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(adapter(task.x_train), task.y_train) + adapter.penalty()
            loss.backward()
            opt.step()
        train_s.append(time.perf_counter() - t0)
        if hasattr(adapter, "orthogonality_error"):
            orth = max(orth, adapter.orthogonality_error())
        t0 = time.perf_counter()
        adapter.end_task()
        merge_s.append(time.perf_counter() - t0)
        params.append(adapter.stored_parameters())
        for j in range(i + 1):
            if isinstance(adapter, PerTaskLoRA):
                adapter.select(j)
            R[i, j] = accuracy(adapter, stream.tasks[j].x_test, stream.tasks[j].y_test)
        if isinstance(adapter, PerTaskLoRA):
            adapter.select(None)
    return StreamResult(R, params, train_s, merge_s, orth)
