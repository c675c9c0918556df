"""Normalized improvement rates under a local isotropic quadratic model.

Notation (``k`` tasks, ``d`` shared parameters). Task ``i`` has loss ``L_i``, gradient ``g_i`` and an
isotropic Hessian approximation ``H_i = lam_i * I``. For an update ``theta <- theta - u`` the model's
one-step improvement of task ``i`` is

    I_i(u) = g_i^T u - (lam_i / 2) ||u||^2,

and the best one-step improvement the task could get alone is ``I_i* = ||g_i||^2 / (2 lam_i)``, reached
at its own step ``p_i = g_i / lam_i``. The normalized improvement rate is their ratio

    r_i(u) = I_i(u) / I_i* = (2 p_i^T u - ||u||^2) / ||p_i||^2 = 1 - ||u - p_i||^2 / ||p_i||^2.

It is a pure number (loss units cancel) and it is invariant to rescaling task ``i``'s loss whenever the
curvature ``lam_i`` scales with the loss, as the true Hessian does. Every rate is 1 at the task's own
step, 0 at ``u = 0`` and negative for updates that hurt the task under the model.

Curvature models (``lam_i``), our reading of the paper's "isotropic Hessian approximation":

* ``"gap"`` (default): ``lam_i = ||g_i||^2 / (2 (L_i - L_i*))`` -- the isotropic quadratic whose
  minimum value ``L_i*`` (a known lower bound, 0 for squared error and cross-entropy) lies exactly one
  best step away, so the best one-step improvement equals the optimality gap ``L_i - L_i*``. The task's
  own step is the Polyak step ``p_i = 2 (L_i - L_i*) g_i / ||g_i||^2``.
* ``"unit"``: ``lam_i = ||g_i||`` -- every task's own step has unit length; the max-min problem then
  reduces to MGDA's min-norm problem on unit-normalised gradients.
* ``"shared"``: ``lam_i = 1`` for every task (one isotropic Hessian); NOT scale invariant (ablation).
* an array of ``k`` positive numbers: user-supplied curvatures.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._checks import check_gram, real_vector

__all__ = [
    "CURVATURE_MODES",
    "best_scaled_worst_rate",
    "normalized_improvement_rates",
    "task_curvatures",
]

CURVATURE_MODES = ("gap", "unit", "shared")


def task_curvatures(
    sq_norms: np.ndarray,
    losses: np.ndarray | None = None,
    curvature: str | Sequence[float] | np.ndarray = "gap",
    loss_floor: float | Sequence[float] | np.ndarray = 0.0,
) -> np.ndarray:
    """Isotropic curvature ``lam_i`` per task, shape ``(k,)``; ``nan`` marks a task that cannot be served.

    ``sq_norms``: ``(k,)`` squared gradient norms ``||g_i||^2``. ``losses``: ``(k,)`` loss values, needed
    by ``curvature="gap"``. ``loss_floor``: scalar or ``(k,)`` lower bounds ``L_i*`` (gap model only).
    A task with a zero or non-finite gradient, or (gap model) with ``L_i <= L_i*``, has no
    first-order improvement left; it gets ``nan`` and is left out of the max-min problem (weight 0)
    by the callers (which warn).
    """
    sq = real_vector(sq_norms, "sq_norms", allow_nonfinite=True)
    if np.any(sq < 0):
        raise ValueError(f"sq_norms: expected squared norms >= 0, got min {np.nanmin(sq):.4g}")
    k = sq.shape[0]
    alive = np.isfinite(sq) & (sq > 0)
    lam = np.full(k, np.nan)
    if isinstance(curvature, str):
        if curvature not in CURVATURE_MODES:
            raise ValueError(
                f"curvature: expected one of {CURVATURE_MODES} or k positive numbers, got {curvature!r}"
            )
        if curvature == "gap":
            if losses is None:
                raise ValueError("losses: curvature='gap' needs the loss values, got None")
            loss = real_vector(losses, "losses", k, allow_nonfinite=True)
            if np.ndim(loss_floor) == 0:
                floor = np.full(k, float(real_vector([loss_floor], "loss_floor")[0]))
            else:
                floor = real_vector(loss_floor, "loss_floor", k)
            gap = loss - floor
            ok = alive & np.isfinite(gap) & (gap > 0)
            lam[ok] = sq[ok] / (2.0 * gap[ok])
        elif curvature == "unit":
            lam[alive] = np.sqrt(sq[alive])
        else:
            lam[alive] = 1.0
        return lam
    given = real_vector(curvature, "curvature", k)
    if not np.all(given > 0):
        raise ValueError("curvature: expected finite positive curvatures")
    lam[alive] = given[alive]
    return lam


def _rate_inputs(gram, lam, weights) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    K = check_gram(gram, "gram")
    k = K.shape[0]
    lam = real_vector(lam, "lam", k, allow_nonfinite=True)
    if np.any(np.isinf(lam)) or np.any(lam[np.isfinite(lam)] <= 0):
        raise ValueError("lam: expected positive curvatures (nan marks a task left out)")
    if np.any(np.isfinite(lam) & ~(np.diag(K) > 0)):
        raise ValueError("lam: a task with a zero gradient must have nan curvature (it cannot be served)")
    w = real_vector(weights, "weights", k)
    return K, lam, w


def normalized_improvement_rates(gram: np.ndarray, lam: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Rates ``r_i(u)`` of the update ``u = sum_j weights_j g_j`` (``theta <- theta - u``), shape ``(k,)``.

    ``gram``: ``(k, k)`` gradient Gram matrix ``G G^T``; ``lam``: ``(k,)`` curvatures (``nan`` = task
    left out, its rate is ``nan``). Implements ``r_i = (2 lam_i g_i^T u - lam_i^2 ||u||^2) / ||g_i||^2``.
    """
    K, lam, w = _rate_inputs(gram, lam, weights)
    return _improvement_rates(K, lam, w)


