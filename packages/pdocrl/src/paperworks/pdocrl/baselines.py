"""Tabular baselines, each with one tuned hyper-parameter (grids in :data:`GRIDS`).

- :class:`PDCA` (Hong, Li & Tewari 2024, our tabular reading): the same primal-dual loop with a
  lower-confidence critic, ``r_lam - beta * (q_high - q_low) (1 - gamma) / sqrt(n(s, a))`` on seen pairs.
- :class:`CBPL` (constrained batch policy learning, Le, Voloshin & Yue 2019): primal-dual with a plain FQE
  critic that evaluates every intermediate policy, unseen pairs included: the tabular analogue of a critic
  that generalises across actions imputes an unseen pair's reward, costs and transitions by the mean of the
  seen actions of its state (of all seen pairs where a state has none). It needs full coverage.
- :class:`BCQLagrangian` (Fujimoto et al. 2019's batch-constrained idea with a Lagrange multiplier): the
  loop restricted to actions with ``n(s, a) >= b max_a' n(s, a')``.
- :class:`COptiDICE` (Lee et al. 2022, tabular): the chi^2-regularised occupancy program on the empirical
  model, ``max <d, r> - alpha sum mu f(d / mu)``, ``f(x) = (x - 1)^2 / 2``, flow (mass may leave, worth 0)
  and budgets; the policy extracted as ``d(s, a) / sum_a d(s, a)`` (which needs the data distribution).
- :class:`EmpiricalLP`: the model-based route, the CMDP LP on the empirical model (no hyper-parameter).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize

from paperworks.core.validate import fraction, positive_float

from .data import DatasetCounts, OfflineDataset
from .lagrangian import SaddleSolution, tabular_saddle
from .lp import solve_empirical_lp
from .pdocrl import PDOCRL, PDOCRLConfig, PolicyMixture, Problem

__all__ = [
    "BCQLagrangian",
    "CBPL",
    "COptiDICE",
    "EmpiricalLP",
    "GRIDS",
    "Grid",
    "PDCA",
    "imputed_counts",
]


class PDCA(PDOCRL):
    """Primal-dual with a lower-confidence critic (module docstring); ``beta`` scales the bonus."""

    name = "PDCA"

    def __init__(self, config: PDOCRLConfig | None = None, *, beta: float = 0.3) -> None:
        super().__init__(config)
        self.beta = positive_float(beta, "beta")

    def _saddle(self, counts, problem, pi, lam, low, high) -> SaddleSolution:
        bonus = self.beta * (high - low) * (1 - problem.gamma) / np.sqrt(np.maximum(counts.n_sa, 1.0))
        return tabular_saddle(
            counts,
            pi,
            lam,
            q_low=low,
            initial=problem.initial,
            gamma=problem.gamma,
            budgets=problem.budgets,
            reward_penalty=np.where(counts.supported, bonus, 0.0),
        )


def imputed_counts(counts: DatasetCounts) -> DatasetCounts:
    """Counts of the model in which every unseen pair copies the mean model of its state's seen actions
    (of all seen pairs where the state has none): every pair is then 'seen' once with that model."""
    S, A = counts.n_sa.shape
    sup = counts.supported
    P = counts.transitions_sparse.toarray().reshape(S, A, S)
    k = sup.sum(axis=1, keepdims=True)
    glob_P = P[sup].mean(axis=0)
    glob_r = counts.reward[sup].mean()
    glob_c = counts.costs[:, sup].mean(axis=1)
    mean_P = np.where(
        k[:, :, None] > 0, P.sum(axis=1, keepdims=True) / np.maximum(k, 1)[:, :, None], glob_P[None, None]
    )
    mean_r = np.where(k > 0, counts.reward.sum(axis=1, keepdims=True) / np.maximum(k, 1), glob_r)
    mean_c = np.where(
        k[None] > 0, counts.costs.sum(axis=2, keepdims=True) / np.maximum(k, 1)[None], glob_c[:, None, None]
    )
    P_full = np.where(sup[:, :, None], P, mean_P)
    r_full = np.where(sup, counts.reward, mean_r)
    c_full = np.where(sup[None], counts.costs, mean_c)
    return DatasetCounts(
        n_sa=np.ones((S, A)),
        n_sas=sp.csr_matrix(P_full.reshape(S * A, S)),
        reward=r_full,
        costs=c_full,
        n=S * A,
    )


class CBPL(PDOCRL):
    """Primal-dual with an FQE critic that evaluates unseen pairs by imputation (module docstring)."""

    name = "CBPL"

    def fit(self, data: OfflineDataset | DatasetCounts, problem: Problem) -> PolicyMixture:
        counts = data if isinstance(data, DatasetCounts) else data.counts(problem.n_states, problem.n_actions)
        self._counts = counts
        return super().fit(imputed_counts(counts), problem)

    def _saddle(self, counts, problem, pi, lam, low, high) -> SaddleSolution:
        return tabular_saddle(
            counts, pi, lam, q_low=low, initial=problem.initial, gamma=problem.gamma, budgets=problem.budgets
        )


class BCQLagrangian(PDOCRL):
    """The loop restricted to batch-constrained actions ``n(s, a) >= threshold * max_a' n(s, a')``."""

    name = "BCQ-L"

    def __init__(self, config: PDOCRLConfig | None = None, *, threshold: float = 0.2) -> None:
        super().__init__(config)
        self.threshold = fraction(threshold, "threshold", open_low=True)

    def _allowed(self, counts: DatasetCounts) -> np.ndarray:
        n = counts.n_sa
        allowed = (n >= self.threshold * n.max(axis=1, keepdims=True)) & (n > 0)
        allowed[~allowed.any(axis=1)] = True  # a state never seen: no constraint to apply
        return allowed.astype(float)


class COptiDICE:
    """The chi^2-regularised occupancy program (module docstring), solved by SLSQP."""

    name = "COptiDICE"

    def __init__(self, *, alpha: float = 0.01) -> None:
        self.alpha = positive_float(alpha, "alpha")

    def fit(self, data: OfflineDataset | DatasetCounts, problem: Problem) -> PolicyMixture:
        S, A = problem.n_states, problem.n_actions
        counts = data if isinstance(data, DatasetCounts) else data.counts(S, A)
        g = problem.gamma
        idx = np.flatnonzero(counts.supported.ravel())
        mu = counts.mu.ravel()[idx]
        r = counts.reward.ravel()[idx]
        C = counts.costs.reshape(len(problem.budgets), S * A)[:, idx]
        out = sp.csr_matrix((np.ones(idx.size), (idx // A, np.arange(idx.size))), shape=(S, idx.size))
        inflow = g * counts.transitions_sparse[idx].T.tocsr()  # (S, m)
        flow = (out - inflow).toarray()  # flow @ d <= (1 - g) mu0: what leaves unseen is lost
        rhs = (1 - g) * problem.initial

        def neg(d):
            x = d / mu
            return -(r @ d) + self.alpha * (mu * (x - 1) ** 2).sum() / 2

        def neg_grad(d):
            return -r + self.alpha * (d / mu - 1)

        cons = [
            {"type": "ineq", "fun": lambda d: rhs - flow @ d, "jac": lambda d: -flow},
            {"type": "ineq", "fun": lambda d: problem.budgets - C @ d, "jac": lambda d: -C},
        ]
        res = minimize(
            neg,
            mu.copy(),
            jac=neg_grad,
            bounds=[(0, None)] * idx.size,
            constraints=cons,
            method="SLSQP",
            options={"maxiter": 500, "ftol": 1e-10},
        )
        d = np.zeros(S * A)
        d[idx] = np.maximum(res.x, 0.0)
        d = d.reshape(S, A)
        nu = d.sum(axis=1, keepdims=True)
        seen = counts.supported.any(axis=1, keepdims=True)
        fallback = np.where(
            seen, counts.supported / np.maximum(counts.supported.sum(1, keepdims=True), 1), 1.0 / A
        )
        pi = np.where(nu > 1e-10, d / np.maximum(nu, 1e-300), fallback)
        return PolicyMixture(
            policies=pi[None], lambdas=np.zeros((1, len(problem.budgets))), values=np.array([float(-res.fun)])
        )


class EmpiricalLP:
    """The CMDP LP on the empirical model (:func:`~.lp.solve_empirical_lp`), as a one-policy mixture."""

    name = "empirical LP"

    def fit(self, data: OfflineDataset | DatasetCounts, problem: Problem) -> PolicyMixture:
        counts = data if isinstance(data, DatasetCounts) else data.counts(problem.n_states, problem.n_actions)
        sol = solve_empirical_lp(counts, problem)
        return PolicyMixture(
            policies=sol.policy[None], lambdas=sol.duals[None], values=np.array([sol.reward])
        )


@dataclass(frozen=True)
class Grid:
    """A baseline's tuned hyper-parameter and its grid (the same size for every method)."""

    parameter: str
    values: tuple[float, ...]


# Grids of 4 for every method. The first full run's grids of 3 ({1, 3, 10}, {0.03, 0.1, 0.3}, {0.05, 0.2,
# 0.5}, {0.001, 0.01, 0.1}) chose an edge value for most methods; each grid was extended past that edge.
GRIDS: dict[str, Grid] = {
    "PDOCRL": Grid("policy_lr", (1.0, 3.0, 10.0, 30.0)),
    "PDCA": Grid("beta", (0.03, 0.1, 0.3, 1.0)),
    "CBPL": Grid("policy_lr", (1.0, 3.0, 10.0, 30.0)),
    "BCQ-L": Grid("threshold", (0.05, 0.2, 0.5, 0.8)),
    "COptiDICE": Grid("alpha", (0.001, 0.01, 0.1, 1.0)),
}
