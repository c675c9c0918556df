"""The exact CMDP linear program over occupancies (the ground truth), solved by HiGHS through SciPy.

    max_d <d, r>  s.t.  sum_a d(s, a) = (1 - gamma) mu0(s) + gamma sum_{s', a'} P(s | s', a') d(s', a'),
                        <d, c_k> <= tau_k,   d >= 0.

The budget duals are the optimal Lagrange multipliers ``lambda*``; Slater's condition (a policy with
``<d, c_k> < tau_k`` for all k) bounds them by ``(max r - min r) / slack``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from .cmdp import TabularCMDP

__all__ = [
    "InfeasibleBudgetError",
    "LPSolution",
    "min_costs",
    "slater_bound",
    "solve_empirical_lp",
    "solve_lp",
]


class InfeasibleBudgetError(ValueError):
    """No policy meets the budgets (the LP says so)."""


@dataclass(frozen=True, eq=False)
class LPSolution:
    """``occupancy`` (S, A), the extracted ``policy`` (S, A; uniform where nu = 0), the optimal normalised
    ``reward`` and ``costs`` (K,), and the budget multipliers ``duals`` (K,)."""

    occupancy: np.ndarray
    policy: np.ndarray
    reward: float
    costs: np.ndarray
    duals: np.ndarray


def _flow(m: TabularCMDP) -> sp.csr_matrix:
    S, A = m.n_states, m.n_actions
    out = sp.kron(sp.identity(S), np.ones((1, A)))  # sum_a d(s, a)
    inflow = sp.csr_matrix(m.transitions.reshape(S * A, S).T)  # (S, S*A): P(s | s', a')
    return (out - m.gamma * inflow).tocsr()


def _policy(d: np.ndarray) -> np.ndarray:
    nu = d.sum(axis=1, keepdims=True)
    return np.where(nu > 1e-12, d / np.maximum(nu, 1e-300), 1.0 / d.shape[1])


def solve_lp(cmdp: TabularCMDP, objective: np.ndarray | None = None) -> LPSolution:
    """Maximise ``<d, objective>`` (default: the reward) over the CMDP's feasible occupancies.

    Raises :class:`InfeasibleBudgetError` when no policy meets the budgets."""
    S, A = cmdp.n_states, cmdp.n_actions
    obj = cmdp.reward if objective is None else np.asarray(objective, dtype=float)
    rows = np.arange(cmdp.n_costs)
    res = _solve(cmdp, obj, rows)
    if res.status not in (0, 2):
        # HiGHS can fail on badly scaled budgets (a "loose" 1e9): a budget at or above the largest cost can
        # never bind, so its row is dropped and the LP solved again
        rows = np.flatnonzero(cmdp.budgets < cmdp.costs.reshape(cmdp.n_costs, -1).max(axis=1))
        res = _solve(cmdp, obj, rows)
    if res.status == 2:
        raise InfeasibleBudgetError(
            f"budgets: no policy meets budgets {cmdp.budgets.tolist()} (least achievable costs "
            f"{min_costs(cmdp).tolist()})"
        )
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the CMDP LP: {res.message}")
    d = np.maximum(res.x.reshape(S, A), 0.0)
    d /= d.sum()
    return LPSolution(
        occupancy=d,
        policy=_policy(d),
        reward=float((d * cmdp.reward).sum()),
        costs=np.einsum("sa,ksa->k", d, cmdp.costs),
        duals=_duals(res, rows, cmdp.n_costs),
    )


def _solve(cmdp: TabularCMDP, obj: np.ndarray, rows: np.ndarray):
    S, A = cmdp.n_states, cmdp.n_actions
    kw = {}
    if rows.size:
        kw = {"A_ub": cmdp.costs.reshape(cmdp.n_costs, S * A)[rows], "b_ub": cmdp.budgets[rows]}
    return linprog(
        -obj.ravel(),
        A_eq=_flow(cmdp),
        b_eq=(1 - cmdp.gamma) * cmdp.initial,
        bounds=(0, None),
        method="highs",
        **kw,
    )


def _duals(res, rows: np.ndarray, n_costs: int) -> np.ndarray:
    out = np.zeros(n_costs)
    if rows.size:
        out[rows] = np.maximum(-np.asarray(res.ineqlin.marginals, dtype=float), 0.0)
    return out


def min_costs(cmdp: TabularCMDP) -> np.ndarray:
    """(K,) the least achievable cost return of each cost, each minimised alone without budgets."""
    loose = TabularCMDP(
        cmdp.transitions, cmdp.reward, cmdp.costs, np.full(cmdp.n_costs, 1e9), cmdp.initial, cmdp.gamma
    )
    return np.array([solve_lp(loose, objective=-cmdp.costs[k]).costs[k] for k in range(cmdp.n_costs)])


def slater_bound(cmdp: TabularCMDP) -> float:
    """``(max r - min r) / xi`` with the Slater slack ``xi = min_k (tau_k - least cost_k)``: a bound on
    ``||lambda*||_1``. Raises ``ValueError`` when no strictly feasible policy exists."""
    xi = float((cmdp.budgets - min_costs(cmdp)).min())
    if not xi > 1e-12:
        raise ValueError(
            f"budgets: Slater's condition fails (slack {xi:.3g} <= 0): the multipliers are unbounded"
        )
    return float(cmdp.reward.max() - cmdp.reward.min()) / xi


def solve_empirical_lp(counts, problem) -> LPSolution:
    """The model-based offline route: the CMDP LP on the data's empirical model (``counts``, a
    :class:`~.data.DatasetCounts`; ``problem``, a :class:`~.pdocrl.Problem`), with occupancy only on seen
    pairs and the mass that flows into a state without seen actions lost (worth 0). The policy is extracted
    from the occupancy (uniform where it is 0). Raises :class:`InfeasibleBudgetError` when the empirical
    budgets cannot be met."""
    S, A = problem.n_states, problem.n_actions
    g = problem.gamma
    idx = np.flatnonzero(counts.supported.ravel())
    m = idx.size
    out = sp.csr_matrix((np.ones(m), (idx // A, np.arange(m))), shape=(S, m))
    inflow = g * counts.transitions_sparse[idx].T.tocsr()
    K = problem.budgets.shape[0]
    res = linprog(
        -counts.reward.ravel()[idx],
        A_ub=sp.vstack([out - inflow, sp.csr_matrix(counts.costs.reshape(K, S * A)[:, idx])]).tocsr(),
        b_ub=np.concatenate([(1 - g) * problem.initial, problem.budgets]),
        bounds=(0, None),
        method="highs",
    )
    if res.status == 2:
        raise InfeasibleBudgetError(
            f"budgets: the empirical model cannot meet budgets {problem.budgets.tolist()}"
        )
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the empirical LP: {res.message}")
    d = np.zeros(S * A)
    d[idx] = np.maximum(res.x, 0.0)
    d = d.reshape(S, A)
    return LPSolution(
        occupancy=d,
        policy=_policy(d),
        reward=float(-res.fun),
        costs=np.einsum("sa,ksa->k", d, counts.costs),
        duals=np.maximum(-np.asarray(res.ineqlin.marginals[S:], dtype=float), 0.0),
    )
