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

from paperworks.core.validate import positive_float, positive_int

from .adapter import ContinualAdapter
from .baselines import PerTaskLoRA
from .data import ContinualStream

__all__ = [
    "MLP",
    "StreamResult",
    "TrainConfig",
    "average_accuracy",
    "backward_transfer",
    "pretrain_backbone",
    "run_stream",
]


class MLP(nn.Module):
    """Backbone ``fc1 -> ReLU -> fc2 -> ReLU -> fc3``: (n, d_in) -> (n, n_classes) logits."""

    def __init__(self, d_in: int = 64, hidden: int = 128, n_classes: int = 10) -> None:
        super().__init__()
        d_in, hidden = positive_int(d_in, "d_in"), positive_int(hidden, "hidden")
        n_classes = positive_int(n_classes, "n_classes")
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


@dataclass(frozen=True)
class TrainConfig:
    """Per-task training budget, shared by every method: full-batch ``torch.optim.Adam`` for ``steps``
    steps of learning rate ``lr``; the backbone's pretraining: ``pretrain_steps`` at ``pretrain_lr``."""

    steps: int = 200
    lr: float = 5e-3
    pretrain_steps: int = 300
    pretrain_lr: float = 1e-2

    def __post_init__(self) -> None:
        for name in ("steps", "pretrain_steps"):
            positive_int(getattr(self, name), name)
        for name in ("lr", "pretrain_lr"):
            object.__setattr__(self, name, positive_float(getattr(self, name), name))


def _check_xy(x: object, y: object, xname: str = "x", yname: str = "y") -> None:
    if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(f"{xname}: expected a non-empty float tensor of shape (n, d), got {_describe(x)}")
    if not torch.isfinite(x).all():
        raise ValueError(f"{xname}: contains NaN or inf")
    if not isinstance(y, torch.Tensor) or y.dtype != torch.long or y.ndim != 1:
        raise ValueError(f"{yname}: expected an int64 label tensor of shape (n,), got {_describe(y)}")
    if y.shape[0] != x.shape[0]:
        raise ValueError(f"{yname}: expected {x.shape[0]} labels (one per row of {xname}), got {y.shape[0]}")
    if int(y.min()) < 0:
        raise ValueError(f"{yname}: expected non-negative class labels, got min {int(y.min())}")


def _describe(t: object) -> str:
    if isinstance(t, torch.Tensor):
        return f"{t.dtype} of shape {tuple(t.shape)}"
    return type(t).__name__


def pretrain_backbone(
    x: torch.Tensor, y: torch.Tensor, cfg: TrainConfig | None = None, hidden: int = 128
) -> MLP:
    """Train an :class:`MLP` (d -> hidden -> hidden -> classes) on ``x`` (n, d) float, ``y`` (n,)
    int64 with full-batch ``torch.optim.Adam`` (``cfg.pretrain_steps`` at ``cfg.pretrain_lr``), on
    ``x``'s device."""
    cfg = TrainConfig() if cfg is None else cfg
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"cfg: expected a TrainConfig, got {type(cfg).__name__}")
    _check_xy(x, y)
    hidden = positive_int(hidden, "hidden")
    model = MLP(x.shape[1], hidden, int(y.max()) + 1).to(device=x.device, dtype=x.dtype)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.pretrain_lr)
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
    try:
        R = np.asarray(R, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"R: expected a square (T, T) array of accuracies, got {type(R).__name__}") from None
    if R.ndim != 2 or R.shape[0] != R.shape[1] or R.shape[0] == 0:
        raise ValueError(f"R: expected a square (T, T) accuracy matrix, got shape {R.shape}")
    low = R[np.tril_indices(R.shape[0])]
    if not np.isfinite(low).all():
        raise ValueError("R: lower triangle (accuracy on seen tasks) contains NaN or inf")
    if low.min() < 0.0 or low.max() > 1.0:
        raise ValueError(f"R: expected accuracies in [0, 1], got min {low.min():.4g}, max {low.max():.4g}")
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
    """Train one continual method over the stream on a copy of ``backbone``; return its matrix ``R``.

    ``make``: model -> :class:`ContinualAdapter`. Per task: ``begin_task(inputs=x_train)``,
    ``cfg.steps`` full-batch ``torch.optim.Adam`` steps on cross-entropy + the method's penalty,
    ``end_task()``, then test accuracy on every task seen (the oracle id for :class:`PerTaskLoRA`).
    The stream's tensors must be on the backbone's device.
    """
    if not isinstance(backbone, nn.Module):
        raise TypeError(f"backbone: expected a torch.nn.Module, got {type(backbone).__name__}")
    if not isinstance(stream, ContinualStream):
        raise TypeError(f"stream: expected a ContinualStream, got {type(stream).__name__}")
    if not callable(make):
        raise TypeError(f"make: expected a callable model -> ContinualAdapter, got {type(make).__name__}")
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"cfg: expected a TrainConfig, got {type(cfg).__name__}")
    adapter = make(copy.deepcopy(backbone))
    if not isinstance(adapter, ContinualAdapter):
        raise TypeError(f"make: expected it to return a ContinualAdapter, got {type(adapter).__name__}")
    T = len(stream.tasks)
    R = np.full((T, T), np.nan)
    params, train_s, merge_s, orth = [], [], [], 0.0
    for i, task in enumerate(stream.tasks):
        adapter.begin_task(inputs=task.x_train)
        opt = torch.optim.Adam(list(adapter.trainable_parameters()), lr=cfg.lr)
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