def _improvement_rates(K: np.ndarray, lam: np.ndarray, w: np.ndarray) -> np.ndarray:
    gu = K @ w
    uu = float(w @ gu)
    diag = np.diag(K)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (2.0 * lam * gu - lam**2 * uu) / diag
    r[~np.isfinite(lam)] = np.nan
    return r


def best_scaled_worst_rate(gram: np.ndarray, lam: np.ndarray, weights: np.ndarray) -> float:
    """``max_{alpha >= 0} min_i r_i(alpha u)`` for ``u = sum_j weights_j g_j``: a direction's quality.

    Scale-free measure of how well a method's update *direction* serves its worst task (the step size
    is the optimiser's business). Each ``r_i(alpha u) = 2 alpha a_i - alpha^2 b_i`` is a concave
    parabola, so the max-min is attained at one task's vertex or where two parabolas cross; all
    candidates are enumerated exactly. Tasks with ``nan`` curvature are ignored; returns 0 for the zero
    update and ``nan`` when no task is left.
    """
    K, lam, w = _rate_inputs(gram, lam, weights)
    keep = np.isfinite(lam)
    if not keep.any():
        return float("nan")
    gu = (K @ w)[keep]
    uu = float(w @ K @ w)
    lk = lam[keep]
    diag = np.diag(K)[keep]
    a = lk * gu / diag
    b = lk**2 * uu / diag
    if uu <= 0 or not np.isfinite(uu):
        return 0.0
    cands = [0.0]
    cands += list(np.maximum(a / b, 0.0))
    ai, aj = np.meshgrid(a, a, indexing="ij")
    bi, bj = np.meshgrid(b, b, indexing="ij")
    db = bi - bj
    with np.errstate(invalid="ignore", divide="ignore"):
        cross = 2.0 * (ai - aj) / db
    cross = cross[np.isfinite(cross) & (cross > 0)]
    cands += list(cross)
    alphas = np.asarray(cands)
    vals = (2.0 * alphas[:, None] * a[None, :] - alphas[:, None] ** 2 * b[None, :]).min(axis=1)
    return float(max(vals.max(), 0.0))
