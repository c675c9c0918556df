"""Aggregation rules: voters' scoring vectors and fractions -> one collective scoring vector.

* :func:`angular_mean` -- the paper's rule: the weighted Riemannian centre of mass (Fréchet/Karcher
  mean) of the voters' directions on the sphere, argmin_t sum_i alpha_i * angle(t, theta_i)^2.
* :func:`arithmetic_mean` -- the default rule, sum_i alpha_i theta_i (vectors as given).
* :func:`normalized_mean` -- sum_i alpha_i theta_i / |theta_i| (the extrinsic mean direction).
* :func:`spherical_median` -- argmin_t sum_i alpha_i * angle(t, theta_i) (geometric median on the
  sphere).
* :func:`~paperworks.angular_mean.maxmin.maxmin_slack` -- the IP-optimising baseline: the direction
  that maximises the smallest proportionality slack min_i (agreement_i - alpha_i).

Every rule returns a unit vector of shape (d,). ``cov`` (d, d) is the covariance of the items; the
angle-based rules then work in the metric where agreement is a function of the angle (None:
isotropic items).

The angular mean and the spherical median need not be unique (two opposed voter types of equal
weight: every direction orthogonal to them is a minimiser). They run from several starting points;
when two starts reach the optimum at clearly different directions, the rule returns the one found
first and warns with :class:`AmbiguousRuleWarning`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from paperworks.core.validate import one_of

from ._validation import check_cov, check_fractions, check_rule_inputs, check_seed, check_voters
from .maxmin import maxmin_slack
from .sphere import _exp, from_sphere, to_sphere

__all__ = [
    "RULES",
    "AmbiguousRuleWarning",
    "SphericalFit",
    "aggregate",
    "angular_mean",
    "arithmetic_mean",
    "normalized_mean",
    "spherical_median",
]

# two optima count as distinct when they lie this far apart (radians) at an objective this close
_DISTINCT_ANGLE = 1e-3
_SAME_OBJECTIVE = 1e-8


class AmbiguousRuleWarning(UserWarning):
    """The rule's optimum is not unique: several directions reach it; one of them was returned."""


@dataclass(frozen=True)
class SphericalFit:
    """Result of a descent on the sphere: unit direction, objective, iterations, convergence.

    ``unique``: False when another start converged to a direction at least 1e-3 rad away with an
    objective equal within 1e-8 (relative): the optimum is then not unique.
    """

    direction: np.ndarray
    objective: float
    n_iter: int
    converged: bool
    unique: bool = True


def _pick(fits: list[SphericalFit]) -> SphericalFit:
    """The best start, with ``unique`` False when a second converged start ties at another point."""
    best = min(fits, key=lambda f: f.objective)  # min keeps the first of equal objectives
    if not best.converged:
        return best
    tie = _SAME_OBJECTIVE * (1.0 + abs(best.objective))
    for f in fits:
        if f is best or not f.converged or f.objective - best.objective > tie:
            continue
        angle = float(np.arccos(np.clip(f.direction @ best.direction, -1.0, 1.0)))
        if angle > _DISTINCT_ANGLE:
            return replace(best, unique=False)
    return best


def _objective(t: np.ndarray, u: np.ndarray, alpha: np.ndarray, power: int) -> np.ndarray:
    phi = np.arccos(np.clip(t @ u.T, -1.0, 1.0))  # (S, n)
    return (phi**power) @ alpha


