"""Small MLP classifiers trained with PENEX or a cross-entropy baseline, at equal budget.

Every method trains the same architecture (``D -> H -> H -> C`` ReLU MLP, dropout optional) with
full-batch Adam for the same number of steps; only the objective (and, for the dropout / weight-decay
baselines, the network or optimiser) differs.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .baselines import confidence_penalty_loss
from .loss import PENEXLoss
from .readout import penex_probabilities

__all__ = [
    "METHODS",
    "MLP",
    "GridMLP",
    "Method",
    "TrainConfig",
    "accuracy",
    "make_objective",
    "make_train_step",
    "train_classifier",
    "train_grid",
]

METHODS = ("ce", "label_smoothing", "confidence_penalty", "dropout", "weight_decay", "penex")


@dataclass(frozen=True)
class Method:
    """A training objective: ``name`` in :data:`METHODS` and its one hyper-parameter ``value``.

    ``value`` is: label-smoothing epsilon, confidence-penalty beta, dropout probability, AdamW weight
    decay, or PENEX sensitivity alpha (with the authors' default running penalty); ignored for plain
    ``ce``.
    """

    name: str
    value: float = 0.0

    def __post_init__(self) -> None:
        if self.name not in METHODS:
            raise ValueError(f"Method.name: expected one of {METHODS}, got {self.name!r}")
        if not math.isfinite(self.value) or self.value < 0:
            raise ValueError(f"Method.value: expected a non-negative finite number, got {self.value!r}")
        if self.name == "penex" and self.value <= 0:
            raise ValueError("Method.value: PENEX needs a positive sensitivity")


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation budget shared by every method."""

    hidden: int = 128
    steps: int = 300
    lr: float = 3e-3

    def __post_init__(self) -> None:
        if self.hidden < 1 or self.steps < 1 or not self.lr > 0:
            raise ValueError("TrainConfig: expected hidden >= 1, steps >= 1, lr > 0")


class MLP(nn.Module):
    """``(N, D) -> (N, C)`` two-hidden-layer ReLU network with optional dropout."""

    def __init__(self, d_in: int, n_classes: int, hidden: int = 128, dropout: float = 0.0) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_in, hidden),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, n_classes),
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


def make_objective(method: Method):
    """``(logits, target) -> scalar loss`` for a method (dropout / weight decay use plain CE).

    PENEX: a fresh :class:`PENEXLoss` (sensitivity ``method.value``, the authors' running penalty), so
    every network trained keeps its own running penalty.
    """
    if method.name == "penex":
        return PENEXLoss(sensitivity=method.value)
    if method.name == "label_smoothing":
        return lambda f, y: F.cross_entropy(f, y, label_smoothing=method.value)
    if method.name == "confidence_penalty":
        return lambda f, y: confidence_penalty_loss(f, y, beta=method.value)
    return F.cross_entropy


def predict_proba(model: nn.Module, x: Tensor, method: Method) -> Tensor:
    """Class probabilities with the method's read-out (PENEX: softmax((1 + alpha) f))."""
    model.eval()
    with torch.inference_mode():
        f = model(x)
    if method.name == "penex":
        return penex_probabilities(f, method.value)
    return torch.softmax(f, dim=1)


def accuracy(model: nn.Module, x: Tensor, y: Tensor) -> float:
    model.eval()
    with torch.inference_mode():
        return float((model(x).argmax(dim=1) == y).double().mean())


class _AdamW:
    """Minimal AdamW (Loshchilov & Hutter 2019; torch's defaults betas (0.9, 0.999), eps 1e-8).

    Written out because constructing ``torch.optim.AdamW`` imports TorchDynamo (tens of seconds on a
    busy 2-core machine), which alone would break the < 30 s quick-run budget.
    """

    def __init__(self, params: list[Tensor], lr: float, weight_decay: float | Tensor = 0.0) -> None:
        self.params, self.lr = params, lr
        self.decay = 1 - lr * weight_decay  # a float, or a (G, 1, 1) tensor for a GridMLP
        self.use_decay = bool(torch.as_tensor(weight_decay).abs().sum() > 0)
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]
        self.t = 0

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        b1, b2, eps = 0.9, 0.999, 1e-8
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t
        for p, m, v in zip(self.params, self.m, self.v, strict=True):
            if p.grad is None:
                continue
            if self.use_decay:
                p.mul_(self.decay)
            m.mul_(b1).add_(p.grad, alpha=1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            p.addcdiv_(m, (v / c2).sqrt_().add_(eps), value=-self.lr / c1)


def make_train_step(
    x: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    method: Method,
    config: TrainConfig,
    seed: int,
    device: str | torch.device = "cpu",
) -> tuple[MLP, Callable[[], None]]:
    """A fresh :class:`MLP` (initialised from ``seed``) and ``step()``: one full-batch AdamW step.

    :func:`train_classifier` runs ``config.steps`` of these steps; the experiment's step-cost claim times
    the same ``step`` through :func:`paperworks.core.bench.compare`.
    """
    torch.manual_seed(seed)
    dropout = method.value if method.name == "dropout" else 0.0
    model = MLP(x.shape[1], n_classes, config.hidden, dropout).to(device)
    wd = method.value if method.name == "weight_decay" else 0.0
    opt = _AdamW(list(model.parameters()), lr=config.lr, weight_decay=wd)
    objective = make_objective(method)
    xt, yt = torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)
    model.train()
    cuda = torch.device(device).type == "cuda"

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        loss = objective(model(xt), yt)
        loss.backward()
        opt.step()
        if cuda:  # a timed step ends when the device is done
            torch.cuda.synchronize(device)

    return model, step


