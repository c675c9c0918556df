"""The two-task toy problem of CAGrad (Liu et al. 2021), with the loss-scale imbalance of Nash-MTL/FAMO.

Two losses of a 2-D parameter ``x = (x1, x2)``. For ``x2 > 0`` they are log-valleys
``log(max(|0.5 (-x1 - 7) - tanh(-x2)|, 5e-6)) + 6`` and
``log(max(|0.5 (-x1 + 3) + tanh(-x2) + 2|, 5e-6)) + 6``
weighted by ``tanh(x2 / 2)``; for ``x2 < 0`` they are quadratic bowls
``((-x1 +- 7)^2 + 0.1 (-x2 - 8)^2) / 10 - 20`` weighted by ``tanh(-x2 / 2)``. The first loss is
multiplied by ``scale`` (0.1 in the Nash-MTL/FAMO experiments), which makes linear scalarisation and
plain MGDA favour the larger-scale task. Both unscaled losses are bounded below by -20 (the log part is
at least ``log(5e-6) + 6 > -20``), so ``loss_floor = (-20 scale, -20)`` is an exact lower bound.
"""

from __future__ import annotations

import numpy as np
import torch

from ._checks import check_int, finite_array, positive_number

__all__ = [
    "TOY_STARTS",
    "pareto_front",
    "pareto_stationarity",
    "toy_loss_floor",
    "toy_losses",
    "toy_losses_and_grads",
]

#: The five starting points of the Nash-MTL/FAMO toy figures.
TOY_STARTS = ((-8.5, 7.5), (0.0, 0.0), (9.0, 9.0), (-7.5, -0.5), (9.0, -1.0))
_LOWER = 5e-6


def toy_losses(x: torch.Tensor, scale: float = 0.1) -> torch.Tensor:
    """Losses of the toy problem: ``x`` ``(n, 2)`` -> ``(n, 2)`` (task 1 scaled by ``scale``)."""
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(f"x: expected a floating-point (n, 2) tensor, got {type(x).__name__}")
    if x.ndim != 2 or x.shape[-1] != 2 or x.shape[0] == 0:
        raise ValueError(f"x: expected shape (n, 2) with n >= 1, got {tuple(x.shape)}")
    if not bool(torch.isfinite(x).all()):
        raise ValueError("x: expected finite values")
    scale = positive_number(scale, "scale")
    x1, x2 = x[:, 0], x[:, 1]
    th = torch.tanh(-x2)
    f1 = torch.clamp((0.5 * (-x1 - 7) - th).abs(), _LOWER).log() + 6
    f2 = torch.clamp((0.5 * (-x1 + 3) + th + 2).abs(), _LOWER).log() + 6
    c1 = torch.clamp(torch.tanh(x2 * 0.5), 0)
    f1_sq = ((-x1 + 7).pow(2) + 0.1 * (-x2 - 8).pow(2)) / 10 - 20
    f2_sq = ((-x1 - 7).pow(2) + 0.1 * (-x2 - 8).pow(2)) / 10 - 20
    c2 = torch.clamp(torch.tanh(-x2 * 0.5), 0)
    return torch.stack([(f1 * c1 + f1_sq * c2) * scale, f2 * c1 + f2_sq * c2], dim=1)


