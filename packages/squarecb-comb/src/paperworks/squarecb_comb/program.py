"""The per-round convex program of SquareCB.Comb and its structured solver.

Our reading of the paper's program (no public text; see README, Fidelity). Given the oracle's
predicted rewards ``r`` (shape ``(A,)``), the cardinality bound ``m`` and the learning rate
``gamma``, choose the inclusion marginals ``q`` of the combinatorial action in the polytope of
"at most m arms", ``P_m = {q in [0, 1]^A : sum_i q_i <= m}``, by the log-barrier problem

    q* = argmin_{q in P_m}  -<q, r> - (1 / gamma) * sum_i log q_i .                    (P)

This is the log-barrier variant of inverse-gap weighting. It is *not* SquareCB's inverse-gap
weighting (Foster and Rakhlin, 2020) at ``m = 1``: there the log-barrier gives
``q_a = 1 / (gamma (lam - r_a))`` with ``lam`` fixed by ``sum q = 1``, while SquareCB plays
``p_a = 1 / (A + gamma (r_max - r_a))`` off the greedy arm; the two differ by up to about 0.5 in
probability on the same scores, and the log-barrier explores more at the same ``gamma`` (it leaves
more mass off the greedy action, most visibly for ``m > 1``). :func:`~.igw.igw_marginals` gives the
closed-form inverse-gap weighting that equals SquareCB's at ``m = 1``. The KKT conditions of (P) give
every coordinate in closed form as a function of one scalar multiplier ``lam >= 0`` of the
cardinality constraint:

    q_i(lam) = 1                                if lam - r_i <= 1 / gamma        (arm saturated)
    q_i(lam) = 1 / (gamma * (lam - r_i))         otherwise,                                  (KKT)

with ``lam = 0`` when ``sum_i q_i(0) <= m`` and otherwise the unique root of ``sum_i q_i(lam) = m``.
``sum_i q_i(lam)`` is continuous and non-increasing, so (P) reduces to a one-dimensional monotone
root-finding problem that a safeguarded Newton iteration solves in ``O(A)`` per step; the whole
solve is ``O(A log(1/tol))``, independent of the number of m-subsets (which is ``C(A, m)``).

Why the program controls regret (our derivation, the decision-estimation argument of SquareCB
carried to semi-bandits): with ``delta = f - r`` the oracle's error and any comparator set
``S`` with ``|S| <= m``, the KKT conditions and AM-GM give

    sum_{i in S} f_i - <q, f>  <=  (A + m / 2) / gamma  +  gamma * sum_i q_i delta_i^2 ,

the last term being the expected squared error on the arms that are actually played
(semi-bandit feedback). Summing over rounds yields regret ``<= sum_t (A + m/2) / gamma_t +
gamma * Reg_sq``, and with ``Reg_sq ~ m log|F|`` the tuned rate ``gamma ~ sqrt(A T / (m log|F|))``
gives ``O(sqrt(m A T log|F|))``, the bound of the abstract.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import finite_array, int_in_range, positive_float

__all__ = ["MarginalSolution", "check_program_args", "kkt_residuals", "program_objective", "solve_marginals"]


@dataclass(frozen=True)
class MarginalSolution:
    """Solution of (P): marginals ``q`` (shape ``(A,)``), multiplier ``lam`` and Newton iterations."""

    q: np.ndarray
    lam: float
    iterations: int


def check_program_args(scores: object, m: object, gamma: object) -> tuple[np.ndarray, int, float]:
    """Validated ``(r, m, gamma)``: ``r`` a finite non-empty 1-D float array, ``1 <= m <= A``,
    ``gamma > 0`` finite; the core's validators' one-line errors name the argument."""
    r = finite_array(scores, "scores", ndim=1)
    return r, int_in_range(m, "m", 1, r.size), positive_float(gamma, "gamma")


def _marginals_at(r: np.ndarray, lam: float, gamma: float) -> np.ndarray:
    # q_i = 1 when gamma (lam - r_i) <= 1, else 1 / (gamma (lam - r_i)): one expression
    return 1.0 / np.maximum(gamma * (lam - r), 1.0)


def solve_marginals(
    scores: np.ndarray, m: int, gamma: float, *, tol: float = 1e-10, max_iter: int = 200
) -> MarginalSolution:
    """Solve the log-barrier program (P) exactly up to ``tol`` by 1-D safeguarded Newton on ``lam``.

    Args:
        scores: predicted rewards ``r``, shape ``(A,)`` (higher is better).
        m: cardinality bound, ``1 <= m <= A``.
        gamma: learning rate ``gamma > 0`` (larger: greedier).
        tol: tolerance on ``|sum q - m|`` relative to ``m``.

    Returns:
        :class:`MarginalSolution` with ``q`` in ``(0, 1]^A``, ``sum(q) <= m`` and ``lam >= 0``.
        Saturated arms are exactly ``1.0``; the residual of the tolerance is removed from the
        unsaturated arms only (a relative change of at most ``tol``), so that sampling never draws
        more than ``m`` arms and a saturated arm is always played.
    """
    r, m, gamma = check_program_args(scores, m, gamma)
    tol = positive_float(tol, "tol")
    max_iter = int_in_range(max_iter, "max_iter", 1)
    A = r.size
    q = _marginals_at(r, 0.0, gamma)
    if q.sum() <= m:
        return MarginalSolution(q, 0.0, 0)
    # bracket: at lo the m best arms are saturated (sum >= m); at hi every q_i <= m/A (sum <= m)
    r_m = float(np.partition(r, A - m)[A - m])  # m-th largest predicted reward
    lo = max(0.0, r_m + 1.0 / gamma)
    hi = max(lo, float(r.max()) + A / (gamma * m))
    lam = lo
    it = 0
    while it < max_iter:
        it += 1
        q = _marginals_at(r, lam, gamma)
        f = q.sum() - m
        if abs(f) <= tol * m:
            break
        if f > 0:
            lo = lam
        else:
            hi = lam
        free = q < 1.0
        slope = -gamma * np.dot(q[free], q[free])  # d sum q / d lam on the unsaturated arms
        step = lam - f / slope if slope < 0 else np.inf
        lam = step if lo < step < hi else 0.5 * (lo + hi)
        if hi - lo <= 1e-15 * max(1.0, abs(hi)):
            q = _marginals_at(r, lam, gamma)
            break
    s = q.sum()
    if s > m:  # remove the tolerance's residual from the unsaturated arms; saturated stay exactly 1
        free = q < 1.0
        n_sat = A - int(free.sum())
        q = q.copy()
        q[free] *= (m - n_sat) / q[free].sum()
    return MarginalSolution(q, float(lam), it)


def program_objective(q: np.ndarray, scores: np.ndarray, gamma: float) -> float:
    """Objective of (P): ``-<q, r> - (1/gamma) sum_i log q_i`` (``inf`` outside the domain)."""
    r = finite_array(scores, "scores", ndim=1)
    q = finite_array(q, "q", shape=r.shape)
    gamma = positive_float(gamma, "gamma")
    if np.any(q <= 0):
        return float("inf")
    return float(-q @ r - np.log(q).sum() / gamma)


def kkt_residuals(q: np.ndarray, scores: np.ndarray, m: int, gamma: float) -> dict[str, float]:
    """KKT residuals of a candidate solution of (P), independent of any solver's multiplier.

    Saturation is strict: an arm counts as saturated only when ``q_i == 1.0`` exactly (the solver
    returns saturated arms as exactly 1). The multiplier ``lam`` of ``sum q <= m`` is estimated from
    the unsaturated arms (mean of ``r_i + 1/(gamma q_i)``), the bound multipliers from stationarity
    on the saturated arms. Returns
    the maximum violation of primal feasibility, stationarity (unsaturated arms), dual feasibility
    and complementary slackness.
    """
    r, m, gamma = check_program_args(scores, m, gamma)
    q = finite_array(q, "q", shape=r.shape)
    if q.min() <= 0:
        raise ValueError(f"q: expected positive marginals (the log-barrier's domain), got min {q.min():.3g}")
    sat = q == 1.0
    free = ~sat
    grad_free = r[free] + 1.0 / (gamma * q[free])  # = lam at a KKT point
    lam = float(grad_free.mean()) if free.any() else 0.0
    lam = max(lam, 0.0)
    stationarity = float(np.abs(grad_free - lam).max()) if free.any() else 0.0
    mu = r[sat] + 1.0 / gamma - lam  # bound multipliers of q_i <= 1 on saturated arms
    primal = float(max(q.sum() - m, 0.0, (q - 1.0).max(), -q.min()))
    dual = float(max(0.0, -mu.min() if mu.size else 0.0))
    complementarity = abs(lam * (q.sum() - m))
    return {
        "primal": primal,
        "stationarity": stationarity,
        "dual": dual,
        "complementarity": float(complementarity),
        "lam": lam,
    }
