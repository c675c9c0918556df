"""The empirical decomposed-LP Lagrangian, its gradients, and the (w, Q) saddle of the restricted problem.

With the occupancy written ``d(s, a) = nu(s) pi(a|s)`` and reweighted on the data, ``d = w mu_D``, the
Lagrangian of the decomposed LP is (our reading of the paper; README, Fidelity)

    L(pi, w, Q, lam) = (1 - gamma) E_{s ~ mu0}[Q(s, pi)]
                       + E_D[ w(s, a) (r_lam(s, a) + gamma Q(s', pi) - Q(s, a)) ],          (eq. L)
    r_lam = r - sum_k lam_k (c_k - tau_k),   Q(s, pi) = sum_a pi(a|s) Q(s, a).

``pi`` is an explicit variable: it enters through ``Q(s, pi)`` only, so no policy is ever extracted through
the unknown data distribution. Max players: ``pi`` and ``w``; min players: ``Q`` and ``lam``.

For fixed ``(pi, lam)``, ``L`` is linear in ``w`` and in ``Q``: ``max_{w in W} min_{Q in Q}`` is a linear
program. With ``Q = {Phi theta : lo <= theta <= hi}`` it is solved by HiGHS (:func:`restricted_saddle`);
with the tabular box class (``Phi = I``, a box wide enough to hold every ``Q_pi``) and unbounded ``W`` it
has a closed form (:func:`tabular_saddle`): evaluate ``pi`` in the empirical model, where every unseen pair
is worth the box's lower end (pessimism without a bonus). Tests check the two routes agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.optimize import linprog

from paperworks.core.validate import finite_array

from .data import DatasetCounts, OfflineDataset

__all__ = [
    "LinearQClass",
    "SaddleSolution",
    "lagrangian",
    "lagrangian_gradients",
    "lagrangian_reward",
    "restricted_saddle",
    "tabular_saddle",
]


def lagrangian_reward(
    reward: np.ndarray, costs: np.ndarray, budgets: np.ndarray, lam: np.ndarray
) -> np.ndarray:
    """``r_lam = r - sum_k lam_k (c_k - tau_k)``; ``reward`` (...), ``costs`` (K, ...)."""
    shift = (np.asarray(lam)[:, None] * (costs.reshape(len(lam), -1) - np.asarray(budgets)[:, None])).sum(0)
    return reward - shift.reshape(reward.shape)


def lagrangian(
    data: OfflineDataset,
    policy: np.ndarray,
    w: np.ndarray,
    q: np.ndarray,
    lam: np.ndarray,
    *,
    initial: np.ndarray,
    gamma: float,
    budgets: np.ndarray,
) -> float:
    """(eq. L) evaluated sample by sample: ``policy``, ``w``, ``q`` (S, A), ``lam`` (K,), ``initial`` (S,)."""
    s, a, s2 = data.observations, data.actions, data.next_observations
    r_lam = data.rewards - ((data.costs - budgets[None, :]) * lam[None, :]).sum(axis=1)
    q_pi = (policy * q).sum(axis=1)
    first = (1 - gamma) * float(initial @ q_pi)
    return first + float(np.mean(w[s, a] * (r_lam + gamma * q_pi[s2] - q[s, a])))


def lagrangian_gradients(
    counts: DatasetCounts,
    policy: np.ndarray,
    w: np.ndarray,
    q: np.ndarray,
    lam: np.ndarray,
    *,
    initial: np.ndarray,
    gamma: float,
    budgets: np.ndarray,
) -> dict[str, np.ndarray]:
    """Partial derivatives of (eq. L) from the counts: ``policy``, ``w``, ``q`` (S, A); ``lam`` (K,)."""
    mu = counts.mu
    d = w * mu  # (S, A) reweighted data mass
    inflow = (1 - gamma) * initial + gamma * (counts.transitions_sparse.T @ d.ravel())  # (S,)
    r_lam = lagrangian_reward(counts.reward, counts.costs, budgets, lam)
    q_pi = (policy * q).sum(axis=1)
    return {
        "policy": inflow[:, None] * q,
        "w": mu * (r_lam + gamma * counts.expect_next(q_pi) - q),
        "q": inflow[:, None] * policy - d,
        "lam": -np.einsum("sa,ksa->k", d, counts.costs - budgets[:, None, None]),
    }


@dataclass(frozen=True, eq=False)
class SaddleSolution:
    """The (w, Q) saddle for one ``(pi, lam)``: ``w`` and ``q`` (S, A), ``occupancy`` ``d = w mu`` (S, A),
    the Lagrangian ``value`` and the estimated ``costs`` ``<d, c_k>`` (K,)."""

    w: np.ndarray
    q: np.ndarray
    occupancy: np.ndarray
    value: float
    costs: np.ndarray


@dataclass(frozen=True, eq=False)
class LinearQClass:
    """``Q = {(Phi theta).reshape(S, A) : lo <= theta <= hi}``; ``features`` (S*A, p), ``lo``/``hi`` (p,)."""

    features: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    def __post_init__(self) -> None:
        phi = finite_array(self.features, "features", ndim=2)
        lo = finite_array(np.broadcast_to(self.lo, phi.shape[1:]), "lo")
        hi = finite_array(np.broadcast_to(self.hi, phi.shape[1:]), "hi")
        if (lo > hi).any():
            raise ValueError("lo, hi: expected lo <= hi for every feature")
        for name, v in (("features", phi), ("lo", np.array(lo)), ("hi", np.array(hi))):
            object.__setattr__(self, name, v)

    @classmethod
    def tabular(cls, n_states: int, n_actions: int, lo: float, hi: float) -> LinearQClass:
        """The tabular box ``lo <= Q(s, a) <= hi`` (holding every ``Q_pi`` when it spans the returns)."""
        p = n_states * n_actions
        return cls(np.eye(p), np.full(p, float(lo)), np.full(p, float(hi)))


def _sparse_p_pi(pi_sup: np.ndarray, counts: DatasetCounts) -> sp.csr_matrix:
    """``P_pi(s, s') = sum_a pi(a|s) P_hat(s'|s, a)`` without forming (S, A, S) densely."""
    S, A = pi_sup.shape
    weights = (pi_sup / np.maximum(counts.n_sa, 1.0)).ravel()
    rows = sp.csr_matrix((weights, (np.repeat(np.arange(S), A), np.arange(S * A))), shape=(S, S * A))
    return (rows @ counts.n_sas).tocsr()


def _inflow_operator(policy: np.ndarray, counts: DatasetCounts, gamma: float) -> sp.csr_matrix:
    """``(S*A, m)``: ``G d = gamma pi(a|s) sum P(s | s~, a~) d(s~, a~) - d(s, a)`` over the m seen pairs."""
    S, A = policy.shape
    idx = np.flatnonzero(counts.supported.ravel())
    Pm = counts.transitions_sparse[idx].T.tocsr()  # (S, m)
    spread = sp.csr_matrix(
        (policy.ravel(), (np.arange(S * A), np.repeat(np.arange(S), A))), shape=(S * A, S)
    )  # (S*A, S): s -> (s, a) with weight pi(a|s)
    pick = sp.csr_matrix((np.ones(idx.size), (idx, np.arange(idx.size))), shape=(S * A, idx.size))
    return (gamma * spread @ Pm - pick).tocsr()


def restricted_saddle(
    counts: DatasetCounts,
    policy: np.ndarray,
    lam: np.ndarray,
    q_class: LinearQClass,
    *,
    initial: np.ndarray,
    gamma: float,
    budgets: np.ndarray,
    w_bound: float = np.inf,
) -> SaddleSolution:
    """``max_{0 <= w <= w_bound} min_{Q in q_class} L(pi, w, Q, lam)`` as an LP (HiGHS); ``Q`` from its duals.

    Variables: the reweighted mass ``d = w mu`` on the m seen pairs and one ``u_k`` per feature with
    ``u_k <= lo_k h_k(d)``, ``u_k <= hi_k h_k(d)``, ``h = Phi^T g(d)`` the coefficient of ``theta`` in L;
    the constraints' multipliers ``alpha_k + beta_k = 1`` give ``theta_k = alpha_k lo_k + beta_k hi_k``.
    """
    S, A = policy.shape
    supported = counts.supported
    idx = np.flatnonzero(supported.ravel())
    m = idx.size
    phi, lo, hi = q_class.features, q_class.lo, q_class.hi
    if phi.shape[0] != S * A:
        raise ValueError(f"q_class: expected features with {S * A} rows (S*A), got {phi.shape[0]}")
    p = phi.shape[1]
    r_lam = lagrangian_reward(counts.reward, counts.costs, budgets, lam).ravel()[idx]
    g0 = ((1 - gamma) * initial[:, None] * policy).ravel()  # (S*A,)
    G = _inflow_operator(policy, counts, gamma)  # (S*A, m)
    H = sp.csr_matrix(phi.T) @ G  # (p, m): h = phi^T g0 + H d
    h0 = phi.T @ g0
    eye = sp.identity(p, format="csr")
    A_ub = sp.vstack([sp.hstack([-sp.diags(lo) @ H, eye]), sp.hstack([-sp.diags(hi) @ H, eye])]).tocsr()
    b_ub = np.concatenate([lo * h0, hi * h0])
    upper = np.minimum(w_bound * counts.mu.ravel()[idx], 1e9) if np.isfinite(w_bound) else None
    bounds = [(0.0, None if upper is None else float(upper[i])) for i in range(m)] + [(None, None)] * p
    res = linprog(np.concatenate([-r_lam, -np.ones(p)]), A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the restricted saddle LP: {res.message}")
    alpha, beta = -res.ineqlin.marginals[:p], -res.ineqlin.marginals[p:]
    tot = np.maximum(alpha + beta, 1e-300)
    theta = np.where(alpha + beta > 0, (alpha * lo + beta * hi) / tot, lo)
    d = np.zeros(S * A)
    d[idx] = np.maximum(res.x[:m], 0.0)
    d = d.reshape(S, A)
    w = np.where(supported, d / np.maximum(counts.mu, 1e-300), 0.0)
    return SaddleSolution(
        w=w,
        q=(phi @ theta).reshape(S, A),
        occupancy=d,
        value=float(-res.fun),
        costs=np.einsum("sa,ksa->k", d, counts.costs),
    )


def tabular_saddle(
    counts: DatasetCounts,
    policy: np.ndarray,
    lam: np.ndarray,
    *,
    q_low: float,
    initial: np.ndarray,
    gamma: float,
    budgets: np.ndarray,
    reward_penalty: np.ndarray | None = None,
) -> SaddleSolution:
    """The closed form of :func:`restricted_saddle` for the tabular box ``[q_low, q_high]`` (``q_high`` above
    every return) and unbounded ``W``: ``Q(s, a) = r_lam + gamma P_hat V`` on seen pairs, ``q_low`` on unseen,
    ``V = Q(., pi)``; ``d`` is ``pi``'s occupancy in that model (mass entering unseen pairs is lost to it).

    ``reward_penalty`` (S, A), subtracted from ``r_lam`` on seen pairs, turns this into the lower-confidence
    evaluation of the PDCA baseline.
    """
    S, _A = policy.shape
    sup = counts.supported
    r_lam = lagrangian_reward(counts.reward, counts.costs, budgets, lam)
    if reward_penalty is not None:
        r_lam = r_lam - reward_penalty
    pi_sup = np.where(sup, policy, 0.0)
    b = (pi_sup * r_lam).sum(axis=1) + q_low * (policy * ~sup).sum(axis=1)
    if counts.dense:
        M = np.eye(S) - gamma * np.einsum("sa,sat->st", pi_sup, counts.transitions)
        v = np.linalg.solve(M, b)
        nu = (1 - gamma) * np.linalg.solve(M.T, initial)
    else:
        M = (sp.identity(S, format="csc") - gamma * _sparse_p_pi(pi_sup, counts)).tocsc()
        v = spla.spsolve(M, b)
        nu = (1 - gamma) * spla.spsolve(M.T.tocsc(), initial)
    q = np.where(sup, r_lam + gamma * counts.expect_next(v), q_low)
    d = nu[:, None] * pi_sup
    w = np.where(sup, d / np.maximum(counts.mu, 1e-300), 0.0)
    return SaddleSolution(
        w=w,
        q=q,
        occupancy=d,
        value=float((1 - gamma) * initial @ v),
        costs=np.einsum("sa,ksa->k", d, counts.costs),
    )