def _value_and_direction(
    t: np.ndarray, u: np.ndarray, alpha: np.ndarray, power: int
) -> tuple[np.ndarray, np.ndarray]:
    """Objective sum alpha phi^power (S,) and minus the Riemannian gradient of its 1/power (S, d).

    For power 1 the direction is divided by sum alpha/phi (the spherical Weiszfeld step).
    Vectorised: sum_i w_i Log_t(u_i) = w @ u - (w . cos) t, never forming the (S, n, d) logs;
    two passes over the voters.
    """
    cos = np.clip(t @ u.T, -1.0, 1.0)
    phi = np.arccos(cos)
    sin = np.sqrt(np.maximum(1.0 - cos**2, 0.0))
    scale = np.where(sin > 1e-12, phi / np.maximum(sin, 1e-300), np.where(cos > 0, 1.0, 0.0))
    if power == 2:
        w = alpha * scale
    else:
        inv = np.where(phi > 1e-12, 1.0 / np.maximum(phi, 1e-300), 0.0)
        w = alpha * scale * inv
        norm = (alpha * inv).sum(axis=1, keepdims=True)
        w = w / np.where(norm > 0, norm, 1.0)
    return (phi**power) @ alpha, w @ u - (w * cos).sum(axis=1, keepdims=True) * t


def _sphere_descent(
    u: np.ndarray,
    alpha: np.ndarray,
    starts: np.ndarray,
    power: int,
    max_iter: int,
    tol: float,
) -> SphericalFit:
    """Spherical Weiszfeld descent from several starts at once, t <- Exp_t(eta * direction).

    eta starts at 1 (the Weiszfeld step), halves when the objective does not fall and doubles
    (capped at 1) on success: a monotone descent for every start, which stops when
    the direction is below ``tol`` or the step has shrunk below 1e-9.
    """
    t = starts / np.linalg.norm(starts, axis=1, keepdims=True)
    f = _objective(t, u, alpha, power)
    eta = np.ones(len(t))
    active = np.ones(len(t), dtype=bool)
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 - iteration count is reported
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        g = _value_and_direction(t[idx], u, alpha, power)[1]
        gnorm = np.linalg.norm(g, axis=1)
        done = gnorm < tol
        active[idx[done]] = False
        keep = ~done
        idx, g = idx[keep], g[keep]
        if idx.size == 0:
            break
        cand = _exp(t[idx], eta[idx, None] * g)
        fc = _objective(cand, u, alpha, power)
        ok = fc < f[idx]
        t[idx[ok]] = cand[ok]
        f[idx[ok]] = fc[ok]
        eta[idx[ok]] = np.minimum(eta[idx[ok]] * 2.0, 1.0)
        eta[idx[~ok]] *= 0.5
        active[idx[eta[idx] < 1e-9]] = False
    return _pick([SphericalFit(t[s].copy(), float(f[s]), n_iter, not active[s]) for s in range(len(t))])