def toy_losses_and_grads(x: np.ndarray, scale: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """Losses ``(n, 2)`` and analytic gradients ``(n, 2 tasks, 2 coords)`` of the toy in NumPy.

    Matches :func:`toy_losses` (checked against autograd in the tests) except on the kinks: the
    clamps ``max(tanh(+-x2 / 2), 0)`` pass their gradient at exactly ``x2 = 0``, as the reference-era
    ``torch.clamp`` did; current torch gives 0 there, which would freeze the start ``(0, 0)``.
    """
    x = finite_array(x, "x", shape=(None, 2)).astype(np.float64, copy=False)
    scale = positive_number(scale, "scale")
    x1, x2 = x[:, 0], x[:, 1]
    th = np.tanh(x2)
    sech2 = 1.0 - th**2
    a1 = -0.5 * x1 - 3.5 + th
    a2 = -0.5 * x1 + 3.5 - th
    big1, big2 = np.abs(a1) > _LOWER, np.abs(a2) > _LOWER
    l1 = np.log(np.maximum(np.abs(a1), _LOWER)) + 6
    l2 = np.log(np.maximum(np.abs(a2), _LOWER)) + 6
    inv1 = np.where(big1, 1.0 / np.where(big1, a1, 1.0), 0.0)
    inv2 = np.where(big2, 1.0 / np.where(big2, a2, 1.0), 0.0)
    dl1 = np.stack([-0.5 * inv1, sech2 * inv1], 1)
    dl2 = np.stack([-0.5 * inv2, -sech2 * inv2], 1)
    t_half = np.tanh(0.5 * x2)
    dt_half = 0.5 * (1.0 - t_half**2)
    c1 = np.maximum(t_half, 0.0)
    c2 = np.maximum(-t_half, 0.0)
    dc1 = np.where(t_half >= 0, dt_half, 0.0)
    dc2 = np.where(t_half <= 0, -dt_half, 0.0)
    q1 = ((7 - x1) ** 2 + 0.1 * (x2 + 8) ** 2) / 10 - 20
    q2 = ((x1 + 7) ** 2 + 0.1 * (x2 + 8) ** 2) / 10 - 20
    dq1 = np.stack([-0.2 * (7 - x1), 0.02 * (x2 + 8)], 1)
    dq2 = np.stack([0.2 * (x1 + 7), 0.02 * (x2 + 8)], 1)
    zero = np.zeros_like(x1)
    f1 = l1 * c1 + q1 * c2
    f2 = l2 * c1 + q2 * c2
    g1 = dl1 * c1[:, None] + dq1 * c2[:, None] + np.stack([zero, l1 * dc1 + q1 * dc2], 1)
    g2 = dl2 * c1[:, None] + dq2 * c2[:, None] + np.stack([zero, l2 * dc1 + q2 * dc2], 1)
    return np.stack([f1 * scale, f2], 1), np.stack([g1 * scale, g2], 1)


def toy_loss_floor(scale: float = 0.1) -> np.ndarray:
    """Exact lower bounds ``(2,)`` of the two toy losses."""
    scale = positive_number(scale, "scale")
    return np.array([-20.0 * scale, -20.0])


def pareto_stationarity(g1: np.ndarray, g2: np.ndarray) -> np.ndarray:
    """Scale-free Pareto-stationarity ``min_{w in [0,1]} ||w u1 + (1 - w) u2||`` of unit gradients.

    ``g1``, ``g2``: ``(n, 2)`` gradients of the two tasks; ``u_i = g_i / ||g_i||``. 0 exactly at
    Pareto-stationary points (opposite gradients), 1 when the gradients agree; a zero gradient counts
    as stationary.
    """
    g1 = finite_array(g1, "g1", ndim=2)
    g2 = finite_array(g2, "g2", ndim=2)
    if g1.shape != g2.shape:
        raise ValueError(f"g2: expected the shape of g1 {g1.shape}, got {g2.shape}")
    n1 = np.linalg.norm(g1, axis=1, keepdims=True)
    n2 = np.linalg.norm(g2, axis=1, keepdims=True)
    out = np.zeros(g1.shape[0])
    ok = (n1[:, 0] > 0) & (n2[:, 0] > 0)
    u1, u2 = g1[ok] / n1[ok], g2[ok] / n2[ok]
    diff = u1 - u2
    dd = (diff**2).sum(1)
    w = np.where(dd > 0, np.clip(-((u2 * diff).sum(1)) / np.where(dd > 0, dd, 1.0), 0.0, 1.0), 0.5)
    out[ok] = np.linalg.norm(w[:, None] * u1 + (1 - w[:, None]) * u2, axis=1)
    return out


def pareto_front(scale: float = 0.1, grid: int = 400, lim: float = 10.0) -> np.ndarray:
    """Non-dominated loss pairs ``(m, 2)`` of the toy on a ``grid x grid`` box ``[-lim, lim]^2``."""
    scale = positive_number(scale, "scale")
    grid = check_int(grid, "grid", 2)
    lim = positive_number(lim, "lim")
    t = torch.linspace(-lim, lim, grid, dtype=torch.float64)
    X = torch.stack(torch.meshgrid(t, t, indexing="ij"), dim=-1).reshape(-1, 2)
    F = toy_losses(X, scale).numpy()
    F = F[np.argsort(F[:, 0], kind="stable")]
    best = np.minimum.accumulate(F[:, 1])
    keep = np.r_[True, F[1:, 1] < best[:-1]]
    return F[keep]
