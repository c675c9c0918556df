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
from scipy.optimize import minimize

from paperworks.core.validate import as_generator

from ._checks import check_gram, check_int, nonnegative_float, one_of, positive_number, real_vector
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
    """Min-norm simplex weights ``argmin_{w in simplex} w^T K w`` by Frank-Wolfe, shape ``(k,)``.

    ``gram``: ``(k, k)`` symmetric PSD Gram matrix ``G G^T`` of the task gradients.
    """
    K = check_gram(gram, "gram")
    max_iter = check_int(max_iter, "max_iter", 1)
    tol = nonnegative_float(tol, "tol")
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
    """PCGrad as weights ``(k,)``: coefficients of ``sum_i g_i^PC`` in the original gradients.

    ``gram``: ``(k, k)`` symmetric PSD Gram matrix; ``rng``: a NumPy Generator or an int seed (the
    random projection order).
    """
    K = check_gram(gram, "gram")
    rng = as_generator(rng, "rng")
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
    """CAGrad weights ``(k,)`` (with the ``1 / (1 + c^2)`` rescaling) and the inner simplex weights ``w``.

    ``gram``: ``(k, k)`` symmetric PSD Gram matrix; ``c``: conflict-aversion radius ``>= 0``;
    ``w0``: optional ``(k,)`` start of the inner problem.
    """
    K = check_gram(gram, "gram")
    c = nonnegative_float(c, "c")
    k = K.shape[0]
    if w0 is not None:
        w0 = real_vector(w0, "w0", k)
    g0 = np.full(k, 1.0 / k)
    Kg0 = K @ g0
    g0_norm = float(np.sqrt(max(g0 @ Kg0, 0.0)))
    sq = c * g0_norm + 1e-8

    def obj(w: np.ndarray) -> float:
        return float(w @ Kg0 + sq * np.sqrt(max(w @ K @ w, 0.0) + 1e-8))

    if k == 2:  # one free weight: the inner problem's stationary points solve a quadratic exactly
        w = _cagrad_pair(K, Kg0, sq, obj)
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


def _cagrad_pair(K: np.ndarray, Kg0: np.ndarray, sq: float, obj) -> np.ndarray:
    """Exact minimiser over ``w = (a, 1 - a)``, ``a in [0, 1]``, of ``w^T K g0 + sq ||g_w||``.

    With ``w^T K g0 = A + B a`` and ``||g_w||^2 = q(a) = q0 + q1 a + q2 a^2``, a stationary point has
    ``2 B sqrt(q) = -sq q'``, hence ``4 B^2 q(a) = sq^2 q'(a)^2``: a quadratic in ``a``; the minimum is
    at one of its roots in ``[0, 1]`` or at an end point.
    """
    B = float(Kg0[0] - Kg0[1])
    q0 = float(K[1, 1])
    q1 = float(2.0 * (K[0, 1] - K[1, 1]))
    q2 = float(K[0, 0] + K[1, 1] - 2.0 * K[0, 1])
    s2 = sq * sq
    coeffs = [
        4 * B * B * q2 - 4 * s2 * q2 * q2,
        4 * B * B * q1 - 4 * s2 * q1 * q2,
        4 * B * B * q0 - s2 * q1 * q1,
    ]
    cands = [0.0, 1.0]
    lead = np.trim_zeros(np.asarray(coeffs), "f")
    if lead.size > 1:
        roots = np.roots(lead)
        cands += [float(r.real) for r in roots if abs(r.imag) < 1e-12 and 0.0 <= r.real <= 1.0]
    best = min(cands, key=lambda a: obj(np.array([a, 1.0 - a])))
    return np.array([best, 1.0 - best])


def nash_mtl_weights(
    gram: np.ndarray, *, max_iter: int = 30, tol: float = 1e-8, ridge: float = 1e-8
) -> np.ndarray:
    """Nash bargaining weights ``(k,)``: ``alpha > 0`` with ``K~ alpha = 1 / alpha``, ``K~ = K / ||K||_F``.

    Damped Newton on the convex ``phi(alpha) = 0.5 alpha^T K~ alpha - sum_i log alpha_i`` (gradient
    ``K~ alpha - 1/alpha``, Hessian ``K~ + diag(1 / alpha^2)``). A small ridge keeps ``phi`` bounded
    below when the gradients are linearly dependent with opposite signs.
    """
    K = check_gram(gram, "gram")
    max_iter = check_int(max_iter, "max_iter", 1)
    tol = nonnegative_float(tol, "tol")
    ridge = nonnegative_float(ridge, "ridge")
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
        self.rng = as_generator(seed, "seed")

    def _weights(self, gram, losses, index):
        return pcgrad_weights(gram, self.rng), {}


class CAGrad(WeightMethod):
    """CAGrad with conflict-aversion radius ``c`` (default 0.4)."""

    name = "cagrad"

    def __init__(self, n_tasks: int, *, c: float = 0.4, nonfinite: str = "skip") -> None:
        super().__init__(n_tasks, nonfinite=nonfinite)
        self.c = nonnegative_float(c, "c")

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
        if np.ndim(loss_floor) == 0:
            self.loss_floor = np.full(self.n_tasks, float(real_vector([loss_floor], "loss_floor")[0]))
        else:
            self.loss_floor = real_vector(loss_floor, "loss_floor", self.n_tasks)
        self.lr, self.gamma = positive_number(lr, "lr"), nonnegative_float(gamma, "gamma")
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
    """Build a method by name: ``maxmin``, ``ls``, ``mgda``, ``pcgrad``, ``cagrad``, ``nashmtl``, ``famo``.

    ``loss_floor`` goes to the methods that use one (max-min's gap model, FAMO's log gaps); ``seed``
    to PCGrad's projection order; other keyword arguments to the method's constructor.
    """
    from .weighting import MaxMinWeighting

    one_of(name, "name", METHODS)
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