def _karcher_lbfgs(
    u: np.ndarray, alpha: np.ndarray, starts: np.ndarray, max_iter: int, tol: float, memory: int = 10
) -> SphericalFit:
    """Riemannian L-BFGS for F(t) = sum alpha_i angle(t, u_i)^2 on the sphere, from every start.

    Gradient: grad F(t) = -2 sum alpha_i Log_t(u_i) (vectorised over voters). Retraction
    t <- (t + eta p)/|t + eta p|, vector transport by projection onto the tangent space, Armijo
    backtracking from eta = 1. L-BFGS copes with the flat directions that make the Karcher
    fixed-point iteration slow when voters are spread out (the Hessian's tangential terms
    phi cot phi vanish near phi = pi/2). Pairs with non-positive curvature are skipped. A start
    stops when the gradient is below ``tol`` or a step lowers the objective by less than 1e-13
    relative.
    """

    def fg(t: np.ndarray) -> tuple[float, np.ndarray]:
        f, d = _value_and_direction(t[None], u, alpha, 2)
        return float(f[0]), -2.0 * d[0]

    fits: list[SphericalFit] = []
    for t0 in starts:
        t = t0 / np.linalg.norm(t0)
        f, g = fg(t)
        mem_s: list[np.ndarray] = []
        mem_y: list[np.ndarray] = []
        converged = False
        it = 0
        for it in range(1, max_iter + 1):  # noqa: B007 - iteration count is reported
            if np.linalg.norm(g) < tol:
                converged = True
                break
            q = g.copy()
            coef = []
            for sv, yv in zip(reversed(mem_s), reversed(mem_y)):
                sv, yv = sv - (sv @ t) * t, yv - (yv @ t) * t
                rho = 1.0 / (yv @ sv)
                a_ = rho * (sv @ q)
                q -= a_ * yv
                coef.append((sv, yv, rho, a_))
            if mem_s:
                sv, yv = coef[0][0], coef[0][1]
                q *= (sv @ yv) / (yv @ yv)
            else:
                q *= 0.5  # F's Hessian is at most 2 in every direction: a safe first step
            for sv, yv, rho, a_ in reversed(coef):
                q += (a_ - rho * (yv @ q)) * sv
            p = -(q - (q @ t) * t)
            if p @ g >= 0:  # not a descent direction: restart from steepest descent
                p, mem_s, mem_y = -0.5 * g, [], []
            eta, slope = 1.0, float(p @ g)
            while True:
                cand = t + eta * p
                cand /= np.linalg.norm(cand)
                fc, gc = fg(cand)
                if fc <= f + 1e-4 * eta * slope or eta < 1e-12:
                    break
                eta *= 0.5
            if not fc < f:
                converged = bool(np.linalg.norm(g) < max(1e-6, tol))
                break
            sv, yv = cand - t, gc - (g - (g @ cand) * cand)
            if sv @ yv > 1e-16:
                mem_s.append(sv)
                mem_y.append(yv)
                if len(mem_s) > memory:
                    mem_s.pop(0)
                    mem_y.pop(0)
            stalled = f - fc <= 1e-13 * max(f, 1.0)
            t, f, g = cand, fc, gc
            if stalled:  # relative decrease below 1e-13: as far as float64 sensibly goes
                converged = True
                break
        fits.append(SphericalFit(t, f, it, converged))
    return _pick(fits)


def _starts(u: np.ndarray, alpha: np.ndarray, n_starts: int, rng: np.random.Generator) -> np.ndarray:
    """Starting points (n_starts, d): the normalised mean, the heaviest voters, random directions."""
    d = u.shape[1]
    cands = []
    m = alpha @ u
    if np.linalg.norm(m) > 1e-9:
        cands.append(m)
    heavy = np.argsort(-alpha, kind="stable")[: max(n_starts - 1, 1)]
    cands.extend(u[heavy])
    while len(cands) < n_starts:
        cands.append(rng.standard_normal(d))
    return np.asarray(cands[:n_starts], dtype=float)


def _fit(
    thetas: object,
    alpha: object,
    cov: object,
    power: int,
    n_starts: object,
    max_iter: object,
    tol: object,
    rng: np.random.Generator,
    *,
    fractions: np.ndarray | None = None,
) -> tuple[np.ndarray, SphericalFit]:
    """Validated inputs -> (scoring vector (d,), fit); ``fractions`` skips the alpha check."""
    thetas, alpha, cov, n_starts, max_iter, tol = check_rule_inputs(
        thetas, alpha, cov, n_starts, max_iter, tol, fractions
    )
    u = to_sphere(thetas, cov)
    keep = alpha > 0
    u, a = u[keep], alpha[keep]
    starts = _starts(u, a, n_starts, rng)
    if power == 2:
        fit = _karcher_lbfgs(u, a, starts, max_iter, tol)
    else:
        fit = _sphere_descent(u, a, starts, power, max_iter, tol)
    return from_sphere(fit.direction, cov), fit


def _warn_ambiguous(rule: str, fit: SphericalFit) -> None:
    if not fit.unique:
        warnings.warn(
            f"{rule}: the minimiser is not unique (several directions reach objective "
            f"{fit.objective:.6g}, e.g. opposed voter types of equal weight); returning one of them",
            AmbiguousRuleWarning,
            stacklevel=3,
        )


