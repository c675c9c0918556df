"""Training loops of the reproduction: the two-task toy and multi-task MLPs with a shared trunk.

Both loops compute the per-task gradients of the shared parameters once per step, ask the method for its
weights ``beta`` (from the Gram matrix and the losses), set the shared gradient to ``sum_i beta_i g_i``,
and record the worst-task normalized improvement rate of that direction
(:func:`~paperworks.maxmin_mtl.rates.best_scaled_worst_rate`, gap curvature), so every method is judged
by the same yardstick.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from paperworks.core import torch_threads

from .baselines import FAMO, make_method
from .data import MTLData
from .rates import best_scaled_worst_rate, task_curvatures
from .toy import pareto_stationarity, toy_loss_floor, toy_losses_and_grads

__all__ = ["MTLResult", "ToyResult", "run_mtl", "run_toy"]


@dataclass
class ToyResult:
    """``positions``/``losses``: ``(steps + 1, n_starts, 2)``; ``stationarity``: ``(n_starts,)`` at the end;
    ``worst_rate``: mean over steps and starts of the direction's worst-task normalized improvement."""

    positions: np.ndarray
    losses: np.ndarray
    stationarity: np.ndarray
    worst_rate: float


def run_toy(
    method: str,
    starts: np.ndarray,
    *,
    steps: int = 2000,
    lr: float = 0.01,
    scale: float = 0.1,
    seed: int = 0,
    rate_every: int = 10,
) -> ToyResult:
    """Adam (NumPy, the torch defaults) on the toy from each start with the named weighting method.

    One method instance per start; the direction's worst-task rate is recorded every ``rate_every``
    steps. ``positions``/``losses`` keep every step.
    """
    x = np.array(starts, dtype=np.float64)
    S = x.shape[0]
    floor = toy_loss_floor(scale)
    methods = [make_method(method, 2, seed=seed + s, loss_floor=floor) for s in range(S)]
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    pos, los, rates = [], [], []
    for step in range(steps + 1):
        F, G = toy_losses_and_grads(x, scale)
        pos.append(x.copy())
        los.append(F)
        if step == steps:
            break
        upd = np.zeros((S, 2))
        for s in range(S):
            K = G[s] @ G[s].T
            beta, _ = methods[s].weights(K, F[s])
            upd[s] = beta @ G[s]
            if step % rate_every == 0:
                lam = task_curvatures(np.diag(K), F[s], "gap", floor)
                rates.append(best_scaled_worst_rate(K, lam, beta))
        t = step + 1
        m = 0.9 * m + 0.1 * upd
        v = 0.999 * v + 0.001 * upd**2
        x = x - lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
        if isinstance(methods[0], FAMO):
            Fn, _ = toy_losses_and_grads(x, scale)
            for s in range(S):
                methods[s].update(Fn[s])
    stat = pareto_stationarity(G[:, 0], G[:, 1])
    r = np.asarray(rates, dtype=np.float64)
    return ToyResult(np.stack(pos), np.stack(los), stat, float(np.nanmean(r)) if r.size else float("nan"))


class _MTLNet(nn.Module):
    """Shared two-layer ReLU trunk and one linear head per task; regression heads output
    ``mean + std * (w^T z + b)`` with the target's training statistics (fixed), so the losses stay in the
    targets' units while every head starts at the right scale."""

    def __init__(self, n_in: int, heads: list[int], hidden: int, mean: list[float], std: list[float]) -> None:
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.heads = nn.ModuleList(nn.Linear(hidden, h) for h in heads)
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        z = self.trunk(x)
        return [self.mean[i] + self.std[i] * h(z) for i, h in enumerate(self.heads)]


def _task_losses(outs: list[torch.Tensor], Y: list[torch.Tensor], kinds: list[str]) -> torch.Tensor:
    ls = []
    for o, y, kind in zip(outs, Y, kinds):
        if kind == "regression":
            ls.append(((o[:, 0] - y) ** 2).mean())
        else:
            ls.append(nn.functional.cross_entropy(o, y))
    return torch.stack(ls)


def _metrics(outs: list[torch.Tensor], Y: list[torch.Tensor], kinds: list[str]) -> np.ndarray:
    m = []
    for o, y, kind in zip(outs, Y, kinds):
        if kind == "regression":
            m.append(float(((o[:, 0] - y) ** 2).mean()))
        else:
            m.append(float((o.argmax(1) == y).float().mean()))
    return np.asarray(m)


@dataclass
class MTLResult:
    """``metrics``: ``(k,)`` test metric per task (MSE for regression, accuracy for classification);
    ``worst_rate``: mean over steps of the direction's worst-task normalized improvement
    (nan for one task)."""

    metrics: np.ndarray
    worst_rate: float


def run_mtl(
    data: MTLData,
    method: str,
    *,
    tasks: list[int] | None = None,
    steps: int = 300,
    lr: float = 3e-3,
    hidden: int = 64,
    seed: int = 0,
) -> MTLResult:
    """Full-batch Adam training of a shared-trunk MLP on ``tasks`` (default: all) with the named method."""
    with torch_threads(1):  # tiny matrices: one thread is several times faster on a busy machine
        return _run_mtl(data, method, tasks=tasks, steps=steps, lr=lr, hidden=hidden, seed=seed)


def _run_mtl(data: MTLData, method: str, *, tasks, steps, lr, hidden, seed) -> MTLResult:
    tasks = list(range(data.n_tasks)) if tasks is None else list(tasks)
    k = len(tasks)
    torch.manual_seed(seed)
    kinds = [data.kinds[t] for t in tasks]
    heads = [1 if kd == "regression" else data.n_classes[t] for t, kd in zip(tasks, kinds)]
    net = _MTLNet(
        data.X_train.shape[1], heads, hidden, [data.y_mean[t] for t in tasks], [data.y_std[t] for t in tasks]
    )
    Xtr = torch.as_tensor(data.X_train, dtype=torch.float32)
    Xte = torch.as_tensor(data.X_test, dtype=torch.float32)
    Ytr = [data.target(t, "train") for t in tasks]
    Yte = [data.target(t, "test") for t in tasks]
    shared = list(net.trunk.parameters())
    wm = make_method(method, k, seed=seed)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    rates = []
    for _ in range(steps):
        opt.zero_grad()
        L = _task_losses(net(Xtr), Ytr, kinds)
        lv = L.detach().double().numpy()
        if wm.needs_gradients or k > 1:
            rows = []
            for i in range(k):
                gs = torch.autograd.grad(L[i], shared, retain_graph=True)
                rows.append(torch.cat([g.reshape(-1) for g in gs]))
            G = torch.stack(rows).double()
            K = (G @ G.T).numpy()
        else:
            K = None
        beta, _ = wm.weights(K if wm.needs_gradients else None, lv)
        if k > 1:
            lam = task_curvatures(np.diag(K), lv, "gap", 0.0)
            rates.append(best_scaled_worst_rate(K, lam, beta))
        (torch.as_tensor(beta, dtype=L.dtype) * L).sum().backward()
        opt.step()
        if isinstance(wm, FAMO):
            with torch.no_grad():
                wm.update(_task_losses(net(Xtr), Ytr, kinds).double().numpy())
    with torch.no_grad():
        metrics = _metrics(net(Xte), Yte, kinds)
    return MTLResult(metrics, float(np.mean(rates)) if rates else float("nan"))
