"""The max-min problem over normalized improvement rates: closed form and active-set solver.

With each task's own step ``p_i`` (see :mod:`paperworks.maxmin_mtl.rates`) the problem is

    max_u  min_i  r_i(u),      r_i(u) = (2 p_i^T u - ||u||^2) / ||p_i||^2.             (P)

Let ``Q = P P^T`` be the ``(k, k)`` Gram matrix of the own steps and ``n = diag(Q)``. Lagrangian duality
(the rates are concave in ``u``; the multipliers live on the simplex) gives, with ``u = P^T c``,

    t* = min_{c in simplex}  c^T Q c / c^T n,                                           (D)

a ratio of a convex quadratic to a positive linear form (pseudo-convex, so every stationary point on
the simplex is a global minimum). KKT: with ``t = c^T Q c / c^T n`` every task in the support of ``c``
(the *bottleneck* set ``A``) has ``r_i(u) = t`` and every other task has ``r_i(u) >= t``; the optimal
update is a combination of the bottleneck tasks' steps only.

Closed form on a bottleneck set ``A`` (our derivation). By Dinkelbach's argument, ``t`` is the root of
``phi_A(t) = min { c^T Q_AA c - t n_A^T c : 1^T c = 1 }``; the minimiser is affine in ``t``,
``c(t) = t x + y``, from the bordered (KKT) system

    [2 Q_AA  1] [x  y]   [n_A  0]
    [1^T     0] [.  .] = [0    1],

and with ``alpha = n_A^T x``, ``beta = n_A^T y``, ``gamma = y^T Q_AA y`` (so that
``phi_A(t) = gamma - beta t - alpha t^2 / 2``) the root is

    t = 2 gamma / (beta + sqrt(beta^2 + 2 alpha gamma)),      c_A = t x + y,      u* = P_A^T c_A.

The bordered matrix is non-singular exactly when the own steps of ``A`` are *affinely* independent,
so a rank-deficient Gram matrix (more tasks than parameters, ``T > d``, or collinear steps) needs no
regularisation; only affinely dependent sets (duplicated tasks) are singular, and those are solved in
the least-squares (minimum-norm) sense, which splits weight evenly between copies. The system is
solved on the Jacobi-normalised Gram matrix ``D^{-1/2} Q D^{-1/2}`` (unit diagonal), so own-step
norms that span many decades do not degrade it; an optional ``ridge`` is added there (``ridge * I``
on the normalised matrix, i.e. ``ridge * n_i`` on each task's own diagonal), which perturbs every
task's rates by the same relative amount. The bottleneck set is found by an active-set (Wolfe-type)
procedure: start from the task whose own step serves the others best, add the worst-served task
while its rate is below ``t``, and when the closed form leaves the simplex, move toward it until a
weight hits zero and drop that task. The reported value is the returned update's actual worst rate.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ._checks import check_gram, check_int, nonnegative_float

__all__ = ["ActiveSetResult", "closed_form", "solve_maxmin"]


@dataclass(frozen=True)
class ActiveSetResult:
    """Solution of (P)/(D) for ``k`` tasks.

    ``coef``: ``(k,)`` simplex weights ``c`` on the own steps (``u* = sum_i coef_i p_i``);
    ``value``: the worst rate ``min_i r_i(u*)`` of the returned update (``t*`` at the optimum);
    ``rates``: ``(k,)`` rates of ``u*``; ``active``: the bottleneck set (support of ``coef``), sorted;
    ``iterations``: closed-form evaluations (additions plus drops) the active-set procedure used.
    """

    coef: np.ndarray
    value: float
    rates: np.ndarray
    active: tuple[int, ...]
    iterations: int


def _solve_bordered(M: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Solve the symmetric bordered system: ``(solution, None)``, or, when ``M`` is singular and the
    system inconsistent (affinely dependent own steps), ``(least-squares solution, null vector)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
        try:
            return scipy.linalg.solve(M, rhs, assume_a="sym", check_finite=False), None
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgError, scipy.linalg.LinAlgWarning, ValueError):
            pass
    sol = np.linalg.lstsq(M, rhs, rcond=1e-12)[0]
    resid = float(np.abs(M @ sol - rhs).max())
    size = float(np.abs(rhs).max() + np.abs(M).max() * np.abs(sol).max())
    if resid <= 1e-9 * size:
        return sol, None  # consistent (duplicated tasks): the minimum-norm solution splits evenly
    _, _, vt = np.linalg.svd(M)
    return sol, vt[-1]


def _closed_form(Q: np.ndarray, idx: np.ndarray, ridge: float) -> tuple[np.ndarray, float, np.ndarray | None]:
    """``(c_A, t, None)``; or ``(nan, nan, z)`` with ``z`` (``1^T z = 0``, ``P_A^T z = 0``) when the own
    steps of ``A`` are affinely dependent and no equal-rate point exists on their hull."""
    QA = Q[np.ix_(idx, idx)]
    nA = np.diag(QA).copy()
    m = idx.size
    if m == 1:
        return np.ones(1), 1.0, None
    s = 1.0 / np.sqrt(nA)  # Jacobi scaling: c = s * ct, Qt = s Q s has a unit diagonal
    Qt = s[:, None] * QA * s[None, :] + ridge * np.eye(m)
    root_n = nA * s  # n_A in the scaled variables: n^T c = sqrt(n)^T ct
    border = s / float(s.max())  # 1^T c = 1  <=>  (s / s_max)^T ct = 1 / s_max
    M = np.zeros((m + 1, m + 1))
    M[:m, :m] = 2.0 * Qt
    M[:m, m] = border
    M[m, :m] = border
    rhs = np.zeros((m + 1, 2))
    rhs[:m, 0] = root_n
    rhs[m, 1] = 1.0 / float(s.max())
    sol, null = _solve_bordered(M, rhs)
    if null is not None:
        return np.full(m, np.nan), float("nan"), s * null[:m]
    xt, yt = sol[:m, 0], sol[:m, 1]
    alpha = max(float(root_n @ xt), 0.0)
    beta = float(root_n @ yt)
    gamma = max(float(yt @ Qt @ yt), 0.0)
    disc = np.sqrt(beta * beta + 2.0 * alpha * gamma)
    if beta > 0:
        t = 2.0 * gamma / (beta + disc)
    elif alpha > 0:
        t = (disc - beta) / alpha
    else:  # no finite root on this affine hull
        return np.full(m, np.nan), float("nan"), None
    c = s * (t * xt + yt)
    return c, float(t), None


def closed_form(
    gram: np.ndarray, active: list[int] | np.ndarray, ridge: float = 0.0
) -> tuple[np.ndarray, float]:
    """Closed-form minimiser of (D) on the affine hull of ``active``: returns ``(c_A, t)``.

    ``gram``: ``(k, k)`` symmetric PSD Gram matrix ``Q`` of the tasks' own steps (positive diagonal);
    ``active``: distinct indices of the bottleneck set. ``c_A`` sums to one but may have negative
    entries (then ``active`` is not the optimal set); every task of ``active`` has the rate ``t`` at
    ``u = P_A^T c_A`` (up to ``ridge``, which acts on the normalised Gram matrix).
    """
    Q = check_gram(gram, "gram", positive_diagonal=True)
    ridge = nonnegative_float(ridge, "ridge")
    try:
        idx = np.asarray(active)
    except (TypeError, ValueError):
        raise TypeError(f"active: expected a sequence of task indices, got {active!r}") from None
    if idx.ndim != 1 or idx.size == 0 or idx.dtype.kind not in "iu":
        raise ValueError(f"active: expected a non-empty 1-D sequence of int indices, got {active!r}")
    if idx.min() < 0 or idx.max() >= Q.shape[0] or np.unique(idx).size != idx.size:
        raise ValueError(f"active: expected distinct indices in [0, {Q.shape[0]}), got {idx.tolist()}")
    c, t, null = _closed_form(Q, idx.astype(int), ridge)
    if null is not None:
        raise ValueError(
            f"active: the own steps of tasks {idx.tolist()} are affinely dependent and admit no common "
            "rate on their hull; drop one (solve_maxmin does)"
        )
    return c, t


def _rates(Q: np.ndarray, n: np.ndarray, S: list[int], cS: np.ndarray) -> tuple[np.ndarray, float]:
    Qc = Q[:, S] @ cS
    quad = float(cS @ Qc[S])
    r = (2.0 * Qc - quad) / n
    t = quad / float(cS @ n[S])
    return r, t


def solve_maxmin(
    gram: np.ndarray, *, tol: float = 1e-9, ridge: float = 0.0, max_iter: int | None = None
) -> ActiveSetResult:
    """Solve the max-min problem (P) exactly by the active-set procedure on the Gram matrix.

    ``gram``: ``(k, k)`` symmetric PSD Gram matrix of the tasks' own steps with a positive diagonal
    (rank-deficient is fine: ``T > d`` needs no ridge). ``tol``: optimality tolerance on the rates
    (pure numbers). ``ridge``: optional regularisation of the normalised Gram matrix (default 0).
    Cost: ``O(k^2)`` per rate check plus one ``(|A|+1)``-square solve per iteration; the number of
    iterations is typically ``|A|`` or a few more.
    """
    Q = check_gram(gram, "gram", positive_diagonal=True)
    tol = nonnegative_float(tol, "tol")
    ridge = nonnegative_float(ridge, "ridge")
    if max_iter is not None:
        max_iter = check_int(max_iter, "max_iter", 1)
    return _active_set(Q, tol, ridge, max_iter)


def _active_set(Q: np.ndarray, tol: float, ridge: float, max_iter: int | None) -> ActiveSetResult:
    """:func:`solve_maxmin` on a checked Gram matrix."""
    k = Q.shape[0]
    max_iter = 10 * k + 20 if max_iter is None else max_iter
    n = np.diag(Q).copy()
    # start at the vertex whose own step leaves the best worst-task rate
    R0 = (2.0 * Q - n[None, :]) / n[:, None]  # R0[i, j] = r_i(p_j)
    S = [int(np.argmax(R0.min(axis=0)))]
    cS = np.ones(1)
    blocked: set[int] = set()  # tasks whose addition changed nothing, until the set changes
    it = 0
    while it < max_iter:
        r, t = _rates(Q, n, S, cS)
        outside = np.ones(k, dtype=bool)
        outside[S] = False
        outside[list(blocked)] = False
        if not outside.any():
            break
        j = int(np.argmin(np.where(outside, r, np.inf)))
        if r[j] >= t - tol:
            break
        before = list(S)
        S.append(j)
        cS = np.append(cS, 0.0)
        while it < max_iter:
            it += 1
            y, _, null = _closed_form(Q, np.asarray(S), ridge)
            if null is not None:  # affinely dependent steps: pivot along the null vector (u unchanged)
                z = null if null[S.index(j)] >= 0 else -null
                dec = z < -1e-12 * np.abs(z).max()
                ratios = np.where(dec, cS / np.where(dec, -z, 1.0), np.inf)
                drop = int(np.argmin(ratios))
                cS = np.maximum(cS + float(ratios[drop]) * z, 0.0)
                keep = np.ones(len(S), dtype=bool)
                keep[drop] = False
                S = [s for s, kp in zip(S, keep) if kp]
                cS = cS[keep] / cS[keep].sum()
                if j not in S:
                    break
                continue
            if not np.all(np.isfinite(y)):  # no common rate on this hull: drop the newest task
                keep = np.array([s != j for s in S])
                S = [s for s, kp in zip(S, keep) if kp]
                cS = cS[keep] / cS[keep].sum()
                break
            if np.all(y > 0):
                cS = y
                break
            neg = y <= 0
            theta = float(np.min(cS[neg] / (cS[neg] - y[neg])))
            cS = cS + theta * (y - cS)
            keep = cS > 1e-14
            keep[int(np.argmin(np.where(neg, cS, np.inf)))] = False
            if not keep.any():
                keep[int(np.argmax(cS))] = True
            S = [s for s, kp in zip(S, keep) if kp]
            cS = cS[keep]
            cS = cS / cS.sum()
            if j not in S and theta == 0.0:
                break  # numerically the new task adds nothing: stop the minor cycle
        if sorted(S) == sorted(before):
            blocked.add(j)
        else:
            blocked.clear()
    coef = np.zeros(k)
    coef[S] = cS
    r, _ = _rates(Q, n, S, cS)
    order = np.argsort(S)
    return ActiveSetResult(
        coef=coef, value=float(r.min()), rates=r, active=tuple(int(S[i]) for i in order), iterations=it
    )