def angular_mean(
    thetas: object,
    alpha: object = None,
    *,
    cov: object = None,
    n_starts: int = 8,
    max_iter: int = 2000,
    tol: float = 1e-10,
    seed: int = 0,
) -> np.ndarray:
    """The angular mean (d,): argmin over unit t of sum_i alpha_i * angle(t, theta_i)^2.

    thetas: (n, d) voters' preferred scoring vectors (only their directions matter); alpha: (n,)
    population fractions (None: equal). The objective is non-convex when voters are spread out,
    so Riemannian L-BFGS runs from ``n_starts`` starting points (the normalised mean, the heaviest
    voters, random directions; ``seed`` fixes the random ones) and keeps the best. Warns with
    :class:`AmbiguousRuleWarning` when the minimiser is not unique.
    """
    rng = np.random.default_rng(check_seed(seed))
    theta, fit = _fit(thetas, alpha, cov, 2, n_starts, max_iter, tol, rng)
    _warn_ambiguous("angular_mean", fit)
    return theta


def spherical_median(
    thetas: object,
    alpha: object = None,
    *,
    cov: object = None,
    n_starts: int = 8,
    max_iter: int = 300,
    tol: float = 1e-10,
    seed: int = 0,
) -> np.ndarray:
    """Geometric median on the sphere (d,): argmin over unit t of sum_i alpha_i * angle(t, theta_i).

    Spherical Weiszfeld descent from ``n_starts`` starting points (as :func:`angular_mean`); warns
    with :class:`AmbiguousRuleWarning` when the minimiser is not unique.
    """
    rng = np.random.default_rng(check_seed(seed))
    theta, fit = _fit(thetas, alpha, cov, 1, n_starts, max_iter, tol, rng)
    _warn_ambiguous("spherical_median", fit)
    return theta


def _arithmetic(thetas: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    m = alpha @ thetas
    norm = np.linalg.norm(m)
    if norm <= 1e-12 * float(np.abs(thetas).max()):
        raise ValueError("thetas: the weighted arithmetic mean is the zero vector; the rule is undefined")
    return m / norm


def arithmetic_mean(thetas: object, alpha: object = None, *, cov: object = None) -> np.ndarray:
    """The default rule: direction (d,) of sum_i alpha_i theta_i, vectors taken as given.

    Raises ValueError when the weighted sum is the zero vector (the rule is then undefined).
    ``cov`` is accepted for a uniform signature (and checked) but not used: the mean is metric-free.
    """
    thetas = check_voters(thetas)
    alpha = check_fractions(alpha, thetas.shape[0])
    check_cov(cov, thetas.shape[1])
    return _arithmetic(thetas, alpha)


def _normalized(thetas: np.ndarray, alpha: np.ndarray, cov: np.ndarray | None) -> np.ndarray:
    m = alpha @ to_sphere(thetas, cov)
    if np.linalg.norm(m) <= 1e-12:
        raise ValueError("thetas: the normalised mean is the zero vector; the rule is undefined")
    return from_sphere(m, cov)


def normalized_mean(thetas: object, alpha: object = None, *, cov: object = None) -> np.ndarray:
    """Direction (d,) of sum_i alpha_i u_i with u_i the unit directions (in the metric of ``cov``)."""
    thetas = check_voters(thetas)
    alpha = check_fractions(alpha, thetas.shape[0])
    cov = check_cov(cov, thetas.shape[1])
    return _normalized(thetas, alpha, cov)


RULES: dict[str, Callable[..., np.ndarray]] = {
    "angular_mean": angular_mean,
    "arithmetic_mean": arithmetic_mean,
    "normalized_mean": normalized_mean,
    "spherical_median": spherical_median,
    "maxmin_slack": maxmin_slack,
}


def aggregate(rule: str, thetas: object, alpha: object = None, *, cov: object = None) -> np.ndarray:
    """Apply the rule named ``rule`` (one of :data:`RULES`) to the voters; returns a unit vector (d,)."""
    one_of(rule, "rule", RULES)
    return RULES[rule](thetas, alpha, cov=cov)
