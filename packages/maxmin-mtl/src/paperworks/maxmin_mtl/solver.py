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

Closed form on a bottleneck set ``A`` (our derivation; the stationarity conditions on the affine hull of
``A`` are ``2 Q_AA c_A = t (n_A + m 1)`` with ``m = c^T n`` and ``1^T c_A = 1``). With the regularised
Gram matrix ``R = Q_AA + eps I`` and

    a = 1^T R^{-1} n_A,   b = 1^T R^{-1} 1,   e = n_A^T R^{-1} n_A,

the solution is

    m = sqrt(e / b),   t = 2 / (a + sqrt(e b)),   c_A = R^{-1} (n_A + m 1) / (a + sqrt(e b)),
    u* = P_A^T c_A.

``eps`` (relative to the mean of ``diag Q_AA``) keeps ``R`` invertible for duplicate or collinear task
gradients, where it splits weight evenly between copies. The bottleneck set is found by an active-set
(Wolfe-type) procedure: start from the task whose own step serves the others best, add the
worst-served task while its rate is below ``t``, and when the closed form leaves the simplex, move
toward it until a weight hits zero and drop that task.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ActiveSetResult", "closed_form", "solve_maxmin"]


@dataclass(frozen=True)
class ActiveSetResult:
    """Solution of (P)/(D) for ``k`` tasks.

    ``coef``: ``(k,)`` simplex weights ``c`` on the own steps (``u* = sum_i coef_i p_i``);
    ``value``: ``t*``, the optimal worst-task rate; ``rates``: ``(k,)`` rates of ``u*``;
    ``active``: the bottleneck set (support of ``coef``), sorted; ``iterations``: closed-form
    evaluations (additions plus drops) the active-set procedure used.
    """

    coef: np.ndarray
    value: float
    rates: np.ndarray
    active: tuple[int, ...]
    iterations: int


def closed_form(
    gram: np.ndarray, active: list[int] | np.ndarray, ridge: float = 1e-10
) -> tuple[np.ndarray, float]:
    """Closed-form minimiser of (D) on the affine hull of ``active``: returns ``(c_A, t)``.

    ``gram``: ``(k, k)`` Gram matrix ``Q`` of the tasks' own steps; ``active``: indices of the bottleneck
    set. ``c_A`` sums to one but may have negative entries (then ``active`` is not the optimal set).
    """
    Q = np.asarray(gram, dtype=np.float64)
    idx = np.asarray(active, dtype=int)
    QA = Q[np.ix_(idx, idx)]
    nA = np.diag(QA).copy()
    scale = float(nA.mean()) if nA.size else 1.0
    R = QA + ridge * scale * np.eye(len(idx))
    rhs = np.stack([nA, np.ones_like(nA)], axis=1)
    try:
        sol = np.linalg.solve(R, rhs)
    except np.linalg.LinAlgError:
        sol = np.linalg.lstsq(R, rhs, rcond=None)[0]
    p, q = sol[:, 0], sol[:, 1]
    a = float(q @ nA)
    b = float(q.sum())
    e = float(p @ nA)
    if b <= 0 or e <= 0:  # numerically singular: fall back to the best single task of the set
        c = np.zeros(len(idx))
        c[0] = 1.0
        return c, 1.0
    root = np.sqrt(e * b)
    denom = a + root
    m = np.sqrt(e / b)
    c = (p + m * q) / denom
    return c, float(2.0 / denom)


def _rates(Q: np.ndarray, n: np.ndarray, S: list[int], cS: np.ndarray) -> tuple[np.ndarray, float]:
    Qc = Q[:, S] @ cS
    quad = float(cS @ Qc[S])
    r = (2.0 * Qc - quad) / n
    t = quad / float(cS @ n[S])
    return r, t


def solve_maxmin(
    gram: np.ndarray, *, tol: float = 1e-9, ridge: float = 1e-10, max_iter: int | None = None
) -> ActiveSetResult:
    """Solve the max-min problem (P) exactly by the active-set procedure on the Gram matrix.

    ``gram``: ``(k, k)`` symmetric PSD Gram matrix of the tasks' own steps with a positive diagonal.
    ``tol``: optimality tolerance on the rates (pure numbers). Cost: ``O(k^2)`` per rate check plus one
    ``|A| x |A|`` solve per iteration; the number of iterations is typically ``|A|`` or a few more.
    """
    Q = np.asarray(gram, dtype=np.float64)
    if Q.ndim != 2 or Q.shape[0] != Q.shape[1] or Q.shape[0] == 0:
        raise ValueError(f"gram: expected a non-empty square (k, k) matrix, got shape {Q.shape}")
    if not np.all(np.isfinite(Q)):
        raise ValueError("gram: expected finite entries")
    n = np.diag(Q).copy()
    if np.any(n <= 0):
        raise ValueError("gram: expected a positive diagonal (every task needs a non-zero step)")
    k = Q.shape[0]
    max_iter = 10 * k + 20 if max_iter is None else max_iter
    # start at the vertex whose own step leaves the best worst-task rate
    R0 = (2.0 * Q - n[None, :]) / n[:, None]  # R0[i, j] = r_i(p_j)
    S = [int(np.argmax(R0.min(axis=0)))]
    cS = np.ones(1)
    it = 0
    while it < max_iter:
        r, t = _rates(Q, n, S, cS)
        outside = np.ones(k, dtype=bool)
        outside[S] = False
        if not outside.any():
            break
        j = int(np.argmin(np.where(outside, r, np.inf)))
        if r[j] >= t - tol:
            break
        S.append(j)
        cS = np.append(cS, 0.0)
        while it < max_iter:
            it += 1
            y, _ = closed_form(Q, S, ridge)
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
            if j not in S and len(S) >= 1 and theta == 0.0:
                break  # numerically the new task adds nothing: stop the minor cycle
    coef = np.zeros(k)
    coef[S] = cS
    r, t = _rates(Q, n, S, cS)
    order = np.argsort(S)
    return ActiveSetResult(
        coef=coef, value=float(t), rates=r, active=tuple(int(S[i]) for i in order), iterations=it
    )