def train_classifier(
    x: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    method: Method,
    config: TrainConfig,
    seed: int,
    device: str | torch.device = "cpu",
) -> tuple[MLP, float]:
    """Train an :class:`MLP` with ``method``; returns the model and the mean seconds per step."""
    model, step = make_train_step(x, y, n_classes, method, config, seed, device)
    start = time.perf_counter()
    for _ in range(config.steps):
        step()
    per_step = (time.perf_counter() - start) / config.steps
    model.eval()
    return model, per_step


class GridMLP(nn.Module):
    """``G`` independent :class:`MLP` s evaluated in one batched pass: ``(N, D) -> (G, N, C)``.

    Group ``g`` has its own weights (all initialised identically from ``seed``) and dropout
    probability ``dropout[g]``; training the sum of the ``G``
    objectives with an element-wise optimiser trains the ``G`` networks independently, so a whole
    hyper-parameter grid costs about one run on a small CPU.
    """

    def __init__(self, d_in: int, n_classes: int, hidden: int, dropout: list[float], seed: int) -> None:
        super().__init__()
        g = len(dropout)
        gen = torch.Generator().manual_seed(seed)
        dims = [(d_in, hidden), (hidden, hidden), (hidden, n_classes)]
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        # nn.Linear's default init U(-1/sqrt(fan_in), 1/sqrt(fan_in)), drawn once and shared by all
        # members: every method starts from the same weights (a paired comparison).
        for fan_in, fan_out in dims:
            bound = 1.0 / math.sqrt(fan_in)
            w0 = (torch.rand(1, fan_in, fan_out, generator=gen) * 2 - 1) * bound
            b0 = (torch.rand(1, 1, fan_out, generator=gen) * 2 - 1) * bound
            self.weights.append(nn.Parameter(w0.repeat(g, 1, 1)))
            self.biases.append(nn.Parameter(b0.repeat(g, 1, 1)))
        drop_idx = [i for i, p in enumerate(dropout) if p > 0]
        self.register_buffer("drop_idx", torch.tensor(drop_idx, dtype=torch.long))
        keep = torch.tensor([1.0 - dropout[i] for i in drop_idx], dtype=torch.float32)
        self.register_buffer("keep", keep.view(-1, 1, 1))

    def forward(self, x: Tensor) -> Tensor:
        h = x
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = torch.matmul(h, w) + b
            if i < last:
                h = torch.relu(h)
                if self.training and self.drop_idx.numel():  # masks only for the dropout groups
                    sub = h.index_select(0, self.drop_idx)
                    mask = torch.rand(sub.shape, dtype=sub.dtype, device=sub.device) < self.keep
                    h = h.index_copy(0, self.drop_idx, sub * mask / self.keep)
        return h

    def member(self, g: int) -> MLP:
        """Group ``g`` as a stand-alone :class:`MLP` (eval mode, no dropout)."""
        d_in, hidden = self.weights[0].shape[1:]
        model = MLP(d_in, self.weights[-1].shape[2], hidden).to(self.weights[0].device)
        linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
        with torch.no_grad():
            for lin, w, b in zip(linears, self.weights, self.biases, strict=True):
                lin.weight.copy_(w[g].T)
                lin.bias.copy_(b[g, 0])
        return model.eval()


def train_grid(
    x: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    methods: list[Method],
    config: TrainConfig,
    seed: int,
    device: str | torch.device = "cpu",
) -> GridMLP:
    """Train one network per method (same initialisation seed stream, same data, same steps) on ``device``."""
    if not methods:
        raise ValueError("methods: expected at least one Method")
    torch.manual_seed(seed)
    dropout = [m.value if m.name == "dropout" else 0.0 for m in methods]
    model = GridMLP(x.shape[1], n_classes, config.hidden, dropout, seed).to(device)
    wd = torch.tensor([m.value if m.name == "weight_decay" else 0.0 for m in methods]).view(-1, 1, 1)
    opt = _AdamW(list(model.parameters()), lr=config.lr, weight_decay=wd.to(device))
    objectives = [make_objective(m) for m in methods]
    xt, yt = torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)
    model.train()
    for _ in range(config.steps):
        opt.zero_grad()
        logits = model(xt)
        loss = sum(obj(logits[g], yt) for g, obj in enumerate(objectives))
        loss.backward()
        opt.step()
    return model.eval()
