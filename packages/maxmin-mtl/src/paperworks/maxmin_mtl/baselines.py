"""Baselines behind the same interface: linear scalarisation, MGDA, PCGrad, CAGrad, Nash-MTL, FAMO.

Each is written from its paper's update rule as a weight vector ``beta`` over the task gradients, computed
from the Gram matrix ``K = G G^T`` (``k x k``), so they share :class:`~paperworks.maxmin_mtl.WeightMethod`'s
``backward`` and functional ``combine``:

* linear scalarisation: ``beta = 1`` (sum of losses);
* MGDA (Sener & Koltun 2018): min-norm point of the convex hull, ``min_{w in simplex} w^T K w``, by
  Frank-Wolfe with exact line search (max 250 iterations, as in the reference implementation);
* PCGrad (Yu et al. 2020): each gradient projected off every conflicting gradient in random order, the
  projected gradients summed; the projections act on coefficient vectors, so only ``K`` is needed;
* CAGrad (Liu et al. 2021): ``u = (g0 + (sqrt(phi) / ||g_w||) g_w) / (1 + c^2)`` with ``g0`` the mean
  gradient, ``phi = c^2 ||g0||^2`` and ``w = argmin_{simplex} g_w^T g0 + sqrt(phi) ||g_w||`` (SLSQP);
* Nash-MTL (Navon et al. 2022): ``K alpha = 1 / alpha``, ``alpha > 0`` -- the stationary point of the
  convex ``0.5 alpha^T K alpha - sum log alpha``, solved by damped Newton on ``K / ||K||_F`` (the
  reference normalises the Gram matrix the same way; it uses cvxpy sequential programs instead);
* FAMO (Liu et al. 2023): loss-only weights ``beta_i = z_i / (c (L_i - L_i*))``, ``z = softmax(xi)``,
  ``c = sum_j z_j / (L_j - L_j*)``; after the optimiser step ``update(new_losses)`` moves the logits
  ``xi`` by Adam (lr 0.025, weight decay ``gamma``) along ``J_softmax^T (log D_old - log D_new)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.optimize import minimize, minimize_scalar

from .weighting import WeightMethod, _check_losses

__all__ = [
    "FAMO",
    "MGDA",
    "CAGrad",
    "LinearScalarization",
    "NashMTL",
    "PCGrad",
    "cagrad_weights",
    "mgda_weights",
    "nash_mtl_weights",
    "pcgrad_weights",
]


def mgda_weights(gram: np.ndarray, *, max_iter: int = 250, tol: float = 1e-6) -> np.ndarray:
    """Min-norm simplex weights ``argmin_{w in simplex} w^T K w`` by Frank-Wolfe, shape ``(k,)``."""
    K = np.asarray(gram, dtype=np.float64)
    k = K.shape[0]
    w = np.full(k, 1.0 / k)
    for _ in range(max_iter):
        Kw = K @ w
        t = int(np.argmin(Kw))
        vv, vt, tt = float(w @ Kw), float(Kw[t]), float(K[t, t])
        denom = vv - 2.0 * vt + tt
        if denom <= 0:
            break
        gamma = min(max((vv - vt) / denom, 0.0), 1.0)
        new = (1.0 - gamma) * w
        new[t] += gamma
        if np.abs(new - w).sum() < tol:
            w = new
            break
        w = new
    return w


def pcgrad_weights(gram: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """PCGrad as weights ``(k,)``: coefficients of ``sum_i g_i^PC`` in the original gradients."""
    K = np.asarray(gram, dtype=np.float64)
    k = K.shape[0]
    C = np.eye(k)
    for i in range(k):
        for j in rng.permutation(k):
            if K[j, j] <= 0:
                continue
            dot = float(C[i] @ K[:, j])
            if dot < 0:
                C[i, j] -= dot / K[j, j]
    return C.sum(axis=0)


def cagrad_weights(
    gram: np.ndarray, c: float = 0.4, w0: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """CAGrad weights ``(k,)`` (with the ``1 / (1 + c^2)`` rescaling) and the inner simplex weights ``w``."""
    K = np.asarray(gram, dtype=np.float64)
    k = K.shape[0]
    g0 = np.full(k, 1.0 / k)
    Kg0 = K @ g0
    g0_norm = float(np.sqrt(max(g0 @ Kg0, 0.0)))
    sq = c * g0_norm + 1e-8

    def obj(w: np.ndarray) -> float:
        return float(w @ Kg0 + sq * np.sqrt(max(w @ K @ w, 0.0) + 1e-8))

    if k == 2:  # one free weight: bounded scalar search (as the reference toy code does)
        r = minimize_scalar(
            lambda a: obj(np.array([a, 1.0 - a])),
            bounds=(0.0, 1.0),
            method="bounded",
            options={"xatol": 1e-10},
        )
        w = np.array([r.x, 1.0 - r.x])
        gw_norm = float(np.sqrt(max(w @ K @ w, 0.0)))
        return (g0 + sq / (gw_norm + 1e-8) * w) / (1.0 + c**2), w
    x0 = g0 if w0 is None else w0
    res = minimize(
        obj,
        x0,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * k,
        constraints=({"type": "eq", "fun": lambda w: 1.0 - w.sum()},),
        options={"maxiter": 100},
    )
    w = np.clip(res.x, 0.0, None)
    w = w / w.sum() if w.sum() > 0 else g0
    gw_norm = float(np.sqrt(max(w @ K @ w, 0.0)))
    lmbda = sq / (gw_norm + 1e-8)
    return (g0 + lmbda * w) / (1.0 + c**2), w


def nash_mtl_weights(
    gram: np.ndarray, *, max_iter: int = 30, tol: float = 1e-8, ridge: float = 1e-8
) -> np.ndarray:
    """Nash bargaining weights ``(k,)``: ``alpha > 0`` with ``K~ alpha = 1 / alpha``, ``K~ = K / ||K||_F``.

    Damped Newton on the convex ``phi(alpha) = 0.5 alpha^T K~ alpha - sum_i log alpha_i`` (gradient
    ``K~ alpha - 1/alpha``, Hessian ``K~ + diag(1 / alpha^2)``). A small ridge keeps ``phi`` bounded
    below when the gradients are linearly dependent with opposite signs.
    """
    K = np.asarray(gram, dtype=np.float64)
    k = K.shape[0]
    norm = float(np.linalg.norm(K))
    if norm <= 0:
        return np.zeros(k)
    Kt = K / norm + ridge * np.eye(k)
    alpha = 1.0 / np.sqrt(np.maximum(np.diag(Kt), 1e-12))

    def phi(a: np.ndarray) -> float:
        return float(0.5 * a @ Kt @ a - np.log(a).sum())

    f = phi(alpha)
    for _ in range(max_iter):
        grad = Kt @ alpha - 1.0 / alpha
        if np.max(np.abs(grad * alpha)) < tol:
            break
        H = Kt + np.diag(1.0 / alpha**2)
        step = np.linalg.solve(H, grad)
        s = 1.0
        neg = step > 0
        if neg.any():
            s = min(1.0, 0.99 * float(np.min(alpha[neg] / step[neg])))
        while s > 1e-12:
            cand = alpha - s * step
            fc = phi(cand)
            if np.all(cand > 0) and fc <= f - 1e-4 * s * float(grad @ step):
                break
            s *= 0.5
        else:
            break
        alpha, f = cand, fc
    return alpha


class LinearScalarization(WeightMethod):
    """Sum of the task losses (``beta = 1``)."""

    name = "ls"
    needs_gradients = False

    def _weights(self, gram, losses, index):
        return np.ones(len(index)), {}


class MGDA(WeightMethod):
    """MGDA: the min-norm element of the convex hull of the task gradients."""

    name = "mgda"

    def _weights(self, gram, losses, index):
        return mgda_weights(gram), {}


class PCGrad(WeightMethod):
    """PCGrad with its random projection order drawn from ``seed``."""

    name = "pcgrad"

    def __init__(self, n_tasks: int, *, seed: int = 0, nonfinite: str = "skip") -> None:
        super().__init__(n_tasks, nonfinite=nonfinite)
        self.rng = np.random.default_rng(seed)

    def _weights(self, gram, losses, index):
        return pcgrad_weights(gram, self.rng), {}


class CAGrad(WeightMethod):
    """CAGrad with conflict-aversion radius ``c`` (default 0.4)."""

    name = "cagrad"

    def __init__(self, n_tasks: int, *, c: float = 0.4, nonfinite: str = "skip") -> None:
        super().__init__(n_tasks, nonfinite=nonfinite)
        if not (np.isfinite(c) and c >= 0):
            raise ValueError(f"c: expected a finite non-negative number, got {c!r}")
        self.c = float(c)

    def _weights(self, gram, losses, index):
        beta, w = cagrad_weights(gram, self.c)
        return beta, {"inner_weights": w}


class NashMTL(WeightMethod):
    """Nash-MTL: bargaining weights solving ``K alpha = 1 / alpha`` each step (zero-gradient tasks get 0)."""

    name = "nashmtl"

    def _weights(self, gram, losses, index):
        alive = np.flatnonzero(np.diag(gram) > 0)
        beta = np.zeros(len(index))
        if alive.size:
            beta[alive] = nash_mtl_weights(gram[np.ix_(alive, alive)])
        return beta, {}


class FAMO(WeightMethod):
    """FAMO: loss-only adaptive weights; call :meth:`update` with the new losses after the optimiser step.

    ``lr``: Adam step size of the logits (0.025); ``gamma``: their weight decay (0.01);
    ``loss_floor``: scalar or ``(k,)`` lower bounds subtracted before the logarithm (0 for MSE/CE).
    """

    name = "famo"
    needs_gradients = False

    def __init__(
        self,
        n_tasks: int,
        *,
        lr: float = 0.025,
        gamma: float = 0.01,
        loss_floor: float | Sequence[float] = 0.0,
        nonfinite: str = "skip",
    ) -> None:
        super().__init__(n_tasks, nonfinite=nonfinite)
        floor = np.asarray(loss_floor, dtype=np.float64)
        self.loss_floor = np.full(n_tasks, float(floor)) if floor.ndim == 0 else floor
        if self.loss_floor.shape != (n_tasks,):
            raise ValueError(f"loss_floor: expected a scalar or {n_tasks} numbers, got shape {floor.shape}")
        self.lr, self.gamma = float(lr), float(gamma)
        self.logits = np.zeros(n_tasks)
        self._m = np.zeros(n_tasks)
        self._v = np.zeros(n_tasks)
        self._t = 0
        self._prev: np.ndarray | None = None

    def _gaps(self, losses: np.ndarray, index: np.ndarray) -> np.ndarray:
        return np.maximum(losses - self.loss_floor[index], 0.0) + 1e-8

    def _weights(self, gram, losses, index):
        z = np.exp(self.logits - self.logits.max())
        z = z / z.sum()
        D = self._gaps(losses, index)
        zi = z[index]
        c = float((zi / D).sum())
        prev = np.full(self.n_tasks, np.nan)
        prev[index] = losses
        self._prev = prev
        return zi / (c * D), {"task_weights": z}

    def update(self, losses: Any) -> None:
        """Move the task logits after the step: ``losses`` ``(k,)`` are the losses at the new parameters."""
        new = _check_losses(losses, self.n_tasks)
        if self._prev is None:
            return
        ok = np.isfinite(new) & np.isfinite(self._prev)
        idx = np.arange(self.n_tasks)
        delta = np.zeros(self.n_tasks)
        delta[ok] = np.log(self._gaps(self._prev[ok], idx[ok])) - np.log(self._gaps(new[ok], idx[ok]))
        z = np.exp(self.logits - self.logits.max())
        z = z / z.sum()
        grad = z * delta - z * float(z @ delta) + self.gamma * self.logits
        self._t += 1
        self._m = 0.9 * self._m + 0.1 * grad
        self._v = 0.999 * self._v + 0.001 * grad**2
        mhat = self._m / (1 - 0.9**self._t)
        vhat = self._v / (1 - 0.999**self._t)
        self.logits = self.logits - self.lr * mhat / (np.sqrt(vhat) + 1e-8)


def make_method(
    name: str, n_tasks: int, *, seed: int = 0, loss_floor: Any = 0.0, **kwargs: Any
) -> WeightMethod:
    """Build a method by name: ``maxmin``, ``ls``, ``mgda``, ``pcgrad``, ``cagrad``, ``nashmtl``, ``famo``."""
    from .weighting import MaxMinWeighting

    if name == "maxmin":
        return MaxMinWeighting(n_tasks, loss_floor=loss_floor, **kwargs)
    if name == "ls":
        return LinearScalarization(n_tasks, **kwargs)
    if name == "mgda":
        return MGDA(n_tasks, **kwargs)
    if name == "pcgrad":
        return PCGrad(n_tasks, seed=seed, **kwargs)
    if name == "cagrad":
        return CAGrad(n_tasks, **kwargs)
    if name == "nashmtl":
        return NashMTL(n_tasks, **kwargs)
    if name == "famo":
        return FAMO(n_tasks, loss_floor=loss_floor, **kwargs)
    raise ValueError(f"name: unknown method {name!r}; expected one of {METHODS}")


METHODS = ("maxmin", "ls", "mgda", "pcgrad", "cagrad", "nashmtl", "famo")
