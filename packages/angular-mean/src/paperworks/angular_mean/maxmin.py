"""The IP-optimising baseline: maximise the smallest proportionality slack.

For Gaussian items (in the metric of ``cov``) voter i's long-run agreement with a direction t is
A_i(t) = 1 - angle(t, theta_i) / pi, so its proportionality slack is s_i(t) = A_i(t) - alpha_i and
long-run IP holds exactly when min_i s_i(t) >= 0. :func:`maxmin_slack` returns

    argmax over unit t of  min_i [ 1 - alpha_i - angle(t, theta_i) / pi ]

over the voter types with a positive fraction: the rule that a designer who optimises IP directly,
rather than choosing a mean, would use. It is a baseline of ours (the abstract names no such rule).
The problem is a max-min over angles, non-smooth and non-convex on the sphere. We solve its
epigraph form, max z subject to s_i(t) >= z and |t| = 1, with scipy's SLSQP from several starting
points (the angular mean, the normalised mean, the heaviest voters, random directions), in the
span of the voters' directions plus one direction orthogonal to it (the objective sees only the
length of a direction's component off the span), and keep the best.

Unlike the means, its maximiser is often not unique (a flat top when few constraints are active);
the returned direction is the best start's, deterministic given ``seed``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ._validation import check_fractions, check_rule_inputs, check_seed, check_voters
from .sphere import angles, from_sphere, to_sphere

__all__ = ["MaxMinFit", "maxmin_slack", "proportionality_slack"]


@dataclass(frozen=True)
class MaxMinFit:
    """Result of the max-min solve: unit direction (whitened metric), min slack, iterations, status."""

    direction: np.ndarray
    slack: float
    n_iter: int
    converged: bool


def proportionality_slack(
    theta: object, thetas: object, alpha: object = None, *, cov: object = None
) -> np.ndarray:
    """Long-run slack (n,) of each voter type for Gaussian items: 1 - angle/pi - alpha_i."""
    thetas = check_voters(thetas)
    al = check_fractions(alpha, thetas.shape[0])
    return 1.0 - angles(theta, thetas, cov) / np.pi - al


def _min_slack(y: np.ndarray, v: np.ndarray, need: np.ndarray) -> float:
    """min_i (need_i - angle(y, v_i) / pi) for unit rows v (n, k), need_i = 1 - alpha_i."""
    c = np.clip(v @ (y / np.linalg.norm(y)), -1.0, 1.0)
    return float(np.min(need - np.arccos(c) / np.pi))


def _slsqp(
    v: np.ndarray, need: np.ndarray, y0: np.ndarray, max_iter: int, tol: float
) -> tuple[np.ndarray, int, bool]:
    """One SLSQP run of max z s.t. need_i - angle(y, v_i)/pi - z >= 0, |y|^2 = 1, from y0."""
    from scipy.optimize import minimize

    k = v.shape[1]

    def ineq(x: np.ndarray) -> np.ndarray:
        y, z = x[:k], x[k]
        c = np.clip(v @ y / np.linalg.norm(y), -1.0, 1.0)
        return need - np.arccos(c) / np.pi - z

    def ineq_jac(x: np.ndarray) -> np.ndarray:
        y = x[:k]
        r = np.linalg.norm(y)
        yh = y / r
        c = np.clip(v @ yh, -1.0, 1.0)
        s = np.sqrt(np.maximum(1.0 - c**2, 0.0))
        w = np.where(s > 1e-12, 1.0 / (np.pi * r * np.maximum(s, 1e-300)), 0.0)
        jac = np.empty((len(v), k + 1))
        jac[:, :k] = w[:, None] * (v - c[:, None] * yh[None, :])
        jac[:, k] = -1.0
        return jac

    y0 = y0 / np.linalg.norm(y0)
    x0 = np.append(y0, _min_slack(y0, v, need))
    grad = np.zeros(k + 1)
    grad[k] = -1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # SLSQP probes points with |y| near 0 rarely
        res = minimize(
            lambda x: -x[k],
            x0,
            jac=lambda x: grad,
            method="SLSQP",
            constraints=(
                {"type": "ineq", "fun": ineq, "jac": ineq_jac},
                {
                    "type": "eq",
                    "fun": lambda x: x[:k] @ x[:k] - 1.0,
                    "jac": lambda x: np.append(2 * x[:k], 0.0),
                },
            ),
            options={"maxiter": max_iter, "ftol": tol},
        )
    y = res.x[:k]
    if not np.all(np.isfinite(y)) or np.linalg.norm(y) < 1e-12:
        return y0, int(res.nit), False
    return y / np.linalg.norm(y), int(res.nit), bool(res.success)


def _solve(
    u: np.ndarray, alpha: np.ndarray, n_starts: int, max_iter: int, tol: float, rng: np.random.Generator
) -> MaxMinFit:
    """Max-min slack over unit directions for unit voters u (n, d) with fractions alpha > 0."""
    from .rules import _fit  # the angular mean, a feasible start (it satisfies long-run IP)

    need = 1.0 - alpha
    # The objective depends on t only through its component p in the span of the voters' directions
    # and the length of the rest: solve over the span plus one orthogonal direction. (The optimum can
    # lie off the span: for balanced voters a direction orthogonal to all of them, agreement 1/2 for
    # each, is best; then every orthogonal direction does as well, and the one taken is arbitrary.)
    _, sv, vt = np.linalg.svd(u, full_matrices=True)
    k_span = int(np.sum(sv > 1e-10 * sv[0]))
    basis = vt[: min(k_span + 1, u.shape[1])]  # (k, d)
    v = u @ basis.T  # (n, k): voters in these coordinates, still unit
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    k = basis.shape[0]
    if k == 1:  # d = 1: only +-1
        cands = [np.array([1.0]), np.array([-1.0])]
        best = max(cands, key=lambda y: _min_slack(y, v, need))
        return MaxMinFit(best @ basis, _min_slack(best, v, need), 1, True)
    karcher = basis @ _fit(u, None, None, 2, 4, 500, 1e-9, rng, fractions=alpha)[0]
    # screen a cloud of candidates (the normalised mean, the voters, random directions) on the
    # objective itself and start from the best: the landscape has several local maxima
    cloud = [alpha @ v, *v, *rng.standard_normal((max(256, 32 * k), k))]
    cloud = np.asarray([c for c in cloud if np.linalg.norm(c) > 1e-9])
    cloud /= np.linalg.norm(cloud, axis=1, keepdims=True)
    screened = np.min(need - np.arccos(np.clip(cloud @ v.T, -1.0, 1.0)) / np.pi, axis=1)
    order = np.argsort(-screened, kind="stable")[: max(n_starts - 1, 0)]
    starts = [karcher, *cloud[order]]
    best_y, best_s, best_it, best_ok = None, -np.inf, 0, False
    for y0 in starts:
        y, it, ok = _slsqp(v, need, np.asarray(y0, dtype=float), max_iter, tol)
        s = _min_slack(y, v, need)
        if s > best_s + 1e-12:
            best_y, best_s, best_it, best_ok = y, s, it, ok
    return MaxMinFit(best_y @ basis, best_s, max(best_it, 1), best_ok)


def _maxmin_fit(
    thetas: object,
    alpha: object,
    cov: object,
    n_starts: object,
    max_iter: object,
    tol: object,
    rng: np.random.Generator,
    *,
    fractions: np.ndarray | None = None,
) -> tuple[np.ndarray, MaxMinFit]:
    thetas, alpha, cov, n_starts, max_iter, tol = check_rule_inputs(
        thetas, alpha, cov, n_starts, max_iter, tol, fractions
    )
    u = to_sphere(thetas, cov)
    keep = alpha > 0
    fit = _solve(u[keep], alpha[keep], n_starts, max_iter, tol, rng)
    return from_sphere(fit.direction, cov), fit


def maxmin_slack(
    thetas: object,
    alpha: object = None,
    *,
    cov: object = None,
    n_starts: int = 8,
    max_iter: int = 200,
    tol: float = 1e-12,
    seed: int = 0,
) -> np.ndarray:
    """The IP-optimising rule (d,): argmax over unit t of min_i (1 - angle(t, theta_i)/pi - alpha_i).

    thetas: (n, d) voters' scoring vectors; alpha: (n,) population fractions (None: equal; types of
    fraction 0 are left out). Agreement is the closed form for Gaussian items in the metric of
    ``cov``. SLSQP on the epigraph from ``n_starts`` starts (see the module docstring); ``tol`` is
    its ``ftol``, ``seed`` fixes the random starts.
    """
    rng = np.random.default_rng(check_seed(seed))
    return _maxmin_fit(thetas, alpha, cov, n_starts, max_iter, tol, rng)[0]
