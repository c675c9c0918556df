"""Training loops of the reproduction: the two-task toy and multi-task MLPs with a shared trunk.

Both loops compute the per-task gradients of the shared parameters once per step, ask the method for its
weights ``beta`` (from the Gram matrix and the losses) and set the shared gradient to
``sum_i beta_i g_i``; in the MLPs every task head is trained on its own loss's gradient (unweighted, as
in MGDA-UB and LibMTL), the same for every method, so only the shared update differs between methods.
They also record the worst-task normalized improvement rate of each direction on the training losses
(:func:`~paperworks.maxmin_mtl.rates.best_scaled_worst_rate`, gap curvature) as a diagnostic: it is
max-min's own per-step objective, so it is not used as evidence.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from paperworks.core import torch_threads

from ._checks import check_int, finite_array, positive_number, real_vector
from .baselines import FAMO, METHODS, make_method
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
    one_of_methods(method)
    x = finite_array(starts, "starts", shape=(None, 2)).astype(np.float64, copy=True)
    steps = check_int(steps, "steps", 1)
    rate_every = check_int(rate_every, "rate_every", 1)
    lr = positive_number(lr, "lr")
    scale = positive_number(scale, "scale")
    seed = check_int(seed, "seed", 0)
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
    ``train_losses``: ``(k,)`` training losses after the last step; ``worst_rate``: mean over steps of
    the direction's worst-task normalized improvement on the training losses (a diagnostic; nan for
    one task); ``excluded_steps``: steps at which max-min left a task out (loss at its floor)."""

    metrics: np.ndarray
    train_losses: np.ndarray
    worst_rate: float
    excluded_steps: int = 0


def one_of_methods(method: str) -> str:
    from ._checks import one_of

    return one_of(method, "method", METHODS)


def run_mtl(
    data: MTLData,
    method: str,
    *,
    tasks: list[int] | None = None,
    steps: int = 300,
    lr: float = 3e-3,
    hidden: int = 64,
    seed: int = 0,
    loss_floor: float | np.ndarray = 0.0,
    device: str = "cpu",
) -> MTLResult:
    """Full-batch Adam training of a shared-trunk MLP on ``tasks`` (default: all) with the named method.

    The shared trunk's gradient is the method's update; each head is trained on its own loss's
    gradient. ``loss_floor``: scalar or one lower bound per task in ``tasks`` (max-min's gap model and
    FAMO; max-min leaves a task out, with ``below_floor="skip"``, while its loss is at or below it).
    """
    if not isinstance(data, MTLData):
        raise TypeError(f"data: expected an MTLData, got {type(data).__name__}")
    one_of_methods(method)
    if tasks is None:
        tasks = list(range(data.n_tasks))
    else:
        tasks = [check_int(t, "tasks", 0) for t in tasks]
        if not tasks or max(tasks) >= data.n_tasks or len(set(tasks)) != len(tasks):
            raise ValueError(f"tasks: expected distinct task indices in [0, {data.n_tasks}), got {tasks}")
    steps = check_int(steps, "steps", 1)
    hidden = check_int(hidden, "hidden", 1)
    seed = check_int(seed, "seed", 0)
    lr = positive_number(lr, "lr")
    if np.ndim(loss_floor) == 0:
        floor = np.full(len(tasks), float(real_vector([loss_floor], "loss_floor")[0]))
    else:
        floor = real_vector(loss_floor, "loss_floor", len(tasks))
    if not isinstance(device, str):
        raise TypeError(f"device: expected a device string such as 'cpu', got {device!r}")
    with torch_threads(1):  # tiny matrices: one thread is several times faster on a busy machine
        return _run_mtl(data, method, tasks, steps, lr, hidden, seed, floor, torch.device(device))


def _run_mtl(data, method, tasks, steps, lr, hidden, seed, floor, device) -> MTLResult:
    k = len(tasks)
    torch.manual_seed(seed)
    kinds = [data.kinds[t] for t in tasks]
    heads = [1 if kd == "regression" else data.n_classes[t] for t, kd in zip(tasks, kinds)]
    net = _MTLNet(
        data.X_train.shape[1], heads, hidden, [data.y_mean[t] for t in tasks], [data.y_std[t] for t in tasks]
    ).to(device)
    Xtr = torch.as_tensor(data.X_train, dtype=torch.float32, device=device)
    Xte = torch.as_tensor(data.X_test, dtype=torch.float32, device=device)
    Ytr = [data.target(t, "train").to(device) for t in tasks]
    Yte = [data.target(t, "test").to(device) for t in tasks]
    shared = list(net.trunk.parameters())
    extra = {"below_floor": "skip"} if method == "maxmin" else {}
    wm = make_method(method, k, seed=seed, loss_floor=floor, **extra)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    rates = []
    excluded = 0
    for _ in range(steps):
        opt.zero_grad()
        L = _task_losses(net(Xtr), Ytr, kinds)
        lv = L.detach().double().cpu().numpy()
        if k > 1:
            rows = []
            for i in range(k):
                gs = torch.autograd.grad(L[i], shared, retain_graph=True)
                rows.append(torch.cat([g.reshape(-1) for g in gs]))
            G = torch.stack(rows).double()
            K = (G @ G.T).cpu().numpy()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", RuntimeWarning)
                beta, info = wm.weights(K if wm.needs_gradients else None, lv)
            excluded += bool(info.get("excluded"))
            for w in caught:
                if "no improvement to serve" not in str(w.message) and "update is zero" not in str(w.message):
                    warnings.warn(w.message, w.category, stacklevel=2)
            lam = task_curvatures(np.diag(K), lv, "gap", 0.0)
            rates.append(best_scaled_worst_rate(K, lam, beta))
            u = torch.as_tensor(beta, dtype=G.dtype, device=G.device) @ G
        L.sum().backward()  # heads: their own loss's gradient; the trunk's is replaced below
        if k > 1:
            offset = 0
            for p in shared:
                p.grad = u[offset : offset + p.numel()].reshape(p.shape).to(p.dtype)
                offset += p.numel()
        opt.step()
        if isinstance(wm, FAMO):
            with torch.no_grad():
                wm.update(_task_losses(net(Xtr), Ytr, kinds).double().cpu().numpy())
    with torch.no_grad():
        metrics = _metrics(net(Xte), Yte, kinds)
        train = _task_losses(net(Xtr), Ytr, kinds).double().cpu().numpy()
    return MTLResult(metrics, train, float(np.mean(rates)) if rates else float("nan"), excluded)
